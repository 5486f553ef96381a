// Templates made by the model their catalog names (made_by), end to end through the worker,
// against the local fakes of Replicate and fal (test/engines/fakes/): the model makes the picture
// (a static ad's hero image, a video tier's footage from its first frame), the local engines
// composite the template over it (headline, brand, CTA; over footage also captions and sound), and
// the generation is billed at the template's price with the model's label. Inputs the model has no
// use for are 400s, uncharged.
import sharp from 'sharp';
import t from 'tap';
import { FFMPEG_PATH, probe } from '../../src/media/ffmpeg.ts';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findTemplate } from '../../src/services/catalog/catalog-data.ts';
import { png, startFake } from '../engines/fakes/common.ts';
import { startFalFake } from '../engines/fakes/fal.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';
import { startTestApp } from '../helpers/app.ts';
import { normWords, ocrWords } from '../helpers/ocr.ts';
import { stopOcr } from '../../src/media/ocr.ts';
import { recordedManifest } from '../../src/pipelines/recorded-manifest.ts';

const replicate = await startReplicateFake('r8_test_token');
const fal = await startFalFake('fal-key-id:fal-key-secret');
const refs = await startFake((_req, _res, json) => json(404, {}));
// A product photo: a red square on white.
refs.files.set('product.png', {
  type: 'image/png',
  bytes: await sharp({ create: { width: 400, height: 400, channels: 3, background: '#ffffff' } })
    .composite([{ input: await png(200, 200, '#e01010'), left: 100, top: 100 }])
    .png()
    .toBuffer(),
});
t.teardown(() => Promise.all([replicate.close(), fal.close(), refs.close(), stopOcr()]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'template-hosted-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

const app = await startTestApp(
  t,
  {
    REPLICATE_API_BASE: replicate.url,
    REPLICATE_API_TOKEN: 'r8_test_token',
    FAL_QUEUE_BASE: fal.url,
    FAL_KEY: 'fal-key-id:fal-key-secret',
    PROVIDER_POLL_MS: '40',
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
  },
  { workers: true },
);
const sql = app.service.ctx.sql;
const productUrl = `${refs.url}/files/product.png`;

async function generate(body: Record<string, unknown>) {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const id = res.body.generations[0].id as string;
  const deadline = Date.now() + 90_000;
  for (;;) {
    const g = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
    if (g.body.status !== 'generating') return { ws, id, g: g.body, charged: res.body.credits_deducted as number };
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const bytesOf = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

/** The mean colour of a region (fractions of the frame) of an image. */
async function meanColour(img: Buffer, box: { x: number; y: number; w: number; h: number }): Promise<number[]> {
  const meta = await sharp(img).metadata();
  const region = {
    left: Math.round(box.x * meta.width!),
    top: Math.round(box.y * meta.height!),
    width: Math.round(box.w * meta.width!),
    height: Math.round(box.h * meta.height!),
  };
  const part = await sharp(img).extract(region).removeAlpha().toBuffer();
  const { channels } = await sharp(part).stats();
  return channels.map((c) => Math.round(c.mean));
}

/** ffmpeg's stderr (where its filters report). */
const spawnSyncStderr = (args: string[]) => spawnSync(FFMPEG_PATH, args, { encoding: 'utf8' }).stderr;

const close = (a: number[], b: number[], tol = 12) => a.every((v, i) => Math.abs(v - b[i]) <= tol);

async function stageRecord(id: string) {
  const [row] = await sql`select state, provider_job from generations where id = ${id}`;
  return row as { state: any; provider_job: any };
}

t.test('a static ad: the hero image by Flux on Replicate, the template composited over it, at the template price', async (t) => {
  const before = replicate.predictions.size;
  const { g, charged, id } = await generate({ type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Lemonade summer sale' });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(charged, (findTemplate('bold-sale-banner') as { credits: number }).credits, 'the template price, not a preview');
  t.same(g.engine, { kind: 'hosted', provider: 'replicate', model: 'black-forest-labs/flux-1.1-pro', preview: false, requires: null });
  const calls = [...replicate.predictions.values()].slice(before);
  t.equal(calls.length, 1, 'one prediction');
  t.equal(calls[0].model, 'black-forest-labs/flux-1.1-pro');
  t.match(calls[0].input.prompt, /^Lemonade summer sale\n\nStyle: Bold Sale Banner\.\n\nAn advertising photograph with no text/);
  t.equal(calls[0].input.aspect_ratio, '1:1');
  const out = await bytesOf(g.url);
  const meta = await sharp(out).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 1024, 1024]);
  // The fake's hero is a flat #2a7fff: it fills the middle of the ad; the top carries the
  // headline over a scrim (darker, and not flat).
  t.ok(close(await meanColour(out, { x: 0.3, y: 0.45, w: 0.4, h: 0.1 }), [0x2a, 0x7f, 0xff]), 'the hero picture shows in the middle');
  const top = await sharp(await sharp(out).extract({ left: 0, top: 0, width: 1024, height: 200 }).toBuffer()).stats();
  t.ok(top.channels[0].stdev > 20, 'the top band holds the headline (not a flat colour)');
  const record = await stageRecord(id);
  t.match(record.state.generating, {
    provider: 'replicate',
    model: 'black-forest-labs/flux-1.1-pro',
    providerJobId: calls[0].id,
    contentType: 'image/png',
  });
  t.ok(record.state.generating.seconds >= 0);
  t.notOk(await app.service.ctx.storage.stat(record.state.generating.storageKey), "the model's picture is removed once composited");
});

t.test("a composited static ad shows the customer's copy verbatim over the model's picture", async (t) => {
  const copy = { headline: 'Cold. Crisp. Yours.', cta: 'Grab a bottle' };
  // A template with a Montserrat headline: Tesseract reads Anton's capital C (bold-sale-banner's
  // face) as a G, so "COLD. CRISP." in Anton cannot be proved verbatim by OCR.
  const { g, id } = await generate({ type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Lemonade summer sale', copy });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.match(g.engine, { kind: 'hosted' }, 'made by the model, composited here');
  // The boxes the compositor says it drew in say where to look (a button's words are lost in a band).
  const manifest = await recordedManifest(app.service.ctx.db, 'generation', id);
  t.ok(manifest?.texts.length, 'the composite recorded the texts it placed');
  const read = await ocrWords(await bytesOf(g.url), manifest);
  t.ok(read.includes(normWords(copy.headline)), `the headline is drawn verbatim (read: ${read})`);
  t.ok(read.includes(normWords(copy.cta)), `the CTA is drawn verbatim (read: ${read})`);
});

t.test('a static ad with a product image: Flux Kontext edits it', async (t) => {
  const before = replicate.predictions.size;
  const { g } = await generate({
    type: 'static_ad',
    template_slug: 'product-spotlight',
    prompt: 'Red cube',
    reference_image_urls: [productUrl],
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(g.engine.model, 'black-forest-labs/flux-kontext-pro');
  const [call] = [...replicate.predictions.values()].slice(before);
  t.equal(call.model, 'black-forest-labs/flux-kontext-pro');
  t.match(call.input.input_image, /^data:image\/png;base64,/, 'the product image is the input image');
  const sent = Buffer.from(call.input.input_image.split(',')[1], 'base64');
  t.same(await meanColour(sent, { x: 0.4, y: 0.4, w: 0.2, h: 0.2 }), [224, 16, 16], 'the product photo itself');
});

t.test('a video ad: Veo 3 Fast animates the product image; the template, captions and its sound finish it', async (t) => {
  const before = fal.requests.size;
  const { g, charged, id } = await generate({
    type: 'video_ad',
    template_slug: 'product-demo-showcase',
    quality_tier: 'high',
    duration: 4,
    prompt: 'A red cube spins on a white table',
    reference_image_urls: [productUrl],
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(charged, 4 * 15, 'the tier price per second');
  t.same(g.engine, { kind: 'hosted', provider: 'fal', model: 'fal-ai/veo3/fast/image-to-video', preview: false, requires: null });
  const calls = [...fal.requests.values()].slice(before);
  t.equal(calls.length, 1, 'one fal request');
  t.equal(calls[0].endpoint, 'fal-ai/veo3/fast/image-to-video');
  t.match(calls[0].input, { duration: '4s', aspect_ratio: '9:16', generate_audio: true });
  t.match(calls[0].input.prompt, /A red cube spins on a white table[\s\S]*Style: Product Demo Showcase[\s\S]*no text/);
  t.match(calls[0].input.image_url, /^data:image\/png;base64,/, 'the product image is the first frame');
  const file = path.join(dir, 'veo.mp4');
  fs.writeFileSync(file, await bytesOf(g.url));
  const info = await probe(file);
  t.same([info.width, info.height], [1080, 1920]);
  t.ok(Math.abs((info.duration_seconds ?? 0) - 4) < 0.3, `4 seconds (${info.duration_seconds})`);
  t.equal(info.has_audio, true, "Veo's sound track is kept");
  // The middle of a frame is the fake's footage (testsrc's colour bars), not a composed still.
  const frame = path.join(dir, 'veo.png');
  execFileSync(FFMPEG_PATH, ['-v', 'error', '-y', '-ss', '2', '-i', file, '-frames:v', '1', frame]);
  const mid = await sharp(await sharp(fs.readFileSync(frame)).extract({ left: 0, top: 700, width: 1080, height: 400 }).toBuffer()).stats();
  t.ok(
    mid.channels.some((c) => c.stdev > 40),
    'the footage shows (many colours across the frame)',
  );
  t.match((await stageRecord(id)).state.generating, {
    provider: 'fal',
    model: 'fal-ai/veo3/fast/image-to-video',
    contentType: 'video/mp4',
  });
});

t.test('a video tier with no image to start from: Kling animates the template picture, silent footage gets the music bed', async (t) => {
  const before = fal.requests.size;
  const { g } = await generate({ type: 'video_ad', template_slug: 'product-demo-showcase', quality_tier: 'low', prompt: 'Fresh lemons' });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(g.engine.model, 'fal-ai/kling-video/v2.1/standard/image-to-video');
  const [call] = [...fal.requests.values()].slice(before);
  t.match(call.input.image_url, /^data:image\/png;base64,/, 'a first frame was made');
  const first = await sharp(Buffer.from(call.input.image_url.split(',')[1], 'base64')).metadata();
  t.same([first.width, first.height], [720, 1280], "the template's picture at the video's size");
  const file = path.join(dir, 'kling.mp4');
  fs.writeFileSync(file, await bytesOf(g.url));
  t.equal((await probe(file)).has_audio, true, 'Kling is silent: the music bed is added');
});

t.test('inputs the template model has no use for are 400s, nothing charged', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'two product images for Kontext, which edits one',
      { type: 'static_ad', template_slug: 'product-spotlight', reference_image_urls: [productUrl, productUrl] },
      'body.reference_image_urls',
    ],
    [
      'a product image for Veo 3 text-to-video',
      { type: 'video_ad', template_slug: 'cinematic-brand-story', quality_tier: 'high', reference_image_urls: [productUrl] },
      'body.reference_image_urls',
    ],
  ];
  for (const [what, body, field] of cases) {
    const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body });
    t.equal(res.status, 400, what);
    t.match(res.body.error, { code: 'bad_request', context: { errors: [{ field }] } }, `${what}: names ${field}`);
  }
  const [{ n }] = await sql`select count(*)::int as n from credit_ledger where org_id = ${ws.orgId}`;
  t.equal(n, 1, 'only the initial grant');
});

t.test('a UGC ad on a talking avatar: a script, spoken, drives OmniHuman over the avatar; the captions follow the words', async (t) => {
  const before = fal.requests.size;
  const { g, charged, id } = await generate({
    type: 'ugc_ad',
    template_slug: 'founder-story',
    quality_tier: 'high',
    duration: 10,
    avatar_id: 'maya-lifestyle',
    prompt: 'Why we started making fresh lemonade',
  });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(charged, 10 * 10, 'the tier price per second');
  t.same(g.engine, { kind: 'hosted', provider: 'fal', model: 'fal-ai/bytedance/omnihuman/v1.5', preview: false, requires: null });
  const calls = [...fal.requests.values()].slice(before);
  t.equal(calls.length, 1, 'one fal request');
  t.equal(calls[0].endpoint, 'fal-ai/bytedance/omnihuman/v1.5');
  t.same(Object.keys(calls[0].input).sort(), ['audio_url', 'image_url', 'resolution'], 'the portrait, the voice and the resolution only');
  t.match(calls[0].input.audio_url, /^data:audio\/wav;base64,/);
  const record = (await stageRecord(id)).state;
  t.ok(record.script.text.split(' ').length >= 10, `a script was written: "${record.script.text}"`);
  t.match(record.script.text, /lemonade/i, 'about the prompt');
  t.match(record.voice, { engine: 'flite+espeak-ng', timings: 'engine', durationMs: 10_000 });
  t.ok(record.voice.words.length >= 10, 'its words are timed');
  // The voice sent is the stored narration: 10 s of 48 kHz stereo.
  const sent = path.join(dir, 'sent.wav');
  fs.writeFileSync(sent, Buffer.from(calls[0].input.audio_url.split(',')[1], 'base64'));
  const voice = await probe(sent);
  t.ok(Math.abs((voice.duration_seconds ?? 0) - 10) < 0.1, `the voice lasts the duration (${voice.duration_seconds})`);
  // The portrait sent is the avatar's.
  const portrait = await sharp(Buffer.from(calls[0].input.image_url.split(',')[1], 'base64')).metadata();
  t.ok((portrait.width ?? 0) > 100, 'the avatar portrait');
  const file = path.join(dir, 'ugc.mp4');
  fs.writeFileSync(file, await bytesOf(g.url));
  const info = await probe(file);
  t.same([info.width, info.height], [1080, 1920]);
  t.ok(Math.abs((info.duration_seconds ?? 0) - 10) < 0.3, `10 seconds (${info.duration_seconds})`);
  t.equal(info.has_audio, true, 'the narration is its sound');
  // The narration is audible through the video: the mean volume is well above silence.
  const detect = spawnSyncStderr(['-hide_banner', '-i', file, '-af', 'volumedetect', '-vn', '-f', 'null', '-']);
  const mean = Number(/mean_volume: (-?[\d.]+) dB/.exec(detect)?.[1]);
  t.ok(mean > -40, `the narration is heard (mean ${mean} dB)`);
  t.notOk(await app.service.ctx.storage.stat(record.voice.storageKey), 'the stored voice is removed once composited');
});

t.test('a talking-avatar tier needs an avatar and takes no product image', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const none = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ugc_ad', template_slug: 'founder-story', quality_tier: 'high', prompt: 'x' },
  });
  t.equal(none.status, 400);
  t.match(none.body.error.context.errors, [{ field: 'body.avatar_id' }]);
  const product = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'ugc_ad',
      template_slug: 'founder-story',
      quality_tier: 'high',
      avatar_id: 'maya-lifestyle',
      reference_image_urls: [productUrl],
    },
  });
  t.equal(product.status, 400);
  t.match(product.body.error.context.errors, [{ field: 'body.reference_image_urls' }]);
});

