// POST /generations, resolved: the request (already schema-valid) checked against the catalog
// and the workspace's resources, priced server-side, and turned into the spec a worker renders.
// Unknown slugs, presets, variants, tiers and inapplicable fields are 400s naming the field;
// brand kits, avatars, media and references that the workspace does not have are 404s.
// It runs as the charged command's `prepare`, after the idempotency key: a replay never gets here.
// createGenerationBatch: the charged command itself (one row and job per generation, partial
// batches resumed by key).
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import { generations, media, referenceInspirations } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import type { GuardedFetcher } from '../../net/guarded-fetch.ts';
import { keyedRequest, runChargedCommand, type ChargedOutcome, type Priced } from '../../services/billing/charged-command.ts';
import { imageGenerationJob, videoGenerationJob } from './job.ts';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import {
  findAiModel,
  findPublicAvatar,
  findTemplate,
  localPreviewPricing,
  staticTemplateModel,
  tierModel,
  type TemplateModel,
  type RawAiVariant,
  type RawQualityTier,
} from '../../services/catalog/catalog-data.ts';
import { engineOfModel, priceFor, type CatalogModel, type EngineChoice, type EngineLabel } from '../../engines/catalog-engine.ts';

/** The engines' configuration POST /generations reads (an AppContext's config fits). */
type Engines = EngineChoice & { provider: ProviderConfig };
import type { ProviderConfig } from '../../config.ts';
import { resolveDimensions } from '../../engines/generation.ts';
import type { CustomerCopy } from '../../engines/write/ad-copy.ts';
import { useAsset } from '../../services/assets/asset-use.ts';
import { brandColorRoles, brandColors, brandFonts, brandLogoUrl } from '../../services/assets/brand-colors.ts';

/** The request body as the contract defines it (defaults already filled in by the validator). */
export type CreateGenerationBody = components['schemas']['CreateGenerationRequest'];
export type GenerationType = CreateGenerationBody['type'];

export interface MediaInput {
  url?: string;
  mediaId?: string;
}

/** Everything a worker needs to render one generation; stored with it (generations.spec). */
export interface GenerationSpec {
  output: 'image' | 'video';
  title: string;
  model: string;
  templateSlug?: string;
  presetId?: string;
  qualityTier?: 'high' | 'low';
  modelSlug?: string;
  variantId?: string;
  prompt: string;
  /** The customer's ad copy (template generations), shown verbatim. */
  copy?: CustomerCopy;
  aspectRatio: string;
  resolution: string;
  width: number;
  height: number;
  durationSeconds?: number;
  imageFormat?: 'png' | 'jpeg' | 'webp';
  /** logoKey: the kit's uploaded logo in storage (read at run time); logoUrl: an older kit's logo URL; fonts: the kit's font names. */
  brandKit?: {
    id: number;
    name: string;
    colors: string[];
    colorRoles?: { role: string; hex: string }[];
    logoKey?: string;
    logoUrl?: string;
    fonts?: string[];
  };
  /**
   * imageKey: an uploaded avatar's portrait in storage (imageUrl is then ''); a catalog avatar's
   * imageUrl is its preview path (relative to spec/previews/), source 'catalog'.
   */
  avatar?: { id: string; name: string; imageUrl: string; imageKey?: string; source?: 'catalog' | 'custom' };
  references: MediaInput[];
  sourceVideo?: MediaInput;
  motionVideo?: MediaInput;
  audio?: MediaInput;
  generateAudio: boolean;
  customReferenceInspirationId?: string;
  /** Who makes it, decided (and priced) when it was queued; absent on generations queued before engines were recorded. */
  engine?: EngineLabel;
  /** A template made by a model (its catalog made_by, hosted here): the AI model variant that makes its picture or footage. */
  madeBy?: { modelSlug: string; variantId: string };
}

/** The spec and its server-side price: `units` (request_count) generations at `unitCredits` each. */
export interface ResolvedGeneration extends Priced {
  spec: GenerationSpec;
}

export const ASPECT_RATIOS = ['1:1', '4:5', '5:4', '9:16', '16:9', '2:3', '3:2', '3:4', '4:3', '21:9'] as const;
const IMAGE_RESOLUTIONS = ['1K', '2K', '4K'];
const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p'];

