// The outputs people judge the local engines by, as requests to the public API: every static ad
// template in every aspect, every video and UGC ad template in both, slideshows (aspects, with and
// without text overlays, languages) and faceless videos (aspects, durations, every image style).
// `npm run gallery` renders them into docs/gallery/; `npm run bench:quality` renders them and runs
// the media quality checker over each. One list, so the gallery shows what the checks measure.
import { parse } from 'yaml';
import fs from 'node:fs';

export type Pipeline = 'static_ad' | 'video_ad' | 'ugc_ad' | 'slideshow' | 'faceless_video';

export interface MatrixCase {
  /** Unique, file-name safe: `<pipeline>/<slug>-<aspect>[-<variant>]`. */
  name: string;
  pipeline: Pipeline;
  /** What the gallery's caption says. */
  label: string;
  aspect: string;
  /** The API path it is created at and the body sent. */
  path: '/api/v1/generations' | '/api/v1/slideshows' | '/api/v1/faceless-videos';
  body: Record<string, unknown>;
}

interface CatalogTemplate {
  slug: string;
  title?: string;
  name?: string;
  quality_tiers?: { id: string; duration_options?: number[] }[];
}

const catalog = parse(fs.readFileSync(new URL('../../spec/catalog.yaml', import.meta.url), 'utf8')) as Record<string, CatalogTemplate[]>;

/** A prompt per template, as a customer would write it. */
const PROMPTS: Record<string, string> = {
  'bold-sale-banner': 'Summer sale on our linen shirts: 30% off everything until Sunday',
  'product-spotlight': 'Our new citrus sparkling water, zero sugar and made with real lemons',
  'testimonial-quote': 'A customer loves how our standing desk fixed her back pain after two weeks',
  'before-after-split': 'Our stain remover takes a wine-stained white shirt back to spotless',
  'feature-callout-grid': 'Four features of the Aero running shoe: light foam, grippy sole, breathable knit, recycled laces',
  'limited-time-offer-story': 'Flash deal on noise-cancelling headphones, free shipping this weekend only',
  'us-vs-them-comparison': 'Why our oat milk beats dairy: less water, less land, same creamy coffee',
  'seasonal-promo-poster': 'Autumn menu launch at Copper Kettle café: pumpkin latte and apple pie',
  'minimal-product-hero': 'The Nord ceramic pour-over coffee dripper, handmade in Oslo',
  'app-install-banner': 'Download Pocket Budget, the app that tracks spending in one tap',
  'product-demo-showcase': 'Show how our foldable e-bike folds in ten seconds and fits in a car boot',
  'flash-sale-countdown': 'Black Friday sneaker sale, 40% off for 24 hours',
  'cinematic-brand-story': 'The story of a family olive oil farm in Crete, harvested by hand since 1920',
  'feature-walkthrough': 'Walk through the three best features of our smart thermostat',
  'problem-solution-explainer': 'Tired of tangled cables? Our magnetic cable organiser keeps your desk tidy',
  'lifestyle-montage': 'A weekend of hiking and camping with our waterproof backpack',
  'unboxing-ugc': 'Unboxing our vitamin C serum: glass dropper bottle, fresh citrus scent',
  'founder-story': 'Why I started a zero-waste shampoo bar company in my kitchen',
  'talking-head-review': 'An honest review of our noise-cancelling earbuds after a month',
  'get-ready-with-me': 'Get ready with me using our five-minute natural makeup kit',
  'day-in-the-life': 'A day in the life of a barista using our espresso grinder',
  'green-screen-reaction': 'Reacting to how much you save with our solar phone charger',
};

const AVATARS = ['maya-lifestyle', 'priya-tech-reviewer', 'daniel-business', 'chloe-beauty', 'marcus-chef', 'grace-wellness'];

const slug = (s: string) => s.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
const aspectName = (a: string) => a.replace(':', 'x');

function adCases(kind: 'static_ads' | 'video_ads' | 'ugc_ads', type: Pipeline, aspects: string[]): MatrixCase[] {
  const out: MatrixCase[] = [];
  for (const t of catalog[kind] ?? [])
    for (const aspect of aspects) {
      const body: Record<string, unknown> = {
        type,
        template_slug: t.slug,
        prompt: PROMPTS[t.slug] ?? `An ad for ${t.title ?? t.slug}`,
        aspect_ratio: aspect,
      };
      // A UGC ad is a presenter talking: each template with a catalog avatar of its own.
      if (type === 'ugc_ad') body.avatar_id = AVATARS[out.length % AVATARS.length];
      // Videos: the fast tier at its shortest duration (what a first try costs least).
      const tier = t.quality_tiers?.find((q) => q.id === 'low') ?? t.quality_tiers?.[0];
      if (tier) {
        body.quality_tier = tier.id;
        if (tier.duration_options?.length) body.duration = Math.min(...tier.duration_options);
      }
      out.push({
        name: `${type}/${t.slug}-${aspectName(aspect)}`,
        pipeline: type,
        label: `${t.title ?? t.name ?? t.slug} · ${aspect}`,
        aspect,
        path: '/api/v1/generations',
        body,
      });
    }
  return out;
}

