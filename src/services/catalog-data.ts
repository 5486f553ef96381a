// Built-in catalog and asset data: spec/catalog.yaml, spec/voices.yaml, spec/avatars.yaml.
//
// The YAML files are read once (on first use), validated, and turned into the public
// shapes of seed 2.1 (GET /models) and 2.2 (GET /assets). Relative preview paths in the
// data become `${previewBase}/${path}`; the SVG files live in spec/previews/ (see
// PREVIEWS_DIR_URL) and are produced by scripts/make-previews.ts.
//
// Pricing data (see the comment at the top of spec/catalog.yaml): a generation costs
// `credits` at the default duration, or `credits_per_second × duration` otherwise, times
// request_count; static ads and image variants cost `credits` per image.
//
// Erasable TypeScript only (runs directly on Node 24 type stripping).

import type { components } from '../../generated/openapi.d.ts';
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

export const CATALOG_URL = new URL('../../spec/catalog.yaml', import.meta.url);
export const VOICES_URL = new URL('../../spec/voices.yaml', import.meta.url);
export const AVATARS_URL = new URL('../../spec/avatars.yaml', import.meta.url);
/** Directory holding the preview files; serve it at the previewBase given to the builders. */
export const PREVIEWS_DIR_URL = new URL('../../spec/previews/', import.meta.url);

// ---------------------------------------------------------------------------------------
// Vocabularies
// ---------------------------------------------------------------------------------------

export const TEMPLATE_ASPECT_RATIOS = ['1:1', '9:16', '16:9', '4:5'] as const;
export type AspectRatio = (typeof TEMPLATE_ASPECT_RATIOS)[number];
export const VARIANT_ASPECT_RATIOS = [...TEMPLATE_ASPECT_RATIOS, 'auto'] as const;
export type VariantAspectRatio = (typeof VARIANT_ASPECT_RATIOS)[number];

export const TEMPLATE_SECTIONS = ['static_ads', 'video_ads', 'ugc_ads'] as const;
export type TemplateSection = (typeof TEMPLATE_SECTIONS)[number];
export type VideoTemplateSection = 'video_ads' | 'ugc_ads';
export type VideoTemplateType = 'video_ad' | 'ugc_ad';
const SECTION_TYPE: Record<VideoTemplateSection, VideoTemplateType> = {
  video_ads: 'video_ad',
  ugc_ads: 'ugc_ad',
};

export const QUALITY_TIER_IDS = ['high', 'low'] as const;
export type QualityTierId = (typeof QUALITY_TIER_IDS)[number];

export const INPUT_MODES = ['text', 'image', 'video', 'audio'] as const;
export type InputMode = (typeof INPUT_MODES)[number];
export const OUTPUT_KINDS = ['image', 'video'] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];

export const MEDIA_KINDS = ['image', 'slideshow', 'video'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];
export type TemplateCategory = 'static-ads' | 'video-templates' | 'slideshow-carousel';

export const GENDERS = ['female', 'male', 'neutral'] as const;
export type Gender = (typeof GENDERS)[number];
export const AGES = ['young', 'middle_aged', 'old'] as const;
export type Age = (typeof AGES)[number];

const STATIC_RESOLUTIONS = ['1K', '2K'] as const;
const IMAGE_RESOLUTIONS = ['1K', '2K', '4K'] as const;
const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p'] as const;

export const MIN_DURATION = 1;
export const MAX_DURATION = 30;

// ---------------------------------------------------------------------------------------
// Raw data types (what the YAML files hold, after validation)
// ---------------------------------------------------------------------------------------

export interface RawPreset {
  id: string;
  label: string;
  preview_image: string;
  poster_image: string;
}

export interface RawTemplateBase {
  slug: string;
  title: string;
  preview_image: string;
  default_aspect_ratio: AspectRatio;
  default_resolution: string;
  presets: RawPreset[];
}