const TEMPLATE_SECTION: Record<Exclude<GenerationType, 'ai_model'>, string> = {
  static_ad: 'static_ads',
  video_ad: 'video_ads',
  ugc_ad: 'ugc_ads',
};

class Problems {
  readonly list: { field: string; message: string }[] = [];
  add(field: string, message: string) {
    this.list.push({ field: `body.${field}`, message });
  }
  throwIfAny() {
    if (this.list.length) {
      throw badRequest(`Invalid request: ${this.list.map((p) => `${p.field} ${p.message}`).join('; ')}`, this.list);
    }
  }
}

/** Credits for one output at `duration` (linear in seconds away from the default). */
export function priceOf(
  unit: { credits: number; credits_per_second?: number; default_duration: number },
  duration: number | undefined,
): number {
  if (duration === undefined || duration === unit.default_duration || !unit.credits_per_second) return unit.credits;
  return unit.credits_per_second * duration;
}

/** Whether the request gives a field (null counts as not given). */
const given = (body: CreateGenerationBody, k: keyof CreateGenerationBody) => body[k] !== undefined && body[k] !== null;

/**
 * When a hosted model makes the variant (its engine label, src/engines/catalog-engine.ts, as the
 * worker follows it), the request fields that model has no input for are refused, before anything is
 * charged: the prompt and the brand kit (its guidance goes into the prompt) for a model without a
 * prompt; an explicit aspect ratio, resolution or duration it does not take (Kling image-to-video
 * follows its image; Lipsync follows its video and audio; image models make their own size);
 * more reference images than a one-image model takes; a motion video beside a source video.
 */
function refuseUnusedByHostedModel(body: CreateGenerationBody, slug: string, v: RawAiVariant, p: Problems): void {
  const model = v.provider;
  if (!model) return;
  const names = model.name === 'openai' ? {} : (model.input_names ?? {});
  const by = `variant ${v.id} of ${slug} is made by ${model.model}`;
  if (names.prompt === null) {
    if (body.prompt?.trim()) p.add('prompt', `does not apply: ${by}, which takes no prompt`);
    if (given(body, 'brand_kit_id'))
      p.add('brand_kit_id', `does not apply: ${by}, which takes no prompt (the kit's name and colours are prompt guidance)`);
  }
  if (given(body, 'aspect_ratio') && body.aspect_ratio !== 'auto' && names.aspect_ratio === null) {
    p.add('aspect_ratio', `does not apply: ${by}, which takes its frame from its input; omit it or give auto`);
  } else if (
    given(body, 'aspect_ratio') &&
    body.aspect_ratio !== 'auto' &&
    model.aspect_ratios &&
    !model.aspect_ratios.includes(body.aspect_ratio!)
  ) {
    p.add('aspect_ratio', `must be one of ${model.aspect_ratios.join(', ')} (or auto): ${by}, which makes only those frames`);
  }
  const sizeless = names.resolution === null || v.output === 'image';
  if (given(body, 'resolution') && sizeless && body.resolution !== v.default_resolution) {
    p.add('resolution', `does not apply: ${by}, which makes its own size (${v.default_resolution}); omit it`);
  }
  if (v.output === 'video' && given(body, 'duration') && names.duration === null) {
    // A model driven by a video or an audio track lasts as long as it; one that takes no duration
    // makes its own length, which its duration_options state (a request may give it; others are
    // refused there).
    if (v.input_mode.includes('video') || v.input_mode.includes('audio'))
      p.add('duration', `does not apply: ${by}, whose output lasts as long as its input; omit it`);
  }
  const refs = (body.reference_image_urls?.length ?? 0) + (body.reference_media_ids?.length ?? 0);
  if (refs > 1 && model.name !== 'openai' && !model.image_list) {
    p.add(
      given(body, 'reference_media_ids') ? 'reference_media_ids' : 'reference_image_urls',
      `gives ${refs} images: ${by}, which takes one reference image`,
    );
  }
  const hasSource = given(body, 'source_video_url') || given(body, 'source_video_media_id');
  const hasMotion = given(body, 'motion_video_url') || given(body, 'motion_video_media_id');
  if (hasSource && hasMotion)
    p.add(
      given(body, 'motion_video_url') ? 'motion_video_url' : 'motion_video_media_id',
      `does not apply beside a source video: ${by}, which takes one video`,
    );
}

