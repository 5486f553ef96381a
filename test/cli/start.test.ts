// npm start and npm run worker as processes: first-run demo workspace, API_ONLY, workers alone.
import { spawn } from 'node:child_process';
import path from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';

const root = path.resolve(import.meta.dirname, '../..');

function start(script: string, env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, [script], { cwd: root, env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const waitReady = (async () => {
    const deadline = Date.now() + 60_000;
    while (!ready.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not become ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    ready: waitReady,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const hasPgBoss = async (url: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const rows = await sql`select 1 from information_schema.schemata where schema_name = 'pgboss'`;
  await sql.end();
  return rows.length === 1;
};

t.test('first run creates a demo workspace and prints a key that works; a second run does not', async (t) => {
  const url = await createTestDatabase(t);
  const first = start('src/main.ts', { DATABASE_URL: url, API_ONLY: '1' }, /Try it:[\s\S]*\/models/);
  await first.ready;
  const out = first.output();
  const key = /api key\s+(mapi_[A-Za-z0-9_-]{43})/.exec(out)?.[1];
  const base = /API listening on (\S+)\/api\/v1/.exec(out)?.[1];
  t.ok(key, 'prints the key');
  t.match(out, /curl -H "Authorization: Bearer mapi_/, 'prints a curl line');
  const res = await fetch(`${base}/api/v1/assets`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(res.status, 200, 'the printed key works');
  t.equal(await first.stop(), 0, 'exits 0 on SIGTERM');
  t.notOk(await hasPgBoss(url), 'API_ONLY=1 starts no workers');

  const second = start('src/main.ts', { DATABASE_URL: url, API_ONLY: '1' }, /API listening/);
  await second.ready;
  await new Promise((r) => setTimeout(r, 300));
  t.notMatch(second.output(), /First run/, 'no second demo workspace');
  await second.stop();
});

t.test('npm run worker runs the job workers alone', async (t) => {
  const url = await createTestDatabase(t);
  const worker = start('src/worker-main.ts', { DATABASE_URL: url }, /worker: running queues/);
  await worker.ready;
  t.ok(await hasPgBoss(url), 'pg-boss is installed and running in the same database');
  t.notMatch(worker.output(), /API listening/, 'no HTTP server');
  t.equal(await worker.stop(), 0);
});