t.test(
  'a frame the model does not make: a template asks for the nearest and is cropped to its own; an AI model request is a 400',
  async (t) => {
    const before = fal.requests.size;
    const { g } = await generate({
      type: 'video_ad',
      template_slug: 'product-demo-showcase',
      quality_tier: 'high',
      duration: 4,
      aspect_ratio: '4:5',
      prompt: 'A red cube',
      reference_image_urls: [productUrl],
    });
    t.equal(g.status, 'completed', JSON.stringify(g.error));
    const [call] = [...fal.requests.values()].slice(before);
    t.equal(call.input.aspect_ratio, '1:1', 'Veo makes 16:9, 9:16 and 1:1: the nearest to 4:5 is asked for');
    const file = path.join(dir, 'veo-45.mp4');
    fs.writeFileSync(file, await bytesOf(g.url));
    const info = await probe(file);
    t.same([info.width, info.height], [1080, 1350], 'the ad is the 4:5 frame asked for');

    const ws = await app.workspace({ credits: 1000 });
    const res = await app.request('POST', '/api/v1/generations', {
      key: ws.key,
      body: { type: 'ai_model', model_slug: 'veo-3', variant_id: 'fast', prompt: 'x', aspect_ratio: '4:5' },
    });
    t.equal(res.status, 400);
    t.match(res.body.error.context.errors, [{ field: 'body.aspect_ratio', message: /16:9, 9:16, 1:1/ }]);
  },
);