export interface RawStaticTemplate extends RawTemplateBase {
  section: 'static_ads';
  /** Credits per generated image. */
  credits: number;
}

export interface RawQualityTier {
  id: QualityTierId;
  label: string;
  model: string;
  default_duration: number;
  duration_options: number[];
  resolution: string;
  /** Credits per generation at default_duration. */
  credits: number;
  /** Credits per second when the requested duration differs from default_duration. Internal. */
  credits_per_second: number;
}

export interface RawVideoTemplate extends RawTemplateBase {
  section: VideoTemplateSection;
  type: VideoTemplateType;
  quality_tiers: RawQualityTier[];
}

export type RawTemplate = RawStaticTemplate | RawVideoTemplate;

export interface RawAiVariant {
  id: string;
  label: string;
  model: string;
  input_mode: InputMode[];
  /** Internal: what the variant produces. */
  output: OutputKind;
  default_aspect_ratio: VariantAspectRatio;
  /** Seconds; always 1 for image variants (duration is ignored for images). */
  default_duration: number;
  /** Internal, video variants only: allowed durations. */
  duration_options?: number[];
  default_resolution: string;
  /** Credits per image, or per video at default_duration. */
  credits: number;
  /** Internal, video variants only. */
  credits_per_second?: number;
}

export interface RawAiModel {
  slug: string;
  title: string;
  description: string;
  default_variant_id: string;
  variants: RawAiVariant[];
}

export interface RawSlideshowTemplate {
  slug: string;
  title: string;
  preview_image: string;
  /** Only drives the preview image shape. */
  default_aspect_ratio: AspectRatio;
  accepts_media_kinds: MediaKind[];
}

export interface RawCatalog {
  static_ads: RawStaticTemplate[];
  video_ads: RawVideoTemplate[];
  ugc_ads: RawVideoTemplate[];
  ai_models: RawAiModel[];
  slideshow_templates: RawSlideshowTemplate[];
}

export interface RawVoice {
  id: string;
  name: string;
  /** Relative path of the spoken sample (voices/<id>.wav), made on first request (src/media/catalog-samples.ts). */
  preview: string;
  source: 'built_in';
  locale: string[];
  credits_9_16: number;
  credits_16_9: number;
  gender: Gender;
  age: Age;
  style_tags: string[];
  recommendation_summary: string;
  /** Internal: espeak-ng voice name (language[+variant]) for local TTS. */
  espeak_voice: string;
}

export interface RawAvatar {
  id: string;
  name: string;
  /** Relative SVG path (avatars/<id>.svg). */
  image: string;
  /** Relative video path (avatars/<id>.mp4), made on first request (src/media/catalog-samples.ts). */
  video: string;
  description: string;
  gender: Gender;
  style_tags: string[];
}

export interface CatalogSources {
  catalog: RawCatalog;
  voices: RawVoice[];
  avatars: RawAvatar[];
}

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
// Validation helpers
// ---------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const LOCALE = /^[a-z]{2,3}(?:-(?:[A-Z]{2}|[0-9]{3}))?$/;
const ESPEAK_VOICE = /^[a-z]{2,3}(?:-[a-z0-9]+)*(?:\+[A-Za-z0-9_-]+)?$/;
const REL_PATH = /^[a-z0-9][a-z0-9_-]*(?:\/[a-z0-9][a-z0-9._-]*)*$/;

function fail(where: string, message: string): never {
  throw new Error(`catalog data: ${where}: ${message}`);
}

/** `[slug]` when the raw entry carries a usable key, else `[index]`: names entries in errors. */
function entry(raw: unknown, key: string, index: number): string {
  const v = isObj(raw) ? raw[key] : undefined;
  return typeof v === 'string' && v !== '' ? `[${v}]` : `[${index}]`;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, where: string, required: readonly string[], optional: readonly string[] = []): Obj {
  if (!isObj(v)) fail(where, 'must be a mapping');
  for (const key of Object.keys(v)) {
    if (!required.includes(key) && !optional.includes(key)) fail(where, `unknown field "${key}"`);
  }
  for (const key of required) {
    if (!(key in v)) fail(where, `missing field "${key}"`);
  }
  return v;
}

