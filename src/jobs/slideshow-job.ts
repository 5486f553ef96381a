// The slideshow job, stage by stage (each visible as the slideshow's `stage` and `progress`):
//   copy     the writer turns prompt + product_context into a hook, body slides and a call to
//            action in the requested language; stored once, so a retry reuses the same words;
//   slides   product images, the avatar and the brand logo fetched through the guarded client
//            (sniffed, size- and pixel-limited like other user media), the reference's palette
//            read from its stored media, and every slide rendered as a PNG at the frame's full
//            size (no text on it), stored and recorded one by one (a retry skips recorded ones);
//   project  the editor project filled once: one image item per slide on a video track and,
//            with overlays, each slide's text as an editable text item on a text track;
//   video    the project rendered to MP4 by the timeline renderer, stored, and the slideshow
//            completed.
// A failure becomes the slideshow's error with a refund once no retry follows (defineJob).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { FfmpegError, probe } from '../media/ffmpeg.ts';
import { fetchCheckedMedia } from '../media/fetch-media.ts';
import { jobFolder } from '../media/work-folder.ts';
import { isNotFound } from '../storage/index.ts';
import { SlideInputError, type SlideLayout, type SlidePalette } from '../engines/image/types.ts';
import { engineFor } from '../engines/index.ts';
import { overlayTextColours, slideGeometry, slidePalette } from '../engines/local/slide.ts';
import { WriterFailed, type SlideCopy } from '../engines/write/types.ts';
import { slideshowSlideKey, slideshowVideoKey } from '../storage/keys.ts';
import { PREVIEWS_DIR_URL } from '../services/catalog/catalog-data.ts';
import { referenceColors } from '../services/references/reference-colors.ts';
import { addTrack, baseItem, frontLayer, mediaLayer, newItemId, t3, TEXT_DEFAULTS, textBlockHeight, textTransform, type Timeline } from '../services/editor/model.ts';
import { copyTimelineMedia } from '../services/editor/render-inputs.ts';
import type { SlideshowSpec } from '../services/slideshows/slideshow-requests.ts';
import {
  completeSlideshow,
  failSlideshow,
  fillProject,
  loadProject,
  recordedSlides,
  recordSlide,
  saveCopy,
  slideshowProgress,
  startSlideshow,
  type SlideshowRow,
  type SlideshowStage,
} from '../services/slideshows/slideshows.ts';
import { defineJob, JobFailure, type FailureDetail, type JobTools, type RunningJob } from './define-job.ts';
import { QUEUES } from './queue.ts';

export interface SlideshowJobData {
  slideshowId: string;
}

/** How long each slide shows in the editor project and the MP4. */
export const SLIDE_SECONDS = 3;
/** Largest product, avatar or logo image fetched (bytes). */
export const SLIDESHOW_IMAGE_MAX_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);
/** Reference templates whose slides show the product full-bleed (a photo dump, a story). */
const FULL_BLEED_TEMPLATES = new Set(['photo-dump-carousel', 'storytime-slideshow']);

/** An uploaded asset image (avatar portrait, brand logo) from storage; checked when it was uploaded. */
async function storedImage(ctx: AppContext, key: string, field: string): Promise<Buffer> {
  return ctx.storage.readBuffer(key).catch((err: unknown) => {
    if (isNotFound(err)) throw new JobFailure({ code: 'input_unavailable', message: `${field}: the stored image is gone`, retryable: false, context: { field, reason: 'missing' } });
    throw err;
  });
}

