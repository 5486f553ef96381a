// The social-publish job's declaration: one job per target account of a publication, its queue,
// retries and dead letter; the work is stages.ts, the target's lifecycle rows.ts.
import { failTarget, SOCIAL_PUBLISH_QUEUE } from './rows.ts';
import { defineJob, type JobDefinition } from '../../jobs/define-job.ts';
import { describeFailure, run, type SocialPublishJobData } from './stages.ts';

export const socialPublishJob: JobDefinition<SocialPublishJobData> = defineJob<SocialPublishJobData>({
  name: SOCIAL_PUBLISH_QUEUE,
  version: 1,
  concurrency: (config) => config.social.concurrency,
  retry: { limit: 5, delay: 10, backoff: true, maxDelay: 600 },
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 1800,
  deadLetter: { message: 'The publication was abandoned by its workers too many times' },
  run: (ctx, job, tools) => run(ctx, job, tools, socialPublishJob),
  describeFailure,
  onTerminalFailure: (ctx, data, detail) => failTarget(ctx, data.targetId, detail),
});
