// POST /generations and GET /generations/{id}: validation against the catalog and the workspace,
// server-side pricing, atomic credits under concurrency, idempotency, partial batches, rate
// limits, real rendering by the workers, refunds on failure and tenant isolation.
import http from 'node:http';
import sharp from 'sharp';
import t from 'tap';
import { brandKits, media, referenceInspirations } from '../../src/db/schema/index.ts';
import { findAiModel, findTemplate, localPreviewPricing } from '../../src/services/catalog/catalog-data.ts';
import { ledgerSum } from '../../src/services/billing/credits.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { type ApiResponse, startTestApp, type TestApp } from '../helpers/app.ts';

// A fixture image host on loopback (the guarded client is told to allow 127.0.0.1 in tests only).
const red = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ff0000' } })
  .png()
  .toBuffer();
const fixtures = http.createServer((req, res) => {
  if (req.url === '/red.png') {
    res.writeHead(200, { 'content-type': 'image/png' });
    return res.end(red);
  }
  res.writeHead(404).end('missing');
});
await new Promise<void>((r) => fixtures.listen(0, '127.0.0.1', r));
t.teardown(() => fixtures.close());
const fixtureBase = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}`;

// Queueing tests run without workers; rendering tests use an app of their own whose worker has
// only their jobs to do.
const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' });
const renderApp = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1' }, { workers: true });
const db = app.service.ctx.db;
const sql = app.service.ctx.sql;

const STATIC = findTemplate('bold-sale-banner')!;
// The price here, as GET /models shows it: with no model configured, static ads are local previews.
const CATALOG = (await app.request('GET', '/api/v1/models')).body;
const staticCredits: number = CATALOG.static_ads.find((s: { slug: string }) => s.slug === STATIC.slug).credits;

async function balance(orgId: string, a: TestApp = app): Promise<number> {
  const [row] = await a.service.ctx.sql`select credits from organizations where id = ${orgId}`;
  return row.credits;
}
async function counts(orgId: string) {
  const [g] = await sql`select count(*)::int as n from generations where org_id = ${orgId}`;
  const [j] =
    await sql`select count(*)::int as n from pgboss.job where name in ('generation', 'generation-video') and data->>'generationId' in (select id::text from generations where org_id = ${orgId})`;
  const [l] = await sql`select count(*)::int as n from credit_ledger where org_id = ${orgId}`;
  return { generations: g.n as number, jobs: j.n as number, ledger: l.n as number };
}
async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const poll = (a: TestApp, key: string, id: string) =>
  waitFor(
    `generation ${id} to finish`,
    async () => {
      const res = await a.request('GET', `/api/v1/generations/${id}`, { key });
      return res.body.status === 'generating' ? undefined : res;
    },
    120_000,
  );

t.test('validation against the catalog names the field; nothing is charged', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const other = await app.workspace({ credits: 10 });
  const [otherKit] = await db.insert(brandKits).values({ orgId: other.orgId, brandId: 1, kitName: 'Theirs', kitData: {} }).returning();
  const [videoMedia] = await db
    .insert(media)
    .values({ orgId: ws.orgId, kind: 'video', source: 'upload', contentType: 'video/mp4', sizeBytes: 10, storageKey: 'x/y.mp4' })
    .returning();
  const [otherMedia] = await db
    .insert(media)
    .values({ orgId: other.orgId, kind: 'image', source: 'upload', contentType: 'image/png', sizeBytes: 10, storageKey: 'x/z.png' })
    .returning();
  const [pendingRef] = await db
    .insert(referenceInspirations)
    .values({ orgId: ws.orgId, templateSlug: STATIC.slug, templateCategory: 'static-ads', mediaKind: 'image', status: 'processing' })
    .returning();
  const before = await counts(ws.orgId);
  const video = findTemplate('product-demo-showcase') ?? findTemplate((await app.request('GET', '/api/v1/models')).body.video_ads[0].slug)!;
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['template required', { type: 'static_ad' }, 400, 'body.template_slug'],
    ['unknown template', { type: 'static_ad', template_slug: 'no-such-template' }, 400, 'body.template_slug'],
    ['wrong section', { type: 'static_ad', template_slug: video.slug }, 400, 'body.template_slug'],
    ['unknown preset', { type: 'static_ad', template_slug: STATIC.slug, preset_id: 'nope' }, 400, 'body.preset_id'],
    ['duration on a static ad', { type: 'static_ad', template_slug: STATIC.slug, duration: 5 }, 400, 'body.duration'],
    ['model on a template type', { type: 'static_ad', template_slug: STATIC.slug, model_slug: 'x' }, 400, 'body.model_slug'],
    ['duration outside the tier', { type: 'video_ad', template_slug: video.slug, duration: 29 }, 400, 'body.duration'],
    ['model required', { type: 'ai_model' }, 400, 'body.model_slug'],
    ['unknown model', { type: 'ai_model', model_slug: 'nope' }, 400, 'body.model_slug'],
    [
      'unknown variant',
      { type: 'ai_model', model_slug: (await app.request('GET', '/api/v1/models')).body.ai_models[0].slug, variant_id: 'nope' },
      400,
      'body.variant_id',
    ],
    ['template on ai_model', { type: 'ai_model', model_slug: 'x', template_slug: STATIC.slug }, 400, 'body.template_slug'],
    [
      'private reference URL',
      { type: 'static_ad', template_slug: STATIC.slug, reference_image_urls: ['http://10.0.0.5/a.png'] },
      400,
      'body.reference_image_urls[0]',
    ],
    [
      'file URL',
      { type: 'static_ad', template_slug: STATIC.slug, reference_image_urls: ['https://169.254.169.254/latest'] },
      400,
      'body.reference_image_urls[0]',
    ],
    ['unsupported aspect ratio', { type: 'static_ad', template_slug: STATIC.slug, aspect_ratio: '7:3' }, 400, 'body.aspect_ratio'],
    ['video resolution on an image', { type: 'static_ad', template_slug: STATIC.slug, resolution: '720p' }, 400, 'body.resolution'],
    [
      'another workspace’s brand kit',
      { type: 'static_ad', template_slug: STATIC.slug, brand_kit_id: otherKit.id },
      404,
      'body.brand_kit_id',
    ],
    [
      'unknown avatar',
      { type: 'ugc_ad', template_slug: (await app.request('GET', '/api/v1/models')).body.ugc_ads[0].slug, avatar_id: 'nobody' },
      404,
      'body.avatar_id',
    ],
    [
      'another workspace’s media',
      { type: 'static_ad', template_slug: STATIC.slug, reference_media_ids: [otherMedia.id] },
      404,
      'body.reference_media_ids[0]',
    ],
    [
      'video media as an image reference',
      { type: 'static_ad', template_slug: STATIC.slug, reference_media_ids: [videoMedia.id] },
      400,
      'body.reference_media_ids[0]',
    ],
    [
      'reference not ready',
      { type: 'static_ad', template_slug: STATIC.slug, custom_reference_inspiration_id: pendingRef.id },
      400,
      'body.custom_reference_inspiration_id',
    ],
    [
      'unknown reference',
      { type: 'static_ad', template_slug: STATIC.slug, custom_reference_inspiration_id: '00000000-0000-4000-8000-000000000009' },
      404,
      'body.custom_reference_inspiration_id',
    ],
  ];
  for (const [name, body, status, field] of cases) {
    const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body });
    t.equal(res.status, status, name);
    const fields = [res.body.error?.context?.field, ...(res.body.error?.context?.errors ?? []).map((e: { field: string }) => e.field)];
    t.ok(fields.includes(field), `${name}: names ${field} (got ${JSON.stringify(res.body.error)})`);
  }
  t.same(await counts(ws.orgId), before, 'no generation, job or ledger row was written');
  t.equal(await balance(ws.orgId), 1000, 'no credits were taken');
});

t.test('credits are computed server-side from the catalog and deducted once', async (t) => {
  const ws = await app.workspace({ credits: 10_000 });
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: STATIC.slug, request_count: 3, prompt: 'Summer sale' },
  });
  t.equal(res.status, 200);
  t.match(res.body, {
    object: 'generation_batch',
    status: 'queued',
    request_count: 3,
    credits_deducted: 3 * staticCredits,
    remaining_credits: 10_000 - 3 * staticCredits,
    error: null,
  });
  t.equal(res.body.generations.length, 3);
  for (const g of res.body.generations) t.match(g, { object: 'generation', status: 'generating', credits_deducted: staticCredits });

  const models = (await app.request('GET', '/api/v1/models')).body;
  const vt = models.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'low');
  // A local preview (no engine here makes the tier's model): the preview price per second.
  t.match(tier.engine, { kind: 'local', preview: true });
  const perSecond = localPreviewPricing().video_per_second;
  const other = tier.duration_options.find((d: number) => d !== tier.default_duration);
  const def = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'video_ad', template_slug: vt.slug, quality_tier: 'low' },
  });
  t.equal(def.body.credits_deducted, tier.credits, 'the tier price at its default duration');
  if (other !== undefined) {
    const longer = await app.request('POST', '/api/v1/generations', {
      key: ws.key,
      body: { type: 'video_ad', template_slug: vt.slug, quality_tier: 'low', duration: other },
    });
    t.equal(longer.body.credits_deducted, perSecond * other, 'per-second pricing away from the default duration');
  }
  const m = models.ai_models[0];
  const variant = m.variants.find((v: { id: string }) => v.id === m.default_variant_id)!;
  t.equal(variant.credits, localPreviewPricing().image, 'a preview of the variant, at the preview price');
  const ai = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ai_model', model_slug: m.slug, prompt: 'a cat', request_count: 2 },
  });
  t.equal(ai.status, 200);
  t.equal(ai.body.credits_deducted, 2 * variant.credits, 'the default variant is priced server-side');
  t.equal(await ledgerSum(db, ws.orgId), await balance(ws.orgId), 'balance equals the ledger sum');
});

t.test('insufficient credits → 402 with the numbers, nothing written', async (t) => {
  const ws = await app.workspace({ credits: staticCredits * 2 - 1 });
  const before = await counts(ws.orgId);
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: STATIC.slug, request_count: 2 },
  });
  t.equal(res.status, 402);
  t.equal(res.body.error.code, 'insufficient_credits');
  t.same(
    { required: res.body.error.context.credits_required, available: res.body.error.context.credits_available },
    { required: staticCredits * 2, available: staticCredits * 2 - 1 },
  );
  t.same(await counts(ws.orgId), before, 'no generation, job or ledger row');
});

t.test('credits for exactly K generations, 4K simultaneous requests → exactly K queued', async (t) => {
  const K = 5;
  const ws = await app.workspace({ credits: K * staticCredits });
  const results = await Promise.all(
    Array.from({ length: 4 * K }, () =>
      app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'static_ad', template_slug: STATIC.slug } }),
    ),
  );
  const ok = results.filter((r) => r.status === 200);
  t.equal(ok.length, K, `${K} succeeded`);
  t.equal(results.filter((r) => r.status === 402).length, 3 * K, 'the rest are 402');
  t.equal(await balance(ws.orgId), 0, 'balance is exactly 0');
  t.equal(await ledgerSum(db, ws.orgId), 0, 'the ledger agrees');
  const c = await counts(ws.orgId);
  t.equal(c.generations, K, 'K generation rows');
  t.equal(c.jobs, K, 'K jobs');
});

t.test('idempotency: replay, conflict, body fallback, expiry', async (t) => {
  const ws = await app.workspace({ credits: 10_000 });
  const body = { type: 'static_ad', template_slug: STATIC.slug, prompt: 'replay me' };
  const first = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'k-1' } });
  t.equal(first.status, 200);
  t.notOk('idempotent_replay' in first.body);
  const again = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'k-1' } });
  t.equal(again.status, 200);
  t.equal(again.body.idempotent_replay, true);
  const { idempotent_replay: _r, ...rest } = again.body;
  t.same(rest, first.body, 'the original response');
  t.equal(await balance(ws.orgId), 10_000 - staticCredits, 'charged once');

  const different = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { ...body, prompt: 'something else' },
    headers: { 'idempotency-key': 'k-1' },
  });
  t.equal(different.status, 409);
  t.equal(different.body.error.code, 'idempotency_conflict');

  const viaBody = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { ...body, idempotency_key: 'k-body' } });
  const viaBodyAgain = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { ...body, idempotency_key: 'k-body' } });
  t.equal(viaBodyAgain.body.idempotent_replay, true, 'the body field is the fallback key');
  t.same(viaBodyAgain.body.generations, viaBody.body.generations);

  const other = await app.workspace({ credits: 100 });
  const otherOrg = await app.request('POST', '/api/v1/generations', { key: other.key, body, headers: { 'idempotency-key': 'k-1' } });
  t.equal(otherOrg.status, 200, 'keys are per workspace');
  t.notOk(otherOrg.body.idempotent_replay);

  await sql`update idempotency_keys set expires_at = now() - interval '1 second' where org_id = ${ws.orgId} and key = 'k-1'`;
  const expired = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'k-1' } });
  t.equal(expired.status, 200);
  t.notOk(expired.body.idempotent_replay, 'an expired key starts a new request');
  t.not(expired.body.generations[0].id, first.body.generations[0].id);

  // A failed request (402) gives the key back: the same key works after a top-up.
  const poor = await app.workspace({ credits: 0 });
  const refused = await app.request('POST', '/api/v1/generations', { key: poor.key, body, headers: { 'idempotency-key': 'k-poor' } });
  t.equal(refused.status, 402);
  const { grantCredits } = await import('../../src/services/workspaces/organizations.ts');
  await grantCredits(db, poor.orgId, staticCredits);
  const afterTopUp = await app.request('POST', '/api/v1/generations', { key: poor.key, body, headers: { 'idempotency-key': 'k-poor' } });
  t.equal(afterTopUp.status, 200);
});

t.test('20 simultaneous requests with one key charge exactly once', async (t) => {
  const ws = await app.workspace({ credits: 10_000 });
  const body = { type: 'static_ad', template_slug: STATIC.slug, request_count: 2 };
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'same' } }),
    ),
  );
  const fresh = results.filter((r) => r.status === 200 && !r.body.idempotent_replay);
  const replays = results.filter((r) => r.status === 200 && r.body.idempotent_replay);
  const inFlight = results.filter((r) => r.status === 409);
  t.equal(fresh.length, 1, 'one request did the work');
  t.equal(fresh.length + replays.length + inFlight.length, 20, 'the others replayed or were told it is in flight');
  for (const r of inFlight) t.equal(r.body.error.code, 'idempotency_conflict');
  for (const r of replays) t.same(r.body.generations, fresh[0].body.generations);
  t.equal(await balance(ws.orgId), 10_000 - 2 * staticCredits, 'charged once');
  t.equal((await counts(ws.orgId)).generations, 2);
});

t.test('a batch the queue only partly accepts is partial, charged for what was queued, and resumed with the same key', async (t) => {
  const ws = await app.workspace({ credits: 10_000 });
  // A real failure in the queue's table: it refuses the third job of any batch of this workspace.
  await sql.unsafe(`
    create or replace function refuse_third_job() returns trigger language plpgsql as $$
    begin
      if (select count(*) from generations g where g.org_id = '${ws.orgId}'
            and g.batch_id = (select batch_id from generations where id = (new.data->>'generationId')::uuid)) > 2 then
        raise exception 'queue unavailable';
      end if;
      return new;
    end $$;
    create trigger refuse_third_job before insert on pgboss.job for each row execute function refuse_third_job();`);
  const body = { type: 'static_ad', template_slug: STATIC.slug, request_count: 4 };
  let first: ApiResponse;
  try {
    first = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'partial-1' } });
  } finally {
    await sql.unsafe('drop trigger refuse_third_job on pgboss.job; drop function refuse_third_job();');
  }
  t.equal(first.status, 200);
  t.match(first.body, { status: 'partial', request_count: 4, credits_deducted: 2 * staticCredits });
  t.equal(first.body.generations.length, 2);
  t.equal(first.body.error.retryable, true);
  t.equal(await balance(ws.orgId), 10_000 - 2 * staticCredits, 'charged only for the queued two');
  t.equal((await counts(ws.orgId)).jobs, 2);

  const resumed = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'partial-1' } });
  t.equal(resumed.status, 200);
  t.match(resumed.body, { status: 'queued', request_count: 4, credits_deducted: 4 * staticCredits, error: null });
  t.equal(resumed.body.generations.length, 4, 'the whole batch');
  t.same(
    resumed.body.generations.slice(0, 2).map((g: { id: string }) => g.id),
    first.body.generations.map((g: { id: string }) => g.id),
    'the first two are the same',
  );
  t.equal(await balance(ws.orgId), 10_000 - 4 * staticCredits);
  t.equal((await counts(ws.orgId)).generations, 4);
  const replay = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'partial-1' } });
  t.equal(replay.body.idempotent_replay, true, 'once complete, the batch replays');
  t.equal(await ledgerSum(db, ws.orgId), await balance(ws.orgId));
});

t.test('a worker renders a real image: the signed URL serves a PNG of the requested size with the brand colour', async (t) => {
  const ws = await renderApp.workspace({ credits: 1000 });
  const [kit] = await renderApp.service.ctx.db
    .insert(brandKits)
    .values({ orgId: ws.orgId, brandId: 3, kitName: 'Acme', kitData: { colors: ['#1E40AF', '#F59E0B'] } })
    .returning();
  const res = await renderApp.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'static_ad',
      template_slug: STATIC.slug,
      prompt: 'Fresh lemonade, 20% off',
      aspect_ratio: '4:5',
      brand_kit_id: kit.id,
      reference_image_urls: [`${fixtureBase}/red.png`],
    },
  });
  t.equal(res.status, 200);
  const id = res.body.generations[0].id;
  const pending = await renderApp.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.equal(pending.body.url, null, 'no url before completion');
  const done = await poll(renderApp, ws.key, id);
  t.equal(done.body.status, 'completed', JSON.stringify(done.body.error));
  t.match(done.body.output, { content_type: 'image/png', width: 820, height: 1024 });
  t.equal(done.body.progress, 100);
  const file = await fetch(done.body.url);
  t.equal(file.status, 200);
  const bytes = Buffer.from(await file.arrayBuffer());
  t.same([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG magic bytes');
  const meta = await sharp(bytes).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 820, 1024]);
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  let brandish = 0;
  for (let i = 0; i < data.length; i += info.channels * 97) {
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (Math.abs(r - 0x1e) < 40 && Math.abs(g - 0x40) < 40 && Math.abs(b - 0xaf) < 40) brandish++;
  }
  t.ok(brandish > 50, `the brand colour is used (${brandish} samples)`);
  let reddish = 0;
  for (let i = 0; i < data.length; i += info.channels * 97) if (data[i] > 200 && data[i + 1] < 60 && data[i + 2] < 60) reddish++;
  t.ok(reddish > 20, `the red reference image is composed in (${reddish} samples)`);

  const u = new URL(done.body.url);
  u.searchParams.set('signature', `AAAA${u.searchParams.get('signature')!.slice(4)}`);
  t.equal((await fetch(u)).status, 403, 'a tampered signature is refused');
  const expired = new URL(done.body.url);
  expired.searchParams.set('expires', '1000');
  t.equal((await fetch(expired)).status, 403, 'an altered expiry is refused');
});

t.test('a worker renders a real video: H.264/AAC MP4 of the requested size and duration', async (t) => {
  const ws = await renderApp.workspace({ credits: 10_000 });
  const models = (await renderApp.request('GET', '/api/v1/models')).body;
  const vt =
    models.video_ads.find((v: any) => v.quality_tiers.some((q: any) => q.id === 'low' && q.duration_options.includes(5))) ??
    models.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'low');
  const duration = tier.duration_options.includes(5) ? 5 : tier.duration_options[0];
  const res = await renderApp.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'video_ad',
      template_slug: vt.slug,
      quality_tier: 'low',
      duration,
      aspect_ratio: '9:16',
      resolution: '480p',
      prompt: 'Spin the bottle',
    },
  });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const done = await poll(renderApp, ws.key, res.body.generations[0].id);
  t.equal(done.body.status, 'completed', JSON.stringify(done.body.error));
  const file = await fetch(done.body.url);
  const bytes = Buffer.from(await file.arrayBuffer());
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gen-video-')), 'out.mp4');
  fs.writeFileSync(tmp, bytes);
  t.teardown(() => fs.rmSync(path.dirname(tmp), { recursive: true, force: true }));
  const facts = await probe(tmp);
  t.equal(facts.video_codec, 'h264');
  t.equal(facts.audio_codec, 'aac');
  t.same([facts.width, facts.height], [480, 854]);
  t.ok(Math.abs((facts.duration_seconds ?? 0) - duration) < 0.2, `duration ${facts.duration_seconds} ≈ ${duration}`);
});

t.test('a terminal failure refunds the credits exactly once', async (t) => {
  const ws = await renderApp.workspace({ credits: 500 });
  const res = await renderApp.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: STATIC.slug, reference_image_urls: [`${fixtureBase}/missing.png`] },
  });
  t.equal(res.status, 200);
  const id = res.body.generations[0].id;
  const done = await poll(renderApp, ws.key, id);
  t.equal(done.body.status, 'error');
  t.match(done.body.error, { code: 'input_unavailable', retryable: false });
  t.equal(done.body.url, null);
  t.equal(await balance(ws.orgId, renderApp), 500, 'refunded');
  const refunds = await renderApp.service.ctx.sql`select * from credit_ledger where org_id = ${ws.orgId} and reason = 'generation_refund'`;
  t.equal(refunds.length, 1, 'one refund row');
  t.equal(refunds[0].reference, `generation:${id}`);
  const { failGeneration } = await import('../../src/pipelines/generation/rows.ts');
  t.equal(
    await failGeneration(renderApp.service.ctx, id, { code: 'x', message: 'again', retryable: false, context: {} }),
    false,
    'a second failure does nothing',
  );
  t.equal(await balance(ws.orgId, renderApp), 500, 'no double refund');
  t.equal(await ledgerSum(renderApp.service.ctx.db, ws.orgId), 500);
});

t.test('another workspace’s generation reads as 404', async (t) => {
  const a = await app.workspace({ credits: 100 });
  const b = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/generations', { key: a.key, body: { type: 'static_ad', template_slug: STATIC.slug } });
  const id = res.body.generations[0].id;
  t.equal((await app.request('GET', `/api/v1/generations/${id}`, { key: a.key })).status, 200);
  const other = await app.request('GET', `/api/v1/generations/${id}`, { key: b.key });
  t.equal(other.status, 404);
  t.equal(other.body.error.code, 'not_found');
  const unknown = await app.request('GET', '/api/v1/generations/00000000-0000-4000-8000-00000000abcd', { key: a.key });
  t.equal(unknown.status, 404);
  const readKey = await app.workspace({ scopes: ['generations:read'] });
  await sql`update api_keys set org_id = ${a.orgId} where id = ${readKey.keyId}`;
  t.equal((await app.request('GET', `/api/v1/generations/${id}`, { key: readKey.key })).status, 200, 'the read scope can poll');
});

t.test('rate limits are per workspace, shared across API processes, with the quota on every response', async (t) => {
  const limited = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '3', RATE_LIMIT_WINDOW_SECONDS: '60' });
  const second = await startTestApp(
    t,
    { RATE_LIMIT_GENERATIONS: '3', RATE_LIMIT_WINDOW_SECONDS: '60' },
    { databaseUrl: limited.databaseUrl },
  );
  const ws = await limited.workspace({ credits: 1000 });
  const other = await limited.workspace({ credits: 1000 });
  const body = { type: 'static_ad', template_slug: STATIC.slug };
  const r1 = await limited.request('POST', '/api/v1/generations', { key: ws.key, body });
  t.equal(r1.status, 200);
  t.equal(r1.headers.get('x-ratelimit-remaining'), '2');
  t.equal(r1.headers.get('x-ratelimit-limit'), '3');
  t.match(r1.headers.get('ratelimit'), /^"generations";r=2;t=\d+$/);
  t.equal(r1.headers.get('ratelimit-policy'), '"generations";q=3;w=60');
  const bad = await second.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'static_ad' } });
  t.equal(bad.status, 400);
  t.equal(bad.headers.get('x-ratelimit-remaining'), '1', 'errors carry the quota too, and the other process counts the same window');
  const r3 = await second.request('POST', '/api/v1/generations', { key: ws.key, body });
  t.equal(r3.status, 200);
  t.equal(r3.headers.get('x-ratelimit-remaining'), '0');
  const limitedRes = await limited.request('POST', '/api/v1/generations', { key: ws.key, body });
  t.equal(limitedRes.status, 429);
  t.match(limitedRes.body.error, { code: 'rate_limited', retryable: true });
  const retryAfter = Number(limitedRes.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const reset = Number(limitedRes.headers.get('x-ratelimit-reset'));
  t.ok(reset > Date.now() && reset <= Date.now() + 61_000, 'X-RateLimit-Reset is a Unix time in ms within the window');
  t.equal(limitedRes.headers.get('x-ratelimit-remaining'), '0');
  t.equal(await balance(ws.orgId, limited), 1000 - 2 * staticCredits, 'a limited request is not charged');
  const otherRes = await limited.request('POST', '/api/v1/generations', { key: other.key, body });
  t.equal(otherRes.status, 200, 'another workspace has its own quota');
  const poll = await limited.request('GET', `/api/v1/generations/${r1.body.generations[0].id}`, { key: ws.key });
  t.equal(poll.status, 200, 'status checks are not limited');
});