export interface ResolveDeps {
  /** The charged command's transaction: the assets read are locked in it (useAsset). */
  db: Tx;
  fetcher: GuardedFetcher;
  /** The engines' configuration: who makes each catalog entry here (src/engines/catalog-engine.ts). */
  engines: Engines;
}

/** Each of `fields` the request gives is refused with `why`. */
function refuseGiven(p: Problems, body: CreateGenerationBody, fields: (keyof CreateGenerationBody)[], why: string): void {
  for (const f of fields) if (given(body, f)) p.add(f, why);
}

const VIDEO_INPUT_FIELDS = ['source_video_url', 'source_video_media_id', 'motion_video_url', 'motion_video_media_id'] as const;

/** The catalog entry a request names: what it makes, its defaults and its price per output. */
interface CatalogChoice {
  output: 'image' | 'video';
  title: string;
  model: string;
  defaults: { aspect: string; resolution: string; duration?: number };
  unitCredits: number;
  /** Who makes it here (never unavailable: that is a 400 before this is built). */
  engine: EngineLabel;
  /** The catalog part of the spec: modelSlug and variantId, or templateSlug, presetId and qualityTier. */
  spec: Partial<GenerationSpec>;
}

/** ai_model: the model and variant of the catalog, the inputs the variant takes and requires, its duration and price. */
function chooseAiVariant(engines: Engines, body: CreateGenerationBody, p: Problems): CatalogChoice {
  refuseGiven(p, body, ['template_slug'], 'is for static_ad, video_ad and ugc_ad; ai_model takes model_slug');
  refuseGiven(p, body, ['preset_id'], 'is a template preset; ai_model takes variant_id');
  refuseGiven(p, body, ['custom_reference_inspiration_id'], 'is for template workflows (static_ad, video_ad, ugc_ad)');
  refuseGiven(p, body, ['avatar_id'], 'is for template workflows (static_ad, video_ad, ugc_ad); ai_model takes reference images');
  refuseGiven(p, body, ['copy'], 'is the text of a template ad (static_ad, video_ad, ugc_ad); an ai_model output has no ad copy');
  if (!given(body, 'model_slug')) {
    p.add('model_slug', 'is required for ai_model (an ai_models[].slug of GET /models)');
    p.throwIfAny();
  }
  const m = findAiModel(body.model_slug!);
  if (!m) {
    p.add('model_slug', `"${body.model_slug}" is not a model of the catalog (GET /models ai_models[].slug)`);
    p.throwIfAny();
  }
  const variantId = body.variant_id ?? m!.default_variant_id;
  const v = m!.variants.find((x) => x.id === variantId);
  if (!v) {
    p.add('variant_id', `"${variantId}" is not a variant of ${m!.slug} (one of: ${m!.variants.map((x) => x.id).join(', ')})`);
    p.throwIfAny();
  }
  checkVariantInputs(body, m!.slug, v!, p);
  if (v!.output === 'image') refuseGiven(p, body, ['duration'], `does not apply: variant ${v!.id} makes images`);
  else if (given(body, 'duration') && v!.duration_options && !v!.duration_options.includes(body.duration!)) {
    p.add('duration', `must be one of ${v!.duration_options.join(', ')} for variant ${v!.id}`);
  }
  const duration = v!.output === 'video' ? (body.duration ?? v!.default_duration) : 1;
  const offer = offered(
    engines,
    v!,
    priceOf(v!, v!.output === 'video' ? body.duration : undefined),
    duration,
    given(body, 'variant_id') ? 'variant_id' : 'model_slug',
    p,
  );
  if (offer.engine.kind === 'hosted') refuseUnusedByHostedModel(body, m!.slug, v!, p);
  return {
    output: v!.output,
    title: m!.title,
    model: v!.model,
    defaults: {
      aspect: v!.default_aspect_ratio,
      resolution: v!.default_resolution,
      duration: v!.output === 'video' ? v!.default_duration : undefined,
    },
    ...offer,
    spec: { modelSlug: m!.slug, variantId: v!.id },
  };
}

/**
 * Who makes the catalog entry here and the price of one output (src/engines/catalog-engine.ts):
 * the catalog's `credits` when its model makes it, the local preview price for a preview. An
 * entry no engine makes (LOCAL_FALLBACK=off) is a 400 engine_unavailable naming the field that
 * chose it and the configuration that would make it, before anything is charged.
 */
