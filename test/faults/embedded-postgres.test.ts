// The embedded PostgreSQL shared by several real processes on one DATA_DIR (src/db/embedded.ts):
// an API-only node started first and an `npm start` node attached to its cluster. SIGTERM to the
// first leaves the cluster running for the other (last one out stops it); a restart of it comes
// back on the same port (DATA_DIR/pg-port); kill -9 of the postmaster under load is noticed and
// PostgreSQL restarted on that port with crash recovery: the API answers 503 (never 500, never a
// refused connection) during the outage, 200 after it (the recovery time is printed), and no
// process dies. The last process out stops the cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-embedded-'));
// PostgreSQL runs as the `postgres` user when we are root: it must reach the folder.
if (process.getuid?.() === 0) fs.chmodSync(dataDir, 0o755);
const pgDir = path.join(dataDir, 'pg');
const children = new Set<ChildProcess>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function postmaster(): { pid: number; port: number; status: string } | undefined {
  try {
    const lines = fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    process.kill(pid, 0);
    if (fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z')) return undefined;
    return { pid, port: Number(lines[3]), status: (lines[7] ?? '').trim() };
  } catch {
    return undefined;
  }
}

t.teardown(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  const pm = postmaster();
  if (pm) process.kill(pm.pid, 'SIGINT');
  for (let i = 0; i < 100 && postmaster(); i++) await sleep(50);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Proc {
  child: ChildProcess;
  ready: Promise<void>;
  output(): string;
  base(): string;
  exit: { code: number | null; signal: string | null } | undefined;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>, ready = /API listening on \S+/): Proc {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      MEDIA_SIGNING_SECRET: 'embedded-test',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const proc: Proc = {
    child,
    output: () => out,
    base: () => /API listening on (\S+)\/api\/v1/.exec(out)![1],
    exit: undefined,
    exited: new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        proc.exit = { code, signal };
        resolve(code);
      }),
    ),
    ready: (async () => {
      for (const deadline = Date.now() + 90_000; !ready.test(out); await sleep(50)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not become ready:\n${out}`);
      }
    })(),
  };
  return proc;
}

const recordedPort = () => Number(fs.readFileSync(path.join(dataDir, 'pg-port'), 'utf8').trim());

let key = '';

t.test('two processes on one DATA_DIR: SIGTERM to the first leaves the cluster to the other; a restart keeps the port', async (t) => {
  // The API-only node starts first: it starts the cluster (and makes the demo workspace).
  const first = start({ API_ONLY: '1' }, /Try it:[\s\S]*\/models/);
  await first.ready;
  key = /api key\s+(mapi_[A-Za-z0-9_-]{43})/.exec(first.output())![1];
  t.match(first.output(), /API listening on \S+ \(workers off\)/, 'API_ONLY=1 says "workers off"');
  const pm = postmaster();
  t.ok(pm, 'the first process started the embedded PostgreSQL');
  const port = recordedPort();
  t.equal(pm!.port, port, `it runs on the recorded port (${port})`);

  const second = start({});
  await second.ready;
  t.match(second.output(), /API listening on \S+ \(workers on\)/, 'npm start says "workers on"');
  t.equal(postmaster()!.pid, pm!.pid, 'the second process attached to the running cluster');

  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'the first process exits 0');
  t.equal(postmaster()?.pid, pm!.pid, 'the cluster is still running: another process uses it');
  const auth = { authorization: `Bearer ${key}` };
  const list = await fetch(`${second.base()}/api/v1/assets`, { headers: auth });
  t.equal(list.status, 200, 'the other process keeps answering');
  const gen = await fetch(`${second.base()}/api/v1/generations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Still working' }),
  });
  t.equal(gen.status, 200, 'and takes paid work');
  const id = ((await gen.json()) as { generations: { id: string }[] }).generations[0].id;
  let status = '';
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
    status = ((await (await fetch(`${second.base()}/api/v1/generations/${id}`, { headers: auth })).json()) as { status: string }).status;
    if (status !== 'generating' && status !== 'queued') break;
  }
  t.equal(status, 'completed', 'its workers complete a generation');

  // The first node comes back: it attaches to the same cluster on the same port.
  const again = start({ API_ONLY: '1' });
  await again.ready;
  t.equal(postmaster()?.pid, pm!.pid, 'the restarted node attached to the running cluster');
  t.equal((await fetch(`${again.base()}/api/v1/assets`, { headers: auth })).status, 200, 'and serves');
  again.child.kill('SIGTERM');
  second.child.kill('SIGTERM');
  t.same(await Promise.all([again.exited, second.exited]), [0, 0], 'both exit 0');
  for (const deadline = Date.now() + 15_000; postmaster() && Date.now() < deadline; ) await sleep(50);
  t.equal(postmaster(), undefined, 'the last process out stopped the cluster');

  // A cold start (no cluster running) uses the recorded port again.
  const cold = start({ API_ONLY: '1' });
  await cold.ready;
  t.equal(postmaster()?.port, port, `a cold start reuses the recorded port ${port}`);
  cold.child.kill('SIGTERM');
  t.equal(await cold.exited, 0);
  for (const deadline = Date.now() + 15_000; postmaster() && Date.now() < deadline; ) await sleep(50);
  t.equal(postmaster(), undefined, 'stopped again');
});

