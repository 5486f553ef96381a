// A faceless video narrated by a hosted speech engine, over HTTP: with SPEECH_PROVIDER_URL (and a
// transcription provider) pointing at the OpenAI audio fake, the narration of the delivered MP4 is
// the fake's audio (its 1000 Hz tone heard while the words are spoken), the fake received the
// catalog voice mapped by SPEECH_VOICES, the script and the model, and the video's record says
// which engine spoke and that the word timings were transcribed (stored, and in GET /videos/{id}).
import { eq } from 'drizzle-orm';
import t from 'tap';
import { facelessVideos } from '../../src/db/schema/index.ts';
import { OPENAI_TONE_HZ, startOpenAiSpeechFake } from '../engines/fakes/openai-speech.ts';
import { toneShare } from '../engines/fakes/tone.ts';
import { poll } from '../helpers/image-model.ts';
import { startTestApp } from '../helpers/app.ts';
import { createProject, edit } from '../editor/helpers.ts';
import { soundOf } from '../helpers/sound.ts';

const fake = await startOpenAiSpeechFake('sk-e2e-speech');
t.teardown(() => fake.close());
const app = await startTestApp(
  t,
  {
    RATE_LIMIT_GENERATIONS: '1000',
    SPEECH_PROVIDER_URL: `${fake.url}/v1`,
    SPEECH_PROVIDER_API_KEY: 'sk-e2e-speech',
    SPEECH_VOICES: '{"ava-bright":"shimmer","marcus-narrator":"echo"}',
    TRANSCRIPTION_PROVIDER_URL: `${fake.url}/v1`,
    TRANSCRIPTION_PROVIDER_API_KEY: 'sk-e2e-speech',
  },
  { workers: true },
);

t.test(
  'the narration is the hosted engine’s audio, in the mapped voice, and the record says who spoke and how words were timed',
  async (t) => {
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

    const spoken = fake.seen.filter((r) => r.path === '/v1/audio/speech');
    t.equal(spoken.length, 1, 'one speech request');
    t.match(spoken[0].body, { model: 'tts-1', voice: 'shimmer', input: script, response_format: 'wav' }, 'the mapped voice, the script');
    t.equal(spoken[0].headers.authorization, 'Bearer sk-e2e-speech');
    t.equal(fake.seen.filter((r) => r.path === '/v1/audio/transcriptions').length, 1, 'its audio transcribed once');

    const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
    const voiceover = (row.artifacts as any).voiceover;
    t.match(
      voiceover,
      { engine: 'openai-compatible', model: 'tts-1', timings: 'transcribed' },
      'the record says who spoke and where the timings came from',
    );
    t.equal(voiceover.words.length, 11, 'every word timed');
    // GET /videos/{id}: the fake on a loopback address is a server of the operator's own.
    t.same(
      video.engines.speech,
      { kind: 'self_hosted', provider: 'openai-compatible', model: 'tts-1', timings: 'transcribed' },
      'the record says which engine spoke and that its words were timed by transcription',
    );
    t.same(video.engines.transcribe, { kind: 'self_hosted', provider: 'openai-compatible', model: 'whisper-1' }, 'and by which');

    const sound = await soundOf(video.url);
    const ms = (v: number) => Math.round((v / 1000) * 16000);
    const words = voiceover.words as { startMs: number; endMs: number }[];
    const during = sound.subarray(ms(words[0].startMs), ms(words.at(-1)!.endMs));
    const share = toneShare(during, 16000, OPENAI_TONE_HZ);
    t.ok(share > 0.3, `the fake's ${OPENAI_TONE_HZ} Hz tone carries the narration (${(share * 100).toFixed(0)}% of its power)`);
    t.ok(toneShare(during, 16000, 700) < 0.02, 'not a tone the fake did not send');
    const first = sound.subarray(ms(words[0].startMs + 100), ms(words[0].endMs - 100));
    t.ok(toneShare(first, 16000, OPENAI_TONE_HZ) > 0.5, 'the first word, timed from the transcription, is the tone');
  },
);

t.test("the editor's add_voiceover speaks through the configured engine too, in the catalog voice's mapping", async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const project = await createProject(app, ws.key);
  const before = fake.seen.filter((r) => r.path === '/v1/audio/speech').length;
  const res = await edit(app, ws.key, project.id, [
    { type: 'add_voiceover', text: 'Fresh lemons every morning', voice_id: 'marcus-narrator' },
  ]);
  t.equal(res.status, 200, res.text);
  const spoken = fake.seen.filter((r) => r.path === '/v1/audio/speech').slice(before);
  t.equal(spoken.length, 1, 'one speech request');
  t.match(spoken[0].body, { voice: 'echo', input: 'Fresh lemons every morning' }, 'the voice SPEECH_VOICES maps marcus-narrator to');
  const voice = (await app.request('GET', '/api/v1/editor/media?media_type=voice&limit=1', { key: ws.key })).body.data[0];
  t.ok(voice.duration_seconds > 0.5, `the fake's audio was stored (${voice.duration_seconds} s)`);
});