function offered(
  engines: Engines,
  entry: CatalogModel,
  catalogCredits: number,
  durationSeconds: number,
  chosenBy: string,
  p: Problems,
): { engine: EngineLabel; unitCredits: number } {
  const engine = engineOfModel(engines, entry);
  if (engine.kind === 'unavailable') {
    p.throwIfAny();
    const field = `body.${chosenBy}`;
    const needs = engine.requires
      ? `set ${engine.requires} to have ${entry.model} make it`
      : `no engine of this deployment makes ${entry.model}`;
    throw new ApiError(
      'engine_unavailable',
      `${chosenBy} chooses ${entry.model}, which this deployment cannot make (LOCAL_FALLBACK is off; ${needs}). GET /models shows each entry's engine.`,
      {
        field,
        model: entry.model,
        requires: engine.requires,
        errors: [{ field, message: `is made by ${entry.model}, which no engine here makes` }],
      },
    );
  }
  return { engine, unitCredits: priceFor(engine, entry.output, catalogCredits, durationSeconds, localPreviewPricing()) };
}

/**
 * The media inputs of an AI model variant: those its input modes do not take are refused, and
 * those its model cannot do without (catalog `requires`) must be given, before anything is charged.
 */
function checkVariantInputs(body: CreateGenerationBody, slug: string, v: RawAiVariant, p: Problems): void {
  const modes = new Set(v.input_mode);
  const notAnInput = `is not an input of variant ${v.id} (inputs: ${v.input_mode.join(', ')})`;
  if (!modes.has('image')) refuseGiven(p, body, ['reference_image_urls', 'reference_media_ids'], notAnInput);
  if (!modes.has('video')) refuseGiven(p, body, [...VIDEO_INPUT_FIELDS], notAnInput);
  if (!modes.has('audio')) refuseGiven(p, body, ['audio_url', 'audio_media_id'], notAnInput);
  const required = new Set(v.requires ?? []);
  if (required.has('image') && (body.reference_image_urls?.length ?? 0) + (body.reference_media_ids?.length ?? 0) === 0) {
    p.add(
      'reference_image_urls',
      `or reference_media_ids is required: variant ${v.id} of ${slug} animates or edits a reference image (give at least one)`,
    );
  }
  if (required.has('video') && !VIDEO_INPUT_FIELDS.some((f) => given(body, f))) {
    p.add('source_video_url', `or source_video_media_id is required: variant ${v.id} of ${slug} works on a video`);
  }
  if (required.has('audio') && !given(body, 'audio_url') && !given(body, 'audio_media_id')) {
    p.add('audio_url', `or audio_media_id is required: variant ${v.id} of ${slug} is driven by an audio track`);
  }
}

const COPY_FIELDS = ['headline', 'subheadline', 'cta', 'offer'] as const;

/** The customer's ad copy, kept verbatim; a field of blanks only is refused (it would show nothing). */
function customerCopy(body: CreateGenerationBody, p: Problems): { copy?: CustomerCopy } {
  if (!body.copy) return {};
  const copy: CustomerCopy = {};
  for (const f of COPY_FIELDS) {
    const text = body.copy[f];
    if (text === undefined) continue;
    if (!text.trim()) p.add(`copy.${f}`, 'is blank; give the words to show, or leave it out to have them written from the prompt');
    else copy[f] = text;
  }
  return Object.keys(copy).length ? { copy } : {};
}