t.test('kill -9 of the postmaster under load: 503 during, restarted on the same port, 200 after, no process dies', async (t) => {
  const a = start({ API_ONLY: '1' });
  await a.ready;
  const b = start({});
  await b.ready;
  const port = recordedPort();
  const killed = postmaster()!;
  const auth = { authorization: `Bearer ${key}` };
  const statuses = new Map<string, number>();
  const unexpected: string[] = [];
  const oks: number[] = [];
  let running = true;
  const client = async (base: string) => {
    while (running) {
      try {
        const res = await fetch(`${base}/api/v1/assets`, { headers: auth });
        const body = (await res.json()) as { error?: { code: string; retryable: boolean } };
        const k = String(res.status);
        statuses.set(k, (statuses.get(k) ?? 0) + 1);
        if (res.status === 200) oks.push(Date.now());
        else if (
          res.status !== 503 ||
          body.error?.code !== 'service_unavailable' ||
          body.error.retryable !== true ||
          !res.headers.get('retry-after')
        ) {
          unexpected.push(`${res.status} ${JSON.stringify(body)}`);
        }
      } catch (err) {
        unexpected.push(`request failed: ${(err as Error).message}`);
      }
      await sleep(10);
    }
  };
  const clients = [a, b, a, b].map((p) => client(p.base()));
  for (const deadline = Date.now() + 30_000; oks.length < 10 && Date.now() < deadline; ) await sleep(50);
  t.ok(oks.length >= 10, `requests succeed before the kill (${oks.length})`);

  process.kill(killed.pid, 'SIGKILL');
  const killedAt = Date.now();
  // The outage is seen as 503s, then a new postmaster answers on the same port.
  let restarted: { pid: number; port: number; status: string } | undefined;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
    restarted = postmaster();
    if (restarted && restarted.pid !== killed.pid && restarted.status === 'ready') break;
  }
  const readyAt = Date.now();
  t.ok(
    restarted && restarted.pid !== killed.pid && restarted.status === 'ready',
    `a new postmaster accepts connections (${readyAt - killedAt} ms after the kill)`,
  );
  t.equal(restarted?.port, port, `on the same port (${port})`);
  let firstOk = 0;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !firstOk; await sleep(20))
    firstOk = oks.find((ts) => ts > readyAt) ?? 0;
  t.ok(firstOk > 0, 'requests succeed again');
  t.comment(
    `recovery: PostgreSQL restarted ${readyAt - killedAt} ms after kill -9 of the postmaster; first 200 ${firstOk - readyAt} ms after that (${firstOk - killedAt} ms after the kill)`,
  );
  t.ok(firstOk - readyAt < 5000, `first 200 within 5 s of PostgreSQL being back (${firstOk - readyAt} ms)`);
  await sleep(500);
  running = false;
  await Promise.all(clients);

  t.ok((statuses.get('503') ?? 0) > 0, `the outage was answered 503 (${JSON.stringify(Object.fromEntries(statuses))})`);
  t.same(unexpected.slice(0, 5), [], 'every answer was 200 or a retryable 503 with Retry-After (no 500, no refused connection)');
  t.equal(a.exit, undefined, 'the API-only node is alive');
  t.equal(b.exit, undefined, 'the npm start node is alive');
  const logs = a.output() + b.output();
  t.match(logs, /the postmaster is gone/, 'the loss is logged');
  t.match(
    logs,
    /restarted after crash recovery[^\n]*recovery_ms|"recovery_ms":\d+[^\n]*restarted after crash recovery/,
    'the restart is logged, with its time',
  );
  t.notMatch(logs, /Uncaught exception|Unhandled rejection/, 'no uncaught error');
  // Both processes work after the restart, the workers too.
  for (const p of [a, b]) t.equal((await fetch(`${p.base()}/api/v1/assets`, { headers: auth })).status, 200, 'each node answers 200');
  let ready = 0;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && ready !== 200; await sleep(200))
    ready = (await fetch(`${b.base()}/readyz`)).status;
  t.equal(ready, 200, '/readyz is 200 again (pg-boss reconnected)');

  a.child.kill('SIGTERM');
  b.child.kill('SIGTERM');
  t.same(await Promise.all([a.exited, b.exited]), [0, 0], 'both exit 0');
  for (const deadline = Date.now() + 15_000; postmaster() && Date.now() < deadline; ) await sleep(50);
  t.equal(postmaster(), undefined, 'the last process out stopped the cluster');
});
