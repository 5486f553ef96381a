// Built-in catalog and asset data: spec/catalog.yaml, spec/voices.yaml, spec/avatars.yaml.
//
// The YAML files (as `npm run generate` copies them into generated/catalog-data.json, which the
// freshness test keeps equal to them: parsing the YAML cost each process about 0.2 s of CPU at
// start-up) are read once (on first use), validated, and turned into the public
// shapes of seed 2.1 (GET /models) and 2.2 (GET /assets). Relative preview paths in the
// data become `${previewBase}/${path}`; the SVG files live in spec/previews/ (see
// PREVIEWS_DIR_URL) and are produced by scripts/make-previews.ts.
//
// Validation: spec/catalog-data.schema.yaml (JSON Schema) holds the structure of each file;
// `npm run generate` compiles it into generated/catalog-validators.cjs and the document types
// into generated/catalog-data.d.ts. The loader runs those validators, then the cross-checks of
// ./catalog-checks.ts (uniqueness, cross-references, pricing), then checks the preview files.
// Every problem names the file and JSON path (see CatalogDataError).
//
// Pricing data (see the comment at the top of spec/catalog.yaml): a generation costs
// `credits` at the default duration, or `credits_per_second × duration` otherwise, times
// request_count; static ads and image variants cost `credits` per image.
//
// Erasable TypeScript only (runs directly on Node 24 type stripping).

import type { components as CatalogSchema } from '../../../generated/catalog-data.d.ts';
import type { components } from '../../../generated/openapi.d.ts';
import validators from '../../../generated/catalog-validators.cjs';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { engineOfModel, priceFor, type EngineChoice, type EngineLabel } from '../../engines/catalog-engine.ts';
import { CATALOG_FILES, CatalogDataError, crossCheckProblems, pointer, schemaProblems } from './catalog-checks.ts';

export { CatalogDataError } from './catalog-checks.ts';

export const CATALOG_URL = new URL('../../../spec/catalog.yaml', import.meta.url);
export const VOICES_URL = new URL('../../../spec/voices.yaml', import.meta.url);
export const AVATARS_URL = new URL('../../../spec/avatars.yaml', import.meta.url);
/** Directory holding the preview files; serve it at the previewBase given to the builders. */
export const PREVIEWS_DIR_URL = new URL('../../../spec/previews/', import.meta.url);

// ---------------------------------------------------------------------------------------
// Raw data types (what the YAML files hold, after validation): generated from the schema
// ---------------------------------------------------------------------------------------

type Data = CatalogSchema['schemas'];

export type RawPreset = Data['Preset'];
export type RawStaticTemplate = Data['StaticTemplate'];
export type RawQualityTier = Data['QualityTier'];
export type RawVideoTemplate = Data['VideoTemplate'];
export type RawTemplate = RawStaticTemplate | RawVideoTemplate;
/** What every template has, whatever its section. */
export type RawTemplateBase = Pick<
  RawTemplate,
  'slug' | 'title' | 'preview_image' | 'default_aspect_ratio' | 'default_resolution' | 'presets'
>;
/** By `output`. Image variants have default_duration 1 and no duration_options or credits_per_second. */
export type RawAiVariant = (Data['ImageVariant'] & { duration_options?: undefined; credits_per_second?: undefined }) | Data['VideoVariant'];
export type RawAiModel = Data['AiModel'];
export type RawSlideshowTemplate = Data['SlideshowTemplate'];
export type RawCatalog = Data['CatalogDocument'];
export type RawVoice = Data['Voice'];
export type RawAvatar = Data['Avatar'];

export interface CatalogSources {
  catalog: RawCatalog;
  voices: RawVoice[];
  avatars: RawAvatar[];
}

/** The parsed YAML documents, before validation (readCatalogSources can take them instead of the files). */
export interface CatalogDocuments {
  catalog: unknown;
  voices: unknown;
  avatars: unknown;
}

// ---------------------------------------------------------------------------------------
// Vocabularies (the schema's enums; each list must name every value, or typechecking fails)
// ---------------------------------------------------------------------------------------

