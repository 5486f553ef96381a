// The faceless video's rows: its lifecycle (src/kernel): attempts, stage progress, stored stage
// outputs (resume), completion (the MP4 as media and the timeline as an editor project with the
// same id) and failure with an exactly-once refund. Its view (GET /videos/{id}) is
// services/editor/faceless-status.ts, beside the editor's video id space; the charged command that
// queues one is request.ts.
import { createHash } from 'node:crypto';
import { facelessStatus } from '../../services/editor/faceless-status.ts';
import { getVideoStatus, videoNotFound } from '../../services/editor/projects.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { editorVideos, facelessVideos } from '../../db/schema/index.ts';
import { cancelWork, defineResource } from '../../kernel/resource.ts';
import { keyFilename } from '../../storage/keys.ts';
import type { Timeline } from '../../services/editor/model.ts';
import type { FacelessSpec } from './request.ts';

type S = components['schemas'];
export type FailureDetail = S['FailureDetail'];
/** The pipeline's stages, in order (clips only with a clip scene source: FACELESS_SCENE_SOURCE stock_video or video_model). */
export const FACELESS_STAGES = ['script', 'scenes', 'voiceover', 'captions', 'clips', 'render'] as const;
export type FacelessStage = (typeof FACELESS_STAGES)[number];

/**
 * The faceless video's lifecycle (src/kernel/resource.ts): queued → generating → completed | error,
 * its stages' outputs in `artifacts`; a failure keeps the stage it failed in, refunds the credits
 * once, and each terminal state writes its webhook event. A queued or running one can be canceled
 * (cancelFacelessVideo): refunded in full unless a paid provider call of it has completed (then not at all).
 */
/** The faceless video job's queue (job.ts declares the job on it; a canceled video's job is cancelled on it). */
export const FACELESS_QUEUE = 'faceless';

export const facelessResource = defineResource({
  name: 'faceless_video',
  table: facelessVideos,
  columns: {
    id: 'videoId',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    progress: 'progress',
    stage: 'stage',
    state: 'artifacts',
    completedAt: 'completedAt',
    credits: 'credits',
    refundedAt: 'refundedAt',
    output: 'outputMediaId',
    jobId: 'jobId',
  },
  statuses: { pending: 'queued', running: 'generating', completed: 'completed', failed: 'error', canceled: 'canceled' },
  stages: FACELESS_STAGES,
  refund: { reason: 'faceless_video_refund', reference: (videoId: number) => `faceless-video:${videoId}` },
  events: { completed: 'faceless_video.completed', failed: 'faceless_video.failed', canceled: 'faceless_video.canceled' },
  view: async (ctx, tx, row) => (await facelessStatus(ctx, row.orgId, row.videoId, tx))!,
  cancel: cancelWork('Video', 'video', FACELESS_QUEUE),
});

/**
 * Cancels a queued or generating faceless video by its video id (POST /videos/{id}/cancel, MCP
 * tasks/cancel): canceled, refunded by the rule (in full unless a paid provider call of it has
 * completed), its queued job cancelled or its worker stopped; the video as GET /videos/{id}
 * returns it. Canceling a canceled one answers it again (no second refund); a finished one is 409;
 * any other id (another workspace's, an editor project's) is GET's 404.
 */
export async function cancelFacelessVideo(ctx: AppContext, orgId: string, videoId: number): Promise<S['Video']> {
  // GET's lookup first: its 404 for an id that is no video of the workspace (before any SQL when no row can have it).
  const before = await getVideoStatus(ctx, orgId, videoId);
  if (before.kind !== 'faceless' || !(await facelessResource.cancel(ctx, orgId, videoId))) throw videoNotFound(videoId);
  return getVideoStatus(ctx, orgId, videoId);
}

// ---------------------------------------------------------------------------------------------
// Worker side. Every step is safe to run twice (jobs are delivered at least once).

/** A UUID derived from a name (stable ids for rows a re-run writes again). */
export function stableUuid(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Runs `fn` over `items` with at most `limit` at once (scenes and clips are made two at a time). */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

export interface FacelessRow {
  videoId: number;
  orgId: string;
  title: string;
  status: string;
  spec: FacelessSpec;
  credits: number;
  artifacts: Record<string, unknown>;
}

/** Starts (or resumes) an attempt: queued/generating → generating; undefined when it is finished. */
export async function startFacelessAttempt(ctx: AppContext, videoId: number): Promise<FacelessRow | undefined> {
  const row = await facelessResource.start(ctx, videoId);
  return row ? { ...row, spec: row.spec as FacelessSpec, artifacts: (row.artifacts ?? {}) as Record<string, unknown> } : undefined;
}

/** Progress of a stage (never backwards: services/progress.ts; a report written without waiting can land late). */
export const facelessProgress = (ctx: AppContext, videoId: number, stage: string, percent: number): Promise<void> =>
  facelessResource.progress(ctx, videoId, stage, percent);

export interface FacelessOutput {
  storageKey: string;
  bytes: number;
  width: number;
  height: number;
  durationSeconds: number;
  hasAudio: boolean;
  fps: number;
  timeline: Timeline;
}

/**
 * Completes the video, unless it already finished: the MP4 as media, the timeline as the editor
 * project with the same id, and the row completed; one transaction.
 */
export function completeFaceless(ctx: AppContext, f: FacelessRow, out: FacelessOutput): Promise<boolean> {
  return facelessResource.complete(ctx, f.videoId, {
    media: {
      orgId: f.orgId,
      kind: 'video',
      status: 'completed',
      source: 'render',
      title: f.spec.title,
      filename: keyFilename(out.storageKey),
      contentType: 'video/mp4',
      sizeBytes: out.bytes,
      storageKey: out.storageKey,
      width: out.width,
      height: out.height,
      durationSeconds: out.durationSeconds,
      hasAudio: out.hasAudio,
      indexedText: f.spec.prompt ?? f.spec.script,
    },
    extra: (tx) =>
      tx
        .insert(editorVideos)
        .values({
          videoId: f.videoId,
          orgId: f.orgId,
          title: f.spec.title,
          aspectRatio: f.spec.aspectRatio,
          width: out.width,
          height: out.height,
          fps: out.fps,
          timeline: out.timeline,
        })
        .onConflictDoNothing(),
  });
}

/** Terminal failure: marks the video failed (its stage kept) and refunds its credits, exactly once. */
export const failFaceless = (ctx: AppContext, videoId: number, detail: FailureDetail): Promise<boolean> =>
  facelessResource.fail(ctx, videoId, detail);
