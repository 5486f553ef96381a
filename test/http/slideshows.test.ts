// POST /slideshows and GET /slideshows/{id} over HTTP and MCP: validation before any charge,
// the per-slide price, idempotent replays, tenant isolation, and real slideshows made by the
// workers — slide PNGs read back (count, size per aspect ratio, brand colours, product, avatar and
// logo pixels, reference palette and layout), the editor project's items (text items only with
// overlays), the language of the text, the carousel MP4 (size, duration), states and progress,
// a refund on a terminal failure, a job delivered twice doing nothing twice, and the engines that
// made it (the local ones: no provider is configured).
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { brandKits, customAvatars, media, referenceInspirations, slideshows, webhookEndpoints } from '../../src/db/schema/index.ts';
import { slideshowJob } from '../../src/pipelines/slideshow/job.ts';
import { SLIDE_SECONDS } from '../../src/pipelines/slideshow/stages.ts';
import { extractFrame, probe } from '../../src/media/ffmpeg.ts';
import { slideGeometry } from '../../src/engines/local/slide.ts';
import { ledgerSum } from '../../src/services/billing/credits.ts';
import { slideshowCredits } from '../../src/services/catalog/catalog-data.ts';
import { connect } from '../mcp/helpers.ts';
import { phashDistance } from '../helpers/phash.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { maxVolume, SILENT_DB } from '../helpers/sound.ts';

const PER_SLIDE = 10;
/** A slideshow's engines with no provider configured. */
const LOCAL_ENGINES = {
  write: { kind: 'local', provider: 'local', model: 'local-writer' },
  slide: { kind: 'local', provider: 'local', model: 'local-slide-renderer' },
  render: { kind: 'local', provider: 'local', model: 'ffmpeg' },
};

// Fixture images on loopback (the guarded client is told to allow 127.0.0.1 in tests only).
const solid = (background: string, width = 240, height = 240) =>
  sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
const images: Record<string, Buffer> = {
  '/green.png': await solid('#00ff00', 400, 300),
  '/magenta.png': await solid('#ff00ff'),
  '/yellow-logo.png': await solid('#ffff00', 300, 120),
};
const fixtures = http.createServer((req, res) => {
  const img = images[req.url ?? ''];
  if (img) {
    res.writeHead(200, { 'content-type': 'image/png' });
    return res.end(img);
  }
  if (req.url === '/garbage.png') {
    // Answers with bytes that are no image at all (the request was valid when it was queued).
    res.writeHead(200, { 'content-type': 'image/png' });
    return res.end('this is not a picture');
  }
  res.writeHead(404).end('missing');
});
await new Promise<void>((r) => fixtures.listen(0, '127.0.0.1', r));
t.teardown(() => fixtures.close());
const base = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' });
const renderApp = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', GENERATION_RETRY_LIMIT: '0' }, { workers: true });
const db = app.service.ctx.db;

async function balance(a: TestApp, orgId: string): Promise<number> {
  const [row] = await a.service.ctx.sql`select credits from organizations where id = ${orgId}`;
  return row.credits;
}
async function counts(a: TestApp, orgId: string) {
  const sql = a.service.ctx.sql;
  const [s] = await sql`select count(*)::int as n from slideshows where org_id = ${orgId}`;
  const [v] = await sql`select count(*)::int as n from videos where org_id = ${orgId}`;
  const [j] =
    await sql`select count(*)::int as n from pgboss.job where name = 'slideshow' and data->>'slideshowId' in (select id::text from slideshows where org_id = ${orgId})`;
  const [l] = await sql`select count(*)::int as n from credit_ledger where org_id = ${orgId}`;
  return { slideshows: s.n as number, videos: v.n as number, jobs: j.n as number, ledger: l.n as number };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fieldsOf = (body: any): string[] => [
  body.error?.context?.field,
  ...(body.error?.context?.errors ?? []).map((e: { field: string }) => e.field),
];

async function png(url: string) {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    bytes,
    width: info.width,
    height: info.height,
    at(x: number, y: number): [number, number, number] {
      const i = (Math.round(y) * info.width + Math.round(x)) * info.channels;
      return [data[i], data[i + 1], data[i + 2]];
    },
  };
}
const near = (got: [number, number, number], want: string, tolerance = 12) => {
  const w = [1, 3, 5].map((i) => parseInt(want.slice(i, i + 2), 16));
  return got.every((v, i) => Math.abs(v - w[i]) <= tolerance);
};

