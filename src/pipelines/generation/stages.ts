// The generation's stage (the jobs in job.ts: one queue for images, one for video renders, the same work): gather the
// inputs (reference URLs through the guarded client, media from storage; the brand kit's logo
// and the avatar's portrait; a custom reference's analysed colours and subject), run the provider (the
// local renderer, or the hosted model the catalog names for an AI model variant; its job id is
// stored on the generation before polling, so a retry resumes it rather than paying twice), store the output and complete the generation. Failures become the generation's error
// with a refund once no retry follows (defineJob). At-least-once delivery: every step can run
// twice (see rows.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import sharp from 'sharp';
import type { AppContext } from '../../context.ts';
import { media, referenceInspirations } from '../../db/schema/index.ts';
import type { MediaFile } from '../../media/ffmpeg.ts';
import { checkMediaBytes, fetchCheckedMedia, fetchMediaBytes, type MediaRefusal } from '../../media/fetch-media.ts';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { engineFor, generationCapability } from '../../engines/index.ts';
import { readJobRef, runProviderJob } from '../../engines/resumable.ts';
import { comfyuiMakes } from '../../engines/selfhosted/comfyui.ts';
import { ProviderError, type GenerateOptions, type GenerationJob, type Provider, type ProviderResult } from '../../engines/generation.ts';
import { isNotFound } from '../../storage/index.ts';
import { findAiModel, findTemplate, PREVIEWS_DIR_URL, type RawAiVariant } from '../../services/catalog/catalog-data.ts';
import { catalogPresenter, isPresenter, type CatalogPresenter } from '../../services/catalog/presenters.ts';
import { generationOutputKey } from '../../storage/keys.ts';
import type { GenerationSpec, MediaInput } from './request.ts';
import { referenceStyle } from '../../services/references/analysis.ts';
import { referenceColors } from '../../services/references/reference-colors.ts';
import {
  completeGeneration,
  generationResource,
  providerJobIdOf,
  saveProviderJob,
  startAttempt,
  type GenerationRow,
  type StoredOutput,
} from './rows.ts';
import type { VoiceOutput } from './narration.ts';
import { runStages, type StageContext, type Stages } from '../../kernel/stages.ts';
import { JobFailure, type FailureDetail, type JobTools, type RunningJob } from '../../jobs/define-job.ts';

export interface GenerationJobData {
  generationId: string;
}

const REFERENCE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4' };

async function loadMedia(ctx: AppContext, orgId: string, ids: string[]) {
  if (!ids.length) return new Map<string, typeof media.$inferSelect>();
  const rows = await ctx.db
    .select()
    .from(media)
    .where(and(eq(media.orgId, orgId), inArray(media.id, ids)));
  return new Map(rows.map((r) => [r.id, r]));
}

/** Where a generation's inputs come from: its media rows (by id), its job folder, its abort signal. */
interface InputSources {
  ctx: AppContext;
  rows: Map<string, typeof media.$inferSelect>;
  workDir: string;
  signal: AbortSignal | undefined;
}

export async function gatherInputs(
  ctx: AppContext,
  g: GenerationRow,
  workDir: string,
  signal: AbortSignal | undefined,
): Promise<Partial<GenerationJob>> {
  const spec = g.spec;
  const ids = [...spec.references, spec.sourceVideo, spec.motionVideo, spec.audio].flatMap((m) => (m?.mediaId ? [m.mediaId] : []));
  const src: InputSources = { ctx, rows: await loadMedia(ctx, g.orgId, ids), workDir, signal };
  const kit = spec.brandKit;
  const logo = await brandLogo(src, kit);
  const presenter = await catalogPresenterOf(spec.avatar);
  const avatarImage = presenter?.image ?? (await avatarPortrait(src, spec.avatar));
  const reference = spec.customReferenceInspirationId
    ? await customReferenceStyle(ctx, g.orgId, spec.customReferenceInspirationId, workDir, signal)
    : undefined;
  return {
    logo,
    avatarImage,
    presenter: presenter && { face: presenter.face, mouth: presenter.mouth, openings: presenter.openings },
    // The kit's colours come first; the reference's subject arranges the ad (unless a preset does).
    referenceColors: reference && !kit?.colors.length ? reference.colors : undefined,
    referenceSubject: reference?.subject,
    referenceImages: await Promise.all(spec.references.map((r, i) => referenceImage(src, r, `reference_image_urls[${i}]`))),
    sourceVideo: await toFile(src, spec.sourceVideo, 'source_video', 'source-video'),
    motionVideo: await toFile(src, spec.motionVideo, 'motion_video', 'motion-video'),
    audio: await toFile(src, spec.audio, 'audio', 'audio'),
  };
}

