// Faceless videos: queueing one through the charged command (checks and price, the `videos` and
// `faceless_videos` rows and the job in one transaction), the status view of GET /videos/{id},
// and the worker-side state changes: attempts, stage progress, stored stage outputs (resume),
// completion (the MP4 as media and the timeline as an editor project with the same id) and
// failure with an exactly-once refund.
import { and, eq, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { editorVideos, facelessVideos, media, videos } from '../../db/schema/index.ts';
import { QUEUES } from '../../jobs/queue.ts';
import { keyFilename } from '../../storage/keys.ts';
import { keyedRequest, runChargedCommand } from '../billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import { applyCreditChange } from '../billing/credits.ts';
import { forwardOnly } from '../progress.ts';
import { recordTerminalEvent } from '../webhooks/events.ts';
import type { Timeline } from '../editor/model.ts';
import { resolveFaceless, type CreateFacelessBody, type FacelessSpec } from './requests.ts';

type S = components['schemas'];
export type FailureDetail = S['FailureDetail'];
/** The pipeline's stages, in order. */
export const FACELESS_STAGES = ['script', 'scenes', 'voiceover', 'captions', 'render'] as const;
export type FacelessStage = (typeof FACELESS_STAGES)[number];

/** POST /faceless-videos. */
export function createFacelessVideo(ctx: AppContext, orgId: string, body: CreateFacelessBody, headerKey: string | undefined): Promise<S['FacelessVideoGeneration']> {
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
export async function facelessStatus(ctx: AppContext, orgId: string, id: number, db: AppContext['db'] | Tx = ctx.db): Promise<S['Video'] | undefined> {
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
  const [row] = await ctx.db
    .update(facelessVideos)
    .set({
      status: 'generating',
      attempts: sql`${facelessVideos.attempts} + 1`,
      startedAt: sql`coalesce(${facelessVideos.startedAt}, now())`,
      updatedAt: new Date(),
    })
    .where(and(eq(facelessVideos.videoId, videoId), sql`${facelessVideos.status} in ('queued', 'generating')`))
    .returning();
  return row ? { ...row, spec: row.spec as FacelessSpec, artifacts: (row.artifacts ?? {}) as Record<string, unknown> } : undefined;
}

export async function facelessProgress(ctx: AppContext, videoId: number, stage: string, percent: number): Promise<void> {
  const progress = Math.max(0, Math.min(99, Math.round(percent)));
  // Never backwards (services/progress.ts): a report written without waiting can land late.
  await ctx.db
    .update(facelessVideos)
    .set({ stage, progress, updatedAt: new Date() })
    .where(
      and(
        eq(facelessVideos.videoId, videoId),
        eq(facelessVideos.status, 'generating'),
        forwardOnly(facelessVideos, progress, stage, FACELESS_STAGES),
      ),
    );
}

/** Stores what a stage produced (merged into the artifacts), so a re-run resumes after it. */
export async function saveArtifacts(ctx: AppContext, videoId: number, patch: Record<string, unknown>): Promise<void> {
  await ctx.db
    .update(facelessVideos)
    .set({ artifacts: sql`${facelessVideos.artifacts} || ${JSON.stringify(patch)}::jsonb`, updatedAt: new Date() })
    .where(and(eq(facelessVideos.videoId, videoId), eq(facelessVideos.status, 'generating')));
}

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
export async function completeFaceless(ctx: AppContext, f: FacelessRow, out: FacelessOutput): Promise<boolean> {
  return ctx.db
    .transaction(async (tx) => {
      const [m] = await tx
        .insert(media)
        .values({
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
        })
        .returning({ id: media.id });
      const done = await tx
        .update(facelessVideos)
        .set({ status: 'completed', stage: null, outputMediaId: m.id, progress: 100, completedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(facelessVideos.videoId, f.videoId), eq(facelessVideos.status, 'generating')))
        .returning({ id: facelessVideos.videoId });
      if (!done.length) tx.rollback();
      await tx
        .insert(editorVideos)
        .values({ videoId: f.videoId, orgId: f.orgId, title: f.spec.title, aspectRatio: f.spec.aspectRatio, width: out.width, height: out.height, fps: out.fps, timeline: out.timeline })
        .onConflictDoNothing();
      await recordTerminalEvent(ctx, tx, { orgId: f.orgId, type: 'faceless_video.completed', data: (await facelessStatus(ctx, f.orgId, f.videoId, tx))! });
      return true;
    })
    .catch((err) => {
      if (err instanceof Error && err.name === 'TransactionRollbackError') return false;
      throw err;
    });
}

/** Terminal failure: marks the video failed and refunds its credits, exactly once. */
export async function failFaceless(ctx: AppContext, videoId: number, detail: FailureDetail): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [f] = await tx
      .update(facelessVideos)
      .set({ status: 'error', error: detail, refundedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(facelessVideos.videoId, videoId), sql`${facelessVideos.status} in ('queued', 'generating')`))
      .returning({ orgId: facelessVideos.orgId, credits: facelessVideos.credits });
    if (!f) return false;
    if (f.credits > 0) await applyCreditChange(tx, { orgId: f.orgId, delta: f.credits, reason: 'faceless_video_refund', reference: `faceless-video:${videoId}` });
    await recordTerminalEvent(ctx, tx, { orgId: f.orgId, type: 'faceless_video.failed', data: (await facelessStatus(ctx, f.orgId, videoId, tx))! });
    return true;
  });
}
