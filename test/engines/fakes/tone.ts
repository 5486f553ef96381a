// The "speech" the speech fakes answer: each word of the text a burst of a pure tone (60 ms per
// character), 120 ms of silence between words and 300 ms after a sentence, so its length depends
// on the text, its words' true times are known (for checking timings) and its frequency can be
// found again in a rendered video. Encoded as the formats the real services answer (WAV, MP3, raw
// PCM) by the ffmpeg the service uses.
import { spawn } from 'node:child_process';
import { FFMPEG_PATH } from '../../../src/media/ffmpeg.ts';
import { wav } from '../../../src/engines/speech/wav.ts';

export interface Tone {
  pcm: Int16Array;
  sampleRate: number;
  /** Every character of the text with its time (seconds), as ElevenLabs' alignment has them. */
  chars: { c: string; start: number; end: number }[];
  /** The true times of the whitespace tokens (ms). */
  words: { text: string; startMs: number; endMs: number }[];
}

const LEAD_S = 0.1;
const PER_CHAR_S = 0.06;
const GAP_S = 0.12;
const SENTENCE_GAP_S = 0.3;

export function toneSpeech(text: string, sampleRate: number, hz: number): Tone {
  const chars: Tone['chars'] = [];
  const words: Tone['words'] = [];
  const bursts: [number, number][] = [];
  let t = LEAD_S;
  const tokens = [...text.matchAll(/\S+|\s+/g)].map((m) => m[0]);
  tokens.forEach((tok, i) => {
    if (/^\s/.test(tok)) {
      const gap = /[.!?]$/.test(tokens[i - 1] ?? '') ? SENTENCE_GAP_S : GAP_S;
      for (const c of tok) chars.push({ c, start: t, end: t + gap / tok.length });
      t += gap;
      return;
    }
    const start = t;
    for (const c of tok) {
      chars.push({ c, start: t, end: t + PER_CHAR_S });
      t += PER_CHAR_S;
    }
    bursts.push([start, t]);
    words.push({ text: tok, startMs: Math.round(start * 1000), endMs: Math.round(t * 1000) });
  });
  const pcm = new Int16Array(Math.round((t + LEAD_S) * sampleRate));
  for (const [s, e] of bursts)
    for (let i = Math.round(s * sampleRate); i < Math.round(e * sampleRate); i++)
      pcm[i] = Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  return { pcm, sampleRate, chars, words };
}

/** 16-bit mono PCM encoded by ffmpeg (`-f <format>` plus `args`). */
export function encode(pcm: Int16Array, sampleRate: number, format: string, args: string[] = []): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(FFMPEG_PATH, [
      ...['-hide_banner', '-loglevel', 'error', '-f', 's16le', '-ar', String(sampleRate), '-ac', '1', '-i', 'pipe:0'],
      ...args,
      ...['-f', format, 'pipe:1'],
    ]);
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg exited ${code}`))));
    child.stdin.end(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  });
}

/** The tone as `format`: wav, mp3 (128 kb/s), or raw little-endian pcm. */
export async function toneBytes(tone: Tone, format: 'wav' | 'mp3' | 'pcm'): Promise<Buffer> {
  if (format === 'wav') return wav(tone.pcm, tone.sampleRate);
  if (format === 'pcm') return Buffer.from(tone.pcm.buffer, tone.pcm.byteOffset, tone.pcm.byteLength);
  return encode(tone.pcm, tone.sampleRate, 'mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
}

/** The share of the power of `pcm` at `hz` (Goertzel): near 1 for a pure tone at `hz`, near 0 without it. */
export function toneShare(pcm: Int16Array, sampleRate: number, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
  let [s1, s2, energy] = [0, 0, 0];
  for (const x of pcm) {
    const s0 = x + k * s1 - s2;
    s2 = s1;
    s1 = s0;
    energy += x * x;
  }
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return energy ? (2 * power) / (pcm.length * energy) : 0;
}

/** Where a tone is heard: spans of samples above `level`, apart by at least 50 ms (the fake's "listening"). */
export function bursts(pcm: Int16Array, sampleRate: number, level = 1500): [number, number][] {
  const gap = Math.round(sampleRate * 0.05);
  const spans: [number, number][] = [];
  let last = -Infinity;
  for (let i = 0; i < pcm.length; i++) {
    if (Math.abs(pcm[i]) < level) continue;
    if (i - last > gap) spans.push([i, i + 1]);
    else spans.at(-1)![1] = i + 1;
    last = i;
  }
  return spans.map(([s, e]) => [(s / sampleRate) * 1000, (e / sampleRate) * 1000]);
}

/** 16-bit mono samples of a WAV file (its `data` chunk). */
export function wavSamples(bytes: Buffer): { pcm: Int16Array; sampleRate: number } | undefined {
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let sampleRate = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ') sampleRate = bytes.readUInt32LE(at + 12);
    if (id === 'data') {
      const data = bytes.subarray(at + 8, at + 8 + size);
      return { pcm: new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + (data.length & ~1))), sampleRate };
    }
    at += 8 + size + (size & 1);
  }
  return undefined;
}
