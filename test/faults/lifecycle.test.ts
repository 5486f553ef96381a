// The process lifecycle with real processes on one data folder with its embedded PostgreSQL, as a
// user runs them: SIGTERM stops `npm start` with exit 0 and no error line (several times, to catch
// the race the package's own exit hook had), a job in flight finishes or is released and completes
// after a restart (never lost, charged once), a second signal exits at once, `npm run worker` and
// the admin CLI stop cleanly, and the health probes answer (readyz 503 once the database is gone).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import t, { type Test } from 'tap';
import { startEmbedded } from '../../src/db/embedded.ts';
import { checkResponse } from '../helpers/contract.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-lifecycle-'));
const pgDir = path.join(dataDir, 'pg');
const children = new Set<ChildProcess>();
t.teardown(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  const pid = postmasterPid();
  if (pid) process.kill(pid, 'SIGINT');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Proc {
  child: ChildProcess;
  ready: Promise<void>;
  output(): string;
  exited: Promise<{ code: number | null; ms: number }>;
  signal(sig: NodeJS.Signals): number;
}

function run(script: string, args: string[], env: Record<string, string>, ready: RegExp): Proc {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATA_DIR: dataDir, JOB_HEARTBEAT_SECONDS: '10', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let signalledAt = 0;
  const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
    child.on('exit', (code) => resolve({ code, ms: Date.now() - signalledAt })),
  );
  const waitReady = (async () => {
    const deadline = Date.now() + 90_000;
    while (!ready.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not become ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  waitReady.catch(() => {}); // awaited by the tests that need it; one that stops it early does not
  return {
    child,
    ready: waitReady,
    output: () => out,
    exited,
    signal(sig) {
      signalledAt = Date.now();
      child.kill(sig);
      return signalledAt;
    },
  };
}

const startApi = (env: Record<string, string> = {}, ready = /API listening on \S+/) => run('src/main.ts', [], env, ready);

/** Every JSON log line of the output (the banner lines are plain text). */
function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function assertCleanOutput(t: Test, out: string, what: string) {
  const errors = logLines(out).filter((l) => l.level === 'error' || l.level === 'fatal');
  t.same(errors, [], `${what}: no error-level log line`);
  t.notMatch(
    out,
    /pg-boss error|Unhandled|terminating connection due to administrator command|ERR_UNHANDLED/,
    `${what}: no pg-boss error or unhandled error`,
  );
}

function postmasterPid(): number | undefined {
  const file = path.join(pgDir, 'postmaster.pid');
  if (!fs.existsSync(file)) return undefined;
  const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The embedded cluster's application database, as the service's own credentials reach it. */
function dbUrl(): string {
  const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
  const port = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/media_api`;
}

async function query<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(dbUrl(), { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const baseOf = (p: Proc) => /API listening on (\S+)\/api\/v1/.exec(p.output())![1];

let demoKey: string | undefined;

t.test('SIGTERM stops npm start with exit 0 and no error line, every time; requests are logged one line each', async (t) => {
  for (let i = 1; i <= 3; i++) {
    // The first run creates the demo workspace and prints its key after the API listens.
    const api = startApi({}, i === 1 ? /Try it:[\s\S]*\/models/ : undefined);
    await api.ready;
    demoKey ??= /api key\s+(mapi_[A-Za-z0-9_-]{43})/.exec(api.output())?.[1];
    const base = baseOf(api);
    if (i === 1) {
      // One JSON line per request, with its request id, operation, status and time; no query string.
      t.equal((await fetch(`${base}/healthz`)).status, 200);
      t.equal((await fetch(`${base}/api/v1/models?secret=do-not-log`)).status, 400, 'an unknown query parameter is refused');
      await sleep(200);
      const requests = logLines(api.output()).filter((l) => l.msg === 'request completed');
      t.equal(requests.length, 2, 'one line per request');
      t.match(requests[0], {
        level: 'info',
        reqId: String,
        method: 'GET',
        url: '/healthz',
        operationId: 'getHealth',
        statusCode: 200,
        responseTime: Number,
      });
      t.match(requests[1], { url: '/api/v1/models', operationId: 'listModels', statusCode: 400 });
      t.notMatch(api.output(), /do-not-log/, 'query strings stay out of the logs');
    }
    const pid = postmasterPid();
    t.ok(pid, `run ${i}: the service started the embedded PostgreSQL`);
    api.signal('SIGTERM');
    const { code, ms } = await api.exited;
    t.equal(code, 0, `run ${i}: exit code 0`);
    t.ok(ms < 15_000, `run ${i}: stopped in ${ms} ms (< 15 s)`);
    assertCleanOutput(t, api.output(), `run ${i}`);
    t.equal(postmasterPid(), undefined, `run ${i}: the embedded PostgreSQL was stopped with it`);
  }
  t.ok(demoKey, 'the first run printed the demo key');
});

t.test('a signal during start-up stops what was started, with exit 0', async (t) => {
  const api = startApi();
  // As soon as the embedded PostgreSQL runs, before the API listens.
  const deadline = Date.now() + 30_000;
  while (!postmasterPid() && Date.now() < deadline) await sleep(20);
  t.ok(postmasterPid(), 'the embedded PostgreSQL is starting');
  api.signal('SIGTERM');
  const { code, ms } = await api.exited;
  t.equal(code, 0, 'exit code 0');
  t.ok(ms < 15_000, `stopped in ${ms} ms`);
  assertCleanOutput(t, api.output(), 'start-up');
  t.equal(postmasterPid(), undefined, 'the embedded PostgreSQL was stopped');
});

/** A video generation long enough to be in flight when the signal comes. */
async function queueVideo(base: string, key: string, idempotencyKey: string): Promise<{ id: string }> {
  const catalog = (await (await fetch(`${base}/api/v1/models`)).json()) as { video_ads: { slug: string }[] };
  const res = await fetch(`${base}/api/v1/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ type: 'video_ad', template_slug: catalog.video_ads[0].slug, prompt: 'Lifecycle check' }),
  });
  const body = (await res.json()) as { generations: { id: string }[] };
  if (res.status !== 200) throw new Error(`POST /generations answered ${res.status}: ${JSON.stringify(body)}`);
  return body.generations[0];
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const generationRow = (id: string) =>
  query(async (sql) => {
    const [row] = await sql`select status, attempts, credits, org_id from generations where id = ${id}`;
    return row as { status: string; attempts: number; credits: number; org_id: string };
  });

async function charges(orgId: string) {
  return query(async (sql) => {
    const [org] = await sql`select credits from organizations where id = ${orgId}`;
    const ledger = await sql`select delta, reason, reference from credit_ledger where org_id = ${orgId} order by id`;
    return {
      balance: (org as { credits: number }).credits,
      ledger: ledger as unknown as { delta: number; reason: string; reference: string | null }[],
    };
  });
}

t.test('a job in flight at SIGTERM is released, completes after a restart, and is charged once', async (t) => {
  // A one-second grace period: the video render cannot finish in it, so it is released.
  const api = startApi({ SHUTDOWN_GRACE_SECONDS: '1' });
  await api.ready;
  const before = await query(async (sql) => {
    const [org] = await sql`select o.id, o.credits from organizations o order by o.created_at limit 1`;
    return org as { id: string; credits: number };
  });
  const ledgerBefore = (await charges(before.id)).ledger.length;
  const gen = await queueVideo(baseOf(api), demoKey!, 'lifecycle-release');
  await waitFor('the render to start', async () => ((await generationRow(gen.id)).attempts >= 1 ? true : undefined), 30_000);
  await sleep(300);
  t.equal((await generationRow(gen.id)).status, 'generating', 'still rendering when the signal comes');
  api.signal('SIGTERM');
  const { code, ms } = await api.exited;
  t.equal(code, 0, 'exit code 0');
  t.ok(ms < 15_000, `stopped in ${ms} ms`);
  assertCleanOutput(t, api.output(), 'stop with a job in flight');

  const again = startApi();
  await again.ready;
  const row = await waitFor(
    'the released job to complete',
    async () => {
      const r = await generationRow(gen.id);
      return r.status === 'generating' ? undefined : r;
    },
    90_000,
  );
  t.equal(row.status, 'completed', 'the generation completed after the restart (not lost, not failed)');
  t.ok(row.attempts >= 2, `it was attempted again (${row.attempts} attempts)`);
  const after = await charges(before.id);
  t.ok(row.credits > 0, `the video costs ${row.credits} credits`);
  t.equal(after.balance, before.credits - row.credits, 'charged exactly once');
  t.same(
    after.ledger.slice(ledgerBefore).map((l) => l.delta),
    [-row.credits],
    'one ledger row: the charge, no refund',
  );
  again.signal('SIGTERM');
  t.equal((await again.exited).code, 0);
  assertCleanOutput(t, again.output(), 'restarted service');
});

t.test('a second signal during a slow shutdown exits at once', async (t) => {
  const api = startApi({ SHUTDOWN_GRACE_SECONDS: '60' });
  await api.ready;
  const gen = await queueVideo(baseOf(api), demoKey!, 'lifecycle-second-signal');
  await waitFor('the render to start', async () => ((await generationRow(gen.id)).attempts >= 1 ? true : undefined), 30_000);
  api.signal('SIGTERM');
  await waitFor('the shutdown to begin', async () => (/shutting down/.test(api.output()) ? true : undefined), 5000);
  await sleep(200);
  api.signal('SIGTERM');
  const { code, ms } = await api.exited;
  t.equal(code, 143, 'exits at once with 128 + SIGTERM');
  t.ok(ms < 3000, `within ${ms} ms of the second signal`);
  await waitFor('the embedded PostgreSQL to stop', async () => (postmasterPid() ? undefined : true), 15_000);
  t.pass('the embedded PostgreSQL does not outlive the process');
  // The abandoned job is not lost: it is still active in pg-boss, retried once its heartbeat stops
  // (JOB_HEARTBEAT_SECONDS), as test/faults/worker-kill.test.ts shows for killed workers.
  const pg = await startEmbedded({ dataDir });
  t.equal((await generationRow(gen.id)).status, 'generating', 'the generation is still pending, not failed');
  await pg.stop();
});

t.test('npm run worker and the admin CLI exit 0 on SIGTERM', async (t) => {
  const worker = run('src/worker-main.ts', [], {}, /worker: running queues/);
  await worker.ready;
  worker.signal('SIGTERM');
  const w = await worker.exited;
  t.equal(w.code, 0, 'worker: exit code 0');
  t.ok(w.ms < 15_000, `worker: stopped in ${w.ms} ms`);
  assertCleanOutput(t, worker.output(), 'worker');
  t.equal(postmasterPid(), undefined, 'worker: the embedded PostgreSQL it started was stopped');

  // The admin CLI starts the embedded PostgreSQL itself (no server runs): the signal comes while it
  // does; the command still finishes, then the database is stopped, in that order.
  const admin = run('src/cli/admin.ts', ['org', 'create', '--name', 'Signalled'], { LOG_LEVEL: 'warn' }, /using the embedded PostgreSQL/);
  await admin.ready;
  admin.signal('SIGTERM');
  const a = await admin.exited;
  t.equal(a.code, 0, 'admin: exit code 0');
  t.match(
    admin.output(),
    /"object":"organization"[^\n]*"name":"Signalled"|"name":"Signalled"/,
    'admin: the command finished and printed its result',
  );
  assertCleanOutput(t, admin.output(), 'admin');
  t.equal(postmasterPid(), undefined, 'admin: the embedded PostgreSQL it started was stopped');
});

t.test('GET /healthz and /readyz; readyz is 503 when the database is gone', async (t) => {
  const api = startApi();
  await api.ready;
  const base = baseOf(api);
  const get = async (p: string) => {
    const res = await fetch(`${base}${p}`);
    const body = (await res.json()) as Record<string, any>;
    const check = checkResponse('GET', `${base}${p}`, res.status, res.headers.get('content-type'), body, Object.fromEntries(res.headers));
    for (const problem of check.problems) t.fail(`contract: ${problem}`);
    return { status: res.status, body, headers: res.headers, operationId: check.operationId };
  };
  t.match(await get('/healthz'), { status: 200, body: { status: 'ok' }, operationId: 'getHealth' });
  t.match(await get('/readyz'), {
    status: 200,
    body: { status: 'ready', checks: { database: 'ok', migrations: 'ok', queue: 'ok', accepting: 'ok' } },
    operationId: 'getReadiness',
  });
  t.equal((await fetch(`${base}/api/v1/healthz`)).status, 404, 'the probes are at the root, not under /api/v1');

  // The database goes away under the running service (its postmaster stopped from outside); the
  // service restarts it (src/db/embedded.ts), so readyz is polled from the moment it is stopped.
  const pid = postmasterPid()!;
  process.kill(pid, 'SIGINT');
  let started = Date.now();
  const down = await waitFor(
    'readyz to fail',
    async () => {
      started = Date.now();
      const r = await get('/readyz');
      return r.status === 200 ? undefined : r;
    },
    15_000,
  );
  t.equal(down.status, 503, 'readyz: 503');
  t.ok(Date.now() - started < 5000, 'answered within the check timeout');
  t.match(down.body, { error: { code: 'service_unavailable', retryable: true, context: { checks: { database: 'failing' } } } });
  t.equal(down.headers.get('retry-after'), '5', 'with Retry-After');
  t.match(await get('/healthz'), { status: 200 }, 'healthz: still 200 (the process is alive)');
  // The service noticed and restarted PostgreSQL: ready again by itself.
  await waitFor('readyz to be 200 again', async () => ((await get('/readyz')).status === 200 ? true : undefined), 30_000);
  t.not(postmasterPid(), pid, 'a new postmaster runs');
  api.signal('SIGTERM');
  const { code } = await api.exited;
  t.equal(code, 0, 'the service stops with exit 0');
});