function arr(o: Obj, key: string, where: string, min: number, max: number): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) fail(where, `${key} must be a list`);
  if (v.length < min || v.length > max) fail(where, `${key} must have ${min}..${max} items, has ${v.length}`);
  return v;
}

function str(o: Obj, key: string, where: string, max = 2000): string {
  const v = o[key];
  if (typeof v !== 'string' || v.trim() === '') fail(where, `${key} must be a non-empty string`);
  if (v.length > max) fail(where, `${key} must be at most ${max} characters`);
  return v;
}

function kebab(o: Obj, key: string, where: string, max: number): string {
  const v = str(o, key, where, max);
  if (!KEBAB.test(v)) fail(where, `${key} "${v}" must be kebab-case`);
  return v;
}

function int(o: Obj, key: string, where: string, min: number, max: number): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(where, `${key} must be an integer`);
  if (v < min || v > max) fail(where, `${key} must be within ${min}..${max}, is ${v}`);
  return v;
}

function oneOf<T extends string>(o: Obj, key: string, where: string, values: readonly T[]): T {
  const v = o[key];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    fail(where, `${key} must be one of ${values.join(', ')}, is ${JSON.stringify(v)}`);
  }
  return v as T;
}

function subset<T extends string>(o: Obj, key: string, where: string, values: readonly T[]): T[] {
  const list = arr(o, key, where, 1, values.length);
  const seen = new Set<string>();
  for (const v of list) {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      fail(where, `${key} items must be among ${values.join(', ')}, found ${JSON.stringify(v)}`);
    }
    if (seen.has(v)) fail(where, `${key} repeats "${v}"`);
    seen.add(v);
  }
  return list as T[];
}

function strList(o: Obj, key: string, where: string, pattern: RegExp, min: number, max: number): string[] {
  const list = arr(o, key, where, min, max);
  const seen = new Set<string>();
  for (const v of list) {
    if (typeof v !== 'string' || !pattern.test(v)) fail(where, `${key} item ${JSON.stringify(v)} is malformed`);
    if (seen.has(v)) fail(where, `${key} repeats "${v}"`);
    seen.add(v);
  }
  return list as string[];
}

function durations(o: Obj, key: string, where: string): number[] {
  const list = arr(o, key, where, 1, MAX_DURATION);
  let prev = 0;
  for (const v of list) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_DURATION || v > MAX_DURATION) {
      fail(where, `${key} items must be integers within ${MIN_DURATION}..${MAX_DURATION}, found ${JSON.stringify(v)}`);
    }
    if (v <= prev) fail(where, `${key} must be strictly ascending`);
    prev = v;
  }
  return list as number[];
}

function relPath(o: Obj, key: string, where: string, extensions: readonly string[]): string {
  const v = str(o, key, where, 500);
  if (!REL_PATH.test(v) || v.includes('..')) fail(where, `${key} "${v}" must be a relative path like dir/name.ext`);
  if (!extensions.some((ext) => v.endsWith(ext))) fail(where, `${key} "${v}" must end with ${extensions.join(' or ')}`);
  return v;
}

// ---------------------------------------------------------------------------------------
// Parsers
// ---------------------------------------------------------------------------------------

