// Exports of editor videos: queued with a snapshot of the project version (so later edits do not
// change a running export), rendered by the export worker with the timeline renderer, stored as
// `render` media. Worker steps are conditional updates, safe to run twice (at-least-once jobs).
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { editorExports, editorVideos, media } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { QUEUES } from '../../jobs/queue.ts';
import type { RenderQuality } from '../../media/timeline.ts';
import { timelineDuration, type Timeline } from './model.ts';

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

type ExportRow = typeof editorExports.$inferSelect;

function view(ctx: AppContext, row: ExportRow, out?: { storageKey: string; sizeBytes: number } | null): EditorExportView {
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

export async function queueExport(ctx: AppContext, orgId: string, videoId: number, body: S['CreateEditorExportRequest'] | undefined): Promise<EditorExportView> {
  return ctx.db.transaction(async (tx) => {
    // A share lock: edits wait until the snapshot is taken, exports do not wait for each other.
    const [project] = await tx
      .select()
      .from(editorVideos)
      .where(and(eq(editorVideos.videoId, videoId), eq(editorVideos.orgId, orgId)))
      .for('share');
    if (!project) throw new ApiError('not_found', `Editor video ${videoId} was not found in this workspace`, { resource: 'editor_video', field: 'path.id' });
    const timeline = project.timeline as Timeline;
    const duration = timelineDuration(timeline);
    if (!timeline.items.length || duration <= 0) {
      throw badRequest(`Editor video ${videoId} has no items to render; add media, text or captions first`, [{ field: 'path.id', message: 'the project has no items' }]);
    }
    const snapshot: ExportSnapshot = {
      title: project.title,
      width: project.width,
      height: project.height,
      fps: project.fps,
      quality: body?.quality ?? 'standard',
      durationSeconds: duration,
      timeline,
    };
    const id = randomUUID();
    const jobId = randomUUID();
    const [row] = await tx.insert(editorExports).values({ id, orgId, videoId, version: project.version, snapshot, jobId }).returning();
    await ctx.queue.sendInTx(tx, QUEUES.editorExport, { exportId: id }, jobId);
    return view(ctx, row, null);
  });
}

export async function getExport(ctx: AppContext, orgId: string, videoId: number, exportId: string): Promise<EditorExportView> {
  const [row] = await ctx.db
    .select({ e: editorExports, key: media.storageKey, size: media.sizeBytes })
    .from(editorExports)
    .leftJoin(media, eq(media.id, editorExports.outputMediaId))
    .where(and(eq(editorExports.id, exportId), eq(editorExports.videoId, videoId), eq(editorExports.orgId, orgId)));
  if (!row) throw new ApiError('not_found', `Export ${exportId} of editor video ${videoId} was not found in this workspace`, { resource: 'editor_export', field: 'path.export_id' });
  return view(ctx, row.e, row.key ? { storageKey: row.key, sizeBytes: row.size ?? 0 } : null);
}

// ------------------------------------------------------------------------------ worker side

export async function startExport(ctx: AppContext, id: string): Promise<ExportRow | undefined> {
  const [row] = await ctx.db
    .update(editorExports)
    .set({ status: 'rendering', attempts: sql`${editorExports.attempts} + 1`, startedAt: sql`coalesce(${editorExports.startedAt}, now())`, updatedAt: new Date() })
    .where(and(eq(editorExports.id, id), inArray(editorExports.status, ['queued', 'rendering'])))
    .returning();
  return row;
}

export async function exportProgress(ctx: AppContext, id: string, percent: number): Promise<void> {
  await ctx.db
    .update(editorExports)
    .set({ progress: Math.max(0, Math.min(99, Math.round(percent))), updatedAt: new Date() })
    .where(and(eq(editorExports.id, id), eq(editorExports.status, 'rendering')));
}

export async function completeExport(ctx: AppContext, row: ExportRow, out: { storageKey: string; bytes: number; durationSeconds: number | null; hasAudio: boolean }): Promise<boolean> {
  const snap = row.snapshot as ExportSnapshot;
  return ctx.db
    .transaction(async (tx) => {
      const [m] = await tx
        .insert(media)
        .values({
          orgId: row.orgId,
          kind: 'video',
          status: 'completed',
          source: 'render',
          title: `${snap.title} (export v${row.version})`.slice(0, 200),
          filename: `${snap.title.replace(/[^A-Za-z0-9._ -]+/g, '').trim().replace(/\s+/g, '-').slice(0, 80) || 'export'}-v${row.version}.mp4`,
          contentType: 'video/mp4',
          sizeBytes: out.bytes,
          storageKey: out.storageKey,
          width: snap.width,
          height: snap.height,
          durationSeconds: out.durationSeconds ?? snap.durationSeconds,
          hasAudio: out.hasAudio,
          indexedText: snap.title,
        })
        .returning({ id: media.id });
      const done = await tx
        .update(editorExports)
        .set({ status: 'completed', outputMediaId: m.id, progress: 100, completedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(editorExports.id, row.id), eq(editorExports.status, 'rendering')))
        .returning({ id: editorExports.id });
      if (!done.length) tx.rollback();
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof Error && err.name === 'TransactionRollbackError') return false;
      throw err;
    });
}

export async function failExport(ctx: AppContext, id: string, detail: S['FailureDetail']): Promise<boolean> {
  const rows = await ctx.db
    .update(editorExports)
    .set({ status: 'failed', error: detail, updatedAt: new Date(), completedAt: new Date() })
    .where(and(eq(editorExports.id, id), inArray(editorExports.status, ['queued', 'rendering'])))
    .returning({ id: editorExports.id });
  return rows.length > 0;
}
