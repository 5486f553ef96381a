// The catalog data rules JSON Schema cannot say, and the one way catalog data problems read.
//
// spec/catalog-data.schema.yaml holds every structural rule of spec/catalog.yaml, voices.yaml
// and avatars.yaml (keys, types, vocabularies, patterns, lengths, counts, ranges);
// generated/catalog-validators.cjs checks them. The rest is here: uniqueness of slugs and ids,
// cross-references, pricing arithmetic, ascending durations, workflow coverage.
// src/services/catalog/catalog-data.ts runs both at load (plus the preview files on disk), and
// `npm run generate` runs both on the committed files.
//
// A problem reads `<file> <JSON pointer> <message>`, e.g.
//   spec/catalog.yaml /static_ads/3/presets/1/id must match pattern "^[a-z0-9]+(?:-[a-z0-9]+)*$"; is "Bad Id"
//
// Nothing here imports generated/ at run time: scripts/generate.ts uses this module to build it.

import type { ErrorObject } from 'ajv';
import type { CatalogSources, RawAiVariant, RawTemplate } from './catalog-data.ts';

/** The data files, by key of CatalogSources, with the schema definition each must satisfy. */
export const CATALOG_FILES = {
  catalog: { file: 'spec/catalog.yaml', definition: 'CatalogDocument' },
  voices: { file: 'spec/voices.yaml', definition: 'VoicesDocument' },
  avatars: { file: 'spec/avatars.yaml', definition: 'AvatarsDocument' },
} as const;

const MAX_LISTED = 50;

/** Invalid catalog data: every problem found, each naming file and JSON path. */
export class CatalogDataError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    const more = problems.length > MAX_LISTED ? `\n  … and ${problems.length - MAX_LISTED} more` : '';
    super(
      problems.length === 1
        ? `catalog data: ${problems[0]}`
        : `catalog data: ${problems.length} problems:\n  ${problems.slice(0, MAX_LISTED).join('\n  ')}${more}`,
    );
    this.name = 'CatalogDataError';
    this.problems = problems;
  }
}

