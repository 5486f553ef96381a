// GET /credits and GET /credits/transactions (and their MCP tools get_credit_balance and
// list_credit_transactions): the balance and the ledger as Stripe's balance transactions. Every
// ledger reason the code writes has a declared type and resource, and each is checked here against
// what the test expects; the balance is the sum of the ledger after many paid requests, refunds
// (MCP tasks/cancel over HTTP) and grants at once; pages, filters, errors, scopes and another
// workspace's rows. No workers run: queued work stays queued until canceled.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { LEDGER_REASONS } from '../../src/services/billing/ledger.ts';
import { applyCreditChange } from '../../src/services/billing/credits.ts';
import { grantCredits } from '../../src/services/workspaces/organizations.ts';
import { cancelFacelessVideo } from '../../src/pipelines/faceless-video/rows.ts';
import { cancelGeneration } from '../../src/pipelines/generation/rows.ts';
import { cancelReferenceInspiration } from '../../src/pipelines/reference-analysis/rows.ts';
import { cancelSlideshow } from '../../src/pipelines/slideshow/rows.ts';
import type { TestApp } from '../helpers/app.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '100000' });
const ctx = app.service.ctx;
type Ws = Awaited<ReturnType<TestApp['workspace']>>;
type Obj = Record<string, any>;

