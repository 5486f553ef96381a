// AI model variants made by hosted providers, end to end through the worker, against local fakes
// of Replicate (predictions), fal (queue) and OpenAI (Images) that enforce each API's request
// shape (test/engines/fakes/). Lip sync on fal: the source video and the audio track sent, the
// fake's re-synced video (the clip with the new voice) delivered. One app for all three: queued → completed with the provider's
// output stored as ours (real dimensions and durations), 429 → waited out (Retry-After) and
// completed, content policy → failed and refunded once, past the job deadline → the provider's
// job canceled, and a worker that crashed after submitting resumes polling without a new submit.
// The brand kit shapes what each model is sent (prompt guidance; the logo as an edit's extra
// image), and inputs a hosted model cannot use (or edits without an image) are 400s, uncharged.
import sharp from 'sharp';
import t from 'tap';
import type { Test } from 'tap';
import { loadConfig } from '../../src/config.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { createGuardedFetcher } from '../../src/net/guarded-fetch.ts';
import { engineFor, hostedProviderOf } from '../../src/engines/index.ts';
import { ReplicateProvider } from '../../src/engines/hosted/replicate.ts';
import type { GenerationJob, ProviderJobRef } from '../../src/engines/generation.ts';
import { startTestApp } from '../helpers/app.ts';
import { soundOf } from '../helpers/sound.ts';
import { toneBytes, toneShare, toneSpeech } from '../engines/fakes/tone.ts';
import { mp4, png, startFake } from '../engines/fakes/common.ts';
import { startFalFake } from '../engines/fakes/fal.ts';
import { startOpenAiFake } from '../engines/fakes/openai.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';

const replicate = await startReplicateFake('r8_test_token');
const fal = await startFalFake('fal-key-id:fal-key-secret');
const openai = await startOpenAiFake('sk-test-openai');
const refs = await startFake((_req, _res, json) => json(404, {}));
refs.files.set('ref.png', { type: 'image/png', bytes: await png(64, 64, '#ff0000') });
t.teardown(() => Promise.all([replicate.close(), fal.close(), openai.close(), refs.close()]));

const app = await startTestApp(
  t,
  {
    REPLICATE_API_BASE: replicate.url,
    REPLICATE_API_TOKEN: 'r8_test_token',
    FAL_QUEUE_BASE: fal.url,
    FAL_KEY: 'fal-key-id:fal-key-secret',
    OPENAI_API_BASE: `${openai.url}/v1`,
    OPENAI_API_KEY: 'sk-test-openai',
    PROVIDER_POLL_MS: '40',
    PROVIDER_JOB_TIMEOUT_MS: '1500',
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
  },
  { workers: true },
);
const sql = app.service.ctx.sql;

async function generate(body: Record<string, unknown>, inWorkspace?: { orgId: string; key: string }) {
  const ws = inWorkspace ?? (await app.workspace({ credits: 1000 }));
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'ai_model', ...body } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const id = res.body.generations[0].id as string;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const g = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
    if (g.body.status !== 'generating') return { ws, id, g: g.body, charged: res.body.credits_deducted as number };
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** has_audio of a generation's output media (what the stored file has, for hosted outputs). */
async function hasAudio(generationId: string): Promise<boolean | null> {
  const [row] = await sql`select m.has_audio from generations g join media m on m.id = g.output_media_id where g.id = ${generationId}`;
  return row?.has_audio ?? null;
}

async function stored(url: string) {
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

async function refundedOnce(t: Test, orgId: string, charged: number) {
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
      ['generation_refund', charged],
    ],
    'charged once, refunded once',
  );
}

