// The generation worker: picks a job, gathers its inputs (reference URLs through the guarded
// client, media from storage), runs the configured provider, stores the output and completes the
// generation, or fails it with a structured error and a refund once retries are exhausted.
// At-least-once delivery: every step can run twice (see services/generations.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { media } from '../db/schema/index.ts';
import type { MediaFile } from '../media/ffmpeg.ts';
import { inspect, MediaRejected, sniff } from '../media/inspect.ts';
import { jobFolder } from '../media/work-folder.ts';
import { FetchRefused } from '../net/guarded-fetch.ts';
import { createProvider } from '../providers/index.ts';
import { ProviderError, type GenerationJob, type Provider } from '../providers/types.ts';
import type { MediaInput } from '../services/generation-requests.ts';
import { completeGeneration, failGeneration, reportProgress, startAttempt, type FailureDetail, type GenerationRow } from '../services/generations.ts';
import { QUEUES } from './queue.ts';

export interface GenerationJobData {
  generationId: string;
}

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4' };

/** A failure with what the generation's error object should say. */
class JobFailure extends Error {
  readonly detail: FailureDetail;
  /** True when another attempt may succeed (a network hiccup, a 5xx of the input's host). */
  readonly transient: boolean;
  constructor(detail: FailureDetail, transient = false) {
    super(detail.message);
    this.detail = detail;
    this.transient = transient;
  }
}

async function loadMedia(ctx: AppContext, orgId: string, ids: string[]) {
  if (!ids.length) return new Map<string, typeof media.$inferSelect>();
  const rows = await ctx.db.select().from(media).where(and(eq(media.orgId, orgId), inArray(media.id, ids)));
  return new Map(rows.map((r) => [r.id, r]));
}

async function gatherInputs(ctx: AppContext, g: GenerationRow, workDir: string, signal: AbortSignal | undefined): Promise<Partial<GenerationJob>> {
  const spec = g.spec;
  const ids = [...spec.references, spec.sourceVideo, spec.motionVideo, spec.audio].flatMap((m) => (m?.mediaId ? [m.mediaId] : []));
  const rows = await loadMedia(ctx, g.orgId, ids);
  const bytesOf = async (input: MediaInput, field: string, maxBytes: number): Promise<Buffer> => {
    if (input.mediaId) {
      const row = rows.get(input.mediaId);
      if (!row) throw new JobFailure({ code: 'input_unavailable', message: `Media ${input.mediaId} no longer exists`, retryable: false, context: { field } });
      return ctx.storage.readBuffer(row.storageKey);
    }
    try {
      return (await ctx.fetcher.fetch(input.url!, { maxBytes, timeoutMs: ctx.config.outboundFetchJobTimeoutMs, signal })).body;
    } catch (err) {
      if (err instanceof FetchRefused) {
        throw new JobFailure(
          { code: 'input_unavailable', message: `${field} ${input.url} ${err.message}`, retryable: err.retryable, context: { field, url: input.url, reason: err.reason } },
          err.retryable,
        );
      }
      throw err;
    }
  };
  // Every file input is a copy inside the job's folder with its sniffed type: a stored media item
  // (sniffed and checked at upload), or fetched bytes, sniffed and checked here like an upload.
  const toFile = async (input: MediaInput | undefined, field: string, name: string): Promise<MediaFile | undefined> => {
    if (!input) return undefined;
    if (input.mediaId) {
      const row = rows.get(input.mediaId);
      if (!row) throw new JobFailure({ code: 'input_unavailable', message: `Media ${input.mediaId} no longer exists`, retryable: false, context: { field } });
      const file = path.join(workDir, `${name}${path.extname(row.storageKey)}`);
      await ctx.storage.copyToFile(row.storageKey, file);
      return { path: file, type: row.contentType };
    }
    const bytes = await bytesOf(input, field, 200 * 1024 * 1024);
    const file = path.join(workDir, name);
    await fs.writeFile(file, bytes);
    try {
      const sniffed = await sniff(bytes);
      const inspected = await inspect(file, sniffed);
      return { path: file, type: inspected.contentType };
    } catch (err) {
      if (err instanceof MediaRejected) {
        throw new JobFailure({ code: 'input_unavailable', message: `${field} ${input.url} ${err.message}`, retryable: false, context: { field, url: input.url, reason: err.reason } });
      }
      throw err;
    }
  };
  return {
    referenceImages: await Promise.all(spec.references.map((r, i) => bytesOf(r, `reference_image_urls[${i}]`, 20 * 1024 * 1024))),
    sourceVideo: await toFile(spec.sourceVideo, 'source_video', 'source-video'),
    motionVideo: await toFile(spec.motionVideo, 'motion_video', 'motion-video'),
    audio: await toFile(spec.audio, 'audio', 'audio'),
  };
}

