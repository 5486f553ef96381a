// Local text-to-speech with word timings: eSpeak NG (WebAssembly, from npm) run in a child
// process (espeak-worker.ts; see there for why it is a separate program). Word timings come from
// the synthesizer's own word events, so captions of our voiceovers are exact.
import { fileURLToPath } from 'node:url';
import type { Speech, SpeechOptions, SpokenWord } from './types.ts';
import { runSpeechWorker } from './worker.ts';

const WORKER = fileURLToPath(new URL('./espeak-worker.ts', import.meta.url));

interface WorkerReply {
  ok: boolean;
  error?: string;
  sampleRate: number;
  samples: number;
  events: { type: string; audio_position: number; text_position: number; word_length: number }[];
}

/** Synthesizes `text` into `outFile`; resolves with the duration and per-word timings. */
export async function synthesizeSpeech(text: string, outFile: string, opts: SpeechOptions): Promise<Speech> {
  const rate = Math.max(80, Math.min(450, 175 * (opts.speed ?? 1)));
  const pitch = Math.max(0, Math.min(99, 50 + 4 * (opts.pitch ?? 0)));
  const reply = await runSpeechWorker<WorkerReply>(
    WORKER,
    { text, voice: opts.voice, rate, pitch, out: outFile },
    opts.timeoutMs ?? 60_000,
  );
  const durationMs = Math.round((reply.samples / reply.sampleRate) * 1000);
  return { file: outFile, durationMs, words: wordTimings(text, reply.events, durationMs), timings: 'engine' };
}

/**
 * Word timings from eSpeak's events: each whitespace-separated token of `text` starts at the
 * first word event inside it and ends where the next token starts, or at its clause's end.
 */
export function wordTimings(text: string, events: WorkerReply['events'], durationMs: number): SpokenWord[] {
  const tokens: { text: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(/\S+/g)) tokens.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  const tokenAt = (pos: number) => tokens.findIndex((t) => pos >= t.start && pos < t.end);
  const words: (SpokenWord & { token: number })[] = [];
  let open: (SpokenWord & { token: number }) | undefined;
  for (const e of events) {
    if (e.type === 'word') {
      const idx = tokenAt(e.text_position - 1);
      if (idx < 0 || (open && open.token === idx)) continue;
      if (open && open.endMs < 0) open.endMs = e.audio_position;
      open = { text: tokens[idx].text, startMs: e.audio_position, endMs: -1, token: idx };
      words.push(open);
    } else if (e.type === 'end' && open && open.endMs < 0) {
      open.endMs = e.audio_position;
    }
  }
  if (open && open.endMs < 0) open.endMs = durationMs;
  return words
    .map(({ text: t, startMs, endMs }) => ({
      text: t,
      startMs: Math.max(0, startMs),
      endMs: Math.max(startMs + 1, Math.min(durationMs, endMs)),
    }))
    .filter((w) => /[\p{L}\p{N}]/u.test(w.text));
}