/** static_ad, video_ad, ugc_ad: the template of the type's catalog section, its preset, and (video) its quality tier. */
function chooseTemplate(
  engines: Engines,
  body: CreateGenerationBody,
  type: Exclude<GenerationType, 'ai_model'>,
  p: Problems,
): CatalogChoice {
  refuseGiven(p, body, ['model_slug', 'variant_id'], 'is for ai_model; template workflows take template_slug');
  refuseGiven(p, body, [...VIDEO_INPUT_FIELDS, 'audio_url', 'audio_media_id'], 'is for ai_model variants that take video or audio input');
  if (!given(body, 'template_slug')) {
    p.add('template_slug', `is required for ${type} (a ${TEMPLATE_SECTION[type]}[].slug of GET /models)`);
    p.throwIfAny();
  }
  const t = findTemplate(body.template_slug!);
  if (!t || t.section !== TEMPLATE_SECTION[type]) {
    p.add(
      'template_slug',
      t
        ? `"${t.slug}" is a ${t.section} template, not ${TEMPLATE_SECTION[type]}`
        : `"${body.template_slug}" is not a template of the catalog`,
    );
    p.throwIfAny();
  }
  const spec: Partial<GenerationSpec> = { templateSlug: t!.slug, ...customerCopy(body, p) };
  if (given(body, 'preset_id')) {
    if (!t!.presets.some((x) => x.id === body.preset_id)) {
      p.add('preset_id', `"${body.preset_id}" is not a preset of ${t!.slug} (one of: ${t!.presets.map((x) => x.id).join(', ')})`);
    } else spec.presetId = body.preset_id!;
  }
  if (t!.section === 'static_ads') {
    refuseGiven(p, body, ['duration'], 'does not apply to static_ad (images)');
    const defaults = { aspect: t!.default_aspect_ratio, resolution: t!.default_resolution };
    const made = staticTemplateModel(t!, referenceCount(body) > 0);
    const offer = offered(engines, made, t!.credits, 1, 'template_slug', p);
    if (offer.engine.kind !== 'local') madeByModel(body, made, spec, p);
    return { output: 'image', title: t!.title, model: 'template-image', defaults, ...offer, spec };
  }
  const tierId = body.quality_tier ?? 'high';
  const tier: RawQualityTier | undefined = t!.quality_tiers.find((q) => q.id === tierId);
  if (!tier) {
    p.add('quality_tier', `"${tierId}" is not a tier of ${t!.slug}`);
    p.throwIfAny();
  }
  spec.qualityTier = tier!.id;
  if (given(body, 'duration') && !tier!.duration_options.includes(body.duration!)) {
    p.add('duration', `must be one of ${tier!.duration_options.join(', ')} for the ${tier!.id} tier of ${t!.slug}`);
  }
  const defaults = { aspect: t!.default_aspect_ratio, resolution: tier!.resolution, duration: tier!.default_duration };
  const duration = body.duration ?? tier!.default_duration;
  const made = tierModel(tier!);
  const offer = offered(
    engines,
    made,
    priceOf(tier!, body.duration),
    duration,
    given(body, 'quality_tier') ? 'quality_tier' : 'template_slug',
    p,
  );
  if (offer.engine.kind !== 'local') madeByModel(body, made, spec, p);
  return { output: 'video', title: t!.title, model: tier!.model, defaults, ...offer, spec };
}

const referenceCount = (body: CreateGenerationBody) => (body.reference_image_urls?.length ?? 0) + (body.reference_media_ids?.length ?? 0);

/**
 * A template made by the model its catalog names (made_by): the variant goes into the spec, and
 * the inputs that model has no use for are refused before anything is charged. The model starts
 * from one image (a static ad's reference to edit; a video's first frame: the first reference
 * image, else the avatar, else the template's composed picture), unless it is an image-list
 * model, which takes them all; a text-only variant takes none. The layout, brand kit, preset and
 * prompt are composited over what it makes.
 */
function madeByModel(body: CreateGenerationBody, made: TemplateModel, spec: Partial<GenerationSpec>, p: Problems): void {
  const by = made.madeBy!;
  spec.madeBy = { modelSlug: by.modelSlug, variantId: by.variantId };
  const refs = referenceCount(body);
  const field = given(body, 'reference_media_ids') ? 'reference_media_ids' : 'reference_image_urls';
  const what = `${by.variant.model} (${by.variant.provider!.name}), which makes this template here,`;
  if (by.variant.input_mode.includes('audio')) {
    // A talking avatar: the presenter's portrait and the narration drive it.
    if (!given(body, 'avatar_id')) p.add('avatar_id', `is required: ${what} animates the presenter's portrait (an avatar of GET /assets)`);
    if (refs) p.add(field, `does not apply: ${what} animates the avatar's portrait, not a product image`);
    return;
  }
  if (!by.variant.input_mode.includes('image')) {
    if (refs) p.add(field, `does not apply: ${what} starts from text only`);
    if (given(body, 'avatar_id')) p.add('avatar_id', `does not apply: ${what} starts from text only`);
  } else if (refs > 1 && !by.variant.provider?.image_list) {
    p.add(field, `gives ${refs} images: ${what} starts from one image`);
  }
}

