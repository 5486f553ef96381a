// Kinetic typography video ads (src/engines/local/kinetic.ts through ad-video.ts): the copy in
// beats (hook, points, product image, offer, end card with the CTA), consecutive beats visibly
// different, words animating in (mid-animation at their entry, settled over the span the manifest
// gives), no caption repeating a beat, and every output passing the media quality checker.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp, { type SharpOptions } from 'sharp';
import phashModule from 'sharp-phash';
import distanceModule from 'sharp-phash/distance.js';
import t from 'tap';
import { LocalProvider } from '../../src/engines/local/ads.ts';
import { beatCount, planBeats } from '../../src/engines/local/kinetic.ts';
import { resolveDimensions, type GenerationJob } from '../../src/engines/generation.ts';
import { extractFrame } from '../../src/media/ffmpeg.ts';
import { stopOcr } from '../../src/media/ocr.ts';
import { checkMedia } from '../../src/media/quality/check.ts';
import type { Box, MediaManifest } from '../../src/media/quality/manifest.ts';

const phash = phashModule as unknown as (image: Buffer, options?: SharpOptions) => Promise<string>;
const distance = distanceModule as unknown as (a: string, b: string) => number;

const work = mkdtempSync(path.join(os.tmpdir(), 'kinetic-'));
t.teardown(async () => {
  await stopOcr();
  rmSync(work, { recursive: true, force: true });
});

const product = await sharp(
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="750"><rect width="600" height="750" fill="#f4e1c1"/><circle cx="300" cy="380" r="190" fill="#2a2a2a"/><circle cx="300" cy="380" r="120" fill="#d9d9d9"/></svg>',
  ),
)
  .png()
  .toBuffer();

let seq = 0;
function job(over: Partial<GenerationJob> = {}): GenerationJob {
  return {
    generationId: `kinetic-${++seq}`,
    type: 'video_ad',
    output: 'video',
    prompt: 'Black Friday sneaker sale, 40% off for 24 hours',
    title: 'Flash Sale Countdown',
    templateSlug: 'flash-sale-countdown',
    aspectRatio: '9:16',
    ...resolveDimensions('9:16', '480p', 'video'),
    durationSeconds: 5,
    brandColors: ['#0f3d3e', '#145c5e', '#ffb300'],
    referenceImages: [],
    generateAudio: false,
    ...over,
  };
}

const render = async (j: GenerationJob) => {
  const res = await new LocalProvider().generate(j, { workDir: work });
  return { file: res.path, manifest: res.manifest as MediaManifest };
};

/** The box's pixels (greyscale) in a frame. */
async function crop(frame: Buffer, box: Box): Promise<Buffer> {
  return sharp(frame).extract({ left: box.x, top: box.y, width: box.w, height: box.h }).greyscale().raw().toBuffer();
}
const meanDiff = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length;

t.test('the copy in 3 to 6 beats: hook first, the offer when there is one, the CTA last', async (t) => {
  for (const d of [4, 5, 6, 8, 10, 15]) t.ok(beatCount(d) >= 3 && beatCount(d) <= 6, `${d} s: ${beatCount(d)} beats`);
  const beats = planBeats(job(), 5);
  t.equal(beats[0].kind, 'hook');
  t.ok(
    beats.some((b) => b.kind === 'offer' && /40% off/i.test(b.text)),
    'the offer has a beat of its own',
  );
  t.same([beats.at(-1)!.kind, beats.at(-1)!.text], ['end', 'Shop now'], 'the end card carries the CTA');
  t.equal(beats.at(-1)!.b, 5, 'the beats fill the duration');
  for (let i = 1; i < beats.length; i++) t.equal(beats[i].a, beats[i - 1].b, `beat ${i} starts where the one before ends`);
  const withImage = planBeats(job({ referenceImages: [product], durationSeconds: 8 }), 8);
  t.ok(
    withImage.some((b) => b.kind === 'product'),
    'the customer image is a beat',
  );
  t.notOk(
    beats.some((b) => b.kind === 'product'),
    'no product beat without an image',
  );
});

