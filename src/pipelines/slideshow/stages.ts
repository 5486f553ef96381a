// The slideshow job, stage by stage on the kernel's stage runner (src/kernel/stages.ts; each
// visible as the slideshow's `stage` and `progress`, each resumed from what it stored):
//   copy     the writer turns prompt + product_context into a hook, body slides and a call to
//            action in the requested language; stored once, so a retry reuses the same words;
//   slides   product images, the avatar and the brand logo fetched through the guarded client
//            (sniffed, size- and pixel-limited like other user media), the reference's palette
//            read from its stored media, and every slide rendered as a PNG at the frame's full
//            size (no text on it), stored and recorded one by one (a retry skips recorded ones).
//            With SLIDESHOW_IMAGE_MODEL, each slide's picture is made first by that AI image
//            model (an edit of its product image, or from its copy), through the engine the
//            catalog rule names; its provider job is kept in `state.slideJobs` before polling
//            (a retry resumes it, never pays twice) and where it came from in
//            `state.slidePictures` (model, provider, job id, seconds; or why it was drawn here);
//   project  the editor project filled once: one image item per slide on a video track and,
//            with overlays, each slide's headline and body as editable text items on a text
//            track, set big and centred (./text-layout.ts);
//   video    the project rendered to MP4 by the timeline renderer, stored, and the slideshow
//            completed.
// A failure becomes the slideshow's error with a refund once no retry follows (defineJob).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { FfmpegError, probe } from '../../media/ffmpeg.ts';
import { fetchCheckedMedia } from '../../media/fetch-media.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { isNotFound } from '../../storage/index.ts';
import { SlideInputError, type SlideLayout, type SlidePalette } from '../../engines/image/types.ts';
import { engineFor } from '../../engines/index.ts';
import type { ProviderJobRef } from '../../engines/generation.ts';
import { ProviderError } from '../../engines/generation.ts';
import { choosePicture, frameFor, makePicture, type PictureFallback, type PictureRecord } from '../../engines/image/model-picture.ts';
import { itemJob, itemState, type ItemState } from '../../kernel/item-state.ts';
import { findAiModel, PREVIEWS_DIR_URL } from '../../services/catalog/catalog-data.ts';
import { numbered, numberedZone, overlayTextColours, slideGeometry, slidePalette } from '../../engines/local/slide.ts';
import { WriterFailed, type SlideCopy } from '../../engines/write/types.ts';
import { supportedWriterLanguage } from '../../engines/write/languages.ts';
import { editorMediaKey, slideshowSlideKey, slideshowVideoKey } from '../../storage/keys.ts';
import { storeMusicBed, type StoredMusicBed } from '../music-bed.ts';
import { stableUuid } from '../faceless-video/rows.ts';
import { referenceColors } from '../../services/references/reference-colors.ts';
import { addTrack, baseItem, frontLayer, mediaLayer, newItemId, t3, TEXT_DEFAULTS, type Timeline } from '../../services/editor/model.ts';
import { SLIDE_BODY_FONT, SLIDE_FONT, type SlideTextLayout, stackSlideText } from './text-layout.ts';
import { copyTimelineMedia } from '../../services/editor/render-inputs.ts';
import { addSceneTransitions } from '../../engines/render/transitions.ts';
import { timelineManifest } from '../../engines/render/manifest.ts';
import type { MediaManifest } from '../../media/quality/manifest.ts';
import type { SlideshowSpec } from './request.ts';
import {
  completeSlideshow,
  fillProject,
  loadProject,
  recordedSlides,
  recordSlide,
  saveCopy,
  slideshowResource,
  startSlideshow,
  type SlideshowRow,
  type StoredVideo,
} from './rows.ts';
import { discardIfCanceled, runCancelable } from '../../kernel/cancelable.ts';
import { runStages, type StageContext, type Stages } from '../../kernel/stages.ts';
import { JobFailure, type FailureDetail, type JobTools, type RunningJob } from '../../jobs/define-job.ts';

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
    if (isNotFound(err))
      throw new JobFailure({
        code: 'input_unavailable',
        message: `${field}: the stored image is gone`,
        retryable: false,
        context: { field, reason: 'missing' },
      });
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
        return new JobFailure(
          {
            code: 'input_unavailable',
            message: `${field} ${url} ${r.error.message}`,
            retryable: r.error.retryable,
            context: { field, url, reason: r.error.reason },
          },
          r.error.retryable,
        );
      }
      if (r.reason === 'pixels')
        return new JobFailure({
          code: 'input_unavailable',
          message: `${field} ${url} ${r.message}`,
          retryable: false,
          context: { field, url, reason: 'pixels' },
        });
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
  else if (spec.avatar)
    avatar = await fetchImage(ctx, spec.avatar.imageUrl, spec.avatar.source === 'custom' ? 'avatar_id' : 'avatar_image_url', signal);
  const logo = spec.brandKit?.logoKey
    ? await storedImage(ctx, spec.brandKit.logoKey, 'brand_kit_id')
    : spec.brandKit?.logoUrl
      ? await fetchImage(ctx, spec.brandKit.logoUrl, 'brand_kit_id', signal)
      : undefined;
  return { products, avatar, logo };
}

