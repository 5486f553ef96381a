// The hosted speech engines against their fakes (no app): the OpenAI-compatible engine
// (OpenAI, or a self-hosted server with no key) and ElevenLabs. What each fake received (model,
// voice, text, format), the audio decoded to 22.05 kHz mono and its length and tone checked, the
// words timed in order and near the fake's true word times, where the timings came from (engine,
// transcribed, estimated), errors mapped (429 retried as Retry-After says, then retryable with
// retryAfterMs; 401 and 400 not retryable; keys never in messages), long texts spoken in chunks
// under the API's limit, catalog voices mapped by configuration, and the configuration's checks.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config.ts';
import { engineFor } from '../../src/engines/index.ts';
import { createElevenLabsSpeech } from '../../src/engines/speech/elevenlabs.ts';
import { createOpenAICompatibleSpeech } from '../../src/engines/speech/openai-compatible.ts';
import { timedSpeech } from '../../src/engines/speech/timings.ts';
import { SpeechFailed, type Speech, type SpeechOptions } from '../../src/engines/speech/types.ts';
import { createOpenAICompatibleTranscriber } from '../../src/engines/transcribe/openai-compatible.ts';
import { ELEVENLABS_TONE_HZ, startElevenLabsFake } from './fakes/elevenlabs.ts';
import { OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ, startOpenAiSpeechFake } from './fakes/openai-speech.ts';
import { toneShare, toneSpeech, wavSamples } from './fakes/tone.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'speech-hosted-'));
const openai = await startOpenAiSpeechFake('sk-speech-secret');
const kokoro = await startOpenAiSpeechFake();
const eleven = await startElevenLabsFake('xi-secret-key');
t.teardown(async () => {
  await Promise.all([openai.close(), kokoro.close(), eleven.close()]);
  rmSync(work, { recursive: true, force: true });
});

const TEXT = 'Sparkling water beats soda. It has zero sugar. Try it today.';
const ava: SpeechOptions = { voice: 'en-us+f3', catalogVoice: { id: 'ava-bright', gender: 'female', language: 'en' } };
let n = 0;
const out = () => path.join(work, `speech-${++n}.wav`);
const openaiEngine = (env: Record<string, string> = {}) => {
  const config = loadConfig({ SPEECH_PROVIDER_URL: `${openai.url}/v1`, SPEECH_PROVIDER_API_KEY: 'sk-speech-secret', ...env });
  return createOpenAICompatibleSpeech({ ...config.speech, url: config.speech.url! });
};
const elevenEngine = (env: Record<string, string> = {}) => {
  const config = loadConfig({ ELEVENLABS_API_KEY: 'xi-secret-key', ELEVENLABS_API_BASE: eleven.url, ...env });
  return createElevenLabsSpeech({ ...config.elevenlabs, key: config.elevenlabs.key! });
};
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as SpeechFailed,
  );

/** The WAV written: 22.05 kHz mono, as long as the speech says, the tone at `hz`. */
function checkAudio(t: Test, speech: Speech, expectedMs: number, hz: number, slackMs = 30) {
  const audio = wavSamples(readFileSync(speech.file));
  t.ok(audio, 'a WAV file');
  t.equal(audio!.sampleRate, 22050, '22.05 kHz');
  const ms = (audio!.pcm.length / audio!.sampleRate) * 1000;
  t.ok(Math.abs(ms - speech.durationMs) <= 1, `durationMs ${speech.durationMs} is the file's ${ms.toFixed(1)} ms`);
  t.ok(Math.abs(ms - expectedMs) <= slackMs, `as long as the fake's audio: ${ms.toFixed(0)} ms vs ${expectedMs} ms`);
  t.ok(toneShare(audio!.pcm, 22050, hz) > 0.5, `the fake's ${hz} Hz tone`);
  t.ok(toneShare(audio!.pcm, 22050, hz * 1.5) < 0.05, 'and not another tone');
}

