// The catalog data files are checked by their JSON Schema (spec/catalog-data.schema.yaml, compiled
// into generated/catalog-validators.cjs) and by the cross-checks of src/services/catalog/catalog-checks.ts.
// Broken documents go through the real loader (readCatalogSources with injected documents) and
// through the generator's own validation (buildCatalogArtifacts); each must be refused with a
// problem naming the file and the JSON path of the fault.
import fs from 'node:fs';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { buildCatalogArtifacts, type CatalogDataFile } from '../../scripts/lib/codegen.ts';
import { CATALOG_FILES } from '../../src/services/catalog/catalog-checks.ts';
import { CatalogDataError, loadCatalogData, readCatalogSources, type CatalogDocuments } from '../../src/services/catalog/catalog-data.ts';

/** A parsed YAML document, edited freely by the cases below. */
type Doc = any;
interface Docs extends CatalogDocuments {
  catalog: Doc;
  voices: Doc;
  avatars: Doc;
}

const read = (file: string): Doc => parse(fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
const fresh = (): Docs => ({
  catalog: read(CATALOG_FILES.catalog.file),
  voices: read(CATALOG_FILES.voices.file),
  avatars: read(CATALOG_FILES.avatars.file),
});

/** The problems readCatalogSources reports for the edited documents; fails the test when it accepts them. */
function problemsOf(t: Test, edit: (d: Docs) => void): string[] {
  const docs = fresh();
  edit(docs);
  try {
    readCatalogSources({ documents: docs });
  } catch (err) {
    t.type(err, CatalogDataError, 'a CatalogDataError');
    const problems = (err as CatalogDataError).problems;
    for (const p of problems) t.match(p, /^spec\/(catalog|voices|avatars)\.yaml (\/\S*|\(root\)) \S/, `names file and path: ${p}`);
    t.match((err as Error).message, problems[0].slice(0, 40), 'the message lists the problems');
    return problems;
  }
  t.fail('the broken documents were accepted');
  return [];
}

/** Requires exactly one problem, starting with `file path` and matching `rest`. */
function refuses(t: Test, edit: (d: Docs) => void, file: string, path: string, rest: RegExp) {
  const problems = problemsOf(t, edit);
  t.equal(problems.length, 1, `one problem: ${problems.join(' | ')}`);
  t.equal(problems[0]?.slice(0, `${file} ${path} `.length), `${file} ${path} `, `at ${file} ${path}`);
  t.match(problems[0] ?? '', rest);
}

const CAT = 'spec/catalog.yaml';

t.test('the committed files load, and equal documents given in place of the files', async (t) => {
  const fromFiles = readCatalogSources();
  const docs = fresh();
  t.same(readCatalogSources({ documents: docs }), fromFiles);
  t.same(loadCatalogData(), fromFiles, 'the frozen boot data is the same');
  t.ok(fromFiles.catalog.static_ads.length > 0 && fromFiles.voices.length > 0 && fromFiles.avatars.length > 0);
});

t.test('schema: a value outside its enum', async (t) => {
  refuses(
    t,
    (d) => (d.catalog.static_ads[0].default_aspect_ratio = '2:1'),
    CAT,
    '/static_ads/0/default_aspect_ratio',
    /must be one of "1:1", "9:16", "16:9", "4:5"; is "2:1"/,
  );
  refuses(
    t,
    (d) => (d.catalog.video_ads[1].quality_tiers[0].resolution = '4K'),
    CAT,
    '/video_ads/1/quality_tiers/0/resolution',
    /must be one of "480p", "720p", "1080p"; is "4K"/,
  );
  refuses(
    t,
    (d) => (d.voices.voices[2].gender = 'other'),
    'spec/voices.yaml',
    '/voices/2/gender',
    /must be one of "female", "male", "neutral"/,
  );
  refuses(t, (d) => (d.avatars.avatars[0].gender = 'x'), 'spec/avatars.yaml', '/avatars/0/gender', /must be one of/);
  refuses(
    t,
    (d) => (d.catalog.slideshow_templates[0].accepts_media_kinds = ['image', 'audio']),
    CAT,
    '/slideshow_templates/0/accepts_media_kinds/1',
    /must be one of "image", "slideshow", "video"; is "audio"/,
  );
});

t.test('schema: a missing key', async (t) => {
  refuses(t, (d) => delete d.catalog.video_ads[0].title, CAT, '/video_ads/0', /must have required property 'title'/);
  refuses(t, (d) => delete d.voices.voices[0].espeak_voice, 'spec/voices.yaml', '/voices/0', /required property 'espeak_voice'/);
  refuses(t, (d) => delete d.catalog.slideshow_templates, CAT, '(root)', /required property 'slideshow_templates'/);
  const video = fresh().catalog.ai_models.findIndex((m: Doc) => m.variants[0].output === 'video');
  refuses(
    t,
    (d) => delete d.catalog.ai_models[video].variants[0].credits_per_second,
    CAT,
    `/ai_models/${video}/variants/0`,
    /required property 'credits_per_second'/,
  );
});

t.test('schema: an unknown key', async (t) => {
  refuses(t, (d) => (d.catalog.static_ads[0].colour = 'red'), CAT, '/static_ads/0/colour', /is not an allowed key/);
  refuses(t, (d) => (d.avatars.avatars[3].age = 'young'), 'spec/avatars.yaml', '/avatars/3/age', /is not an allowed key/);
  refuses(t, (d) => (d.catalog.extra = []), CAT, '/extra', /is not an allowed key/);
  // Image variants take no duration_options (nor credits_per_second).
  refuses(
    t,
    (d) => (d.catalog.ai_models[0].variants[0].duration_options = [1]),
    CAT,
    '/ai_models/0/variants/0/duration_options',
    /is not an allowed key/,
  );
});

t.test('schema: malformed slugs, ids, paths, locales and numbers', async (t) => {
  refuses(
    t,
    (d) => (d.catalog.static_ads[3].presets[1].id = 'Bad Id'),
    CAT,
    '/static_ads/3/presets/1/id',
    /must match pattern .*; is "Bad Id"/,
  );
  refuses(t, (d) => (d.catalog.ugc_ads[0].slug = 'ugc--double'), CAT, '/ugc_ads/0/slug', /must match pattern/);
  refuses(t, (d) => (d.catalog.ai_models[0].slug = 'a'.repeat(161)), CAT, '/ai_models/0/slug', /must NOT have more than 160 characters/);
  refuses(
    t,
    (d) => (d.catalog.static_ads[0].preview_image = 'templates/../escape.svg'),
    CAT,
    '/static_ads/0/preview_image',
    /must match pattern/,
  );
  refuses(
    t,
    (d) => (d.catalog.static_ads[0].preview_image = 'templates/bold-sale-banner.png'),
    CAT,
    '/static_ads/0/preview_image',
    /must match pattern "\\\.svg\$"/,
  );
  refuses(t, (d) => (d.avatars.avatars[0].video = 'avatars/maya.mov'), 'spec/avatars.yaml', '/avatars/0/video', /must match pattern/);
  refuses(t, (d) => (d.voices.voices[0].locale = ['english']), 'spec/voices.yaml', '/voices/0/locale/0', /must match pattern/);
  refuses(t, (d) => (d.voices.voices[0].espeak_voice = 'EN US'), 'spec/voices.yaml', '/voices/0/espeak_voice', /must match pattern/);
  refuses(t, (d) => (d.catalog.static_ads[0].title = '   '), CAT, '/static_ads/0/title', /must match pattern "\\S"/);
  refuses(t, (d) => (d.catalog.static_ads[0].credits = 0), CAT, '/static_ads/0/credits', /must be >= 1; is 0/);
  refuses(t, (d) => (d.catalog.static_ads[0].credits = 1.5), CAT, '/static_ads/0/credits', /must be integer/);
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].quality_tiers[0].duration_options = [4, 31]),
    CAT,
    '/video_ads/0/quality_tiers/0/duration_options/1',
    /must be <= 30/,
  );
  refuses(
    t,
    (d) => (d.catalog.static_ads[0].presets = d.catalog.static_ads[0].presets.slice(0, 1)),
    CAT,
    '/static_ads/0/presets',
    /must NOT have fewer than 2 items/,
  );
  refuses(
    t,
    (d) => (d.voices.voices[0].style_tags = ['calm', 'calm']),
    'spec/voices.yaml',
    '/voices/0/style_tags',
    /must NOT have duplicate items/,
  );
});