/** A user image fetched through the guarded client, sniffed and checked like other user media. */
async function fetchImage(ctx: AppContext, url: string, field: string, signal: AbortSignal): Promise<Buffer> {
  const { bytes } = await fetchCheckedMedia(ctx.fetcher, url, {
    maxBytes: SLIDESHOW_IMAGE_MAX_BYTES,
    timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
    signal,
    types: IMAGE_TYPES,
    pixels: { maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension },
    refuse: (r) => {
      if (r.reason === 'fetch') {
        return new JobFailure({ code: 'input_unavailable', message: `${field} ${url} ${r.error.message}`, retryable: r.error.retryable, context: { field, url, reason: r.error.reason } }, r.error.retryable);
      }
      if (r.reason === 'pixels') return new JobFailure({ code: 'input_unavailable', message: `${field} ${url} ${r.message}`, retryable: false, context: { field, url, reason: 'pixels' } });
      return new JobFailure({
        code: 'input_unavailable',
        message: `${field} ${url} is ${('mime' in r && r.mime) || 'not a recognised image'}; PNG, JPEG or WebP only`,
        retryable: false,
        context: { field, url, reason: 'type' },
      });
    },
  });
  return bytes;
}

interface SlideInputs {
  products: Buffer[];
  avatar?: Buffer;
  logo?: Buffer;
}

async function gatherInputs(ctx: AppContext, s: SlideshowRow, signal: AbortSignal): Promise<SlideInputs> {
  const spec = s.spec;
  const products: Buffer[] = [];
  for (const [i, url] of spec.productImageUrls.entries()) products.push(await fetchImage(ctx, url, `product_image_urls[${i}]`, signal));
  let avatar: Buffer | undefined;
  if (spec.avatar?.source === 'catalog') avatar = await fs.readFile(new URL(spec.avatar.image, PREVIEWS_DIR_URL));
  else if (spec.avatar?.source === 'custom' && spec.avatar.imageKey) avatar = await storedImage(ctx, spec.avatar.imageKey, 'avatar_id');
  else if (spec.avatar) avatar = await fetchImage(ctx, spec.avatar.imageUrl, spec.avatar.source === 'custom' ? 'avatar_id' : 'avatar_image_url', signal);
  const logo = spec.brandKit?.logoKey
    ? await storedImage(ctx, spec.brandKit.logoKey, 'brand_kit_id')
    : spec.brandKit?.logoUrl
      ? await fetchImage(ctx, spec.brandKit.logoUrl, 'brand_kit_id', signal)
      : undefined;
  return { products, avatar, logo };
}

const layoutOf = (spec: SlideshowSpec): SlideLayout => (spec.reference && FULL_BLEED_TEMPLATES.has(spec.reference.templateSlug) ? 'full-bleed' : 'card');

/** The words of a slide as its text item shows them: the headline, then the body on a new line. */
export const slideText = (copy: SlideCopy, i: number) => [copy.slides[i].heading, copy.slides[i].body].map((t) => t.trim()).filter(Boolean).join('\n');

function checkCopy(copy: SlideCopy, count: number): SlideCopy {
  const slides = copy.slides?.filter((x) => x && typeof x.heading === 'string');
  if (!slides || slides.length !== count || slides.some((x) => !x.heading.trim())) {
    throw new JobFailure({ code: 'writer_failed', message: `The copy writer returned ${slides?.length ?? 0} usable slides, not ${count}`, retryable: true, context: {} }, true);
  }
  return { ...copy, slides: slides.map((x) => ({ role: x.role, heading: x.heading.slice(0, 200), body: (x.body ?? '').slice(0, 1000) })) };
}

/**
 * Adds the slides to the project: one image item per slide (SLIDE_SECONDS each) on a new video
 * track and, with texts, one text item per slide on a new text track, sized to fit the area above
 * the picture.
 */