/** Words: the text's tokens in order, each within `tolMs` of the fake's true times. */
function checkWords(t: Test, speech: Speech, truth: { text: string; startMs: number; endMs: number }[], tolMs: number) {
  t.same(
    speech.words.map((w) => w.text),
    truth.map((w) => w.text),
    'every word of the text, in order',
  );
  const worst = Math.max(
    ...speech.words.map((w, i) => Math.max(Math.abs(w.startMs - truth[i].startMs), Math.abs(w.endMs - truth[i].endMs))),
  );
  t.ok(worst <= tolMs, `word times within ${tolMs} ms of the audio's (worst ${worst} ms)`);
  t.ok(
    speech.words.every((w, i) => w.endMs > w.startMs && (i === 0 || w.startMs >= speech.words[i - 1].startMs)),
    'in order, each with a length',
  );
}

t.test('OpenAI: the request the fake received, the audio decoded, words estimated over the voiced stretches', async (t) => {
  const before = openai.seen.length;
  const engine = openaiEngine({ SPEECH_VOICES: '{"ava-bright":"shimmer"}' });
  const speech = await engine.synthesize(TEXT, out(), { ...ava, speed: 1.25 });
  const [req] = openai.seen.slice(before);
  t.equal(req.path, '/v1/audio/speech');
  t.equal(req.headers.authorization, 'Bearer sk-speech-secret');
  t.same(
    req.body,
    { model: 'tts-1', input: TEXT, voice: 'shimmer', response_format: 'wav', speed: 1.25 },
    'the mapped voice, the model, wav',
  );
  const truth = toneSpeech(TEXT, OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ);
  checkAudio(t, speech, (truth.pcm.length / OPENAI_SAMPLE_RATE) * 1000, OPENAI_TONE_HZ);
  t.equal(speech.timings, 'estimated', 'the API times no words: estimated, and said so');
  t.equal(speech.model, 'tts-1');
  checkWords(t, speech, truth.words, 40);
});

t.test('OpenAI: mp3 answers decode too; voices by gender without a map; a self-hosted server without a key', async (t) => {
  const before = openai.seen.length;
  const speech = await openaiEngine({ SPEECH_RESPONSE_FORMAT: 'mp3', SPEECH_MODEL: 'gpt-4o-mini-tts' }).synthesize(TEXT, out(), ava);
  const truth = toneSpeech(TEXT, OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ);
  checkAudio(t, speech, (truth.pcm.length / OPENAI_SAMPLE_RATE) * 1000, OPENAI_TONE_HZ, 80);
  await openaiEngine().synthesize('Hello there.', out(), { voice: 'en-us+m3' });
  await openaiEngine({ SPEECH_VOICES: '{"neutral":"sage"}' }).synthesize('Hello there.', out(), { voice: 'en-us+klatt' });
  t.same(
    openai.seen.slice(before).map((r) => [r.body.model, r.body.voice, r.body.response_format]),
    [
      ['gpt-4o-mini-tts', 'nova', 'mp3'],
      ['tts-1', 'onyx', 'wav'],
      ['tts-1', 'sage', 'wav'],
    ],
    'female → nova, male (eSpeak +m3) → onyx, a gender entry of the map',
  );
  const config = loadConfig({ SPEECH_PROVIDER_URL: `${kokoro.url}/v1`, SPEECH_VOICES: '{"default":"af_heart"}' });
  // Kokoro's voices are its own: this fake knows OpenAI's, so it refuses af_heart, which shows the map reached it.
  const refused = await failure(createOpenAICompatibleSpeech({ ...config.speech, url: config.speech.url! }).synthesize(TEXT, out(), ava));
  t.match(refused.message, /Invalid value: 'af_heart'/);
  const selfHosted = loadConfig({ SPEECH_PROVIDER_URL: `${kokoro.url}/v1` });
  await createOpenAICompatibleSpeech({ ...selfHosted.speech, url: selfHosted.speech.url! }).synthesize(TEXT, out(), ava);
  t.equal(kokoro.seen.at(-1)!.headers.authorization, undefined, 'no key configured: no Authorization header');
});