t.test('schema: sections, types and tiers belong together', async (t) => {
  refuses(t, (d) => (d.catalog.ugc_ads[0].section = 'video_ads'), CAT, '/ugc_ads/0/section', /must be "ugc_ads"; is "video_ads"/);
  refuses(t, (d) => (d.catalog.video_ads[0].type = 'ugc_ad'), CAT, '/video_ads/0/type', /must be "video_ad"; is "ugc_ad"/);
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].quality_tiers[1].id = 'high'),
    CAT,
    '/video_ads/0/quality_tiers',
    /must contain at least 1 and no more than 1 valid item/,
  );
  const problems = problemsOf(t, (d) => (d.catalog.ai_models[0].variants[0].output = 'audio'));
  t.match(problems.join('\n'), /spec\/catalog.yaml \/ai_models\/0\/variants\/0\/output must be one of "image", "video"; is "audio"/);
});

t.test('cross-checks: duplicate ids and slugs', async (t) => {
  refuses(
    t,
    (d) => (d.voices.voices[1].id = d.voices.voices[0].id),
    'spec/voices.yaml',
    '/voices/1/id',
    /voice id ".+" is already used at \/voices\/0/,
  );
  refuses(
    t,
    (d) => (d.avatars.avatars[4].id = d.avatars.avatars[2].id),
    'spec/avatars.yaml',
    '/avatars/4/id',
    /is already used at \/avatars\/2/,
  );
  refuses(
    t,
    (d) => (d.catalog.static_ads[2].presets[1].id = d.catalog.static_ads[2].presets[0].id),
    CAT,
    '/static_ads/2/presets/1/id',
    /preset id ".+" of .+ is already used at \/static_ads\/2\/presets\/0/,
  );
  refuses(
    t,
    (d) => (d.catalog.ai_models[0].variants[1].id = d.catalog.ai_models[0].variants[0].id),
    CAT,
    '/ai_models/0/variants/1/id',
    /variant id ".+" of flux-image is already used/,
  );
  // Slugs are unique across sections, not only within one.
  refuses(
    t,
    (d) => (d.catalog.slideshow_templates[0].slug = d.catalog.video_ads[2].slug),
    CAT,
    '/slideshow_templates/0/slug',
    /is already used at \/video_ads\/2\/slug/,
  );
});

