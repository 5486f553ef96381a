// Benchmarks of the generation pipeline, each against a baseline measured in the same run:
//  1. POST /generations (auth, validation, pricing, rate limit, idempotency, deduction, enqueue)
//     against pgbench running a custom script of the same SQL writes on the same database, both
//     at 32 connections: throughput ratio (target ≥ 0.5) and p99 latency.
//  2. Queue pickup: median time from POST to a worker starting the job (target < 1 s).
// Needs pgbench (Debian: postgresql-client / postgresql). Usage: node bench/generations.ts [--duration S]
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import postgres from 'postgres';
import { findTemplate } from '../src/services/catalog/catalog-data.ts';
import { load, median, startService } from './lib/servers.ts';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' } } });
const duration = Number(values.duration);
const connections = Number(values.connections);
const say = (s: string) => process.stdout.write(`${s}\n`);

const PGBENCH = [
  '/usr/lib/postgresql/17/bin/pgbench',
  '/usr/lib/postgresql/16/bin/pgbench',
  '/usr/lib/postgresql/15/bin/pgbench',
  'pgbench',
].find((p) => !p.startsWith('/') || fs.existsSync(p))!;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-gen-'));
say('generations bench: starting the service (API only, embedded PostgreSQL) …');
const service = await startService({ DATA_DIR: dataDir, RATE_LIMIT_GENERATIONS: '100000000', LOG_LEVEL: 'error' });
const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
const pidLines = fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n');
const pgPort = Number(pidLines[3]);
const dbUrl = `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${pgPort}/media_api`;
const sql = postgres(dbUrl, { max: 2, onnotice: () => {} });

const admin = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['src/cli/admin.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: dbUrl },
  });
  return JSON.parse(stdout);
};
const org = await admin('org', 'create', '--name', 'Bench', '--credits', '1000000000');
const key = (await admin('key', 'create', '--org', org.id, '--scopes', 'generations:write')).key;
const template = 'bold-sale-banner';

try {
  // --- 1. throughput -----------------------------------------------------------------------
  const body = JSON.stringify({ type: 'static_ad', template_slug: template, prompt: 'Benchmark ad' });
  await load(`${service.url}/api/v1/generations`, {
    duration: 2,
    connections,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'warm-[<id>]' },
    body,
    idReplacement: true,
  });
  say(`generations bench: POST /generations for ${duration}s at ${connections} connections …`);
  const api = await load(`${service.url}/api/v1/generations`, {
    duration,
    connections,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'bench-[<id>]' },
    body,
    idReplacement: true,
  });
  if (api.non2xx || api.errors) say(`  (service answered ${api.non2xx} non-2xx, ${api.errors} errors)`);

  // The same statements as one POST, as plain SQL, in the charged command's order: rate-limit
  // upsert, idempotency claim (advisory lock + lookup), balance check, generation row and pg-boss
  // job row in a savepoint, conditional deduction with its ledger row, idempotency record.
  const credits = (findTemplate(template) as { credits: number }).credits;
  const script = path.join(dataDir, 'bench.sql');
  fs.writeFileSync(
    script,
    `\\set n random(1, 1000000000)
INSERT INTO rate_limits (key, points, expire) VALUES ('generations:${org.id}', 1, now() + interval '60 seconds')
  ON CONFLICT (key) DO UPDATE SET points = rate_limits.points + 1 RETURNING points, expire;
BEGIN;
SELECT pg_try_advisory_xact_lock(hashtextextended('${org.id}|createGeneration|pgb-' || :client_id || '-' || :n, 727));
SELECT * FROM idempotency_keys WHERE org_id = '${org.id}' AND operation = 'createGeneration' AND key = 'pgb-' || :client_id || '-' || :n AND expires_at > now();
SELECT credits FROM organizations WHERE id = '${org.id}';
SAVEPOINT unit;
INSERT INTO generations (org_id, batch_id, type, spec, credits) VALUES ('${org.id}', gen_random_uuid(), 'static_ad', '{"output":"image","title":"Bench","prompt":"Benchmark ad"}', ${credits}) RETURNING id;
INSERT INTO pgboss.job (id, name, data) VALUES (gen_random_uuid(), 'generation', jsonb_build_object('generationId', gen_random_uuid()));
RELEASE SAVEPOINT unit;
WITH changed AS (UPDATE organizations SET credits = credits - ${credits}, updated_at = now() WHERE id = '${org.id}' AND credits >= ${credits} RETURNING credits)
  INSERT INTO credit_ledger (org_id, delta, balance_after, reason, reference) SELECT '${org.id}', -${credits}, credits, 'generation_charge', 'bench' FROM changed RETURNING balance_after;
INSERT INTO idempotency_keys (org_id, operation, key, fingerprint, state, response, progress, expires_at)
  VALUES ('${org.id}', 'createGeneration', 'pgb-' || :client_id || '-' || :n || '-' || random(), md5(random()::text), 'completed', '{"object":"generation_batch"}', '{}', now() + interval '1 day');
COMMIT;
`,
  );
  say(`generations bench: pgbench (${PGBENCH}) with the same writes for ${duration}s at ${connections} connections …`);
  const pgb = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      PGBENCH,
      [
        '-n',
        '-h',
        '127.0.0.1',
        '-p',
        String(pgPort),
        '-U',
        creds.user,
        '-c',
        String(connections),
        '-j',
        '2',
        '-T',
        String(duration),
        '-r',
        '-f',
        script,
        'media_api',
      ],
      {
        env: { ...process.env, PGPASSWORD: creds.password },
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench failed:\n${out}`))));
  });
  const tps = Number(/tps = ([\d.]+)/.exec(pgb)?.[1]);
  const pgLatency = Number(/latency average = ([\d.]+) ms/.exec(pgb)?.[1]);
  const ratio = api.rps / tps;
  say(`  service: ${api.rps.toFixed(0)} req/s, p50 ${api.p50} ms, p99 ${api.p99} ms`);
  say(`  pgbench: ${tps.toFixed(0)} tps, average latency ${pgLatency} ms`);
  say(
    `generations bench: RATIO ${ratio.toFixed(3)} of pgbench (target ≥ 0.5) ${ratio >= 0.5 ? 'MET' : 'NOT MET'}; service p99 ${api.p99} ms`,
  );

  // --- 2. queue pickup -----------------------------------------------------------------------
  await sql`delete from pgboss.job where name = 'generation'`;
  await sql`update generations set status = 'error' where status = 'generating'`;
  say('generations bench: queue pickup with one worker process …');
  const worker = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: dbUrl, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d) => /running queues/.test(String(d)) && resolve()));
  const pickups: number[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${service.url}/api/v1/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    const id = ((await res.json()) as { generations: { id: string }[] }).generations[0].id;
    for (;;) {
      const [g] = await sql`select extract(epoch from (started_at - created_at)) * 1000 as ms, status from generations where id = ${id}`;
      if (g.ms !== null && g.status !== 'generating') {
        pickups.push(Number(g.ms));
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  worker.kill('SIGTERM');
  const pickup = median(pickups);
  say(`  pickups (ms): ${pickups.map((p) => p.toFixed(0)).join(', ')}`);
  say(`generations bench: queue pickup median ${pickup.toFixed(0)} ms (target < 1000 ms) ${pickup < 1000 ? 'MET' : 'NOT MET'}`);
} finally {
  await sql.end();
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