/** Polls until the slideshow is terminal; returns every status and stage seen, and the last body. */
async function finish(a: TestApp, key: string, id: string, timeoutMs = 180_000) {
  const seen: string[] = [];
  const progress: number[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await a.request('GET', `/api/v1/slideshows/${id}`, { key });
    if (res.status !== 200) throw new Error(`GET slideshow: ${res.status} ${res.text}`);
    const label = res.body.stage ? `${res.body.status}:${res.body.stage}` : res.body.status;
    if (seen[seen.length - 1] !== label) seen.push(label);
    progress.push(res.body.progress);
    if (res.body.status === 'completed' || res.body.status === 'error') return { body: res.body, seen, progress };
    if (Date.now() > deadline) throw new Error(`slideshow ${id} did not finish; last ${JSON.stringify(res.body)}`);
    await sleep(150);
  }
}

/** Consecutive slides of the MP4 (a frame in the middle of each) are visibly different: pHash distance ≥ 10 of 64. */
async function distinctSlides(t: Test, file: string, count: number, what: string) {
  const frames = [];
  for (let i = 0; i < count; i++) frames.push(await extractFrame({ path: file, type: 'video/mp4' }, (i + 0.6) * SLIDE_SECONDS));
  for (let i = 1; i < count; i++) {
    const d = await phashDistance(frames[i - 1], frames[i]);
    t.ok(d >= 10, `${what}: slides ${i} and ${i + 1} are ${d} bits apart`);
  }
}

t.test('bad input is 400/404 naming the field, and nothing is charged or written', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const other = await app.workspace({ credits: 10 });
  const [theirKit] = await db.insert(brandKits).values({ orgId: other.orgId, brandId: 1, kitName: 'Theirs', kitData: {} }).returning();
  const [theirRef] = await db
    .insert(referenceInspirations)
    .values({
      orgId: other.orgId,
      templateSlug: 'photo-dump-carousel',
      templateCategory: 'slideshow-carousel',
      mediaKind: 'image',
      status: 'ready',
    })
    .returning();
  const [pendingRef] = await db
    .insert(referenceInspirations)
    .values({
      orgId: ws.orgId,
      templateSlug: 'photo-dump-carousel',
      templateCategory: 'slideshow-carousel',
      mediaKind: 'image',
      status: 'processing',
    })
    .returning();
  const [theirAvatar] = await db
    .insert(customAvatars)
    .values({ orgId: other.orgId, name: 'Not yours', imageUrl: `${base}/magenta.png`, videoUrl: `${base}/x.mp4` })
    .returning();
  const before = await counts(app, ws.orgId);
  const p = { prompt: 'Three ways to sleep better' };
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['slide_count 7', { ...p, slide_count: 7 }, 400, 'body.slide_count'],
    ['aspect 16:9', { ...p, aspect_ratio: '16:9' }, 400, 'body.aspect_ratio'],
    [
      '11 product URLs',
      { ...p, product_image_urls: Array.from({ length: 11 }, (_, i) => `https://cdn.example.com/${i}.png`) },
      400,
      'body.product_image_urls',
    ],
    [
      'private product URL',
      { ...p, product_image_urls: ['https://cdn.example.com/a.png', 'http://10.0.0.5/b.png'] },
      400,
      'body.product_image_urls[1]',
    ],
    ['metadata address as avatar', { ...p, avatar_image_url: 'http://169.254.169.254/latest/meta-data' }, 400, 'body.avatar_image_url'],
    [
      'avatar_id and avatar_image_url',
      { ...p, avatar_id: 'maya-lifestyle', avatar_image_url: 'https://cdn.example.com/face.png' },
      400,
      'body.avatar_image_url',
    ],
    ['no prompt', { title: 'x' }, 400, 'body.prompt'],
    ['unknown field', { ...p, colour: 'red' }, 400, 'body.colour'],
    ['a language the local writer does not write', { ...p, language: 'Klingon' }, 400, 'body.language'],
    ['another workspace’s brand kit', { ...p, brand_kit_id: theirKit.id }, 404, 'body.brand_kit_id'],
    ['unknown avatar', { ...p, avatar_id: 'nobody-at-all' }, 404, 'body.avatar_id'],
    ['another workspace’s custom avatar', { ...p, avatar_id: theirAvatar.id }, 404, 'body.avatar_id'],
    ['another workspace’s reference', { ...p, custom_reference_inspiration_id: theirRef.id }, 404, 'body.custom_reference_inspiration_id'],
    ['reference not ready', { ...p, custom_reference_inspiration_id: pendingRef.id }, 400, 'body.custom_reference_inspiration_id'],
  ];
  for (const [name, body, status, field] of cases) {
    const res = await app.request('POST', '/api/v1/slideshows', { key: ws.key, body });
    t.equal(res.status, status, name);
    t.ok(fieldsOf(res.body).includes(field), `${name}: names ${field} (got ${JSON.stringify(res.body.error)})`);
    if (status === 404)
      t.match(res.body.error.context, { resource: /^(brand_kit|avatar|reference_inspiration)$/ }, `${name}: names the resource`);
  }
  t.same(await counts(app, ws.orgId), before, 'no slideshow, video, job or ledger row was written');
  t.equal(await balance(app, ws.orgId), 1000, 'no credits were taken');
});

