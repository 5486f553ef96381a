// Benchmark: the local provider rendering a 1080×1920 10 s video ad (sharp still + captions +
// one ffmpeg run + ffprobe check) against the single equivalent ffmpeg command run directly
// (same still image, same filter graph, same encoder settings), in the same run on the same
// machine. Rounds alternate which one goes first; medians and their ratio are reported
// (target: provider ≤ 1.5 × ffmpeg alone).
// Usage: node bench/renderer.ts [--rounds N] [--duration S]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { FFMPEG_PATH, probe } from '../src/media/ffmpeg.ts';
import { LocalProvider } from '../src/engines/local/ads.ts';
import { prepareVideo } from '../src/engines/local/ad-video.ts';
import { resolveDimensions, type GenerationJob } from '../src/engines/generation.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const say = (s: string) => process.stdout.write(`${s}\n`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-renderer-'));
const { width, height } = resolveDimensions('9:16', '1080p', 'video');
// A product-shot-like reference: a gradient with a disc.
const reference = await sharp(
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="1500"><defs><linearGradient id="g" x2="1" y2="1"><stop offset="0" stop-color="#f4e1c1"/><stop offset="1" stop-color="#b86b3c"/></linearGradient></defs><rect width="1200" height="1500" fill="url(#g)"/><circle cx="600" cy="760" r="380" fill="#2a2a2a"/><circle cx="600" cy="760" r="250" fill="#d9d9d9"/></svg>`,
  ),
)
  .png()
  .toBuffer();
const job: GenerationJob = {
  generationId: 'bench-video',
  type: 'video_ad',
  output: 'video',
  prompt:
    'Create a video ad for our new ceramic pour-over coffee set. Slow mornings, rich aroma and a clean cup every time. Limited launch price this week only.',
  title: 'Product Demo Showcase',
  templateSlug: 'product-demo-showcase',
  aspectRatio: '9:16',
  width,
  height,
  durationSeconds: duration,
  brandColors: ['#3e2723', '#6d4c41', '#ffb300'],
  brandName: 'Morning Ritual',
  referenceImages: [reference],
  generateAudio: true,
};

const provider = new LocalProvider();
say(
  `renderer bench: ${width}×${height}, ${duration} s, x264 preset ${provider.videoSettings.preset}, ${rounds} rounds, ffmpeg ${FFMPEG_PATH}`,
);

// The direct command: the provider's own plan (still, caption files, filter graph, encoder
// settings), prepared once and then run as a bare ffmpeg process.
const plan = await prepareVideo(job, dir, path.join(dir, 'direct.mp4'), provider.videoSettings);
say(
  `renderer bench: direct command = ffmpeg ${plan.args.length} args, filter graph ${plan.args[plan.args.indexOf('-filter_complex') + 1].length} chars, still ${plan.stillPath}`,
);

function runDirect(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', ...plan.args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`ffmpeg exited ${code}: ${err}`))));
  });
}

async function runProvider(round: number): Promise<number> {
  const started = performance.now();
  let next = 0.25;
  const res = await provider.generate(
    { ...job, generationId: `bench-${round}` },
    {
      workDir: path.join(dir, 'provider'),
      onProgress: (f) => {
        while (f >= next && next <= 1) {
          say(`    provider progress ${Math.round(next * 100)}% (${((performance.now() - started) / 1000).toFixed(1)} s)`);
          next += 0.25;
        }
      },
    },
  );
  const ms = performance.now() - started;
  if (res.width !== width || res.height !== height || Math.abs((res.durationSeconds ?? 0) - duration) > 0.15) {
    throw new Error(`unexpected output ${JSON.stringify(res)}`);
  }
  return ms;
}

const ours: number[] = [];
const base: number[] = [];
const ratios: number[] = [];
try {
  // Warm-up: fonts, sharp, the page cache for the ffmpeg binary.
  await provider.generate({ ...job, generationId: 'warmup', output: 'image', imageFormat: 'png' }, { workDir: path.join(dir, 'provider') });
  for (let i = 0; i < rounds; i++) {
    say(`  round ${i + 1}/${rounds}: ${i % 2 === 0 ? 'ffmpeg alone first' : 'provider first'}`);
    let d: number;
    let p: number;
    if (i % 2 === 0) {
      d = await runDirect();
      say(`    ffmpeg alone ${(d / 1000).toFixed(2)} s`);
      p = await runProvider(i);
    } else {
      p = await runProvider(i);
      say(`    provider ${(p / 1000).toFixed(2)} s`);
      d = await runDirect();
    }
    base.push(d);
    ours.push(p);
    ratios.push(p / d);
    say(`  round ${i + 1}: ffmpeg alone ${(d / 1000).toFixed(2)} s | provider ${(p / 1000).toFixed(2)} s | ratio ${(p / d).toFixed(3)}`);
  }
  const check = await probe(plan.outPath);
  say(
    `renderer bench: direct output ${check.width}×${check.height} ${check.video_codec}/${check.audio_codec} ${check.duration_seconds?.toFixed(2)} s`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const ratio = median(ours) / median(base);
say(
  `renderer bench: ffmpeg alone median ${(median(base) / 1000).toFixed(2)} s, provider median ${(median(ours) / 1000).toFixed(2)} s (median of per-round ratios ${median(ratios).toFixed(3)})`,
);
say(`renderer bench: RATIO ${ratio.toFixed(3)} (target ≤ 1.5) ${ratio <= 1.5 ? 'MET' : 'NOT MET'}`);