/** Media inputs: a URL or a media id, never both; every URL passes the guarded client's precheck; at most 10 references. */
function checkMediaInputs(fetcher: GuardedFetcher, body: CreateGenerationBody, p: Problems): void {
  for (const [url, id] of [
    ['source_video_url', 'source_video_media_id'],
    ['motion_video_url', 'motion_video_media_id'],
    ['audio_url', 'audio_media_id'],
  ] as const) {
    if (given(body, url) && given(body, id)) p.add(id, `is used instead of ${url}; give one of them`);
  }
  const urlFields = ['reference_image_urls', 'source_video_url', 'motion_video_url', 'audio_url'] as const;
  for (const field of urlFields) {
    const values = field === 'reference_image_urls' ? (body.reference_image_urls ?? []) : body[field] ? [body[field] as string] : [];
    values.forEach((u, i) => {
      const problem = fetcher.precheck(u);
      if (problem) p.add(field === 'reference_image_urls' ? `reference_image_urls[${i}]` : field, problem);
    });
  }
  const refCount = (body.reference_image_urls?.length ?? 0) + (body.reference_media_ids?.length ?? 0);
  if (refCount > 10) p.add('reference_media_ids', `together with reference_image_urls gives ${refCount} references; at most 10`);
}

/** The output's aspect ratio and resolution: the request's, else the catalog entry's defaults ('auto' resolved). */
function outputShape(body: CreateGenerationBody, choice: CatalogChoice, p: Problems): { aspect: string; resolution: string } {
  const { defaults, output } = choice;
  let aspect = body.aspect_ratio ?? defaults.aspect;
  if (aspect === 'auto') aspect = defaults.aspect === 'auto' ? '1:1' : defaults.aspect;
  if (!(ASPECT_RATIOS as readonly string[]).includes(aspect)) p.add('aspect_ratio', `must be one of ${ASPECT_RATIOS.join(', ')} or auto`);
  const resolution = body.resolution ?? defaults.resolution;
  const allowed = output === 'image' ? IMAGE_RESOLUTIONS : VIDEO_RESOLUTIONS;
  if (!allowed.includes(resolution)) p.add('resolution', `must be one of ${allowed.join(', ')} for ${output} outputs`);
  return { aspect, resolution };
}

type WorkspaceAssets = Pick<GenerationSpec, 'brandKit' | 'avatar' | 'customReferenceInspirationId'>;

/**
 * Workspace resources (404 when the workspace does not have them), in this order: the brand kit,
 * the avatar, the custom reference. The assets the job reads stay locked against a delete until
 * the charge commits (useAsset).
 */
async function useWorkspaceAssets(db: Tx, orgId: string, body: CreateGenerationBody): Promise<WorkspaceAssets> {
  const assets: WorkspaceAssets = {};
  if (given(body, 'brand_kit_id')) assets.brandKit = await useBrandKit(db, orgId, body.brand_kit_id!);
  if (given(body, 'avatar_id')) assets.avatar = await useAvatar(db, orgId, body.avatar_id!);
  if (given(body, 'custom_reference_inspiration_id'))
    assets.customReferenceInspirationId = await readyReference(db, orgId, body.custom_reference_inspiration_id!);
  return assets;
}

async function useBrandKit(db: Tx, orgId: string, id: number): Promise<GenerationSpec['brandKit']> {
  const kit = await useAsset(db, 'brandKit', orgId, id);
  if (!kit)
    throw new ApiError('not_found', `Brand kit ${id} was not found in this workspace`, {
      field: 'body.brand_kit_id',
      resource: 'brand_kit',
    });
  const logoUrl = kit.logoKey ? undefined : brandLogoUrl(kit.kitData);
  return {
    id: kit.id,
    name: kit.kitName,
    colors: brandColors(kit.kitData),
    colorRoles: brandColorRoles(kit.kitData),
    fonts: brandFonts(kit.kitData),
    ...(kit.logoKey ? { logoKey: kit.logoKey } : {}),
    ...(logoUrl ? { logoUrl } : {}),
  };
}

