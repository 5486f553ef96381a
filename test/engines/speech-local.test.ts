// The local speech engine: Flite speaks the US English voices (chosen over eSpeak NG by
// bench/tts-eval.ts), eSpeak NG every other language. Real synthesizers in child processes: the
// WAV is 22.05 kHz mono, every word of the text is timed by the synthesizer itself, in order and
// inside the audio, on the sound of the word; speed and pitch change the voice; the Spanish voice
// is eSpeak's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { fliteVoice, fliteWordTimings } from '../../src/engines/speech/flite.ts';
import { LOCAL_SPEECH, localSpeech } from '../../src/engines/speech/local.ts';
import { speechTokens, voicedSpans } from '../../src/engines/speech/timings.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { samplePitch } from '../../src/media/pitch.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-local-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

const TEXT = 'Our new sparkling water has no sugar — and it tastes like fresh citrus. Try it today for $5!';

function pcmOf(file: string): Int16Array {
  const buf = fs.readFileSync(file);
  const at = buf.indexOf('data', 12) + 8;
  return new Int16Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + buf.length - ((buf.length - at) % 2)));
}

t.test('the voices Flite speaks: US English, by gender', async (t) => {
  t.equal(fliteVoice('en-us+f3'), 'slt');
  t.equal(fliteVoice('en-us+m3'), 'rms');
  t.equal(fliteVoice('en-us+klatt'), 'kal16');
  t.equal(fliteVoice('en-gb-x-rp+f2'), undefined, 'British English keeps its accent with eSpeak');
  t.equal(fliteVoice('es+f4'), undefined);
  t.equal(localSpeech.name, LOCAL_SPEECH);
});

t.test('phones line up with words, or no timings are claimed', async (t) => {
  const segments: [string, number][] = [
    ['pau', 0.2],
    ['hh', 0.3],
    ['ay', 0.5],
    ['pau', 0.7],
    ['y', 0.8],
    ['uw', 1],
    ['pau', 1.2],
  ];
  t.same(fliteWordTimings(['Hi,', 'you'], segments, 'pau hh ay pau pau y uw pau'), [
    { text: 'Hi,', startMs: 200, endMs: 500 },
    { text: 'you', startMs: 700, endMs: 1000 },
  ]);
  t.equal(fliteWordTimings(['Hi', 'you', 'there'], segments, 'pau hh ay pau y uw pau'), undefined, 'a word without phones');
  t.equal(fliteWordTimings(['Hi', 'you'], segments, 'pau hh ay pau y uw w pau'), undefined, 'other phones than spoken');
});

t.test('US English: Flite, 22.05 kHz, every word timed by the engine on its sound', async (t) => {
  const out = path.join(dir, 'en.wav');
  const speech = await localSpeech.synthesize(TEXT, out, { voice: 'en-us+f3' });
  t.match(speech, { file: out, timings: 'engine', model: 'flite-slt' });
  const info = await probe({ path: out, type: 'audio/wav' });
  t.match(info, { has_audio: true });
  const pcm = pcmOf(out);
  t.ok(Math.abs((pcm.length / 22050) * 1000 - speech.durationMs) < 20, `22.05 kHz mono, ${speech.durationMs} ms`);
  t.same(
    speech.words.map((w) => w.text),
    speechTokens(TEXT),
    'every word of the text, in order',
  );
  for (const [i, w] of speech.words.entries()) {
    t.ok(w.startMs < w.endMs && w.endMs <= speech.durationMs, `${w.text}: ${w.startMs}–${w.endMs} inside the audio`);
    if (i) t.ok(w.startMs >= speech.words[i - 1].endMs - 1, `${w.text} starts after the word before it`);
  }
  // Each word is timed on sound, not on silence: a good part of it lies in loud stretches of the audio
  // (fricatives and stops are quiet, so not all of it).
  const spans = voicedSpans(pcm, 22050);
  const loud = (w: { startMs: number; endMs: number }) =>
    spans.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, w.endMs) - Math.max(a, w.startMs)), 0) / (w.endMs - w.startMs);
  const quiet = speech.words.filter((w) => loud(w) < 0.3).map((w) => `${w.text} ${loud(w).toFixed(2)}`);
  t.same(quiet, [], 'every word is timed on sound');
  // The sentence break: a pause between "citrus." and "Try".
  const [citrus, tryWord] = [speech.words.find((w) => w.text === 'citrus.')!, speech.words.find((w) => w.text === 'Try')!];
  t.ok(tryWord.startMs - citrus.endMs >= 100, `a pause after the sentence (${tryWord.startMs - citrus.endMs} ms)`);
});

t.test('speed and pitch change the voice; the words stay timed', async (t) => {
  const base = await localSpeech.synthesize('Small changes add up over a year.', path.join(dir, 'base.wav'), { voice: 'en-us+m3' });
  const fast = await localSpeech.synthesize('Small changes add up over a year.', path.join(dir, 'fast.wav'), {
    voice: 'en-us+m3',
    speed: 1.5,
  });
  const high = await localSpeech.synthesize('Small changes add up over a year.', path.join(dir, 'high.wav'), {
    voice: 'en-us+m3',
    pitch: 6,
  });
  t.ok(fast.durationMs < base.durationMs * 0.8, `faster: ${fast.durationMs} vs ${base.durationMs} ms`);
  t.ok(Math.abs(high.durationMs - base.durationMs) < base.durationMs * 0.05, 'a pitch shift keeps the length');
  const f0 = async (file: string) => (await samplePitch({ path: file, type: 'audio/wav' }, dir))!;
  const [low, up] = [await f0(base.file), await f0(high.file)];
  t.ok(up / low > 1.2 && up / low < 1.7, `6 semitones up: ${low.toFixed(0)} → ${up.toFixed(0)} Hz`);
  t.equal(high.timings, 'engine');
});

t.test('other languages: eSpeak NG', async (t) => {
  const speech = await localSpeech.synthesize('Hola, ¿qué tal estás hoy?', path.join(dir, 'es.wav'), { voice: 'es+f4' });
  t.equal(speech.model, undefined, 'not Flite');
  t.equal(speech.timings, 'engine');
  t.same(
    speech.words.map((w) => w.text),
    ['Hola,', '¿qué', 'tal', 'estás', 'hoy?'],
  );
});
