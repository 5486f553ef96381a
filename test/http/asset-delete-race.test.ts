// Deleting a workspace asset (or replacing what queued work reads of it) while paid work naming it
// is being charged. "In use" and "deleted" are exclusive in PostgreSQL: either the work commits
// first and the delete answers 409, or the delete commits first and the work answers 404 naming the
// field with nothing charged. Never both: no work charged (200) then fails because the asset it
// reads at run time is gone, and no delete succeeds while work naming the asset is still queued.
//
// The requests are sent in the same instant over real HTTP, and again with one side held in the
// middle of its transaction (see Meeting) so that each order is met on every run; the deletes go to
// a second API node on the same database (and the same storage), as with several API nodes in
// production. The workers (on the first node) then run every charged job to its end, and the
// balance and the ledger are checked against what completed.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { ledgerSum } from '../../src/services/billing/credits.ts';
import { findTemplate } from '../../src/services/catalog/catalog-data.ts';
import { startTestApp, type ApiResponse } from '../helpers/app.ts';

const ENV = { RATE_LIMIT_GENERATIONS: '1000', GENERATION_RETRY_LIMIT: '0' };
const app = await startTestApp(t, ENV, { workers: true });
// The second node: same database, same stored media (local storage under DATA_DIR), no workers.
const node2 = await startTestApp(t, { ...ENV, DATA_DIR: app.service.ctx.config.dataDir }, { databaseUrl: app.databaseUrl });
const sql = app.service.ctx.sql;
const db = app.service.ctx.db;

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'asset-race-'));
t.teardown(() => fs.rm(dir, { recursive: true, force: true }));

const STATIC = findTemplate('bold-sale-banner')!;
const INITIAL = 100_000;
const LOGO = (
  await sharp({ create: { width: 300, height: 120, channels: 3, background: '#ffff00' } })
    .png()
    .toBuffer()
).toString('base64');
const PORTRAIT = (
  await sharp({ create: { width: 400, height: 400, channels: 3, background: '#e0ac8c' } })
    .png()
    .toBuffer()
).toString('base64');
const sampleFile = path.join(dir, 'voice.wav');
await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=110:duration=4', '-f', 'wav', sampleFile], { cwd: dir });
const SAMPLE = (await fs.readFile(sampleFile)).toString('base64');

/** A kind of paid work: where it is posted, the ids of what it queued, and the table its rows live in. */
interface WorkKind {
  path: string;
  ids(body: any): string[];
  table: 'generations' | 'slideshows' | 'faceless_videos';
  idColumn: 'id' | 'video_id';
}
const GENERATION: WorkKind = {
  path: '/api/v1/generations',
  ids: (b) => b.generations.map((g: { id: string }) => g.id),
  table: 'generations',
  idColumn: 'id',
};
const SLIDESHOW: WorkKind = { path: '/api/v1/slideshows', ids: (b) => [b.slideshow_id], table: 'slideshows', idColumn: 'id' };
const FACELESS: WorkKind = {
  path: '/api/v1/faceless-videos',
  ids: (b) => [String(b.video_id)],
  table: 'faceless_videos',
  idColumn: 'video_id',
};

interface WorkRequest {
  kind: WorkKind;
  body: Record<string, unknown>;
  /** The field naming the asset: a work refused because the asset is gone is a 404 naming it. */
  field: string;
}

interface Finished {
  status: string;
  credits: number;
  completedAt: Date | null;
  error: unknown;
  spec: any;
}

