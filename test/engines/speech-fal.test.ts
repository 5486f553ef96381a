// The fal speech engine (src/engines/speech/fal.ts) against the fal queue fake (no app): what the
// fake received (the endpoint FAL_SPEECH_MODEL names, `Authorization: Key …`, the endpoint's own
// input: Kokoro's {prompt, voice, speed}, ElevenLabs' {text, voice, speed}), the queue walked
// (submit, status under the app root, result), the audio fetched through the guarded client and
// decoded to 22.05 kHz mono (its length and tone the fake's), words estimated over it, catalog voices mapped by FAL_SPEECH_VOICES or by gender, and errors mapped to
// SpeechFailed (401, 422, 429 waited out, content policy, not audio, a download the guarded client
// refuses, the deadline with the request canceled), the key never in a message.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config.ts';
import { engineFor } from '../../src/engines/index.ts';
import { SpeechFailed, type Speech, type SpeechEngine, type SpeechOptions } from '../../src/engines/speech/types.ts';
import { createGuardedFetcher, type GuardedFetcher } from '../../src/net/guarded-fetch.ts';
import { FAL_TONE_HZ, startFalFake } from './fakes/fal.ts';
import { toneShare, toneSpeech, wavSamples } from './fakes/tone.ts';

const KEY = 'fal-key-id:fal-key-secret';
const work = mkdtempSync(path.join(os.tmpdir(), 'speech-fal-'));
const fal = await startFalFake(KEY);
t.teardown(async () => {
  await fal.close();
  rmSync(work, { recursive: true, force: true });
});

const KOKORO = 'fal-ai/kokoro/american-english';
const ELEVEN = 'fal-ai/elevenlabs/tts/multilingual-v2';
const TEXT = 'Sparkling water beats soda. It has zero sugar. Try it today.';
const ava: SpeechOptions = { voice: 'en-us+f3', catalogVoice: { id: 'ava-bright', gender: 'female', language: 'en' } };
const marcus: SpeechOptions = { voice: 'en-us+m3', catalogVoice: { id: 'marcus-narrator', gender: 'male', language: 'en' } };
const loopback = createGuardedFetcher({ allowIps: ['127.0.0.1'] });
let n = 0;
const out = () => path.join(work, `speech-${++n}.wav`);

function engine(env: Record<string, string> = {}, fetcher: GuardedFetcher = loopback): SpeechEngine {
  const config = loadConfig({
    FAL_KEY: KEY,
    FAL_QUEUE_BASE: fal.url,
    FAL_SPEECH_MODEL: KOKORO,
    PROVIDER_POLL_MS: '20',
    ...env,
  });
  const made = engineFor('speech', { config, fetcher });
  if (made.name !== 'fal') throw new Error(`expected the fal engine, got ${made.name}`);
  return made;
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as SpeechFailed,
  );
/** The submits of the speech requests that said `text`. */
const submitsOf = (text: string) => fal.seen.filter((s) => s.method === 'POST' && (s.body?.prompt === text || s.body?.text === text));

/** The WAV written: 22.05 kHz mono, as long as the fake's speech of `text`, its tone. */
function checkAudio(t: Test, speech: Speech, text: string) {
  const audio = wavSamples(readFileSync(speech.file));
  t.ok(audio, 'a WAV file');
  t.equal(audio!.sampleRate, 22050, '22.05 kHz');
  const ms = (audio!.pcm.length / audio!.sampleRate) * 1000;
  const truth = toneSpeech(text, 22050, FAL_TONE_HZ);
  const expected = (truth.pcm.length / 22050) * 1000;
  t.ok(Math.abs(ms - speech.durationMs) <= 1, `durationMs ${speech.durationMs} is the file's`);
  t.ok(Math.abs(ms - expected) <= 60, `as long as the fake's speech of the text: ${ms.toFixed(0)} ms vs ${expected.toFixed(0)} ms`);
  t.ok(toneShare(audio!.pcm, 22050, FAL_TONE_HZ) > 0.5, `the fake's ${FAL_TONE_HZ} Hz tone`);
  t.ok(toneShare(audio!.pcm, 22050, FAL_TONE_HZ * 1.5) < 0.05, 'and not another tone');
  return truth;
}

t.test('Kokoro: the queue walked, the endpoint’s input, the audio fetched, checked and timed', async (t) => {
  const speech = await engine().synthesize(TEXT, out(), { ...ava, speed: 1.1 });
  const [submit] = submitsOf(TEXT);
  t.equal(submit.path, `/${KOKORO}`, 'submitted to the endpoint FAL_SPEECH_MODEL names');
  t.equal(submit.headers.authorization, `Key ${KEY}`, 'fal’s key header');
  t.same(submit.body, { prompt: TEXT, voice: 'af_heart', speed: 1.1 }, 'Kokoro’s input: the text as prompt, a female voice by gender');
  const req = [...fal.requests.values()].find((r) => r.input.prompt === TEXT)!;
  t.ok(
    fal.seen.some((s) => s.method === 'GET' && s.path === `/fal-ai/kokoro/requests/${req.id}/status`),
    'status polled under the app root',
  );
  t.ok(
    fal.seen.some((s) => s.method === 'GET' && s.path === `/fal-ai/kokoro/requests/${req.id}`),
    'the result read',
  );
  t.ok(
    fal.seen.some((s) => s.path === `/files/${req.id}.wav`),
    'the audio URL fetched',
  );
  const truth = checkAudio(t, speech, TEXT);
  t.equal(speech.timings, 'estimated', 'fal’s answer times no words: estimated');
  t.same(
    speech.words.map((w) => w.text),
    truth.words.map((w) => w.text),
    'every word of the text, in order',
  );
  t.equal(speech.model, KOKORO);
});

