// The parts of reference analysis (src/media/analysis.ts, ocr.ts, services/references/analysis.ts)
// that the service test does not reach: the OCR deadline (an abandoned run, then a fresh worker
// that reads again), a steady tone is not speech, the speech heuristic on its own, and the
// similarity measures on constructed inputs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { analyseVideo, looksLikeSpeech, paletteOf } from '../../src/media/analysis.ts';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { DEFAULT_PIXEL_LIMITS } from '../../src/media/limits.ts';
import { recognizeText, stopOcr } from '../../src/media/ocr.ts';
import { hashDistance, paletteDistance, similarity, type ImageAnalysis } from '../../src/services/references/analysis.ts';

t.teardown(stopOcr);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'analysis-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

t.test('OCR: a run past its deadline is abandoned; the next one gets a fresh worker and reads', async (t) => {
  const text = await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="160"><rect width="100%" height="100%" fill="#fff"/><text x="20" y="100" font-family="DejaVu Sans" font-weight="bold" font-size="64" fill="#000">LEMON</text></svg>`,
    ),
  )
    .png()
    .toBuffer();
  const cut = await recognizeText(text, 1);
  t.same(cut, { text: '', lines: [], timedOut: true }, 'nothing read, and said so');
  const read = await recognizeText(text, 60_000);
  t.equal(read.timedOut, false);
  t.match(read.text, /LEMON/);
  t.equal(read.lines.length, 1);
});

t.test('a steady tone is not speech; the heuristic on its own', async (t) => {
  const file = path.join(dir, 'tone.mp4');
  execFileSync(FFMPEG_PATH, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'color=c=black:s=64x64:r=5:d=2',
    '-f',
    'lavfi',
    '-i',
    'sine=f=440:d=2:sample_rate=16000',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
  const v = await analyseVideo({ path: file, type: 'video/mp4' }, { limits: DEFAULT_PIXEL_LIMITS, ocrDeadlineMs: 10_000, workDir: dir });
  t.equal(v.speech, false, 'a steady 440 Hz tone');
  t.ok(v.loudness_lufs !== null && v.loudness_lufs > -30, `but it is loud (${v.loudness_lufs} LUFS)`);
  t.match(v, { fps: 5, scene_cuts_seconds: [], orientation: 'square' });

  const syllables = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? -60 : -20 - (i % 2) * 8));
  t.equal(looksLikeSpeech(syllables), true, 'voiced windows rising and falling');
  t.equal(looksLikeSpeech(Array(50).fill(-20)), false, 'steady level');
  t.equal(looksLikeSpeech(Array(50).fill(-90)), false, 'silence');
  t.equal(looksLikeSpeech([-20, -60, -20]), false, 'too short to tell');
});

t.test('palette and similarity on constructed inputs', async (t) => {
  // 60 % one colour, 40 % another, as raw pixels.
  const px = Buffer.alloc(100 * 3);
  for (let i = 0; i < 100; i++) px.set(i < 60 ? [10, 120, 200] : [250, 200, 20], i * 3);
  t.same(paletteOf(px, 3), [
    { hex: '#0a78c8', proportion: 0.6 },
    { hex: '#fac814', proportion: 0.4 },
  ]);
  const base: ImageAnalysis = {
    kind: 'image',
    width: 100,
    height: 100,
    orientation: 'square',
    palette: [{ hex: '#0a78c8', proportion: 1 }],
    subject: { x: 0.4, y: 0.4, width: 0.2, height: 0.2 },
    text: 'Summer sale',
    text_regions: [{ x: 0.1, y: 0.1, width: 0.5, height: 0.1 }],
    phash: 'f0f0f0f0f0f0f0f0',
  };
  const near = { ...base, palette: [{ hex: '#0c7cc4', proportion: 1 }], phash: 'f0f0f0f0f0f0f0f1' };
  const far = {
    ...base,
    orientation: 'portrait' as const,
    palette: [{ hex: '#ff2000', proportion: 1 }],
    phash: '0f0f0f0f0f0f0f0f',
    text: 'Winter coats',
    subject: { x: 0, y: 0.8, width: 0.2, height: 0.2 },
  };
  t.equal(hashDistance(base.phash, near.phash), 1);
  t.equal(hashDistance(base.phash, far.phash), 64);
  t.ok(paletteDistance(base.palette, near.palette) < 8, 'near palette');
  t.ok(paletteDistance(base.palette, far.palette) > 40, 'far palette');
  const a = similarity(near, base);
  const b = similarity(far, base);
  t.ok(a.score > 0.9 && b.score < 0.3, `near ${a.score}, far ${b.score}`);
  t.match(a.why.join('; '), /palette close.*similar composition.*shares the words “summer”, “sale”.*layout alike/);
  t.same(b.why, []);
});
