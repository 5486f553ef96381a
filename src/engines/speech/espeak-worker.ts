// Child process of the local text-to-speech (./espeak.ts). It is the only code that loads
// @echogarden/espeak-ng-emscripten (eSpeak NG compiled to WebAssembly, GPL-3.0): the service
// talks to it at arm's length, as a separate program, over stdin (a JSON request) and stdout (a
// JSON reply); the audio goes to a WAV file whose path the request names.
//
// Request:  {"text", "voice" (espeak voice, e.g. en-us+f3), "rate" (words per minute), "pitch" (0-99), "out"}
// Reply:    {"ok": true, "sampleRate", "samples", "events": [{type, audio_position (ms), text_position (1-based), word_length}]}
//        or {"ok": false, "error"}
import { writeFileSync } from 'node:fs';
import { SPEECH_SAMPLE_RATE, wav } from './wav.ts';

interface Request {
  text: string;
  voice: string;
  rate: number;
  pitch: number;
  out: string;
}

interface EspeakEvent {
  type: string;
  audio_position: number;
  text_position: number;
  word_length: number;
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const req = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
  // eSpeak reads SSML-like markup: neutralise markup characters without moving text positions.
  const text = req.text.replace(/[<>&]/g, ' ');
  // @ts-expect-error the package ships no type declarations
  const mod: { default: () => Promise<{ eSpeakNGWorker: new () => any }> } = await import('@echogarden/espeak-ng-emscripten');
  const init = mod.default;
  const m = await init();
  const engine = new m.eSpeakNGWorker();
  if (engine.set_voice(req.voice) !== 0) throw new Error(`unknown espeak voice ${req.voice}`);
  engine.set_rate(Math.round(req.rate));
  engine.set_pitch(Math.round(req.pitch));
  const parts: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  engine.synthesize(text, (samples: Int16Array, evs: EspeakEvent[]) => {
    if (samples?.length) parts.push(Int16Array.from(samples));
    for (const e of evs ?? []) {
      if (e.type === 'word' || e.type === 'end' || e.type === 'sentence') {
        events.push({ type: e.type, audio_position: e.audio_position, text_position: e.text_position, word_length: e.word_length });
      }
    }
  });
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Int16Array(total);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  const sampleRate = SPEECH_SAMPLE_RATE;
  writeFileSync(req.out, wav(all, sampleRate));
  process.stdout.write(JSON.stringify({ ok: true, sampleRate, samples: total, events }));
}

main().catch((err: unknown) => {
  process.stdout.write(JSON.stringify({ ok: false, error: err instanceof Error ? err.message : String(err) }));
  process.exitCode = 1;
});