t.test('voices: FAL_SPEECH_VOICES by catalog voice or gender, else the endpoint’s own by gender', async (t) => {
  const mapped = engine({ FAL_SPEECH_VOICES: '{"ava-bright":"af_bella","male":"am_onyx"}' });
  const cases: [SpeechEngine, string, SpeechOptions, string][] = [
    [mapped, 'Voice one.', ava, 'af_bella'],
    [mapped, 'Voice two.', marcus, 'am_onyx'],
    [mapped, 'Voice three.', { voice: 'en-us+m3' }, 'am_onyx'],
    [engine(), 'Voice four.', marcus, 'am_adam'],
    [engine(), 'Voice five.', { voice: 'en' }, 'af_heart'],
  ];
  for (const [e, text, opts, voice] of cases) {
    await e.synthesize(text, out(), opts);
    t.equal(submitsOf(text)[0]?.body.voice, voice, `${opts.catalogVoice?.id ?? opts.voice}: ${voice}`);
  }
});

t.test('ElevenLabs on fal: {text, voice, speed} in its range, its MP3 decoded', async (t) => {
  const text = 'Fresh citrus flavour. Zero calories.';
  const speech = await engine({ FAL_SPEECH_MODEL: ELEVEN }).synthesize(text, out(), { ...marcus, speed: 2 });
  const [submit] = submitsOf(text);
  t.equal(submit.path, `/${ELEVEN}`);
  t.same(submit.body, { text, voice: 'George', speed: 1.2 }, 'a male voice by name, speed capped at 1.2');
  checkAudio(t, speech, text);
  t.equal(speech.model, ELEVEN);
});

t.test('errors: mapped, retryable or not, the key never in a message', async (t) => {
  const wrongKey = loadConfig({ FAL_KEY: 'fal-other:secret-value', FAL_QUEUE_BASE: fal.url, FAL_SPEECH_MODEL: KOKORO });
  const unauthorized = await failure(engineFor('speech', { config: wrongKey, fetcher: loopback }).synthesize('No key.', out(), ava));
  t.ok(unauthorized instanceof SpeechFailed, 'a SpeechFailed');
  t.match(unauthorized, { code: 'provider_unauthorized', retryable: false, status: 401 });
  t.notMatch(unauthorized.message, /secret-value/, 'the key is not in the message');

  const badVoice = await failure(engine({ FAL_SPEECH_VOICES: '{"default":"nobody"}' }).synthesize('Who speaks.', out(), ava));
  t.match(badVoice, { code: 'provider_rejected', retryable: false, status: 422, message: /body\.voice: unexpected value/ });

  const forbidden = await failure(engine().synthesize('Something forbidden here.', out(), ava));
  t.match(forbidden, { code: 'content_rejected', retryable: false, message: /content policy/ });

  const garbled = await failure(engine().synthesize('A garbled answer.', out(), ava));
  t.match(garbled, { code: 'provider_invalid_output', retryable: false, message: /answered audio that/ });

  const guarded = await failure(engine({}, createGuardedFetcher()).synthesize('A loopback file.', out(), ava));
  t.match(
    guarded,
    { code: 'provider_error', message: /audio http:\/\/127\.0\.0\.1/ },
    'the guarded client refuses the audio URL it may not fetch',
  );

  for (const e of [unauthorized, badVoice, forbidden, garbled, guarded]) t.notMatch(e.message, new RegExp(KEY), 'no key in messages');
});

t.test('429: waited out as Retry-After says, then it completes', async (t) => {
  const text = 'Please throttle me once.';
  const speech = await engine().synthesize(text, out(), ava);
  const submits = submitsOf(text);
  t.equal(submits.length, 2, 'submitted again after the 429');
  t.ok(submits[1].at - submits[0].at >= 900, 'after the Retry-After second');
  checkAudio(t, speech, text);
});

t.test('past SPEECH_TIMEOUT_MS the request is canceled at fal and the attempt fails as retryable', async (t) => {
  const text = 'A slow narration.';
  const started = Date.now();
  const err = await failure(engine({ SPEECH_TIMEOUT_MS: '1000' }).synthesize(text, out(), ava));
  t.match(err, { code: 'timeout', retryable: true });
  t.ok(Date.now() - started < 5000, 'within the deadline, give or take a poll');
  const req = [...fal.requests.values()].find((r) => r.input.prompt === text)!;
  t.ok(req.canceled, 'PUT …/cancel sent');
  t.ok(fal.seen.some((s) => s.method === 'PUT' && s.path === `/fal-ai/kokoro/requests/${req.id}/cancel`));
});
