// The faceless video job's declaration: its queue, retries, heartbeat and dead letter; the work
// is stages.ts, a terminal failure marks the video `error` and refunds once (rows.ts).
import { FACELESS_QUEUE, facelessResource, failFaceless } from './rows.ts';
import { defineJob } from '../../jobs/define-job.ts';
import { describeFailure, type FacelessJobData, runFaceless } from './stages.ts';

export const facelessJob = defineJob<FacelessJobData>({
  name: FACELESS_QUEUE,
  version: 1,
  concurrency: (config) => config.facelessConcurrency,
  retry: (config) => ({ limit: config.generationRetryLimit, delay: 2, backoff: true }),
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 3600,
  deadLetter: { message: 'The faceless video was abandoned by its workers too many times' },
  run: runFaceless,
  describeFailure,
  progress: (ctx, data, percent, stage) => facelessResource.progress(ctx, data.videoId, stage, percent),
  onTerminalFailure: (ctx, data, detail) => failFaceless(ctx, data.videoId, detail),
});
