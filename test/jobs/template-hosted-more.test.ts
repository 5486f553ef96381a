// The video and UGC tiers made by Seedance 1.0 Pro/Lite, Hailuo-02 Pro/Standard and Wan 2.2 A14B
// (spec/catalog.yaml made_by → ai_models seedance, hailuo, wan), end to end through the worker
// against the local fal fake (test/engines/fakes/fal.ts), which checks each endpoint's input against
// its fal model page's schema: the fake gets the tier's endpoint and exactly the input that endpoint
// takes (durations and resolution in its format, the product image, the avatar or the template's
// picture as image_url), its footage is finished to the requested size and duration, the record
// names the fal model, and the charge is the tier's catalog price. GET /models shows these tiers
// hosted with FAL_KEY and local previews without.
import sharp from 'sharp';
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { probe } from '../../src/media/ffmpeg.ts';
import { findTemplate, localPreviewPricing, type RawQualityTier } from '../../src/services/catalog/catalog-data.ts';
import { png, startFake } from '../engines/fakes/common.ts';
import { startFalFake } from '../engines/fakes/fal.ts';
import { startTestApp } from '../helpers/app.ts';

const FAL_KEY = 'fal-key-id:fal-key-secret';
const fal = await startFalFake(FAL_KEY);
const refs = await startFake((_req, _res, json) => json(404, {}));
// A product photo: a red square on white.
refs.files.set('product.png', {
  type: 'image/png',
  bytes: await sharp({ create: { width: 400, height: 400, channels: 3, background: '#ffffff' } })
    .composite([{ input: await png(200, 200, '#e01010'), left: 100, top: 100 }])
    .png()
    .toBuffer(),
});
t.teardown(() => Promise.all([fal.close(), refs.close()]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'template-hosted-more-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

const app = await startTestApp(
  t,
  { FAL_QUEUE_BASE: fal.url, FAL_KEY, PROVIDER_POLL_MS: '40', OUTBOUND_ALLOW_IPS: '127.0.0.1' },
  { workers: true },
);
const productUrl = `${refs.url}/files/product.png`;

const tierOf = (slug: string, id: string) =>
  (findTemplate(slug) as { quality_tiers: RawQualityTier[] }).quality_tiers.find((q) => q.id === id)!;

async function generate(body: Record<string, unknown>) {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const id = res.body.generations[0].id as string;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const g = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
    if (g.body.status !== 'generating') return { id, g: g.body, charged: res.body.credits_deducted as number };
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const imageOf = (uri: string) => Buffer.from(uri.split(',')[1], 'base64');

interface Case {
  what: string;
  body: Record<string, unknown>;
  endpoint: string;
  /** The whole input the endpoint gets, but for its prompt, seed and image (checked apart). */
  input: Record<string, unknown>;
  seed: boolean;
  /** What the first frame is. */
  image: 'product' | 'avatar' | 'template';
  size: [number, number];
  seconds: number;
  price: number;
}

const CASES: Case[] = [
  {
    what: 'flash-sale-countdown high: Seedance 1.0 Pro animates the product image, 10 s at 1080p',
    body: {
      type: 'video_ad',
      template_slug: 'flash-sale-countdown',
      quality_tier: 'high',
      duration: 10,
      reference_image_urls: [productUrl],
    },
    endpoint: 'fal-ai/bytedance/seedance/v1/pro/image-to-video',
    input: { duration: '10', resolution: '1080p' },
    seed: true,
    image: 'product',
    size: [1080, 1920],
    seconds: 10,
    price: 10 * tierOf('flash-sale-countdown', 'high').credits_per_second,
  },
  {
    what: "flash-sale-countdown low: Seedance 1.0 Lite animates the template's picture, 5 s at 720p",
    body: { type: 'video_ad', template_slug: 'flash-sale-countdown', quality_tier: 'low' },
    endpoint: 'fal-ai/bytedance/seedance/v1/lite/image-to-video',
    input: { duration: '5', resolution: '720p' },
    seed: true,
    image: 'template',
    size: [720, 1280],
    seconds: 5,
    price: tierOf('flash-sale-countdown', 'low').credits,
  },
  {
    what: "get-ready-with-me low (UGC): Seedance 1.0 Lite animates the avatar's portrait, 10 s",
    body: { type: 'ugc_ad', template_slug: 'get-ready-with-me', quality_tier: 'low', avatar_id: 'maya-lifestyle' },
    endpoint: 'fal-ai/bytedance/seedance/v1/lite/image-to-video',
    input: { duration: '10', resolution: '720p' },
    seed: true,
    image: 'avatar',
    size: [720, 1280],
    seconds: 10,
    price: tierOf('get-ready-with-me', 'low').credits,
  },
  {
    what: 'problem-solution-explainer high: Hailuo-02 Pro gets the prompt and the image only (6 s at 1080p is all it makes)',
    body: { type: 'video_ad', template_slug: 'problem-solution-explainer', quality_tier: 'high', reference_image_urls: [productUrl] },
    endpoint: 'fal-ai/minimax/hailuo-02/pro/image-to-video',
    input: {},
    seed: false,
    image: 'product',
    size: [1080, 1920],
    seconds: 6,
    price: tierOf('problem-solution-explainer', 'high').credits,
  },
  {
    what: 'problem-solution-explainer low: Hailuo-02 Standard, 10 s at 768P',
    body: { type: 'video_ad', template_slug: 'problem-solution-explainer', quality_tier: 'low', duration: 10 },
    endpoint: 'fal-ai/minimax/hailuo-02/standard/image-to-video',
    input: { duration: '10', resolution: '768P' },
    seed: false,
    image: 'template',
    size: [720, 1280],
    seconds: 10,
    price: 10 * tierOf('problem-solution-explainer', 'low').credits_per_second,
  },
  {
    what: 'lifestyle-montage low: Wan 2.2 A14B, 81 frames at 16 fps, 720p, a 4:5 frame from its first frame',
    body: { type: 'video_ad', template_slug: 'lifestyle-montage', quality_tier: 'low', reference_image_urls: [productUrl] },
    endpoint: 'fal-ai/wan/v2.2-a14b/image-to-video',
    input: { num_frames: 81, frames_per_second: 16, resolution: '720p' },
    seed: true,
    image: 'product',
    size: [720, 900],
    seconds: 5,
    price: tierOf('lifestyle-montage', 'low').credits,
  },
];

for (const c of CASES) {
  t.test(c.what, async (t) => {
    const before = fal.requests.size;
    const { g, charged, id } = await generate({ prompt: 'Fresh lemonade on a sunny table', ...c.body });
    t.equal(g.status, 'completed', JSON.stringify(g.error));
    t.equal(charged, c.price, 'the tier price');
    t.same(g.engine, { kind: 'hosted', provider: 'fal', model: c.endpoint, preview: false, requires: null });
    const calls = [...fal.requests.values()].slice(before);
    t.equal(calls.length, 1, 'one fal request');
    t.equal(calls[0].endpoint, c.endpoint);
    const { prompt, image_url, seed, ...rest } = calls[0].input;
    t.same(rest, c.input, 'the input in the endpoint format, nothing else');
    t.match(prompt, /Fresh lemonade on a sunny table[\s\S]*Style: [\s\S]*no text/);
    t.equal(Number.isInteger(seed), c.seed, c.seed ? 'a seed' : 'no seed (the endpoint takes none)');
    t.match(image_url, /^data:image\/(png|jpeg|webp);base64,/);
    const first = imageOf(image_url);
    const meta = await sharp(first).metadata();
    if (c.image === 'product') {
      t.same([meta.width, meta.height], [400, 400], 'the product photo');
      const mid = await sharp(
        await sharp(first).extract({ left: 150, top: 150, width: 100, height: 100 }).removeAlpha().toBuffer(),
      ).stats();
      t.same(
        mid.channels.map((ch) => Math.round(ch.mean)),
        [224, 16, 16],
        'the product photo itself',
      );
    } else if (c.image === 'template') {
      t.same([meta.width, meta.height], c.size, "the template's picture at the video's size");
    } else {
      t.not(`${meta.width}x${meta.height}`, `${c.size[0]}x${c.size[1]}`, "the avatar's portrait, not a made picture");
      t.ok((meta.width ?? 0) > 100, "the avatar's portrait");
    }
    const file = path.join(dir, `${id}.mp4`);
    fs.writeFileSync(file, Buffer.from(await (await fetch(g.url)).arrayBuffer()));
    const info = await probe(file);
    t.same([info.width, info.height], c.size, 'the requested size');
    t.ok(Math.abs((info.duration_seconds ?? 0) - c.seconds) < 0.3, `${c.seconds} seconds (${info.duration_seconds})`);
    const [row] = await app.service.ctx.sql`select state from generations where id = ${id}`;
    t.match(row.state.generating, { provider: 'fal', model: c.endpoint, providerJobId: calls[0].id, contentType: 'video/mp4' });
  });
}

t.test('the fake refuses what these endpoints refuse (fal 422 detail)', async (t) => {
  const submit = async (endpoint: string, input: Record<string, unknown>) => {
    const res = await fetch(`${fal.url}/${endpoint}`, {
      method: 'POST',
      headers: { authorization: `Key ${FAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return { status: res.status, body: (await res.json()) as { detail: Array<{ loc: string[]; type: string }> } };
  };
  const image = `data:image/png;base64,${(await png(8, 8, '#ffffff')).toString('base64')}`;
  const cases: [string, string, Record<string, unknown>, string, string][] = [
    ['Seedance without image_url', 'fal-ai/bytedance/seedance/v1/pro/image-to-video', { prompt: 'x' }, 'image_url', 'value_error.missing'],
    [
      'Seedance 15 s',
      'fal-ai/bytedance/seedance/v1/lite/image-to-video',
      { prompt: 'x', image_url: image, duration: '15' },
      'duration',
      'value_error.const',
    ],
    [
      'Seedance a number duration',
      'fal-ai/bytedance/seedance/v1/pro/image-to-video',
      { prompt: 'x', image_url: image, duration: 5 },
      'duration',
      'value_error.const',
    ],
    [
      'Hailuo Pro given a duration',
      'fal-ai/minimax/hailuo-02/pro/image-to-video',
      { prompt: 'x', image_url: image, duration: '6' },
      'duration',
      'value_error.extra',
    ],
    [
      'Hailuo Standard 720p',
      'fal-ai/minimax/hailuo-02/standard/image-to-video',
      { prompt: 'x', image_url: image, resolution: '720p' },
      'resolution',
      'value_error.const',
    ],
    [
      'Wan 1080p',
      'fal-ai/wan/v2.2-a14b/image-to-video',
      { prompt: 'x', image_url: image, resolution: '1080p' },
      'resolution',
      'value_error.const',
    ],
    [
      'Wan 200 frames',
      'fal-ai/wan/v2.2-a14b/image-to-video',
      { prompt: 'x', image_url: image, num_frames: 200 },
      'num_frames',
      'value_error.number.not_in_range',
    ],
  ];
  for (const [what, endpoint, input, field, type] of cases) {
    const res = await submit(endpoint, input);
    t.equal(res.status, 422, what);
    t.match(res.body.detail, [{ loc: ['body', field], type }], `${what}: names ${field}`);
  }
});

/** The engine and price GET /models shows for each tier these models make. */
async function tiersShown(a: typeof app) {
  const ws = await a.workspace({ credits: 0 });
  const models = (await a.request('GET', '/api/v1/models', { key: ws.key })).body;
  const shown: Record<string, { engine: unknown; credits: number }> = {};
  for (const v of [...models.video_ads, ...models.ugc_ads])
    for (const q of v.quality_tiers) shown[`${v.slug}/${q.id}`] = { engine: q.engine, credits: q.credits };
  return shown;
}

const TIERS: [string, string][] = [
  ['flash-sale-countdown/high', 'fal-ai/bytedance/seedance/v1/pro/image-to-video'],
  ['flash-sale-countdown/low', 'fal-ai/bytedance/seedance/v1/lite/image-to-video'],
  ['get-ready-with-me/low', 'fal-ai/bytedance/seedance/v1/lite/image-to-video'],
  ['problem-solution-explainer/high', 'fal-ai/minimax/hailuo-02/pro/image-to-video'],
  ['problem-solution-explainer/low', 'fal-ai/minimax/hailuo-02/standard/image-to-video'],
  ['lifestyle-montage/low', 'fal-ai/wan/v2.2-a14b/image-to-video'],
];

t.test('GET /models: these tiers are hosted on fal with FAL_KEY, at the catalog price', async (t) => {
  const shown = await tiersShown(app);
  for (const [where, model] of TIERS) {
    const [slug, id] = where.split('/');
    t.same(
      shown[where],
      { engine: { kind: 'hosted', provider: 'fal', model, preview: false, requires: null }, credits: tierOf(slug, id).credits },
      where,
    );
  }
});

t.test('GET /models: without FAL_KEY they are local previews at the preview price, naming FAL_KEY', async (t) => {
  const bare = await startTestApp(t);
  const shown = await tiersShown(bare);
  const perSecond = localPreviewPricing().video_per_second;
  for (const [where] of TIERS) {
    const [slug, id] = where.split('/');
    t.same(
      shown[where],
      {
        engine: { kind: 'local', provider: 'local', model: 'local-video-renderer', preview: true, requires: 'FAL_KEY' },
        credits: perSecond * tierOf(slug, id).default_duration,
      },
      where,
    );
  }
});

t.test('Hailuo-02 Pro always makes 6 s: an AI model request may state 6 and no other duration', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const body = { type: 'ai_model', model_slug: 'hailuo', variant_id: 'pro', prompt: 'A lemon', reference_image_urls: [productUrl] };
  const six = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { ...body, duration: 6 } });
  t.equal(six.status, 200, six.text);
  const ten = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { ...body, duration: 10 } });
  t.equal(ten.status, 400);
  t.same(
    ten.body.error.context.errors.map((e: { field: string }) => e.field),
    ['body.duration'],
    'one problem, naming duration',
  );
  t.match(ten.body.error.context.errors[0].message, /must be one of 6/);
});
