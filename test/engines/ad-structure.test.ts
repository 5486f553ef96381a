// Each static template shows what its name promises (issue 24, design pass), read back from the
// rendered pixels: a comparison's points in two columns (us, them), a feature grid's callouts in
// a grid, a before/after's two labelled halves, a testimonial's quote as a complete sentence with
// its attribution, a sale's offer number as the largest text, and no offer badge without an
// offer. Every placed text is OCR-read by the media quality checker; the display faces are the
// bundled ones, not DejaVu, unless the brand kit names a font.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { composeAd, facesFor, renderAd } from '../../src/engines/local/ad-image.ts';
import { resolveDimensions, type GenerationJob } from '../../src/engines/generation.ts';
import { stopOcr } from '../../src/media/ocr.ts';
import { checkMedia } from '../../src/media/quality/check.ts';
import type { PlacedText } from '../../src/media/quality/manifest.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'ad-structure-'));
t.teardown(async () => {
  await stopOcr();
  rmSync(work, { recursive: true, force: true });
});

let seq = 0;
function job(slug: string, aspectRatio: string, prompt: string, over: Partial<GenerationJob> = {}): GenerationJob {
  return {
    generationId: `structure-${++seq}`,
    type: 'static_ad',
    output: 'image',
    prompt,
    title: slug,
    templateSlug: slug,
    aspectRatio,
    ...resolveDimensions(aspectRatio, '1K', 'image'),
    referenceImages: [],
    generateAudio: false,
    ...over,
  };
}

/** Renders the ad, runs the quality checker over it (every text read back by OCR) and returns its texts. */
async function rendered(t: Test, j: GenerationJob): Promise<PlacedText[]> {
  const { buffer, manifest } = await renderAd(j, 'png');
  const file = path.join(work, `${j.generationId}.png`);
  writeFileSync(file, buffer);
  const report = await checkMedia(file, manifest);
  const failed = report.rows.filter((r) => !r.pass).map((r) => `${r.check} ${r.subject}: ${r.detail}`);
  t.same(failed, [], `${j.templateSlug} ${j.aspectRatio}: every check passes, every text is read back`);
  return manifest.texts;
}

const centreX = (x: PlacedText) => x.box.x + x.box.w / 2;
const centreY = (x: PlacedText) => x.box.y + x.box.h / 2;
const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');

t.test('a comparison shows the prompt points in two columns, us and them', async (t) => {
  const prompt = 'Why our oat milk beats dairy: less water, less land, same creamy coffee';
  for (const ar of ['1:1', '9:16', '16:9']) {
    const texts = await rendered(t, job('us-vs-them-comparison', ar, prompt));
    const points = texts.filter((x) => x.role === 'point');
    t.equal(points.length, 6, `${ar}: three points a side`);
    const mid = (Math.min(...points.map(centreX)) + Math.max(...points.map(centreX))) / 2;
    const left = points.filter((x) => centreX(x) < mid);
    const right = points.filter((x) => centreX(x) >= mid);
    t.same(
      left.map((x) => norm(x.text)),
      ['less water', 'less land', 'same creamy coffee'],
      `${ar}: the left column lists the points`,
    );
    t.same(
      right.map((x) => norm(x.text)),
      ['less water', 'less land', 'same creamy coffee'],
      `${ar}: so does the right column`,
    );
    t.ok(Math.max(...left.map((x) => x.box.x + x.box.w)) < Math.min(...right.map((x) => x.box.x)), `${ar}: the columns do not overlap`);
    const labels = texts.filter((x) => x.role === 'label').map((x) => norm(x.text));
    t.same(labels, ['oat milk', 'dairy'], `${ar}: the columns are named after the prompt's two sides`);
  }
});

t.test('a feature grid places one callout per feature the prompt lists', async (t) => {
  const prompt = 'Four features of the Aero running shoe: light foam, grippy sole, breathable knit, recycled laces';
  for (const ar of ['1:1', '9:16', '16:9']) {
    const points = (await rendered(t, job('feature-callout-grid', ar, prompt))).filter((x) => x.role === 'point');
    t.same(
      points.map((x) => norm(x.text)),
      ['light foam', 'grippy sole', 'breathable knit', 'recycled laces'],
      `${ar}: four callouts with the prompt's words`,
    );
    const cols = new Set(points.map((x) => Math.round(centreX(x) / 20)));
    const rows = new Set(points.map((x) => Math.round(centreY(x) / 20)));
    t.ok(cols.size >= 2 && rows.size >= 2, `${ar}: in a grid (${cols.size} columns × ${rows.size} rows)`);
  }
});

t.test('a before/after shows two labelled halves with the two states', async (t) => {
  const prompt = 'Our stain remover takes a wine-stained white shirt back to spotless';
  for (const ar of ['4:5', '16:9']) {
    const texts = await rendered(t, job('before-after-split', ar, prompt));
    t.same(
      texts.filter((x) => x.role === 'label').map((x) => x.text),
      ['BEFORE', 'AFTER'],
      `${ar}: labelled halves`,
    );
    const points = texts.filter((x) => x.role === 'point').map((x) => norm(x.text));
    t.same(points, ['wine-stained white shirt', 'spotless'], `${ar}: the prompt's two states`);
  }
});