/** A catalog avatar, else an avatar of the workspace. */
async function useAvatar(db: Tx, orgId: string, id: string): Promise<GenerationSpec['avatar']> {
  const pub = findPublicAvatar(id);
  if (pub) return { id: pub.id, name: pub.name, imageUrl: pub.image, source: 'catalog' };
  const custom = await useAsset(db, 'avatar', orgId, id);
  if (!custom)
    throw new ApiError('not_found', `Avatar ${id} was not found in this workspace`, {
      field: 'body.avatar_id',
      resource: 'avatar',
    });
  return {
    id: custom.id,
    name: custom.name,
    imageUrl: custom.imageUrl,
    source: 'custom',
    ...(custom.imageKey ? { imageKey: custom.imageKey } : {}),
  };
}

/** The workspace's reference of that id, which must be ready. */
async function readyReference(db: Tx, orgId: string, id: string): Promise<string> {
  const [ref] = await db
    .select()
    .from(referenceInspirations)
    .where(and(eq(referenceInspirations.id, id), eq(referenceInspirations.orgId, orgId)));
  if (!ref) {
    throw new ApiError('not_found', `Reference ${id} was not found in this workspace`, {
      field: 'body.custom_reference_inspiration_id',
      resource: 'reference_inspiration',
    });
  }
  if (ref.status !== 'ready') {
    throw badRequest(`Reference ${ref.id} is ${ref.status}; only a ready reference can be used`, [
      { field: 'body.custom_reference_inspiration_id', message: `is ${ref.status}, not ready` },
    ]);
  }
  return ref.id;
}

/**
 * The media items the request names by id: each of the workspace (404 naming the first missing),
 * completed and of the kind its field takes (a voice is audio); the wrong ones all in one 400.
 */
async function checkMediaIds(db: Tx, orgId: string, body: CreateGenerationBody): Promise<void> {
  const wanted: { field: string; id: string; kind: 'image' | 'video' | 'audio' }[] = [
    ...(body.reference_media_ids ?? []).map((id, i) => ({ field: `body.reference_media_ids[${i}]`, id, kind: 'image' as const })),
    ...(body.source_video_media_id
      ? [{ field: 'body.source_video_media_id', id: body.source_video_media_id, kind: 'video' as const }]
      : []),
    ...(body.motion_video_media_id
      ? [{ field: 'body.motion_video_media_id', id: body.motion_video_media_id, kind: 'video' as const }]
      : []),
    ...(body.audio_media_id ? [{ field: 'body.audio_media_id', id: body.audio_media_id, kind: 'audio' as const }] : []),
  ];
  if (!wanted.length) return;
  const rows = await db
    .select({ id: media.id, kind: media.kind, status: media.status })
    .from(media)
    .where(and(eq(media.orgId, orgId), inArray(media.id, [...new Set(wanted.map((w) => w.id))])));
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const w of wanted) {
    if (!byId.has(w.id))
      throw new ApiError('not_found', `Media ${w.id} was not found in this workspace`, { field: w.field, resource: 'editor_media' });
  }
  const wrong = wanted.filter((w) => {
    const row = byId.get(w.id)!;
    const kindOk = row.kind === w.kind || (w.kind === 'audio' && row.kind === 'voice');
    return !kindOk || row.status !== 'completed';
  });
  if (wrong.length) {
    const errors = wrong.map((w) => {
      const row = byId.get(w.id)!;
      return {
        field: w.field,
        message: row.status !== 'completed' ? `is ${row.status}, not completed` : `is ${row.kind} media, not ${w.kind}`,
      };
    });
    throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);
  }
}

/** A media input as the spec stores it: its URL, else its media id, else none. */
const mediaInput = (url: string | null | undefined, mediaId: string | null | undefined): MediaInput | undefined =>
  url ? { url } : mediaId ? { mediaId } : undefined;

