// The slideshow job's declaration: its queue, retries, heartbeat and dead letter; the work is
// stages.ts, a terminal failure fails the slideshow and refunds once (rows.ts).
import { failSlideshow, SLIDESHOW_QUEUE, slideshowResource } from './rows.ts';
import { defineJob } from '../../jobs/define-job.ts';
import { describeFailure, runSlideshow, type SlideshowJobData } from './stages.ts';

export const slideshowJob = defineJob<SlideshowJobData>({
  name: SLIDESHOW_QUEUE,
  version: 1,
  concurrency: (config) => config.slideshowConcurrency,
  retry: (config) => ({ limit: config.generationRetryLimit, delay: 2, backoff: true }),
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 3600,
  deadLetter: { message: 'The slideshow was abandoned by its workers too many times; the credits were refunded' },
  run: runSlideshow,
  describeFailure,
  progress: (ctx, data, percent, stage) => slideshowResource.progress(ctx, data.slideshowId, stage, percent),
  onTerminalFailure: (ctx, data, detail) => failSlideshow(ctx, data.slideshowId, detail),
});
