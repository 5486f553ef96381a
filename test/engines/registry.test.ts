// The engine registry (src/engines/index.ts): with no configuration every capability is made by
// its local engine (transcribe and stock have none; stock is Pexels, else Pixabay, by key); a configured key makes a hosted model variant that
// provider's; a configured writer or transcription URL is used; engines are made once per
// configuration; a generation's capability follows its output, lipsync for the catalog's
// video-and-audio variants. What records call each engine (engineUseFor): local engines by name,
// hosted providers by theirs, an OpenAI-compatible server hosted or self-hosted by its address.
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { engineFor, engineUseFor, generationCapability, type Capability } from '../../src/engines/index.ts';
import type { ProviderModel } from '../../src/engines/generation.ts';
import { createGuardedFetcher } from '../../src/net/guarded-fetch.ts';
import { loadCatalogData } from '../../src/services/catalog/catalog-data.ts';

const fetcher = createGuardedFetcher();
const replicate: ProviderModel = { name: 'replicate', model: 'sync/lipsync-2' };
const fal: ProviderModel = { name: 'fal', model: 'fal-ai/veo3/fast' };
const openai: ProviderModel = { name: 'openai', model: 'gpt-image-1' };

t.test('no keys: every capability resolves to its local engine, whatever the catalog names', async (t) => {
  const setup = { config: loadConfig({}), fetcher };
  const local: Record<Exclude<Capability, 'transcribe' | 'stock'>, string> = {
    write: 'local',
    image: 'local',
    video: 'local',
    lipsync: 'local',
    scene: 'local',
    slide: 'local',
    speech: 'flite+espeak-ng',
    render: 'ffmpeg',
  };
  for (const [capability, name] of Object.entries(local) as [keyof typeof local, string][]) {
    t.equal(engineFor(capability, setup).name, name, `${capability}: ${name}`);
    for (const model of [replicate, fal, openai])
      t.equal(engineFor(capability, { ...setup, model }).name, name, `${capability} of a ${model.name} model without its key: ${name}`);
  }
  t.equal(engineFor('transcribe', setup), undefined, 'no transcription provider configured: no transcribe engine');
  t.equal(engineFor('stock', setup), undefined, 'no stock provider key: no stock engine');
});

t.test('stock: Pexels when its key is set, else Pixabay when its key is set', async (t) => {
  t.equal(engineFor('stock', { config: loadConfig({ PEXELS_API_KEY: 'p', PIXABAY_API_KEY: 'x' }) })?.name, 'pexels');
  t.equal(engineFor('stock', { config: loadConfig({ PIXABAY_API_KEY: 'x' }) })?.name, 'pixabay');
  t.equal(engineFor('stock', { config: loadConfig({ PEXELS_API_KEY: 'p' }) })?.name, 'pexels');
  t.throws(
    () => loadConfig({ FACELESS_SCENE_SOURCE: 'stock_photo' }),
    /FACELESS_SCENE_SOURCE=stock_photo needs a stock media provider: set PEXELS_API_KEY or PIXABAY_API_KEY/,
    'stock scenes without a stock provider: refused at start',
  );
  t.equal(loadConfig({ FACELESS_SCENE_SOURCE: 'stock_photo', PIXABAY_API_KEY: 'x' }).facelessSceneSource, 'stock_photo');
  t.equal(loadConfig({}).facelessSceneSource, 'image', 'default: scenes drawn here');
  t.equal(loadConfig({ FACELESS_SCENE_SOURCE: 'stock_video', PEXELS_API_KEY: 'p' }).facelessSceneSource, 'stock_video');
  t.throws(() => loadConfig({ FACELESS_SCENE_SOURCE: 'stock_video' }), /stock_video needs a stock media provider/);
  t.throws(() => loadConfig({ FACELESS_SCENE_SOURCE: 'video_model' }), /video_model needs FACELESS_VIDEO_MODEL/);
  t.equal(loadConfig({ FACELESS_SCENE_SOURCE: 'video_model', FACELESS_VIDEO_MODEL: 'kling-video' }).facelessVideoModel, 'kling-video');
  t.throws(
    () => loadConfig({ FACELESS_SCENE_SOURCE: 'photos' }),
    /must be "image", "stock_photo", "image_model", "stock_video" or "video_model"/,
  );
  t.throws(() => loadConfig({ PEXELS_API_BASE: 'ftp://x' }), /PEXELS_API_BASE must be an http\(s\) URL/);
});

