// The reference analysis job: fetches a processing reference's URL media through the guarded
// client, checks and stores them, analyses every item (palette, subject, OCR text, perceptual
// hash; for videos also cuts, loudness, speech, keyframes, transcript: src/media/analysis.ts) in
// the job's folder, and makes the reference ready with the analyses. Media that cannot be fetched or
// is not what was declared fails the reference with a structured error and refunds it (exactly
// once); transient errors are retried, and the last failed attempt or a job abandoned by its
// workers too many times fails and refunds it too (defineJob).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { jobFolder } from '../media/work-folder.ts';
import { analyseFiles } from '../services/references/analysis.ts';
import { discardStored } from '../services/editor/media.ts';
import {
  completeAnalysis,
  failAnalysis,
  fetchReferenceMedia,
  MediaRefused,
  orderedMedia,
  startAnalysis,
} from '../services/references/references.ts';
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
  const workDir = await jobFolder(ctx.config.dataDir, `reference-${row.id}`);
  try {
    fetched = await fetchReferenceMedia(ctx, row, signal);
    const files = [];
    for (const [i, m] of (await orderedMedia(ctx, row, fetched)).entries()) {
      const file = path.join(workDir, `item-${i}${path.extname(m.storageKey)}`);
      await ctx.storage.copyToFile(m.storageKey, file);
      files.push({ path: file, type: m.contentType });
    }
    const analyses = await analyseFiles(ctx, files, workDir, signal);
    await completeAnalysis(ctx, row, fetched, analyses);
  } catch (err) {
    await discardStored(
      ctx,
      fetched.map((m) => m.storageKey),
    );
    throw err;
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof MediaRefused) {
    return {
      detail: {
        code: 'media_rejected',
        message: `${err.field} ${err.message}`.slice(0, 1900),
        retryable: false,
        context: { field: err.field },
      },
      retry: false,
    };
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