t.test('Replicate: a prediction becomes the generation’s output', async (t) => {
  const { id, g } = await generate({
    model_slug: 'flux-image',
    variant_id: 'text-to-image',
    prompt: 'A red sneaker on a beach',
    aspect_ratio: '9:16',
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const meta = await sharp(await stored(g.url)).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 576, 1024], 'the model’s own image, stored and served');
  t.match(g.output, { content_type: 'image/png', width: 576, height: 1024 });
  const create = replicate.seen.find((s) => s.method === 'POST' && s.body?.input?.prompt === 'A red sneaker on a beach');
  t.equal(create?.path, '/v1/models/black-forest-labs/flux-1.1-pro/predictions');
  t.match(create?.body, { input: { prompt: 'A red sneaker on a beach', aspect_ratio: '9:16', seed: Number, output_format: 'png' } });
  const [row] = await sql`select provider_job, state from generations where id = ${id}`;
  t.match(row.provider_job, { provider: 'replicate', id: String }, 'the prediction id is stored on the generation');
  // The stage's record of the call, for reconciling the provider's bill.
  t.match(row.state.rendering.call, {
    engine: 'replicate',
    model: 'black-forest-labs/flux-1.1-pro',
    providerJobId: row.provider_job.id,
    seconds: Number,
  });
});

t.test('Replicate: 429 is waited out (Retry-After) and the generation completes', async (t) => {
  const { g } = await generate({ model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'throttle me', aspect_ratio: '1:1' });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const creates = replicate.seen.filter((s) => s.method === 'POST' && s.body?.input?.prompt === 'throttle me');
  t.equal(creates.length, 2, 'submitted again after the 429');
  t.ok(creates[1].at - creates[0].at >= 900, 'after the Retry-After second');
  t.same([g.output.width, g.output.height], [1024, 1024]);
});

t.test('Replicate: a prediction failed by the safety checker fails the generation and refunds it', async (t) => {
  const { ws, g, charged } = await generate({ model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'nsfw thing' });
  t.match(g, { status: 'error', error: { code: 'content_rejected', retryable: false, message: /content policy: NSFW content detected/ } });
  t.equal(replicate.seen.filter((s) => s.method === 'POST' && s.body?.input?.prompt === 'nsfw thing').length, 1, 'not submitted again');
  await refundedOnce(t, ws.orgId, charged);
});