t.test('the price rule is the catalog’s, and the contract says it', async (t) => {
  t.equal(slideshowCredits(1), PER_SLIDE, 'spec/catalog.yaml slideshow_pricing.credits_per_slide');
  const doc = (await app.request('GET', '/api/v1/openapi.json')).body;
  t.match(doc.paths['/slideshows'].post.description, new RegExp(`${PER_SLIDE} credits per slide`));
  const skill = (await app.request('GET', '/api/v1/skill.md')).text;
  const page = (await app.request('GET', '/api/v1/skill/slideshows.md')).text;
  t.match(page, new RegExp(`Costs ${PER_SLIDE} credits per slide`), 'the slideshows page of skill.md shows the rule with the operation');
  t.match(skill, new RegExp(`- slideshow, per slide: ${PER_SLIDE} `), 'and skill.md in its prices');
});

t.test('402 without the credits, with the numbers; nothing written', async (t) => {
  const ws = await app.workspace({ credits: 25 });
  const before = await counts(app, ws.orgId);
  const res = await app.request('POST', '/api/v1/slideshows', { key: ws.key, body: { prompt: 'Pack light', slide_count: 3 } });
  t.equal(res.status, 402);
  t.match(res.body.error, { code: 'insufficient_credits', context: { credits_required: 3 * PER_SLIDE, credits_available: 25 } });
  t.same(await counts(app, ws.orgId), { ...before, slideshows: 0, videos: 0, jobs: 0 }, 'no slideshow, project, job or ledger row');
  t.equal(await balance(app, ws.orgId), 25);
  const unpaid = await app.workspace({ credits: 1000, plan: 'none' });
  t.equal(
    (await app.request('POST', '/api/v1/slideshows', { key: unpaid.key, body: { prompt: 'Pack light' } })).status,
    402,
    'no paid plan: 402',
  );
});

t.test('queued: priced per slide, the editor project exists at once, replays charge once, other workspaces get 404', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    headers: { 'idempotency-key': 'slides-1' },
    body: { prompt: 'Five habits of calm mornings. Start with water, then light.', slide_count: 5 },
  });
  t.equal(res.status, 200);
  t.match(res.body, {
    object: 'slideshow_generation',
    status: 'queued',
    slide_count: 5,
    credits_deducted: 5 * PER_SLIDE,
    remaining_credits: 1000 - 5 * PER_SLIDE,
  });
  t.equal(res.body.title, 'Five habits of calm mornings', 'the title defaults to the prompt’s first sentence');
  t.ok(Number.isSafeInteger(res.body.video_id), 'video_id is an integer');
  t.notOk('idempotent_replay' in res.body);

  const project = await app.request('GET', `/api/v1/editor/videos/${res.body.video_id}`, { key: ws.key });
  t.equal(project.status, 200, 'the editor project exists at once');
  t.match(project.body, { status: 'ready', aspect_ratio: '4:5', width: 1080, height: 1350, title: 'Five habits of calm mornings' });
  t.match((await app.request('GET', `/api/v1/videos/${res.body.video_id}`, { key: ws.key })).body, {
    object: 'video',
    id: res.body.video_id,
    status: 'ready',
  });

  const got = await app.request('GET', `/api/v1/slideshows/${res.body.slideshow_id}`, { key: ws.key });
  t.equal(got.status, 200);
  t.match(got.body, {
    object: 'slideshow',
    id: res.body.slideshow_id,
    video_id: res.body.video_id,
    status: 'queued',
    progress: 0,
    stage: null,
    slide_count: 5,
    aspect_ratio: '4:5',
    slides: [],
    video_url: null,
    error: null,
    credits_deducted: 50,
  });

  // The same key: the stored response, charged once; the body key works the same way.
  const again = await app.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    headers: { 'idempotency-key': 'slides-1' },
    body: { prompt: 'Five habits of calm mornings. Start with water, then light.', slide_count: 5 },
  });
  t.equal(again.status, 200);
  t.same(again.body, { ...res.body, idempotent_replay: true });
  const viaBody = { prompt: 'Pack light', slide_count: 3, idempotency_key: 'body-key-1' };
  const first = await app.request('POST', '/api/v1/slideshows', { key: ws.key, body: viaBody });
  const second = await app.request('POST', '/api/v1/slideshows', { key: ws.key, body: viaBody });
  t.equal(second.body.slideshow_id, first.body.slideshow_id);
  t.equal(second.body.idempotent_replay, true);
  const conflict = await app.request('POST', '/api/v1/slideshows', { key: ws.key, body: { ...viaBody, slide_count: 4 } });
  t.equal(conflict.status, 409, 'the key with another body: 409');
  t.equal(await balance(app, ws.orgId), 1000 - 50 - 30, 'each slideshow charged once');
  t.match(await counts(app, ws.orgId), { slideshows: 2, videos: 2, jobs: 2 });
  t.equal(await ledgerSum(db, ws.orgId), await balance(app, ws.orgId), 'balance equals the ledger sum');

  // Another workspace sees nothing.
  const other = await app.workspace({ credits: 0 });
  const foreign = await app.request('GET', `/api/v1/slideshows/${res.body.slideshow_id}`, { key: other.key });
  t.equal(foreign.status, 404);
  t.match(foreign.body.error, { code: 'not_found', context: { resource: 'slideshow', field: 'path.id' } });
  t.equal((await app.request('GET', '/api/v1/slideshows/00000000-0000-4000-8000-000000000000', { key: ws.key })).status, 404);
  t.equal((await app.request('GET', '/api/v1/slideshows/not-a-uuid', { key: ws.key })).status, 400);
});

