// The embedded PostgreSQL's supervision in one process (src/db/embedded.ts): a postmaster killed
// -9 is restarted on the same port and the data survives (crash recovery); one that cannot be
// restarted (its port taken meanwhile) is reported through onLost after the restart deadline;
// a peer registration of a dead process does not keep the cluster running.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { otherPeers, startEmbedded } from '../../src/db/embedded.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-embedded-unit-'));
if (process.getuid?.() === 0) fs.chmodSync(dataDir, 0o755);
const pgDir = path.join(dataDir, 'pg');

function postmaster(): { pid: number; port: number } | undefined {
  try {
    const lines = fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    process.kill(pid, 0);
    if (fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z')) return undefined;
    return { pid, port: Number(lines[3]) };
  } catch {
    return undefined;
  }
}

t.teardown(async () => {
  const pm = postmaster();
  if (pm) process.kill(pm.pid, 'SIGINT');
  for (let i = 0; i < 100 && postmaster(); i++) await sleep(50);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

t.test('kill -9 of the postmaster: restarted on the same port, committed data kept', async (t) => {
  const events: string[] = [];
  const log = (level: string) => (_: object, msg: string) => events.push(`${level}: ${msg}`);
  const pg = await startEmbedded({
    dataDir,
    supervise: true,
    events: { info: log('info'), warn: log('warn'), error: log('error') },
    onLost: (err) => t.fail(`lost: ${err.message}`),
  });
  t.ok(pg.owner, 'this process started the cluster');
  const sql = postgres(pg.url, { max: 1, onnotice: () => {}, connect_timeout: 2 });
  await sql`create table kept (n int)`;
  await sql`insert into kept values (42)`;
  const before = postmaster()!;
  t.equal(before.port, pg.port);
  process.kill(before.pid, 'SIGKILL');
  const killedAt = Date.now();
  let after: ReturnType<typeof postmaster>;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    after = postmaster();
    if (after && after.pid !== before.pid && events.some((e) => /restarted/.test(e))) break;
  }
  t.ok(after && after.pid !== before.pid, `a new postmaster runs (after ${Date.now() - killedAt} ms)`);
  t.equal(after?.port, pg.port, 'on the same port');
  let rows: { n: number }[] = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && !rows.length; await sleep(100)) {
    rows = await sql<{ n: number }[]>`select n from kept`.catch(() => []);
  }
  t.same(rows, [{ n: 42 }], 'the committed row survived (crash recovery)');
  t.match(events, [/^warn: .*the postmaster is gone/, /^info: .*restarted after crash recovery/], 'the loss and the restart are reported');
  await sql.end();
  await pg.stop();
  t.equal(postmaster(), undefined, 'stop() stops the cluster: no other process is attached');
});

t.test('a stale registration of a dead process does not keep the cluster running', async (t) => {
  const pg = await startEmbedded({ dataDir });
  // A process that registered and was killed -9 (its pid is gone).
  const dead = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => dead.once('exit', r));
  fs.writeFileSync(path.join(dataDir, 'pg-peers', String(dead.pid)), JSON.stringify({ pid: dead.pid, start: null }));
  t.same(otherPeers(dataDir), [], 'the dead process is not counted (and its registration is removed)');
  t.notOk(fs.existsSync(path.join(dataDir, 'pg-peers', String(dead.pid))));
  // A live process registered with another start time (its pid reused) is not counted either.
  fs.writeFileSync(path.join(dataDir, 'pg-peers', '1'), JSON.stringify({ pid: 1, start: '1' }));
  t.same(otherPeers(dataDir), [], 'a reused pid (other start time) is not counted');
  await pg.stop();
  t.equal(postmaster(), undefined, 'stopped');
});

t.test('a postmaster that cannot be restarted (its port taken) is reported through onLost', async (t) => {
  let lost: Error | undefined;
  const pg = await startEmbedded({ dataDir, supervise: true, restartDeadlineMs: 1500, onLost: (err) => (lost = err) });
  const pm = postmaster()!;
  // kill -9, then another program takes the port before the restart.
  process.kill(pm.pid, 'SIGKILL');
  const blocker = net.createServer();
  for (const deadline = Date.now() + 10_000; ; await sleep(5)) {
    const ok = await new Promise<boolean>((resolve) => {
      blocker.once('error', () => resolve(false));
      blocker.listen(pg.port, '127.0.0.1', () => resolve(true));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the port was not released');
  }
  t.teardown(() => blocker.close());
  for (const deadline = Date.now() + 20_000; !lost && Date.now() < deadline; ) await sleep(50);
  t.match(lost?.message, /could not be restarted .* on port \d+ within 1500 ms/, 'onLost is called with the reason');
  t.match(lost?.message, /could not create listen socket|could not bind|Address already in use/i, 'the reason names the taken port');
  await pg.stop();
  blocker.close();
  // Old backends of the killed postmaster end by themselves; the cluster starts again once the port is free.
  const again = await startEmbedded({ dataDir });
  t.equal(again.port, pg.port, 'a later start (nothing attached, port free) uses the recorded port');
  await again.stop();
});
