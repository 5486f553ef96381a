// The generation jobs: one queue for images, one for video renders, the same work (stages.ts).
// Failures become the generation's error with a refund once no retry follows (defineJob).
import type { Config } from '../../config.ts';
import { defineJob } from '../../jobs/define-job.ts';
import { failGeneration, GENERATION_QUEUES, generationResource } from './rows.ts';
import { runGeneration } from './run.ts';
import { describeFailure, type GenerationJobData } from './stages.ts';

function generationJob(name: string, concurrency: (config: Config) => number) {
  return defineJob<GenerationJobData>({
    name,
    version: 1,
    concurrency,
    retry: (config) => ({ limit: config.generationRetryLimit, delay: 2, backoff: true }),
    heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
    expireInSeconds: 1800,
    deadLetter: { message: 'The generation was abandoned by its workers too many times' },
    run: runGeneration,
    describeFailure,
    progress: (ctx, data, percent, stage) => generationResource.progress(ctx, data.generationId, stage, percent),
    onTerminalFailure: (ctx, data, detail) => failGeneration(ctx, data.generationId, detail),
  });
}

/** Image generations: static ads and image AI-model outputs. */
export const imageGenerationJob = generationJob(GENERATION_QUEUES.image, (config) => config.imageConcurrency);
/** Video generations: long renders, on a queue of their own so images never wait behind them. */
export const videoGenerationJob = generationJob(GENERATION_QUEUES.video, (config) => config.videoConcurrency);