const post = async (ws: Ws, p: string, body: object) => {
  const res = await app.request('POST', `/api/v1/${p}`, { key: ws.key, body });
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${res.text}`);
  return res.body;
};
const get = (ws: Ws, p: string) => app.request('GET', `/api/v1/${p}`, { key: ws.key });

/** Every page of the ledger, newest first. */
async function allRows(ws: Ws, query = ''): Promise<Obj[]> {
  const rows: Obj[] = [];
  let cursor: string | null = null;
  do {
    const q = [query, 'limit=100', cursor ? `cursor=${cursor}` : ''].filter(Boolean).join('&');
    const res = await get(ws, `credits/transactions?${q}`);
    if (res.status !== 200) throw new Error(`credits/transactions: ${res.status} ${res.text}`);
    rows.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return rows;
}

/** The ledger's own arithmetic: the sum is the balance, each row's balance_after is the previous one's plus its amount. */
function checkLedger(t: Test, rows: Obj[], available: number) {
  const oldestFirst = [...rows].reverse();
  t.equal(
    rows.reduce((s, r) => s + r.amount, 0),
    available,
    'the balance is the sum of the ledger',
  );
  t.equal(rows[0]?.balance_after ?? 0, available, 'the newest row ends at the balance');
  let running = 0;
  let broken = 0;
  for (const r of oldestFirst) {
    running += r.amount;
    if (r.balance_after !== running) broken++;
  }
  t.equal(broken, 0, 'each row is the previous balance plus its amount');
  t.ok(
    rows.every((r, i) => i === 0 || rows[i - 1].id > r.id),
    'newest first, ids strictly decreasing',
  );
}

t.test('every reason the code writes is declared (with a type), and no other reason can be written', async (t) => {
  // The reasons named in the source: charged commands (ledger), resource declarations (refund),
  // direct applyCreditChange/grantCredits calls. A new one without a declaration fails here (and
  // the type check, and applyCreditChange at run time).
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const src = fs.readFileSync(p, 'utf8');
        for (const m of src.matchAll(/(?:ledger|refund):\s*\{\s*reason:\s*'([^']+)'/g)) found.add(m[1]);
        for (const m of src.matchAll(/reason:\s*'([a-z_]+_(?:grant|charge|refund|adjustment))'/g)) found.add(m[1]);
        for (const m of src.matchAll(/reason:\s*LedgerReason\s*=\s*'([^']+)'/g)) found.add(m[1]);
      }
    }
  };
  walk(path.resolve(import.meta.dirname, '../../src'));
  t.ok(found.size >= 11, `found ${found.size} reasons in src: ${[...found].join(', ')}`);
  for (const reason of found) t.ok(Object.hasOwn(LEDGER_REASONS, reason), `${reason} is declared in LEDGER_REASONS`);
});

t.test('each reason shows as its type and its reference as the resource', async (t) => {
  const ws = await app.workspace({ credits: 5000 });
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const batch = await post(ws, 'generations', {
    type: 'static_ad',
    template_slug: 'bold-sale-banner',
    prompt: 'Summer sale',
    request_count: 2,
  });
  const slideshow = await post(ws, 'slideshows', { prompt: 'Why water beats soda', slide_count: 3 });
  const faceless = await post(ws, 'faceless-videos', { script: 'Water keeps you sharp. Drink a glass now.', duration: '6' });
  const reference = await post(ws, 'reference-inspirations', {
    template_slug: 'product-spotlight',
    media_kind: 'image',
    images: [{ filename: 'a.png', data: png.toString('base64') }],
  });
  const genId = batch.generations[0].id;
  await cancelGeneration(ctx, ws.orgId, genId);
  await cancelSlideshow(ctx, ws.orgId, slideshow.slideshow_id);
  await cancelFacelessVideo(ctx, ws.orgId, faceless.video_id);
  await cancelReferenceInspiration(ctx, ws.orgId, reference.id);
  await grantCredits(ctx.db, ws.orgId, 70);

  const rows = await allRows(ws);
  const shown = [...rows].reverse().map((r) => [r.type, r.amount > 0 ? '+' : '-', r.resource]);
  const batchId = (await ctx.sql`select batch_id from generations where id = ${genId}`)[0].batch_id as string;
  const genIds = batch.generations.map((g: Obj) => g.id as string).sort(); // (the batch's units share one created_at)
  t.same(shown, [
    ['grant', '+', null], // initial_grant
    ['charge', '-', { object: 'generation_batch', id: batchId, generation_ids: genIds }],
    ['charge', '-', { object: 'slideshow', id: slideshow.slideshow_id }],
    ['charge', '-', { object: 'video', id: String(faceless.video_id) }],
    ['charge', '-', { object: 'reference_inspiration', id: reference.id }],
    ['refund', '+', { object: 'generation', id: genId }],
    ['refund', '+', { object: 'slideshow', id: slideshow.slideshow_id }],
    ['refund', '+', { object: 'video', id: String(faceless.video_id) }],
    ['refund', '+', { object: 'reference_inspiration', id: reference.id }],
    ['grant', '+', null], // admin_grant
  ]);
  t.equal(rows[0].amount, 70);
  const charges = rows.filter((r) => r.type === 'charge');
  t.equal(
    -charges.find((r) => r.resource.object === 'generation_batch')!.amount,
    batch.credits_deducted,
    'the charge is what the request said',
  );
  t.equal(-charges.find((r) => r.resource.object === 'video')!.amount, faceless.credits_deducted);
  const balance = await get(ws, 'credits');
  t.same(balance.body, { object: 'credit_balance', available: balance.body.available, plan: 'paid', last_transaction_id: rows[0].id });
  checkLedger(t, rows, balance.body.available);

  // Every declared reason has the type the test expects (publication_charge is free: never written).
  const expected: Record<string, string> = {
    initial_grant: 'grant',
    admin_grant: 'grant',
    generation_charge: 'charge',
    slideshow_charge: 'charge',
    faceless_video_charge: 'charge',
    reference_charge: 'charge',
    publication_charge: 'charge',
    generation_refund: 'refund',
    slideshow_refund: 'refund',
    faceless_video_refund: 'refund',
    reference_refund: 'refund',
  };
  t.same(Object.fromEntries(Object.entries(LEDGER_REASONS).map(([k, v]) => [k, v.type])), expected, 'every reason and its type');
});

t.test('a row written outside the API (an operator correction) is an adjustment, and the type filter finds it', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  // An operator's correction made in the database: the same statement applyCreditChange runs.
  await ctx.sql`with c as (update organizations set credits = credits - 15 where id = ${ws.orgId} returning credits)
    insert into credit_ledger (org_id, delta, balance_after, reason) select ${ws.orgId}, -15, credits, 'operator_correction' from c`;
  await applyCreditChange(ctx.db, { orgId: ws.orgId, delta: -5, reason: 'generation_charge', reference: 'batch:not-a-uuid!' });
  const rows = await allRows(ws);
  t.same(
    rows.map((r) => [r.type, r.amount, r.resource]),
    [
      ['charge', -5, null],
      ['adjustment', -15, null],
      ['grant', 100, null],
    ],
  );
  t.same(
    (await allRows(ws, 'type=adjustment')).map((r) => r.amount),
    [-15],
  );
  t.same(
    (await allRows(ws, 'type=grant')).map((r) => r.amount),
    [100],
  );
  t.same(
    (await allRows(ws, 'type=refund')).map((r) => r.amount),
    [],
  );
});

t.test('the balance is the sum of the ledger after paid requests, refunds and grants at once', async (t) => {
  const ws = await app.workspace({ credits: 400 });
  const mcp = async (method: string, params: Obj) => {
    const res = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${ws.key}`,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: Obj; error?: Obj };
  };
  let charged = 0;
  let refused = 0;
  let slideshows = 0;
  let refunded = 0;
  let granted = 0;
  const readings: number[] = [];
  // A paid request over REST.
  const rest = async (i: number) => {
    const res = await app.request('POST', '/api/v1/generations', {
      key: ws.key,
      body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: `Sale ${i}`, request_count: 1 + (i % 2) },
    });
    if (res.status === 200) charged++;
    else if (res.status === 402) refused++;
    else t.fail(`POST /generations: ${res.status} ${res.text}`);
  };
  // A paid request over MCP as a task, then canceled (refunded in full) over MCP.
  const paidThenCanceled = async (i: number) => {
    const call = await mcp('tools/call', {
      name: 'create_slideshow',
      arguments: { prompt: `Three reasons ${i}`, slide_count: 3 },
      task: {},
    });
    const taskId = call.result?.task?.taskId;
    if (!taskId) {
      if (/insufficient_credits|credits/.test(JSON.stringify(call))) refused++;
      else t.fail(`create_slideshow: ${JSON.stringify(call).slice(0, 300)}`);
      return;
    }
    charged++;
    slideshows++;
    const cancel = await mcp('tasks/cancel', { taskId });
    if (cancel.result?.status === 'cancelled') refunded++;
    else t.fail(`tasks/cancel: ${JSON.stringify(cancel).slice(0, 300)}`);
  };
  const grant = async () => {
    await grantCredits(ctx.db, ws.orgId, 25);
    granted++;
  };
  const read = async () => {
    const res = await get(ws, 'credits');
    readings.push(res.body.available);
  };
  const work: Promise<unknown>[] = [];
  for (let i = 0; i < 40; i++) {
    work.push(rest(i), paidThenCanceled(i));
    if (i % 4 === 0) work.push(grant());
    if (i % 2 === 0) work.push(read());
  }
  await Promise.all(work);
  t.ok(charged > 20 && refused > 0, `${charged} charged, ${refused} refused for want of credits`);
  t.ok(slideshows > 0, `${slideshows} slideshows accepted`);
  t.equal(refunded, slideshows, 'every accepted slideshow canceled and refunded');
  t.equal(granted, 10);
  t.ok(
    readings.every((c) => c >= 0),
    'no reading below zero',
  );

  const balance = (await get(ws, 'credits')).body;
  const rows = await allRows(ws);
  checkLedger(t, rows, balance.available);
  t.equal(balance.last_transaction_id, rows[0].id);
  t.equal(rows.filter((r) => r.type === 'grant').length, 11, 'the initial grant and ten top-ups');
  t.equal(rows.filter((r) => r.type === 'refund').length, refunded, 'one refund row per cancel');
  t.equal(rows.filter((r) => r.type === 'charge').length, charged, 'one charge row per accepted request');
  const [{ credits }] = await ctx.sql`select credits from organizations where id = ${ws.orgId}`;
  t.equal(balance.available, credits, 'the API balance is the stored one');

  // Over MCP: the same answers.
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const viaMcp = await client.callTool({ name: 'get_credit_balance', arguments: {} });
  t.same(viaMcp.structuredContent, balance);
  const page = await client.callTool({ name: 'list_credit_transactions', arguments: { limit: 5 } });
  t.same(page.structuredContent, (await get(ws, 'credits/transactions?limit=5')).body);
});