const SLIDESHOW_PROMPTS: Record<string, string> = {
  English: 'Five habits for calmer mornings: water first, daylight, a short walk, no phone, one priority',
  Spanish: 'Cinco hábitos para mañanas tranquilas: agua, luz natural, un paseo corto, sin móvil, una prioridad',
  German: 'Fünf Gewohnheiten für ruhige Morgen: Wasser, Tageslicht, ein kurzer Spaziergang, kein Handy, eine Priorität',
};

/** Every aspect × overlays × language; `pairs`: every aspect × overlays once, the languages in turn (each twice). */
function slideshowCases(pairs: boolean, slides: number): MatrixCase[] {
  const out: MatrixCase[] = [];
  const languages = Object.keys(SLIDESHOW_PROMPTS);
  let i = 0;
  for (const aspect of ['9:16', '4:5', '1:1'])
    for (const overlays of [true, false])
      for (const language of pairs ? [languages[i++ % languages.length]] : languages) {
        out.push({
          name: `slideshow/${aspectName(aspect)}-${overlays ? 'text' : 'plain'}-${slug(language)}`,
          pipeline: 'slideshow',
          label: `${language} · ${aspect} · ${overlays ? 'text overlays' : 'no overlays'}`,
          aspect,
          path: '/api/v1/slideshows',
          body: {
            prompt: SLIDESHOW_PROMPTS[language],
            slide_count: slides,
            aspect_ratio: aspect,
            language,
            generate_text_overlays: overlays,
          },
        });
      }
  return out;
}

/** The faceless durations the test suite renders (seconds; `npm run bench:quality` renders 15, 30 and 60). */
export const FACELESS_TEST_DURATIONS = [8, 12, 16];

export const IMAGE_STYLES = ['cinematic', 'watercolor', 'comic', 'minimal', 'neon', 'vintage'] as const;
const FACELESS_PROMPTS = [
  'Three reasons embedded Rust is winning firmware teams over',
  'How to brew better coffee at home in four steps',
  'Why cities are planting tiny forests, and what they change',
];

/** Every image style, each aspect and duration covered (styles rotate through aspect × duration). */
function facelessCases(durations: number[]): MatrixCase[] {
  const out: MatrixCase[] = [];
  let i = 0;
  for (const style of IMAGE_STYLES) {
    const aspect = i % 2 === 0 ? '9:16' : '16:9';
    const duration = durations[Math.floor(i / 2) % durations.length];
    out.push({
      name: `faceless_video/${style}-${aspectName(aspect)}-${duration}s`,
      pipeline: 'faceless_video',
      label: `${style} · ${aspect} · ${duration} s`,
      aspect,
      path: '/api/v1/faceless-videos',
      body: { prompt: FACELESS_PROMPTS[i % FACELESS_PROMPTS.length], image_style: style, aspect_ratio: aspect, duration: String(duration) },
    });
    i++;
  }
  return out;
}

export interface MatrixOptions {
  /** Faceless durations (seconds); default 15, 30, 60. */
  durations?: number[];
  /** Slideshows: every aspect × overlays pair once with the languages in turn (default: the full product). */
  slideshowPairs?: boolean;
  /** Slides per slideshow (default 5). */
  slides?: number;
  /** Only cases whose name contains one of these. */
  only?: string[];
}

export function mediaMatrix(opts: MatrixOptions = {}): MatrixCase[] {
  const all = [
    ...adCases('static_ads', 'static_ad', ['1:1', '4:5', '9:16', '16:9']),
    ...adCases('video_ads', 'video_ad', ['9:16', '16:9']),
    ...adCases('ugc_ads', 'ugc_ad', ['9:16', '16:9']),
    ...slideshowCases(opts.slideshowPairs ?? false, opts.slides ?? 5),
    ...facelessCases(opts.durations ?? [15, 30, 60]),
  ];
  const only = opts.only?.filter(Boolean);
  return only?.length ? all.filter((c) => only.some((o) => c.name.includes(o))) : all;
}
