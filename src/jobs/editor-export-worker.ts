// The export worker: renders an editor project snapshot with the timeline renderer (one ffmpeg
// run, progress reported every second), stores the MP4 and completes the export, or fails it
// with a structured error once retries are exhausted. At-least-once: a repeated delivery of a
// finished export does nothing; a re-run of an interrupted one renders again and overwrites.
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { media } from '../db/schema/index.ts';
import { FfmpegError, probe } from '../media/ffmpeg.ts';
import { renderTimeline, type RenderMedia } from '../media/timeline.ts';
import { jobFolder } from '../media/work-folder.ts';
import { completeExport, exportProgress, failExport, isCanceled, startExport, type ExportSnapshot } from '../services/editor/exports.ts';
import { QUEUES } from './queue.ts';

export interface ExportJobData {
  exportId: string;
}

class MissingMedia extends Error {}
class ExportCanceled extends Error {
  constructor() {
    super('The export was canceled');
    this.name = 'ExportCanceled';
  }
}

/** How often a rendering export checks whether it was canceled. */
const CANCEL_POLL_MS = 500;

export async function runExportJob(ctx: AppContext, job: JobWithMetadata<ExportJobData>): Promise<void> {
  const row = await startExport(ctx, job.data.exportId);
  if (!row) return;
  const snap = row.snapshot as ExportSnapshot;
  const workDir = await jobFolder(ctx.config.dataDir, `export-${row.id}`);
  let lastReport = 0;
  // A canceled export (DELETE …/exports/{export_id}) is noticed within a second: the render is
  // aborted (its ffmpeg killed) and the partial output removed with the work folder.
  const cancel = new AbortController();
  const watch = setInterval(() => {
    isCanceled(ctx, row.id)
      .then((canceled) => {
        if (canceled) cancel.abort(new ExportCanceled());
      })
      .catch(() => {});
  }, CANCEL_POLL_MS);
  const signal = AbortSignal.any([job.signal, cancel.signal]);
  try {
    const ids = [...new Set(snap.timeline.items.map((i) => i.media_id).filter((id): id is string => Boolean(id)))];
    const rows = ids.length ? await ctx.db.select().from(media).where(and(eq(media.orgId, row.orgId), inArray(media.id, ids))) : [];
    const files = new Map<string, RenderMedia>();
    for (const m of rows) {
      // The renderer reads copies in its own folder, each with the demuxer of its sniffed type.
      const file = path.join(workDir, `input-${m.id}${path.extname(m.storageKey)}`);
      await ctx.storage.copyToFile(m.storageKey, file);
      files.set(m.id, { path: file, type: m.contentType, kind: m.kind, width: m.width, height: m.height, durationSeconds: m.durationSeconds, hasAudio: m.hasAudio });
    }
    const lost = ids.filter((id) => !files.has(id));
    if (lost.length) throw new MissingMedia(`media ${lost.join(', ')} of the project no longer exist`);
    const out = path.join(workDir, 'export.mp4');
    await renderTimeline({ width: snap.width, height: snap.height, fps: snap.fps, tracks: snap.timeline.tracks, items: snap.timeline.items, media: files }, workDir, out, {
      quality: snap.quality,
      signal,
      onProgress: (fraction) => {
        const now = Date.now();
        if (now - lastReport < 1000 || fraction >= 1) return;
        lastReport = now;
        exportProgress(ctx, row.id, fraction * 100).catch(() => {});
      },
    });
    const probed = await probe({ path: out, type: 'video/mp4' }, { signal });
    const key = `editor-exports/${row.orgId}/${row.id}.mp4`;
    const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
    const completed = await completeExport(ctx, row, { storageKey: key, bytes: stored.bytes, durationSeconds: probed.duration_seconds, hasAudio: probed.has_audio });
    // Canceled meanwhile: the stored copy belongs to no export. (Not when another delivery of
    // the job completed it: that export's file has this same key.)
    if (!completed && (await isCanceled(ctx, row.id))) await ctx.storage.delete(key).catch(() => {});
  } catch (err) {
    if (cancel.signal.aborted) {
      ctx.log.info({ export: row.id }, 'export canceled; render stopped');
      return;
    }
    // Cut short by the service's shutdown (src/server.ts): pg-boss has released the job for another attempt.
    if (job.signal.aborted && ctx.stopping.aborted) throw err;
    const attemptsLeft = job.retryCount < job.retryLimit;
    const permanent = err instanceof MissingMedia;
    if (!permanent && attemptsLeft && !job.signal.aborted) {
      ctx.log.warn({ export: row.id, attempt: job.retryCount + 1, err: String(err) }, 'export attempt failed; pg-boss will retry');
      throw err;
    }
    const message = err instanceof FfmpegError ? `Rendering failed: ${err.message.split('\n').slice(-3).join(' ')}` : `Rendering failed: ${(err as Error)?.message ?? String(err)}`;
    await failExport(ctx, row.id, {
      code: permanent ? 'input_unavailable' : 'render_failed',
      message: message.slice(0, 1900),
      retryable: !permanent,
      context: { attempts: job.retryCount + 1 },
    });
  } finally {
    clearInterval(watch);
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

export const editorExportWorker = {
  queue: QUEUES.editorExport,
  async register(boss: PgBoss, ctx: AppContext) {
    await boss.work<ExportJobData>(
      QUEUES.editorExport,
      { batchSize: 1, localConcurrency: ctx.config.exportConcurrency, includeMetadata: true, pollingIntervalSeconds: 1 } as never,
      async ([job]) => runExportJob(ctx, job as unknown as JobWithMetadata<ExportJobData>),
    );
    await boss.work<ExportJobData>(QUEUES.editorExportDead, async ([job]) => {
      await failExport(ctx, job.data.exportId, { code: 'worker_lost', message: 'The export was abandoned by its workers too many times', retryable: true, context: {} });
    });
  },
};
