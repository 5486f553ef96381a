// What the media quality checker (./check.ts) reads from a video or its sound, each in ONE bounded
// ffmpeg run (src/media/ffmpeg.ts's runFfmpeg: the input forced to its sniffed demuxer, killed at
// the deadline through its signal):
//   sampleVideo: the frames at given times at full size (the middle of each text's and scene's
//     span: select picks the first frame at or after each time), evenly spaced frames at 360 px
//     wide (nearest-neighbour, so edge bars keep hard edges) and, when asked, the scene cuts
//     (`select='gt(scene,0.3)'` on a 160 px copy);
//   measureAudio: the peak level of the whole track (astats, dBFS; −Infinity for digital silence)
//   and the spans that sound like speech (speechSpans: the voice band's level every 100 ms, the
//   speech heuristic of ../analysis.ts over sliding 1.5 s windows; a music bed alone is not speech).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { looksLikeSpeech, metadataReport, voiceBandLevels } from '../analysis.ts';
import { escapeFilterValue, inputArgs, type MediaFile, runFfmpeg } from '../ffmpeg.ts';
import type { Frame } from './pixels.ts';

/** Decodes an image (bytes or a file) into an RGBA frame, at most `maxWidth` wide (nearest-neighbour). */
export async function decodeFrame(input: Buffer | string, maxWidth?: number): Promise<Frame> {
  let img = sharp(input, { failOn: 'error' }).rotate();
  if (maxWidth) img = img.resize({ width: maxWidth, withoutEnlargement: true, kernel: 'nearest' });
  const { data, info } = await img.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

export interface VideoSamples {
  /** The frame shown at each requested time (full size), by the time asked for. */
  at: Map<number, Frame>;
  /** Evenly spaced frames, 360 px wide, with their times. */
  even: { t: number; frame: Frame }[];
  /** Scene cuts (seconds), when asked for. */
  cuts: number[];
}

export interface SampleOptions {
  duration: number;
  fps: number;
  /** How many evenly spaced frames (at most 2 a second). */
  evenCount: number;
  detectCuts: boolean;
  signal: AbortSignal;
}

/** Requested times, clamped into the video and merged when closer than 1.5 frames: [time, the times it stands for]. */
function frameTimes(times: number[], o: SampleOptions): [number, number[]][] {
  const frame = 1 / o.fps;
  const last = Math.max(0, o.duration - 1.5 * frame);
  const sorted = [...new Set(times)].sort((a, b) => a - b);
  const out: [number, number[]][] = [];
  for (const t of sorted) {
    const c = Math.round(Math.min(last, Math.max(0, t)) * 1000) / 1000;
    const prev = out.at(-1);
    if (prev && c - prev[0] < 1.5 * frame) prev[1].push(t);
    else out.push([c, [t]]);
  }
  return out;
}

/** Reads the frames the checks need from `file` in one ffmpeg run (see the head of this file). */
export async function sampleVideo(file: MediaFile, times: number[], o: SampleOptions): Promise<VideoSamples> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'check-media-'));
  try {
    const picks = frameTimes(times, o);
    const rate = Math.min(2, o.evenCount / Math.max(o.duration, 0.5));
    const cutsFile = path.join(dir, 'cuts.txt');
    const branches: { graph: string; out: string[] }[] = [
      { graph: `fps=fps=${rate.toFixed(4)},scale=360:-2:flags=neighbor`, out: ['-f', 'image2', path.join(dir, 'e-%03d.png')] },
    ];
    if (picks.length) {
      const expr = picks.map(([t]) => `gte(t,${t})*(isnan(prev_pts)+lt(prev_pts*TB,${t}))`).join('+');
      branches.push({ graph: `select='${expr}'`, out: ['-vsync', '0', '-f', 'image2', path.join(dir, 't-%03d.png')] });
    }
    if (o.detectCuts)
      branches.push({
        graph: `scale=160:-2,select='gt(scene,0.3)',metadata=print:file=${escapeFilterValue(cutsFile)}`,
        out: ['-f', 'null', '-'],
      });
    const graph = [
      `[0:v:0]split=${branches.length}${branches.map((_, i) => `[s${i}]`).join('')}`,
      ...branches.map((b, i) => `[s${i}]${b.graph}[o${i}]`),
    ].join(';');
    const outputs = branches.flatMap((b, i) => ['-map', `[o${i}]`, '-compression_level', '1', ...b.out]);
    await runFfmpeg([...inputArgs(file), '-filter_complex', graph, ...outputs], {
      cwd: path.dirname(path.resolve(file.path)),
      signal: o.signal,
    });
    const names = (await fs.readdir(dir)).sort();
    const at = new Map<number, Frame>();
    const picked = names.filter((n) => n.startsWith('t-'));
    for (const [i, [, asked]] of picks.entries()) {
      if (!picked[i]) break;
      const frame = await decodeFrame(path.join(dir, picked[i]));
      for (const t of asked) at.set(t, frame);
    }
    const even = [];
    for (const [i, n] of names.filter((n) => n.startsWith('e-')).entries())
      even.push({ t: Math.round((i / rate) * 1000) / 1000, frame: await decodeFrame(path.join(dir, n)) });
    const cuts = o.detectCuts ? (await metadataReport(cutsFile, 'lavfi.scene_score')).map((x) => x.t).filter((t) => t > 0) : [];
    return { at, even, cuts };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export interface AudioMeasures {
  /** Peak level of the track in dBFS (−Infinity: digital silence). */
  peakDb: number;
  /** The spans (seconds) that sound like speech (see speechSpans). */
  speech: { fromSeconds: number; toSeconds: number }[];
}

/** The first audio track's peak level and the spans that sound like speech, in one ffmpeg run. */
export async function measureAudio(file: MediaFile, signal: AbortSignal): Promise<AudioMeasures> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'check-media-'));
  try {
    const voice = path.join(dir, 'voice.txt');
    const peak = path.join(dir, 'peak.txt');
    const graph = [
      '[0:a:0]asplit=2[a1][a2]',
      `[a1]${voiceBandLevels(voice)}[s]`,
      `[a2]astats=metadata=1:reset=0,ametadata=print:key=lavfi.astats.Overall.Peak_level:file=${escapeFilterValue(peak)}[p]`,
    ].join(';');
    await runFfmpeg([...inputArgs(file), '-filter_complex', graph, '-map', '[s]', '-f', 'null', '-', '-map', '[p]', '-f', 'null', '-'], {
      cwd: path.dirname(path.resolve(file.path)),
      signal,
    });
    const last = (await metadataReport(peak, 'lavfi.astats.Overall.Peak_level')).at(-1)?.v;
    // astats reports digital silence as -inf (or, from some decoders, as thousands of dB below zero).
    const peakDb = last === undefined || Number.isNaN(last) || last < -200 ? Number.NEGATIVE_INFINITY : last;
    const levels = (await metadataReport(voice, 'lavfi.astats.Overall.RMS_level')).map((x) => (Number.isFinite(x.v) ? x.v : -120));
    return { peakDb, speech: speechSpans(levels) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Voice-band level (dBFS) above which a 100 ms window is voiced (as ../analysis.ts). */
const VOICED_DB = -45;

/**
 * The spans that sound like speech, from the voice band's level of every 100 ms: the 1.5 s
 * windows (every 0.5 s) that ../analysis.ts's speech heuristic calls speech (voiced often enough,
 * modulated the way syllables modulate it: a steady music bed or hum is not), and the voiced
 * 100 ms steps that at least half of the windows over them call speech (a step is in up to three:
 * one window that ends a sentence must not make the music after it speech), joined across pauses
 * shorter than 0.7 s.
 */
export function speechSpans(levels: number[]): { fromSeconds: number; toSeconds: number }[] {
  const votes = new Uint8Array(levels.length);
  const windows = new Uint8Array(levels.length);
  for (let start = 0; start < levels.length; start += 5) {
    const window = levels.slice(start, start + 15);
    if (window.length < 5) continue;
    const speech = looksLikeSpeech(window);
    for (let i = start; i < start + window.length; i++) {
      windows[i]++;
      if (speech) votes[i]++;
    }
  }
  const spans: { fromSeconds: number; toSeconds: number }[] = [];
  for (const [i, v] of levels.entries()) {
    if (!votes[i] || 2 * votes[i] < windows[i] || v <= VOICED_DB) continue;
    const [from, to] = [i / 10, (i + 1) / 10];
    const prev = spans.at(-1);
    if (prev && from - prev.toSeconds < 0.7) prev.toSeconds = to;
    else spans.push({ fromSeconds: from, toSeconds: to });
  }
  return spans;
}