/** A URL the guarded client refused, or fetched bytes refused: input_unavailable, retried only when the fetch may succeed later. */
const fetchRefused = (input: MediaInput, field: string) => (r: MediaRefusal) =>
  new JobFailure(
    {
      code: 'input_unavailable',
      message: `${field} ${input.url} ${r.message}`,
      retryable: r.reason === 'fetch' && r.error.retryable,
      context: { field, url: input.url, reason: r.code },
    },
    r.reason === 'fetch' && r.error.retryable,
  );

/** The media row of an input given by id; gone since the charge: input_unavailable. */
function mediaRowOf(src: InputSources, mediaId: string, field: string): typeof media.$inferSelect {
  const row = src.rows.get(mediaId);
  if (!row)
    throw new JobFailure({
      code: 'input_unavailable',
      message: `Media ${mediaId} no longer exists`,
      retryable: false,
      context: { field },
    });
  return row;
}

/** An input's bytes: a stored media item, or fetched through the guarded client (at most maxBytes). */
async function bytesOf(src: InputSources, input: MediaInput, field: string, maxBytes: number): Promise<Buffer> {
  if (input.mediaId) return src.ctx.storage.readBuffer(mediaRowOf(src, input.mediaId, field).storageKey);
  return fetchMediaBytes(src.ctx.fetcher, input.url!, {
    maxBytes,
    timeoutMs: src.ctx.config.outboundFetchJobTimeoutMs,
    signal: src.signal,
    refuse: fetchRefused(input, field),
  });
}

/**
 * Reference images are decoded by sharp, which also reads SVG, TIFF, GIF …: only the three image
 * types the contract names get that far, whatever a URL serves.
 */
async function referenceImage(src: InputSources, input: MediaInput, field: string): Promise<Buffer> {
  const bytes = await bytesOf(src, input, field, 20 * 1024 * 1024);
  await checkMediaBytes(bytes, {
    types: REFERENCE_IMAGE_TYPES,
    refuse: (r) =>
      new JobFailure({
        code: 'input_unavailable',
        message: `${field} ${input.url ?? input.mediaId} is ${('mime' in r && r.mime) || 'not a recognised image'}; PNG, JPEG or WebP only`,
        retryable: false,
        context: { field },
      }),
  });
  return bytes;
}

/**
 * Every file input is a copy inside the job's folder with its sniffed type: a stored media item
 * (sniffed and checked at upload), or fetched bytes, sniffed and checked here like an upload.
 */
async function toFile(src: InputSources, input: MediaInput | undefined, field: string, name: string): Promise<MediaFile | undefined> {
  if (!input) return undefined;
  if (input.mediaId) {
    const row = mediaRowOf(src, input.mediaId, field);
    const file = path.join(src.workDir, `${name}${path.extname(row.storageKey)}`);
    await src.ctx.storage.copyToFile(row.storageKey, file);
    return { path: file, type: row.contentType };
  }
  const { inspected } = await fetchCheckedMedia(src.ctx.fetcher, input.url!, {
    maxBytes: 200 * 1024 * 1024,
    timeoutMs: src.ctx.config.outboundFetchJobTimeoutMs,
    signal: src.signal,
    inspect: { file: path.join(src.workDir, name), limits: DEFAULT_PIXEL_LIMITS },
    refuse: fetchRefused(input, field),
  });
  return { path: inspected.file, type: inspected.facts.contentType };
}

// Assets: the kit's logo and the avatar's portrait, read now (uploads from storage, checked
// when uploaded; older URL assets through the guarded client, checked like references).

/** An uploaded asset's image in storage; gone: input_unavailable. */
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

/** The brand kit's logo: uploaded (storage), or an older kit's logo URL; none without either. */
async function brandLogo(src: InputSources, kit: GenerationSpec['brandKit']): Promise<Buffer | undefined> {
  if (kit?.logoKey) return storedImage(src.ctx, kit.logoKey, 'brand_kit_id');
  if (kit?.logoUrl) return referenceImage(src, { url: kit.logoUrl }, 'brand_kit_id');
  return undefined;
}