/** Every value of the schema enum T, as a readonly tuple; a missing or unknown value does not typecheck. */
function vocabulary<T extends string>() {
  return <const A extends readonly T[]>(...values: A & ([T] extends [A[number]] ? unknown : never)): A => values;
}

export type AspectRatio = Data['AspectRatio'];
export const TEMPLATE_ASPECT_RATIOS = vocabulary<AspectRatio>()('1:1', '9:16', '16:9', '4:5');
export type VariantAspectRatio = Data['VariantAspectRatio'];
export const VARIANT_ASPECT_RATIOS = vocabulary<VariantAspectRatio>()(...TEMPLATE_ASPECT_RATIOS, 'auto');

export type VideoTemplateSection = RawVideoTemplate['section'];
export type TemplateSection = RawStaticTemplate['section'] | VideoTemplateSection;
export const TEMPLATE_SECTIONS = vocabulary<TemplateSection>()('static_ads', 'video_ads', 'ugc_ads');
export type VideoTemplateType = RawVideoTemplate['type'];

export type QualityTierId = Data['QualityTierId'];
export const QUALITY_TIER_IDS = vocabulary<QualityTierId>()('high', 'low');

export type InputMode = Data['InputMode'];
export const INPUT_MODES = vocabulary<InputMode>()('text', 'image', 'video', 'audio');
export type OutputKind = RawAiVariant['output'];
export const OUTPUT_KINDS = vocabulary<OutputKind>()('image', 'video');

export type MediaKind = Data['MediaKind'];
export const MEDIA_KINDS = vocabulary<MediaKind>()('image', 'slideshow', 'video');
export type TemplateCategory = 'static-ads' | 'video-templates' | 'slideshow-carousel';

export type Gender = Data['Gender'];
export const GENDERS = vocabulary<Gender>()('female', 'male', 'neutral');
export type Age = Data['Age'];
export const AGES = vocabulary<Age>()('young', 'middle_aged', 'old');

/** Durations in seconds (the schema's Duration). */
export const MIN_DURATION = 1;
export const MAX_DURATION = 30;

// ---------------------------------------------------------------------------------------
// Public shapes (seed 2.1 / 2.2)
// ---------------------------------------------------------------------------------------

// The contract's types (generated from spec/openapi.yaml), so the catalog cannot drift from it.
type Schemas = components['schemas'];
export type PresetReference = Schemas['PresetReference'];
export type StaticTemplateItem = Schemas['TemplateItem'];
export type QualityTierItem = Schemas['QualityTier'];
export type VideoTemplateItem = Schemas['VideoTemplateItem'];
export type AiVariantItem = Schemas['AiModelVariant'];
export type AiModelItem = Schemas['AiModelItem'];
export type CatalogResponse = Schemas['Catalog'];
export type ReferenceTemplateTarget = Schemas['ReferenceTemplateTarget'];
export type VoiceItem = Schemas['Voice'];
export type AvatarItem = Schemas['Avatar'];

// ---------------------------------------------------------------------------------------
// Preview references (shared with scripts/make-previews.ts)
// ---------------------------------------------------------------------------------------

export type PreviewKind = 'template' | 'preset-preview' | 'preset-poster' | 'slideshow' | 'avatar';

export interface PreviewRef {
  /** Relative path under spec/previews/. */
  path: string;
  /** Data location that references it, for error messages: file and JSON path. */
  where: string;
  kind: PreviewKind;
  /** static_ads | video_ads | ugc_ads for templates and presets, slideshow_templates, avatars. */
  section: TemplateSection | 'slideshow_templates' | 'avatars';
  aspect_ratio: AspectRatio;
  /** Stable seed for colours: the slug, `${slug}/${preset id}` or the avatar id. */
  seed: string;
  slug: string;
  title: string;
  subtitle?: string;
  gender?: Gender;
  /** Video and UGC templates: the high tier's default duration in seconds. */
  duration?: number;
}