const layoutOf = (spec: SlideshowSpec): SlideLayout =>
  spec.reference && FULL_BLEED_TEMPLATES.has(spec.reference.templateSlug) ? 'full-bleed' : 'card';

/** The words of a slide as its text item shows them: the headline, then the body on a new line. */
export const slideText = (copy: SlideCopy, i: number) =>
  [copy.slides[i].heading, copy.slides[i].body]
    .map((t) => t.trim())
    .filter(Boolean)
    .join('\n');

function checkCopy(copy: SlideCopy, count: number): SlideCopy {
  const slides = copy.slides?.filter((x) => x && typeof x.heading === 'string');
  if (!slides || slides.length !== count || slides.some((x) => !x.heading.trim())) {
    throw new JobFailure(
      {
        code: 'writer_failed',
        message: `The copy writer returned ${slides?.length ?? 0} usable slides, not ${count}`,
        retryable: true,
        context: {},
      },
      true,
    );
  }
  return { ...copy, slides: slides.map((x) => ({ role: x.role, heading: x.heading.slice(0, 200), body: (x.body ?? '').slice(0, 1000) })) };
}

/** The headline and body of each slide, or nulls without overlays. */
const partsOf = (spec: SlideshowSpec, copy: SlideCopy) =>
  copy.slides.map((x) => (spec.generateTextOverlays ? { heading: x.heading.trim(), body: x.body.trim() } : null));

/**
 * How each slide's words are set (none without overlays): its headline in big bold type (the
 * brand kit's first font, else SLIDE_FONT) over its body in a text face (the kit's second font,
 * else SLIDE_BODY_FONT), stacked and centred in the slide's hero zone (below the numeral on
 * body slides) when it shows no picture, else in the text zone above the picture; the hook's
 * headline larger. Colours readable on the slide (white with a black outline over a full-bleed
 * picture); no outline on the slides' own quiet backgrounds, whose every tint keeps the text's
 * contrast.
 */
export function slideTextLayouts(
  parts: ({ heading: string; body: string } | null)[],
  spec: SlideshowSpec,
  palette: SlidePalette,
  pictures: boolean,
): Promise<SlideTextLayout[][]> {
  const frame = { width: spec.width, height: spec.height };
  const g = slideGeometry(spec.width, spec.height);
  const fullBleed = layoutOf(spec) === 'full-bleed' && pictures;
  const { color, stroke } = fullBleed ? { color: '#FFFFFF', stroke: '#000000' } : overlayTextColours(palette.background);
  const band = (i: number) => (pictures ? g.textZone : numbered(i, parts.length) ? numberedZone(g) : g.heroZone);
  const common = { ...TEXT_DEFAULTS, color, stroke_color: stroke, stroke_width: pictures ? Math.max(2, Math.round(g.unit / 360)) : 0 };
  const fonts = spec.brandKit?.fonts ?? [];
  const heading = { ...common, font_family: fonts[0] ?? SLIDE_FONT, font_weight: 700 };
  const body = { ...common, font_family: fonts[1] ?? fonts[0] ?? SLIDE_BODY_FONT, font_weight: fonts.length ? 700 : 400 };
  // Sizes at 1080 wide: the hook's headline up to 160 px, the others' 128; bodies up to 64 (on a
  // picture's text zone, 96, 80 and 48); a fifth larger on a 9:16 slide's tall hero zone.
  const tall = !pictures && spec.height / spec.width >= 1.6 ? 1.2 : 1;
  const px = (v: number) => (g.unit * v * tall) / 1080;
  return Promise.all(
    parts.map((p, i) =>
      p
        ? stackSlideText(p, {
            frame,
            band: band(i),
            headingMax: px(pictures ? (i === 0 ? 96 : 80) : i === 0 ? 160 : 128),
            bodyMax: px(pictures ? 48 : 64),
            minSize: px(28),
            heading,
            body,
          })
        : [],
    ),
  );
}

