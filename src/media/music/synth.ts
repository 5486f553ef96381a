// The music library's synthesizer: a mood (./moods.ts) played for a number of seconds into a
// stereo Float32 buffer at 24 kHz, note by note (each note adds its own samples, so the cost
// follows the notes, not the voices × the length). Instruments: a detuned pad (harmonics, slow
// attack), a plucked bass, an arpeggio of plucks, kick, snare, hi-hat and a low tom, all from a
// sine table and a seeded noise generator, so the same request makes the same music.
// Arrangement: two bars of pad (and arpeggio) alone, then bass and drums; the chord
// progression alternates verse and variation every four bars; the last bar lets the chord ring.
import { MOOD_SPECS, type Mood, type MoodSpec } from './moods.ts';

/** The synthesis rate: 24 kHz (the instruments stay below 12 kHz), doubled to 48 kHz on output (../music-bed.ts). */
export const SYNTH_RATE = 24_000;
const TABLE = 4096;
const SINE = Float32Array.from({ length: TABLE }, (_, i) => Math.sin((2 * Math.PI * i) / TABLE));
const MAJOR = [0, 2, 4, 5, 7, 9, 11];
const MINOR = [0, 2, 3, 5, 7, 8, 10];

const hz = (midi: number) => 440 * 2 ** ((midi - 69) / 12);

/** A seeded generator of uniform numbers in [-1, 1) (mulberry32). */
function noise(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 31 - 1;
  };
}

export interface Stereo {
  left: Float32Array;
  right: Float32Array;
}

/** Envelope values are computed once per this many samples and held. */
const ENV_BLOCK = 64;

/** Adds a tone of harmonics (amplitudes `harm`) at `f` Hz, shaped by `env(t)`, panned by `pan` (−1…1). */
function tone(out: Stereo, at: number, len: number, f: number, harm: number[], env: (t: number) => number, pan = 0): void {
  const start = Math.max(0, Math.round(at * SYNTH_RATE));
  const end = Math.min(out.left.length, start + Math.round(len * SYNTH_RATE));
  const [gl, gr] = [Math.min(1, 1 - pan), Math.min(1, 1 + pan)];
  const inc = harm.map((_, k) => (f * (k + 1) * TABLE) / SYNTH_RATE).filter((v) => v < TABLE / 2);
  const phase = inc.map(() => 0);
  const { left, right } = out;
  for (let b = start; b < end; b += ENV_BLOCK) {
    const e = env((b - start) / SYNTH_RATE);
    if (e < 1e-4 && b - start > SYNTH_RATE * 0.05) break;
    const stop = Math.min(end, b + ENV_BLOCK);
    for (let k = 0; k < inc.length; k++) {
      const a = harm[k] * e;
      const [l, r, d] = [a * gl, a * gr, inc[k]];
      let p = phase[k];
      for (let i = b; i < stop; i++) {
        const v = SINE[(p | 0) & (TABLE - 1)];
        left[i] += v * l;
        right[i] += v * r;
        p += d;
      }
      phase[k] = p % TABLE;
    }
  }
}

/** The chord of scale degree `degree`: three MIDI notes (root, third, fifth) from `base`. */
function chord(spec: MoodSpec, degree: number, base: number): number[] {
  const scale = spec.minor ? MINOR : MAJOR;
  return [0, 2, 4].map((s) => {
    const d = degree + s;
    return base + scale[d % 7] + 12 * Math.floor(d / 7);
  });
}

const pluck = (tau: number) => (t: number) => Math.min(1, t / 0.004) * Math.exp(-t / tau);