t.test('fal: a queued Veo request becomes the generation’s video', async (t) => {
  const { g } = await generate({
    model_slug: 'veo-3',
    variant_id: 'fast',
    prompt: 'A drone shot over a lake',
    aspect_ratio: '16:9',
    duration: 4,
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const file = `${app.service.ctx.config.dataDir}/check-${g.id}.mp4`;
  await (await import('node:fs/promises')).writeFile(file, await stored(g.url));
  const info = await probe(file);
  t.same([info.video_codec, info.width, info.height], ['h264', 320, 180], 'the model’s own video, stored and served');
  t.ok(Math.abs((info.duration_seconds ?? 0) - 2) < 0.2);
  const submit = fal.seen.find((s) => s.method === 'POST' && s.body?.prompt === 'A drone shot over a lake');
  t.equal(submit?.path, '/fal-ai/veo3/fast');
  t.match(submit?.body, {
    prompt: 'A drone shot over a lake',
    aspect_ratio: '16:9',
    duration: '4s',
    resolution: '720p',
    generate_audio: true,
    seed: Number,
  });
  const req = [...fal.requests.values()].find((r) => r.input.prompt === 'A drone shot over a lake')!;
  t.ok(
    fal.seen.some((s) => s.path === `/fal-ai/veo3/requests/${req.id}/status`),
    'status polled under the app root',
  );
  t.equal(info.has_audio, true, 'Veo made its sound');
  t.equal(await hasAudio(g.id), true, 'recorded as having sound');
  // generate_audio: false reaches Veo, and the output is recorded as what the model made.
  const silent = await generate({
    model_slug: 'veo-3',
    variant_id: 'fast',
    prompt: 'A quiet lake',
    aspect_ratio: '16:9',
    duration: 4,
    generate_audio: false,
  });
  t.equal(silent.g.status, 'completed', JSON.stringify(silent.g.error));
  t.equal([...fal.requests.values()].find((r) => r.input.prompt === 'A quiet lake')?.input.generate_audio, false);
  t.equal(await hasAudio(silent.id), false, 'no sound asked, none recorded');
});

t.test('fal: a content_policy_violation fails the generation and refunds it', async (t) => {
  const { ws, g, charged } = await generate({ model_slug: 'veo-3', variant_id: 'fast', prompt: 'forbidden scene', aspect_ratio: '16:9' });
  t.match(g, { status: 'error', error: { code: 'content_rejected', retryable: false, message: /flagged by a content checker/ } });
  await refundedOnce(t, ws.orgId, charged);
});

t.test('fal: past PROVIDER_JOB_TIMEOUT_MS the request is canceled at fal and the generation refunded', async (t) => {
  const { ws, g, charged } = await generate({ model_slug: 'veo-3', variant_id: 'fast', prompt: 'slow motion waves', aspect_ratio: '16:9' });
  t.match(g, { status: 'error', error: { code: 'timeout', retryable: false } });
  const req = [...fal.requests.values()].find((r) => r.input.prompt === 'slow motion waves')!;
  t.ok(
    fal.seen.some((s) => s.method === 'PUT' && s.path === `/fal-ai/veo3/requests/${req.id}/cancel`),
    'PUT …/cancel sent',
  );
  t.ok(req.canceled);
  await refundedOnce(t, ws.orgId, charged);
});

t.test('variants whose model needs an input the request lacks are a 400 naming it, before anything is charged', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const submits = fal.requests.size;
  const predictions = replicate.seen.filter((s) => s.method === 'POST').length;
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [
      { model_slug: 'kling-video', prompt: 'a slow pan' },
      'body.reference_image_urls',
      /or reference_media_ids is required: variant standard of kling-video/,
    ],
    [
      { model_slug: 'kling-video', variant_id: 'pro', prompt: 'a slow pan', reference_image_urls: [] },
      'body.reference_image_urls',
      /variant pro of kling-video/,
    ],
    [
      { model_slug: 'veo-3', variant_id: 'image-to-video', prompt: 'animate it' },
      'body.reference_image_urls',
      /variant image-to-video of veo-3/,
    ],
    [
      { model_slug: 'gemini-flash-image', variant_id: 'image-edit', prompt: 'make it blue' },
      'body.reference_image_urls',
      /variant image-edit of gemini-flash-image/,
    ],
    [{ model_slug: 'lip-sync', variant_id: 'lipsync-2' }, 'body.source_video_url', /or source_video_media_id is required/],
    [
      { model_slug: 'lip-sync', variant_id: 'lipsync-2', source_video_url: `${refs.url}/files/clip.mp4` },
      'body.audio_url',
      /or audio_media_id is required/,
    ],
    // Edit variants: without an image they would be a plain generation at the edit's price.
    [{ model_slug: 'gpt-image', variant_id: 'edit', prompt: 'a mug' }, 'body.reference_image_urls', /variant edit of gpt-image/],
    [
      { model_slug: 'flux-image', variant_id: 'kontext-edit', prompt: 'a mug' },
      'body.reference_image_urls',
      /variant kontext-edit of flux-image/,
    ],
  ];
  for (const [body, field, message] of cases) {
    const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'ai_model', ...body } });
    t.equal(res.status, 400, JSON.stringify(body));
    const errors: { field: string; message: string }[] = res.body.error?.context?.errors ?? [];
    t.ok(
      errors.some((e) => e.field === field && message.test(e.message)),
      `${field}: ${JSON.stringify(res.body.error)}`,
    );
  }
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [['initial_grant', 1000]],
    'nothing charged',
  );
  t.equal((await sql`select count(*)::int as n from generations where org_id = ${ws.orgId}`)[0].n, 0, 'no generation made');
  t.equal(fal.requests.size, submits, 'nothing sent to fal');
  t.equal(replicate.seen.filter((s) => s.method === 'POST').length, predictions, 'nothing sent to Replicate');
  // What the catalog says, for agents: GET /models names the inputs a variant needs.
  const models = (await app.request('GET', '/api/v1/models', { key: ws.key })).body.ai_models as {
    slug: string;
    variants: { id: string; required_inputs?: string[] }[];
  }[];
  const kling = models.find((m) => m.slug === 'kling-video')!;
  t.same(
    kling.variants.map((v) => [v.id, v.required_inputs ?? []]),
    [
      ['standard', ['image']],
      ['pro', ['image']],
      ['master', []],
    ],
  );
});