async function finished(kind: WorkKind, id: string): Promise<Finished> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [row] =
      await sql`select status, credits, completed_at, error, spec from ${sql(kind.table)} where ${sql(kind.idColumn)}::text = ${id}`;
    if (row && (row.status === 'completed' || row.status === 'error')) {
      return { status: row.status, credits: row.credits, completedAt: row.completed_at, error: row.error, spec: row.spec };
    }
    if (Date.now() > deadline) throw new Error(`${kind.table} ${id} still ${row?.status} after 300 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Race {
  /** The delete (or change) sent to the second node, and when its answer arrived. */
  change: ApiResponse;
  changedAt: Date;
  works: { req: WorkRequest; res: ApiResponse }[];
}

/**
 * How the two sides meet. `instant`: every request in the same instant, the change among them.
 * The other two hold one side in the middle of its transaction (a lock this test holds, as a busy
 * database would) until the other side has arrived, so that each order is met every time:
 * `charges`: the work requests have checked the asset and written their rows, and wait to deduct
 * the credits (the workspace row is locked) when the change is sent; `change`: the change has
 * found the asset and waits to read the work tables (locked) when the work requests are sent.
 */
type Meeting = 'instant' | 'charges' | 'change';

const holder = postgres(app.databaseUrl, { max: 1, onnotice: () => {} });
t.teardown(() => holder.end());

/** Until `n` sessions of the test database wait for a lock, or `done` settles (10 s at most: what the assertions see then decides). */
async function waiting(n: number, done?: Promise<unknown>): Promise<void> {
  let settled = false;
  void done?.then(() => (settled = true));
  const deadline = Date.now() + 10_000;
  while (!settled && Date.now() < deadline) {
    const [{ count }] =
      await sql`select count(*)::int as count from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function race(
  ws: { orgId: string; key: string },
  works: WorkRequest[],
  change: () => Promise<ApiResponse>,
  meeting: Meeting = 'instant',
): Promise<Race> {
  let counter = 0;
  const post = (req: WorkRequest) => ({
    req,
    res: app.request('POST', req.kind.path, {
      key: ws.key,
      body: req.body,
      headers: { 'idempotency-key': `race-${counter++}-${Math.random()}` },
    }),
  });
  const changing = () => change().then((res) => ({ res, at: new Date() }));
  let sent: ReturnType<typeof post>[];
  let changed: ReturnType<typeof changing>;
  if (meeting === 'instant') {
    // Each call starts its request before it returns: the change goes out between the two halves.
    const half = Math.floor(works.length / 2);
    const first = works.slice(0, half).map(post);
    changed = changing();
    sent = [...first, ...works.slice(half).map(post)];
  } else {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const hold = holder.begin(async (tx) => {
      if (meeting === 'charges') await tx`select 1 from organizations where id = ${ws.orgId} for update`;
      else await tx`lock table generations, slideshows, faceless_videos in access exclusive mode`;
      holding();
      await released;
    });
    await held;
    try {
      if (meeting === 'charges') {
        sent = works.map(post);
        await waiting(works.length);
        changed = changing();
        await waiting(works.length + 1, changed);
      } else {
        changed = changing();
        await waiting(1, changed);
        sent = works.map(post);
        await waiting(works.length + 1);
      }
    } finally {
      release();
      await hold;
    }
  }
  const settled = await Promise.all(sent.map(async (s) => ({ req: s.req, res: await s.res })));
  const { res, at } = await changed;
  return { change: res, changedAt: at, works: settled };
}

/**
 * The outcome of a race is one of the two exclusive ones; every charged work completes; what was
 * refused wrote and charged nothing. `reads(row)` says whether a charged work reads the part of the
 * asset the change removed (then it must have finished before the change answered 200).
 */
async function checkRace(t: Test, orgId: string, r: Race, what: string, reads: (f: Finished) => boolean = () => true) {
  t.ok([200, 409].includes(r.change.status), `${what}: ${r.change.status} ${r.change.text.slice(0, 300)}`);
  if (r.change.status === 409) t.match(r.change.body.error, { code: 'conflict', context: { field: 'path.id' } });
  let accepted = 0;
  let charged = 0;
  let rows = 0;
  for (const { req, res } of r.works) {
    if (res.status !== 200) {
      t.equal(res.status, 404, `a work request is accepted or finds the asset gone: ${res.text.slice(0, 300)}`);
      t.match(res.body.error, { code: 'not_found', context: { field: req.field } }, 'the 404 names the field');
      t.equal(r.change.status, 200, 'a work request is refused only when the change went first');
      continue;
    }
    accepted++;
    for (const id of req.kind.ids(res.body)) {
      rows++;
      const f = await finished(req.kind, id);
      t.equal(f.status, 'completed', `${req.kind.table} ${id} charged in the race completes (${JSON.stringify(f.error)})`);
      if (f.status === 'completed') charged += f.credits;
      if (r.change.status === 200 && reads(f)) {
        t.ok(
          f.completedAt && f.completedAt <= r.changedAt,
          `${what} answered 200 while ${req.kind.table} ${id}, charged for it, was still queued or running`,
        );
      }
    }
  }
  t.comment(`${what}: ${r.change.status}; ${accepted} of ${r.works.length} work requests accepted`);
  const [{ n }] = await sql`
    select (select count(*) from generations where org_id = ${orgId}) + (select count(*) from slideshows where org_id = ${orgId})
         + (select count(*) from faceless_videos where org_id = ${orgId}) as n`;
  t.equal(Number(n), rows, 'the refused requests wrote no rows');
  const [{ credits }] = await sql`select credits from organizations where id = ${orgId}`;
  t.equal(credits, INITIAL - charged, 'the balance is the initial one less what completed');
  t.equal(await ledgerSum(db, orgId), credits, 'and equals the ledger sum');
}

async function created(res: Promise<ApiResponse>): Promise<any> {
  const r = await res;
  if (r.status !== 200) throw new Error(`creating an asset: ${r.status} ${r.text}`);
  return r.body;
}

const staticAd = (extra: Record<string, unknown>): Record<string, unknown> => ({
  type: 'static_ad',
  template_slug: STATIC.slug,
  prompt: 'Summer sale',
  ...extra,
});

/** The meetings each race runs through: the same instant `instant` times, then each order held. */
const meetings = (instant: number): Meeting[] => [...Array.from({ length: instant }, () => 'instant' as const), 'charges', 'change'];

t.test('a brand kit deleted in the same instant as 12 generations naming it', async (t) => {
  for (const [run, meeting] of meetings(3).entries()) {
    const ws = await app.workspace({ credits: INITIAL });
    const kit = await created(
      app.request('POST', '/api/v1/brand-kits', { key: ws.key, body: { name: `Kit ${run}`, colors: { primary: '#123456' }, logo: LOGO } }),
    );
    const works = Array.from({ length: 12 }, () => ({
      kind: GENERATION,
      body: staticAd({ brand_kit_id: kit.id }),
      field: 'body.brand_kit_id',
    }));
    const r = await race(ws, works, () => node2.request('DELETE', `/api/v1/brand-kits/${kit.id}`, { key: ws.key }), meeting);
    await checkRace(t, ws.orgId, r, `${meeting} ${run}: DELETE /brand-kits/${kit.id}`);
    t.equal((await fetch(kit.logo_url)).status, r.change.status === 200 ? 404 : 200, 'the logo is stored exactly while the kit exists');
  }
});

t.test("a brand kit's logo removed in the same instant as generations that read it", async (t) => {
  for (const [run, meeting] of meetings(1).entries()) {
    const ws = await app.workspace({ credits: INITIAL });
    const kit = await created(app.request('POST', '/api/v1/brand-kits', { key: ws.key, body: { name: `Kit ${run}`, logo: LOGO } }));
    const works = Array.from({ length: 8 }, () => ({
      kind: GENERATION,
      body: staticAd({ brand_kit_id: kit.id }),
      field: 'body.brand_kit_id',
    }));
    const r = await race(
      ws,
      works,
      () => node2.request('PATCH', `/api/v1/brand-kits/${kit.id}`, { key: ws.key, body: { logo: null } }),
      meeting,
    );
    // Generations charged after the logo went have no logo to read: only those charged with it count.
    await checkRace(t, ws.orgId, r, `${meeting} ${run}: PATCH /brand-kits/${kit.id} {logo: null}`, (f) =>
      Boolean(f.spec.brandKit?.logoKey),
    );
    t.equal((await fetch(kit.logo_url)).status, r.change.status === 200 ? 404 : 200, 'the old logo is stored exactly while the kit has it');
  }
});

t.test('an avatar deleted in the same instant as generations and slideshows featuring it', async (t) => {
  for (const [run, meeting] of meetings(1).entries()) {
    const ws = await app.workspace({ credits: INITIAL });
    const avatar = await created(app.request('POST', '/api/v1/avatars', { key: ws.key, body: { name: `Face ${run}`, image: PORTRAIT } }));
    const works: WorkRequest[] = [
      ...Array.from({ length: 6 }, () => ({
        kind: GENERATION,
        body: staticAd({ template_slug: 'product-spotlight', avatar_id: avatar.id }),
        field: 'body.avatar_id',
      })),
      ...Array.from({ length: 2 }, () => ({
        kind: SLIDESHOW,
        body: { prompt: 'Three reasons to drink water', slide_count: 3, aspect_ratio: '1:1', avatar_id: avatar.id },
        field: 'body.avatar_id',
      })),
    ];
    const r = await race(ws, works, () => node2.request('DELETE', `/api/v1/avatars/${avatar.id}`, { key: ws.key }), meeting);
    await checkRace(t, ws.orgId, r, `${meeting} ${run}: DELETE /avatars/${avatar.id}`);
    t.equal(
      (await fetch(avatar.imageUrl)).status,
      r.change.status === 200 ? 404 : 200,
      'the portrait is stored exactly while the avatar exists',
    );
  }
});

t.test('a custom voice deleted in the same instant as faceless videos spoken by it', async (t) => {
  for (const [run, meeting] of meetings(1).entries()) {
    const ws = await app.workspace({ credits: INITIAL });
    const voice = await created(
      app.request('POST', '/api/v1/voices', { key: ws.key, body: { name: `Deep ${run}`, language: 'en-US', sample: SAMPLE } }),
    );
    const works = Array.from({ length: 3 }, () => ({
      kind: FACELESS,
      body: { script: 'Hello there. Bye now.', duration: '5', voice_id: voice.id },
      field: 'body.voice_id',
    }));
    const r = await race(ws, works, () => node2.request('DELETE', `/api/v1/voices/${voice.id}`, { key: ws.key }), meeting);
    await checkRace(t, ws.orgId, r, `${meeting} ${run}: DELETE /voices/${voice.id}`);
    t.equal(
      (await fetch(voice.preview_url)).status,
      r.change.status === 200 ? 404 : 200,
      'the sample is stored exactly while the voice exists',
    );
  }
});
