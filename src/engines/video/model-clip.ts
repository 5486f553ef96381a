// A clip from an AI video model of the catalog for an item of a pipeline (a faceless video's
// scene, FACELESS_VIDEO_MODEL), made the way a generation is: the engine the catalog rule names
// (../catalog-engine.ts engineOfModel, through ../image/model-picture.ts modelEngine: the hosted
// model when its provider's key is set, ComfyUI when it is configured for the model), asked
// through the registry (engineFor('video', …)) with a GenerationJob.
//   image variant  the model's first video variant that takes an image (and no video or audio):
//                  the item's still animated (image to video);
//   text variant   its first video variant from text alone, for a model without an image one.
// The clip is asked for the duration option nearest above the item's length (the longest when
// none is), silent. No engine here makes the variant: `chooseClip` says so with the configuration
// that would, and the pipeline keeps the item's still. The hosted adapters fetch, sniff and bound
// the output (../hosted/hosted.ts storeOutput); the provider job id is stored before polling
// through the caller's JobStore (../resumable.ts), so a resumed attempt polls instead of paying again.
import type { components as CatalogSchema } from '../../../generated/catalog-data.d.ts';
import type { GenerateOptions } from '../generation.ts';
import { type CatalogAiModel, modelEngine, type PictureEngine, type PictureRecord, runModelItem } from '../image/model-picture.ts';
import type { JobStore } from '../resumable.ts';

export type CatalogVideoVariant = CatalogSchema['schemas']['VideoVariant'];

const takes = (v: { input_mode: readonly string[] }, mode: string) => v.input_mode.includes(mode);

/** The model's image-to-video variant (an image and text in, no video or audio) and its text-to-video variant. */
export function videoVariants(model: CatalogAiModel): { image?: CatalogVideoVariant; text?: CatalogVideoVariant } {
  const videos = model.variants.filter((v): v is CatalogVideoVariant => v.output === 'video' && !takes(v, 'video') && !takes(v, 'audio'));
  return { image: videos.find((v) => takes(v, 'image')), text: videos.find((v) => !takes(v, 'image')) };
}

/**
 * Why `slug` cannot be the video model of a pipeline (the variable that names it), or undefined
 * when it can: it must be an AI model of the catalog with a video variant from an image or from text.
 */
export function videoModelProblem(variable: string, slug: string, model: CatalogAiModel | undefined): string | undefined {
  if (!model) return `${variable}=${slug} names no AI model of the catalog (GET /models lists their slugs)`;
  const { image, text } = videoVariants(model);
  if (!image && !text) return `${variable}=${slug} makes no videos from an image or from text (e.g. kling-video, veo-3)`;
  return undefined;
}

/** An item the configured video model did not make (its still is kept), and why. */
export interface ClipFallback {
  modelSlug: string;
  variantId: string | null;
  reason: 'no_video_variant' | 'engine_unavailable';
  /** The configuration that would make it (the provider's key), when known. */
  requires: string | null;
}

/** What makes an item's clip with `model`: its image-to-video variant (else its text-to-video one) and the engine that makes it here; or why none does. */
export function chooseClip(
  setup: Parameters<typeof modelEngine>[0],
  modelSlug: string,
  model: CatalogAiModel,
): { variant: CatalogVideoVariant; engine: Extract<PictureEngine, { made: true }> } | { fallback: ClipFallback } {
  const { image, text } = videoVariants(model);
  const variant = image ?? text;
  if (!variant) return { fallback: { modelSlug, variantId: null, reason: 'no_video_variant', requires: null } };
  const engine = modelEngine(setup, { output: 'video', model: variant.model, provider: variant.provider, input_mode: variant.input_mode });
  if (!engine.made) return { fallback: { modelSlug, variantId: variant.id, reason: 'engine_unavailable', requires: engine.requires } };
  return { variant, engine };
}

/** The duration to ask of the variant for an item of `seconds`: its shortest option that lasts as long, else its longest. */
export function clipDuration(variant: CatalogVideoVariant, seconds: number): number {
  const options = [...variant.duration_options].sort((a, b) => a - b);
  return options.find((d) => d >= seconds - 0.05) ?? options.at(-1) ?? variant.default_duration;
}

export interface ClipRequest {
  variant: CatalogVideoVariant;
  /** A stable name of the item (its seed): a retry asks for the same clip. */
  key: string;
  prompt: string;
  aspectRatio: string;
  width: number;
  height: number;
  /** How long the item lasts (the clip asked for covers it when the model can make that long a clip). */
  seconds: number;
  /** The first frame (an image-to-video variant): PNG, JPEG or WebP bytes. */
  image?: Buffer;
  brand?: { name: string; colors: string[] };
  maxInputPixels?: number;
}

/** The model's clip (a checked MP4 in the work folder) and the record of the call (for reconciling provider bills). */
export interface ModelClip {
  path: string;
  width: number;
  height: number;
  durationSeconds: number | undefined;
  record: ClipRecord;
}

/** Where an item's clip came from: the catalog model and variant, who ran it, its job id, the seconds asked and taken. */
export interface ClipRecord extends Omit<PictureRecord, 'source'> {
  source: 'model_video';
  durationSeconds: number;
}

/** Makes the clip with the engine `engine` names into `opts.workDir`, resuming the provider job `jobs` holds (stored before polling). */
export async function makeClip(
  engine: Extract<PictureEngine, { made: true }>,
  modelSlug: string,
  req: ClipRequest,
  jobs: JobStore,
  opts: Pick<GenerateOptions, 'workDir' | 'onProgress'> & { signal: AbortSignal },
): Promise<ModelClip> {
  const durationSeconds = clipDuration(req.variant, req.seconds);
  const { made, ran } = await runModelItem(
    engine,
    modelSlug,
    req,
    { output: 'video', durationSeconds, referenceImages: req.image && takes(req.variant, 'image') ? [req.image] : [] },
    jobs,
    opts,
  );
  return {
    path: made.path,
    width: made.width,
    height: made.height,
    durationSeconds: made.durationSeconds,
    record: { source: 'model_video', ...ran, durationSeconds },
  };
}
