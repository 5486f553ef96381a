// The music bed: a track of the music library (./music/: moods synthesized here, licence-clean)
// of the requested length, its mood chosen from the request's words and style, faded in and out,
// and ducked under the narration: its level dips by about 10 dB while the voice speaks (word
// timings merged into phrases, with short ramps), so the voice stays on top. The ducking is baked
// into the file; the timeline item keeps its own level (volume_db) for the editor.
import { writeFile } from 'node:fs/promises';
import { wav } from './wav.ts';
import { chooseMood, type Mood } from './music/moods.ts';
import { SYNTH_RATE, synthesize } from './music/synth.ts';

/** The bed's rate: 48 kHz stereo, the mixers' format. */
const MUSIC_RATE = SYNTH_RATE * 2;

export { chooseMood, MOODS, type Mood } from './music/moods.ts';

/** Level of the bed while the voice speaks (linear; 0.32 ≈ −10 dB). */
const DUCKED = 0.32;
/** Level of the bed (linear) against the library's peak, leaving room for the voice. */
const BED_LEVEL = 0.5;

/** Phrases of speech: word intervals (ms) merged across gaps shorter than `gapMs`. */
export function phrases(words: { startMs: number; endMs: number }[], gapMs = 400): [number, number][] {
  const out: [number, number][] = [];
  for (const w of words) {
    const last = out.at(-1);
    if (last && w.startMs - last[1] < gapMs) last[1] = Math.max(last[1], w.endMs);
    else out.push([w.startMs, w.endMs]);
  }
  return out;
}

/** The ducking gain at `t` seconds: 1 between phrases, DUCKED inside them, ramping over 0.15 s before and 0.3 s after. */
export function duckGain(spans: [number, number][], t: number): number {
  let inside = 0;
  for (const [a, b] of spans) inside += Math.min(1, Math.max(0, Math.min((t - (a / 1000 - 0.15)) / 0.15, (b / 1000 + 0.3 - t) / 0.3)));
  return 1 - (1 - DUCKED) * Math.min(1, inside);
}

/** A stable 32-bit seed of a text. */
const seedOf = (text: string) => [...text].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261);

export interface MusicBedOptions {
  seconds: number;
  /** The mood; else chosen from `prompt` and `style` (chooseMood). */
  mood?: Mood;
  /** The request's words (its prompt, topic or title). */
  prompt?: string;
  /** A faceless image style (or a mood name). */
  style?: string;
  /** The narration's words; none: no ducking. */
  words: { startMs: number; endMs: number }[];
  signal?: AbortSignal;
}

/** Writes a `seconds`-long 48 kHz stereo 16-bit WAV bed into `out`; returns the mood played. */
export async function renderMusicBed(out: string, opts: MusicBedOptions): Promise<Mood> {
  const mood = opts.mood ?? chooseMood(opts.prompt ?? '', opts.style);
  const d = Math.max(0.5, opts.seconds);
  const { left, right } = synthesize(mood, d, seedOf(`${mood}|${opts.prompt ?? ''}`));
  opts.signal?.throwIfAborted();
  const spans = phrases(opts.words);
  const [fadeIn, fadeOut] = [Math.min(1, d / 4), Math.min(1.5, d / 4)];
  // Twice the synthesis rate: each synthesized sample, then the mean of it and the next one.
  const frames = left.length * 2;
  const pcm = new Int16Array(frames * 2);
  const at = (ch: Float32Array, j: number) => (j % 2 ? (ch[(j - 1) / 2] + ch[Math.min(ch.length - 1, (j + 1) / 2)]) / 2 : ch[j / 2]);
  let gain = 1;
  for (let j = 0; j < frames; j++) {
    // The ducking gain moves slowly: computed every 10 ms.
    if (j % 480 === 0) {
      const t = j / MUSIC_RATE;
      gain = BED_LEVEL * duckGain(spans, t) * Math.min(1, t / fadeIn, Math.max(0, d - t) / fadeOut);
    }
    pcm[2 * j] = Math.round(32767 * Math.max(-1, Math.min(1, at(left, j) * gain)));
    pcm[2 * j + 1] = Math.round(32767 * Math.max(-1, Math.min(1, at(right, j) * gain)));
  }
  await writeFile(out, wav(pcm, MUSIC_RATE, 2));
  return mood;
}
