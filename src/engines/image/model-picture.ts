// A picture from an AI image model of the catalog for an item of a pipeline (a slideshow's slide,
// SLIDESHOW_IMAGE_MODEL; a faceless video's scene, FACELESS_IMAGE_MODEL), made the way a
// generation is: the engine the catalog rule names (../catalog-engine.ts engineOfModel: the
// hosted model when its provider's key is set, ComfyUI when it is configured for the model),
// asked through the registry (engineFor('image', …)) with a GenerationJob.
//   text variant   the model's first image variant without an image input: a picture from text;
//   edit variant   its first image variant with an image input: an edit of a given image (a
//                  slideshow's product image).
// No engine here makes the variant (neither key nor ComfyUI): `pictureEngine` says so with the
// configuration that would, and the pipeline draws the item with its local renderer instead.
// The hosted adapters fetch, sniff and bound the output (../hosted/hosted.ts storeOutput); the
// job's provider id is stored before polling through the caller's hooks (../resumable.ts).
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { components as CatalogSchema } from '../../../generated/catalog-data.d.ts';
import type { EngineUse } from '../engine-use.ts';
import { engineOfModel, type CatalogModel, type EngineChoice } from '../catalog-engine.ts';
import type { GenerateOptions, GenerationJob } from '../generation.ts';
import { nearestAspect } from '../hosted/hosted.ts';
import { engineFor, type EngineSetup } from '../index.ts';
import { runRecordedJob, type JobStore } from '../resumable.ts';

type Catalog = CatalogSchema['schemas'];
/** An AI model of the catalog (spec/catalog.yaml ai_models). */
export type CatalogAiModel = Catalog['AiModel'];
export type CatalogImageVariant = Catalog['ImageVariant'];

/** The model's variants that make images: from text, and from an image. */
export interface ImageVariants {
  text?: CatalogImageVariant;
  edit?: CatalogImageVariant;
}

const takesImage = (v: { input_mode: readonly string[] }) => v.input_mode.includes('image');

/** The model's text variant (first image variant without image input) and edit variant (first with one). */
export function imageVariants(model: CatalogAiModel): ImageVariants {
  const images = model.variants.filter((v): v is CatalogImageVariant => v.output === 'image');
  return { text: images.find((v) => !takesImage(v)), edit: images.find(takesImage) };
}

/**
 * Why `slug` cannot be the image model of a pipeline (the variable that names it), or undefined
 * when it can: it must be an AI model of the catalog with an image variant.
 */
export function imageModelProblem(variable: string, slug: string, model: CatalogAiModel | undefined): string | undefined {
  if (!model) return `${variable}=${slug} names no AI model of the catalog (GET /models lists their slugs)`;
  const { text, edit } = imageVariants(model);
  if (!text && !edit) return `${variable}=${slug} makes no images (none of its variants has output image)`;
  return undefined;
}

/** Who makes a variant here: an engine (its record), or none and the configuration that would. */
export type PictureEngine = { made: true; use: EngineUse; setup: EngineSetup } | { made: false; requires: string | null };

/** The engine that makes `variant` under this configuration (the catalog rule of generations), or none. */
export function pictureEngine(setup: EngineSetup, variant: CatalogImageVariant): PictureEngine {
  return modelEngine(setup, { output: 'image', model: variant.model, provider: variant.provider, input_mode: variant.input_mode });
}

/**
 * The engine that makes a catalog entry (an image or video variant of an AI model) for a
 * pipeline's item under this configuration: the catalog rule of generations (engineOfModel), with
 * the local previews left out (the pipeline's own renderer makes the item instead), or none and
 * the configuration that would.
 */
export function modelEngine(setup: EngineSetup, entry: CatalogModel): PictureEngine {
  const choice: EngineChoice = { provider: { ...setup.config.provider, localFallback: 'preview' }, comfyui: setup.config.comfyui };
  const label = engineOfModel(choice, entry);
  if (label.kind === 'self_hosted')
    return {
      made: true,
      use: { kind: 'self_hosted', provider: 'comfyui', model: entry.model },
      setup: { ...setup, modelName: entry.model },
    };
  if (label.kind === 'hosted' && setup.fetcher)
    return {
      made: true,
      use: { kind: 'hosted', provider: label.provider!, model: label.model },
      setup: { ...setup, modelName: undefined },
    };
  return { made: false, requires: label.requires ?? (label.kind === 'hosted' ? 'a fetcher for its outputs' : null) };
}

/**
 * What makes an item's picture with `model`: its edit variant for an item with an image to edit
 * (`withImage`), else its text variant, and the engine that makes that variant here; or, when
 * the model has no such variant or no engine here makes it, the record of why the item is drawn
 * by the pipeline's local renderer.
 */
export function choosePicture(
  setup: EngineSetup,
  modelSlug: string,
  model: CatalogAiModel,
  withImage: boolean,
): { variant: CatalogImageVariant; engine: Extract<PictureEngine, { made: true }> } | { fallback: PictureFallback } {
  const variant = withImage ? imageVariants(model).edit : imageVariants(model).text;
  if (!variant)
    return {
      fallback: { source: 'local', modelSlug, variantId: null, reason: withImage ? 'no_edit_variant' : 'no_text_variant', requires: null },
    };
  const engine = pictureEngine(setup, variant);
  if (!engine.made)
    return { fallback: { source: 'local', modelSlug, variantId: variant.id, reason: 'engine_unavailable', requires: engine.requires } };
  return { variant, engine };
}

