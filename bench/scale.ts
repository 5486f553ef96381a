// Scale-out on this machine: POST /generations and GET /models throughput with 1 and with 2 API
// nodes (API_ONLY=1, one embedded PostgreSQL shared through one DATA_DIR), through one workspace
// and through many; printed as ratios against the 1-node / one-workspace run of the same bench.
// Then the time from PostgreSQL back to the first 200: the postmaster is killed (-9), the
// service restarts it (src/db/embedded.ts), and the bench measures kill → ready → first 200.
// The load generator runs in this process; on a 2-core machine the 2-node ratio says how much the
// nodes, PostgreSQL and the load generator share the CPU rather than how the design scales.
// Usage: node bench/scale.ts [--duration S] [--connections N] [--workspaces N]
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { connect } from '../src/db/client.ts';
import { createApiKey } from '../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../src/services/workspaces/organizations.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    workspaces: { type: 'string', default: '16' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const workspaces = Number(values.workspaces);
const say = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const root = path.resolve(import.meta.dirname, '..');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-scale-'));
if (process.getuid?.() === 0) fs.chmodSync(dataDir, 0o755);
const children: ChildProcess[] = [];

function startNode(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      API_ONLY: '1',
      LOG_LEVEL: 'error',
      DEMO_WORKSPACE: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      RATE_LIMIT_GENERATIONS: '100000000',
      MEDIA_SIGNING_SECRET: 'bench',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /API listening on (\S+)\/api\/v1/.exec(out);
      if (m) resolve({ url: m[1], child });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`API node exited (${code}):\n${out}`)));
  });
}

const postmaster = () => {
  try {
    const lines = fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    process.kill(pid, 0);
    return { pid, status: (lines[7] ?? '').trim() };
  } catch {
    return undefined;
  }
};

