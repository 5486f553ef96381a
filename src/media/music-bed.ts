// The music bed of faceless videos: a soft chord pad synthesized by ffmpeg (aevalsrc; a chord
// per image style), faded in and out, and ducked under the narration: its level dips by about
// 10 dB while the voice speaks (word timings merged into phrases, with short ramps), so the
// voice stays on top. The ducking is baked into the file; the timeline item keeps its own level
// (volume_db) for the editor.
import { runFfmpeg } from './ffmpeg.ts';

/** Chord tones (Hz) of each style's pad. */
const CHORDS: Record<string, number[]> = {
  cinematic: [110, 220, 261.63, 329.63],
  watercolor: [174.61, 220, 261.63, 349.23],
  comic: [130.81, 261.63, 329.63, 392],
  minimal: [196, 293.66, 392],
  neon: [110, 164.81, 220, 277.18],
  vintage: [146.83, 174.61, 220, 293.66],
};

/** Level of the bed while the voice speaks (linear; 0.32 ≈ −10 dB). */
const DUCKED = 0.32;

const n = (v: number) => (Math.round(v * 1000) / 1000).toString();

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

/** The ducking gain expression on t (seconds): 1 between phrases, DUCKED inside them. */
export function duckExpression(words: { startMs: number; endMs: number }[]): string {
  const parts = phrases(words).map(([a, b]) => `clip(min((t-${n(a / 1000 - 0.15)})/0.15,(${n(b / 1000 + 0.3)}-t)/0.3),0,1)`);
  if (!parts.length) return '1';
  return `1-${n(1 - DUCKED)}*min(1,${parts.join('+')})`;
}

/** Writes a `seconds`-long 48 kHz stereo WAV bed in the style's chord into `out` (inside `cwd`). */
export async function renderMusicBed(
  out: string,
  opts: { seconds: number; style: string; words: { startMs: number; endMs: number }[]; cwd: string; signal?: AbortSignal },
): Promise<void> {
  const tones = CHORDS[opts.style] ?? CHORDS.cinematic;
  const amp = 0.22 / tones.length;
  const voice = tones.map((f, i) => `${n(amp)}*sin(2*PI*${n(f)}*t+${i})`).join('+');
  // A slow swell so the pad breathes.
  const swell = '(0.7+0.3*sin(2*PI*0.08*t))';
  const d = Math.max(0.5, opts.seconds);
  // aevalsrc evaluates its expression per sample: synthesized in mono at 12 kHz (the tones are
  // below 400 Hz), then resampled to 48 kHz stereo, eight times less work than at 48 kHz stereo.
  const graph = [
    `aevalsrc=exprs='(${voice})*${swell}':s=12000:d=${n(d)}`,
    'aresample=48000',
    `afade=t=in:st=0:d=${n(Math.min(1, d / 4))}`,
    `afade=t=out:st=${n(Math.max(0, d - 1.5))}:d=${n(Math.min(1.5, d / 4))}`,
    `volume=volume='${duckExpression(opts.words)}':eval=frame[out]`,
  ].join(',');
  await runFfmpeg(['-filter_complex', graph, '-map', '[out]', '-ac', '2', '-ar', '48000', '-c:a', 'pcm_s16le', '-t', n(d), out], {
    cwd: opts.cwd,
    signal: opts.signal,
  });
}
