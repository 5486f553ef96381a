// Benchmark: reference analysis (src/media/analysis.ts) against the bare tools it calls, in the
// same run on the same machine:
//   - a 1080×1920 image (gradient, shapes, three lines of text): analyseImage (decode, palette,
//     saliency, perceptual hash, OCR of a ≤ 1280 px greyscale copy) vs tesseract.js alone
//     recognising the same PNG file (its own warm worker, same language data);
//   - a 30 s 1080×1920 video with 3 shots and a voice-like audio track: analyseVideo (ffprobe, the
//     one ffmpeg pass for cuts + loudness + speech, 3 keyframes analysed as images with OCR) vs
//     ffmpeg alone running the scene and loudness passes (`select='gt(scene,0.3)',showinfo` and
//     `ebur128`) on the full frames.
// Rounds alternate which one goes first; medians and their ratio are printed.
// Usage: node bench/analysis.ts [--rounds N]
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { createWorker, OEM } from 'tesseract.js';
import { analyseImage, analyseVideo } from '../src/media/analysis.ts';
import { FFMPEG_PATH } from '../src/media/ffmpeg.ts';
import { DEFAULT_PIXEL_LIMITS } from '../src/media/limits.ts';
import { stopOcr } from '../src/media/ocr.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const say = (s: string) => process.stdout.write(`${s}\n`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-analysis-'));
const opts = { limits: DEFAULT_PIXEL_LIMITS, ocrDeadlineMs: 120_000 };

const imageFile = path.join(dir, 'poster.png');
writeFileSync(
  imageFile,
  await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="1080" height="1920"><defs><linearGradient id="g" x2="0" y2="1"><stop offset="0" stop-color="#ffe8d6"/><stop offset="1" stop-color="#cb997e"/></linearGradient></defs>` +
        `<rect width="1080" height="1920" fill="url(#g)"/><circle cx="540" cy="1100" r="330" fill="#6b705c"/><rect x="290" y="1500" width="500" height="140" rx="70" fill="#3d405b"/>` +
        `<text x="90" y="300" font-family="DejaVu Sans" font-weight="bold" font-size="110" fill="#3d405b">SUMMER</text>` +
        `<text x="90" y="430" font-family="DejaVu Sans" font-weight="bold" font-size="110" fill="#3d405b">SALE 40% OFF</text>` +
        `<text x="360" y="1595" font-family="DejaVu Sans" font-size="56" fill="#ffffff">Shop now</text></svg>`,
    ),
  )
    .png()
    .toBuffer(),
);
const videoDir = path.join(dir, 'video');
execFileSync('mkdir', ['-p', videoDir]);
const videoFile = path.join(videoDir, 'clip.mp4');
say('analysis bench: making a 30 s 1080×1920 video (3 shots, voice-like audio)…');
execFileSync(FFMPEG_PATH, [
  '-hide_banner',
  '-loglevel',
  'error',
  '-y',
  '-f',
  'lavfi',
  '-i',
  'testsrc2=s=1080x1920:r=30:d=10',
  '-f',
  'lavfi',
  '-i',
  'color=c=0x2a9d8f:s=1080x1920:r=30:d=10',
  '-f',
  'lavfi',
  '-i',
  'smptehdbars=s=1080x1920:r=30:d=10',
  '-f',
  'lavfi',
  '-i',
  "aevalsrc='0.4*sin(2*PI*200*t)*(0.5+0.5*sin(2*PI*4*t))':s=48000:d=30",
  '-filter_complex',
  '[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]',
  '-map',
  '[v]',
  '-map',
  '3:a',
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-c:a',
  'aac',
  '-shortest',
  videoFile,
]);

const require = createRequire(import.meta.url);
const langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
const bare = await createWorker('eng', OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true });
await bare.setParameters({ user_defined_dpi: '72' });

function ffmpegAlone(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      FFMPEG_PATH,
      [
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'info',
        '-f',
        'mov',
        '-i',
        videoFile,
        '-vf',
        "select='gt(scene,0.3)',showinfo",
        '-af',
        'ebur128',
        '-f',
        'null',
        '-',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`ffmpeg exited ${code}: ${err}`))));
  });
}

async function time<T>(f: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const v = await f();
  return [performance.now() - started, v];
}

const results: Record<'image' | 'video', { ours: number[]; base: number[] }> = {
  image: { ours: [], base: [] },
  video: { ours: [], base: [] },
};
try {
  // Warm-up: both OCR workers loaded, sharp and ffmpeg in the page cache.
  await analyseImage(imageFile, opts);
  await bare.recognize(imageFile);
  for (let i = 0; i < rounds; i++) {
    const ourImage = () => time(() => analyseImage(imageFile, opts));
    const bareImage = () => time(() => bare.recognize(imageFile));
    const ourVideo = () => time(() => analyseVideo({ path: videoFile, type: 'video/mp4' }, { ...opts, workDir: videoDir }));
    const first = i % 2 === 0;
    const [oi, a] = first ? await ourImage() : [0, undefined];
    const [bi, r] = await bareImage();
    const [oi2, a2] = first ? [oi, a] : await ourImage();
    const [ov, v] = first ? await ourVideo() : [0, undefined];
    const bv = await ffmpegAlone();
    const [ov2, v2] = first ? [ov, v] : await ourVideo();
    results.image.ours.push(oi2);
    results.image.base.push(bi);
    results.video.ours.push(ov2);
    results.video.base.push(bv);
    say(
      `  round ${i + 1}/${rounds} (${first ? 'ours first' : 'bare first'}): image ours ${(oi2 / 1000).toFixed(2)} s vs tesseract ${(bi / 1000).toFixed(2)} s | video ours ${(ov2 / 1000).toFixed(2)} s vs ffmpeg ${(bv / 1000).toFixed(2)} s`,
    );
    if (i === 0) {
      say(
        `    image: text ${JSON.stringify(a2!.text)} (tesseract alone: ${JSON.stringify(r.data.text.trim())}), palette ${a2!.palette.map((p) => p.hex).join(' ')}`,
      );
      say(
        `    video: cuts ${JSON.stringify(v2!.scene_cuts_seconds)}, ${v2!.fps} fps, ${v2!.loudness_lufs} LUFS, speech ${v2!.speech}, ${v2!.keyframes.length} keyframes`,
      );
    }
  }
} finally {
  await bare.terminate();
  await stopOcr();
  rmSync(dir, { recursive: true, force: true });
}
for (const k of ['image', 'video'] as const) {
  const o = median(results[k].ours);
  const b = median(results[k].base);
  say(
    `analysis bench: ${k === 'image' ? '1080×1920 image, analysis vs tesseract alone' : '30 s 1080×1920 video, analysis vs ffmpeg scene+loudness alone'}: ${(o / 1000).toFixed(2)} s vs ${(b / 1000).toFixed(2)} s, RATIO ${(o / b).toFixed(3)}`,
  );
}