function addSlides(tl: Timeline, slides: { mediaId: string; text: string | null }[], spec: SlideshowSpec, palette: SlidePalette): void {
  const frame = { width: spec.width, height: spec.height };
  const video = addTrack(tl, 'video');
  video.name = 'Slides';
  const layer = mediaLayer(tl, video, true);
  slides.forEach((sl, i) => {
    tl.items.push(
      baseItem({ item_id: newItemId(tl, 'image'), track_id: video.track_id, type: 'image', media_id: sl.mediaId, from_seconds: t3(i * SLIDE_SECONDS), duration_seconds: SLIDE_SECONDS, fit: 'cover', layer }),
    );
  });
  if (!slides.some((sl) => sl.text)) return;
  const texts = addTrack(tl, 'text');
  texts.name = 'Slide text';
  const g = slideGeometry(spec.width, spec.height);
  const zoneTop = g.textZone.y / spec.height;
  const zoneHeight = g.textZone.h / spec.height;
  const { color, stroke } = layoutOf(spec) === 'full-bleed' ? { color: '#FFFFFF', stroke: '#000000' } : overlayTextColours(palette.background);
  const font = spec.brandKit?.fonts[0] ?? TEXT_DEFAULTS.font_family;
  const textLayer = frontLayer(tl);
  slides.forEach((sl, i) => {
    if (!sl.text) return;
    let size = i === 0 ? 84 : 60;
    const style = () => ({ ...TEXT_DEFAULTS, font_family: font, font_size: size, color, stroke_color: stroke, top: t3(zoneTop) });
    while (size > 28 && textBlockHeight(sl.text, style(), frame) > zoneHeight) size -= 4;
    const st = style();
    tl.items.push(
      baseItem({
        item_id: newItemId(tl, 'text'),
        track_id: texts.track_id,
        type: 'text',
        from_seconds: t3(i * SLIDE_SECONDS),
        duration_seconds: SLIDE_SECONDS,
        fit: 'contain',
        text: sl.text,
        style: st,
        transform: textTransform(sl.text, st, frame),
        layer: textLayer,
      }),
    );
  });
}