// ------------------------------------------------------------------------------------ rendering

const rdb = renderApp.service.ctx.db;
const rws = await renderApp.workspace({ credits: 10_000 });
const [kit] = await rdb
  .insert(brandKits)
  .values({
    orgId: rws.orgId,
    brandId: 1,
    kitName: 'Acme',
    kitData: { colors: ['#123456', '#FFCC00'], logo_url: `${base}/yellow-logo.png`, fonts: ['Merriweather Serif'] },
  })
  .returning();

// A webhook endpoint subscribed to slideshow events (on loopback, where nothing answers: the
// events are recorded in the terminal transaction whatever becomes of their delivery).
const endpoint = async (orgId: string, a: TestApp = renderApp) =>
  a.service.ctx.db.insert(webhookEndpoints).values({
    orgId,
    url: 'https://127.0.0.1:9/hooks',
    eventTypes: ['slideshow.completed', 'slideshow.failed'],
    secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=',
  });
await endpoint(rws.orgId);
const eventsOf = async (id: string, a: TestApp = renderApp) =>
  (await a.service.ctx.sql`select type, body from webhook_events where resource_id = ${id} order by created_at`).map((e) => ({
    type: e.type as string,
    body: JSON.parse(e.body),
  }));

/** A ready reference whose stored image is one solid colour. */
async function reference(templateSlug: string, colour: string, a: TestApp = renderApp, orgId = rws.orgId) {
  const stored = await a.service.ctx.storage.put(`refs/${orgId}/${templateSlug}.png`, await solid(colour), 'image/png');
  const [m] = await a.service.ctx.db
    .insert(media)
    .values({
      orgId,
      kind: 'image',
      source: 'url',
      contentType: 'image/png',
      sizeBytes: stored.bytes,
      storageKey: stored.key,
      width: 240,
      height: 240,
    })
    .returning();
  const [ref] = await a.service.ctx.db
    .insert(referenceInspirations)
    .values({ orgId, templateSlug, templateCategory: 'slideshow-carousel', mediaKind: 'image', status: 'ready', mediaIds: [m.id] })
    .returning();
  return ref.id;
}

const PROMPT = 'Three reasons to drink more water at work';
const CONTEXT = 'Citrus sparkling water, zero sugar';
/** The 4:5 carousel's copy (English), against which the Spanish one is compared. */
let englishCopy: string[] | undefined;
const queue = async (body: Record<string, unknown>) => {
  const res = await renderApp.request('POST', '/api/v1/slideshows', { key: rws.key, body });
  if (res.status !== 200) throw new Error(`POST /slideshows: ${res.status} ${res.text}`);
  return res.body;
};

