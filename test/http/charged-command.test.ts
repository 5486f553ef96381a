// The one charged command, seen over HTTP through its two users (POST /generations and POST
// /reference-inspirations): a completed key is answered from the stored response before the
// request is checked again (whatever changed since: a deleted brand kit, avatar or media, a
// reference no longer ready, another process's configuration, an empty balance), with no second
// charge; concurrent requests with one key charge once; the same key with another body is 409
// and charges nothing; a replay is answered before the rate limit and uses none of it (every
// paid operation with x-rate-limit, REST and MCP).
import http from 'node:http';
import { and, eq } from 'drizzle-orm';
import t, { type Test } from 'tap';
import { brandKits, customAvatars, media, referenceInspirations } from '../../src/db/schema/index.ts';
import { applyCreditChange, ledgerSum } from '../../src/services/billing/credits.ts';
import { findTemplate } from '../../src/services/catalog/catalog-data.ts';
import { colorPng } from '../editor/helpers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connect } from '../mcp/helpers.ts';

const png = await colorPng('#00ff00', 32, 32);
const host = http.createServer((req, res) => {
  if (req.url === '/green.png') return res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
  res.writeHead(404).end('missing');
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `http://127.0.0.1:${(host.address() as { port: number }).port}`;

// No workers: what is tested is the command, not the rendering. A second API process on the same
// database, configured differently: it refuses loopback URLs that the first one accepts.
const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' });
const strict = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { databaseUrl: app.databaseUrl });
const db = app.service.ctx.db;
const sql = app.service.ctx.sql;

const STATIC = findTemplate('bold-sale-banner')!;
// The price here, as GET /models shows it (a local preview: no model is configured).
const staticCredits: number = (await app.request('GET', '/api/v1/models')).body.static_ads.find(
  (s: { slug: string }) => s.slug === STATIC.slug,
).credits;
const WRITE = ['generations:read', 'generations:write'];

async function state(orgId: string) {
  const [row] = await sql`
    select (select credits from organizations where id = ${orgId})::int as credits,
           (select count(*) from credit_ledger where org_id = ${orgId})::int as ledger,
           (select count(*) from generations where org_id = ${orgId})::int as generations,
           (select count(*) from reference_inspirations where org_id = ${orgId})::int as references,
           (select count(*) from media where org_id = ${orgId})::int as media`;
  return row as { credits: number; ledger: number; generations: number; references: number; media: number };
}

const gen = (a: TestApp, key: string, body: object, idem?: string) =>
  a.request('POST', '/api/v1/generations', { key, body, headers: idem ? { 'idempotency-key': idem } : {} });
const ref = (a: TestApp, key: string, body: object, idem?: string) =>
  a.request('POST', '/api/v1/reference-inspirations', { key, body, headers: idem ? { 'idempotency-key': idem } : {} });

/** The replay is the first response, marked; compared without the mark. */
function sameAsFirst(t: Test, replay: { status: number; body: any }, first: { body: any }, what: string) {
  t.equal(replay.status, 200, `${what}: 200 (${JSON.stringify(replay.body?.error ?? '')})`);
  t.equal(replay.body.idempotent_replay, true, `${what}: idempotent_replay`);
  const { idempotent_replay: _mark, ...rest } = replay.body;
  t.same(rest, first.body, `${what}: the stored response`);
}

t.test('a generation replay is the stored response, whatever its brand kit, media and reference became', async (t) => {
  const ws = await app.workspace({ credits: 5000, scopes: WRITE });
  const [kit] = await db
    .insert(brandKits)
    .values({ orgId: ws.orgId, brandId: 1, kitName: 'Acme', kitData: { colors: ['#112233'] } })
    .returning();
  const [image] = await db
    .insert(media)
    .values({
      orgId: ws.orgId,
      kind: 'image',
      status: 'completed',
      source: 'upload',
      contentType: 'image/png',
      sizeBytes: 10,
      storageKey: 'x/ref.png',
    })
    .returning();
  const [inspiration] = await db
    .insert(referenceInspirations)
    .values({ orgId: ws.orgId, templateSlug: STATIC.slug, templateCategory: 'static-ads', mediaKind: 'image', status: 'ready' })
    .returning();
  const body = {
    type: 'static_ad',
    template_slug: STATIC.slug,
    prompt: 'Autumn sale',
    request_count: 2,
    brand_kit_id: kit.id,
    reference_media_ids: [image.id],
    reference_image_urls: [`${base}/green.png`],
    custom_reference_inspiration_id: inspiration.id,
  };
  const first = await gen(app, ws.key, body, 'gen-changed-1');
  t.equal(first.status, 200, first.text);
  t.notOk('idempotent_replay' in first.body);
  const charged = await state(ws.orgId);
  t.equal(charged.credits, 5000 - 2 * staticCredits);

  // Everything the first call used changes: the kit and the media are gone, the reference is no
  // longer usable, and the balance is spent.
  await db.delete(brandKits).where(eq(brandKits.id, kit.id));
  await db.delete(media).where(eq(media.id, image.id));
  await db.update(referenceInspirations).set({ status: 'rejected' }).where(eq(referenceInspirations.id, inspiration.id));
  await applyCreditChange(db, { orgId: ws.orgId, delta: -charged.credits, reason: 'generation_charge' });
  const before = await state(ws.orgId);

  // Asked afresh (a new key), the same body is now refused: the replay below must not look.
  const fresh = await gen(app, ws.key, body, 'gen-changed-new');
  t.equal(fresh.status, 404, 'the same body under a new key is checked and refused');

  sameAsFirst(t, await gen(app, ws.key, body, 'gen-changed-1'), first, 'after the changes');
  // Another API process whose configuration refuses the loopback reference URL replays it too.
  sameAsFirst(t, await gen(strict, ws.key, body, 'gen-changed-1'), first, 'on a process that would refuse the URL');
  t.equal(
    (await gen(strict, ws.key, { ...body, brand_kit_id: undefined }, 'other-key')).status,
    400,
    'that process refuses the URL when asked afresh',
  );
  t.same(await state(ws.orgId), before, 'no charge, no row, no ledger entry');
  t.equal(await ledgerSum(db, ws.orgId), (await state(ws.orgId)).credits, 'the balance is the ledger sum');
});

t.test('a generation replay survives the deletion of its custom avatar', async (t) => {
  const ws = await app.workspace({ credits: 5000, scopes: WRITE });
  const ugc = (await app.request('GET', '/api/v1/models')).body.ugc_ads[0].slug;
  const [avatar] = await db
    .insert(customAvatars)
    .values({ orgId: ws.orgId, name: 'Sam', imageUrl: `${base}/green.png`, videoUrl: `${base}/sam.mp4` })
    .returning();
  const body = { type: 'ugc_ad', template_slug: ugc, prompt: 'Try our tea', avatar_id: avatar.id };
  const first = await gen(app, ws.key, { ...body, idempotency_key: 'ugc-1' });
  t.equal(first.status, 200, first.text);
  await db.delete(customAvatars).where(and(eq(customAvatars.id, avatar.id), eq(customAvatars.orgId, ws.orgId)));
  const before = await state(ws.orgId);
  t.equal((await gen(app, ws.key, body)).status, 404, 'the avatar is gone for a new request');
  sameAsFirst(t, await gen(app, ws.key, body, 'ugc-1'), first, 'the header key replays the body key');
  t.same(await state(ws.orgId), before, 'charged once');
});

t.test('a reference replay is the stored response, whatever happened to the reference since', async (t) => {
  const ws = await app.workspace({ credits: 200, scopes: WRITE });
  const body = {
    template_slug: 'product-spotlight',
    media_kind: 'image',
    label: 'Green',
    image_urls: [`${base}/green.png`],
    images: [{ filename: 'green.png', data: png.toString('base64') }],
  };
  const first = await ref(app, ws.key, body, 'ref-changed-1');
  t.equal(first.status, 200, first.text);
  t.match(first.body, { status: 'processing', credits_deducted: 60 });
  t.equal((await state(ws.orgId)).credits, 140);

  // The reference fails (as its analysis would) and is refunded; the balance is then spent.
  await db
    .update(referenceInspirations)
    .set({ status: 'failed', error: { code: 'input_unavailable', message: 'gone', retryable: false, context: {} } })
    .where(eq(referenceInspirations.id, first.body.id));
  await applyCreditChange(db, { orgId: ws.orgId, delta: -140, reason: 'generation_charge' });
  const before = await state(ws.orgId);
  t.equal((await ref(app, ws.key, body, 'ref-changed-new')).status, 402, 'a new request is refused for want of credits');

  sameAsFirst(t, await ref(app, ws.key, body, 'ref-changed-1'), first, 'after the failure and an empty balance');
  const other = await ref(strict, ws.key, body, 'ref-changed-1');
  sameAsFirst(t, other, first, 'on a process that would refuse the URL');
  t.equal((await ref(strict, ws.key, body)).status, 400, 'that process refuses the URL when asked afresh');
  t.same(await state(ws.orgId), before, 'no charge, no upload, no row');
});

t.test('concurrent requests with one key (header or body field) charge exactly once', async (t) => {
  const ws = await app.workspace({ credits: 5000, scopes: WRITE });
  const body = { type: 'static_ad', template_slug: STATIC.slug, prompt: 'Burst', request_count: 3 };
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      i % 2 ? gen(app, ws.key, body, 'burst-key') : gen(app, ws.key, { ...body, idempotency_key: 'burst-key' }),
    ),
  );
  const fresh = results.filter((r) => r.status === 200 && !r.body.idempotent_replay);
  const replays = results.filter((r) => r.status === 200 && r.body.idempotent_replay === true);
  const busy = results.filter((r) => r.status === 409);
  t.equal(fresh.length, 1, `one request did the work (${results.map((r) => r.status).join(',')})`);
  t.equal(fresh.length + replays.length + busy.length, 16, 'the others replayed it or were told it is in flight');
  for (const r of busy) t.match(r.body.error, { code: 'idempotency_conflict', retryable: false });
  for (const r of replays) t.same(r.body.generations, fresh[0].body.generations);
  const after = await state(ws.orgId);
  t.equal(after.credits, 5000 - 3 * staticCredits, 'charged once');
  t.equal(after.generations, 3);
  const [{ n }] = await sql`select count(*)::int as n from credit_ledger where org_id = ${ws.orgId} and reason = 'generation_charge'`;
  t.equal(n, 1, 'one ledger row for the charge');

  // A different body under the same key at the same moment: one wins, every other is 409.
  const mixed = await Promise.all(Array.from({ length: 8 }, (_, i) => gen(app, ws.key, { ...body, prompt: `variant ${i}` }, 'mixed-key')));
  t.equal(mixed.filter((r) => r.status === 200).length, 1, `one request was taken (${mixed.map((r) => r.status).join(',')})`);
  t.equal(mixed.filter((r) => r.status === 409).length, 7, 'the others are conflicts');
  t.equal((await state(ws.orgId)).credits, 5000 - 6 * staticCredits, 'one more charge only');
});

