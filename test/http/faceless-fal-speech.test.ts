// A faceless video narrated by fal's text to speech, over HTTP: with FAL_KEY and FAL_SPEECH_MODEL
// pointing at the fal queue fake (and an OpenAI-compatible speech server configured too, which fal
// comes before), the narration of the delivered MP4 is the fake's audio (its 550 Hz tone heard
// while the words are spoken), the fake received Kokoro's input (the script as prompt, the
// catalog voice mapped by FAL_SPEECH_VOICES) through its queue, and the video's record says fal
// and the endpoint spoke and that the word timings were estimated (stored, and in GET /videos/{id}).
import { eq } from 'drizzle-orm';
import t from 'tap';
import { facelessVideos } from '../../src/db/schema/index.ts';
import { FAL_TONE_HZ, startFalFake } from '../engines/fakes/fal.ts';
import { startOpenAiSpeechFake } from '../engines/fakes/openai-speech.ts';
import { toneShare } from '../engines/fakes/tone.ts';
import { poll } from '../helpers/image-model.ts';
import { startTestApp } from '../helpers/app.ts';
import { soundOf } from '../helpers/sound.ts';

const KEY = 'fal-e2e:speech-secret';
const fal = await startFalFake(KEY);
const openai = await startOpenAiSpeechFake();
t.teardown(() => Promise.all([fal.close(), openai.close()]));
const app = await startTestApp(
  t,
  {
    RATE_LIMIT_GENERATIONS: '1000',
    FAL_KEY: KEY,
    FAL_QUEUE_BASE: fal.url,
    FAL_SPEECH_MODEL: 'fal-ai/kokoro/american-english',
    FAL_SPEECH_VOICES: '{"ava-bright":"af_nova","male":"am_michael"}',
    SPEECH_PROVIDER_URL: `${openai.url}/v1`,
    PROVIDER_POLL_MS: '40',
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
  },
  { workers: true },
);

t.test('the narration is fal’s audio, in the mapped voice, and the record says fal and its endpoint spoke', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const script = 'Sparkling water beats soda. It has zero sugar. Try it today.';
  const created = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script, duration: '6', voice_id: 'ava-bright' },
  });
  t.equal(created.status, 200, created.text);
  const id = created.body.video_id as number;
  const video = await poll(app, ws.key, `/api/v1/videos/${id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));

  const submits = fal.seen.filter((r) => r.method === 'POST' && r.path === '/fal-ai/kokoro/american-english');
  t.equal(submits.length, 1, 'one request on fal’s queue');
  t.same(submits[0].body, { prompt: script, voice: 'af_nova', speed: submits[0].body.speed }, 'the script, the mapped voice');
  t.equal(typeof submits[0].body.speed, 'number', 'and a speed');
  t.equal(submits[0].headers.authorization, `Key ${KEY}`);
  const req = [...fal.requests.values()].find((r) => r.input.prompt === script)!;
  t.ok(
    fal.seen.some((r) => r.path === `/files/${req.id}.wav`),
    'its audio fetched',
  );
  t.equal(openai.seen.filter((r) => r.path === '/v1/audio/speech').length, 0, 'the OpenAI-compatible server, after fal, not asked');

  const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
  const voiceover = (row.artifacts as any).voiceover;
  t.match(
    voiceover,
    { engine: 'fal', model: 'fal-ai/kokoro/american-english', timings: 'estimated' },
    'the stored voiceover says who spoke',
  );
  t.equal(voiceover.words.length, 11, 'every word timed');
  t.same(
    video.engines.speech,
    { kind: 'hosted', provider: 'fal', model: 'fal-ai/kokoro/american-english', timings: 'estimated' },
    'the record says fal and its endpoint spoke, and that the words were estimated',
  );
  t.notMatch(JSON.stringify(video), /speech-secret/, 'the key is not in the record');

  const sound = await soundOf(video.url);
  const ms = (v: number) => Math.round((v / 1000) * 16000);
  const words = voiceover.words as { startMs: number; endMs: number }[];
  const during = sound.subarray(ms(words[0].startMs), ms(words.at(-1)!.endMs));
  const share = toneShare(during, 16000, FAL_TONE_HZ);
  t.ok(share > 0.3, `the fake's ${FAL_TONE_HZ} Hz tone carries the narration (${(share * 100).toFixed(0)}% of its power)`);
  t.ok(toneShare(during, 16000, 1000) < 0.02, 'not the OpenAI-compatible server’s tone');
  const first = sound.subarray(ms(words[0].startMs + 100), ms(words[0].endMs - 100));
  t.ok(toneShare(first, 16000, FAL_TONE_HZ) > 0.5, 'the first word, estimated over the audio, is the tone');
});
