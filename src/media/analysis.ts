// What an image or a video looks like, for reference inspirations (seed 4.7, issue 12) and the
// similarity that ranks them. Everything here runs on pixels sharp decoded (bounded by the pixel
// limits) or on ffmpeg output of files forced to their sniffed format (src/media/ffmpeg.ts).
//
// Image analysis (analyseImage):
//   - width, height (after EXIF rotation), orientation (square within 2 %);
//   - palette: k-means (k-means++ seeding, fixed seed, so the same image gives the same answer) in
//     CIE Lab over the image downscaled to ≤ 128 px per side with nearest-neighbour sampling (no
//     blended edge colours); clusters closer than ΔE 10 merged, those under 1 % dropped; up to 8,
//     most prominent first, with the share of pixels each one covers;
//   - subject: frequency-tuned saliency (Achanta et al. 2009): each pixel's Lab distance from the
//     image's mean colour after a light blur; the box holding the salient pixels (above twice the
//     mean saliency; 2nd–98th percentile per axis), as fractions of the frame; null when under
//     1 % of the image stands out (a flat image);
//   - text and text_regions: OCR (./ocr.ts) of a greyscale copy at ≤ 1280 px per side, with a deadline;
//   - phash: the 64-bit DCT perceptual hash (sharp-phash) of the downscaled copy, as 16 hex digits.
// Video analysis (analyseVideo): ffprobe for duration, size and frame rate; one ffmpeg pass (video
// scaled to 160 px wide) for scene cuts (`select='gt(scene,0.3)'`), integrated loudness (ebur128)
// and the speech heuristic below; up to 3 keyframes (the middle of the longest shots) analysed as
// images; the transcript through the configured transcription provider.
//   Speech heuristic: the audio, band-passed to the voice band (250–3500 Hz), cut into 100 ms
//   windows; speech when at least 20 % of the windows are voiced (band RMS above -45 dBFS) and the
//   band's level is modulated the way syllables modulate it (standard deviation of the voiced
//   windows' levels ≥ 3 dB, and at least 3 onsets per 10 s). Silence and steady tones or hum are
//   not speech; talking, singing and strongly rhythmic voice-band sound are.
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import phashModule from 'sharp-phash';
import type { components } from '../../generated/openapi.d.ts';
import { escapeFilterValue, extractFrame, inputArgs, probe, runFfmpeg, type MediaFile } from './ffmpeg.ts';
import type { PixelLimits } from './limits.ts';
import { recognizeText } from './ocr.ts';

// sharp-phash is CommonJS (module.exports = phash); its typings declare an ES default export.
const phash = phashModule as unknown as (image: Buffer) => Promise<string>;

// The shapes of the contract (a reference's media analysis), narrowed by kind.
type S = components['schemas'];
export type Box = S['ReferenceFrameBox'];
export type PaletteColor = S['ReferencePaletteColor'];
export type ImageAnalysis = S['ReferenceImageAnalysis'] & { kind: 'image' };
/** A video's analysis: every video-only field present, its keyframes analysed as images. */
export type VideoAnalysis = Required<S['ReferenceMediaAnalysis']> & { kind: 'video'; keyframes: ImageAnalysis[] };

export type MediaAnalysis = ImageAnalysis | VideoAnalysis;

export interface AnalyseOptions {
  limits: PixelLimits;
  /** Deadline of one OCR run. */
  ocrDeadlineMs: number;
  /** Skip OCR (text '' and no regions): catalog previews, whose text is known. */
  skipOcr?: boolean;
  signal?: AbortSignal;
}

const PALETTE_SIDE = 128;
const OCR_SIDE = 1280;
const MAX_COLORS = 8;
const MERGE_DELTA_E = 10;
const MIN_SHARE = 0.01;
export const MAX_KEYFRAMES = 3;
const MAX_REGIONS = 20;

// ------------------------------------------------------------------------------------ colour

