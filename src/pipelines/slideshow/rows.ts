// The slideshow's rows: reading one, the slideshow's lifecycle (src/kernel: the terminal states
// write the slideshow.completed / slideshow.failed webhook event in their transaction) and what
// its stages store. The charged command that queues one is request.ts.
// Every worker step is safe to run twice (jobs are delivered at least once): the copy is stored
// once and reused, a slide already recorded is not rendered again, the project is filled once
// (project_version), and completion and failure are conditional updates (failure refunds once).
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import type { MediaManifest } from '../../media/quality/manifest.ts';
import { editorVideos, media, slideshows, slideshowSlides } from '../../db/schema/index.ts';
import { notFound } from '../../errors.ts';
import { isUuid } from '../../services/workspaces/organizations.ts';
import { recordedEngines } from '../../engines/engine-use.ts';
import type { SlideCopy } from '../../engines/write/types.ts';
import { keyFilename } from '../../storage/keys.ts';
import { cancelWork, defineResource } from '../../kernel/resource.ts';
import type { Tx } from '../../db/client.ts';
import type { Timeline } from '../../services/editor/model.ts';
import type { SlideshowSpec } from './request.ts';

type S = components['schemas'];
export type FailureDetail = S['FailureDetail'];
export type SlideshowGeneration = S['SlideshowGeneration'];
export type SlideshowView = S['Slideshow'];
export type SlideshowStage = NonNullable<(typeof slideshows.$inferSelect)['stage']>;
/** The pipeline's stages, in order. */
const SLIDESHOW_STAGES: readonly SlideshowStage[] = ['copy', 'slides', 'project', 'video'];

/** Frame rate of a slideshow's editor project. */
export const SLIDESHOW_FPS = 30;

export async function getSlideshow(ctx: AppContext, orgId: string, id: string, db: AppContext['db'] | Tx = ctx.db): Promise<SlideshowView> {
  const [row] = await db
    .select({ s: slideshows, videoKey: media.storageKey })
    .from(slideshows)
    .leftJoin(media, eq(media.id, slideshows.videoMediaId))
    .where(and(eq(slideshows.id, id), eq(slideshows.orgId, orgId)));
  if (!row) throw notFound('Slideshow', id, 'slideshow');
  const slides = await slidesOf(db, [row.s.id]);
  return slideshowView(ctx, row.s, row.videoKey, slides.get(row.s.id) ?? []);
}

export interface SlideRecord {
  index: number;
  text: string | null;
  key: string;
}

/** The recorded slides of these slideshows (by slideshow id), in slide order. */
export async function slidesOf(db: AppContext['db'] | Tx, ids: string[]): Promise<Map<string, SlideRecord[]>> {
  const out = new Map<string, SlideRecord[]>();
  if (ids.length === 0) return out;
  const rows = await db
    .select({ slideshowId: slideshowSlides.slideshowId, index: slideshowSlides.index, text: slideshowSlides.text, key: media.storageKey })
    .from(slideshowSlides)
    .innerJoin(media, eq(media.id, slideshowSlides.mediaId))
    .where(inArray(slideshowSlides.slideshowId, ids))
    .orderBy(asc(slideshowSlides.slideshowId), asc(slideshowSlides.index));
  for (const { slideshowId, ...slide } of rows) {
    const list = out.get(slideshowId) ?? [];
    list.push(slide);
    out.set(slideshowId, list);
  }
  return out;
}