/** Load against every node at once (connections split between them); requests/s summed. */
async function loadNodes(
  urls: string[],
  path_: string,
  opts: { method?: string; keys?: string[]; body?: string },
): Promise<{ rps: number; p99: number; non2xx: number }> {
  const per = Math.max(1, Math.floor(connections / urls.length));
  const results = await Promise.all(
    urls.map((url) => {
      let n = 0;
      return autocannon({
        url: `${url}${path_}`,
        duration,
        connections: per,
        requests: [
          {
            method: (opts.method ?? 'GET') as 'GET',
            body: opts.body,
            // A fresh idempotency key per request, and the workspaces' keys in turn.
            setupRequest: (req) => {
              n++;
              const key = opts.keys?.[n % opts.keys.length];
              return {
                ...req,
                headers: {
                  ...(req.headers ?? {}),
                  ...(key ? { authorization: `Bearer ${key}`, 'idempotency-key': `${process.pid}-${url}-${n}` } : {}),
                  ...(opts.body ? { 'content-type': 'application/json' } : {}),
                },
              };
            },
          },
        ],
      });
    }),
  );
  return {
    rps: results.reduce((a, r) => a + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((a, r) => a + r.non2xx, 0),
  };
}

try {
  say('scale bench: starting 2 API nodes on one embedded PostgreSQL …');
  const a = await startNode();
  const b = await startNode();
  const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
  const port = Number(fs.readFileSync(path.join(dataDir, 'pg-port'), 'utf8'));
  const { db, sql } = connect(
    `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/media_api`,
    2,
  );
  const keys: string[] = [];
  for (let i = 0; i < workspaces; i++) {
    const org = await createOrganization(db, { name: `Scale ${i}`, plan: 'paid', credits: 1_000_000_000 });
    keys.push((await createApiKey(db, { orgId: org.id, scopes: ['generations:write', 'generations:read'] })).key);
  }
  const body = JSON.stringify({ type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Scale bench' });
  const gen = (urls: string[], ks: string[]) => loadNodes(urls, '/api/v1/generations', { method: 'POST', keys: ks, body });
  const models = (urls: string[]) => loadNodes(urls, '/api/v1/models', {});

  await gen([a.url, b.url], keys); // warm-up
  await models([a.url, b.url]);
  const rows: [string, Awaited<ReturnType<typeof gen>>][] = [];
  for (const [name, run] of [
    ['GET /models, 1 node', () => models([a.url])],
    ['GET /models, 2 nodes', () => models([a.url, b.url])],
    ['POST /generations, 1 node, 1 workspace', () => gen([a.url], keys.slice(0, 1))],
    ['POST /generations, 2 nodes, 1 workspace', () => gen([a.url, b.url], keys.slice(0, 1))],
    [`POST /generations, 1 node, ${workspaces} workspaces`, () => gen([a.url], keys)],
    [`POST /generations, 2 nodes, ${workspaces} workspaces`, () => gen([a.url, b.url], keys)],
  ] as const) {
    say(`scale bench: ${name} (${duration} s, ${connections} connections) …`);
    rows.push([name, await run()]);
  }
  const rps = (name: string) => rows.find(([n]) => n === name)![1].rps;
  say('');
  say('| run | req/s | p99 ms | non-2xx | ratio |');
  say('|---|---|---|---|---|');
  const base = (name: string) => (name.startsWith('GET') ? rps('GET /models, 1 node') : rps('POST /generations, 1 node, 1 workspace'));
  for (const [name, r] of rows) say(`| ${name} | ${r.rps.toFixed(0)} | ${r.p99} | ${r.non2xx} | ${(r.rps / base(name)).toFixed(2)} |`);
  say('');
  say(
    `2 nodes / 1 node: GET /models ${(rps('GET /models, 2 nodes') / rps('GET /models, 1 node')).toFixed(2)}, POST /generations ${(rps('POST /generations, 2 nodes, 1 workspace') / rps('POST /generations, 1 node, 1 workspace')).toFixed(2)} (1 workspace), ${(rps(`POST /generations, 2 nodes, ${workspaces} workspaces`) / rps(`POST /generations, 1 node, ${workspaces} workspaces`)).toFixed(2)} (${workspaces} workspaces)`,
  );
  say(
    `${workspaces} workspaces / 1 workspace: ${(rps(`POST /generations, 1 node, ${workspaces} workspaces`) / rps('POST /generations, 1 node, 1 workspace')).toFixed(2)} (1 node), ${(rps(`POST /generations, 2 nodes, ${workspaces} workspaces`) / rps('POST /generations, 2 nodes, 1 workspace')).toFixed(2)} (2 nodes)`,
  );
  await sql.end();

  // PostgreSQL killed and back: kill → restarted (accepting connections) → first 200.
  const probe = async () => {
    try {
      return (await fetch(`${a.url}/api/v1/assets`, { headers: { authorization: `Bearer ${keys[0]}` } })).status;
    } catch {
      return 0;
    }
  };
  const killed = postmaster()!;
  process.kill(killed.pid, 'SIGKILL');
  const killedAt = Date.now();
  let readyAt = 0;
  let firstOk = 0;
  const statuses = new Set<number>();
  while (!firstOk && Date.now() - killedAt < 60_000) {
    const pm = postmaster();
    if (!readyAt && pm && pm.pid !== killed.pid && pm.status === 'ready') readyAt = Date.now();
    const s = await probe();
    statuses.add(s);
    if (s === 200 && readyAt) firstOk = Date.now();
    else await sleep(10);
  }
  say('');
  say(
    `PostgreSQL kill -9 → restarted by the service in ${readyAt - killedAt} ms; first 200 ${firstOk - readyAt} ms after it accepted connections (${firstOk - killedAt} ms after the kill); answers seen: ${[...statuses].sort().join(', ')}`,
  );
} finally {
  for (const c of children) {
    if (c.exitCode === null) {
      const done = new Promise((r) => c.on('exit', r));
      c.kill('SIGTERM');
      await done;
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