t.test('a 4:5 carousel with a brand kit, product, avatar image and overlays', async (t) => {
  const q = await queue({
    prompt: PROMPT,
    title: 'Water at work',
    slide_count: 3,
    aspect_ratio: '4:5',
    brand_kit_id: kit.id,
    product_image_urls: [`${base}/green.png`],
    avatar_image_url: `${base}/magenta.png`,
    generate_text_overlays: true,
    language: 'English',
    product_context: CONTEXT,
  });
  const { body, seen, progress } = await finish(renderApp, rws.key, q.slideshow_id);
  t.equal(body.status, 'completed', JSON.stringify(body.error));
  t.equal(seen[seen.length - 1], 'completed');
  t.ok(
    seen.some((s) => s.startsWith('generating:')),
    `generating stages were visible (${seen.join(' → ')})`,
  );
  t.same(
    progress,
    [...progress].sort((a, b) => a - b),
    'progress never goes back',
  );
  t.match(body, { progress: 100, stage: null, slide_count: 3, aspect_ratio: '4:5', error: null });
  t.same(body.engines, LOCAL_ENGINES, 'no provider configured: the local writer, slide renderer and ffmpeg made it');
  t.equal(body.slides.length, 3);
  t.same(
    body.slides.map((s: { index: number }) => s.index),
    [0, 1, 2],
  );

  const g = slideGeometry(1080, 1350);
  for (const slide of body.slides) {
    const img = await png(slide.image_url);
    t.same([img.width, img.height], [1080, 1350], `slide ${slide.index} is 1080×1350`);
    t.ok(near(img.at(5, 5), '#123456'), `slide ${slide.index}: the brand background (${img.at(5, 5)})`);
    t.ok(
      near(img.at(g.productSlot.x + g.productSlot.w * 0.6, g.productSlot.y + g.productSlot.h * 0.4), '#00ff00'),
      `slide ${slide.index}: the product image`,
    );
    t.ok(near(img.at(g.avatar.cx, g.avatar.cy), '#ff00ff'), `slide ${slide.index}: the avatar image`);
    t.ok(near(img.at(g.logo.x + g.logo.w - 10, g.logo.y + 10), '#ffff00'), `slide ${slide.index}: the brand logo`);
    t.ok(typeof slide.text === 'string' && slide.text.length > 0, 'each slide has its text');
  }
  // The current slide's progress dot is in the accent colour.
  const first = await png(body.slides[0].image_url);
  const dotsX = 1080 / 2 - g.dots.gap; // dot 0 of 3
  t.ok(near(first.at(dotsX, g.dots.y), '#ffcc00', 30), `the accent colour of the kit (${first.at(dotsX, g.dots.y)})`);

  // The editor project: three image items on a video track, three editable text items.
  const project = (await renderApp.request('GET', `/api/v1/editor/videos/${body.video_id}`, { key: rws.key })).body;
  const imagesItems = project.items.filter((i: { type: string }) => i.type === 'image');
  const textItems = project.items.filter((i: { type: string }) => i.type === 'text');
  t.equal(imagesItems.length, 3);
  t.equal(textItems.length, 6, 'a headline and a body per slide');
  const trackType = new Map(project.tracks.map((tr: { track_id: string; type: string }) => [tr.track_id, tr.type]));
  t.ok(
    imagesItems.every((i: { track_id: string }) => trackType.get(i.track_id) === 'video'),
    'images on a video track',
  );
  // Each slide's headline and body items, in the lines they are set in (src/pipelines/slideshow/text-layout.ts).
  const words = (x: string) => x.split(/\s+/).join(' ');
  const perSlide = (items: { text: string; from: number }[]) =>
    [0, 1, 2].map((i) =>
      words(
        items
          .filter((x) => x.from === i * SLIDE_SECONDS)
          .map((x) => x.text)
          .join(' '),
      ),
    );
  t.same(
    perSlide(textItems.map((i: { text: string; from_seconds: number }) => ({ text: i.text, from: i.from_seconds }))),
    body.slides.map((s: { text: string }) => words(s.text)),
    'the text items hold the slides’ text',
  );
  t.ok(
    body.slides.some((s: { text: string }) => /zero sugar/i.test(s.text)),
    'the product context shapes the copy',
  );
  t.ok(
    textItems.every((i: { style: { font_family: string } }) => i.style.font_family === 'Merriweather Serif'),
    'the text items use the kit’s font',
  );
  t.equal(q.title, 'Water at work');
  t.equal(project.title, 'Water at work', 'the title names the project');
  t.match(body.slides[0].text, /Water at work/, 'and opens the hook slide');
  englishCopy = body.slides.map((s: { text: string }) => s.text);
  t.same(
    imagesItems.map((i: { from_seconds: number }) => i.from_seconds),
    [0, SLIDE_SECONDS, 2 * SLIDE_SECONDS],
  );
  t.equal(project.duration_seconds, 3 * SLIDE_SECONDS);

  // The carousel MP4.
  t.ok(body.video_url, 'video_url when completed');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slideshow-test-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'carousel.mp4');
  await fs.writeFile(file, Buffer.from(await (await fetch(body.video_url)).arrayBuffer()));
  const probed = await probe({ path: file, type: 'video/mp4' });
  t.match(probed, { width: 1080, height: 1350, has_audio: true });
  t.ok((maxVolume(file) ?? -200) > SILENT_DB, `the carousel has music, not a silent track (peak ${maxVolume(file)} dB)`);
  const music = project.items.filter((i: { type: string }) => i.type === 'audio');
  t.match(music, [{ audio_role: 'music', from_seconds: 0, duration_seconds: 3 * SLIDE_SECONDS }], 'the music is an item of the project');
  t.ok(Math.abs(probed.duration_seconds! - 3 * SLIDE_SECONDS) < 0.5, `duration ${probed.duration_seconds} ≈ ${3 * SLIDE_SECONDS}`);
  await distinctSlides(t, file, 3, 'with overlays');
  t.ok(
    imagesItems.slice(1).every((i: { transition: { type: string } | null }) => i.transition?.type === 'slide'),
    'each slide slides in over the one before',
  );

  // The completion event, written with the terminal state: the slideshow as GET returns it.
  const events = await eventsOf(q.slideshow_id);
  t.same(
    events.map((e) => e.type),
    ['slideshow.completed'],
  );
  t.match(events[0].body.data, { object: 'slideshow', id: q.slideshow_id, status: 'completed', video_id: body.video_id, progress: 100 });
  t.equal(events[0].body.data.slides.length, 3);
  t.same(events[0].body.data.engines, LOCAL_ENGINES, 'the event names the engines too');

  // Charged once, for three slides.
  const [row] = await rdb.select().from(slideshows).where(eq(slideshows.id, q.slideshow_id));
  t.equal(row.credits, 3 * PER_SLIDE);
  t.equal(q.credits_deducted, 3 * PER_SLIDE);
  // What the carousel shows, for the media quality checker: each slide's text with its box and time, the slide starts.
  const manifest = (row.state as any).video.manifest;
  t.match(manifest, { width: 1080, height: 1350, sceneStarts: [0, SLIDE_SECONDS, 2 * SLIDE_SECONDS] });
  t.same(
    perSlide(manifest.texts.map((x: { text: string; fromSeconds: number }) => ({ text: x.text, from: x.fromSeconds }))),
    body.slides.map((s: { text: string }) => words(s.text)),
    'every slide text, when it shows',
  );
  t.ok(
    manifest.texts.every((x: any) => x.box.x >= 1080 * 0.04 && x.box.x + x.box.w <= 1080 * 0.96 && x.box.y >= 1350 * 0.04),
    'inside the margins',
  );
});