t.test('fal: Kling image-to-video with its reference image becomes the generation’s video', async (t) => {
  const { ws, g, charged } = await generate({
    model_slug: 'kling-video',
    variant_id: 'standard',
    prompt: 'The bottle turns gently',
    reference_image_urls: [`${refs.url}/files/ref.png`],
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const file = `${app.service.ctx.config.dataDir}/check-${g.id}.mp4`;
  await (await import('node:fs/promises')).writeFile(file, await stored(g.url));
  const info = await probe(file);
  t.equal(info.video_codec, 'h264', 'the model’s own video, stored and served');
  t.ok(Math.abs((info.duration_seconds ?? 0) - 2) < 0.2);
  const req = [...fal.requests.values()].find((r) => r.input.prompt === 'The bottle turns gently')!;
  t.equal(req.endpoint, 'fal-ai/kling-video/v2.1/standard/image-to-video');
  t.match(req.input, { duration: '5', image_url: /^data:image\/png;base64,/ });
  t.notOk(
    'aspect_ratio' in req.input || 'resolution' in req.input || 'generate_audio' in req.input,
    'no inputs the endpoint does not take',
  );
  t.equal(await hasAudio(g.id), false, 'Kling makes no sound: recorded as silent although generate_audio defaults to true');
  t.ok(
    fal.seen.some((s) => s.path === `/fal-ai/kling-video/requests/${req.id}/status`),
    'status polled under the app root',
  );
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
    ],
    'charged once, nothing refunded',
  );
});

t.test('fal: Lipsync 2 Pro re-syncs the source video to the audio track', async (t) => {
  // The clip (3 s, 320×180, silent) and the new voice (a 300 Hz tone a little over 2 s long, MP3).
  refs.files.set('lipsync-clip.mp4', { type: 'video/mp4', bytes: await mp4(320, 180, 3, '#00aa00') });
  const voice = toneSpeech('Say it with sparkling water.', 44100, 300);
  refs.files.set('lipsync-voice.mp3', { type: 'audio/mpeg', bytes: await toneBytes(voice, 'mp3') });
  const { ws, g, charged } = await generate({
    model_slug: 'lip-sync',
    variant_id: 'lipsync-2-pro',
    source_video_url: `${refs.url}/files/lipsync-clip.mp4`,
    audio_url: `${refs.url}/files/lipsync-voice.mp3`,
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.same(g.engine, { kind: 'hosted', provider: 'fal', model: 'fal-ai/sync-lipsync/v2', preview: false, requires: null }, 'made by fal');
  const req = [...fal.requests.values()].find((r) => r.endpoint === 'fal-ai/sync-lipsync/v2')!;
  t.ok(req, 'submitted to Sync Lipsync 2.0 on fal');
  t.same(Object.keys(req.input).sort(), ['audio_url', 'model', 'video_url'], 'the video, the audio and the model: nothing else');
  t.match(req.input, { model: 'lipsync-2-pro', video_url: /^data:video\/mp4;base64,/, audio_url: /^data:audio\/mpeg;base64,/ });
  t.ok(
    fal.seen.some((s) => s.path === `/fal-ai/sync-lipsync/requests/${req.id}/status`),
    'status polled under the app root',
  );
  // The delivered video is the fake's: the source clip with the new voice as its sound, cut to the shorter.
  const file = `${app.service.ctx.config.dataDir}/check-${g.id}.mp4`;
  await (await import('node:fs/promises')).writeFile(file, await stored(g.url));
  const info = await probe(file);
  t.same([info.video_codec, info.width, info.height], ['h264', 320, 180], 'the source clip’s frame');
  const voiceSeconds = voice.pcm.length / 44100;
  t.ok(
    Math.abs((info.duration_seconds ?? 0) - voiceSeconds) < 0.3,
    `as long as the voice (${info.duration_seconds} s vs ${voiceSeconds} s)`,
  );
  t.equal(await hasAudio(g.id), true, 'with sound');
  const sound = await soundOf(g.url);
  t.ok(toneShare(sound, 16000, 300) > 0.3, 'the new voice is its sound');
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
    ],
    'charged once, at the catalog price',
  );
  t.ok(charged >= 100, `the model's price (${charged} credits), not a preview's`);
});