function toFailure(err: unknown): { detail: FailureDetail; retryable: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retryable: err.transient };
  if (err instanceof ProviderError) {
    return { detail: { code: err.code, message: err.message, retryable: err.retryable, context: err.status ? { status: err.status } : {} }, retryable: err.retryable };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { detail: { code: 'render_failed', message: `Rendering failed: ${message.slice(0, 500)}`, retryable: true, context: {} }, retryable: true };
}

export async function runGenerationJob(ctx: AppContext, provider: Provider, job: JobWithMetadata<GenerationJobData>): Promise<void> {
  const g = await startAttempt(ctx, job.data.generationId);
  if (!g) return; // already completed or failed: a repeated delivery has nothing to do
  const workDir = await jobFolder(ctx.config.dataDir, `gen-${g.id}`);
  let lastReport = 0;
  try {
    const inputs = await gatherInputs(ctx, g, workDir, job.signal);
    const spec = g.spec;
    const result = await provider.generate(
      {
        generationId: g.id,
        type: g.type as GenerationJob['type'],
        output: spec.output,
        prompt: spec.prompt,
        title: spec.title,
        templateSlug: spec.templateSlug,
        modelSlug: spec.modelSlug,
        variantId: spec.variantId,
        presetId: spec.presetId ?? null,
        qualityTier: spec.qualityTier,
        aspectRatio: spec.aspectRatio,
        width: spec.width,
        height: spec.height,
        durationSeconds: spec.durationSeconds,
        imageFormat: spec.imageFormat,
        brandColors: spec.brandKit?.colors,
        brandName: spec.brandKit?.name,
        generateAudio: spec.generateAudio,
        avatarName: spec.avatar?.name,
        referenceImages: inputs.referenceImages ?? [],
        maxInputPixels: ctx.config.mediaMaxPixels,
        sourceVideo: inputs.sourceVideo,
        motionVideo: inputs.motionVideo,
        audio: inputs.audio,
      },
      {
        workDir,
        signal: job.signal,
        onProgress: (fraction) => {
          const now = Date.now();
          if (now - lastReport < 1000 || fraction >= 1) return;
          lastReport = now;
          reportProgress(ctx, g.id, fraction * 100).catch(() => {});
        },
      },
    );
    const ext = EXT[result.contentType] ?? 'bin';
    const stored = await ctx.storage.put(`generations/${g.orgId}/${g.id}.${ext}`, { file: result.path }, result.contentType);
    await completeGeneration(ctx, g, {
      storageKey: stored.key,
      contentType: result.contentType,
      bytes: stored.bytes,
      width: result.width,
      height: result.height,
      durationSeconds: result.durationSeconds,
      hasAudio: spec.output === 'video' ? spec.generateAudio || Boolean(inputs.audio) : undefined,
    });
  } catch (err) {
    // Cut short by the service's shutdown (src/server.ts): pg-boss has released the job for another attempt.
    if (job.signal.aborted && ctx.stopping.aborted) throw err;
    const { detail, retryable } = toFailure(err);
    const attemptsLeft = job.retryCount < job.retryLimit;
    if (retryable && attemptsLeft && !job.signal.aborted) {
      ctx.log.warn({ generation: g.id, attempt: job.retryCount + 1, err: detail.message }, 'generation attempt failed; pg-boss will retry');
      throw err;
    }
    await failGeneration(ctx, g.id, { ...detail, context: { ...detail.context, attempts: job.retryCount + 1, credits_refunded: g.credits } });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

export const generationWorker = {
  queue: QUEUES.generation,
  async register(boss: PgBoss, ctx: AppContext) {
    const provider = createProvider(ctx.config.provider, { maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension });
    await boss.work<GenerationJobData>(
      QUEUES.generation,
      { batchSize: 1, localConcurrency: ctx.config.workerConcurrency, includeMetadata: true, pollingIntervalSeconds: 2 } as never,
      async ([job]) => runGenerationJob(ctx, provider, job as unknown as JobWithMetadata<GenerationJobData>),
    );
    // Jobs that exhausted their attempts without a verdict (their worker died each time) land
    // here; the generation fails with a refund like any other terminal failure.
    await boss.work<GenerationJobData>(QUEUES.generationDead, async ([job]) => {
      await failGeneration(ctx, job.data.generationId, {
        code: 'worker_lost',
        message: 'The generation was abandoned by its workers too many times',
        retryable: true,
        context: {},
      });
    });
  },
};