/** JSON pointer of the given keys and indexes: pointer('static_ads', 3, 'slug') → /static_ads/3/slug. */
export function pointer(...parts: (string | number)[]): string {
  return parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function valueAt(data: unknown, path: string): unknown {
  let node = data;
  for (const raw of path.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/** AJV errors of one document as problem lines (deduplicated, in AJV's order). */
export function schemaProblems(file: string, data: unknown, errors: readonly ErrorObject[]): string[] {
  const out = new Set<string>();
  for (const e of errors) {
    let path = e.instancePath;
    let message = e.message ?? `fails ${e.keyword}`;
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'additionalProperties':
        path += pointer(String(params.additionalProperty));
        message = 'is not an allowed key';
        break;
      case 'enum':
        message = `must be one of ${(params.allowedValues as unknown[]).map(show).join(', ')}; is ${show(valueAt(data, path))}`;
        break;
      case 'const':
        message = `must be ${show(params.allowedValue)}; is ${show(valueAt(data, path))}`;
        break;
      case 'contains':
        // The rule is in the schema's description there (e.g. quality_tiers: one "high" tier).
        message += ` (schema ${e.schemaPath})`;
        break;
      case 'discriminator':
        message += `; is ${show(params.tagValue)}`;
        break;
      case 'type':
      case 'pattern':
      case 'minimum':
      case 'maximum':
      case 'minLength':
      case 'maxLength':
        message += `; is ${show(valueAt(data, path))}`;
        break;
    }
    out.add(`${file} ${path || '(root)'} ${message}`);
  }
  return [...out];
}

type Report = (path: string, message: string) => void;

/** Calls report(index, id, firstIndex) for each id that repeats an earlier one. */
function duplicates(ids: readonly string[], report: (index: number, id: string, first: number) => void): void {
  const first = new Map<string, number>();
  ids.forEach((id, k) => {
    const f = first.get(id);
    if (f === undefined) first.set(id, k);
    else report(k, id, f);
  });
}

/** The duration and price rules of a quality tier or a video variant at `path`. */
function durationAndPrice(
  report: Report,
  path: string,
  u: { default_duration: number; duration_options: number[]; credits: number; credits_per_second: number },
): void {
  const options = u.duration_options;
  if (!options.includes(u.default_duration)) {
    report(`${path}/default_duration`, `${u.default_duration} is not one of duration_options [${options.join(', ')}]`);
  }
  if (options.some((d, k) => k > 0 && d <= options[k - 1])) {
    report(`${path}/duration_options`, `must be strictly ascending; is [${options.join(', ')}]`);
  }
  if (u.credits !== u.credits_per_second * u.default_duration) {
    report(
      `${path}/credits`,
      `${u.credits} must equal credits_per_second × default_duration = ${u.credits_per_second} × ${u.default_duration} = ${u.credits_per_second * u.default_duration}`,
    );
  }
}

/** A local preview costs less than every catalog entry it can stand in for (at every duration). */
function previewBelowPrices(cat: Report, { catalog }: CatalogSources): void {
  const { image, video_per_second: perSecond } = catalog.local_preview_pricing;
  const video = (path: string, u: { credits: number; credits_per_second: number; default_duration: number }) => {
    if (perSecond >= u.credits_per_second || perSecond * u.default_duration >= u.credits)
      cat(path, `costs ${u.credits_per_second} credits per second; local_preview_pricing.video_per_second (${perSecond}) must be below it`);
  };
  catalog.static_ads.forEach((t, i) => {
    if (image >= t.credits) cat(pointer('static_ads', i, 'credits'), `${t.credits} must be above local_preview_pricing.image (${image})`);
  });
  for (const section of ['video_ads', 'ugc_ads'] as const)
    catalog[section].forEach((t, i) => {
      t.quality_tiers.forEach((q, j) => {
        video(pointer(section, i, 'quality_tiers', j), q);
      });
    });
  catalog.ai_models.forEach((m, i) => {
    m.variants.forEach((v, j) => {
      const path = pointer('ai_models', i, 'variants', j);
      if (v.output === 'video') video(path, v);
      else if (image >= v.credits) cat(`${path}/credits`, `${v.credits} must be above local_preview_pricing.image (${image})`);
    });
  });
}

/**
 * Each made_by names variants that exist, make the template's output, take an image (image) or
 * need none (text), and (tiers) name the tier's model and take every duration the tier offers.
 */
function madeByProblems(cat: Report, { catalog }: CatalogSources): void {
  const check = (
    path: string,
    by: { model: string; text?: string; image?: string },
    output: 'image' | 'video',
    tier?: { model: string; duration_options: number[] },
  ) => {
    const m = catalog.ai_models.find((x) => x.slug === by.model);
    if (!m) return cat(`${path}/model`, `"${by.model}" is not an ai_models slug`);
    for (const use of ['text', 'image'] as const) {
      const id = by[use];
      if (id === undefined) continue;
      const v = m.variants.find((x) => x.id === id);
      const at = `${path}/${use}`;
      if (!v) cat(at, `"${id}" is not a variant of ${m.slug}`);
      else if (v.output !== output) cat(at, `variant ${id} makes ${v.output}, not ${output}`);
      else if (use === 'image' && !v.input_mode.includes('image')) cat(at, `variant ${id} takes no image`);
      else if (use === 'text' && v.requires?.length)
        cat(at, `variant ${id} requires ${v.requires.join(', ')}; a text variant must need none`);
      else if (tier && v.model !== tier.model) cat(at, `variant ${id} is ${v.model}, not the tier's model ${tier.model}`);
      else if (tier && v.output === 'video' && tier.duration_options.some((d) => !(v.duration_options ?? []).includes(d)))
        cat(
          at,
          `variant ${id} takes durations [${(v.duration_options ?? []).join(', ')}], not all of the tier's [${tier.duration_options.join(', ')}]`,
        );
    }
  };
  catalog.static_ads.forEach((t, i) => {
    if (t.made_by) check(pointer('static_ads', i, 'made_by'), t.made_by, 'image');
  });
  for (const section of ['video_ads', 'ugc_ads'] as const)
    catalog[section].forEach((t, i) => {
      t.quality_tiers.forEach((q, j) => {
        if (q.made_by) check(pointer(section, i, 'quality_tiers', j, 'made_by'), q.made_by, 'video', q);
      });
    });
}

/** The workflows the AI models must cover between them (the API documents each). */
const WORKFLOWS: Array<[string, (v: RawAiVariant) => boolean]> = [
  ['text→image', (v) => v.output === 'image' && !v.input_mode.includes('image')],
  ['image→image', (v) => v.output === 'image' && v.input_mode.includes('image')],
  ['text→video', (v) => v.output === 'video' && v.input_mode.length === 1 && v.input_mode.includes('text')],
  [
    'image→video',
    (v) => v.output === 'video' && v.input_mode.includes('image') && !v.input_mode.includes('video') && !v.input_mode.includes('audio'),
  ],
  ['video→video edit', (v) => v.output === 'video' && v.input_mode.includes('video') && v.input_mode.includes('text')],
  ['motion control', (v) => v.output === 'video' && v.input_mode.includes('video') && v.input_mode.includes('image')],
  ['audio-driven', (v) => v.output === 'video' && v.input_mode.includes('audio')],
];

/**
 * The rules of schema-valid catalog data that JSON Schema cannot express. Returns the problems
 * (empty when the data is consistent). Preview files on disk are checked by catalog-data.ts.
 */
export function crossCheckProblems(sources: CatalogSources): string[] {
  const problems: string[] = [];
  const inFile =
    (file: string): Report =>
    (path, message) =>
      problems.push(`${file} ${path} ${message}`);
  const cat = inFile(CATALOG_FILES.catalog.file);
  const { catalog } = sources;

  // Slugs are unique across every section (template_slug / model_slug / reference targets).
  const owner = new Map<string, string>();
  for (const section of ['static_ads', 'video_ads', 'ugc_ads', 'ai_models', 'slideshow_templates'] as const) {
    catalog[section].forEach((item, i) => {
      const path = pointer(section, i, 'slug');
      const prev = owner.get(item.slug);
      if (prev) cat(path, `slug "${item.slug}" is already used at ${prev}`);
      else owner.set(item.slug, path);
    });
  }

  const templates = (section: 'static_ads' | 'video_ads' | 'ugc_ads', list: readonly RawTemplate[]) =>
    list.forEach((t, i) => {
      duplicates(
        t.presets.map((p) => p.id),
        (j, id, first) =>
          cat(
            pointer(section, i, 'presets', j, 'id'),
            `preset id "${id}" of ${t.slug} is already used at ${pointer(section, i, 'presets', first)}`,
          ),
      );
      if (t.section === 'static_ads') return;
      const high = t.quality_tiers.find((q) => q.id === 'high');
      if (high && high.resolution !== t.default_resolution) {
        cat(pointer(section, i, 'default_resolution'), `${t.default_resolution} must equal the high tier's resolution ${high.resolution}`);
      }
      t.quality_tiers.forEach((q, j) => {
        durationAndPrice(cat, pointer(section, i, 'quality_tiers', j), q);
      });
    });
  templates('static_ads', catalog.static_ads);
  templates('video_ads', catalog.video_ads);
  templates('ugc_ads', catalog.ugc_ads);

  catalog.ai_models.forEach((m, i) => {
    const ids = m.variants.map((v) => v.id);
    duplicates(ids, (j, id, first) =>
      cat(
        pointer('ai_models', i, 'variants', j, 'id'),
        `variant id "${id}" of ${m.slug} is already used at ${pointer('ai_models', i, 'variants', first)}`,
      ),
    );
    if (!ids.includes(m.default_variant_id)) {
      cat(
        pointer('ai_models', i, 'default_variant_id'),
        `"${m.default_variant_id}" is not a variant of ${m.slug} (one of: ${ids.join(', ')})`,
      );
    }
    m.variants.forEach((v, j) => {
      if (v.output === 'video') durationAndPrice(cat, pointer('ai_models', i, 'variants', j), v);
      for (const r of v.requires ?? []) {
        if (!v.input_mode.includes(r))
          cat(
            pointer('ai_models', i, 'variants', j, 'requires'),
            `"${r}" is required but is not in input_mode (${v.input_mode.join(', ')})`,
          );
      }
      const p = v.provider;
      if (p?.name === 'openai' && v.output !== 'image')
        cat(pointer('ai_models', i, 'variants', j, 'provider'), 'openai makes images only (Images API)');
      if (p?.version && p.name !== 'replicate')
        cat(pointer('ai_models', i, 'variants', j, 'provider', 'version'), 'a version applies to replicate only');
      if ((p?.duration_format === 'frames') !== (p?.frame_rate !== undefined))
        cat(pointer('ai_models', i, 'variants', j, 'provider', 'frame_rate'), 'is given with duration_format frames, and only then');
      if (p?.name === 'replicate' && !p.version && p.model.split('/').length !== 2) {
        cat(pointer('ai_models', i, 'variants', j, 'provider', 'model'), `replicate models are "owner/name", got "${p.model}"`);
      }
    });
  });

  previewBelowPrices(cat, sources);
  madeByProblems(cat, sources);

  const variants = catalog.ai_models.flatMap((m) => m.variants);
  for (const [name, covers] of WORKFLOWS) {
    if (!variants.some(covers)) cat('/ai_models', `no variant covers the ${name} workflow`);
  }

  duplicates(
    sources.voices.map((v) => v.id),
    (i, id, first) =>
      inFile(CATALOG_FILES.voices.file)(pointer('voices', i, 'id'), `voice id "${id}" is already used at ${pointer('voices', first)}`),
  );
  duplicates(
    sources.avatars.map((a) => a.id),
    (i, id, first) =>
      inFile(CATALOG_FILES.avatars.file)(pointer('avatars', i, 'id'), `avatar id "${id}" is already used at ${pointer('avatars', first)}`),
  );
  return problems;
}
