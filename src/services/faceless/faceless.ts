// Faceless videos: queueing one through the charged command (checks and price, the `videos` and
// `faceless_videos` rows and the job in one transaction), the status view of GET /videos/{id},
// and the video's lifecycle (src/kernel): attempts, stage progress, stored stage outputs (resume),
// completion (the MP4 as media and the timeline as an editor project with the same id) and
// failure with an exactly-once refund.
import { and, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { editorVideos, facelessVideos, media, videos } from '../../db/schema/index.ts';
import { QUEUES } from '../../jobs/queue.ts';
import { defineResource } from '../../kernel/resource.ts';
import { keyFilename } from '../../storage/keys.ts';
import { keyedRequest, runChargedCommand } from '../billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import type { Timeline } from '../editor/model.ts';
import { resolveFaceless, type CreateFacelessBody, type FacelessSpec } from './requests.ts';

type S = components['schemas'];
export type FailureDetail = S['FailureDetail'];
/** The pipeline's stages, in order. */
export const FACELESS_STAGES = ['script', 'scenes', 'voiceover', 'captions', 'render'] as const;
export type FacelessStage = (typeof FACELESS_STAGES)[number];

/** POST /faceless-videos. */
export function createFacelessVideo(
  ctx: AppContext,
  orgId: string,
  body: CreateFacelessBody,
  headerKey: string | undefined,
): Promise<S['FacelessVideoGeneration']> {
  return runChargedCommand(ctx, {
    orgId,
    operation: 'createFacelessVideo',
    ...keyedRequest(body, headerKey),
    ledger: { reason: 'faceless_video_charge', reference: (groupId) => `faceless:${groupId}` },
    prepare: (tx) => resolveFaceless({ db: tx, fetcher: ctx.fetcher }, orgId, body),
    enqueue: async (sp, r) => {
      const [v] = await sp.insert(videos).values({ orgId, kind: 'faceless' }).returning({ id: videos.id });
      const jobId = crypto.randomUUID();
      await sp.insert(facelessVideos).values({ videoId: v.id, orgId, title: r.spec.title, spec: r.spec, credits: r.unitCredits, jobId });
      await ctx.queue.sendInTx(sp, QUEUES.faceless, { videoId: v.id }, jobId);
      return String(v.id);
    },
    respond: async (_tx, r, o): Promise<S['FacelessVideoGeneration']> => ({
      object: 'faceless_video_generation',
      status: 'queued',
      video_id: Number(o.unitIds[0]),
      title: r.spec.title,
      credits_deducted: o.creditsDeducted,
      remaining_credits: o.remainingCredits,
    }),
    insufficientMessage: (r, required, available) =>
      `This ${r.spec.durationSeconds}-second faceless video with ${r.spec.voice.name} needs ${required} credits and the workspace has ${available}`,
  });
}

/** GET /videos/{id} of a faceless video (undefined when the id is not one of this workspace's). */
export async function facelessStatus(
  ctx: AppContext,
  orgId: string,
  id: number,
  db: AppContext['db'] | Tx = ctx.db,
): Promise<S['Video'] | undefined> {
  const [row] = await db
    .select({ f: facelessVideos, m: media })
    .from(facelessVideos)
    .leftJoin(media, eq(media.id, facelessVideos.outputMediaId))
    .where(and(eq(facelessVideos.videoId, id), eq(facelessVideos.orgId, orgId)));
  if (!row) return undefined;
  const { f, m } = row;
  const done = f.status === 'completed' && m;
  return {
    object: 'video',
    id,
    kind: 'faceless',
    status: f.status,
    title: f.title,
    url: done ? ctx.storage.signedUrl(m.storageKey) : null,
    error: (f.error as FailureDetail | null) ?? null,
    stage: f.status === 'generating' || f.status === 'error' ? ((f.stage as FacelessStage | null) ?? null) : null,
    progress: f.status === 'completed' ? 100 : f.progress,
    duration_seconds: done ? m.durationSeconds : null,
    size_bytes: done ? m.sizeBytes : null,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
  };
}

/**
 * The faceless video's lifecycle (src/kernel/resource.ts): queued → generating → completed | error,
 * its stages' outputs in `artifacts`; a failure keeps the stage it failed in, refunds the credits
 * once, and each terminal state writes its webhook event.
 */
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
  statuses: { pending: 'queued', running: 'generating', completed: 'completed', failed: 'error' },
  stages: FACELESS_STAGES,
  refund: { reason: 'faceless_video_refund', reference: (videoId: number) => `faceless-video:${videoId}` },
  events: { completed: 'faceless_video.completed', failed: 'faceless_video.failed' },
  view: async (ctx, tx, row) => (await facelessStatus(ctx, row.orgId, row.videoId, tx))!,
});

// ---------------------------------------------------------------------------------------------
// Worker side. Every step is safe to run twice (jobs are delivered at least once).

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