t.test('simultaneous replays of a completed request are all answered, none told it is in flight', async (t) => {
  const ws = await app.workspace({ credits: 1000, scopes: WRITE });
  const body = { type: 'static_ad', template_slug: STATIC.slug, prompt: 'Done once' };
  const first = await gen(app, ws.key, body, 'replayed-often');
  t.equal(first.status, 200);
  const before = await state(ws.orgId);
  const replays = await Promise.all(Array.from({ length: 24 }, (_, i) => gen(i % 2 ? strict : app, ws.key, body, 'replayed-often')));
  t.same(
    replays.map((r) => [r.status, r.body.idempotent_replay]),
    replays.map(() => [200, true]),
    'every one is the replay',
  );
  for (const r of replays) t.same(r.body.generations, first.body.generations);
  // A different body under that key, at the same moment, is still refused.
  const wrong = await Promise.all(Array.from({ length: 6 }, () => gen(app, ws.key, { ...body, prompt: 'Other' }, 'replayed-often')));
  t.same(
    wrong.map((r) => r.body.error?.code),
    wrong.map(() => 'idempotency_conflict'),
  );
  t.same(await state(ws.orgId), before, 'nothing charged');
});

t.test('the same key with a different body is 409 and charges nothing', async (t) => {
  const ws = await app.workspace({ credits: 1000, scopes: WRITE });
  const body = { type: 'static_ad', template_slug: STATIC.slug, prompt: 'Original' };
  const first = await gen(app, ws.key, body, 'reuse-1');
  t.equal(first.status, 200);
  const before = await state(ws.orgId);
  for (const [what, other] of [
    ['another prompt', { ...body, prompt: 'Changed' }],
    ['another count', { ...body, request_count: 2 }],
    ['a body that would not even validate', { ...body, template_slug: 'no-such-template' }],
  ] as const) {
    const res = await gen(app, ws.key, other, 'reuse-1');
    t.equal(res.status, 409, what);
    t.match(res.body.error, { code: 'idempotency_conflict', context: { idempotency_key: 'reuse-1' } }, what);
  }
  // The same key on the other paid operation is another scope: it is a new request there.
  const refBody = {
    template_slug: 'product-spotlight',
    media_kind: 'image',
    images: [{ filename: 'a.png', data: png.toString('base64') }],
  };
  const r1 = await ref(app, ws.key, refBody, 'reuse-1');
  t.equal(r1.status, 200, 'keys are per operation');
  const r2 = await ref(app, ws.key, { ...refBody, label: 'Changed' }, 'reuse-1');
  t.equal(r2.status, 409, 'a reference with another body');
  t.equal(r2.body.error.code, 'idempotency_conflict');
  const after = await state(ws.orgId);
  t.same(
    after,
    { ...before, credits: before.credits - 30, ledger: before.ledger + 1, references: before.references + 1, media: before.media + 1 },
    'only the first reference was charged and stored',
  );
});