t.test('pages, filters and bad input', async (t) => {
  const ws = await app.workspace({ credits: 10 });
  for (let i = 1; i <= 7; i++) await grantCredits(ctx.db, ws.orgId, i);
  const all = await allRows(ws);
  t.same(
    all.map((r) => r.amount),
    [7, 6, 5, 4, 3, 2, 1, 10],
  );
  const first = await get(ws, 'credits/transactions?limit=3');
  t.same(
    first.body.data.map((r: Obj) => r.amount),
    [7, 6, 5],
  );
  t.type(first.body.next_cursor, 'string');
  const second = await get(ws, `credits/transactions?limit=3&cursor=${first.body.next_cursor}`);
  t.same(
    second.body.data.map((r: Obj) => r.amount),
    [4, 3, 2],
  );
  const third = await get(ws, `credits/transactions?limit=3&cursor=${second.body.next_cursor}`);
  t.same(
    third.body.data.map((r: Obj) => r.amount),
    [1, 10],
  );
  t.equal(third.body.next_cursor, null);

  // created_after / created_before are exclusive bounds on created_at (each grant its own transaction and instant).
  const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  const mid = Date.parse(all[3].created_at);
  t.same(
    (await allRows(ws, `created_after=${iso(mid - 1)}`)).map((r) => r.amount),
    all.filter((r) => Date.parse(r.created_at) > mid - 1).map((r) => r.amount),
    'created_after',
  );
  t.same(
    (await allRows(ws, `created_before=${iso(mid + 1)}&type=grant`)).map((r) => r.amount),
    all.filter((r) => Date.parse(r.created_at) < mid + 1).map((r) => r.amount),
    'created_before, with type',
  );
  t.same(await allRows(ws, `created_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
  t.same(await allRows(ws, `created_before=${encodeURIComponent(new Date(Date.parse(all[7].created_at)).toISOString())}`), []);
  t.equal((await allRows(ws, `created_before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).length, 8);

  for (const [q, field] of [
    ['type=bonus', 'query.type'],
    ['created_after=yesterday', 'query.created_after'],
    ['created_before=2026-13-01T00:00:00Z', 'query.created_before'],
    ['cursor=bm90LWEtY3Vyc29y', 'query.cursor'],
    ['limit=0', 'query.limit'],
  ]) {
    const res = await get(ws, `credits/transactions?${q}`);
    t.equal(res.status, 400, q);
    t.match(res.body.error, { code: 'bad_request', retryable: false }, q);
    t.match(JSON.stringify(res.body.error.context), field, `${q} names ${field}`);
  }
});