t.test('a testimonial is a complete sentence in a customer voice, with an attribution and no invented name', async (t) => {
  const prompt = 'A customer loves how our standing desk fixed her back pain after two weeks';
  for (const ar of ['9:16', '1:1']) {
    const texts = await rendered(t, job('testimonial-quote', ar, prompt));
    const quote = texts.find((x) => x.role === 'headline')!.text;
    t.equal(quote, 'I love how this standing desk fixed my back pain after two weeks.', `${ar}: the whole sentence, ending in a full stop`);
    t.same(
      texts.filter((x) => x.role === 'attribution').map((x) => x.text),
      ['Verified customer'],
      `${ar}: attributed to a verified customer`,
    );
  }
});

t.test('a sale shows its offer number as the hero; no offer, no badge', async (t) => {
  const texts = await rendered(t, job('bold-sale-banner', '4:5', 'Summer sale on our linen shirts: 30% off everything until Sunday'));
  const hero = texts.find((x) => x.text === '-30%');
  t.ok(hero, 'the offer number is drawn');
  const headline = texts.find((x) => x.role === 'headline')!;
  t.ok(hero && hero.box.h > headline.box.h, 'and is the largest text');
  for (const slug of ['bold-sale-banner', 'seasonal-promo-poster', 'limited-time-offer-story']) {
    const plain = await rendered(t, job(slug, '9:16', 'Our linen shirts, woven in Portugal'));
    t.same(
      plain.filter((x) => x.role === 'badge' || x.role === 'offer').map((x) => x.text),
      [],
      `${slug}: no SALE or NEW sticker when the prompt states no offer`,
    );
  }
});

t.test('the templates set their headlines in bundled display faces; a brand kit font still wins', async (t) => {
  for (const slug of ['bold-sale-banner', 'testimonial-quote', 'feature-callout-grid', 'minimal-product-hero']) {
    const { headFace, bodyFace } = facesFor({ templateSlug: slug });
    t.notMatch(headFace.file, /dejavu/i, `${slug}: headline not in DejaVu (${headFace.family})`);
    t.notMatch(bodyFace.file, /dejavu/i, `${slug}: body not in DejaVu (${bodyFace.family})`);
  }
  t.match(facesFor({ templateSlug: 'bold-sale-banner' }).headFace.family, /^Anton/);
  t.match(facesFor({ templateSlug: 'testimonial-quote' }).headFace.family, /^Playfair Display/);
  t.match(
    facesFor({ templateSlug: 'bold-sale-banner', fonts: ['DejaVu Serif'] }).headFace.family,
    /^DejaVu Serif/,
    'the kit names DejaVu Serif',
  );
});

t.test("an app install banner shows the app's name and what it does on a phone screen", async (t) => {
  const texts = await rendered(t, job('app-install-banner', '4:5', 'Download Pocket Budget, the app that tracks spending in one tap'));
  t.same(
    texts.filter((x) => x.role === 'label' || x.role === 'point').map((x) => x.text),
    ['Pocket Budget', 'Tracks spending in one tap'],
  );
  const headline = texts.find((x) => x.role === 'headline')!;
  const name = texts.find((x) => x.role === 'label')!;
  t.ok(name.box.y > headline.box.y + headline.box.h, 'the phone sits under the headline');
});

t.test('a minimal product hero sits on a near-white ground unless the brand gives colours', async (t) => {
  const prompt = 'The Nord ceramic pour-over coffee dripper, handmade in Oslo';
  const plain = await composeAd(job('minimal-product-hero', '1:1', prompt));
  t.ok(
    plain.pixels.subarray(0, 3).every((v) => v >= 235),
    `near white in the corner (${[...plain.pixels.subarray(0, 3)]})`,
  );
  await rendered(t, job('minimal-product-hero', '1:1', prompt));
  const branded = await composeAd(job('minimal-product-hero', '1:1', prompt, { brandColors: ['#0f3d3e', '#145c5e', '#ffb300'] }));
  t.same([...branded.pixels.subarray(0, 3)], [0x0f, 0x3d, 0x3e], "the brand kit's primary colour wins");
});

t.test('a landscape poster without a structure sets its headline large in its column', async (t) => {
  const prompt = 'Nord ceramic pour-over coffee dripper';
  const texts = await rendered(t, job('minimal-product-hero', '16:9', prompt));
  const { height } = resolveDimensions('16:9', '1K', 'image');
  const headline = texts.filter((x) => x.role === 'headline');
  t.ok(headline.length, 'a headline');
  const block = headline.reduce((s, x) => s + x.box.h, 0);
  t.ok(block / height >= 0.4, `the headline block is ${Math.round((100 * block) / height)} % of the frame's height`);
});
