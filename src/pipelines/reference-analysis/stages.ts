// The reference analysis job: fetches a processing reference's URL media through the guarded
// client, checks and stores them, analyses every item (palette, subject, OCR text, perceptual
// hash; for videos also cuts, loudness, speech, keyframes, transcript: src/media/analysis.ts) in
// the job's folder, and makes the reference ready with the analyses. Two stages on the kernel's
// stage runner: `fetch` (its stored media kept in the reference's state) and `analyse`. Media that cannot be fetched or
// is not what was declared fails the reference with a structured error and refunds it (exactly
// once); transient errors are retried, and the last failed attempt or a job abandoned by its
// workers too many times fails and refunds it too (defineJob).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { analyseFiles, type MediaAnalysis } from '../../services/references/analysis.ts';
import { fetchMediaBytes } from '../../media/fetch-media.ts';
import { ApiError, type FieldError } from '../../errors.ts';
import { discardStored, ingest, type MediaInsert, receiveBuffer } from '../../services/editor/media.ts';
import { urlFilename } from '../../services/editor/resources.ts';
import type { ReferenceRow } from '../../services/references/references.ts';
import type { ReferenceInput } from './request.ts';
import { completeAnalysis, orderedMedia, referenceResource, startAnalysis } from './rows.ts';
import { runCancelable } from '../../kernel/cancelable.ts';
import { runStages, type Stages } from '../../kernel/stages.ts';
import type { FailureDetail, JobTools, RunningJob } from '../../jobs/define-job.ts';

/** Inline and fetched images: "at most about 10 MB decoded" (seed 4.8). */
export const IMAGE_MAX_BYTES = 10 * 1024 * 1024;
export const VIDEO_MAX_BYTES = 200 * 1024 * 1024;
export const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** Thrown for media the analysis refuses (the reference fails and is refunded; no retry). */
export class MediaRefused extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * Fetches and checks the URL media of a processing reference (inline images were checked on
 * upload) and stores them; resolves with the media rows to attach, in the order given.
 */
export async function fetchReferenceMedia(ctx: AppContext, row: ReferenceRow, signal?: AbortSignal): Promise<MediaInsert[]> {
  const out: MediaInsert[] = [];
  try {
    await fetchEach(ctx, row, out, signal);
  } catch (err) {
    // What was stored for the items before the one that failed belongs to no row: remove it.
    await discardStored(
      ctx,
      out.map((m) => m.storageKey),
    );
    throw err;
  }
  return out;
}

async function fetchEach(ctx: AppContext, row: ReferenceRow, out: MediaInsert[], signal: AbortSignal | undefined): Promise<void> {
  for (const input of row.inputs as ReferenceInput[]) {
    if (!('url' in input)) continue;
    // A job's deadline (OUTBOUND_FETCH_JOB_TIMEOUT_MS); `signal` is the job's own (pg-boss stops it).
    // The bytes are checked as they are stored (ingest, like an upload).
    const body = await fetchMediaBytes(ctx.fetcher, input.url, {
      maxBytes: input.kind === 'video' ? VIDEO_MAX_BYTES : IMAGE_MAX_BYTES,
      timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
      signal,
      // Abandoned (the job was stopped): not the media's fault; the job's retry path decides.
      refuse: (r) => (r.error.reason === 'aborted' ? r.error : new MediaRefused(input.field, `could not be fetched: ${r.message}`)),
    });
    try {
      const done = await ingest(ctx, await receiveBuffer(ctx, body), {
        orgId: row.orgId,
        filename: urlFilename(input.url),
        source: 'url',
        title: row.label ?? undefined,
        field: input.field,
      });
      const refused =
        input.kind === 'image'
          ? !IMAGE_TYPES.has(done.inspected.contentType) && `is ${done.inspected.contentType}; PNG, JPEG or WebP only`
          : done.inspected.kind !== 'video' && `is ${done.inspected.contentType}, not a video`;
      if (refused) {
        await discardStored(ctx, [done.row.storageKey]);
        throw new MediaRefused(input.field, refused);
      }
      out.push(done.row);
    } catch (err) {
      if (err instanceof ApiError) {
        const first = (err.context.errors as FieldError[] | undefined)?.[0];
        throw new MediaRefused(input.field, first?.message ?? err.message);
      }
      throw err;
    }
  }
}

export interface ReferenceJobData {
  referenceId: string;
}

/** Each stage's output: the URL media the fetch stage stored (media rows to insert on completion), the analyses. */
export interface ReferenceOutputs {
  fetch: MediaInsert[];
  analyse: MediaAnalysis[];
}

/**
 * The analysis, stage by stage on the kernel's stage runner (src/kernel/stages.ts): `fetch` fetches,
 * checks and stores the URL media (its output, the media rows, kept in the reference's state, so a
 * later attempt neither fetches again nor leaves the stored objects without a row); `analyse` reads
 * the stored media back and analyses every item.
 */
export const REFERENCE_STAGES: Stages<ReferenceRow, ReferenceOutputs> = [
  { name: 'fetch', weight: 20, run: (s) => fetchReferenceMedia(s.app, s.row, s.signal) },
  { name: 'analyse', weight: 80, run: (s, done) => analyseStored(s.app, s.row, done.fetch, s.signal) },
];

/** Copies the reference's stored media (in the order given) into the job's folder and analyses them. */
async function analyseStored(ctx: AppContext, row: ReferenceRow, fetched: MediaInsert[], signal: AbortSignal): Promise<MediaAnalysis[]> {
  const workDir = await jobFolder(ctx.config.dataDir, `reference-${row.id}`);
  try {
    const files = [];
    for (const [i, m] of (await orderedMedia(ctx, row, fetched)).entries()) {
      const file = path.join(workDir, `item-${i}${path.extname(m.storageKey)}`);
      await ctx.storage.copyToFile(m.storageKey, file);
      files.push({ path: file, type: m.contentType });
    }
    return await analyseFiles(ctx, files, workDir, signal);
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

export async function runAnalysis(ctx: AppContext, job: RunningJob<ReferenceJobData>, tools: JobTools): Promise<void> {
  const row = await startAnalysis(ctx, job.data.referenceId);
  if (!row) return; // finished already (a repeated delivery)
  tools.annotate({ credits_refunded: row.creditsDeducted });
  // A failed attempt keeps what the fetch stage stored (the next one resumes with it); a terminal
  // failure removes it (failAnalysis), and so does a completion that finds the reference finished.
  // Canceled while it runs: noticed within a second, its work stopped (src/kernel/cancelable.ts).
  await runCancelable(ctx, referenceResource, row.id, tools, async (tools) => {
    const { outputs } = await runStages(ctx, referenceResource, row, REFERENCE_STAGES, tools);
    await completeAnalysis(ctx, row, outputs.fetch, outputs.analyse);
  });
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
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
