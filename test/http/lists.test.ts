// GET /generations, /slideshows and /videos (issue 26, lists): newest first by (created_at, id),
// each item exactly as its GET by id answers, the filters, keyset pages that never repeat or skip
// a row (ties on created_at, rows apart by microseconds, rows inserted while paging), a signed
// cursor honoured only by its own list, workspace and filters (400 naming `cursor`), tenant
// isolation and scopes. The same operations over MCP: test/mcp/lists.test.ts. No workers run: the
// work created stays queued.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '10000' });
const ctx: AppContext = app.service.ctx;
type Ws = Awaited<ReturnType<TestApp['workspace']>>;
const ws = await app.workspace({ credits: 100_000 });
const other = await app.workspace({ credits: 100_000 });

const post = async (w: Ws, path: string, body: object) => {
  const res = await app.request('POST', `/api/v1/${path}`, { key: w.key, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
};
const get = (w: Ws, path: string) => app.request('GET', `/api/v1/${path}`, { key: w.key });

/** Every page of a list (with `query`), following next_cursor; the items in the order served. */
async function all(w: Ws, path: string, query: Record<string, string> = {}, limit = 7): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
    const res = await get(w, `${path}?${q}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

/** Generations written straight into the table at chosen instants (SQL timestamps, microseconds kept). */
async function seedGenerations(orgId: string, rows: { at: string; status?: string; type?: string }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const r of rows) {
    const id = randomUUID();
    await ctx.sql`insert into generations (id, org_id, batch_id, type, status, spec, credits, created_at, updated_at)
      values (${id}, ${orgId}, ${randomUUID()}, ${r.type ?? 'ai_model'}, ${r.status ?? 'generating'}, ${JSON.stringify({ output: 'image' })}::jsonb,
              1, ${r.at}::timestamptz, ${r.at}::timestamptz)`;
    ids.push(id);
  }
  return ids;
}
/** The ids in the order the list must serve them: newest first by (created_at, id). */
async function expectedOrder(table: string, orgId: string, idCol = 'id'): Promise<string[]> {
  const rows = await ctx.sql.unsafe(`select ${idCol}::text as id from ${table} where org_id = $1 order by created_at desc, ${idCol} desc`, [
    orgId,
  ]);
  return rows.map((r) => r.id as string);
}
const unsign = (v: unknown): unknown =>
  typeof v === 'string' && /^https?:\/\//.test(v)
    ? v.replace(/\?.*$/, '')
    : Array.isArray(v)
      ? v.map(unsign)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unsign(x)]))
        : v;

// Real work through the POSTs, then generations seeded around one instant: three with the same
// created_at (the id breaks the tie) and three within one millisecond, microseconds apart.
const made = await post(ws, 'generations', {
  type: 'static_ad',
  template_slug: 'bold-sale-banner',
  prompt: 'Summer sale',
  request_count: 2,
});
await post(ws, 'generations', { type: 'ai_model', model_slug: 'flux-image', prompt: 'A bottle' });
const slideshow = await post(ws, 'slideshows', { prompt: 'Why water beats soda', slide_count: 3 });
const faceless = await post(ws, 'faceless-videos', { script: 'Water keeps you sharp. Drink a glass now.', duration: '6' });
const editor = await post(ws, 'editor/videos', { title: 'Plain project' });
await post(other, 'generations', { type: 'ai_model', model_slug: 'flux-image', prompt: 'Not yours' });
await post(other, 'editor/videos', { title: 'Not yours either' });
const seeded = await seedGenerations(ws.orgId, [
  { at: '2026-01-01T00:00:00.000100Z', status: 'generating', type: 'static_ad' },
  { at: '2026-01-01T00:00:00.000100Z', status: 'error', type: 'static_ad' },
  { at: '2026-01-01T00:00:00.000100Z', status: 'canceled', type: 'video_ad' },
  { at: '2026-01-01T00:00:00.000400Z', status: 'error', type: 'ugc_ad' },
  { at: '2026-01-01T00:00:00.000900Z', status: 'error', type: 'video_ad' },
  ...Array.from({ length: 20 }, (_, i) => ({
    at: `2025-12-${String(i + 1).padStart(2, '0')}T12:00:00Z`,
    status: i % 2 ? 'error' : 'generating',
  })),
]);

t.test('GET /generations: every generation once, newest first by (created_at, id), as GET /generations/{id} shows it', async (t) => {
  const want = await expectedOrder('generations', ws.orgId);
  t.equal(want.length, 3 + seeded.length);
  for (const limit of [1, 2, 3, 7, 100]) {
    const got = await all(ws, 'generations', {}, limit);
    t.same(
      got.map((g) => g.id),
      want,
      `limit ${limit}: the same rows in the same order (ties and microseconds included)`,
    );
  }
  const first = await get(ws, 'generations');
  t.equal(first.body.object, 'list');
  t.equal(first.body.next_cursor, null, 'all of them fit the default page of 30');
  for (const g of first.body.data) {
    const one = await get(ws, `generations/${g.id}`);
    t.same(unsign(g), unsign(one.body), `${g.id}: the list item is GET /generations/{id}`);
  }
  t.ok(made.generations.every((g: { id: string }) => want.includes(g.id)));
});

t.test('GET /generations filters: status, type, created_after, created_before, and all at once', async (t) => {
  // What the database says each filter selects.
  const ids = async (where: string, ...args: string[]) =>
    (await ctx.sql.unsafe(`select id::text as id from generations where org_id = $1 and ${where} order by id`, [ws.orgId, ...args])).map(
      (r) => r.id as string,
    );
  const sorted = (xs: any[]) => xs.map((g) => g.id).sort();
  t.same(sorted(await all(ws, 'generations', { status: 'error' }, 3)), await ids(`status = 'error'`));
  t.same(sorted(await all(ws, 'generations', { type: 'video_ad' }, 1)), await ids(`type = 'video_ad'`));
  const after = '2026-01-01T00:00:00.000100Z';
  const afterIds = await ids('created_at > $2::timestamptz', after);
  t.same(sorted(await all(ws, 'generations', { created_after: after }, 2)), afterIds, 'created_after is exclusive, to the microsecond');
  t.notOk(afterIds.includes(seeded[0]) || afterIds.includes(seeded[2]));
  t.ok(afterIds.includes(seeded[3]), '300 µs later is after');
  t.same(
    sorted(await all(ws, 'generations', { created_before: '2025-12-10T12:00:00Z' }, 4)),
    await ids(`created_at < '2025-12-10T12:00:00Z'`),
  );
  const mixed = { status: 'error', type: 'ai_model', created_after: '2025-12-03T00:00:00Z', created_before: '2025-12-15T00:00:00Z' };
  const got = await all(ws, 'generations', mixed, 2);
  t.same(
    sorted(got),
    await ids(`status = 'error' and type = 'ai_model' and created_at > '2025-12-03T00:00:00Z' and created_at < '2025-12-15T00:00:00Z'`),
  );
  t.ok(got.length > 2, 'several pages');
  t.equal((await get(ws, 'generations?status=done')).status, 400, 'an unknown status is a 400');
  const bad = await get(ws, 'generations?created_after=yesterday');
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body.error), /created_after/);
});

t.test('pages stay stable while generations are inserted: nothing repeated, nothing skipped', async (t) => {
  const want = await expectedOrder('generations', ws.orgId);
  const seen: string[] = [];
  let cursor: string | null = null;
  let round = 0;
  do {
    const res = await get(ws, `generations?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...res.body.data.map((g: { id: string }) => g.id));
    cursor = res.body.next_cursor;
    // Between pages: a new generation now, and one at the very instant of the last row served.
    await post(ws, 'generations', { type: 'ai_model', model_slug: 'flux-image', prompt: `Inserted ${round++}` });
    const last = res.body.data.at(-1);
    if (last) {
      const [at] = await ctx.sql`select created_at::text as at from generations where id = ${last.id}`;
      await seedGenerations(ws.orgId, [{ at: at.at }]);
    }
  } while (cursor);
  const seenNow = new Set(seen);
  t.equal(seenNow.size, seen.length, 'no row twice');
  t.ok(
    want.every((id) => seenNow.has(id)),
    'every row that existed when paging began was served',
  );
});