// Each slideshow costs its slides and an MP4 encode, so each one below covers several things: the
// 1:1 one a full-bleed layout, a catalog avatar, another language and a delivery cut off while
// rendering; the MCP one 9:16, a custom avatar and a reference palette without overlays.
t.test('1:1 in Spanish with a photo-dump reference: full-bleed product, a catalog avatar, other words', async (t) => {
  // Made on the service without workers, its job's attempts run here: the first is cut off as
  // the video stage starts (as if its worker had died), the second resumes, a third is a repeated
  // delivery of the finished job.
  const ws = await app.workspace({ credits: 1000 });
  await endpoint(ws.orgId, app);
  const refId = await reference('photo-dump-carousel', '#aa2222', app, ws.orgId);
  // The 4:5 carousel's prompt, title, product context and count: only the language differs.
  const res = await app.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: {
      prompt: PROMPT,
      title: 'Water at work',
      product_context: CONTEXT,
      slide_count: 3,
      aspect_ratio: '1:1',
      language: 'Spanish',
      generate_text_overlays: true,
      product_image_urls: [`${base}/green.png`],
      avatar_id: 'maya-lifestyle',
      custom_reference_inspiration_id: refId,
    },
  });
  t.equal(res.status, 200, res.text);
  const q = res.body;
  t.equal(q.credits_deducted, 3 * PER_SLIDE);

  const ctx = app.service.ctx;
  const sql = ctx.sql;
  const countsOf = async () => {
    const [sl] = await sql`select count(*)::int as n from slideshow_slides where slideshow_id = ${q.slideshow_id}`;
    const [m] = await sql`select count(*)::int as n from media where org_id = ${ws.orgId} and kind = 'image' and source = 'generation'`;
    const [p] = await sql`select version, timeline from editor_videos where video_id = ${q.video_id}`;
    return { slides: sl.n, media: m.n, version: p.version, items: p.timeline.items.length };
  };
  const attempt = (n: number, signal: AbortSignal, progress: (stage: string) => void = () => {}) =>
    slideshowJob.declaration.run(
      ctx,
      { id: `attempt-${n}`, data: { slideshowId: q.slideshow_id }, attempt: n, lastAttempt: false },
      { signal, progress, annotate() {} },
    );
  const cut = new AbortController();
  await t.rejects(
    attempt(1, cut.signal, (stage) => stage === 'video' && cut.abort(new Error('worker killed'))),
    'the first attempt is cut off',
  );
  const stored = await countsOf();
  t.match(stored, { slides: 3, media: 3, items: 10 }, 'its slides and project (three images, six texts, the music) were stored');
  const [mid] = await sql`select status, video_media_id from slideshows where id = ${q.slideshow_id}`;
  t.match(mid, { status: 'generating', video_media_id: null });
  await attempt(2, new AbortController().signal);
  t.same(await countsOf(), stored, 'the retry added no slide, media row or timeline item');
  const { body } = await finish(app, ws.key, q.slideshow_id);
  t.equal(body.status, 'completed', JSON.stringify(body.error));
  t.ok(body.video_url, 'with its video');
  t.same(body.engines, LOCAL_ENGINES, 'the engines of the stages the first attempt finished are kept with the retry’s');
  await attempt(3, new AbortController().signal);
  t.same(await countsOf(), stored, 'a completed slideshow: a repeated delivery does nothing');
  t.same(
    (await eventsOf(q.slideshow_id, app)).map((e) => e.type),
    ['slideshow.completed'],
    'one completion event',
  );

  t.equal(body.slides.length, 3, 'three slides');
  const g = slideGeometry(1080, 1080);
  for (const slide of body.slides) {
    const img = await png(slide.image_url);
    t.same([img.width, img.height], [1080, 1080], `slide ${slide.index} is 1080×1080`);
    t.ok(near(img.at(540, 1000), '#00ff00'), 'the product fills the slide (full-bleed layout)');
    // A card layout has its background in the corners (the 4:5 carousel's brand colour at 5,5).
    t.ok(near(img.at(1075, 1075), '#00ff00'), `to its corner (${img.at(1075, 1075)})`);
    t.notOk(near(img.at(g.avatar.cx, g.avatar.cy), '#00ff00', 40), 'the catalog avatar covers its place');
  }
  const es = body.slides.map((s: { text: string }) => s.text);
  t.ok(
    es.every((x: string) => typeof x === 'string' && x.length > 0),
    'each slide has its text',
  );
  t.ok(englishCopy, 'the English carousel was made');
  t.notSame(es, englishCopy, `the language changes the text (${JSON.stringify(es)} vs ${JSON.stringify(englishCopy)})`);
});