t.test('OpenAI: generations, and edits with the reference images as image[]', async (t) => {
  const made = await generate({
    model_slug: 'gpt-image',
    variant_id: 'generate',
    prompt: 'A poster with the word SALE',
    aspect_ratio: '9:16',
  });
  t.equal(made.g.status, 'completed', JSON.stringify(made.g.error));
  const meta = await sharp(await stored(made.g.url)).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 1024, 1536], 'the nearest size the model makes');
  const gen = openai.seen.find((s) => s.body?.prompt === 'A poster with the word SALE');
  t.equal(gen?.path, '/v1/images/generations');
  t.match(gen?.body, { model: 'gpt-image-1', size: '1024x1536', n: 1, output_format: 'png' });

  const edited = await generate({
    model_slug: 'gpt-image',
    variant_id: 'edit',
    prompt: 'Put this on a mug',
    aspect_ratio: '1:1',
    reference_image_urls: [`${refs.url}/files/ref.png`],
  });
  t.equal(edited.g.status, 'completed', JSON.stringify(edited.g.error));
  const { channels } = await sharp(await stored(edited.g.url)).stats();
  t.same(
    channels.slice(0, 3).map((c) => Math.round(c.mean)),
    [255, 136, 0],
    'the edit’s output (flat orange), not a local render',
  );
  const edit = openai.seen.find((s) => s.path === '/v1/images/edits');
  t.same(edit?.body?.prompt, ['Put this on a mug']);
  t.ok(edit?.body?.['image[]']?.[0]?.bytes.equals(refs.files.get('ref.png')!.bytes), 'the reference image sent as image[]');
});

t.test(
  'a brand kit shapes what the hosted model is sent: name, colours by role and fonts in the prompt; the logo as one more image of an edit',
  async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const logo = await png(32, 32, '#0000ff');
    const kit = await app.request('POST', '/api/v1/brand-kits', {
      key: ws.key,
      body: {
        name: 'Acme',
        colors: { primary: '#ff5500', secondary: '#112233' },
        fonts: ['DejaVu Serif'],
        logo: `data:image/png;base64,${logo.toString('base64')}`,
      },
    });
    t.equal(kit.status, 200, kit.text);
    const guidance = 'Brand: Acme. Brand colours: primary #FF5500, secondary #112233. Brand fonts: DejaVu Serif.';
    const predictionOf = async (id: string) => {
      const [row] = await sql`select provider_job from generations where id = ${id}`;
      return replicate.predictions.get(row.provider_job.id)!.input;
    };

    // Replicate (Flux text to image): the same request with and without the kit.
    const body = { model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'A lamp on a desk', aspect_ratio: '4:5' };
    const plain = await generate(body, ws);
    const branded = await generate({ ...body, brand_kit_id: kit.body.id }, ws);
    t.same([plain.g.status, branded.g.status], ['completed', 'completed'], JSON.stringify([plain.g.error, branded.g.error]));
    const { seed: _s1, ...without } = await predictionOf(plain.id);
    const { seed: _s2, ...withKit } = await predictionOf(branded.id);
    t.equal(without.prompt, 'A lamp on a desk', 'no kit: the prompt as given');
    t.equal(withKit.prompt, `A lamp on a desk\n\n${guidance}`, 'the kit: its name, colours by role and fonts appended');
    t.same({ ...withKit, prompt: without.prompt }, without, 'nothing else differs');
    t.notOk('image' in withKit, 'no logo for a text-to-image model (it takes no image)');

    // OpenAI generate (text only): guidance, still a generation at its price (no logo, no edit).
    const gen = await generate(
      { model_slug: 'gpt-image', variant_id: 'generate', prompt: 'A banner for spring', brand_kit_id: kit.body.id },
      ws,
    );
    t.equal(gen.g.status, 'completed', JSON.stringify(gen.g.error));
    const genReq = openai.seen.find((s) => typeof s.body?.prompt === 'string' && s.body.prompt.startsWith('A banner for spring'));
    t.equal(genReq?.path, '/v1/images/generations');
    t.equal(genReq?.body?.prompt, `A banner for spring\n\n${guidance}`);

    // OpenAI edit: the same request with and without the kit; the logo joins image[] after the reference.
    const editBody = {
      model_slug: 'gpt-image',
      variant_id: 'edit',
      prompt: 'Brand this mug',
      reference_image_urls: [`${refs.url}/files/ref.png`],
    };
    for (const b of [editBody, { ...editBody, brand_kit_id: kit.body.id }]) t.equal((await generate(b, ws)).g.status, 'completed');
    const edits = openai.seen.filter((s) => s.path === '/v1/images/edits' && String(s.body?.prompt?.[0]).startsWith('Brand this mug'));
    t.equal(edits.length, 2);
    const [e1, e2] = edits;
    t.same(e1.body.prompt, ['Brand this mug']);
    // (multipart form fields carry line breaks as CRLF)
    t.same(
      e2.body.prompt.map((p: string) => p.replace(/\r\n/g, '\n')),
      [`Brand this mug\n\n${guidance} The last input image is the brand logo: show it unaltered.`],
    );
    t.equal(e1.body['image[]'].length, 1, 'without the kit: the reference alone');
    t.equal(e2.body['image[]'].length, 2, 'with the kit: the reference, then the logo');
    t.ok(e2.body['image[]'][0].bytes.equals(refs.files.get('ref.png')!.bytes), 'the reference first');
    const sent = e2.body['image[]'][1].bytes as Buffer;
    const meta = await sharp(sent).metadata();
    const { channels } = await sharp(sent).stats();
    t.same(
      [meta.width, meta.height, ...channels.slice(0, 3).map((c) => Math.round(c.mean))],
      [32, 32, 0, 0, 255],
      'the kit’s logo (32×32 blue)',
    );
    t.same(Object.keys(e2.body).sort(), Object.keys(e1.body).sort(), 'the same fields otherwise');
    for (const k of ['model', 'size', 'n', 'output_format']) t.same(e2.body[k], e1.body[k], k);
  },
);

