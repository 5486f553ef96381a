// What a UGC presenter says and the hook its ad shows, per template, through the local writer
// (as the narration stage asks it) and adCopy (as every ad renderer reads its texts): a person
// talking to camera in the template's format, with the prompt's specifics, in whole sentences.
import t from 'tap';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { createLocalWriter } from '../../src/engines/write/local.ts';
import { adCopy } from '../../src/engines/write/ad-copy.ts';
import { fitted } from '../../src/pipelines/generation/narration.ts';
import { readPresenterBrief } from '../../src/engines/write/presenter.ts';
import { CATALOG_URL } from '../../src/services/catalog/catalog-data.ts';

const catalog = parse(readFileSync(CATALOG_URL, 'utf8')) as { ugc_ads: { slug: string }[] };

// The quality matrix's prompts (scripts/lib/media-matrix.ts), and the specifics each script must say.
const CASES: Record<string, { prompt: string; says: RegExp; hook: RegExp }> = {
  'unboxing-ugc': {
    prompt: 'Unboxing our vitamin C serum: glass dropper bottle, fresh citrus scent',
    says: /unbox the vitamin C serum/,
    hook: /^Unboxing the vitamin C serum$/,
  },
  'founder-story': {
    prompt: 'Why I started a zero-waste shampoo bar company in my kitchen',
    says: /started|made it myself/i,
    hook: /^Why I started this company$/,
  },
  'talking-head-review': {
    prompt: 'An honest review of our noise-cancelling earbuds after a month',
    says: /noise-cancelling earbuds/,
    hook: /^My honest review after a month$/,
  },
  'get-ready-with-me': {
    prompt: 'Get ready with me using our five-minute natural makeup kit',
    says: /get ready together/,
    hook: /^Get ready with me$/,
  },
  'day-in-the-life': {
    prompt: 'A day in the life of a barista using our espresso grinder',
    says: /as a barista/,
    hook: /^A day as a barista$/,
  },
  'green-screen-reaction': {
    prompt: 'Reacting to how much you save with our solar phone charger',
    says: /react(?:ing)? to how much you save/i,
    hook: /^You need to see this$/,
  },
};

const writer = createLocalWriter();
const plain = (x: string) =>
  x
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** The script as narration.ts writes it for a UGC ad of `seconds`. */
async function script(slug: string, prompt: string, seconds: number): Promise<string> {
  const s = await writer.writeScript({
    prompt,
    language: 'English',
    targetSeconds: Math.max(3, seconds - 1.5),
    wordsPerSecond: 2.6,
    presenterTemplate: slug,
  });
  return fitted([s.hook, ...s.beats, s.callToAction], seconds);
}

t.test('every UGC template has its case here', async (t) => {
  t.same(catalog.ugc_ads.map((x) => x.slug).sort(), Object.keys(CASES).sort());
});

t.test('a presenter speaks whole, well-formed sentences with the prompt’s specifics, fitting the duration', async (t) => {
  for (const [slug, c] of Object.entries(CASES))
    for (const seconds of [4, 8, 15]) {
      const text = await script(slug, c.prompt, seconds);
      const sentences = text.split(/(?<=[.!?])\s+/);
      t.ok(
        sentences.every((s) => /^[A-Z"']/.test(s) && /[.!?]$/.test(s)),
        `${slug} ${seconds}s: sentences start with a capital and end with a stop: ${text}`,
      );
      // "about A day", "with Why embedded": a prompt fragment spliced mid-sentence.
      t.notMatch(
        text,
        /\b(?:a|an|the|about|of|with|to|for)\s+[A-Z][a-z]/,
        `${slug} ${seconds}s: no capitalised fragment after a small word`,
      );
      t.notMatch(text, /nobody tells you|Here's what/i, `${slug} ${seconds}s: not the generic narration hook`);
      t.match(text, c.says, `${slug} ${seconds}s: says what the prompt is about (${c.says})`);
      t.ok(text.split(/\s+/).length <= Math.floor(2.6 * 1.4 * (seconds - 0.5)), `${slug} ${seconds}s: can be said in time`);
      if (seconds >= 8)
        t.ok(sentences.length >= 3, `${slug} ${seconds}s: hook, a specific and a call to action (${sentences.length} sentences)`);
      // The spoken words are captioned: they must not repeat the headline the ad shows.
      const { headline } = adCopy({ prompt: c.prompt, title: slug, type: 'ugc_ad', templateSlug: slug });
      t.notOk(plain(text).includes(plain(headline)), `${slug} ${seconds}s: does not say the on-screen hook "${headline}"`);
    }
  // An unboxing with listed details says them (specifics from after the colon).
  t.match(await script('unboxing-ugc', CASES['unboxing-ugc'].prompt, 15), /glass dropper bottle[\s\S]*fresh citrus scent/);
});

t.test('the UGC ad shows a hook of a few words in the template’s voice, not one word of the prompt', async (t) => {
  for (const [slug, c] of Object.entries(CASES)) {
    const { headline } = adCopy({ prompt: c.prompt, title: slug, type: 'ugc_ad', templateSlug: slug });
    t.ok(headline.split(/\s+/).length >= 2, `${slug}: "${headline}" has at least two words`);
    t.match(headline, c.hook, `${slug}: "${headline}"`);
  }
  // The customer's own headline still wins.
  const given = adCopy({
    prompt: CASES['founder-story'].prompt,
    title: 'x',
    type: 'ugc_ad',
    templateSlug: 'founder-story',
    copy: { headline: 'Made by hand' },
  });
  t.equal(given.headline, 'Made by hand');
});

t.test('a founder names what they started, a thing or an activity', async (t) => {
  t.equal(readPresenterBrief('Why we started making fresh lemonade').started, 'making fresh lemonade');
  t.equal(readPresenterBrief('Why I started a zero-waste shampoo bar company in my kitchen').started, 'a zero-waste shampoo bar company');
  t.equal(readPresenterBrief('Our founder on the road').started, null);
});