/** An item the configured model did not make, drawn by the pipeline's local renderer, and why. */
export interface PictureFallback {
  source: 'local';
  modelSlug: string;
  variantId: string | null;
  /** The model has no variant for the item (none from text; none that edits its image), or no engine here makes it. */
  reason: 'no_text_variant' | 'no_edit_variant' | 'engine_unavailable';
  /** The configuration that would make it (the provider's key), when known. */
  requires: string | null;
}

export interface PictureRequest {
  variant: CatalogImageVariant;
  /** A stable name of the item (its seed): a retry asks for the same picture. */
  key: string;
  prompt: string;
  /** W:H the model is asked for, and the pixel size it stands for. */
  aspectRatio: string;
  width: number;
  height: number;
  /** The image an edit variant edits (PNG, JPEG or WebP bytes). */
  image?: Buffer;
  /** The brand's name and colours, appended to the prompt as guidance by the hosted adapters. */
  brand?: { name: string; colors: string[] };
  maxInputPixels?: number;
}

/** The picture and the record of the call (for reconciling provider bills). */
export interface ModelPicture {
  bytes: Buffer;
  contentType: string;
  width: number;
  height: number;
  record: PictureRecord;
}

/** Where an item's picture came from: the catalog model and variant, who ran it, its job id and the seconds it took. */
export interface PictureRecord {
  source: 'model';
  modelSlug: string;
  variantId: string;
  kind: EngineUse['kind'];
  provider: string;
  model: string | null;
  providerJobId: string | null;
  seconds: number;
}

/** What a model is asked to make for an item (a picture or a clip): the fields both share. */
export interface ModelItemRequest {
  variant: { id: string; label: string; provider?: CatalogImageVariant['provider'] };
  /** A stable name of the item (its seed): a retry asks for the same output. */
  key: string;
  prompt: string;
  aspectRatio: string;
  width: number;
  height: number;
  brand?: { name: string; colors: string[] };
  maxInputPixels?: number;
}

/**
 * Runs a catalog model for an item on the engine `engine` names (capability `output`), resuming
 * the provider job `jobs` holds (stored before polling), and returns what it made with the
 * common part of its record: who ran it, the provider's job id and the seconds it took.
 */
export async function runModelItem(
  engine: Extract<PictureEngine, { made: true }>,
  modelSlug: string,
  req: ModelItemRequest,
  job: Pick<GenerationJob, 'output' | 'referenceImages'> & Partial<GenerationJob>,
  jobs: JobStore,
  opts: Pick<GenerateOptions, 'workDir' | 'onProgress'> & { signal: AbortSignal },
) {
  const { variant } = req;
  const request: GenerationJob = {
    generationId: createHash('sha256').update(req.key).digest('hex').slice(0, 32),
    type: 'ai_model',
    prompt: req.prompt,
    title: variant.label,
    modelSlug,
    variantId: variant.id,
    aspectRatio: req.aspectRatio,
    width: req.width,
    height: req.height,
    brandName: req.brand?.name,
    brandColors: req.brand?.colors,
    maxInputPixels: req.maxInputPixels,
    generateAudio: false,
    providerModel: engine.use.kind === 'hosted' ? variant.provider : undefined,
    ...job,
  };
  const t0 = performance.now();
  await fs.mkdir(opts.workDir, { recursive: true });
  const { result, jobId } = await runRecordedJob(
    engine.setup,
    engineFor(job.output, { ...engine.setup, model: request.providerModel }),
    request,
    { ...opts, jobs },
  );
  const ran = {
    modelSlug,
    variantId: variant.id,
    kind: engine.use.kind,
    provider: engine.use.provider,
    model: engine.use.model,
    providerJobId: jobId,
    seconds: Math.round(performance.now() - t0) / 1000,
  };
  return { made: result, ran };
}

/** Makes the picture with the engine `engine` names, resuming the provider job `jobs` holds (stored before polling). */
export async function makePicture(
  engine: Extract<PictureEngine, { made: true }>,
  modelSlug: string,
  req: PictureRequest,
  jobs: JobStore,
  opts: Pick<GenerateOptions, 'workDir' | 'onProgress'> & { signal: AbortSignal },
): Promise<ModelPicture> {
  const { made, ran } = await runModelItem(
    engine,
    modelSlug,
    req,
    { output: 'image', imageFormat: 'png', referenceImages: req.image && takesImage(req.variant) ? [req.image] : [] },
    jobs,
    opts,
  );
  const bytes = await fs.readFile(made.path);
  await fs.rm(opts.workDir, { recursive: true, force: true });
  return {
    bytes,
    contentType: made.contentType,
    width: made.width,
    height: made.height,
    record: { source: 'model', ...ran },
  };
}

/** Frames image models commonly make (Flux, Gemini, GPT Image's nearest sizes). */
const COMMON_FRAMES = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '5:4', '4:5'];

/** The W:H among the frames image models commonly make that is nearest to width × height (a slide's picture slot). */
export const frameFor = (width: number, height: number): string => nearestAspect(`${width}:${height}`, COMMON_FRAMES);