/** A catalog avatar drawn by src/services/catalog/presenters.ts: its card, face and mouth boxes and the card with each mouth opening. */
async function catalogPresenterOf(avatar: GenerationSpec['avatar']): Promise<CatalogPresenter | undefined> {
  const catalog = avatar && !avatar.imageKey && (avatar.source === 'catalog' || !/^https?:\/\//i.test(avatar.imageUrl));
  return catalog && isPresenter(avatar.id) ? catalogPresenter(avatar.id) : undefined;
}

/** The avatar's portrait: uploaded (storage), a catalog avatar's preview (SVG, rasterised here), or an older avatar's URL. */
async function avatarPortrait(src: InputSources, avatar: GenerationSpec['avatar']): Promise<Buffer | undefined> {
  if (avatar?.imageKey) return storedImage(src.ctx, avatar.imageKey, 'avatar_id');
  if (avatar && (avatar.source === 'catalog' || !/^https?:\/\//i.test(avatar.imageUrl))) {
    // A catalog avatar: its portrait among our own preview files.
    const file = new URL(avatar.imageUrl, PREVIEWS_DIR_URL);
    if (!file.href.startsWith(PREVIEWS_DIR_URL.href))
      throw new JobFailure({
        code: 'input_unavailable',
        message: `avatar ${avatar.id} has no portrait`,
        retryable: false,
        context: { field: 'avatar_id' },
      });
    return sharp(await fs.readFile(file))
      .png()
      .toBuffer();
  }
  if (avatar?.imageUrl) return referenceImage(src, { url: avatar.imageUrl }, 'avatar_id');
  return undefined;
}

/**
 * What a custom reference gives the render: its analysed palette (most weight first) and subject
 * box (referenceStyle); a reference without an analysis: the colours of its first image. Gone
 * since the charge: nothing.
 */
async function customReferenceStyle(
  ctx: AppContext,
  orgId: string,
  id: string,
  workDir: string,
  signal: AbortSignal | undefined,
): Promise<{ colors: string[]; subject: GenerationJob['referenceSubject'] }> {
  const [ref] = await ctx.db
    .select({ mediaIds: referenceInspirations.mediaIds, analysis: referenceInspirations.analysis })
    .from(referenceInspirations)
    .where(and(eq(referenceInspirations.id, id), eq(referenceInspirations.orgId, orgId)));
  if (!ref) return { colors: [], subject: null };
  const style = referenceStyle({ analysis: ref.analysis });
  if (style) return { colors: style.palette.map((c) => c.hex), subject: style.subject };
  return { colors: await referenceColors(ctx, orgId, ref.mediaIds, workDir, signal), subject: null };
}

/** Position of a preset among its template's presets (-1 when the catalog no longer has it). */
function presetIndexOf(templateSlug: string | undefined, presetId: string | undefined): number | undefined {
  if (!templateSlug || !presetId) return undefined;
  return findTemplate(templateSlug)?.presets.findIndex((p) => p.id === presetId);
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  if (err instanceof ProviderError) {
    return {
      detail: { code: err.code, message: err.message, retryable: err.retryable, context: err.status ? { status: err.status } : {} },
      retry: err.retryable,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    detail: { code: 'render_failed', message: `Rendering failed: ${message.slice(0, 500)}`, retryable: true, context: {} },
    retry: true,
  };
}

/** The catalog variant of an AI model generation (read when the job runs): the hosted model it names and its inputs. */
function variantOf(g: GenerationRow): RawAiVariant | undefined {
  if (g.type !== 'ai_model' || !g.spec.modelSlug) return undefined;
  return findAiModel(g.spec.modelSlug)?.variants.find((v) => v.id === g.spec.variantId);
}

/**
 * The hosted model to ask the registry for: the one the generation was priced for when it was
 * queued (spec.engine). A preview is made by the local engines even if a key was set since; a
 * generation priced for a hosted model whose key is gone fails (refunded) rather than be made
 * locally at the hosted price. Generations queued before engines were recorded go by the
 * catalog as before.
 */
function engineModel(
  ctx: AppContext,
  g: GenerationRow,
  variant: RawAiVariant | undefined,
): { providerModel?: RawAiVariant['provider']; modelName?: string } {
  const label = g.spec.engine;
  if (!label) return { providerModel: variant?.provider, modelName: variant?.model };
  if (label.kind === 'local') return {};
  const model = variant?.provider;
  const configured =
    label.kind === 'self_hosted'
      ? variant && comfyuiMakes(ctx.config, variant.model, g.spec.output)
      : model && model.name === label.provider && ctx.config.provider[model.name]?.key;
  if (!configured) throw engineGone(label);
  // A hosted label keeps ComfyUI out (modelName unset); a self-hosted one names the model for it.
  return label.kind === 'self_hosted' ? { modelName: variant!.model } : { providerModel: model };
}

/** The engine a generation was priced for is not configured on this worker: it fails, refunded. */
export function engineGone(label: { provider: string | null; model: string | null }): ProviderError {
  return new ProviderError(
    `${label.provider} (${label.model}), which this generation was priced for, is not configured on this worker; it was not made and its credits are refunded`,
    { retryable: false, code: 'engine_unavailable' },
  );
}

/** The hosted job an earlier attempt stored, when it has the expected shape. */
const storedProviderJob = (g: GenerationRow) => readJobRef(g.providerJob);

/** The engine's request for a generation's spec and gathered inputs (no hosted model: the caller adds it). */
export function jobOf(ctx: AppContext, g: GenerationRow, inputs: Partial<GenerationJob>): GenerationJob {
  const spec = g.spec;
  return {
    generationId: g.id,
    type: g.type as GenerationJob['type'],
    output: spec.output,
    prompt: spec.prompt,
    copy: spec.copy,
    title: spec.title,
    templateSlug: spec.templateSlug,
    modelSlug: spec.modelSlug,
    variantId: spec.variantId,
    presetId: spec.presetId ?? null,
    qualityTier: spec.qualityTier,
    aspectRatio: spec.aspectRatio,
    width: spec.width,
    height: spec.height,
    durationSeconds: spec.durationSeconds,
    imageFormat: spec.imageFormat,
    brandColors: spec.brandKit?.colors,
    brandColorRoles: spec.brandKit?.colorRoles,
    brandName: spec.brandKit?.name,
    generateAudio: spec.generateAudio,
    avatarName: spec.avatar?.name,
    avatarImage: inputs.avatarImage,
    presenter: inputs.presenter,
    presetIndex: presetIndexOf(spec.templateSlug, spec.presetId),
    logo: inputs.logo,
    fonts: spec.brandKit?.fonts,
    referenceColors: inputs.referenceColors,
    referenceSubject: inputs.referenceSubject,
    referenceImages: inputs.referenceImages ?? [],
    maxInputPixels: ctx.config.mediaMaxPixels,
    sourceVideo: inputs.sourceVideo,
    motionVideo: inputs.motionVideo,
    audio: inputs.audio,
    spokenWords: inputs.spokenWords,
  };
}

/**
 * Runs an engine for the generation, resuming the hosted job an earlier attempt submitted (its id
 * is stored on the generation before polling, so a retry never pays twice); a hosted job no
 * attempt will use is canceled at its provider.
 */
export async function generateResumably(
  ctx: AppContext,
  g: GenerationRow,
  job: RunningJob<GenerationJobData>,
  engine: { generate: Provider['generate'] },
  request: GenerationJob,
  opts: Omit<GenerateOptions, 'resume' | 'onSubmitted'> & { signal: AbortSignal },
): Promise<ProviderResult> {
  return runProviderJob(ctx, engine, request, {
    ...opts,
    jobs: {
      stored: storedProviderJob(g),
      save: (ref) => saveProviderJob(ctx, g.id, ref),
      // No attempt will follow (or none can use it): the hosted job is stopped rather than paid for.
      abandon: (err) => job.lastAttempt || !describeFailure(err).retry,
      paid: (ref) => generationResource.markPaid(ctx, g.id, ref.provider),
    },
  });
}

/** Gathers the inputs, runs the provider (resuming a hosted job an earlier attempt submitted) and stores the output. */
export async function render(
  ctx: AppContext,
  g: GenerationRow,
  job: RunningJob<GenerationJobData>,
  workDir: string,
  { signal, report }: StageContext<GenerationRow>,
  voice?: VoiceOutput,
): Promise<StoredOutput> {
  const spec = g.spec;
  const variant = variantOf(g);
  const { providerModel, modelName } = engineModel(ctx, g, variant);
  const inputs = await gatherInputs(ctx, g, workDir, signal);
  // A presenter's narration (a local UGC ad, narration.ts): its sound, and its words for the mouth and captions.
  if (voice) {
    const file = path.join(workDir, 'voice.wav');
    await ctx.storage.copyToFile(voice.storageKey, file);
    Object.assign(inputs, { audio: { path: file, type: 'audio/wav' }, spokenWords: voice.words });
  }
  const engine = engineFor(generationCapability(spec.output, variant?.input_mode), {
    config: ctx.config,
    fetcher: ctx.fetcher,
    model: providerModel,
    modelName,
  });
  const t0 = performance.now();
  const result = await generateResumably(
    ctx,
    g,
    job,
    engine,
    { ...jobOf(ctx, g, inputs), providerModel },
    { workDir, signal, onProgress: report },
  );
  const call = {
    engine: engine.name,
    model: providerModel?.model ?? modelName ?? null,
    providerJobId: engine.name === 'local' ? null : await providerJobIdOf(ctx, g.id),
    seconds: Math.round(performance.now() - t0) / 1000,
  };
  const ext = EXT[result.contentType] ?? 'bin';
  const stored = await ctx.storage.put(generationOutputKey(g.orgId, g.id, ext), { file: result.path }, result.contentType);
  return {
    call,
    storageKey: stored.key,
    contentType: result.contentType,
    bytes: stored.bytes,
    width: result.width,
    height: result.height,
    durationSeconds: result.durationSeconds,
    hasAudio: spec.output === 'video' ? (result.hasAudio ?? (spec.generateAudio || Boolean(inputs.audio))) : undefined,
    manifest: result.manifest,
  };
}