/** Every relative .svg path the data references, in data order (a path may repeat). */
export function referencedPreviews(sources: CatalogSources): PreviewRef[] {
  const refs: PreviewRef[] = [];
  const { catalog } = sources;
  const inCatalog = (...parts: (string | number)[]) => `${CATALOG_FILES.catalog.file} ${pointer(...parts)}`;
  const templates: RawTemplate[] = [...catalog.static_ads, ...catalog.video_ads, ...catalog.ugc_ads];
  const indexes = new Map<RawTemplate, number>();
  for (const section of TEMPLATE_SECTIONS)
    catalog[section].forEach((t, i) => {
      indexes.set(t, i);
    });
  for (const t of templates) {
    const i = indexes.get(t)!;
    const duration = t.section === 'static_ads' ? undefined : t.quality_tiers.find((q) => q.id === 'high')?.default_duration;
    const common = { section: t.section, aspect_ratio: t.default_aspect_ratio, slug: t.slug, title: t.title, duration };
    refs.push({ ...common, path: t.preview_image, where: inCatalog(t.section, i, 'preview_image'), kind: 'template', seed: t.slug });
    t.presets.forEach((p, j) => {
      const seed = `${t.slug}/${p.id}`;
      refs.push({
        ...common,
        path: p.preview_image,
        where: inCatalog(t.section, i, 'presets', j, 'preview_image'),
        kind: 'preset-preview',
        seed,
        subtitle: p.label,
      });
      refs.push({
        ...common,
        path: p.poster_image,
        where: inCatalog(t.section, i, 'presets', j, 'poster_image'),
        kind: 'preset-poster',
        seed,
        subtitle: p.label,
      });
    });
  }
  catalog.slideshow_templates.forEach((s, i) => {
    refs.push({
      path: s.preview_image,
      where: inCatalog('slideshow_templates', i, 'preview_image'),
      kind: 'slideshow',
      section: 'slideshow_templates',
      aspect_ratio: s.default_aspect_ratio,
      seed: s.slug,
      slug: s.slug,
      title: s.title,
    });
  });
  sources.avatars.forEach((a, i) => {
    refs.push({
      path: a.image,
      where: `${CATALOG_FILES.avatars.file} ${pointer('avatars', i, 'image')}`,
      kind: 'avatar',
      section: 'avatars',
      aspect_ratio: '4:5',
      seed: a.id,
      slug: a.id,
      title: a.name,
      subtitle: a.style_tags[0],
      gender: a.gender,
    });
  });
  return refs;
}

// ---------------------------------------------------------------------------------------
// Reading and validating
// ---------------------------------------------------------------------------------------

const GENERATED_DOCUMENTS_URL = new URL('../../../generated/catalog-data.json', import.meta.url);

/** The three documents as generated/catalog-data.json holds them (spec/*.yaml, parsed by `npm run generate`). */
function generatedDocuments(): CatalogDocuments {
  try {
    return JSON.parse(readFileSync(GENERATED_DOCUMENTS_URL, 'utf8')) as CatalogDocuments;
  } catch (err) {
    throw new Error(`catalog data: cannot read generated/catalog-data.json (run npm run generate): ${(err as Error).message}`);
  }
}