/**
 * Adds the slides to the project: one image item per slide (SLIDE_SECONDS each) on a new video
 * track and, with texts, one text item per slide on a new text track, set as `layouts` says.
 */
function addSlides(tl: Timeline, slides: { mediaId: string; layouts: SlideTextLayout[] }[]): void {
  const video = addTrack(tl, 'video');
  video.name = 'Slides';
  const layer = mediaLayer(tl, video, true);
  const slideItems = slides.map((sl, i) =>
    baseItem({
      item_id: newItemId(tl, 'image'),
      track_id: video.track_id,
      type: 'image',
      media_id: sl.mediaId,
      from_seconds: t3(i * SLIDE_SECONDS),
      duration_seconds: SLIDE_SECONDS,
      fit: 'cover',
      layer,
    }),
  );
  // Each slide slides in over the one before (a carousel's swipe).
  addSceneTransitions(slideItems, ['slide']);
  tl.items.push(...slideItems);
  if (!slides.some((sl) => sl.layouts.length)) return;
  const texts = addTrack(tl, 'text');
  texts.name = 'Slide text';
  const textLayer = frontLayer(tl);
  slides.forEach(({ layouts }, i) => {
    for (const layout of layouts)
      tl.items.push(
        baseItem({
          item_id: newItemId(tl, 'text'),
          track_id: texts.track_id,
          type: 'text',
          from_seconds: t3(i * SLIDE_SECONDS),
          duration_seconds: SLIDE_SECONDS,
          fit: 'contain',
          text: layout.text,
          style: layout.style,
          transform: layout.transform,
          // The words fade in as their slide arrives.
          animation: { enter: { type: 'fade', duration_seconds: 0.5 }, exit: null },
          layer: textLayer,
        }),
      );
  });
}

/** What each stage makes; each is stored where the slideshow keeps it (copy, slideshow_slides, project_version; the video in `state`). */
interface SlideshowOutputs {
  copy: SlideCopy;
  /** The slides' media ids, by index. */
  slides: string[];
  /** The project version the slides were added in. */
  project: number;
  /** The carousel MP4, stored (the runner keeps this output in `state`): the slideshow completes with it. */
  video: StoredVideo;
}

/** What the stages of one attempt work with. */
interface Attempt {
  ctx: AppContext;
  s: SlideshowRow;
  workDir: string;
  /** No attempt follows this one (a provider job it leaves unfinished is canceled). */
  lastAttempt: boolean;
  /** The slides' palette (the brand's colours, else the reference's: read once, by the first stage that needs it). */
  palette(signal: AbortSignal): Promise<SlidePalette>;
}

type Stage = StageContext<SlideshowRow>;

/**
 * The stages in order, each spanning `weight` points of the whole progress: copy 0–10 (reported
 * at 1 when it starts), slides 10–70, project 70–75 (at 72 when it starts), video 75–99.
 */
function slideshowStages(a: Attempt): Stages<SlideshowRow, SlideshowOutputs> {
  const count = a.s.spec.slideCount;
  return [
    { name: 'copy', weight: 10, startAt: 0.1, stored: (_ctx, s) => s.copy ?? undefined, run: (st) => writeCopy(a, st) },
    {
      name: 'slides',
      weight: 60,
      // Those an earlier attempt recorded are kept; the stage is done when every slide is.
      stored: async (ctx, s) => {
        const recorded = await recordedSlides(ctx, s.id);
        return recorded.size >= count ? Array.from({ length: count }, (_, i) => recorded.get(i)!) : undefined;
      },
      run: (st, done) => renderSlides(a, st, done.copy),
    },
    {
      name: 'project',
      weight: 5,
      startAt: 0.4,
      stored: (_ctx, s) => s.projectVersion ?? undefined,
      run: (st, done) => fillSlides(a, st, done),
    },
    { name: 'video', weight: 24, run: (st) => renderCarousel(a, st) },
  ];
}

/** The words of every slide's text item, or nulls without overlays. */
const textsOf = (spec: SlideshowSpec, copy: SlideCopy) =>
  Array.from({ length: spec.slideCount }, (_, i) => (spec.generateTextOverlays ? slideText(copy, i) : null));