t.test('the cursor: bound to its list, its workspace and its filters; anything else is a 400 naming cursor', async (t) => {
  const page = await get(ws, 'generations?limit=2&status=error');
  const cursor = page.body.next_cursor as string;
  t.ok(cursor);
  t.ok(cursor.length <= 200);
  t.equal((await get(ws, `generations?limit=5&status=error&cursor=${cursor}`)).status, 200, 'the limit may change between pages');
  const refused = async (w: Ws, path: string, why: string) => {
    const res = await get(w, path);
    t.equal(res.status, 400, why);
    t.equal(res.body.error?.code, 'bad_request');
    t.match(JSON.stringify(res.body.error?.context), /query\.cursor/, `${why}: names cursor`);
  };
  await refused(ws, `generations?limit=2&cursor=${cursor}`, 'without the filter');
  await refused(ws, `generations?limit=2&status=completed&cursor=${cursor}`, 'another status');
  await refused(ws, `generations?limit=2&status=error&type=ai_model&cursor=${cursor}`, 'a filter added');
  await refused(ws, `generations?limit=2&status=error&created_after=2020-01-01T00:00:00Z&cursor=${cursor}`, 'a date added');
  await refused(other, `generations?limit=2&status=error&cursor=${cursor}`, 'another workspace');
  await refused(ws, `slideshows?status=error&cursor=${cursor}`, 'another list');
  const [at, id, sig] = Buffer.from(cursor, 'base64url').toString('latin1').split('|');
  const forged = Buffer.from(`${at.replace(/\d(?=Z$)/, (d) => String((Number(d) + 1) % 10))}|${id}|${sig}`, 'latin1').toString('base64url');
  await refused(ws, `generations?limit=2&status=error&cursor=${forged}`, 'a position changed');
  await refused(ws, 'generations?cursor=bm90LWEtY3Vyc29y', 'not a cursor');
  const old = Buffer.from(JSON.stringify({ c: '2026-01-01T00:00:00Z', i: id })).toString('base64url');
  await refused(ws, `generations?cursor=${old}`, 'an editor-style cursor');
});