async function runSlideshow(ctx: AppContext, job: RunningJob<SlideshowJobData>, tools: JobTools): Promise<void> {
  const s = await startSlideshow(ctx, job.data.slideshowId);
  if (!s) return; // already completed or failed: a repeated delivery has nothing to do
  tools.annotate({ credits_refunded: s.credits });
  const { spec } = s;
  const count = spec.slideCount;
  const { signal } = tools;
  const workDir = await jobFolder(ctx.config.dataDir, `slideshow-${s.id}`);
  // Milliseconds each stage took in this attempt (logged when the slideshow completes).
  const took: Partial<Record<SlideshowStage, number>> = {};
  let clock = Date.now();
  const lap = (stage: SlideshowStage) => {
    const now = Date.now();
    took[stage] = now - clock;
    clock = now;
  };
  try {
    // 1. Copy.
    let copy = s.copy;
    if (!copy) {
      tools.progress('copy', 1);
      const written = await engineFor('write', ctx).writeSlides(
        { prompt: spec.prompt, title: spec.title, productContext: spec.productContext, language: spec.language, slideCount: count },
        signal,
      );
      copy = await saveCopy(ctx, s.id, checkCopy(written, count));
    }
    lap('copy');

    // 2. Slides (those an earlier attempt recorded are kept).
    const recorded = await recordedSlides(ctx, s.id);
    const needSlides = recorded.size < count;
    const refColors = needSlides || s.projectVersion === null ? await referenceColors(ctx, s.orgId, s.spec.reference?.mediaIds ?? [], workDir, signal) : [];
    const palette = slidePalette({ brandColors: spec.brandKit?.colors, referenceColors: refColors, prompt: spec.prompt });
    const inputs = needSlides ? await gatherInputs(ctx, s, signal) : undefined;
    const texts = Array.from({ length: count }, (_, i) => (spec.generateTextOverlays ? slideText(copy, i) : null));
    for (let i = 0; i < count; i++) {
      if (recorded.has(i)) continue;
      tools.progress('slides', 10 + (60 * recorded.size) / count);
      const productIndex = inputs!.products.length ? i % inputs!.products.length : -1;
      const png = await engineFor('slide', ctx).renderSlide({
        width: spec.width,
        height: spec.height,
        index: i,
        count,
        layout: layoutOf(spec),
        palette,
        product: productIndex >= 0 ? inputs!.products[productIndex] : undefined,
        avatar: inputs!.avatar,
        logo: inputs!.logo,
        maxInputPixels: ctx.config.mediaMaxPixels,
        seed: `${s.id}`,
      }).catch((err: unknown) => {
        if (!(err instanceof SlideInputError)) throw err;
        // Which request field the image came from.
        const field =
          err.input === 'product' ? `product_image_urls[${productIndex}]` : err.input === 'logo' ? 'brand_kit_id' : spec.avatar?.source === 'url' ? 'avatar_image_url' : 'avatar_id';
        throw new JobFailure({ code: 'input_unavailable', message: `${field}: the ${err.input} image ${err.message}`.slice(0, 1900), retryable: false, context: { field } });
      });
      const key = slideshowSlideKey(s.orgId, s.id, i);
      const stored = await ctx.storage.put(key, png, 'image/png');
      recorded.set(i, await recordSlide(ctx, s, { index: i, storageKey: key, bytes: stored.bytes, width: spec.width, height: spec.height, text: texts[i] }));
    }

    lap('slides');

    // 3. The editor project (filled once).
    tools.progress('project', 72);
    await fillProject(ctx, s, (tl) =>
      addSlides(
        tl,
        Array.from({ length: count }, (_, i) => ({ mediaId: recorded.get(i)!, text: texts[i] })),
        spec,
        palette,
      ),
    );

    lap('project');

    // 4. The carousel MP4, rendered from the project as it now is.
    tools.progress('video', 75);
    const project = await loadProject(ctx, s);
    const tl = project.timeline as Timeline;
    const { files, lost } = await copyTimelineMedia(ctx, s.orgId, tl, workDir);
    if (lost.length) {
      throw new JobFailure({ code: 'input_unavailable', message: `Media ${lost.join(', ')} of the project no longer exist`, retryable: false, context: { video_id: s.videoId } });
    }
    const out = path.join(workDir, 'carousel.mp4');
    await engineFor('render', ctx).render({ width: project.width, height: project.height, fps: project.fps, tracks: tl.tracks, items: tl.items, media: files }, workDir, out, {
      quality: 'standard',
      signal,
      onProgress: (fraction) => tools.progress('video', 75 + fraction * 24),
    });
    const probed = await probe({ path: out, type: 'video/mp4' }, { signal });
    const key = slideshowVideoKey(s.orgId, s.id);
    const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
    lap('video');
    ctx.log.info({ slideshow: s.id, attempt: job.attempt, stage_ms: took }, 'slideshow made');
    await completeSlideshow(ctx, s, {
      storageKey: key,
      bytes: stored.bytes,
      width: project.width,
      height: project.height,
      durationSeconds: probed.duration_seconds ?? count * SLIDE_SECONDS,
      hasAudio: probed.has_audio,
    });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  if (err instanceof WriterFailed) {
    return {
      detail: { code: 'writer_failed', message: `The copy could not be written: ${err.message}`.slice(0, 1900), retryable: err.retryable, context: err.status ? { status: err.status } : {} },
      retry: err.retryable,
    };
  }
  const message = err instanceof FfmpegError ? `Rendering failed: ${err.message.split('\n').slice(-3).join(' ')}` : `The slideshow failed: ${(err as Error)?.message ?? String(err)}`;
  return { detail: { code: 'render_failed', message: message.slice(0, 1900), retryable: true, context: {} }, retry: true };
}

export const slideshowJob = defineJob<SlideshowJobData>({
  name: QUEUES.slideshow,
  concurrency: (config) => config.slideshowConcurrency,
  retry: (config) => ({ limit: config.generationRetryLimit, delay: 2, backoff: true }),
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 3600,
  deadLetter: { message: 'The slideshow was abandoned by its workers too many times; the credits were refunded' },
  run: runSlideshow,
  describeFailure,
  progress: (ctx, data, percent, stage) => slideshowProgress(ctx, data.slideshowId, stage as SlideshowStage, percent),
  onTerminalFailure: (ctx, data, detail) => failSlideshow(ctx, data.slideshowId, detail),
});
