// Scale-out on one machine, measured: 2 API nodes (API_ONLY=1) and 2 worker processes (`npm run
// worker`) on one PostgreSQL (the embedded one, started by the first node) and one DATA_DIR.
// Generations, editor exports and reference analyses go in through both API nodes; every job runs
// exactly once (DB state), maintenance runs on one node at a time, an API-key revocation is refused
// at once on both nodes, the rate limit is shared, and kill -9 of the worker rendering a video loses
// nothing: the other worker finishes it, charged once, and the killed attempt's work folder is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgBoss } from 'pg-boss';
import sharp from 'sharp';
import t from 'tap';
import { connect } from '../../src/db/client.ts';
import { createApiKey, revokeApiKey, SCOPES } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-nodes-'));
if (process.getuid?.() === 0) fs.chmodSync(dataDir, 0o755);
const pgDir = path.join(dataDir, 'pg');
const children = new Set<ChildProcess>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RATE_LIMIT = 8;

function postmasterPid(): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

t.teardown(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  const pid = postmasterPid();
  if (pid) process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && postmasterPid(); i++) await sleep(50);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Proc {
  name: string;
  child: ChildProcess;
  ready: Promise<void>;
  output(): string;
  base(): string;
  exited: Promise<number | null>;
}

function start(name: string, script: string, env: Record<string, string>, ready: RegExp): Proc {
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      DEMO_WORKSPACE: '0',
      MEDIA_SIGNING_SECRET: 'many-nodes',
      RATE_LIMIT_GENERATIONS: String(RATE_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: '300',
      JOB_HEARTBEAT_SECONDS: '10',
      IMAGE_CONCURRENCY: '2',
      VIDEO_CONCURRENCY: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    name,
    child,
    output: () => out,
    base: () => /API listening on (\S+)\/api\/v1/.exec(out)![1],
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    ready: (async () => {
      for (const deadline = Date.now() + 90_000; !ready.test(out); await sleep(50)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not become ready:\n${out}`);
      }
    })(),
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(200)) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

t.test('2 API nodes and 2 workers on one PostgreSQL and one DATA_DIR', async (t) => {
  const started = Date.now();
  // The first API node starts the embedded cluster; the others attach to it.
  const a = start('api-a', 'src/main.ts', { API_ONLY: '1' }, /API listening on \S+/);
  await a.ready;
  const b = start('api-b', 'src/main.ts', { API_ONLY: '1' }, /API listening on \S+/);
  const w1 = start('worker-1', 'src/worker-main.ts', {}, /worker: running queues/);
  const w2 = start('worker-2', 'src/worker-main.ts', {}, /worker: running queues/);
  await Promise.all([b.ready, w1.ready, w2.ready]);
  t.comment(`4 processes up in ${Date.now() - started} ms`);
  t.match(a.output(), /\(workers off\)/);
  t.match(b.output(), /\(workers off\)/);
  const apis = [a, b];

  const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
  const port = Number(fs.readFileSync(path.join(dataDir, 'pg-port'), 'utf8'));
  const url = `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/media_api`;
  const { db, sql } = connect(url, 2);
  t.teardown(() => sql.end());
  const workspace = async (name: string) => {
    const org = await createOrganization(db, { name, plan: 'paid', credits: 100_000 });
    const { id, key } = await createApiKey(db, { orgId: org.id, scopes: [...SCOPES] });
    return { orgId: org.id, keyId: id, key };
  };
  const call = async (node: Proc, method: string, p: string, key: string, body?: unknown) => {
    const res = await fetch(`${node.base()}/api/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  // ---- revocation reaches both nodes at once ----
  const rev = await workspace('Revoked');
  for (const node of apis)
    t.equal((await call(node, 'GET', '/assets', rev.key)).status, 200, `${node.name}: the key works (and is cached)`);
  await revokeApiKey(db, rev.keyId);
  const afterRevoke = await Promise.all(apis.map((node) => call(node, 'GET', '/assets', rev.key)));
  t.same(
    afterRevoke.map((r) => r.status),
    [401, 401],
    'right after the revocation both nodes refuse the key',
  );

  // ---- the rate limit is shared by the nodes ----
  const limited = await workspace('Limited');
  const burst = await Promise.all(
    Array.from({ length: RATE_LIMIT + 4 }, (_, i) =>
      call(apis[i % 2], 'POST', '/generations', limited.key, {
        type: 'static_ad',
        template_slug: 'bold-sale-banner',
        prompt: `Burst ${i}`,
      }),
    ),
  );
  const accepted = burst.filter((r) => r.status === 200);
  t.equal(accepted.length, RATE_LIMIT, `${RATE_LIMIT} of ${RATE_LIMIT + 4} accepted across both nodes (one shared window)`);
  t.same(
    [...new Set(burst.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.error?.code}`))],
    ['429 rate_limited'],
    'the rest: 429',
  );

  // ---- generations, exports and reference analyses through both nodes ----
  const ws = await workspace('Work');
  const gens = (
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        call(apis[i % 2], 'POST', '/generations', ws.key, { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: `Work ${i}` }),
      ),
    )
  ).map((r) => {
    if (r.status !== 200) throw new Error(`generation: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.generations[0].id as string;
  });
  const png = (color: string) =>
    sharp({ create: { width: 64, height: 64, channels: 3, background: color } })
      .png()
      .toBuffer();
  const refs = await Promise.all(
    ['#ff0000', '#0000ff'].map(async (color, i) => {
      const r = await call(apis[i], 'POST', '/reference-inspirations', ws.key, {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'ref.png', data: (await png(color)).toString('base64') }],
      });
      if (r.status !== 200) throw new Error(`reference: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    }),
  );
  const exportsQueued = await Promise.all(
    [0, 1].map(async (i) => {
      const p = await call(apis[i], 'POST', '/editor/videos', ws.key, {
        title: `Project ${i}`,
        aspect_ratio: '16:9',
        width: 320,
        height: 180,
        fps: 10,
      });
      if (p.status !== 200) throw new Error(`project: ${p.status} ${JSON.stringify(p.body)}`);
      const e = await call(apis[1 - i], 'PATCH', `/editor/videos/${p.body.id}`, ws.key, {
        operations: [{ type: 'add_text', text: 'Hello', from_seconds: 0, duration_seconds: 1 }],
      });
      if (e.status !== 200) throw new Error(`edit: ${e.status} ${JSON.stringify(e.body)}`);
      const q = await call(apis[i], 'POST', `/editor/videos/${p.body.id}/exports`, ws.key, { quality: 'draft' });
      if (q.status !== 200) throw new Error(`export: ${q.status} ${JSON.stringify(q.body)}`);
      return q.body.id as string;
    }),
  );

  // ---- maintenance: one node at a time (6 jobs at once; both workers are up) ----
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', supervise: false, schedule: false, max: 1 });
  await boss.start();
  for (let i = 0; i < 6; i++) await boss.send('maintenance', {});
  await boss.stop({ graceful: false });

  // ---- everything settles: each job ran exactly once ----
  const generationRows = async (ids: string[]) =>
    sql<{ id: string; status: string; attempts: number }[]>`select id, status, attempts from generations where id = any(${ids}::uuid[])`;
  const settled = await waitFor(
    'the generations, exports and analyses to finish',
    async () => {
      const g = await generationRows([...gens, ...accepted.map((r) => r.body.generations[0].id as string)]);
      const e = await sql<
        { status: string; attempts: number }[]
      >`select status, attempts from editor_exports where id = any(${exportsQueued}::uuid[])`;
      const r = await sql<{ status: string }[]>`select status from reference_inspirations where id = any(${refs}::uuid[])`;
      const busy =
        g.some((x) => x.status === 'generating') ||
        e.some((x) => x.status === 'queued' || x.status === 'rendering') ||
        r.some((x) => x.status === 'processing');
      return busy ? undefined : { g, e, r };
    },
    90_000,
  );
  t.same(
    [...new Set(settled.g.map((x) => `${x.status}/${x.attempts}`))],
    ['completed/1'],
    `all ${settled.g.length} generations completed, each attempted once`,
  );
  t.same(
    settled.e.map((x) => `${x.status}/${x.attempts}`),
    ['completed/1', 'completed/1'],
    'both exports completed, each rendered once',
  );
  t.same(
    settled.r.map((x) => x.status),
    ['ready', 'ready'],
    'both references analysed',
  );
  const jobs = await sql<{ name: string; n: number }[]>`
    select name, count(*)::int as n from pgboss.job
    where data->>'generationId' = any(${[...gens, ...accepted.map((r) => r.body.generations[0].id as string)]}) group by name`;
  t.same(
    jobs.map((j) => j.n).reduce((x, y) => x + y, 0),
    gens.length + accepted.length,
    'one pg-boss job per generation (none sent twice)',
  );
  const doubled =
    await sql`select reference, count(*)::int as n from credit_ledger where org_id = ${ws.orgId} and delta < 0 group by reference having count(*) > 1`;
  t.same(doubled, [], 'no operation charged twice');
  const [{ credits, ledger }] = await sql<{ credits: number; ledger: number }[]>`
    select (select credits from organizations where id = ${ws.orgId})::int as credits,
           (select coalesce(sum(delta), 0) from credit_ledger where org_id = ${ws.orgId})::int as ledger`;
  t.equal(credits, ledger, 'balance = ledger sum');
  t.ok(credits < 100_000, 'the work was charged');

  // ---- then kill -9 of the worker rendering a video: the other finishes it, charged once ----
  const killed = await workspace('Killed');
  const catalog = (await (await fetch(`${a.base()}/api/v1/models`)).json()) as { video_ads: { slug: string }[] };
  const video = await call(b, 'POST', '/generations', killed.key, {
    type: 'video_ad',
    template_slug: catalog.video_ads[0].slug,
    prompt: 'Kill me',
  });
  t.equal(video.status, 200);
  const videoId = video.body.generations[0].id as string;
  const owner = path.join(dataDir, 'tmp', `gen-${videoId}`, '.owner');
  const ownerPid = await waitFor(
    'the video render to start',
    async () => (fs.existsSync(owner) ? (JSON.parse(fs.readFileSync(owner, 'utf8')) as { pid: number }).pid : undefined),
    60_000,
  );
  const victim = [w1, w2].find((w) => w.child.pid === ownerPid);
  t.ok(victim, `a worker process renders it (pid ${ownerPid})`);
  await sleep(300);
  victim!.child.kill('SIGKILL');
  const killedAt = Date.now();
  const survivor = victim === w1 ? w2 : w1;

  const videoRow = await waitFor(
    'the killed render to finish on the other worker',
    async () => {
      const [row] = await generationRows([videoId]);
      return row.status === 'generating' ? undefined : row;
    },
    90_000,
  );
  t.equal(videoRow.status, 'completed', `the video completed on the surviving worker (${Date.now() - killedAt} ms after the kill)`);
  t.equal(videoRow.attempts, 2, 'in a second attempt');
  t.equal(survivor.child.exitCode, null, 'the surviving worker is alive');
  const killedLedger = await sql<{ delta: number }[]>`select delta from credit_ledger where org_id = ${killed.orgId} order by id`;
  const charges = killedLedger.filter((l) => l.delta < 0);
  t.equal(charges.length, 1, 'the video was charged once');
  t.equal(killedLedger.filter((l) => l.delta > 0).length, 1, 'and never refunded (only the initial grant is positive)');
  t.notOk(fs.existsSync(path.join(dataDir, 'tmp', `gen-${videoId}`)), "the killed attempt's work folder is gone");

  // Maintenance ran, never on two nodes at once.
  const runs = [w1, w2].flatMap((w) =>
    w
      .output()
      .split('\n')
      .filter((l) => l.includes('"maintenance: ran"'))
      .map((l) => JSON.parse(l) as { pid: number; started_at: number; finished_at: number }),
  );
  const skipped = [w1, w2].reduce((n, w) => n + (w.output().match(/maintenance: running on another node/g) ?? []).length, 0);
  t.ok(runs.length >= 1, `maintenance ran ${runs.length} times, skipped ${skipped} times (another node held it)`);
  const sorted = runs.sort((x, y) => x.started_at - y.started_at);
  const overlaps = sorted.filter((r, i) => i > 0 && r.started_at < sorted[i - 1].finished_at && r.pid !== sorted[i - 1].pid);
  t.same(overlaps, [], 'no two maintenance runs overlapped');

  // Everything stops cleanly; the last one out stops the cluster.
  for (const p of [a, b, survivor]) p.child.kill('SIGTERM');
  t.same(await Promise.all([a, b, survivor].map((p) => p.exited)), [0, 0, 0], 'the processes exit 0');
  for (const deadline = Date.now() + 15_000; postmasterPid() && Date.now() < deadline; ) await sleep(50);
  t.equal(postmasterPid(), undefined, 'the embedded PostgreSQL stopped with the last process');
  t.comment(`whole scenario: ${Date.now() - started} ms`);
});