/** The spec a worker renders, from the checked request, its catalog choice, shape and workspace assets. */
function buildSpec(
  body: CreateGenerationBody,
  choice: CatalogChoice,
  shape: { aspect: string; resolution: string },
  assets: WorkspaceAssets,
): GenerationSpec {
  const { output } = choice;
  const { width, height } = resolveDimensions(shape.aspect, shape.resolution, output);
  const full: GenerationSpec = {
    ...choice.spec,
    ...assets,
    output,
    title: choice.title,
    model: choice.model,
    prompt: body.prompt ?? '',
    aspectRatio: shape.aspect,
    resolution: shape.resolution,
    width,
    height,
    durationSeconds: output === 'video' ? (body.duration ?? choice.defaults.duration ?? 5) : undefined,
    imageFormat: output === 'image' ? 'png' : undefined,
    references: [
      ...(body.reference_image_urls ?? []).map((url) => ({ url })),
      ...(body.reference_media_ids ?? []).map((mediaId) => ({ mediaId })),
    ],
    sourceVideo: mediaInput(body.source_video_url, body.source_video_media_id),
    motionVideo: mediaInput(body.motion_video_url, body.motion_video_media_id),
    audio: mediaInput(body.audio_url, body.audio_media_id),
    generateAudio: output === 'video' ? (body.generate_audio ?? true) : false,
    engine: choice.engine,
  };
  return JSON.parse(JSON.stringify(full)) as GenerationSpec;
}

/**
 * The request checked and priced, in this order: the catalog choice (a missing or unknown model,
 * variant, template or tier stops there with the problems found so far), the media inputs and the
 * output's shape (one 400 listing every problem), then the workspace's assets and media (404 or
 * 400), then the spec.
 */
export async function resolveGeneration(deps: ResolveDeps, orgId: string, body: CreateGenerationBody): Promise<ResolvedGeneration> {
  const p = new Problems();
  const choice = body.type === 'ai_model' ? chooseAiVariant(deps.engines, body, p) : chooseTemplate(deps.engines, body, body.type, p);
  checkMediaInputs(deps.fetcher, body, p);
  const shape = outputShape(body, choice, p);
  p.throwIfAny();
  const assets = await useWorkspaceAssets(deps.db, orgId, body);
  await checkMediaIds(deps.db, orgId, body);
  return { spec: buildSpec(body, choice, shape, assets), unitCredits: choice.unitCredits, units: body.request_count ?? 1 };
}

export type GenerationBatch = components['schemas']['GenerationBatch'];
type GenerationBatchItem = components['schemas']['GenerationBatchItem'];

/** POST /generations: `request_count` generations of one resolved spec, charged per generation. */
export function createGenerationBatch(
  ctx: AppContext,
  orgId: string,
  body: CreateGenerationBody,
  headerKey: string | undefined,
): Promise<GenerationBatch> {
  return runChargedCommand(ctx, {
    orgId,
    operation: 'createGeneration',
    ...keyedRequest(body, headerKey),
    ledger: { reason: 'generation_charge', reference: (batchId) => `batch:${batchId}` },
    prepare: (tx) => resolveGeneration({ db: tx, fetcher: ctx.fetcher, engines: ctx.config }, orgId, body),
    enqueue: async (sp, r, { groupId: batchId }) => {
      const id = randomUUID();
      const jobId = randomUUID();
      await sp.insert(generations).values({ id, orgId, batchId, type: body.type, spec: r.spec, credits: r.unitCredits, jobId });
      await ctx.queue.sendInTx(sp, r.spec.output === 'video' ? videoGenerationJob : imageGenerationJob, { generationId: id }, jobId);
      return id;
    },
    respond: batchResponse,
  });
}

async function batchResponse(tx: Tx, r: ResolvedGeneration, o: ChargedOutcome): Promise<GenerationBatch> {
  // Earlier generations of a resumed batch may have moved on; new ones are generating.
  const items = new Map<string, GenerationBatchItem>(
    o.unitIds.map((id) => [id, { id, object: 'generation', status: 'generating', credits_deducted: r.unitCredits }]),
  );
  if (o.earlierUnitIds.length) {
    const rows = await tx
      .select({ id: generations.id, status: generations.status, credits: generations.credits })
      .from(generations)
      .where(inArray(generations.id, o.earlierUnitIds));
    for (const g of rows) items.set(g.id, { id: g.id, object: 'generation', status: g.status, credits_deducted: g.credits });
  }
  return {
    object: 'generation_batch',
    status: o.partial ? 'partial' : 'queued',
    request_count: r.units,
    credits_deducted: o.creditsDeducted,
    remaining_credits: o.remainingCredits,
    generations: o.unitIds.map((id) => items.get(id)!),
    error: o.partial
      ? {
          code: 'queue_unavailable',
          message: `Only ${o.unitIds.length} of ${r.units} generations could be queued; retry with the same idempotency key to queue the rest`,
          retryable: true,
          context: { queued: o.unitIds.length, requested: r.units },
        }
      : null,
  };
}