function readYaml(url: URL, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (err) {
    throw new Error(`catalog data: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    // Only scripts read the YAML itself (make-previews); the service reads the generated JSON.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    return parse(text);
  } catch (err) {
    throw new Error(`catalog data: ${file} is not valid YAML: ${(err as Error).message}`);
  }
}

/** Each preview path is used once and its file exists under spec/previews/. */
function previewProblems(sources: CatalogSources): string[] {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  for (const ref of referencedPreviews(sources)) {
    const prev = owners.get(ref.path);
    if (prev) {
      problems.push(`${ref.where} preview path "${ref.path}" is already used by ${prev}`);
      continue;
    }
    owners.set(ref.path, ref.where);
    if (!existsSync(new URL(ref.path, PREVIEWS_DIR_URL))) {
      problems.push(`${ref.where} preview file spec/previews/${ref.path} does not exist (run node scripts/make-previews.ts)`);
    }
  }
  return problems;
}

/**
 * Reads and validates the three YAML files (no caching): the generated schema validators, then
 * the cross-checks, then (with checkPreviews, the default) every referenced .svg must exist
 * under spec/previews/. `documents` replaces the named files by already parsed documents.
 * Throws a CatalogDataError listing every problem, each naming file and JSON path.
 */
export function readCatalogSources(
  options: { checkPreviews?: boolean; documents?: Partial<CatalogDocuments>; fromYaml?: boolean } = {},
): CatalogSources {
  const urls = { catalog: CATALOG_URL, voices: VOICES_URL, avatars: AVATARS_URL };
  const docs = {} as CatalogDocuments;
  const problems: string[] = [];
  let generated: CatalogDocuments | undefined;
  for (const key of ['catalog', 'voices', 'avatars'] as const) {
    const { file, definition } = CATALOG_FILES[key];
    const given = options.documents && key in options.documents;
    const doc = given ? options.documents![key] : options.fromYaml ? readYaml(urls[key], file) : (generated ??= generatedDocuments())[key];
    const validate = validators[definition];
    if (!validate(doc)) problems.push(...schemaProblems(file, doc, validate.errors ?? []));
    docs[key] = doc;
  }
  if (problems.length) throw new CatalogDataError(problems);

  const sources: CatalogSources = {
    catalog: docs.catalog as RawCatalog,
    voices: (docs.voices as Data['VoicesDocument']).voices,
    avatars: (docs.avatars as Data['AvatarsDocument']).avatars,
  };
  problems.push(...crossCheckProblems(sources));
  if (options.checkPreviews ?? true) problems.push(...previewProblems(sources));
  if (problems.length) throw new CatalogDataError(problems);
  return sources;
}

// ---------------------------------------------------------------------------------------
// Loaded data, indexes and public builders
// ---------------------------------------------------------------------------------------

interface Loaded {
  sources: CatalogSources;
  templates: Map<string, RawTemplate>;
  aiModels: Map<string, RawAiModel>;
  slideshowTemplates: Map<string, RawSlideshowTemplate>;
  voices: Map<string, RawVoice>;
  avatars: Map<string, RawAvatar>;
}

let loaded: Loaded | undefined;

function data(): Loaded {
  if (!loaded) {
    const sources = readCatalogSources();
    const { catalog } = sources;
    deepFreeze(sources);
    loaded = {
      sources,
      templates: new Map<string, RawTemplate>([...catalog.static_ads, ...catalog.video_ads, ...catalog.ugc_ads].map((t) => [t.slug, t])),
      aiModels: new Map(catalog.ai_models.map((m) => [m.slug, m])),
      slideshowTemplates: new Map(catalog.slideshow_templates.map((s) => [s.slug, s])),
      voices: new Map(sources.voices.map((v) => [v.id, v])),
      avatars: new Map(sources.avatars.map((a) => [a.id, a])),
    };
  }
  return loaded;
}

/** Loads and validates the data now (call at boot to fail fast); returns the frozen raw data. */
export function loadCatalogData(): CatalogSources {
  return data().sources;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

function memo<T>(cache: Map<string, T>, key: string, build: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = deepFreeze(build());
    cache.set(key, v);
  }
  return v;
}

const voicesCache = new Map<string, VoiceItem[]>();
const avatarsCache = new Map<string, AvatarItem[]>();
let targetsCache: ReferenceTemplateTarget[] | undefined;

function presetRefs(base: string, presets: readonly RawPreset[]): PresetReference[] {
  return presets.map((p) => ({
    id: p.id,
    label: p.label,
    preview_image_url: joinUrl(base, p.preview_image),
    poster_image_url: joinUrl(base, p.poster_image),
  }));
}

/** What engines make here and what a preview costs (the configuration GET /models describes). */
type EngineConfig = EngineChoice;

/**
 * Who makes a catalog entry here and its price for one output at its default duration (see
 * src/engines/catalog-engine.ts): the catalog's credits, or the local preview price.
 */
export function offerOf(
  cfg: EngineConfig,
  entry: {
    output: 'image' | 'video';
    model: string;
    provider?: RawAiVariant['provider'];
    input_mode?: readonly string[];
    credits: number;
    default_duration: number;
  },
): { engine: EngineLabel; credits: number } {
  const engine = engineOfModel(cfg, entry);
  return { engine, credits: priceFor(engine, entry.output, entry.credits, entry.default_duration, localPreviewPricing()) };
}

/** The catalog's local preview prices (spec/catalog.yaml local_preview_pricing). */
export function localPreviewPricing(): RawCatalog['local_preview_pricing'] {
  return data().sources.catalog.local_preview_pricing;
}

/** The AI model variant a template's made_by names for this use (see MadeBy in spec/catalog-data.schema.yaml). */
export interface MadeByVariant {
  modelSlug: string;
  variantId: string;
  variant: RawAiVariant;
}

function madeByVariant(by: Data['MadeBy'] | undefined, use: 'text' | 'image'): MadeByVariant | undefined {
  const id = by?.[use];
  const variant = id === undefined ? undefined : findAiModel(by!.model)?.variants.find((v) => v.id === id);
  return variant && { modelSlug: by!.model, variantId: id!, variant };
}

/** A template's catalog entry as the engine rule reads it, with the variant that makes it (if any). */
export interface TemplateModel {
  output: 'image' | 'video';
  model: string;
  provider?: RawAiVariant['provider'];
  /** The made_by variant's inputs. */
  input_mode?: readonly string[];
  credits: number;
  default_duration: number;
  madeBy?: MadeByVariant;
}

/**
 * What makes a static template's hero image: its made_by image variant when the request has a
 * reference image to start from (and the template names one), else its text variant; by default
 * (GET /models) the text variant.
 */
export function staticTemplateModel(t: RawStaticTemplate, withImage = false): TemplateModel {
  const madeBy = (withImage && madeByVariant(t.made_by, 'image')) || madeByVariant(t.made_by, 'text') || madeByVariant(t.made_by, 'image');
  return {
    output: 'image',
    model: madeBy?.variant.model ?? 'template-image',
    provider: madeBy?.variant.provider,
    input_mode: madeBy?.variant.input_mode,
    credits: t.credits,
    default_duration: 1,
    madeBy,
  };
}

/** What makes a quality tier's footage: its made_by image variant (a video always has a first frame), else its text variant. */
export function tierModel(q: RawQualityTier): TemplateModel {
  const madeBy = madeByVariant(q.made_by, 'image') ?? madeByVariant(q.made_by, 'text');
  return {
    output: 'video',
    model: q.model,
    provider: madeBy?.variant.provider,
    input_mode: madeBy?.variant.input_mode,
    credits: q.credits,
    default_duration: q.default_duration,
    madeBy,
  };
}

function videoItem(base: string, t: RawVideoTemplate, cfg: EngineConfig): VideoTemplateItem {
  return {
    slug: t.slug,
    title: t.title,
    preview_image_url: joinUrl(base, t.preview_image),
    section: t.section,
    default_aspect_ratio: t.default_aspect_ratio,
    default_resolution: t.default_resolution,
    presets: presetRefs(base, t.presets),
    type: t.type,
    quality_tiers: t.quality_tiers.map((q) => ({
      id: q.id,
      label: q.label,
      model: q.model,
      default_duration: q.default_duration,
      duration_options: [...q.duration_options],
      resolution: q.resolution,
      ...offerOf(cfg, tierModel(q)),
    })),
  };
}

/**
 * The GET /models body (seed 2.1). previewBase is the absolute URL where spec/previews/ is
 * served (no trailing slash needed). The result is cached per previewBase and deep-frozen.
 */
export function buildCatalog(previewBase: string, cfg: EngineConfig): CatalogResponse {
  return deepFreeze(buildCatalogOnce(previewBase, cfg));
}

function buildCatalogOnce(previewBase: string, cfg: EngineConfig): CatalogResponse {
  const { catalog } = data().sources;
  return {
    object: 'catalog',
    local_fallback: cfg.provider.localFallback,
    static_ads: catalog.static_ads.map((t) => ({
      slug: t.slug,
      title: t.title,
      preview_image_url: joinUrl(previewBase, t.preview_image),
      section: t.section,
      default_aspect_ratio: t.default_aspect_ratio,
      default_resolution: t.default_resolution,
      presets: presetRefs(previewBase, t.presets),
      ...offerOf(cfg, staticTemplateModel(t)),
    })),
    video_ads: catalog.video_ads.map((t) => videoItem(previewBase, t, cfg)),
    ugc_ads: catalog.ugc_ads.map((t) => videoItem(previewBase, t, cfg)),
    ai_models: catalog.ai_models.map((m) => ({
      slug: m.slug,
      title: m.title,
      description: m.description,
      default_variant_id: m.default_variant_id,
      variants: m.variants.map((v) => ({
        id: v.id,
        label: v.label,
        model: v.model,
        input_mode: ['text', ...INPUT_MODES.filter((m) => m !== 'text' && v.input_mode.includes(m))].join('+'),
        ...(v.requires ? { required_inputs: [...v.requires] } : {}),
        default_aspect_ratio: v.default_aspect_ratio,
        default_duration: v.default_duration,
        default_resolution: v.default_resolution,
        ...offerOf(cfg, v),
      })),
    })),
  };
}

/** reference_template_targets of GET /assets (seed 2.2), derived from the catalog. Frozen. */
export function referenceTemplateTargets(): ReferenceTemplateTarget[] {
  if (!targetsCache) {
    const { catalog } = data().sources;
    targetsCache = deepFreeze([
      ...catalog.static_ads.map((t) => ({
        template_slug: t.slug,
        template_category: 'static-ads' as const,
        label: t.title,
        accepts_media_kinds: ['image'] as MediaKind[],
      })),
      ...[...catalog.video_ads, ...catalog.ugc_ads].map((t) => ({
        template_slug: t.slug,
        template_category: 'video-templates' as const,
        label: t.title,
        accepts_media_kinds: ['video', 'image'] as MediaKind[],
      })),
      ...catalog.slideshow_templates.map((s) => ({
        template_slug: s.slug,
        template_category: 'slideshow-carousel' as const,
        label: s.title,
        accepts_media_kinds: [...s.accepts_media_kinds],
      })),
    ]);
  }
  return targetsCache;
}

/** Built-in voices in the seed 2.2 voice shape. Cached per previewBase, frozen. */
export function builtInVoices(previewBase: string): VoiceItem[] {
  return memo(voicesCache, previewBase, () =>
    data().sources.voices.map((v) => ({
      id: v.id,
      name: v.name,
      preview_url: joinUrl(previewBase, v.preview),
      source: v.source,
      locale: [...v.locale],
      credits_9_16: v.credits_9_16,
      credits_16_9: v.credits_16_9,
      gender: v.gender,
      age: v.age,
      style_tags: [...v.style_tags],
      recommendation_summary: v.recommendation_summary,
    })),
  );
}

/** Public avatars in the seed 2.2 avatar shape. Cached per previewBase, frozen. */
export function publicAvatars(previewBase: string): AvatarItem[] {
  return memo(avatarsCache, previewBase, () =>
    data().sources.avatars.map((a) => ({
      id: a.id,
      name: a.name,
      imageUrl: joinUrl(previewBase, a.image),
      videoUrl: joinUrl(previewBase, a.video),
      isCustom: false,
    })),
  );
}

// Lookups (raw, frozen data including the internal pricing fields).

export function findTemplate(slug: string): RawTemplate | undefined {
  return data().templates.get(slug);
}

export function findAiModel(slug: string): RawAiModel | undefined {
  return data().aiModels.get(slug);
}

export function findSlideshowTemplate(slug: string): RawSlideshowTemplate | undefined {
  return data().slideshowTemplates.get(slug);
}

export function findVoice(id: string): RawVoice | undefined {
  return data().voices.get(id);
}

/** The first built-in English voice of a gender (a presenter's voice), else the first built-in voice. */
export function voiceForGender(gender: string | undefined): RawVoice {
  const voices = data().sources.voices;
  const english = voices.filter((v) => v.locale.some((l) => l.startsWith('en')));
  return english.find((v) => v.gender === gender) ?? english[0] ?? voices[0];
}

/** The slideshow price rule (spec/catalog.yaml slideshow_pricing): credits_per_slide × slide_count. */
export function slideshowCredits(slideCount: number): number {
  return data().sources.catalog.slideshow_pricing.credits_per_slide * slideCount;
}

export function findPublicAvatar(id: string): RawAvatar | undefined {
  return data().avatars.get(id);
}
