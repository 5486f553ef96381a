// Word timings that always have an honest source (Speech.timings):
//   engine       the synthesizer timed its words (eSpeak's word events, ElevenLabs' character alignment);
//   transcribed  the produced audio was transcribed by the configured transcribe engine and the
//                text's words were aligned to the words heard;
//   estimated    the words were spread over the audio's voiced stretches in proportion to their length.
// `timedSpeech` is that chain: a speech engine's answer, upgraded from estimated to transcribed
// when a transcribe engine is configured and its words match the text's.
// Every list of words here holds the text's tokens (speechTokens), in order, so captions and
// scene starts can count them.
import type { TranscribeEngine } from '../transcribe/types.ts';
import type { Speech, SpeechEngine, SpeechOptions, SpokenWord } from './types.ts';

/** The words of a text as speech engines time them: whitespace tokens with a letter or digit. */
export const speechTokens = (text: string): string[] => (text.match(/\S+/g) ?? []).filter((w) => /[\p{L}\p{N}]/u.test(w));

/** A word heard, with its time (a transcription's, or an engine's alignment). */
export type TimedWord = SpokenWord;

const FRAME_MS = 20;
/** Quieter gaps shorter than this are inside a word, not between words. */
const MIN_GAP_MS = 80;

/** The voiced stretches [startMs, endMs) of 16-bit mono PCM: 20 ms frames louder than a tenth of the loudest. */
export function voicedSpans(pcm: Int16Array, sampleRate: number): [number, number][] {
  const frame = Math.max(1, Math.round((sampleRate * FRAME_MS) / 1000));
  const rms: number[] = [];
  for (let i = 0; i < pcm.length; i += frame) {
    let sum = 0;
    const end = Math.min(pcm.length, i + frame);
    for (let j = i; j < end; j++) sum += pcm[j] * pcm[j];
    rms.push(Math.sqrt(sum / (end - i)));
  }
  const threshold = Math.max(100, 0.1 * rms.reduce((a, b) => Math.max(a, b), 0));
  const spans: [number, number][] = [];
  rms.forEach((v, i) => {
    if (v < threshold) return;
    const [s, e] = [i * FRAME_MS, (i + 1) * FRAME_MS];
    const last = spans.at(-1);
    if (last && s - last[1] < MIN_GAP_MS) last[1] = e;
    else spans.push([s, e]);
  });
  const durationMs = (pcm.length / sampleRate) * 1000;
  return spans.length ? spans.map(([s, e]) => [s, Math.min(e, durationMs)]) : [[0, durationMs]];
}

/**
 * Estimated timings: the text's tokens spread over the voiced stretches of the audio in
 * proportion to their length (silences between sentences get no words).
 */
export function estimateWords(text: string, pcm: Int16Array, sampleRate: number): SpokenWord[] {
  const tokens = speechTokens(text);
  const spans = voicedSpans(pcm, sampleRate);
  const voiced = spans.reduce((n, [s, e]) => n + (e - s), 0);
  const total = tokens.reduce((n, t) => n + t.length, 0) || 1;
  // Voiced time `v` → audio time; a boundary (within a millisecond of one) is the start of the
  // later stretch for a word's start, the end of the earlier one for a word's end.
  const at = (v: number, end: boolean): number => {
    let left = v;
    for (const [s, e] of spans) {
      if (end ? left <= e - s + 1 : left < e - s - 1) return s + Math.min(left, e - s);
      left -= e - s;
    }
    return spans.at(-1)![1];
  };
  let done = 0;
  return tokens.map((text) => {
    const startMs = Math.round(at((done / total) * voiced, false));
    done += text.length;
    const endMs = Math.round(at((done / total) * voiced, true));
    return { text, startMs, endMs: Math.max(startMs + 1, endMs) };
  });
}

const norm = (w: string) => w.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/** Pairs (token index, heard index) of a longest common subsequence of the normalized words. */
function matchWords(tokens: string[], heard: string[]): [number, number][] {
  const n = tokens.length;
  const m = heard.length;
  const a = tokens.map(norm);
  const b = heard.map(norm);
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const cell = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[cell(i, j)] = a[i] && a[i] === b[j] ? lcs[cell(i + 1, j + 1)] + 1 : Math.max(lcs[cell(i + 1, j)], lcs[cell(i, j + 1)]);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] && a[i] === b[j]) pairs.push([i++, j++]);
    else if (lcs[cell(i + 1, j)] >= lcs[cell(i, j + 1)]) i++;
    else j++;
  }
  return pairs;
}

/**
 * The text's tokens timed by the words heard: a token matching a heard word (case and
 * punctuation aside, in order) takes its time; the tokens between two matches share the time
 * between them in proportion to their length. Undefined when fewer than half the tokens match
 * (the audio does not say this text).
 */
export function alignWords(text: string, heard: readonly TimedWord[], durationMs: number): SpokenWord[] | undefined {
  const tokens = speechTokens(text);
  const pairs = matchWords(
    tokens,
    heard.map((w) => w.text),
  );
  if (!tokens.length || pairs.length * 2 < tokens.length) return undefined;
  const words: SpokenWord[] = tokens.map((t) => ({ text: t, startMs: -1, endMs: -1 }));
  for (const [i, j] of pairs) Object.assign(words[i], { startMs: heard[j].startMs, endMs: heard[j].endMs });
  // The unmatched runs: between the previous match's end (or 0) and the next one's start (or the end).
  for (let i = 0; i < words.length; ) {
    if (words[i].startMs >= 0) {
      i++;
      continue;
    }
    let k = i;
    while (k < words.length && words[k].startMs < 0) k++;
    const from = i > 0 ? words[i - 1].endMs : 0;
    const to = k < words.length ? words[k].startMs : durationMs;
    const run = words.slice(i, k);
    const total = run.reduce((n, w) => n + w.text.length, 0);
    let done = 0;
    for (const w of run) {
      w.startMs = Math.round(from + ((to - from) * done) / total);
      done += w.text.length;
      w.endMs = Math.max(w.startMs + 1, Math.round(from + ((to - from) * done) / total));
    }
    i = k;
  }
  return words;
}

/**
 * Synthesizes with `engine`, then, when its timings are not its own and a transcribe engine is
 * configured, transcribes the audio and aligns the text to it. A transcription that fails or
 * does not match the text leaves the estimate (and says so); an abort is not swallowed.
 */
export async function timedSpeech(
  engine: SpeechEngine,
  transcriber: TranscribeEngine | undefined,
  text: string,
  outFile: string,
  opts: SpeechOptions,
): Promise<Speech> {
  const speech = await engine.synthesize(text, outFile, opts);
  if (speech.timings === 'engine' || !transcriber) return speech;
  try {
    const heard = await transcriber.transcribe(speech.file, {
      contentType: 'audio/wav',
      language: opts.catalogVoice?.language,
      signal: opts.signal,
    });
    const words = alignWords(text, heard.words, speech.durationMs);
    return words ? { ...speech, words, timings: 'transcribed' } : speech;
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return speech;
  }
}