export async function runSlideshow(ctx: AppContext, job: RunningJob<SlideshowJobData>, tools: JobTools): Promise<void> {
  const s = await startSlideshow(ctx, job.data.slideshowId);
  if (!s) return; // already completed or failed: a repeated delivery has nothing to do
  tools.annotate({ credits_refunded: s.credits });
  const workDir = await jobFolder(ctx.config.dataDir, `slideshow-${s.id}`);
  let palette: Promise<SlidePalette> | undefined;
  const readPalette = async (signal: AbortSignal) => {
    const refColors = await referenceColors(ctx, s.orgId, s.spec.reference?.mediaIds ?? [], workDir, signal);
    return slidePalette({ brandColors: s.spec.brandKit?.colors, referenceColors: refColors, prompt: s.spec.prompt });
  };
  try {
    const stages = slideshowStages({
      ctx,
      s,
      workDir,
      lastAttempt: job.lastAttempt,
      palette: (signal) => (palette ??= readPalette(signal)),
    });
    // Canceled while it runs: noticed within a second, its engines stopped (src/kernel/cancelable.ts).
    await runCancelable(ctx, slideshowResource, s.id, tools, async (tools) => {
      const { outputs, timings } = await runStages(ctx, slideshowResource, s, stages, tools);
      // Milliseconds each stage took, on the attempt that ran it.
      const took = Object.fromEntries(Object.entries(timings).map(([stage, seconds]) => [stage, Math.round(seconds * 1000)]));
      ctx.log.info({ slideshow: s.id, attempt: job.attempt, stage_ms: took }, 'slideshow made');
      if (!(await completeSlideshow(ctx, s, outputs.video)))
        await discardIfCanceled(ctx, slideshowResource, s.id, [outputs.video.storageKey]);
    });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** The writer turns prompt + product_context into the slides' copy; the first copy stored wins (a retry reuses its words). */
async function writeCopy({ ctx, s }: Attempt, st: Stage): Promise<SlideCopy> {
  const { spec } = s;
  st.madeBy('write');
  const written = await engineFor('write', ctx).writeSlides(
    { prompt: spec.prompt, title: spec.title, productContext: spec.productContext, language: spec.language, slideCount: spec.slideCount },
    st.signal,
  );
  return saveCopy(ctx, s.id, checkCopy(written, spec.slideCount));
}

/** Where a slide's picture came from (state `slidePictures`, by index): the image model's record, or why it was drawn here. */
export type SlidePicture = PictureRecord | PictureFallback;

/**
 * The slide's picture from the image model SLIDESHOW_IMAGE_MODEL, when one is configured: an edit
 * of the slide's product image (the model's edit variant), else a picture from the slide's copy
 * (its text variant); none, and why, when no engine here makes that variant (the slide is drawn
 * around the product as without a model). The provider job is kept in `jobs` before polling;
 * where the picture came from is kept in `pictures` before the slide is recorded.
 */
async function slidePicture(
  a: Attempt,
  st: Stage,
  i: number,
  product: Buffer | undefined,
  copy: SlideCopy,
  items: { jobs: ItemState<ProviderJobRef>; pictures: ItemState<SlidePicture> },
): Promise<Buffer | undefined> {
  const { ctx, s } = a;
  const { spec } = s;
  const slug = ctx.config.slideshowImageModel;
  const model = slug ? findAiModel(slug) : undefined;
  if (!slug || !model) return undefined;
  const chosen = choosePicture(ctx, slug, model, Boolean(product));
  if ('fallback' in chosen) {
    await items.pictures.set(i, chosen.fallback);
    return undefined;
  }
  st.madeBy('image', chosen.engine.use);
  const fullBleed = layoutOf(spec) === 'full-bleed';
  const slot = fullBleed ? { w: spec.width, h: spec.height } : slideGeometry(spec.width, spec.height).productSlot;
  const made = await makePicture(
    chosen.engine,
    slug,
    {
      variant: chosen.variant,
      key: `slideshow:${s.id}:slide:${i}`,
      prompt: slidePrompt(spec, copy, i, Boolean(product)),
      aspectRatio: fullBleed ? spec.aspectRatio : frameFor(slot.w, slot.h),
      width: slot.w,
      height: slot.h,
      image: product,
      brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors } : undefined,
      maxInputPixels: ctx.config.mediaMaxPixels,
    },
    itemJob(items.jobs, i, (err) => a.lastAttempt || !describeFailure(err).retry),
    { workDir: path.join(a.workDir, `slide-${i}`), signal: st.signal },
  );
  await items.pictures.set(i, made.record);
  return made.bytes;
}

/** The image model's prompt for slide `i`: its copy, the slideshow's subject, and no words in the picture (the slide's text is an editor item). */
function slidePrompt(spec: SlideshowSpec, copy: SlideCopy, i: number, edit: boolean): string {
  const { heading, body } = copy.slides[i];
  return [
    edit
      ? 'Place the product of the input image, unchanged, in a scene that illustrates this slide of a social media carousel:'
      : 'A picture that illustrates this slide of a social media carousel:',
    [heading, body]
      .map((t) => t.trim())
      .filter(Boolean)
      .join(' — '),
    `The carousel: ${spec.prompt.trim()}`,
    spec.productContext?.trim() ? `The product: ${spec.productContext.trim()}` : '',
    'No text, lettering, captions, logos or watermarks in the image.',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** Renders and records every slide an earlier attempt did not (stored, then recorded one by one). */
async function renderSlides(a: Attempt, st: Stage, copy: SlideCopy): Promise<string[]> {
  const { ctx, s } = a;
  const { spec } = s;
  const count = spec.slideCount;
  const recorded = await recordedSlides(ctx, s.id);
  const palette = await a.palette(st.signal);
  const inputs = await gatherInputs(ctx, s, st.signal);
  const texts = textsOf(spec, copy);
  const items = {
    jobs: itemState<ProviderJobRef>(ctx, slideshowResource, s, 'slideJobs'),
    pictures: itemState<SlidePicture>(ctx, slideshowResource, s, 'slidePictures'),
  };
  st.madeBy('slide');
  for (let i = 0; i < count; i++) {
    if (recorded.has(i)) continue;
    st.report(recorded.size / count);
    const productIndex = inputs.products.length ? i % inputs.products.length : -1;
    const product = productIndex >= 0 ? inputs.products[productIndex] : undefined;
    const picture = await slidePicture(a, st, i, product, copy, items);
    const png = await engineFor('slide', ctx)
      .renderSlide({
        width: spec.width,
        height: spec.height,
        index: i,
        count,
        layout: layoutOf(spec),
        palette,
        product,
        picture,
        avatar: inputs.avatar,
        logo: inputs.logo,
        maxInputPixels: ctx.config.mediaMaxPixels,
        seed: `${s.id}`,
      })
      .catch((err: unknown) => {
        throw slideInputFailure(err, spec, productIndex);
      });
    const key = slideshowSlideKey(s.orgId, s.id, i);
    const stored = await ctx.storage.put(key, png, 'image/png');
    recorded.set(
      i,
      await recordSlide(ctx, s, { index: i, storageKey: key, bytes: stored.bytes, width: spec.width, height: spec.height, text: texts[i] }),
    );
  }
  return Array.from({ length: count }, (_, i) => recorded.get(i)!);
}

/** An input the slide renderer could not use, as the job's failure naming the request field it came from. */
function slideInputFailure(err: unknown, spec: SlideshowSpec, productIndex: number): unknown {
  if (!(err instanceof SlideInputError)) return err;
  if (err.input === 'picture')
    return new JobFailure({
      code: 'provider_error',
      message: `The image model's picture ${err.message}`.slice(0, 1900),
      retryable: false,
      context: { variable: 'SLIDESHOW_IMAGE_MODEL' },
    });
  // Which request field the image came from.
  const field =
    err.input === 'product'
      ? `product_image_urls[${productIndex}]`
      : err.input === 'logo'
        ? 'brand_kit_id'
        : spec.avatar?.source === 'url'
          ? 'avatar_image_url'
          : 'avatar_id';
  return new JobFailure({
    code: 'input_unavailable',
    message: `${field}: the ${err.input} image ${err.message}`.slice(0, 1900),
    retryable: false,
    context: { field },
  });
}

/** The editor project, filled once with the slides (and their texts). */
async function fillSlides(a: Attempt, st: Stage, done: Pick<SlideshowOutputs, 'copy' | 'slides'>): Promise<number> {
  const { spec } = a.s;
  const palette = await a.palette(st.signal);
  const music = await slideshowMusic(a, st);
  // The slides show a picture when the request gives product images or an image model makes them.
  const pictures = spec.productImageUrls.length > 0 || Boolean(a.ctx.config.slideshowImageModel);
  const layouts = await slideTextLayouts(partsOf(spec, done.copy), spec, palette, pictures);
  return fillProject(a.ctx, a.s, (tl) => {
    addSlides(
      tl,
      done.slides.map((mediaId, i) => ({ mediaId, layouts: layouts[i] })),
    );
    addMusic(tl, music);
  });
}

/** The slideshow's music: a track of the music library in the mood of the prompt, as long as the slides. */
function slideshowMusic({ ctx, s, workDir }: Attempt, st: Stage): Promise<StoredMusicBed> {
  const mediaId = stableUuid(`slideshow:${s.id}:music`);
  return storeMusicBed(ctx, {
    orgId: s.orgId,
    mediaId,
    key: editorMediaKey(s.orgId, mediaId, 'wav'),
    title: `Music: ${s.spec.title}`,
    workDir,
    bed: {
      seconds: s.spec.slideCount * SLIDE_SECONDS,
      prompt: `${s.spec.prompt} ${s.spec.productContext ?? ''}`,
      words: [],
      signal: st.signal,
    },
  });
}

/** The music as an audio item (role music) on a track of its own, under the whole slideshow. */
function addMusic(tl: Timeline, music: StoredMusicBed): void {
  const track = addTrack(tl, 'audio');
  track.name = 'Music';
  tl.items.push(
    baseItem({
      item_id: newItemId(tl, 'audio'),
      track_id: track.track_id,
      type: 'audio',
      media_id: music.mediaId,
      from_seconds: 0,
      duration_seconds: t3(music.durationMs / 1000),
      audio_role: 'music',
    }),
  );
}

/** The carousel MP4, rendered from the project as it now is, and stored. */
async function renderCarousel({ ctx, s, workDir }: Attempt, st: Stage): Promise<StoredVideo> {
  const project = await loadProject(ctx, s);
  const tl = project.timeline as Timeline;
  const { files, lost } = await copyTimelineMedia(ctx, s.orgId, tl, workDir);
  if (lost.length) {
    throw new JobFailure({
      code: 'input_unavailable',
      message: `Media ${lost.join(', ')} of the project no longer exist`,
      retryable: false,
      context: { video_id: s.videoId },
    });
  }
  const out = path.join(workDir, 'carousel.mp4');
  st.madeBy('render');
  await engineFor('render', ctx).render(
    { width: project.width, height: project.height, fps: project.fps, tracks: tl.tracks, items: tl.items, media: files },
    workDir,
    out,
    {
      quality: 'standard',
      signal: st.signal,
      onProgress: st.report,
    },
  );
  const probed = await probe({ path: out, type: 'video/mp4' }, { signal: st.signal });
  const key = slideshowVideoKey(s.orgId, s.id);
  const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
  return {
    storageKey: key,
    bytes: stored.bytes,
    width: project.width,
    height: project.height,
    durationSeconds: probed.duration_seconds ?? s.spec.slideCount * SLIDE_SECONDS,
    hasAudio: probed.has_audio,
    manifest: await slideshowManifest(project.width, project.height, tl, s.copy?.language ?? supportedWriterLanguage(s.spec.language)),
  };
}

/**
 * What the carousel shows, for the media quality checker: the slides' text items (boxes and times),
 * where each slide starts, and the language of the words (ISO 639-1; OCR reads them with its model).
 */
export async function slideshowManifest(width: number, height: number, tl: Timeline, language?: string): Promise<MediaManifest> {
  const video = new Set(tl.tracks.filter((tr) => tr.type === 'video').map((tr) => tr.track_id));
  const sceneItems = tl.items.filter((i) => i.type === 'image' && video.has(i.track_id));
  const manifest = await timelineManifest({ width, height, items: tl.items, sceneItems });
  return language && language !== 'en' ? { ...manifest, language } : manifest;
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  // The image model's failure (SLIDESHOW_IMAGE_MODEL): its code (content_rejected, timeout, ...) and retryability.
  if (err instanceof ProviderError) {
    return {
      detail: {
        code: err.code,
        message: `The image model failed: ${err.message}`.slice(0, 1900),
        retryable: err.retryable,
        context: err.status ? { status: err.status } : {},
      },
      retry: err.retryable,
    };
  }
  if (err instanceof WriterFailed) {
    return {
      detail: {
        code: 'writer_failed',
        message: `The copy could not be written: ${err.message}`.slice(0, 1900),
        retryable: err.retryable,
        context: err.status ? { status: err.status } : {},
      },
      retry: err.retryable,
    };
  }
  const message =
    err instanceof FfmpegError
      ? `Rendering failed: ${err.message.split('\n').slice(-3).join(' ')}`
      : `The slideshow failed: ${(err as Error)?.message ?? String(err)}`;
  return { detail: { code: 'render_failed', message: message.slice(0, 1900), retryable: true, context: {} }, retry: true };
}