function readYaml(url: URL): unknown {
  const name = url.pathname.split('/').pop() ?? String(url);
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (err) {
    throw new Error(`catalog data: cannot read spec/${name}: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new Error(`catalog data: spec/${name} is not valid YAML: ${(err as Error).message}`);
  }
}

function parsePresets(o: Obj, where: string): RawPreset[] {
  const seen = new Set<string>();
  return arr(o, 'presets', where, 2, 4).map((raw, i) => {
    let w = `${where}.presets${entry(raw, 'id', i)}`;
    const p = obj(raw, w, ['id', 'label', 'preview_image', 'poster_image']);
    const id = kebab(p, 'id', w, 220);
    w = `${where}.presets[${id}]`;
    if (seen.has(id)) fail(w, `duplicate preset id "${id}" within the template`);
    seen.add(id);
    return {
      id,
      label: str(p, 'label', w, 160),
      preview_image: relPath(p, 'preview_image', w, ['.svg']),
      poster_image: relPath(p, 'poster_image', w, ['.svg']),
    };
  });
}

function parseTier(raw: unknown, w: string): RawQualityTier {
  const t = obj(raw, w, [
    'id', 'label', 'model', 'default_duration', 'duration_options', 'resolution', 'credits', 'credits_per_second',
  ]);
  const id = oneOf(t, 'id', w, QUALITY_TIER_IDS);
  const default_duration = int(t, 'default_duration', w, MIN_DURATION, MAX_DURATION);
  const duration_options = durations(t, 'duration_options', w);
  if (!duration_options.includes(default_duration)) {
    fail(w, `default_duration ${default_duration} is not in duration_options [${duration_options.join(', ')}]`);
  }
  const credits = int(t, 'credits', w, 1, 100000);
  const credits_per_second = int(t, 'credits_per_second', w, 1, 10000);
  if (credits !== credits_per_second * default_duration) {
    fail(w, `credits ${credits} must equal credits_per_second ${credits_per_second} × default_duration ${default_duration}`);
  }
  return {
    id,
    label: str(t, 'label', w, 160),
    model: str(t, 'model', w, 160),
    default_duration,
    duration_options,
    resolution: oneOf(t, 'resolution', w, VIDEO_RESOLUTIONS),
    credits,
    credits_per_second,
  };
}

function parseStaticTemplate(raw: unknown, index: number): RawStaticTemplate {
  const base = `catalog.yaml static_ads${entry(raw, 'slug', index)}`;
  const o = obj(raw, base, [
    'slug', 'title', 'preview_image', 'section', 'default_aspect_ratio', 'default_resolution', 'credits', 'presets',
  ]);
  const slug = kebab(o, 'slug', base, 160);
  const w = `catalog.yaml static_ads[${slug}]`;
  if (o.section !== 'static_ads') fail(w, `section must be "static_ads", is ${JSON.stringify(o.section)}`);
  return {
    slug,
    title: str(o, 'title', w, 160),
    preview_image: relPath(o, 'preview_image', w, ['.svg']),
    section: 'static_ads',
    default_aspect_ratio: oneOf(o, 'default_aspect_ratio', w, TEMPLATE_ASPECT_RATIOS),
    default_resolution: oneOf(o, 'default_resolution', w, STATIC_RESOLUTIONS),
    credits: int(o, 'credits', w, 1, 10000),
    presets: parsePresets(o, w),
  };
}

function parseVideoTemplate(raw: unknown, section: VideoTemplateSection, index: number): RawVideoTemplate {
  const base = `catalog.yaml ${section}${entry(raw, 'slug', index)}`;
  const o = obj(raw, base, [
    'slug', 'title', 'preview_image', 'section', 'type', 'default_aspect_ratio', 'default_resolution',
    'quality_tiers', 'presets',
  ]);
  const slug = kebab(o, 'slug', base, 160);
  const w = `catalog.yaml ${section}[${slug}]`;
  if (o.section !== section) fail(w, `section must be "${section}", is ${JSON.stringify(o.section)}`);
  if (o.type !== SECTION_TYPE[section]) fail(w, `type must be "${SECTION_TYPE[section]}", is ${JSON.stringify(o.type)}`);
  const quality_tiers = arr(o, 'quality_tiers', w, 2, 2).map((t, i) => parseTier(t, `${w}.quality_tiers${entry(t, 'id', i)}`));
  for (const id of QUALITY_TIER_IDS) {
    if (quality_tiers.filter((t) => t.id === id).length !== 1) {
      fail(w, `quality_tiers must hold exactly one "high" and one "low" tier`);
    }
  }
  const default_resolution = oneOf(o, 'default_resolution', w, VIDEO_RESOLUTIONS);
  const high = quality_tiers.find((t) => t.id === 'high');
  if (high && high.resolution !== default_resolution) {
    fail(w, `default_resolution ${default_resolution} must match the high tier's resolution ${high.resolution}`);
  }
  return {
    slug,
    title: str(o, 'title', w, 160),
    preview_image: relPath(o, 'preview_image', w, ['.svg']),
    section,
    type: SECTION_TYPE[section],
    default_aspect_ratio: oneOf(o, 'default_aspect_ratio', w, TEMPLATE_ASPECT_RATIOS),
    default_resolution,
    quality_tiers,
    presets: parsePresets(o, w),
  };
}

function parseVariant(raw: unknown, w: string): RawAiVariant {
  const v = obj(
    raw,
    w,
    ['id', 'label', 'model', 'input_mode', 'output', 'default_aspect_ratio', 'default_duration', 'default_resolution', 'credits'],
    ['duration_options', 'credits_per_second'],
  );
  const id = kebab(v, 'id', w, 160);
  const output = oneOf(v, 'output', w, OUTPUT_KINDS);
  const common = {
    id,
    label: str(v, 'label', w, 160),
    model: str(v, 'model', w, 160),
    input_mode: subset(v, 'input_mode', w, INPUT_MODES),
    output,
    default_aspect_ratio: oneOf(v, 'default_aspect_ratio', w, VARIANT_ASPECT_RATIOS),
    credits: int(v, 'credits', w, 1, 100000),
  };
  if (output === 'image') {
    if ('duration_options' in v || 'credits_per_second' in v) {
      fail(w, 'image variants take no duration_options or credits_per_second');
    }
    return {
      ...common,
      default_duration: int(v, 'default_duration', w, 1, 1),
      default_resolution: oneOf(v, 'default_resolution', w, IMAGE_RESOLUTIONS),
    };
  }
  if (!('duration_options' in v) || !('credits_per_second' in v)) {
    fail(w, 'video variants need duration_options and credits_per_second');
  }
  const default_duration = int(v, 'default_duration', w, MIN_DURATION, MAX_DURATION);
  const duration_options = durations(v, 'duration_options', w);
  if (!duration_options.includes(default_duration)) {
    fail(w, `default_duration ${default_duration} is not in duration_options [${duration_options.join(', ')}]`);
  }
  const credits_per_second = int(v, 'credits_per_second', w, 1, 10000);
  if (common.credits !== credits_per_second * default_duration) {
    fail(w, `credits ${common.credits} must equal credits_per_second ${credits_per_second} × default_duration ${default_duration}`);
  }
  return {
    ...common,
    default_duration,
    duration_options,
    default_resolution: oneOf(v, 'default_resolution', w, VIDEO_RESOLUTIONS),
    credits_per_second,
  };
}

function parseAiModel(raw: unknown, index: number): RawAiModel {
  const base = `catalog.yaml ai_models${entry(raw, 'slug', index)}`;
  const o = obj(raw, base, ['slug', 'title', 'description', 'default_variant_id', 'variants']);
  const slug = kebab(o, 'slug', base, 160);
  const w = `catalog.yaml ai_models[${slug}]`;
  const variants = arr(o, 'variants', w, 1, 10).map((v, i) => parseVariant(v, `${w}.variants${entry(v, 'id', i)}`));
  const ids = new Set<string>();
  for (const v of variants) {
    if (ids.has(v.id)) fail(`${w}.variants[${v.id}]`, `duplicate variant id "${v.id}"`);
    ids.add(v.id);
  }
  const default_variant_id = str(o, 'default_variant_id', w, 160);
  if (!ids.has(default_variant_id)) {
    fail(w, `default_variant_id "${default_variant_id}" is not one of its variants (${[...ids].join(', ')})`);
  }
  return {
    slug,
    title: str(o, 'title', w, 160),
    description: str(o, 'description', w, 1000),
    default_variant_id,
    variants,
  };
}

function parseSlideshowTemplate(raw: unknown, index: number): RawSlideshowTemplate {
  const base = `catalog.yaml slideshow_templates${entry(raw, 'slug', index)}`;
  const o = obj(raw, base, ['slug', 'title', 'preview_image', 'default_aspect_ratio', 'accepts_media_kinds']);
  const slug = kebab(o, 'slug', base, 160);
  const w = `catalog.yaml slideshow_templates[${slug}]`;
  return {
    slug,
    title: str(o, 'title', w, 160),
    preview_image: relPath(o, 'preview_image', w, ['.svg']),
    default_aspect_ratio: oneOf(o, 'default_aspect_ratio', w, TEMPLATE_ASPECT_RATIOS),
    accepts_media_kinds: subset(o, 'accepts_media_kinds', w, MEDIA_KINDS),
  };
}

function parseCatalog(doc: unknown): RawCatalog {
  const o = obj(doc, 'catalog.yaml', ['static_ads', 'video_ads', 'ugc_ads', 'ai_models', 'slideshow_templates']);
  const catalog: RawCatalog = {
    static_ads: arr(o, 'static_ads', 'catalog.yaml', 1, 500).map(parseStaticTemplate),
    video_ads: arr(o, 'video_ads', 'catalog.yaml', 1, 500).map((t, i) => parseVideoTemplate(t, 'video_ads', i)),
    ugc_ads: arr(o, 'ugc_ads', 'catalog.yaml', 1, 500).map((t, i) => parseVideoTemplate(t, 'ugc_ads', i)),
    ai_models: arr(o, 'ai_models', 'catalog.yaml', 1, 500).map(parseAiModel),
    slideshow_templates: arr(o, 'slideshow_templates', 'catalog.yaml', 1, 500).map(parseSlideshowTemplate),
  };

  // Slugs are unique across every section (template_slug / model_slug / reference targets).
  const owner = new Map<string, string>();
  const sections = ['static_ads', 'video_ads', 'ugc_ads', 'ai_models', 'slideshow_templates'] as const;
  for (const section of sections) {
    for (const item of catalog[section]) {
      const prev = owner.get(item.slug);
      if (prev) fail(`catalog.yaml ${section}[${item.slug}]`, `slug "${item.slug}" is already used in ${prev}`);
      owner.set(item.slug, section);
    }
  }

  // The AI models must cover every input workflow the API documents.
  const variants = catalog.ai_models.flatMap((m) => m.variants);
  const has = (v: RawAiVariant, mode: InputMode): boolean => v.input_mode.includes(mode);
  const coverage: Array<[string, (v: RawAiVariant) => boolean]> = [
    ['text→image', (v) => v.output === 'image' && !has(v, 'image')],
    ['image→image', (v) => v.output === 'image' && has(v, 'image')],
    ['text→video', (v) => v.output === 'video' && v.input_mode.length === 1 && has(v, 'text')],
    ['image→video', (v) => v.output === 'video' && has(v, 'image') && !has(v, 'video') && !has(v, 'audio')],
    ['video→video edit', (v) => v.output === 'video' && has(v, 'video') && has(v, 'text')],
    ['motion control', (v) => v.output === 'video' && has(v, 'video') && has(v, 'image')],
    ['audio-driven', (v) => v.output === 'video' && has(v, 'audio')],
  ];
  for (const [name, test] of coverage) {
    if (!variants.some(test)) fail('catalog.yaml ai_models', `no variant covers the ${name} workflow`);
  }
  return catalog;
}

function parseVoices(doc: unknown): RawVoice[] {
  const o = obj(doc, 'voices.yaml', ['voices']);
  const seen = new Set<string>();
  return arr(o, 'voices', 'voices.yaml', 1, 1000).map((raw, i) => {
    const base = `voices.yaml voices${entry(raw, 'id', i)}`;
    const v = obj(raw, base, [
      'id', 'name', 'preview', 'source', 'locale', 'credits_9_16', 'credits_16_9', 'gender', 'age', 'style_tags',
      'recommendation_summary', 'espeak_voice',
    ]);
    const id = kebab(v, 'id', base, 160);
    const w = `voices.yaml voices[${id}]`;
    if (seen.has(id)) fail(w, `duplicate voice id "${id}"`);
    seen.add(id);
    const espeak_voice = str(v, 'espeak_voice', w, 80);
    if (!ESPEAK_VOICE.test(espeak_voice)) fail(w, `espeak_voice "${espeak_voice}" must look like "en-us" or "en-us+f3"`);
    return {
      id,
      name: str(v, 'name', w, 160),
      preview: relPath(v, 'preview', w, ['.wav', '.mp3', '.ogg']),
      source: oneOf(v, 'source', w, ['built_in'] as const),
      locale: strList(v, 'locale', w, LOCALE, 1, 20),
      credits_9_16: int(v, 'credits_9_16', w, 0, 100000),
      credits_16_9: int(v, 'credits_16_9', w, 0, 100000),
      gender: oneOf(v, 'gender', w, GENDERS),
      age: oneOf(v, 'age', w, AGES),
      style_tags: strList(v, 'style_tags', w, KEBAB, 1, 10),
      recommendation_summary: str(v, 'recommendation_summary', w, 500),
      espeak_voice,
    };
  });
}

function parseAvatars(doc: unknown): RawAvatar[] {
  const o = obj(doc, 'avatars.yaml', ['avatars']);
  const seen = new Set<string>();
  return arr(o, 'avatars', 'avatars.yaml', 1, 1000).map((raw, i) => {
    const base = `avatars.yaml avatars${entry(raw, 'id', i)}`;
    const a = obj(raw, base, ['id', 'name', 'image', 'video', 'description', 'gender', 'style_tags']);
    const id = kebab(a, 'id', base, 160);
    const w = `avatars.yaml avatars[${id}]`;
    if (seen.has(id)) fail(w, `duplicate avatar id "${id}"`);
    seen.add(id);
    return {
      id,
      name: str(a, 'name', w, 160),
      image: relPath(a, 'image', w, ['.svg']),
      video: relPath(a, 'video', w, ['.mp4', '.webm']),
      description: str(a, 'description', w, 500),
      gender: oneOf(a, 'gender', w, GENDERS),
      style_tags: strList(a, 'style_tags', w, KEBAB, 1, 10),
    };
  });
}

// ---------------------------------------------------------------------------------------
// Preview references (shared with scripts/make-previews.ts)
// ---------------------------------------------------------------------------------------

export type PreviewKind = 'template' | 'preset-preview' | 'preset-poster' | 'slideshow' | 'avatar';

export interface PreviewRef {
  /** Relative path under spec/previews/. */
  path: string;
  /** Data location that references it, for error messages. */
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
  const templates: RawTemplate[] = [...catalog.static_ads, ...catalog.video_ads, ...catalog.ugc_ads];
  for (const t of templates) {
    const w = `catalog.yaml ${t.section}[${t.slug}]`;
    const duration = t.section === 'static_ads' ? undefined : t.quality_tiers.find((q) => q.id === 'high')?.default_duration;
    const common = { section: t.section, aspect_ratio: t.default_aspect_ratio, slug: t.slug, title: t.title, duration };
    refs.push({ ...common, path: t.preview_image, where: `${w}.preview_image`, kind: 'template', seed: t.slug });
    for (const p of t.presets) {
      const pw = `${w}.presets[${p.id}]`;
      const seed = `${t.slug}/${p.id}`;
      refs.push({ ...common, path: p.preview_image, where: `${pw}.preview_image`, kind: 'preset-preview', seed, subtitle: p.label });
      refs.push({ ...common, path: p.poster_image, where: `${pw}.poster_image`, kind: 'preset-poster', seed, subtitle: p.label });
    }
  }
  for (const s of catalog.slideshow_templates) {
    refs.push({
      path: s.preview_image,
      where: `catalog.yaml slideshow_templates[${s.slug}].preview_image`,
      kind: 'slideshow',
      section: 'slideshow_templates',
      aspect_ratio: s.default_aspect_ratio,
      seed: s.slug,
      slug: s.slug,
      title: s.title,
    });
  }
  for (const a of sources.avatars) {
    refs.push({
      path: a.image,
      where: `avatars.yaml avatars[${a.id}].image`,
      kind: 'avatar',
      section: 'avatars',
      aspect_ratio: '4:5',
      seed: a.id,
      slug: a.id,
      title: a.name,
      subtitle: a.style_tags[0],
      gender: a.gender,
    });
  }
  return refs;
}

/**
 * Reads and validates the three YAML files (no caching). With checkPreviews (the default),
 * every referenced .svg must exist under spec/previews/.
 */
export function readCatalogSources(options: { checkPreviews?: boolean } = {}): CatalogSources {
  const sources: CatalogSources = {
    catalog: parseCatalog(readYaml(CATALOG_URL)),
    voices: parseVoices(readYaml(VOICES_URL)),
    avatars: parseAvatars(readYaml(AVATARS_URL)),
  };
  if (options.checkPreviews ?? true) {
    const owners = new Map<string, string>();
    for (const ref of referencedPreviews(sources)) {
      const prev = owners.get(ref.path);
      if (prev) fail(ref.where, `preview path "${ref.path}" is already used by ${prev}`);
      owners.set(ref.path, ref.where);
      if (!existsSync(new URL(ref.path, PREVIEWS_DIR_URL))) {
        fail(ref.where, `preview file spec/previews/${ref.path} does not exist (run node scripts/make-previews.ts)`);
      }
    }
  }
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
      templates: new Map<string, RawTemplate>(
        [...catalog.static_ads, ...catalog.video_ads, ...catalog.ugc_ads].map((t) => [t.slug, t]),
      ),
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

const catalogCache = new Map<string, CatalogResponse>();
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

function videoItem(base: string, t: RawVideoTemplate): VideoTemplateItem {
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
      credits: q.credits,
    })),
  };
}

/**
 * The GET /models body (seed 2.1). previewBase is the absolute URL where spec/previews/ is
 * served (no trailing slash needed). The result is cached per previewBase and deep-frozen.
 */
export function buildCatalog(previewBase: string): CatalogResponse {
  return memo(catalogCache, previewBase, () => {
    const { catalog } = data().sources;
    return {
      object: 'catalog',
      static_ads: catalog.static_ads.map((t) => ({
        slug: t.slug,
        title: t.title,
        preview_image_url: joinUrl(previewBase, t.preview_image),
        section: t.section,
        default_aspect_ratio: t.default_aspect_ratio,
        default_resolution: t.default_resolution,
        presets: presetRefs(previewBase, t.presets),
        credits: t.credits,
      })),
      video_ads: catalog.video_ads.map((t) => videoItem(previewBase, t)),
      ugc_ads: catalog.ugc_ads.map((t) => videoItem(previewBase, t)),
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
          default_aspect_ratio: v.default_aspect_ratio,
          default_duration: v.default_duration,
          default_resolution: v.default_resolution,
          credits: v.credits,
        })),
      })),
    };
  });
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

export function findPublicAvatar(id: string): RawAvatar | undefined {
  return data().avatars.get(id);
}
