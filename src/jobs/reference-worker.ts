// The reference analysis worker: fetches a processing reference's URL media through the guarded
// client, checks and stores them, and makes the reference ready; media that cannot be fetched
// or is not what was declared fails the reference with a structured error and refunds it
// (exactly once). Transient errors are retried by pg-boss; a job abandoned by its workers too
// many times reaches the dead-letter queue, which fails and refunds the reference.
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { discardStored } from '../services/editor/media.ts';
import { completeAnalysis, failAnalysis, fetchReferenceMedia, MediaRefused, startAnalysis } from '../services/references.ts';
import { QUEUES } from './queue.ts';

export interface ReferenceJobData {
  referenceId: string;
}

export async function runReferenceJob(ctx: AppContext, job: JobWithMetadata<ReferenceJobData>): Promise<void> {
  const row = await startAnalysis(ctx, job.data.referenceId);
  if (!row) return; // finished already (a repeated delivery)
  let fetched: Awaited<ReturnType<typeof fetchReferenceMedia>> = [];
  try {
    fetched = await fetchReferenceMedia(ctx, row, job.signal);
    await completeAnalysis(ctx, row, fetched);
  } catch (err) {
    await discardStored(ctx, fetched.map((m) => m.storageKey));
    // Cut short by the service's shutdown (src/server.ts): pg-boss has released the job for another attempt.
    if (job.signal.aborted && ctx.stopping.aborted) throw err;
    if (err instanceof MediaRefused) {
      await failAnalysis(ctx, row.id, {
        code: 'media_rejected',
        message: `${err.field} ${err.message}`.slice(0, 1900),
        retryable: false,
        context: { field: err.field, credits_refunded: row.creditsDeducted },
      });
      return;
    }
    if (job.retryCount < job.retryLimit) {
      ctx.log.warn({ reference: row.id, attempt: job.retryCount + 1, err: String(err) }, 'reference analysis failed; pg-boss will retry');
      throw err;
    }
    await failAnalysis(ctx, row.id, {
      code: 'analysis_failed',
      message: `The reference could not be analysed: ${(err as Error)?.message ?? String(err)}`.slice(0, 1900),
      retryable: true,
      context: { attempts: job.retryCount + 1, credits_refunded: row.creditsDeducted },
    });
  }
}

export const referenceWorker = {
  queue: QUEUES.referenceAnalysis,
  async register(boss: PgBoss, ctx: AppContext) {
    await boss.work<ReferenceJobData>(
      QUEUES.referenceAnalysis,
      { batchSize: 1, localConcurrency: 2, includeMetadata: true, pollingIntervalSeconds: 1 } as never,
      async ([job]) => runReferenceJob(ctx, job as unknown as JobWithMetadata<ReferenceJobData>),
    );
    await boss.work<ReferenceJobData>(QUEUES.referenceAnalysisDead, async ([job]) => {
      await failAnalysis(ctx, job.data.referenceId, {
        code: 'worker_lost',
        message: 'The analysis was abandoned by its workers too many times; the credits were refunded',
        retryable: true,
        context: {},
      });
    });
  },
};