t.test('OpenAI: a text over 4096 characters is spoken in sentence chunks, one WAV, continuous timings', async (t) => {
  const sentence = 'Water keeps you going all day long. ';
  const text = sentence.repeat(260).trim(); // 9359 characters
  const before = openai.seen.length;
  const speech = await openaiEngine().synthesize(text, out(), ava);
  const inputs = openai.seen.slice(before).map((r) => r.body.input as string);
  t.equal(inputs.length, 3, 'three requests');
  t.ok(
    inputs.every((i) => i.length <= 4096 && i.endsWith('.')),
    `each at most 4096 characters, cut after a sentence (${inputs.map((i) => i.length)})`,
  );
  t.equal(inputs.join(' '), text, 'together, the whole text');
  const parts = inputs.map((i) => toneSpeech(i, OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ));
  const partMs = parts.map((p) => (p.pcm.length / OPENAI_SAMPLE_RATE) * 1000);
  checkAudio(
    t,
    speech,
    partMs.reduce((a, b) => a + b),
    OPENAI_TONE_HZ,
  );
  let offset = 0;
  const truth = parts.flatMap((p, i) => {
    const moved = p.words.map((w) => ({ text: w.text, startMs: w.startMs + offset, endMs: w.endMs + offset }));
    offset += partMs[i];
    return moved;
  });
  checkWords(t, speech, truth, 60);
  const firstOfSecond = inputs[0].split(' ').length;
  t.ok(speech.words[firstOfSecond].startMs > partMs[0], 'the second chunk’s first word after the first chunk’s audio');
});

t.test('OpenAI: errors are mapped, 429 waited out as Retry-After says, and the key is never repeated', async (t) => {
  const wrong = loadConfig({ SPEECH_PROVIDER_URL: `${openai.url}/v1`, SPEECH_PROVIDER_API_KEY: 'sk-wrong-secret-123' });
  const e401 = await failure(createOpenAICompatibleSpeech({ ...wrong.speech, url: wrong.speech.url! }).synthesize(TEXT, out(), ava));
  t.ok(e401 instanceof SpeechFailed);
  t.same([e401.retryable, e401.code, e401.status], [false, 'provider_unauthorized', 401]);
  t.match(e401.message, /Incorrect API key provided/);
  t.notMatch(e401.message, /sk-wrong-secret-123/, 'the key the fake echoed is not in the message');

  const e400 = await failure(openaiEngine({ SPEECH_VOICES: '{"ava-bright":"nobody"}' }).synthesize(TEXT, out(), ava));
  t.same([e400.retryable, e400.code, e400.status], [false, 'provider_rejected', 400]);
  t.match(e400.message, /Invalid value: 'nobody'/);

  let start = Date.now();
  const before = openai.seen.length;
  const once = await openaiEngine().synthesize('Please throttle me once.', out(), ava);
  t.ok(once.durationMs > 0);
  const tries = openai.seen.slice(before);
  t.equal(tries.length, 2, 'asked again after the 429');
  t.ok(tries[1].at - tries[0].at >= 950, `after the Retry-After second (${tries[1].at - tries[0].at} ms)`);

  start = Date.now();
  const e429 = await failure(openaiEngine().synthesize('Please always-throttle me.', out(), ava));
  t.same([e429.retryable, e429.code, e429.status, e429.retryAfterMs], [true, 'provider_rate_limited', 429, 1000]);
  t.ok(Date.now() - start >= 1900, 'two waits in place before giving up');

  const gone = loadConfig({ SPEECH_PROVIDER_URL: 'http://127.0.0.1:9/v1', SPEECH_PROVIDER_API_KEY: 'sk-x' });
  const down = await failure(createOpenAICompatibleSpeech({ ...gone.speech, url: gone.speech.url! }).synthesize(TEXT, out(), ava));
  t.same([down.retryable, down.code], [true, 'provider_unavailable']);
});

