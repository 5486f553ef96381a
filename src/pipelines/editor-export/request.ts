// Queueing an editor export: the workspace's limits (exports in flight, seconds of output per
// day), then the export row with a snapshot of the project version (so later edits do not change
// a running export) and its job, in one transaction. Exports are free of credits.
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/openapi.d.ts';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { rowId } from '../../db/ids.ts';
import { editorExports, editorVideos } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { editorExportJob } from './job.ts';
import type { Tx } from '../../db/client.ts';
import { timelineDuration, type Timeline } from '../../services/editor/model.ts';
import { notFoundVideo } from '../../services/editor/projects.ts';
import { type EditorExportView, type ExportRow, type ExportSnapshot, view } from './rows.ts';

type S = components['schemas'];

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
    await ctx.queue.sendInTx(tx, editorExportJob, { exportId: id }, jobId);
    return view(ctx, row, null);
  });
}

/**
 * The 404 of a lookup that found no export: the editor video's (path.id) when the workspace has
 * no such video (another workspace's reads as absent), else the export's (path.export_id).
 */