t.test("another workspace's rows never appear; scopes and plan", async (t) => {
  const a = await app.workspace({ credits: 300 });
  const b = await app.workspace({ credits: 500 });
  await post(b, 'generations', { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'B sale' });
  await grantCredits(ctx.db, b.orgId, 9);
  const aRows = await allRows(a);
  t.same(
    aRows.map((r) => r.amount),
    [300],
  );
  t.equal((await get(a, 'credits')).body.available, 300);
  // B's cursor (its newest id) lists only A's older rows.
  const bFirst = await get(b, 'credits/transactions?limit=1');
  const withB = await get(a, `credits/transactions?cursor=${bFirst.body.next_cursor}`);
  t.same(
    withB.body.data.map((r: Obj) => r.amount),
    [300],
  );
  for (const type of ['charge', 'grant']) {
    t.ok(
      (await allRows(a, `type=${type}`)).every((r) => aRows.some((x) => x.id === r.id)),
      type,
    );
  }

  const writer = await app.workspace({ credits: 1, scopes: ['generations:write'] });
  t.equal((await get(writer, 'credits')).status, 200, 'generations:write reads too');
  const social = await app.workspace({ credits: 1, scopes: ['social:read'] });
  for (const p of ['credits', 'credits/transactions']) {
    const res = await get(social, p);
    t.equal(res.status, 403, `${p}: a key without generations:read is forbidden`);
    t.equal(res.body.error.code, 'forbidden');
  }
  const none = await app.request('GET', '/api/v1/credits');
  t.equal(none.status, 401);
  const free = await app.workspace({ credits: 5, plan: 'none' });
  t.equal((await get(free, 'credits')).status, 402, 'as every REST operation: a paid plan');
});