t.test('a product URL that stops serving an image: error, refunded once', async (t) => {
  const ws = await renderApp.workspace({ credits: 100 });
  await endpoint(ws.orgId);
  const res = await renderApp.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: { prompt: PROMPT, slide_count: 3, product_image_urls: [`${base}/garbage.png`] },
  });
  t.equal(res.status, 200);
  t.equal(res.body.remaining_credits, 100 - 3 * PER_SLIDE, 'charged when queued');
  const { body } = await finish(renderApp, ws.key, res.body.slideshow_id);
  t.equal(body.status, 'error');
  t.match(body.error, {
    code: 'input_unavailable',
    retryable: false,
    context: { field: 'product_image_urls[0]', credits_refunded: 3 * PER_SLIDE },
  });
  t.equal(body.video_url, null);
  t.equal(await balance(renderApp, ws.orgId), 100, 'refunded');
  t.equal(await ledgerSum(renderApp.service.ctx.db, ws.orgId), 100, 'one charge and one refund in the ledger');
  const [{ n }] = await renderApp.service.ctx
    .sql`select count(*)::int as n from credit_ledger where org_id = ${ws.orgId} and reason = 'slideshow_refund'`;
  t.equal(n, 1, 'refunded exactly once');
  const events = await eventsOf(res.body.slideshow_id);
  t.same(
    events.map((e) => e.type),
    ['slideshow.failed'],
    'the failure event',
  );
  t.match(events[0].body.data, { object: 'slideshow', status: 'error', error: { code: 'input_unavailable' } });
});