/** A slideshow row with its carousel MP4's key and its slides, as GET /slideshows/{id} and GET /slideshows show it. */
export function slideshowView(
  ctx: AppContext,
  s: typeof slideshows.$inferSelect,
  videoKey: string | null,
  slides: SlideRecord[],
): SlideshowView {
  const completed = s.status === 'completed';
  return {
    object: 'slideshow',
    id: s.id,
    video_id: s.videoId,
    status: s.status,
    stage: s.status === 'generating' ? s.stage : null,
    progress: completed ? 100 : s.progress,
    title: s.title,
    slide_count: s.slideCount,
    aspect_ratio: s.aspectRatio as SlideshowView['aspect_ratio'],
    slides: slides.map((sl) => ({ index: sl.index, image_url: ctx.storage.signedUrl(sl.key), text: sl.text })),
    video_url: completed && videoKey ? ctx.storage.signedUrl(videoKey) : null,
    credits_deducted: s.credits,
    engines: recordedEngines(s.state as Record<string, unknown> | null),
    error: (s.error as FailureDetail | null) ?? null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/**
 * The slideshow's lifecycle (src/kernel/resource.ts): queued → generating → completed | error; its
 * stages store their outputs in columns and rows of their own (copy, slideshow_slides,
 * project_version), the video stage's in `state`, with the runner's record of the stages' runs.
 * A failure clears the stage and refunds the credits once; each terminal state writes its webhook
 * event. A queued or running one can be canceled (cancelSlideshow): refunded in full unless a paid provider call of it has completed (then not at all).
 */
/** The slideshow job's queue (job.ts declares the job on it; a canceled slideshow's job is cancelled on it). */
export const SLIDESHOW_QUEUE = 'slideshow';

export const slideshowResource = defineResource({
  name: 'slideshow',
  table: slideshows,
  columns: {
    id: 'id',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    progress: 'progress',
    stage: 'stage',
    state: 'state',
    completedAt: 'completedAt',
    credits: 'credits',
    refundedAt: 'refundedAt',
    output: 'videoMediaId',
    jobId: 'jobId',
  },
  statuses: { pending: 'queued', running: 'generating', completed: 'completed', failed: 'error', canceled: 'canceled' },
  stages: SLIDESHOW_STAGES,
  refund: { reason: 'slideshow_refund', reference: (id: string) => `slideshow:${id}` },
  events: { completed: 'slideshow.completed', failed: 'slideshow.failed', canceled: 'slideshow.canceled' },
  view: (ctx, tx, row) => getSlideshow(ctx, row.orgId, row.id, tx),
  failSet: () => ({ stage: null }),
  cancel: cancelWork('Slideshow', 'slideshow', SLIDESHOW_QUEUE),
});

/**
 * Cancels a queued or generating slideshow (POST /slideshows/{id}/cancel, MCP tasks/cancel):
 * canceled, refunded by the rule (in full unless a paid provider call of it has completed), its
 * queued job cancelled or its worker stopped; the slideshow as GET /slideshows/{id} returns it.
 * Canceling a canceled one answers it again (no second refund); a finished one is 409 conflict;
 * another workspace's is 404 as for GET.
 */
export async function cancelSlideshow(ctx: AppContext, orgId: string, id: string): Promise<SlideshowView> {
  if (!isUuid(id) || !(await slideshowResource.cancel(ctx, orgId, id))) throw notFound('Slideshow', id, 'slideshow');
  return getSlideshow(ctx, orgId, id);
}

// ---------------------------------------------------------------------------------------------
// Worker side.

export interface SlideshowRow {
  id: string;
  orgId: string;
  videoId: number;
  status: string;
  spec: SlideshowSpec;
  credits: number;
  copy: SlideCopy | null;
  projectVersion: number | null;
  /** The attempt this is (the resource's counter) and the stage runner's state (src/kernel/stages.ts). */
  attempts: number;
  state: Record<string, unknown>;
}

const toRow = (r: typeof slideshows.$inferSelect): SlideshowRow => ({
  id: r.id,
  orgId: r.orgId,
  videoId: r.videoId,
  status: r.status,
  spec: r.spec as SlideshowSpec,
  credits: r.credits,
  copy: (r.copy as SlideCopy | null) ?? null,
  projectVersion: r.projectVersion,
  attempts: r.attempts,
  state: (r.state ?? {}) as Record<string, unknown>,
});

/** Starts an attempt: queued → generating (or a retry of generating); undefined when it already finished. */
export async function startSlideshow(ctx: AppContext, id: string): Promise<SlideshowRow | undefined> {
  const row = await slideshowResource.start(ctx, id);
  return row ? toRow(row) : undefined;
}

/** Stores the copy unless an earlier attempt did; returns the stored copy (the first one written wins). */
export async function saveCopy(ctx: AppContext, id: string, copy: SlideCopy): Promise<SlideCopy> {
  await ctx.db
    .update(slideshows)
    .set({ copy, updatedAt: new Date() })
    .where(and(eq(slideshows.id, id), sql`${slideshows.copy} is null`));
  const [row] = await ctx.db.select({ copy: slideshows.copy }).from(slideshows).where(eq(slideshows.id, id));
  return row.copy as SlideCopy;
}

/** The slides recorded so far (index → media id). */
export async function recordedSlides(ctx: AppContext, id: string): Promise<Map<number, string>> {
  const rows = await ctx.db
    .select({ index: slideshowSlides.index, mediaId: slideshowSlides.mediaId })
    .from(slideshowSlides)
    .where(eq(slideshowSlides.slideshowId, id));
  return new Map(rows.map((r) => [r.index, r.mediaId]));
}

export interface StoredSlide {
  index: number;
  storageKey: string;
  bytes: number;
  width: number;
  height: number;
  text: string | null;
}

/** Records a rendered slide (its media row and slide row) unless it is recorded already; returns its media id. */
export async function recordSlide(ctx: AppContext, s: SlideshowRow, slide: StoredSlide): Promise<string> {
  return ctx.db.transaction(async (tx) => {
    // The slideshow's row lock serializes two deliveries recording the same slide.
    await tx.select({ id: slideshows.id }).from(slideshows).where(eq(slideshows.id, s.id)).for('update');
    const [known] = await tx
      .select({ mediaId: slideshowSlides.mediaId })
      .from(slideshowSlides)
      .where(and(eq(slideshowSlides.slideshowId, s.id), eq(slideshowSlides.index, slide.index)));
    if (known) return known.mediaId;
    const [m] = await tx
      .insert(media)
      .values({
        orgId: s.orgId,
        kind: 'image',
        status: 'completed',
        source: 'generation',
        title: `${s.spec.title} — slide ${slide.index + 1}`,
        filename: keyFilename(slide.storageKey),
        contentType: 'image/png',
        sizeBytes: slide.bytes,
        storageKey: slide.storageKey,
        width: slide.width,
        height: slide.height,
        indexedText: slide.text,
      })
      .returning({ id: media.id });
    await tx.insert(slideshowSlides).values({ slideshowId: s.id, index: slide.index, mediaId: m.id, text: slide.text });
    return m.id;
  });
}

/**
 * Fills the editor project once: `build` adds the slides' tracks and items to the project's
 * current timeline (under the project's row lock), the version goes up by one, and the
 * slideshow remembers that version. A second call (a retried job) changes nothing.
 */
export async function fillProject(ctx: AppContext, s: SlideshowRow, build: (tl: Timeline) => void): Promise<number> {
  return ctx.db.transaction(async (tx) => {
    const [me] = await tx
      .select({ projectVersion: slideshows.projectVersion })
      .from(slideshows)
      .where(eq(slideshows.id, s.id))
      .for('update');
    if (me.projectVersion !== null) return me.projectVersion;
    const [project] = await tx.select().from(editorVideos).where(eq(editorVideos.videoId, s.videoId)).for('update');
    const timeline = project.timeline as Timeline;
    build(timeline);
    const version = project.version + 1;
    await tx.update(editorVideos).set({ timeline, version, updatedAt: new Date() }).where(eq(editorVideos.videoId, s.videoId));
    await tx.update(slideshows).set({ projectVersion: version, updatedAt: new Date() }).where(eq(slideshows.id, s.id));
    return version;
  });
}

/** The project as it is now (what the carousel MP4 is rendered from). */
export async function loadProject(ctx: AppContext, s: SlideshowRow) {
  const [project] = await ctx.db.select().from(editorVideos).where(eq(editorVideos.videoId, s.videoId));
  return project;
}

export interface StoredVideo {
  storageKey: string;
  bytes: number;
  width: number;
  height: number;
  durationSeconds: number;
  hasAudio: boolean;
  /** What the MP4 shows, for the media quality checker (absent on slideshows rendered before it was recorded). */
  manifest?: MediaManifest;
}

/** Records the carousel MP4 and completes the slideshow, unless it already finished. */
export function completeSlideshow(ctx: AppContext, s: SlideshowRow, out: StoredVideo): Promise<boolean> {
  return slideshowResource.complete(ctx, s.id, {
    media: {
      orgId: s.orgId,
      kind: 'video',
      status: 'completed',
      source: 'render',
      title: s.spec.title,
      filename: keyFilename(out.storageKey),
      contentType: 'video/mp4',
      sizeBytes: out.bytes,
      storageKey: out.storageKey,
      width: out.width,
      height: out.height,
      durationSeconds: out.durationSeconds,
      hasAudio: out.hasAudio,
      indexedText: s.spec.prompt,
    },
  });
}

/** Terminal failure: marks the slideshow failed and refunds its credits, exactly once. */
export const failSlideshow = (ctx: AppContext, id: string, detail: FailureDetail): Promise<boolean> =>
  slideshowResource.fail(ctx, id, detail);