t.test('inputs the hosted model has no use for are a 400 naming them, before anything is charged', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const clip = `${refs.url}/files/clip.mp4`;
  const ref = `${refs.url}/files/ref.png`;
  const lipsync = { model_slug: 'lip-sync', variant_id: 'lipsync-2', source_video_url: clip, audio_url: `${refs.url}/files/voice.mp3` };
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ ...lipsync, brand_kit_id: 1 }, 'body.brand_kit_id', /made by sync\/lipsync-2, which takes no prompt/],
    [{ ...lipsync, prompt: 'sing' }, 'body.prompt', /which takes no prompt/],
    [{ ...lipsync, duration: 5 }, 'body.duration', /lasts as long as its input/],
    [{ ...lipsync, motion_video_url: clip }, 'body.motion_video_url', /takes one video/],
    [
      { model_slug: 'kling-video', prompt: 'pan', reference_image_urls: [ref], aspect_ratio: '16:9' },
      'body.aspect_ratio',
      /takes its frame from its input/,
    ],
    [
      { model_slug: 'kling-video', prompt: 'pan', reference_image_urls: [ref], resolution: '1080p' },
      'body.resolution',
      /makes its own size \(720p\)/,
    ],
    [
      { model_slug: 'flux-image', prompt: 'a lamp', resolution: '2K' },
      'body.resolution',
      /made by black-forest-labs\/flux-1.1-pro, which makes its own size \(1K\)/,
    ],
    [
      { model_slug: 'flux-image', variant_id: 'kontext-edit', prompt: 'a lamp', reference_image_urls: [ref, ref] },
      'body.reference_image_urls',
      /gives 2 images: .* takes one reference image/,
    ],
  ];
  for (const [body, field, message] of cases) {
    const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'ai_model', ...body } });
    t.equal(res.status, 400, JSON.stringify(body));
    const errors: { field: string; message: string }[] = res.body.error?.context?.errors ?? [];
    t.ok(
      errors.some((e) => e.field === field && message.test(e.message)),
      `${field}: ${JSON.stringify(res.body.error)}`,
    );
  }
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [['initial_grant', 1000]],
    'nothing charged',
  );
  // What still applies is accepted: auto for a model that follows its image; the variant's own resolution.
  const ok = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'ai_model',
      model_slug: 'flux-image',
      prompt: 'a lamp',
      resolution: '1K',
      aspect_ratio: '1:1',
      idempotency_key: 'hosted-ok-1',
    },
  });
  t.equal(ok.status, 200, ok.text);
});