/** sRGB 0–255 → CIE Lab (D65). */
export function rgbToLab(r: number, g: number, b: number): [number, number, number] {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const R = lin(r);
  const G = lin(g);
  const B = lin(b);
  const x = (R * 0.4124 + G * 0.3576 + B * 0.1805) / 0.95047;
  const y = R * 0.2126 + G * 0.7152 + B * 0.0722;
  const z = (R * 0.0193 + G * 0.1192 + B * 0.9505) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

export function hexToLab(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return rgbToLab((n >> 16) & 255, (n >> 8) & 255, n & 255);
}

/** CIE76 colour difference. */
export const deltaE = (a: readonly number[], b: readonly number[]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

const hex = (r: number, g: number, b: number) =>
  `#${[r, g, b]
    .map((v) =>
      Math.round(Math.max(0, Math.min(255, v)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;

/** A small deterministic generator (mulberry32), so the same pixels give the same palette. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The dominant colours of raw RGB pixels (see the head of this file). */
export function paletteOf(rgb: Buffer, channels: number): PaletteColor[] {
  const n = Math.floor(rgb.length / channels);
  if (!n) return [];
  const lab = new Float64Array(n * 3);
  for (let i = 0; i < n; i++) {
    const [L, A, B] = rgbToLab(rgb[i * channels], rgb[i * channels + 1], rgb[i * channels + 2]);
    lab[i * 3] = L;
    lab[i * 3 + 1] = A;
    lab[i * 3 + 2] = B;
  }
  const dist2 = (i: number, c: number[]) => (lab[i * 3] - c[0]) ** 2 + (lab[i * 3 + 1] - c[1]) ** 2 + (lab[i * 3 + 2] - c[2]) ** 2;
  // k-means++ seeding; stops early when every pixel already sits on a centre (few distinct colours).
  const rand = rng(0x5eed);
  const centres: number[][] = [];
  const first = Math.floor(rand() * n);
  centres.push([lab[first * 3], lab[first * 3 + 1], lab[first * 3 + 2]]);
  const d = new Float64Array(n).fill(Infinity);
  while (centres.length < MAX_COLORS) {
    const c = centres[centres.length - 1];
    let total = 0;
    for (let i = 0; i < n; i++) {
      d[i] = Math.min(d[i], dist2(i, c));
      total += d[i];
    }
    if (total < 1e-6) break;
    let pick = rand() * total;
    let chosen = n - 1;
    for (let i = 0; i < n; i++) {
      pick -= d[i];
      if (pick <= 0) {
        chosen = i;
        break;
      }
    }
    centres.push([lab[chosen * 3], lab[chosen * 3 + 1], lab[chosen * 3 + 2]]);
  }
  const k = centres.length;
  const assign = new Int32Array(n);
  const sums = new Float64Array(k * 6);
  const counts = new Float64Array(k);
  for (let iter = 0; iter < 12; iter++) {
    sums.fill(0);
    counts.fill(0);
    let moved = 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bd = Infinity;
      for (let c = 0; c < k; c++) {
        const v = dist2(i, centres[c]);
        if (v < bd) {
          bd = v;
          best = c;
        }
      }
      if (assign[i] !== best) moved++;
      assign[i] = best;
      counts[best]++;
      for (let j = 0; j < 3; j++) sums[best * 6 + j] += lab[i * 3 + j];
      for (let j = 0; j < 3; j++) sums[best * 6 + 3 + j] += rgb[i * channels + j];
    }
    for (let c = 0; c < k; c++)
      if (counts[c]) centres[c] = [sums[c * 6] / counts[c], sums[c * 6 + 1] / counts[c], sums[c * 6 + 2] / counts[c]];
    if (iter > 0 && moved === 0) break;
  }
  // Clusters as (share, mean RGB, Lab), merged when close, small ones dropped.
  let clusters = centres
    .map((lab3, c) => ({ count: counts[c], rgb: [0, 1, 2].map((j) => (counts[c] ? sums[c * 6 + 3 + j] / counts[c] : 0)), lab: lab3 }))
    .filter((c) => c.count > 0)
    .sort((a, b) => b.count - a.count);
  const merged: typeof clusters = [];
  for (const c of clusters) {
    const into = merged.find((m) => deltaE(m.lab, c.lab) < MERGE_DELTA_E);
    if (!into) {
      merged.push({ ...c, rgb: [...c.rgb], lab: [...c.lab] });
      continue;
    }
    const total = into.count + c.count;
    for (let j = 0; j < 3; j++) {
      into.rgb[j] = (into.rgb[j] * into.count + c.rgb[j] * c.count) / total;
      into.lab[j] = (into.lab[j] * into.count + c.lab[j] * c.count) / total;
    }
    into.count = total;
  }
  clusters = merged.filter((c) => c.count / n >= MIN_SHARE).sort((a, b) => b.count - a.count);
  return clusters
    .slice(0, MAX_COLORS)
    .map((c) => ({ hex: hex(c.rgb[0], c.rgb[1], c.rgb[2]), proportion: Math.round((c.count / n) * 1000) / 1000 }));
}

/** The salient box of raw RGB pixels (frequency-tuned saliency; see the head of this file). */
export function subjectOf(rgb: Buffer, width: number, height: number, channels: number): Box | null {
  const n = width * height;
  const lab = new Float64Array(n * 3);
  const mean = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    const v = rgbToLab(rgb[i * channels], rgb[i * channels + 1], rgb[i * channels + 2]);
    for (let j = 0; j < 3; j++) {
      lab[i * 3 + j] = v[j];
      mean[j] += v[j] / n;
    }
  }
  const sal = new Float64Array(n);
  let avg = 0;
  for (let i = 0; i < n; i++) {
    sal[i] = Math.hypot(lab[i * 3] - mean[0], lab[i * 3 + 1] - mean[1], lab[i * 3 + 2] - mean[2]);
    avg += sal[i] / n;
  }
  const threshold = Math.max(2 * avg, 8);
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < n; i++) {
    if (sal[i] > threshold) {
      xs.push(i % width);
      ys.push(Math.floor(i / width));
    }
  }
  if (xs.length < n * 0.01) return null;
  xs.sort((a, b) => a - b);
  ys.sort((a, b) => a - b);
  const q = (a: number[], f: number) => a[Math.min(a.length - 1, Math.floor(f * a.length))];
  const x0 = q(xs, 0.02);
  const x1 = q(xs, 0.98) + 1;
  const y0 = q(ys, 0.02);
  const y1 = q(ys, 0.98) + 1;
  return fractions({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, width, height);
}

const r3 = (v: number) => Math.round(Math.max(0, Math.min(1, v)) * 1000) / 1000;
function fractions(b: Box, width: number, height: number): Box {
  return { x: r3(b.x / width), y: r3(b.y / height), width: r3(b.width / width), height: r3(b.height / height) };
}

export function orientationOf(width: number, height: number): ImageAnalysis['orientation'] {
  if (Math.abs(width - height) <= 0.02 * Math.max(width, height)) return 'square';
  return width > height ? 'landscape' : 'portrait';
}

/** Text without control characters other than tab and newline. */
const plainText = (s: string) => s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '');

/** A 64-bit sharp-phash bit string as 16 hex digits. */
const bitsToHex = (bits: string) =>
  bits
    .match(/.{4}/g)!
    .map((b) => Number.parseInt(b, 2).toString(16))
    .join('');

// ------------------------------------------------------------------------------------- image

/** Analyses an image (a local file or bytes sharp decodes: PNG, JPEG, WebP; SVG for our own previews). */
export async function analyseImage(input: string | Buffer, opts: AnalyseOptions): Promise<ImageAnalysis> {
  const source = () => sharp(input, { limitInputPixels: opts.limits.maxPixels, failOn: 'error' }).rotate();
  // One decode into a bounded working copy; every step below reads that copy.
  const { data: work, info: workInfo } = await source()
    .flatten({ background: '#ffffff' })
    .resize(OCR_SIDE, OCR_SIDE, { fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const meta = await sharp(input, { limitInputPixels: opts.limits.maxPixels }).metadata();
  const swap = (meta.orientation ?? 1) >= 5;
  const width = (swap ? meta.height : meta.width) ?? workInfo.width;
  const height = (swap ? meta.width : meta.height) ?? workInfo.height;
  const working = () => sharp(work, { raw: { width: workInfo.width, height: workInfo.height, channels: workInfo.channels } });
  opts.signal?.throwIfAborted();

  const small = await working()
    .resize(PALETTE_SIDE, PALETTE_SIDE, { fit: 'inside', kernel: 'nearest' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const palette = paletteOf(small.data, small.info.channels);
  const blurred = await working().resize(PALETTE_SIDE, PALETTE_SIDE, { fit: 'inside' }).blur(1).raw().toBuffer({ resolveWithObject: true });
  const subject = subjectOf(blurred.data, blurred.info.width, blurred.info.height, blurred.info.channels);
  const hash = bitsToHex(await phash(await working().resize(256, 256, { fit: 'inside' }).png({ compressionLevel: 0 }).toBuffer()));

  let text = '';
  let regions: Box[] = [];
  if (!opts.skipOcr) {
    opts.signal?.throwIfAborted();
    const grey = await working().greyscale().png({ compressionLevel: 1 }).toBuffer();
    const ocr = await recognizeText(grey, opts.ocrDeadlineMs);
    text = plainText(ocr.text).slice(0, 20_000);
    regions = ocr.lines.slice(0, MAX_REGIONS).map((b) => fractions(b, workInfo.width, workInfo.height));
  }
  return {
    kind: 'image',
    width,
    height,
    orientation: orientationOf(width, height),
    palette,
    subject,
    text,
    text_regions: regions,
    phash: hash,
  };
}

// ------------------------------------------------------------------------------------- video

export interface VideoAnalyseOptions extends AnalyseOptions {
  /** The job's folder: the video lies in it, and ffmpeg writes its reports there. */
  workDir: string;
  /** Only the first this many seconds are read (requests a client waits on); all when absent. */
  maxSeconds?: number;
  /** Transcribes the audio (a WAV file made here; the configured provider), or undefined: transcript null. */
  transcribe?: (file: MediaFile) => Promise<string | null>;
}

const SCENE_THRESHOLD = 0.3;
const TRANSCRIBE_MAX_SECONDS = 780;

const readLines = async (file: string) => (await fs.readFile(file, 'utf8').catch(() => '')).split('\n');

/** Values of `key=` lines in an ffmpeg `metadata=print` report, with the pts_time of their frame. */
export async function metadataReport(file: string, key: string): Promise<{ t: number; v: number }[]> {
  const out: { t: number; v: number }[] = [];
  let t = 0;
  for (const line of await readLines(file)) {
    const frame = /pts_time:([-\d.]+)/.exec(line);
    if (frame) t = Number(frame[1]);
    else if (line.startsWith(`${key}=`)) out.push({ t, v: Number(line.slice(key.length + 1)) });
  }
  return out;
}

/** The filter chain that prints the voice band's RMS level (dBFS) of every 100 ms of audio into `file` (metadataReport key lavfi.astats.Overall.RMS_level). */
export const voiceBandLevels = (file: string) =>
  `aresample=16000,highpass=f=250,lowpass=f=3500,asetnsamples=n=1600:p=0,astats=metadata=1:reset=1,ametadata=print:key=lavfi.astats.Overall.RMS_level:file=${escapeFilterValue(file)}`;

/** The speech heuristic of the head of this file, over 100 ms voice-band RMS levels (dBFS). */
export function looksLikeSpeech(levels: number[]): boolean {
  if (levels.length < 5) return false;
  const voiced = levels.filter((v) => Number.isFinite(v) && v > -45);
  if (voiced.length < 0.2 * levels.length) return false;
  const mean = voiced.reduce((a, b) => a + b, 0) / voiced.length;
  const sd = Math.sqrt(voiced.reduce((a, b) => a + (b - mean) ** 2, 0) / voiced.length);
  let onsets = 0;
  for (let i = 1; i < levels.length; i++)
    if (levels[i] - (Number.isFinite(levels[i - 1]) ? levels[i - 1] : -120) >= 6 && levels[i] > -45) onsets++;
  return sd >= 3 && onsets >= Math.max(1, (3 * levels.length) / 100);
}

/** Analyses a video in `opts.workDir` (see the head of this file). */
export async function analyseVideo(file: MediaFile, opts: VideoAnalyseOptions): Promise<VideoAnalysis> {
  const info = await probe(file, { signal: opts.signal });
  const fullDuration = info.duration_seconds ?? 0;
  const duration = opts.maxSeconds ? Math.min(fullDuration, opts.maxSeconds) : fullDuration;
  const limit = opts.maxSeconds ? ['-t', String(opts.maxSeconds)] : [];
  const { cuts, loudness, levels } = await measureVideo(file, info.has_audio, limit, opts);
  const keyframes = await analyseKeyframes(file, cuts, duration, opts);
  const main = keyframes[0];
  const said = info.has_audio && opts.transcribe ? await transcribeAudio(file, limit, opts, opts.transcribe) : null;
  const transcript = said === null ? null : plainText(said).slice(0, 200_000);
  const width = info.width ?? main?.width ?? 0;
  const height = info.height ?? main?.height ?? 0;
  return {
    kind: 'video',
    width,
    height,
    orientation: orientationOf(width, height),
    palette: mergePalettes(keyframes.map((k) => k.palette)),
    subject: main?.subject ?? null,
    text: [...new Set(keyframes.map((k) => k.text).filter(Boolean))].join('\n').slice(0, 20_000),
    text_regions: keyframes.flatMap((k) => k.text_regions).slice(0, MAX_REGIONS),
    phash: main?.phash ?? '0000000000000000',
    duration_seconds: Math.round(fullDuration * 1000) / 1000,
    fps: info.fps,
    scene_cuts_seconds: cuts,
    loudness_lufs: loudness !== undefined && Number.isFinite(loudness) ? Math.round(loudness * 10) / 10 : null,
    speech: looksLikeSpeech(levels),
    transcript,
    keyframes,
  };
}

/**
 * One ffmpeg pass over the video: its scene cuts (seconds), and with audio its integrated loudness
 * (LUFS) and the voice-band RMS levels of every 100 ms (dBFS) for the speech heuristic.
 */
async function measureVideo(
  file: MediaFile,
  hasAudio: boolean,
  limit: string[],
  opts: VideoAnalyseOptions,
): Promise<{ cuts: number[]; loudness: number | undefined; levels: number[] }> {
  const cwd = opts.workDir;
  const scenes = path.join(cwd, 'scenes.txt');
  const loud = path.join(cwd, 'loudness.txt');
  const voice = path.join(cwd, 'voice.txt');
  const graph = [
    `[0:v:0]scale=160:-2,select='gt(scene,${SCENE_THRESHOLD})',metadata=print:file=${escapeFilterValue(scenes)}[v]`,
    ...(hasAudio
      ? [
          '[0:a:0]asplit=2[a1][a2]',
          `[a1]ebur128=metadata=1,ametadata=print:key=lavfi.r128.I:file=${escapeFilterValue(loud)}[l]`,
          `[a2]${voiceBandLevels(voice)}[s]`,
        ]
      : []),
  ].join(';');
  await runFfmpeg(
    [
      ...inputArgs(file, limit),
      '-filter_complex',
      graph,
      '-map',
      '[v]',
      '-f',
      'null',
      '-',
      ...(hasAudio ? ['-map', '[l]', '-f', 'null', '-', '-map', '[s]', '-f', 'null', '-'] : []),
    ],
    { cwd, signal: opts.signal },
  );
  const cuts = (await metadataReport(scenes, 'lavfi.scene_score')).map((x) => Math.round(x.t * 1000) / 1000).filter((t) => t > 0);
  const loudness = hasAudio ? (await metadataReport(loud, 'lavfi.r128.I')).at(-1)?.v : undefined;
  const levels = hasAudio
    ? (await metadataReport(voice, 'lavfi.astats.Overall.RMS_level')).map((x) => (Number.isFinite(x.v) ? x.v : -120))
    : [];
  return { cuts, loudness, levels };
}

/** Keyframes: the middle of the longest shots, in time order, each analysed as an image. */
async function analyseKeyframes(file: MediaFile, cuts: number[], duration: number, opts: VideoAnalyseOptions): Promise<ImageAnalysis[]> {
  const bounds = [0, ...cuts, duration];
  const shots = bounds
    .slice(1)
    .map((end, i) => ({ start: bounds[i], end }))
    .filter((s) => s.end > s.start);
  const picked = shots
    .sort((a, b) => b.end - b.start - (a.end - a.start))
    .slice(0, MAX_KEYFRAMES)
    .map((s) => (s.start + s.end) / 2)
    .sort((a, b) => a - b);
  if (!picked.length) picked.push(0);
  const keyframes: ImageAnalysis[] = [];
  for (const t of picked) {
    const png = await extractFrame(file, Math.max(0, Math.min(t, Math.max(0, duration - 0.05))), { signal: opts.signal });
    if (png.length) keyframes.push(await analyseImage(png, opts));
  }
  return keyframes;
}

/** The audio alone, 16 kHz mono WAV, at most 13 minutes (about 25 MB, the usual upload limit of these APIs), transcribed. */
async function transcribeAudio(
  file: MediaFile,
  limit: string[],
  opts: VideoAnalyseOptions,
  transcribe: NonNullable<VideoAnalyseOptions['transcribe']>,
): Promise<string | null> {
  const wav = path.join(opts.workDir, 'speech.wav');
  await runFfmpeg(
    [
      ...inputArgs(file, limit),
      '-map',
      '0:a:0',
      '-vn',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-t',
      String(TRANSCRIBE_MAX_SECONDS),
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      wav,
    ],
    { cwd: opts.workDir, signal: opts.signal },
  );
  return transcribe({ path: wav, type: 'audio/wav' });
}

/** Palettes of several frames as one: equal weight per frame; close colours merged, shown as the one that weighs most. */
export function mergePalettes(palettes: PaletteColor[][]): PaletteColor[] {
  const all: { lab: number[]; hex: string; top: number; share: number }[] = [];
  for (const p of palettes) {
    for (const c of p) {
      const lab = hexToLab(c.hex);
      const share = c.proportion / palettes.length;
      const into = all.find((a) => deltaE(a.lab, lab) < MERGE_DELTA_E);
      if (!into) {
        all.push({ lab, hex: c.hex, top: share, share });
        continue;
      }
      into.share += share;
      if (share > into.top) Object.assign(into, { lab, hex: c.hex, top: share });
    }
  }
  return all
    .sort((a, b) => b.share - a.share)
    .slice(0, MAX_COLORS)
    .map((a) => ({ hex: a.hex, proportion: Math.round(Math.min(1, a.share) * 1000) / 1000 }));
}