/** Drum hits: kick (pitch sweep), snare (noise and body), hat (high-passed noise), tom (low sweep). */
function drum(out: Stereo, kind: 'kick' | 'snare' | 'hat' | 'tom', at: number, rand: () => number, level: number): void {
  const start = Math.round(at * SYNTH_RATE);
  const len = Math.round((kind === 'hat' ? 0.06 : kind === 'tom' ? 0.7 : 0.3) * SYNTH_RATE);
  let phase = 0;
  let prev = 0;
  for (let i = 0; i < len && start + i < out.left.length; i++) {
    const t = i / SYNTH_RATE;
    let v = 0;
    if (kind === 'kick' || kind === 'tom') {
      const [lo, sweep, decay] = kind === 'kick' ? [48, 90, 0.16] : [62, 40, 0.4];
      phase += (lo + sweep * Math.exp(-t / 0.035)) / SYNTH_RATE;
      v = SINE[Math.floor(phase * TABLE) & (TABLE - 1)] * Math.exp(-t / decay);
      if (kind === 'tom') v += 0.15 * rand() * Math.exp(-t / 0.03);
    } else {
      const n = rand();
      const hp = n - prev; // first difference: a simple high-pass
      prev = n;
      if (kind === 'hat') v = 0.5 * hp * Math.exp(-t / 0.018);
      else {
        phase += 185 / SYNTH_RATE;
        v = 0.55 * n * Math.exp(-t / 0.07) + 0.5 * SINE[Math.floor(phase * TABLE) & (TABLE - 1)] * Math.exp(-t / 0.05);
      }
    }
    const pan = kind === 'hat' ? 0.25 : 0;
    out.left[start + i] += v * level * (1 - pan);
    out.right[start + i] += v * level;
  }
}

/** Plays one bar (chord of `degree`) of the arrangement starting at `at` seconds. */
function bar(out: Stereo, spec: MoodSpec, degree: number, at: number, full: boolean, rand: () => number, last: boolean): void {
  const step = 60 / spec.bpm / 4;
  const barLen = step * 16;
  const notes = chord(spec, degree, spec.root);
  const harm = Array.from({ length: spec.pad.harmonics }, (_, k) => spec.pad.level / (k + 1) ** 1.4);
  const ring = last ? barLen * 1.2 : barLen + 0.5;
  const padEnv = (t: number) => Math.min(1, t / 0.35) * (t > ring - 0.5 ? Math.max(0, (ring - t) / 0.5) : 1);
  for (const [i, m] of notes.entries()) {
    tone(out, at, ring, hz(m) * 1.002, harm, padEnv, -0.5 + 0.3 * i);
    tone(out, at, ring, hz(m) * 0.998, harm, padEnv, 0.5 - 0.3 * i);
  }
  if (spec.arp && !last) {
    const arpNotes = [...notes.map((m) => m + 12), notes[1] + 24];
    for (let s = 0, k = 0; s < 16; s += spec.arp.every, k++) {
      const l = spec.arp.level;
      tone(out, at + s * step, 0.6, hz(arpNotes[k % arpNotes.length]), [l, l * 0.35, l * 0.15], pluck(0.16), k % 2 ? 0.35 : -0.35);
    }
  }
  if (!full || last) return;
  for (const [s, tone3, len] of spec.bass) {
    const f = hz(notes[tone3] - 24);
    tone(out, at + s * step, len * step + 0.05, f, [0.3, 0.12, 0.05], (t) => pluck(0.35)(t) * (t > len * step ? 0 : 1));
  }
  if (!spec.drums) return;
  for (const kind of ['kick', 'snare', 'hat', 'tom'] as const) {
    const pattern = spec.drums[kind];
    if (!pattern) continue;
    const level = kind === 'hat' ? 0.18 : kind === 'snare' ? 0.22 : 0.5;
    for (let s = 0; s < 16; s++) if (pattern[s] === 'x') drum(out, kind, at + s * step, rand, level);
  }
}

/** `seconds` of `mood`, as stereo samples at SYNTH_RATE (peak about −3 dBFS, before any fade). */
export function synthesize(mood: Mood, seconds: number, seed: number): Stereo {
  const spec = MOOD_SPECS[mood];
  const length = Math.max(1, Math.round(seconds * SYNTH_RATE));
  const out: Stereo = { left: new Float32Array(length), right: new Float32Array(length) };
  const rand = noise(seed);
  const barLen = (60 / spec.bpm) * 4;
  const bars = Math.max(1, Math.ceil(seconds / barLen));
  for (let b = 0; b < bars; b++) {
    const progression = Math.floor(b / 4) % 2 ? spec.variation : spec.verse;
    bar(out, spec, progression[b % 4], b * barLen, b >= 2 || bars <= 2, rand, b === bars - 1 && bars > 2);
  }
  let peak = 1e-9;
  for (let i = 0; i < length; i++) peak = Math.max(peak, Math.abs(out.left[i]), Math.abs(out.right[i]));
  const gain = 0.7 / peak;
  for (let i = 0; i < length; i++) {
    out.left[i] *= gain;
    out.right[i] *= gain;
  }
  return out;
}