t.test('a rendered kinetic ad: beats differ, words animate in and settle, no caption repeats a beat, the checker passes', async (t) => {
  const j = job();
  const { file, manifest } = await render(j);
  const starts = manifest.sceneStarts ?? [];
  t.ok(starts.length >= 3, `${starts.length} beats`);
  // Consecutive beats differ by ≥ 10 of 64 bits (their middles).
  const ends = [...starts.slice(1), j.durationSeconds!];
  const hashes = await Promise.all(starts.map(async (a, i) => phash(await extractFrame(file, (a + ends[i]) / 2))));
  for (let i = 1; i < hashes.length; i++)
    t.ok(distance(hashes[i - 1], hashes[i]) >= 10, `beat ${i} differs from beat ${i - 1}: ${distance(hashes[i - 1], hashes[i])} bits`);
  const roles = manifest.texts.map((x) => x.role);
  for (const role of ['headline', 'offer', 'cta']) t.ok(roles.includes(role), `the ${role} is placed`);
  t.same(
    manifest.texts.filter((x) => x.role === 'caption'),
    [],
    'no caption repeats what a beat shows',
  );
  // The first headline line: moving at its beat's start, still from its manifest start on.
  const first = manifest.texts[0];
  const entry = await crop(await extractFrame(file, 0.12), first.box);
  const settled = await crop(await extractFrame(file, first.fromSeconds!), first.box);
  const later = await crop(await extractFrame(file, first.toSeconds! - 0.05), first.box);
  t.ok(meanDiff(entry, settled) > 8, `mid-animation at its entry (${meanDiff(entry, settled).toFixed(1)} grey levels from settled)`);
  t.ok(meanDiff(settled, later) < 3, `settled over its span (${meanDiff(settled, later).toFixed(1)})`);
  const report = await checkMedia(file, manifest);
  t.same(
    report.rows.filter((r) => !r.pass).map((r) => `${r.check} ${r.subject}: ${r.detail}`),
    [],
    'every quality check passes',
  );
});

t.test('the product image is a Ken Burns beat that never uncovers the canvas', async (t) => {
  const j = job({ referenceImages: [product], durationSeconds: 8, aspectRatio: '16:9', ...resolveDimensions('16:9', '480p', 'video') });
  const { file, manifest } = await render(j);
  const i = planBeats(j, 8).findIndex((b) => b.kind === 'product');
  t.ok(i > 0, 'a product beat');
  const [a, b] = [manifest.sceneStarts![i], manifest.sceneStarts![i + 1]];
  const early = await extractFrame(file, a + 0.05);
  const late = await extractFrame(file, b - 0.1);
  const stats = await sharp(late).stats();
  t.ok(stats.channels[0].stdev > 20, 'the image shows (not a flat ground)');
  const grey = (b: Buffer) => sharp(b).greyscale().raw().toBuffer();
  t.ok(meanDiff(await grey(early), await grey(late)) > 0.5, 'the picture moves over the beat');
  const report = await checkMedia(file, manifest);
  t.same(
    report.rows.filter((r) => !r.pass).map((r) => `${r.check} ${r.subject}: ${r.detail}`),
    [],
    'every quality check passes (no uncovered canvas)',
  );
});

t.test('display type 150 px and taller reads back (the checker reads it scaled down to a line of print)', async (t) => {
  // 720p 16:9: "farm in" in Playfair Display stands 190 px tall; Tesseract reads only "farm" at that size.
  const j = job({
    ...resolveDimensions('16:9', '720p', 'video'),
    aspectRatio: '16:9',
    brandColors: undefined,
    templateSlug: 'cinematic-brand-story',
    title: 'Cinematic Brand Story',
    prompt: 'The story of a family olive oil farm in Crete, harvested by hand since 1920',
    durationSeconds: 4,
  });
  const { file, manifest } = await render(j);
  const tall = manifest.texts.filter((x) => x.box.h > 150);
  t.ok(tall.length > 0, `${tall.length} texts over 150 px tall`);
  const report = await checkMedia(file, manifest);
  const reads = report.rows.filter((r) => r.check === 'text-readback');
  t.same(
    reads.filter((r) => !r.pass).map((r) => `${r.subject}: ${r.detail}`),
    [],
    `every text reads back (${reads.length})`,
  );
});
