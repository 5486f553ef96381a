// What the hosted speech engines (./openai-compatible.ts, ./elevenlabs.ts; ./fal.ts, whose
// requests go through fal's queue, uses decodeSpeech and speakInChunks) share:
//   - postSpeech: one POST to the provider at its configured base URL (operator configuration,
//     so plain fetch) with a deadline (SPEECH_TIMEOUT_MS) and a capped answer; a 429 waited out in
//     place as Retry-After says (a few times, each at most 30 s), then a retryable SpeechFailed
//     carrying retryAfterMs; 5xx and network failures retryable, other statuses not (codes as the
//     generation adapters': statusFailure); content-policy refusals `content_rejected`; the API key
//     never in a message;
//   - decodeSpeech: the audio answered, sniffed (only the types asked for), decoded by our ffmpeg
//     to 22.05 kHz mono 16-bit PCM (a decode is the check: audio that does not decode is refused);
//   - speakInChunks: a text over the provider's input limit spoken in sentence chunks, their audio
//     concatenated into one WAV and the words heard in each moved to its place.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import { checkMediaBytes } from '../../media/fetch-media.ts';
import { abortReason, retryAfterMs, statusFailure, wait } from '../hosted/hosted.ts';
import type { TimedWord } from './timings.ts';
import { SpeechFailed } from './types.ts';
import { SPEECH_SAMPLE_RATE, wav } from './wav.ts';

/** Largest answer read (a base64 JSON answer of a long narration included). */
const MAX_ANSWER_BYTES = 200 * 1024 * 1024;
/** Longest audio one answer may hold. */
const MAX_SECONDS = 30 * 60;

export interface SpeechCall {
  /** Who answers, for messages ("ElevenLabs", "the speech provider api.openai.com"). */
  label: string;
  url: string;
  headers: Record<string, string>;
  json: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Removed from every message (the API key). */
  secret?: string;
  /** The provider's error body read: its message, and whether it is a content-policy refusal. */
  readError: (body: unknown) => { message?: string; contentPolicy?: boolean };
  /** 429s waited out in place before failing (default 2). */
  rateLimitWaits?: number;
}

const redact = (text: string, secret: string | undefined) => (secret ? text.replaceAll(secret, '***') : text);

/** The body of a 2xx answer to `call` (rate limits waited out in place), or a SpeechFailed. */
export async function postSpeech(call: SpeechCall): Promise<Buffer> {
  const what = `POST ${new URL(call.url).pathname}`;
  const waits = call.rateLimitWaits ?? 2;
  for (let waited = 0; ; waited++) {
    const { status, headers, body } = await exchange(call, what);
    if (status >= 200 && status < 300) return body;
    const after = retryAfterMs(headers);
    if (status === 429 && waited < waits && (after ?? 0) <= 30_000) {
      await wait(after ?? 1000 * 2 ** waited, call.signal);
      continue;
    }
    throw statusError(call, what, status, body, after);
  }
}

async function exchange(call: SpeechCall, what: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  if (call.signal?.aborted) throw abortReason(call.signal);
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  try {
    const res = await fetch(call.url, {
      method: 'POST',
      headers: { ...call.headers, 'content-type': 'application/json' },
      body: JSON.stringify(call.json),
      signal,
      redirect: 'manual',
    });
    return { status: res.status, headers: res.headers, body: await readCapped(res, call.label) };
  } catch (err) {
    if (call.signal?.aborted) throw abortReason(call.signal);
    if (err instanceof SpeechFailed) throw err;
    if (timeout.aborted)
      throw new SpeechFailed(`${call.label} did not answer ${what} within ${call.timeoutMs} ms`, { code: 'timeout', cause: err });
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new SpeechFailed(redact(`${call.label} unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`, call.secret), {
      code: 'provider_unavailable',
    });
  }
}