t.test('the OpenAI fake refuses what the API refuses', async (t) => {
  const post = (body: unknown) =>
    fetch(`${openai.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-speech-secret', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const ok = { model: 'tts-1', input: 'Hi.', voice: 'alloy' };
  for (const [what, body, param] of [
    ['an unknown model', { ...ok, model: 'tts-9' }, 'model'],
    ['no input', { ...ok, input: undefined }, 'input'],
    ['an input over 4096 characters', { ...ok, input: 'a'.repeat(4097) }, 'input'],
    ['a speed over 4', { ...ok, speed: 4.5 }, 'speed'],
    ['a speed under 0.25', { ...ok, speed: 0.2 }, 'speed'],
    ['an unknown voice', { ...ok, voice: 'bob' }, 'voice'],
  ] as const) {
    const r = await post(body);
    t.equal(r.status, 400, `${what}: 400`);
    t.match(r.body, { error: { message: String, type: 'invalid_request_error', param } }, `${what}: OpenAI's error body`);
  }
});

t.test('ElevenLabs: the request the fake received, the audio decoded, words timed by the character alignment', async (t) => {
  const before = eleven.seen.length;
  const engine = elevenEngine({ ELEVENLABS_VOICES: '{"ava-bright":"EXAVITQu4vr4xnSDxMaL"}' });
  const speech = await engine.synthesize(TEXT, out(), { ...ava, speed: 0.9 });
  const [req] = eleven.seen.slice(before);
  t.equal(req.path, '/v1/text-to-speech/EXAVITQu4vr4xnSDxMaL/with-timestamps', 'the mapped voice id');
  t.equal(req.query.get('output_format'), 'mp3_44100_128');
  t.equal(req.headers['xi-api-key'], 'xi-secret-key');
  t.same(req.body, { text: TEXT, model_id: 'eleven_multilingual_v2', voice_settings: { speed: 0.9 } });
  const truth = toneSpeech(TEXT, 44100, ELEVENLABS_TONE_HZ);
  checkAudio(t, speech, (truth.pcm.length / 44100) * 1000, ELEVENLABS_TONE_HZ, 80);
  t.equal(speech.timings, 'engine');
  t.equal(speech.model, 'eleven_multilingual_v2');
  checkWords(t, speech, truth.words, 2);
  await elevenEngine().synthesize('Hello there.', out(), { voice: 'en-us+m3' });
  t.match(eleven.seen.at(-1)!.path, /\/JBFqnCBsd6RMkjVDRZzb\//, 'a male voice without a map: the male default');
  t.notOk('voice_settings' in eleven.seen.at(-1)!.body, 'no speed asked: no voice settings');
});

t.test('ElevenLabs: errors are mapped and the key is never repeated; the fake refuses a wrong shape', async (t) => {
  const e401 = await failure(elevenEngine({ ELEVENLABS_API_KEY: 'xi-wrong-key' }).synthesize(TEXT, out(), ava));
  t.same([e401.retryable, e401.code, e401.status], [false, 'provider_unauthorized', 401]);
  t.match(e401.message, /invalid_api_key: Invalid API key/);
  t.notMatch(e401.message, /xi-wrong-key/);
  const e404 = await failure(elevenEngine({ ELEVENLABS_VOICES: '{"ava-bright":"nope"}' }).synthesize(TEXT, out(), ava));
  t.same([e404.retryable, e404.code, e404.status], [false, 'provider_rejected', 404]);
  t.match(e404.message, /voice_not_found/);
  const e429 = await failure(elevenEngine().synthesize('Do always-throttle.', out(), ava));
  t.same([e429.retryable, e429.code, e429.status, e429.retryAfterMs], [true, 'provider_rate_limited', 429, 1000]);
  t.match(e429.message, /too_many_concurrent_requests/);

  const post = (body: unknown, format = 'mp3_44100_128') =>
    fetch(`${eleven.url}/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/with-timestamps?output_format=${format}`, {
      method: 'POST',
      headers: { 'xi-api-key': 'xi-secret-key', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  t.match(await post({}), { status: 422, body: { detail: [{ loc: ['body', 'text'], msg: 'Field required' }] } });
  t.match(await post({ text: 'Hi.' }, 'mp3_1'), { status: 422, body: { detail: [{ loc: ['query', 'output_format'] }] } });
  t.match(await post({ text: 'Hi.', voice_settings: { speed: 2 } }), { status: 422 });
  t.match(await post({ text: 'a'.repeat(10_001) }), { status: 400, body: { detail: { status: 'max_character_limit_exceeded' } } });
});

t.test('timedSpeech: transcribed when a transcribe engine is configured, else estimated; the engine’s own timings kept', async (t) => {
  const transcriber = createOpenAICompatibleTranscriber({
    url: `${openai.url}/v1`,
    apiKey: 'sk-speech-secret',
    model: 'whisper-1',
    timeoutMs: 10_000,
  });
  const engine = openaiEngine();
  const truth = toneSpeech(TEXT, OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ).words;
  const before = openai.seen.length;
  const transcribed = await timedSpeech(engine, transcriber, TEXT, out(), ava);
  t.equal(transcribed.timings, 'transcribed');
  const asked = openai.seen.slice(before).find((r) => r.path === '/v1/audio/transcriptions')!;
  t.same(asked.body['timestamp_granularities[]'], ['word'], 'word timestamps asked for');
  t.same(asked.body.language, ['en']);
  // The fake mishears the second word: it is placed between its neighbours, the others where they were heard.
  checkWords(t, transcribed, truth, 130);
  const off = transcribed.words.map((w, i) => Math.abs(w.startMs - truth[i].startMs) + Math.abs(w.endMs - truth[i].endMs));
  t.ok(
    off.every((d, i) => i === 1 || d <= 25),
    `the words heard keep their heard times (${off.join(', ')} ms off)`,
  );

  const estimated = await timedSpeech(engine, undefined, TEXT, out(), ava);
  t.equal(estimated.timings, 'estimated', 'no transcribe engine: estimated');
  openai.failTranscriptions = true;
  t.teardown(() => void (openai.failTranscriptions = false));
  const failed = await timedSpeech(engine, transcriber, TEXT, out(), ava);
  t.equal(failed.timings, 'estimated', 'a transcription that fails leaves the estimate, and says so');
  openai.failTranscriptions = false;
  const seen = openai.seen.length;
  const own = await timedSpeech(elevenEngine(), transcriber, TEXT, out(), ava);
  t.equal(own.timings, 'engine');
  t.equal(openai.seen.length, seen, 'an engine that times its words is not transcribed');
});

t.test(
  'configuration: voice maps are JSON objects of names; the registry tries ElevenLabs, then OpenAI-compatible, then eSpeak',
  async (t) => {
    t.throws(() => loadConfig({ SPEECH_VOICES: '{ava-bright: nova}' }), /SPEECH_VOICES must be JSON/);
    t.throws(() => loadConfig({ ELEVENLABS_VOICES: '["a"]' }), /ELEVENLABS_VOICES must be a JSON object mapping catalog voice ids/);
    t.throws(() => loadConfig({ SPEECH_VOICES: '{"ava-bright": 3}' }), /"ava-bright" is not mapped to a voice name/);
    t.throws(() => loadConfig({ SPEECH_RESPONSE_FORMAT: 'ogg' }), /SPEECH_RESPONSE_FORMAT must be wav or mp3/);
    t.throws(() => loadConfig({ SPEECH_PROVIDER_URL: 'ftp://x' }), /SPEECH_PROVIDER_URL must be an http\(s\) URL/);
    const speech = (env: Record<string, string>) => engineFor('speech', { config: loadConfig(env) }).name;
    t.equal(speech({}), 'flite+espeak-ng');
    t.equal(speech({ SPEECH_PROVIDER_URL: 'http://127.0.0.1:8880/v1' }), 'openai-compatible');
    t.equal(speech({ ELEVENLABS_API_KEY: 'xi' }), 'elevenlabs');
    t.equal(speech({ ELEVENLABS_API_KEY: 'xi', SPEECH_PROVIDER_URL: 'http://127.0.0.1:8880/v1' }), 'elevenlabs');
  },
);
