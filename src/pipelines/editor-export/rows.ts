// Exports of editor videos, their rows: the export's view, reading and cancelling one, and its
// lifecycle, the kernel's (src/kernel): conditional updates, safe to run twice (at-least-once
// jobs). Queueing one (limits and the project snapshot) is request.ts; rendering, stages.ts.
import { and, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { rowId } from '../../db/ids.ts';
import { editorExports, editorVideos, media } from '../../db/schema/index.ts';
import { ApiError } from '../../errors.ts';
import type { RenderQuality } from '../../engines/render/types.ts';
import type { Tx } from '../../db/client.ts';
import { defineResource } from '../../kernel/resource.ts';
import type { Timeline } from '../../services/editor/model.ts';
import { notFoundVideo } from '../../services/editor/projects.ts';

type S = components['schemas'];
export type EditorExportView = S['EditorExport'];

export interface ExportSnapshot {
  title: string;
  width: number;
  height: number;
  fps: number;
  quality: RenderQuality;
  durationSeconds: number;
  timeline: Timeline;
}

export type ExportRow = typeof editorExports.$inferSelect;

/**
 * The export job's queue (job.ts declares the job on it): named here, where the resource is
 * declared, because cancelling a queued export cancels its job (and job.ts imports this module).
 */
export const EXPORT_QUEUE = 'editor-export';

export function view(ctx: AppContext, row: ExportRow, out?: { storageKey: string; sizeBytes: number } | null): EditorExportView {
  const snap = row.snapshot as ExportSnapshot;
  const done = row.status === 'completed' && out;
  return {
    object: 'editor_export',
    id: row.id,
    video_id: row.videoId,
    version: row.version,
    status: row.status,
    progress: row.status === 'completed' ? 100 : row.progress,
    quality: snap.quality,
    width: snap.width,
    height: snap.height,
    fps: snap.fps,
    duration_seconds: snap.durationSeconds,
    url: done ? ctx.storage.signedUrl(out.storageKey) : null,
    size_bytes: done ? out.sizeBytes : null,
    error: (row.error as S['FailureDetail'] | null) ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    completed_at: row.completedAt ? row.completedAt.toISOString() : null,
  };
}

async function exportMissing(db: AppContext['db'] | Tx, orgId: string, videoId: number, exportId: string): Promise<ApiError> {
  const [video] = await db
    .select({ id: editorVideos.videoId })
    .from(editorVideos)
    .where(and(eq(editorVideos.videoId, videoId), eq(editorVideos.orgId, orgId)));
  if (!video) return notFoundVideo(videoId);
  return new ApiError('not_found', `Export ${exportId} of editor video ${videoId} was not found in this workspace`, {
    resource: 'editor_export',
    field: 'path.export_id',
  });
}

/** The condition on the video of export `exportId` of editor video `videoId` (the video's 404 before any SQL when its id cannot be one). */
const ofVideo = (videoId: number) =>
  eq(
    editorExports.videoId,
    rowId(editorExports.videoId, videoId, () => notFoundVideo(videoId)),
  );

/** The lookup of export `exportId` of editor video `videoId` in the workspace. */
const exportWhere = (orgId: string, videoId: number, exportId: string) =>
  and(eq(editorExports.id, exportId), ofVideo(videoId), eq(editorExports.orgId, orgId));

export async function getExport(ctx: AppContext, orgId: string, videoId: number, exportId: string): Promise<EditorExportView> {
  const [row] = await ctx.db
    .select({ e: editorExports, key: media.storageKey, size: media.sizeBytes })
    .from(editorExports)
    .leftJoin(media, eq(media.id, editorExports.outputMediaId))
    .where(exportWhere(orgId, videoId, exportId));
  if (!row) throw await exportMissing(ctx.db, orgId, videoId, exportId);
  return view(ctx, row.e, row.key ? { storageKey: row.key, sizeBytes: row.size ?? 0 } : null);
}

/**
 * Cancels a queued or rendering export: it becomes `canceled` at once (its in-flight slot and
 * its quota are freed), a queued one's job is cancelled, a rendering one's worker notices within
 * about a second, kills its ffmpeg and removes the partial output. Cancelling a canceled export
 * answers it again (idempotent); a completed or failed one is 409 conflict.
 */
export async function cancelExport(ctx: AppContext, orgId: string, videoId: number, exportId: string): Promise<EditorExportView> {
  const done = await exportResource.cancel(ctx, orgId, exportId, ofVideo(videoId));
  if (!done) throw await exportMissing(ctx.db, orgId, videoId, exportId);
  return view(ctx, done.row, null);
}

// ------------------------------------------------------------------------------ worker side

/**
 * The export's lifecycle (src/kernel/resource.ts): queued → rendering → completed | failed, or
 * canceled from queued or rendering (its queued job cancelled); free, so nothing is refunded. Each
 * terminal state but canceled writes its webhook event.
 */
export const exportResource = defineResource({
  name: 'export',
  table: editorExports,
  columns: {
    id: 'id',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    progress: 'progress',
    completedAt: 'completedAt',
    output: 'outputMediaId',
    jobId: 'jobId',
  },
  statuses: { pending: 'queued', running: 'rendering', completed: 'completed', failed: 'failed', canceled: 'canceled' },
  events: { completed: 'export.completed', failed: 'export.failed' },
  view: async (ctx, tx, row) => {
    const [out] = row.outputMediaId
      ? await tx.select({ storageKey: media.storageKey, sizeBytes: media.sizeBytes }).from(media).where(eq(media.id, row.outputMediaId))
      : [];
    return view(ctx, row, out ?? null);
  },
  failSet: () => ({ completedAt: new Date() }),
  cancel: {
    queue: EXPORT_QUEUE,
    conflict: (row, exportId) =>
      new ApiError('conflict', `Export ${exportId} is already ${row.status}; only queued or rendering exports can be canceled`, {
        resource: 'editor_export',
        field: 'path.export_id',
        status: row.status,
      }),
  },
});

export const startExport = (ctx: AppContext, id: string): Promise<ExportRow | undefined> => exportResource.start(ctx, id);

export function completeExport(
  ctx: AppContext,
  row: ExportRow,
  out: { storageKey: string; bytes: number; durationSeconds: number | null; hasAudio: boolean },
): Promise<boolean> {
  const snap = row.snapshot as ExportSnapshot;
  return exportResource.complete(ctx, row.id, {
    media: {
      orgId: row.orgId,
      kind: 'video',
      status: 'completed',
      source: 'render',
      title: `${snap.title} (export v${row.version})`.slice(0, 200),
      filename: `${
        snap.title
          .replace(/[^A-Za-z0-9._ -]+/g, '')
          .trim()
          .replace(/\s+/g, '-')
          .slice(0, 80) || 'export'
      }-v${row.version}.mp4`,
      contentType: 'video/mp4',
      sizeBytes: out.bytes,
      storageKey: out.storageKey,
      width: snap.width,
      height: snap.height,
      durationSeconds: out.durationSeconds ?? snap.durationSeconds,
      hasAudio: out.hasAudio,
      indexedText: snap.title,
    },
  });
}

export const failExport = (ctx: AppContext, id: string, detail: S['FailureDetail']): Promise<boolean> =>
  exportResource.fail(ctx, id, detail);
