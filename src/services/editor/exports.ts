// Exports of editor videos: queued with a snapshot of the project version (so later edits do not
// change a running export), rendered by the export worker with the timeline renderer, stored as
// `render` media. Its lifecycle is the kernel's (src/kernel): conditional updates, safe to run
// twice (at-least-once jobs).
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { rowId } from '../../db/ids.ts';
import { editorExports, editorVideos, media } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { QUEUES } from '../../jobs/queue.ts';
import type { RenderQuality } from '../../engines/render/types.ts';
import type { Tx } from '../../db/client.ts';
import { defineResource } from '../../kernel/resource.ts';
import { timelineDuration, type Timeline } from './model.ts';
import { notFoundVideo } from './projects.ts';

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

/** Statuses that hold one of the workspace's in-flight slots. */
const IN_FLIGHT: ExportRow['status'][] = ['queued', 'rendering'];
/** Statuses whose duration counts against the daily quota (canceled and failed ones do not). */
const COUNTED: ExportRow['status'][] = ['queued', 'rendering', 'completed'];
/** The quota's rolling window. */
const QUOTA_WINDOW_HOURS = 24;
/** Retry-After of a 429 for too many exports in flight: a poll interval, since renders end when they end. */
const IN_FLIGHT_RETRY_SECONDS = 10;

function rateLimited(
  message: string,
  retryAfterSeconds: number,
  limit: number,
  remaining: number,
  context: Record<string, unknown>,
): ApiError {
  const wait = Math.max(1, Math.min(86400, Math.ceil(retryAfterSeconds)));
  return new ApiError(
    'rate_limited',
    message,
    { retry_after_seconds: wait, ...context },
    {
      'Retry-After': String(wait),
      'X-RateLimit-Limit': String(Math.floor(limit)),
      'X-RateLimit-Remaining': String(Math.max(0, Math.floor(remaining))),
      'X-RateLimit-Reset': String(Date.now() + wait * 1000),
    },
  );
}

/**
 * The workspace's export limits, checked inside the queuing transaction while it holds the
 * workspace's export lock: at most EXPORTS_IN_FLIGHT_PER_WORKSPACE queued or rendering, and at
 * most EXPORT_SECONDS_PER_DAY seconds of output queued in the last 24 hours (canceled and failed
 * exports do not count). 429 rate_limited otherwise, with when to retry.
 */
async function checkExportLimits(ctx: AppContext, tx: Tx, orgId: string, videoId: number, seconds: number): Promise<void> {
  const { exportsInFlightPerWorkspace: slots, exportSecondsPerDay: quota } = ctx.config;
  if (seconds > quota) {
    throw badRequest(
      `Editor video ${videoId} is ${seconds} s long, more than the workspace's export quota of ${quota} s per ${QUOTA_WINDOW_HOURS} hours`,
      [{ field: 'path.id', message: `the project is ${seconds} s long; at most ${quota} s of exports per ${QUOTA_WINDOW_HOURS} hours` }],
      { quota_seconds: quota },
    );
  }
  const [{ n }] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(editorExports)
    .where(and(eq(editorExports.orgId, orgId), inArray(editorExports.status, IN_FLIGHT)));
  if (n >= slots) {
    throw rateLimited(
      `This workspace already has ${n} exports queued or rendering, the most it may have at once; retry when one finishes (or cancel one with DELETE /editor/videos/{id}/exports/{export_id})`,
      IN_FLIGHT_RETRY_SECONDS,
      slots,
      0,
      { limit: slots, in_flight: n },
    );
  }
  const recent = await tx
    .select({
      seconds: sql<number>`coalesce((${editorExports.snapshot}->>'durationSeconds')::float8, 0)`,
      freesInMs: sql<number>`extract(epoch from (${editorExports.createdAt} + make_interval(hours => ${QUOTA_WINDOW_HOURS}) - clock_timestamp())) * 1000`,
    })
    .from(editorExports)
    .where(
      and(
        eq(editorExports.orgId, orgId),
        inArray(editorExports.status, COUNTED),
        sql`${editorExports.createdAt} > now() - make_interval(hours => ${QUOTA_WINDOW_HOURS})`,
      ),
    )
    .orderBy(editorExports.createdAt);
  const used = Math.round(recent.reduce((sum, r) => sum + Number(r.seconds), 0) * 1000) / 1000;
  if (used + seconds > quota + 1e-9) {
    // The oldest exports leave the window first: wait until enough of them have.
    let left = used;
    let waitMs = QUOTA_WINDOW_HOURS * 3600_000;
    for (const r of recent) {
      left -= Number(r.seconds);
      if (left + seconds <= quota + 1e-9) {
        waitMs = Number(r.freesInMs);
        break;
      }
    }
    throw rateLimited(
      `Exports are free of credits but limited to ${quota} s of output per ${QUOTA_WINDOW_HOURS} hours per workspace; ${used} s are used and this export is ${seconds} s long`,
      waitMs / 1000,
      quota,
      quota - used,
      { quota_seconds: quota, used_seconds: used, requested_seconds: seconds },
    );
  }
}

export async function queueExport(
  ctx: AppContext,
  orgId: string,
  videoId: number,
  body: S['CreateEditorExportRequest'] | undefined,
): Promise<EditorExportView> {
  return ctx.db.transaction(async (tx) => {
    // The workspace's export lock: the in-flight count, the quota and the insert below are one
    // step per workspace, whichever API node serves the request. Released at commit.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`editor-exports:${orgId}`}, 0))`);
    // A share lock: edits wait until the snapshot is taken, exports do not wait for each other.
    const [project] = await tx
      .select()
      .from(editorVideos)
      .where(
        and(
          eq(
            editorVideos.videoId,
            rowId(editorVideos.videoId, videoId, () => notFoundVideo(videoId)),
          ),
          eq(editorVideos.orgId, orgId),
        ),
      )
      .for('share');
    if (!project) throw notFoundVideo(videoId);
    const timeline = project.timeline as Timeline;
    const duration = timelineDuration(timeline);
    if (!timeline.items.length || duration <= 0) {
      throw badRequest(`Editor video ${videoId} has no items to render; add media, text or captions first`, [
        { field: 'path.id', message: 'the project has no items' },
      ]);
    }
    const max = ctx.config.editorMaxTimelineSeconds;
    if (duration > max) {
      throw badRequest(
        `Editor video ${videoId} is ${duration} s long; exports are limited to ${max} s. Shorten the project first`,
        [{ field: 'path.id', message: `the project is ${duration} s long, more than the ${max} s an export may be` }],
        { limit_seconds: max },
      );
    }
    await checkExportLimits(ctx, tx, orgId, videoId, duration);
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

/**
 * The 404 of a lookup that found no export: the editor video's (path.id) when the workspace has
 * no such video (another workspace's reads as absent), else the export's (path.export_id).
 */
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
    queue: QUEUES.editorExport,
    conflict: (row, exportId) =>
      new ApiError('conflict', `Export ${exportId} is already ${row.status}; only queued or rendering exports can be canceled`, {
        resource: 'editor_export',
        field: 'path.export_id',
        status: row.status,
      }),
  },
});

/** Whether an export was canceled (the worker polls this while it renders). */
export const isCanceled = async (ctx: AppContext, id: string): Promise<boolean> => (await exportResource.statusOf(ctx, id)) === 'canceled';

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
