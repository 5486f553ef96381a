// npm start and npm run worker as processes: first-run demo workspace, API_ONLY nodes that
// only queue, and a worker process that runs what they queued.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { freePort, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { oauthTokens } from '../mcp/helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-start-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function start(script: string, env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

const attemptsOf = async (url: string, id: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [row] = await sql`select attempts, status from generations where id = ${id}`;
  await sql.end();
  return row as { attempts: number; status: string };
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

  // API_ONLY=1: the API queues work but runs no workers; `npm run worker` alone picks it up.
  const queued = await fetch(`${base}/api/v1/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Scale-out check' }),
  });
  t.equal(queued.status, 200);
  const id = ((await queued.json()) as { generations: { id: string }[] }).generations[0].id;
  await new Promise((r) => setTimeout(r, 3000));
  t.same(await attemptsOf(url, id), { attempts: 0, status: 'generating' }, 'no worker ran in the API-only process');
  t.equal(await first.stop(), 0, 'exits 0 on SIGTERM');

  const worker = start('src/worker-main.ts', { DATABASE_URL: url }, /worker: running queues/);
  await worker.ready;
  t.notMatch(worker.output(), /API listening/, 'the worker serves no HTTP');
  const deadline = Date.now() + 60_000;
  while ((await attemptsOf(url, id)).status === 'generating' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  t.equal((await attemptsOf(url, id)).status, 'completed', 'the worker process completed the job');
  t.equal(await worker.stop(), 0);

  const second = start('src/main.ts', { DATABASE_URL: url, API_ONLY: '1' }, /API listening/);
  await second.ready;
  await new Promise((r) => setTimeout(r, 300));
  t.notMatch(second.output(), /First run/, 'no second demo workspace');
  await second.stop();
});

t.test('first run: the demo member printed by npm start completes the OAuth sign-in of an MCP client', async (t) => {
  const url = await createTestDatabase(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const run = start(
    'src/main.ts',
    { DATABASE_URL: url, API_ONLY: '1', PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base },
    /with password \S+/,
  );
  t.teardown(() => run.stop());
  await run.ready;
  const out = run.output();
  t.match(out, `Connect an MCP client to ${base}/mcp`, 'says where to connect');
  const [, email, password] = /sign in as\s+(\S+) with password (\S+)/.exec(out) ?? [];
  t.ok(email && password, 'prints the member to sign in as');
  // The flow an MCP client drives: registration, authorize → sign-in → consent, code → token, /mcp.
  const app = { url: base } as TestApp;
  const tokens = await oauthTokens(app, { email, password });
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_workspace', arguments: {} } }),
  });
  t.equal(res.status, 200);
  t.match(await res.text(), /Demo workspace/, 'the token acts on the demo workspace');
});