t.test('cross-checks: references, durations and prices', async (t) => {
  const video = fresh().catalog.ai_models.findIndex((m: Doc) => m.variants[0].output === 'video' && m.variants[0].provider);
  refuses(
    t,
    (d) => (d.catalog.ai_models[0].default_variant_id = 'nope'),
    CAT,
    '/ai_models/0/default_variant_id',
    /"nope" is not a variant of flux-image \(one of: /,
  );
  // Hosted providers: OpenAI makes images only; Replicate models are owner/name.
  refuses(
    t,
    (d) => (d.catalog.ai_models[2].variants[0].provider = { name: 'openai', model: 'gpt-image-1' }),
    CAT,
    '/ai_models/2/variants/0/provider',
    /openai makes images only/,
  );
  refuses(
    t,
    (d) => (d.catalog.ai_models[0].variants[0].provider = { name: 'replicate', model: 'flux' }),
    CAT,
    '/ai_models/0/variants/0/provider/model',
    /replicate models are "owner\/name"/,
  );
  // A duration sent as frames needs the model's frame rate, and a frame rate means frames.
  const wan = fresh().catalog.ai_models.findIndex((m: Doc) => m.slug === 'wan');
  refuses(
    t,
    (d) => delete d.catalog.ai_models[wan].variants[0].provider.frame_rate,
    CAT,
    `/ai_models/${wan}/variants/0/provider/frame_rate`,
    /is given with duration_format frames, and only then/,
  );
  refuses(
    t,
    (d) => (d.catalog.ai_models[video].variants[0].provider.frame_rate = 24),
    CAT,
    `/ai_models/${video}/variants/0/provider/frame_rate`,
    /is given with duration_format frames, and only then/,
  );
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].default_resolution = '480p'),
    CAT,
    '/video_ads/0/default_resolution',
    /must equal the high tier's resolution/,
  );
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].quality_tiers[0].duration_options = [4, 6]),
    CAT,
    '/video_ads/0/quality_tiers/0/default_duration',
    /8 is not one of duration_options \[4, 6\]/,
  );
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].quality_tiers[0].duration_options = [8, 4, 6]),
    CAT,
    '/video_ads/0/quality_tiers/0/duration_options',
    /must be strictly ascending/,
  );
  refuses(
    t,
    (d) => (d.catalog.video_ads[0].quality_tiers[0].credits += 1),
    CAT,
    '/video_ads/0/quality_tiers/0/credits',
    /must equal credits_per_second × default_duration/,
  );
  refuses(
    t,
    (d) => (d.catalog.ai_models[video].variants[0].credits_per_second += 1),
    CAT,
    `/ai_models/${video}/variants/0/credits`,
    /must equal/,
  );
});