t.test(
  'MCP: create_slideshow and get_slideshow through the one executor; 9:16 without overlays: a custom avatar, the reference palette, no text anywhere',
  async (t) => {
    const client = await connect(renderApp, rws.key);
    t.teardown(() => client.close());
    const tools = (await client.listTools()).tools;
    const create = tools.find((x) => x.name === 'create_slideshow')!;
    t.match(create.description, /poll get_slideshow/);
    t.match(tools.find((x) => x.name === 'get_slideshow')!.description, /until status is completed, error or canceled/);
    const before = await balance(renderApp, rws.orgId);
    // A custom avatar of this workspace: its image is fetched through the guarded client.
    const [avatar] = await rdb
      .insert(customAvatars)
      .values({ orgId: rws.orgId, name: 'Sam', imageUrl: `${base}/magenta.png`, videoUrl: `${base}/sam.mp4` })
      .returning();
    const refId = await reference('product-benefits-carousel', '#1e40c8');
    const args = {
      prompt: 'Two tips for better focus',
      slide_count: 3,
      aspect_ratio: '9:16',
      avatar_id: avatar.id,
      custom_reference_inspiration_id: refId,
      idempotency_key: 'mcp-1',
    };
    const queued = await client.callTool({ name: 'create_slideshow', arguments: args });
    t.notOk(queued.isError, JSON.stringify(queued.structuredContent));
    const sc = queued.structuredContent as Record<string, any>;
    t.match(sc, { object: 'slideshow_generation', status: 'queued', slide_count: 3, credits_deducted: 3 * PER_SLIDE });
    const replay = await client.callTool({ name: 'create_slideshow', arguments: args });
    t.match(replay.structuredContent, { slideshow_id: sc.slideshow_id, idempotent_replay: true });
    t.equal(await balance(renderApp, rws.orgId), before - 3 * PER_SLIDE, 'charged once');
    let got: Record<string, any> = {};
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const r = await client.callTool({ name: 'get_slideshow', arguments: { id: sc.slideshow_id } });
      got = r.structuredContent as Record<string, any>;
      if (r.isError) break;
      if (got.status === 'completed' || got.status === 'error') break;
      await sleep(200);
    }
    t.match(got, { object: 'slideshow', id: sc.slideshow_id, video_id: sc.video_id, status: 'completed', progress: 100 });
    t.same(got.engines, LOCAL_ENGINES, 'get_slideshow names the local engines that made it');
    t.equal(got.slides.length, 3);
    const g = slideGeometry(1080, 1920);
    for (const slide of got.slides) {
      const img = await png(slide.image_url);
      t.same([img.width, img.height], [1080, 1920], `slide ${slide.index} is 1080×1920`);
      t.equal(slide.text, null, 'no text without overlays');
      t.ok(near(img.at(5, 5), '#1e40c8', 16), `the reference's colour as the background (${img.at(5, 5)})`);
      t.ok(near(img.at(g.avatar.cx, g.avatar.cy), '#ff00ff'), 'the custom avatar’s image');
    }
    const project = (await renderApp.request('GET', `/api/v1/editor/videos/${got.video_id}`, { key: rws.key })).body;
    t.equal(project.items.filter((i: { type: string }) => i.type === 'image').length, 3);
    t.equal(project.items.filter((i: { type: string }) => i.type === 'text').length, 0, 'no text items without overlays');
    t.match(project, { width: 1080, height: 1920, duration_seconds: 3 * SLIDE_SECONDS });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slideshow-test-'));
    t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'carousel.mp4');
    await fs.writeFile(file, Buffer.from(await (await fetch(got.video_url)).arrayBuffer()));
    await distinctSlides(t, file, 3, 'without overlays');
    const other = await renderApp.workspace({ credits: 0 });
    const otherClient = await connect(renderApp, other.key);
    t.teardown(() => otherClient.close());
    const foreign = await otherClient.callTool({ name: 'get_slideshow', arguments: { id: sc.slideshow_id } });
    t.ok(foreign.isError);
    t.match(foreign.structuredContent, { error: { code: 'not_found', context: { resource: 'slideshow' } } });
  },
);
