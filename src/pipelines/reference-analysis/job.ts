// The reference analysis job's declaration: its queue, retries, heartbeat and dead letter; the
// work is stages.ts, a terminal failure fails the reference and refunds once (rows.ts).
import { defineJob } from '../../jobs/define-job.ts';
import { failAnalysis, REFERENCE_QUEUE } from './rows.ts';
import { describeFailure, type ReferenceJobData, runAnalysis } from './stages.ts';
export const referenceAnalysisJob = defineJob<ReferenceJobData>({
  name: REFERENCE_QUEUE,
  version: 1,
  concurrency: (config) => config.analysisConcurrency,
  retry: { limit: 2, delay: 2, backoff: true },
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 900,
  deadLetter: { message: 'The analysis was abandoned by its workers too many times; the credits were refunded' },
  run: runAnalysis,
  describeFailure,
  onTerminalFailure: (ctx, data, detail) => failAnalysis(ctx, data.referenceId, detail),
});