async function readCapped(res: Response, label: string): Promise<Buffer> {
  const tooBig = () =>
    new SpeechFailed(`${label} answered more than ${MAX_ANSWER_BYTES} bytes`, { code: 'provider_invalid_output', retryable: false });
  if (Number(res.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw tooBig();
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of (res.body ?? []) as AsyncIterable<Uint8Array>) {
    n += c.length;
    if (n > MAX_ANSWER_BYTES) throw tooBig();
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks);
}

function statusError(call: SpeechCall, what: string, status: number, body: Buffer, after: number | undefined): SpeechFailed {
  const text = body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const read = call.readError(parsed);
  const message = redact((read.message ?? text.slice(0, 300)).slice(0, 1000), call.secret);
  if (read.contentPolicy) {
    return new SpeechFailed(`${call.label} refused the text under its content policy: ${message}`, {
      retryable: false,
      code: 'content_rejected',
      status,
    });
  }
  return new SpeechFailed(`${call.label} answered ${status} to ${what}${message ? `: ${message}` : ''}`, {
    ...statusFailure(status),
    status,
    retryAfterMs: after,
  });
}

/** Audio bytes a provider answered as 22.05 kHz mono PCM, decoded in `dir`; refused unless sniffed as one of `types` and decodable. */
export async function decodeSpeech(
  bytes: Buffer,
  types: readonly string[],
  dir: string,
  label: string,
  signal?: AbortSignal,
): Promise<Int16Array> {
  const invalid = (why: string, cause?: unknown) =>
    new SpeechFailed(`${label} answered audio that ${why}`.slice(0, 1900), { retryable: false, code: 'provider_invalid_output', cause });
  const { sniffed } = await checkMediaBytes(bytes, {
    types,
    refuse: (r) => invalid(`${r.message} (expected ${types.join(' or ')})`),
  });
  const name = path.join(dir, `.speech-${randomUUID()}`);
  const [input, output] = [`${name}.${sniffed.ext}`, `${name}.pcm`];
  try {
    await fs.writeFile(input, bytes);
    await runFfmpeg(
      [
        ...inputArgs({ path: input, type: sniffed.mime }),
        ...['-t', String(MAX_SECONDS), '-vn', '-ac', '1', '-ar', String(SPEECH_SAMPLE_RATE), '-c:a', 'pcm_s16le', '-f', 's16le', output],
      ],
      { cwd: dir, signal },
    ).catch((err: unknown) => {
      if (signal?.aborted) throw err;
      throw invalid('does not decode', err);
    });
    const pcm = await fs.readFile(output);
    if (pcm.length < 2) throw invalid('holds no sound');
    if (pcm.length >= MAX_SECONDS * SPEECH_SAMPLE_RATE * 2) throw invalid(`lasts more than ${MAX_SECONDS} s`);
    // A copy: the Int16Array needs an aligned buffer of its own.
    return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + (pcm.length & ~1)));
  } finally {
    await Promise.all([fs.rm(input, { force: true }), fs.rm(output, { force: true })]);
  }
}

/** `text` in chunks of at most `max` characters, cut between sentences, else between words, else inside a word. */
export function splitText(text: string, max: number): string[] {
  const pieces = text
    .trim()
    .split(/(?<=[.!?…。！？])\s+/u)
    .flatMap((s) => (s.length <= max ? [s] : s.split(/\s+/)))
    .flatMap((w) => (w.length <= max ? [w] : (w.match(new RegExp(`[^]{1,${max}}`, 'gu')) ?? [])));
  const chunks: string[] = [];
  for (const p of pieces) {
    if (chunks.length && chunks.at(-1)!.length + 1 + p.length <= max) chunks[chunks.length - 1] += ` ${p}`;
    else chunks.push(p);
  }
  return chunks;
}

/** One chunk spoken: its audio, and the words heard in it with their times in it, when the engine times them. */
export interface ChunkAudio {
  pcm: Int16Array;
  heard?: TimedWord[];
}

/**
 * Speaks `text` chunk by chunk (one request at a time) and writes the audio, concatenated, to
 * `outFile` as a 22.05 kHz mono WAV; the words heard in each chunk are moved by the chunks before it.
 */
export async function speakInChunks(
  text: string,
  outFile: string,
  max: number,
  speak: (chunk: string, index: number, chunks: string[]) => Promise<ChunkAudio>,
): Promise<{ pcm: Int16Array; durationMs: number; heard: TimedWord[] }> {
  const chunks = splitText(text, max);
  const parts: Int16Array[] = [];
  const heard: TimedWord[] = [];
  let samples = 0;
  for (let i = 0; i < chunks.length; i++) {
    const audio = await speak(chunks[i], i, chunks);
    const offsetMs = (samples / SPEECH_SAMPLE_RATE) * 1000;
    for (const w of audio.heard ?? [])
      heard.push({ text: w.text, startMs: Math.round(w.startMs + offsetMs), endMs: Math.round(w.endMs + offsetMs) });
    parts.push(audio.pcm);
    samples += audio.pcm.length;
  }
  const pcm = new Int16Array(samples);
  let at = 0;
  for (const p of parts) {
    pcm.set(p, at);
    at += p.length;
  }
  await fs.writeFile(outFile, wav(pcm, SPEECH_SAMPLE_RATE));
  return { pcm, durationMs: Math.round((samples / SPEECH_SAMPLE_RATE) * 1000), heard };
}
