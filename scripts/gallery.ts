// npm run gallery [-- NAME-FILTER…]: renders the media matrix (scripts/lib/media-matrix.ts: every
// template × aspect, slideshows, faceless videos) with the local engines, as a customer would over
// the API, and writes one small preview per output into docs/gallery/ (a JPEG of each image; a
// strip of four frames of each video) and docs/gallery/README.md, the page that shows them. With
// filters, only the matching cases are rendered again (the page keeps the others).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { extractFrame, probe } from '../src/media/ffmpeg.ts';
import { mediaMatrix, type MatrixCase, type Pipeline } from './lib/media-matrix.ts';
import { runAll, startRunner, type CaseResult } from './lib/media-run.ts';

const GALLERY = fileURLToPath(new URL('../docs/gallery/', import.meta.url));
const PREVIEW_BOX = 360;
const FRAME_BOX = 220;
const say = (s: string) => process.stdout.write(`${s}\n`);

/** A JPEG preview of an image output, at most PREVIEW_BOX on its longer side. */
async function imagePreview(file: string): Promise<Buffer> {
  return sharp(file)
    .resize(PREVIEW_BOX, PREVIEW_BOX, { fit: 'inside' })
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 78, mozjpeg: true })
    .toBuffer();
}

/** Four frames of a video side by side (at 10, 35, 60 and 85 % of its duration). */
async function videoPreview(file: string): Promise<Buffer> {
  const { duration_seconds } = await probe(file);
  const d = duration_seconds ?? 1;
  const frames = await Promise.all(
    [0.1, 0.35, 0.6, 0.85].map(async (f) =>
      sharp(await extractFrame(file, d * f))
        .resize(FRAME_BOX, FRAME_BOX, { fit: 'inside' })
        .toBuffer({ resolveWithObject: true }),
    ),
  );
  const gap = 4;
  const w = frames.reduce((s, f) => s + f.info.width, 0) + gap * (frames.length - 1);
  const h = Math.max(...frames.map((f) => f.info.height));
  let left = 0;
  const layers = frames.map((f) => {
    const layer = { input: f.data, left, top: 0 };
    left += f.info.width + gap;
    return layer;
  });
  return sharp({ create: { width: w, height: h, channels: 3, background: '#ffffff' } })
    .composite(layers)
    .jpeg({ quality: 75, mozjpeg: true })
    .toBuffer();
}

const SECTIONS: { pipeline: Pipeline; title: string; note: string }[] = [
  {
    pipeline: 'static_ad',
    title: 'Static ads',
    note: 'Every template in 1:1, 4:5, 9:16 and 16:9, from the prompt alone (no product image, no brand kit).',
  },
  { pipeline: 'video_ad', title: 'Video ads', note: 'Every template in 9:16 and 16:9, four frames of each.' },
  { pipeline: 'ugc_ad', title: 'UGC ads', note: 'Every template in 9:16 and 16:9, four frames of each.' },
  { pipeline: 'slideshow', title: 'Slideshows', note: 'Three aspects, with and without text overlays, in English, Spanish and German.' },
  { pipeline: 'faceless_video', title: 'Faceless videos', note: 'Every image style, both aspects, 15, 30 and 60 seconds.' },
];

function page(cases: MatrixCase[]): string {
  const out = [
    '# Gallery: what the local engines make',
    '',
    'Made by `npm run gallery` on a machine with no AI provider configured: every output below comes from the',
    'local engines that `npm start` uses out of the box (typography, colour, motion, the offline voice and the',
    'music made here), requested over the API exactly as listed in `scripts/lib/media-matrix.ts`. Hosted or',
    'self-hosted engines replace the pictures and clips when configured (see the README).',
    '',
  ];
  for (const s of SECTIONS) {
    const mine = cases.filter((c) => c.pipeline === s.pipeline && fs.existsSync(path.join(GALLERY, `${c.name}.jpg`)));
    if (!mine.length) continue;
    out.push(`## ${s.title}`, '', s.note, '');
    for (const c of mine) out.push(`**${c.label}** — \`${JSON.stringify(c.body.prompt)}\``, '', `![${c.label}](${c.name}.jpg)`, '');
  }
  return out.join('\n');
}

const filters = process.argv.slice(2);
const cases = mediaMatrix({ only: filters });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gallery-'));
say(`gallery: rendering ${cases.length} outputs with the local engines (this takes a while) …`);
const runner = await startRunner(work);
let failed = 0;
try {
  await runAll(runner.run, cases, 2, async (r: CaseResult, done, total) => {
    if (!r.file) {
      failed++;
      say(`[${done}/${total}] ${r.case.name}: FAILED ${r.error}`);
      return;
    }
    const preview = r.case.pipeline === 'static_ad' ? await imagePreview(r.file) : await videoPreview(r.file);
    const target = path.join(GALLERY, `${r.case.name}.jpg`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, preview);
    say(`[${done}/${total}] ${r.case.name} (${r.seconds.toFixed(1)} s)`);
  });
} finally {
  await runner.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
fs.mkdirSync(GALLERY, { recursive: true });
fs.writeFileSync(path.join(GALLERY, 'README.md'), page(mediaMatrix()));
say(`gallery: wrote ${cases.length - failed} previews and docs/gallery/README.md${failed ? `; ${failed} failed` : ''}`);
process.exitCode = failed ? 1 : 0;
