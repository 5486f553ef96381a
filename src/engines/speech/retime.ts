// Narration fitted to a length: the synthesized speech sped up or slowed by a tempo factor
// (ffmpeg atempo keeps the pitch, and the word timings scale exactly), written as 48 kHz stereo
// PCM WAV, the mixers' format; optionally padded with silence (or cut) to an exact length.
import path from 'node:path';
import { inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import type { Speech, SpokenWord } from './types.ts';

/** The tempo factors atempo is given (beyond them speech stops sounding natural). */
export const MIN_TEMPO = 0.75;
export const MAX_TEMPO = 1.5;

/**
 * Writes `speech` at `tempo` (clamped to MIN_TEMPO–MAX_TEMPO; within 2 % of 1 it is left as it
 * is) into `out`, inside `cwd` (the job's folder), and returns its words and length retimed.
 * `lengthMs`: the file is padded with silence or cut to exactly that long (the words beyond it
 * are dropped).
 */
export async function retimeSpeech(
  speech: Speech,
  tempo: number,
  out: string,
  opts: { cwd: string; signal?: AbortSignal; lengthMs?: number },
): Promise<{ words: SpokenWord[]; durationMs: number; tempo: number }> {
  const clamped = Math.max(MIN_TEMPO, Math.min(MAX_TEMPO, tempo));
  const scaled = Math.abs(clamped - 1) > 0.02 ? clamped : 1;
  const filters = [...(scaled !== 1 ? [`atempo=${scaled.toFixed(4)}`] : []), ...(opts.lengthMs ? ['apad'] : [])];
  await runFfmpeg(
    [
      ...inputArgs({ path: speech.file, type: 'audio/wav' }),
      ...(filters.length ? ['-af', filters.join(',')] : []),
      ...(opts.lengthMs ? ['-t', (opts.lengthMs / 1000).toFixed(3)] : []),
      ...['-ar', '48000', '-ac', '2', '-c:a', 'pcm_s16le', path.resolve(out)],
    ],
    { cwd: opts.cwd, signal: opts.signal },
  );
  const spoken = Math.round(speech.durationMs / scaled);
  const durationMs = opts.lengthMs ?? spoken;
  const words = speech.words
    .map((w) => ({ text: w.text, startMs: Math.round(w.startMs / scaled), endMs: Math.round(w.endMs / scaled) }))
    .filter((w) => w.startMs < durationMs)
    .map((w) => ({ ...w, endMs: Math.min(w.endMs, durationMs) }));
  return { words, durationMs, tempo: scaled };
}