t.test('a key set: a hosted model variant resolves to that provider engine', async (t) => {
  const config = loadConfig({ REPLICATE_API_TOKEN: 'r8_x', FAL_KEY: 'fal-x', OPENAI_API_KEY: 'sk-x' });
  const setup = { config, fetcher };
  for (const capability of ['image', 'video', 'lipsync'] as const) {
    t.equal(engineFor(capability, { ...setup, model: replicate }).name, 'replicate', `${capability}: replicate`);
    t.equal(engineFor(capability, { ...setup, model: fal }).name, 'fal', `${capability}: fal`);
    t.equal(engineFor(capability, setup).name, 'local', `${capability} of a variant the catalog maps to no provider: local`);
  }
  t.equal(engineFor('image', { ...setup, model: openai }).name, 'openai', 'image: OpenAI Images');
  t.equal(
    engineFor('image', { ...setup, model: replicate }),
    engineFor('lipsync', { ...setup, model: replicate }),
    'one Replicate engine serves all its capabilities',
  );
  t.equal(engineFor('image', { config, model: replicate }).name, 'local', 'no fetcher for hosted outputs: local');
  const onlyFal = { config: loadConfig({ FAL_KEY: 'fal-x' }), fetcher };
  t.equal(engineFor('video', { ...onlyFal, model: replicate }).name, 'local', 'Replicate without its key: local');
  t.equal(engineFor('video', { ...onlyFal, model: fal }).name, 'fal');
  for (const capability of ['write', 'scene', 'slide', 'speech', 'render'] as const) {
    t.equal(
      engineFor(capability, { ...setup, model: replicate }).name,
      engineFor(capability, { config: loadConfig({}) }).name,
      `${capability}: hosted model keys do not change it`,
    );
  }
});

t.test('a writer or transcription URL set: the OpenAI-compatible engines', async (t) => {
  const config = loadConfig({ SCRIPT_PROVIDER_URL: 'http://127.0.0.1:9/v1', TRANSCRIPTION_PROVIDER_URL: 'http://127.0.0.1:8/v1' });
  t.equal(engineFor('write', { config }).name, '127.0.0.1:9');
  t.equal(engineFor('transcribe', { config })?.name, '127.0.0.1:8');
});

t.test('engines are made once per configuration', async (t) => {
  const a = { config: loadConfig({ FAL_KEY: 'fal-x' }), fetcher };
  t.equal(engineFor('write', a), engineFor('write', { ...a }), 'the same writer for the same configuration');
  t.equal(engineFor('video', { ...a, model: fal }), engineFor('video', { ...a, model: fal }));
  t.not(
    engineFor('video', { ...a, model: fal }),
    engineFor('video', { config: loadConfig({ FAL_KEY: 'fal-x' }), fetcher, model: fal }),
    'another configuration: its own engine',
  );
});

t.test(
  'speech: ElevenLabs, then fal (FAL_KEY and FAL_SPEECH_MODEL, with a fetcher), then an OpenAI-compatible server, then eSpeak NG',
  async (t) => {
    const fal = { FAL_KEY: 'fal-x', FAL_SPEECH_MODEL: 'fal-ai/kokoro/american-english' };
    const speech = { SPEECH_PROVIDER_URL: 'http://kokoro:8880/v1' };
    const name = (env: Record<string, string>, withFetcher = true) =>
      engineFor('speech', { config: loadConfig(env), ...(withFetcher ? { fetcher } : {}) }).name;
    t.equal(name({ ...fal, ...speech, ELEVENLABS_API_KEY: 'xi' }), 'elevenlabs', 'ElevenLabs first');
    t.equal(name({ ...fal, ...speech }), 'fal', 'then fal, before the OpenAI-compatible server');
    t.equal(name({ ...fal }), 'fal');
    t.equal(name({ FAL_KEY: 'fal-x', ...speech }), 'openai-compatible', 'FAL_KEY alone (for image and video models) does not speak');
    t.equal(name({ FAL_SPEECH_MODEL: 'fal-ai/kokoro/american-english' }), 'flite+espeak-ng', 'a model without FAL_KEY: not fal');
    t.equal(name(fal, false), 'flite+espeak-ng', 'no fetcher for the audio it answers: not fal');
    t.same(
      engineUseFor('speech', { config: loadConfig({ ...fal, FAL_SPEECH_MODEL: 'fal-ai/elevenlabs/tts/multilingual-v2' }), fetcher }),
      { kind: 'hosted', provider: 'fal', model: 'fal-ai/elevenlabs/tts/multilingual-v2' },
      'what records call it: hosted, fal, the endpoint',
    );
    t.throws(() => loadConfig({ FAL_SPEECH_MODEL: 'fal-ai/veo3' }), /FAL_SPEECH_MODEL must be a fal Kokoro or ElevenLabs TTS endpoint id/);
    t.throws(() => loadConfig({ FAL_SPEECH_VOICES: '["af_heart"]' }), /FAL_SPEECH_VOICES must be a JSON object/);
  },
);