t.test('OpenAI: 429 waited out; moderation_blocked fails and refunds', async (t) => {
  const slow = await generate({ model_slug: 'gpt-image', variant_id: 'generate', prompt: 'throttle openai' });
  t.equal(slow.g.status, 'completed', JSON.stringify(slow.g.error));
  t.equal(openai.seen.filter((s) => s.body?.prompt === 'throttle openai').length, 2);
  const { ws, g, charged } = await generate({ model_slug: 'gpt-image', variant_id: 'generate', prompt: 'forbidden poster' });
  t.match(g, { status: 'error', error: { code: 'content_rejected', retryable: false, message: /safety system/ } });
  await refundedOnce(t, ws.orgId, charged);
});

t.test('routing: a keyed provider makes its variants; no key (or no provider block) renders locally', async (t) => {
  const fetcher = createGuardedFetcher();
  const none = { config: loadConfig({}), fetcher };
  t.equal(engineFor('image', { ...none, model: { name: 'replicate', model: 'a/b' } }).name, 'local', 'no configuration: local');
  const some = { config: loadConfig({ FAL_KEY: 'k' }), fetcher };
  t.equal(engineFor('video', { ...some, model: { name: 'fal', model: 'fal-ai/veo3' } }).name, 'fal');
  t.equal(engineFor('image', { ...some, model: { name: 'openai', model: 'gpt-image-1' } }).name, 'local', 'OpenAI has no key: local');
  t.equal(engineFor('image', some).name, 'local', 'templates and unmapped variants: local');
  // Request validation decides with the same rule (hostedProviderOf) as the worker.
  t.equal(hostedProviderOf(loadConfig({ FAL_KEY: 'k' }).provider, { name: 'fal', model: 'fal-ai/veo3' }), 'fal');
  t.equal(hostedProviderOf(loadConfig({ FAL_KEY: 'k' }).provider, { name: 'openai', model: 'gpt-image-1' }), undefined);
  t.equal(hostedProviderOf(loadConfig({}).provider, undefined), undefined);
  t.throws(() => loadConfig({ GENERATION_PROVIDER: 'remote' }), /no longer read.*REPLICATE_API_TOKEN, FAL_KEY or OPENAI_API_KEY/);
  t.throws(() => loadConfig({ FAL_QUEUE_BASE: 'ftp://x' }), /FAL_QUEUE_BASE must be an http\(s\) URL/);
});

t.test('a worker that crashed after submitting resumes polling the stored prediction', async (t) => {
  const provider = new ReplicateProvider({
    baseUrl: replicate.url,
    key: 'r8_test_token',
    fetcher: createGuardedFetcher({ allowIps: ['127.0.0.1'] }),
    pollMs: 20,
  });
  const job: GenerationJob = {
    generationId: '0b5c3f9e-0000-4000-8000-000000000001',
    type: 'ai_model',
    output: 'image',
    prompt: 'resume me',
    title: 'Flux Image',
    aspectRatio: '4:5',
    width: 820,
    height: 1024,
    imageFormat: 'png',
    referenceImages: [],
    generateAudio: false,
    providerModel: { name: 'replicate', model: 'black-forest-labs/flux-1.1-pro' },
  };
  // First attempt: submitted, stored, then the worker dies (its signal aborts) while polling.
  const crash = new AbortController();
  let stored: ProviderJobRef | null = null;
  const first = await provider
    .generate(job, {
      workDir: app.service.ctx.config.dataDir,
      signal: crash.signal,
      onSubmitted: async (ref) => void ((stored = ref), crash.abort()),
    })
    .catch((e) => e);
  t.equal(first?.name, 'AbortError');
  t.match(stored, { provider: 'replicate', id: String });
  // Second attempt: resumes the stored prediction, no second create.
  const res = await provider.generate(job, { workDir: app.service.ctx.config.dataDir, resume: stored! });
  t.same([res.width, res.height, res.contentType], [820, 1024, 'image/png']);
  t.equal(replicate.seen.filter((s) => s.method === 'POST' && s.body?.input?.prompt === 'resume me').length, 1, 'one prediction created');
});
