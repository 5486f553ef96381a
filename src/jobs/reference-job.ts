// The reference analysis job: fetches a processing reference's URL media through the guarded
// client, checks and stores them, and makes the reference ready. Media that cannot be fetched or
// is not what was declared fails the reference with a structured error and refunds it (exactly
// once); transient errors are retried, and the last failed attempt or a job abandoned by its
// workers too many times fails and refunds it too (defineJob).
import type { AppContext } from '../context.ts';
import { discardStored } from '../services/editor/media.ts';
import { completeAnalysis, failAnalysis, fetchReferenceMedia, MediaRefused, startAnalysis } from '../services/references/references.ts';
import { defineJob, type FailureDetail, type JobTools, type RunningJob } from './define-job.ts';
import { QUEUES } from './queue.ts';

export interface ReferenceJobData {
  referenceId: string;
}

async function runAnalysis(ctx: AppContext, job: RunningJob<ReferenceJobData>, { signal, annotate }: JobTools): Promise<void> {
  const row = await startAnalysis(ctx, job.data.referenceId);
  if (!row) return; // finished already (a repeated delivery)
  annotate({ credits_refunded: row.creditsDeducted });
  let fetched: Awaited<ReturnType<typeof fetchReferenceMedia>> = [];
  try {
    fetched = await fetchReferenceMedia(ctx, row, signal);
    await completeAnalysis(ctx, row, fetched);
  } catch (err) {
    await discardStored(ctx, fetched.map((m) => m.storageKey));
    throw err;
  }
}

function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof MediaRefused) {
    return { detail: { code: 'media_rejected', message: `${err.field} ${err.message}`.slice(0, 1900), retryable: false, context: { field: err.field } }, retry: false };
  }
  const message = `The reference could not be analysed: ${(err as Error)?.message ?? String(err)}`.slice(0, 1900);
  return { detail: { code: 'analysis_failed', message, retryable: true, context: {} }, retry: true };
}

export const referenceAnalysisJob = defineJob<ReferenceJobData>({
  name: QUEUES.referenceAnalysis,
  concurrency: (config) => config.analysisConcurrency,
  retry: { limit: 2, delay: 2, backoff: true },
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 900,
  deadLetter: { message: 'The analysis was abandoned by its workers too many times; the credits were refunded' },
  run: runAnalysis,
  describeFailure,
  onTerminalFailure: (ctx, data, detail) => failAnalysis(ctx, data.referenceId, detail),
});