t.test('a generation asks for image, video or lipsync', async (t) => {
  t.equal(generationCapability('image'), 'image');
  t.equal(generationCapability('image', ['text', 'image']), 'image');
  t.equal(generationCapability('video'), 'video');
  t.equal(generationCapability('video', ['text', 'image']), 'video');
  t.equal(generationCapability('video', ['image', 'audio']), 'video', 'an audio-driven avatar is a video');
  t.equal(generationCapability('video', ['video', 'audio']), 'lipsync');
  const lipsync = loadCatalogData()
    .catalog.ai_models.flatMap((m) => m.variants.map((v) => ({ slug: m.slug, v })))
    .filter(({ v }) => generationCapability(v.output, v.input_mode) === 'lipsync');
  t.same([...new Set(lipsync.map((x) => x.slug))], ['lip-sync'], 'in the catalog: the Lip Sync variants');
});

t.test('what records call the engines: local by name, hosted providers, OpenAI-compatible servers by their address', async (t) => {
  const none = { config: loadConfig({}) };
  const local = (model: string) => ({ kind: 'local', provider: 'local', model });
  t.same(engineUseFor('write', none), local('local-writer'));
  t.same(engineUseFor('scene', none), local('local-scene-renderer'));
  t.same(engineUseFor('slide', none), local('local-slide-renderer'));
  t.same(engineUseFor('speech', none), local('flite+espeak-ng'));
  t.same(engineUseFor('render', none), local('ffmpeg'));
  t.equal(engineUseFor('transcribe', none), undefined, 'no transcribe engine, no label');
  t.equal(engineUseFor('stock', none), undefined, 'no stock engine, no label');

  const keyed = { config: loadConfig({ ELEVENLABS_API_KEY: 'xi', ELEVENLABS_MODEL: 'eleven_turbo_v2_5', PIXABAY_API_KEY: 'x' }) };
  t.same(engineUseFor('speech', keyed), { kind: 'hosted', provider: 'elevenlabs', model: 'eleven_turbo_v2_5' });
  t.same(engineUseFor('stock', keyed), { kind: 'hosted', provider: 'pixabay', model: null });

  const servers: [string, string, string][] = [
    ['https://api.openai.com/v1', 'hosted', 'openai'],
    ['https://api.groq.com/openai/v1', 'hosted', 'openai-compatible'],
    ['http://localhost:11434/v1', 'self_hosted', 'openai-compatible'],
    ['http://127.0.0.1:8880/v1', 'self_hosted', 'openai-compatible'],
    ['http://10.1.2.3:8000/v1', 'self_hosted', 'openai-compatible'],
    ['http://[::1]:8000/v1', 'self_hosted', 'openai-compatible'],
    ['http://kokoro:8880/v1', 'self_hosted', 'openai-compatible'],
    ['http://gpu.lan:8000/v1', 'self_hosted', 'openai-compatible'],
    ['https://8.8.8.8/v1', 'hosted', 'openai-compatible'],
  ];
  for (const [url, kind, provider] of servers) {
    const config = loadConfig({
      SCRIPT_PROVIDER_URL: url,
      SCRIPT_MODEL: 'llama3.1:8b',
      SPEECH_PROVIDER_URL: url,
      SPEECH_MODEL: 'kokoro',
      TRANSCRIPTION_PROVIDER_URL: url,
      TRANSCRIPTION_MODEL: 'whisper-1',
    });
    t.same(engineUseFor('write', { config }), { kind, provider, model: 'llama3.1:8b' }, `writer at ${url}: ${kind} ${provider}`);
    t.same(engineUseFor('speech', { config }), { kind, provider, model: 'kokoro' }, `speech at ${url}`);
    t.same(engineUseFor('transcribe', { config }), { kind, provider, model: 'whisper-1' }, `transcription at ${url}`);
  }
});