t.test('cross-checks: the AI models cover every workflow', async (t) => {
  refuses(
    t,
    (d) => {
      for (const m of d.catalog.ai_models)
        for (const v of m.variants) {
          v.input_mode = v.input_mode.filter((x: string) => x !== 'audio');
          if (v.requires) v.requires = v.requires.filter((x: string) => x !== 'audio');
        }
    },
    CAT,
    '/ai_models',
    /no variant covers the audio-driven workflow/,
  );
});

t.test('cross-checks: a required input is one the variant takes', async (t) => {
  const kling = fresh().catalog.ai_models.findIndex((m: { slug: string }) => m.slug === 'kling-video');
  refuses(
    t,
    (d) => (d.catalog.ai_models[kling].variants[0].requires = ['video']),
    CAT,
    `/ai_models/${kling}/variants/0/requires`,
    /"video" is required but is not in input_mode \(text, image\)/,
  );
});

t.test('preview files: each exists and is used once', async (t) => {
  refuses(
    t,
    (d) => (d.catalog.static_ads[0].presets[1].preview_image = 'presets/none/missing.svg'),
    CAT,
    '/static_ads/0/presets/1/preview_image',
    /preview file spec\/previews\/presets\/none\/missing.svg does not exist/,
  );
  refuses(
    t,
    (d) => (d.avatars.avatars[1].image = d.avatars.avatars[0].image),
    'spec/avatars.yaml',
    '/avatars/1/image',
    /is already used by spec\/avatars.yaml \/avatars\/0\/image/,
  );
  // make-previews.ts reads the data before the files exist.
  const docs = fresh();
  docs.catalog.static_ads[0].presets[1].preview_image = 'presets/none/missing.svg';
  t.doesNotThrow(() => readCatalogSources({ documents: docs, checkPreviews: false }));
});

t.test('every problem is reported at once, across files', async (t) => {
  const problems = problemsOf(t, (d) => {
    d.catalog.static_ads[0].colour = 'red';
    d.catalog.video_ads[1].default_aspect_ratio = '2:1';
    d.voices.voices[0].locale = ['english'];
    d.avatars.avatars[0].name = '';
  });
  t.equal(problems.length, 5, problems.join('\n'));
  t.match(
    problems.join('\n'),
    /spec\/catalog.yaml \/static_ads\/0\/colour[\s\S]*\/video_ads\/1\/default_aspect_ratio[\s\S]*spec\/voices.yaml \/voices\/0\/locale\/0[\s\S]*spec\/avatars.yaml \/avatars\/0\/name/,
  );
  // Documents that are not mappings at all.
  refuses(t, (d) => (d.voices = ['a']), 'spec/voices.yaml', '(root)', /must be object/);
});

t.test('npm run generate refuses invalid files with the same problems', async (t) => {
  const schema = read('spec/catalog-data.schema.yaml');
  const files = (docs: Docs): CatalogDataFile[] =>
    (['catalog', 'voices', 'avatars'] as const).map((k) => ({ ...CATALOG_FILES[k], data: docs[k] }));
  const out = await buildCatalogArtifacts(schema, files(fresh()), () => {});
  t.same(Object.keys(out).sort(), ['catalog-data.d.ts', 'catalog-validators.cjs', 'catalog-validators.d.cts']);
  t.equal(
    out['catalog-validators.cjs'],
    fs.readFileSync(new URL('../../generated/catalog-validators.cjs', import.meta.url), 'utf8'),
    'the committed validators',
  );

  const docs = fresh();
  docs.catalog.static_ads[3].presets[1].id = 'Bad Id';
  docs.avatars.avatars[0].extra = 1;
  const err = await buildCatalogArtifacts(schema, files(docs), () => {}).catch((e: unknown) => e);
  t.type(err, CatalogDataError);
  t.same((err as CatalogDataError).problems, [
    'spec/catalog.yaml /static_ads/3/presets/1/id must match pattern "^[a-z0-9]+(?:-[a-z0-9]+)*$"; is "Bad Id"',
    'spec/avatars.yaml /avatars/0/extra is not an allowed key',
  ]);
});