t.test('GET /slideshows: each slideshow once, as GET /slideshows/{id} shows it; filtered by status', async (t) => {
  for (let i = 0; i < 4; i++) await post(ws, 'slideshows', { prompt: `Tip ${i}`, slide_count: 3 });
  await ctx.sql`update slideshows set status = 'generating', stage = 'slides' where id = ${slideshow.slideshow_id}`;
  const want = await expectedOrder('slideshows', ws.orgId);
  const got = await all(ws, 'slideshows', {}, 2);
  t.same(
    got.map((s) => s.id),
    want,
  );
  for (const s of got) t.same(unsign(s), unsign((await get(ws, `slideshows/${s.id}`)).body), `${s.id} as GET shows it`);
  t.same(
    (await all(ws, 'slideshows', { status: 'generating' })).map((s) => s.id),
    [slideshow.slideshow_id],
  );
  t.same((await all(other, 'slideshows')).length, 0, 'another workspace sees none');
});

t.test(
  'GET /videos: faceless and editor (slideshow projects included), as GET /videos/{id} shows them; kind and status filters',
  async (t) => {
    const want = (await ctx.sql`select id from videos where org_id = ${ws.orgId} order by created_at desc, id desc`).map((r) =>
      Number(r.id),
    );
    const got = await all(ws, 'videos', {}, 2);
    t.same(
      got.map((v) => v.id),
      want,
    );
    for (const v of got) t.same(unsign(v), unsign((await get(ws, `videos/${v.id}`)).body), `${v.id} as GET shows it`);
    t.same(
      (await all(ws, 'videos', { kind: 'faceless' })).map((v) => v.id),
      [faceless.video_id],
    );
    t.same(
      (await all(ws, 'videos', { status: 'queued' })).map((v) => v.id),
      [faceless.video_id],
    );
    const editors = await all(ws, 'videos', { status: 'ready' }, 3);
    t.ok(editors.length >= 6 && editors.every((v) => v.kind === 'editor'));
    t.ok(editors.some((v) => v.id === editor.id) && editors.some((v) => v.id === slideshow.video_id));
    t.same(await all(ws, 'videos', { kind: 'editor', status: 'queued' }), [], 'editor videos are never queued');
    const mine = new Set(want);
    t.ok(
      (await all(other, 'videos')).every((v) => !mine.has(v.id)),
      'another workspace sees only its own',
    );
  },
);

t.test('scopes: a read key lists; a key without generations scopes is 403; no key is 401', async (t) => {
  const reader = await app.workspace({ scopes: ['generations:read'] });
  const social = await app.workspace({ scopes: ['social:read'] });
  for (const path of ['generations', 'slideshows', 'videos']) {
    t.equal((await get(reader, path)).status, 200, `${path}: read scope`);
    t.equal((await get(social, path)).status, 403, `${path}: other scopes`);
    t.equal((await app.request('GET', `/api/v1/${path}`)).status, 401, `${path}: no key`);
  }
});