t.test('replays of completed requests are answered before the rate limit and use none of it, over REST and MCP', async (t) => {
  const limited = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '3' });
  // Every paid operation with x-rate-limit: its path, its tool, a body, and the same body changed.
  const cases = [
    {
      path: '/api/v1/generations',
      tool: 'create_generation',
      body: { type: 'static_ad', template_slug: STATIC.slug, prompt: 'Counted once' },
      changed: { prompt: 'Other' },
    },
    {
      path: '/api/v1/slideshows',
      tool: 'create_slideshow',
      body: { prompt: 'Pack light', slide_count: 3 },
      changed: { prompt: 'Pack heavy' },
    },
    {
      path: '/api/v1/reference-inspirations',
      tool: 'create_reference_inspiration',
      body: { template_slug: 'product-spotlight', media_kind: 'image', image_urls: [`${base}/green.png`] },
      changed: { label: 'Other' },
    },
  ];
  for (const c of cases) {
    const ws = await limited.workspace({ credits: 5000, scopes: WRITE });
    const post = (body: object, idem: string) =>
      limited.request('POST', c.path, { key: ws.key, body, headers: { 'idempotency-key': idem } });
    const client = await connect(limited, ws.key);
    t.teardown(() => client.close());
    const call = async (idem: string) =>
      (await client.callTool({ name: c.tool, arguments: { ...c.body, idempotency_key: idem } })) as {
        isError?: boolean;
        structuredContent: any;
      };

    const first = await post(c.body, 'once');
    t.equal(first.status, 200, `${c.path}: ${first.text}`);
    t.equal(first.headers.get('x-ratelimit-remaining'), '2', `${c.path}: the first request is counted`);
    for (let i = 1; i <= 8; i++) sameAsFirst(t, await post(c.body, 'once'), first, `${c.path}: REST replay ${i}`);
    for (let i = 1; i <= 3; i++) {
      const r = await call('once');
      t.notOk(r.isError, `${c.path}: MCP replay ${i} (${JSON.stringify(r.structuredContent?.error ?? '')})`);
      t.equal(r.structuredContent.idempotent_replay, true);
    }

    const second = await post(c.body, 'twice');
    t.equal(second.status, 200, `${c.path}: a new request`);
    t.equal(second.headers.get('x-ratelimit-remaining'), '1', `${c.path}: the eleven replays used none of the quota`);
    const conflict = await post({ ...c.body, ...c.changed }, 'once');
    t.equal(conflict.status, 409, `${c.path}: the key with another body is 409`);
    t.equal(conflict.headers.get('x-ratelimit-remaining'), '0', `${c.path}: and is counted`);
    const over = await post(c.body, 'thrice');
    t.equal(over.status, 429, `${c.path}: the quota is used up`);
    const overMcp = await call('thrice');
    t.match(overMcp, { isError: true, structuredContent: { error: { code: 'rate_limited' } } }, `${c.path}: over MCP too`);

    sameAsFirst(t, await post(c.body, 'once'), first, `${c.path}: a replay with the quota used up`);
    t.equal((await call('once')).structuredContent.idempotent_replay, true, `${c.path}: over MCP too`);
    const [{ credits }] = await limited.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`;
    t.equal(credits, 5000 - 2 * first.body.credits_deducted, `${c.path}: two requests charged`);
  }
});
