// GET /generations with 100,000 generations in the workspace (issue 26: p99 < 20 ms per page).
// Seeds the rows in the bench (60 % completed with an output media row each, the rest generating,
// error or canceled, the four types, three rows to each created_at so the id breaks ties, and a
// second workspace of 50,000 beside it), then times pages one request at a time over HTTP:
//  - first: the first page (limit 30, no cursor);
//  - middle: pages around the 50,000th row (cursors gathered by walking the whole list once);
//  - filtered first / filtered middle: status=error (5 % of rows), type=video_ad, status with type,
//    and a created_after/created_before window, first pages and pages deep into each.
// Each figure is p50 and p99 in ms against the 20 ms target, beside GET /generations/{id} measured
// in the same run (one row by primary key: what a page is compared with).
// Usage: node bench/lists.ts [--rows N] [--samples N]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import postgres from 'postgres';
import { startService } from './lib/servers.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, samples: { type: 'string', default: '300' } } });
const ROWS = Number(values.rows);
const SAMPLES = Number(values.samples);
const TARGET_MS = 20;
const say = (s: string) => process.stdout.write(`${s}\n`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-lists-'));
say('lists bench: starting the service (API only, embedded PostgreSQL) …');
const service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'error' });
const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
const pgPort = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
const dbUrl = `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${pgPort}/media_api`;
const sql = postgres(dbUrl, { max: 2, onnotice: () => {} });

const admin = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['src/cli/admin.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: dbUrl },
  });
  return JSON.parse(stdout);
};

/** `n` generations of `orgId`, i from `from`: 60 % completed (each with its media row), 5 % error, 5 % canceled. */
async function seed(orgId: string, n: number, from: number): Promise<void> {
  await sql`
    insert into media (id, org_id, kind, status, source, title, filename, content_type, size_bytes, storage_key, width, height, created_at)
    select md5('m' || i)::uuid, ${orgId}, 'image', 'completed', 'generation', 'Bench ' || i, i || '.png', 'image/png', 700000,
           'generations/bench/' || i || '.png', 1024, 1280, now() - (i / 3) * interval '50 seconds'
    from generate_series(${from}::int, ${from + n - 1}::int) i
    where i % 20 < 18 and i % 10 < 6`;
  await sql`
    insert into generations (org_id, batch_id, type, status, spec, credits, output_media_id, progress, created_at, updated_at)
    select ${orgId}, md5('b' || (i / 2))::uuid, (array['static_ad','video_ad','ugc_ad','ai_model'])[1 + i % 4],
           s.status, '{"output":"image"}'::jsonb, 5,
           case when s.status = 'completed' then md5('m' || i)::uuid end,
           case when s.status = 'completed' then 100 else 0 end,
           now() - (i / 3) * interval '50 seconds', now() - (i / 3) * interval '50 seconds'
    from generate_series(${from}::int, ${from + n - 1}::int) i,
         lateral (select case when i % 20 = 19 then 'error' when i % 20 = 18 then 'canceled'
                              when i % 10 < 6 then 'completed' else 'generating' end as status) s`;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

try {
  const org = await admin('org', 'create', '--name', 'Bench lists', '--credits', '0');
  const neighbour = await admin('org', 'create', '--name', 'Neighbour', '--credits', '0');
  const key = (await admin('key', 'create', '--org', org.id, '--scopes', 'generations:read')).key;
  const auth = { authorization: `Bearer ${key}` };
  let t0 = performance.now();
  await seed(org.id, ROWS, 0);
  await seed(neighbour.id, ROWS / 2, ROWS);
  await sql`analyze generations`;
  await sql`analyze media`;
  say(`lists bench: seeded ${ROWS} generations (+${ROWS / 2} in another workspace) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const page = async (query: string) => {
    const started = performance.now();
    const res = await fetch(`${service.url}/api/v1/generations?${query}`, { headers: auth });
    const body = (await res.json()) as { data: { id: string }[]; next_cursor: string | null };
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`GET /generations?${query}: ${res.status} ${JSON.stringify(body)}`);
    return { ms, body };
  };

  /** Walks a whole list (limit 100), returning the cursors of pages at row ~`from` to ~`to` of it. */
  async function cursorsBetween(filters: string, fromRow: number, toRow: number): Promise<{ cursors: string[]; total: number }> {
    const cursors: string[] = [];
    let cursor: string | null = null;
    let seen = 0;
    do {
      const { body } = await page(`${filters}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      seen += body.data.length;
      cursor = body.next_cursor;
      if (cursor && seen >= fromRow && seen <= toRow) cursors.push(cursor);
    } while (cursor);
    return { cursors, total: seen };
  }

  const time = async (queries: string[]) => {
    const ms: number[] = [];
    for (let i = 0; i < SAMPLES; i++) ms.push((await page(queries[i % queries.length])).ms);
    return ms;
  };
  const report = (name: string, ms: number[], rows: string) => {
    const p99 = pct(ms, 99);
    say(
      `  ${name.padEnd(52)} p50 ${pct(ms, 50).toFixed(2).padStart(6)} ms  p99 ${p99.toFixed(2).padStart(6)} ms  ${p99 < TARGET_MS ? 'MET' : 'NOT MET'}  (${rows})`,
    );
    return p99;
  };

  // Warm-up: connections, the cursor key, the plans.
  for (let i = 0; i < 50; i++) await page('limit=30');

  // Baseline in the same run: GET /generations/{id}.
  const ids = (await sql`select id from generations where org_id = ${org.id} order by random() limit 100`).map((r) => r.id as string);
  const one: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const res = await fetch(`${service.url}/api/v1/generations/${ids[i % ids.length]}`, { headers: auth });
    await res.arrayBuffer();
    one.push(performance.now() - started);
  }

  say(`lists bench: ${SAMPLES} sequential requests per row, limit 30 (target p99 < ${TARGET_MS} ms per page)`);
  const baseline = report('GET /generations/{id} (baseline)', one, '1 row by id');
  const results: [string, number][] = [];
  const run = async (name: string, filters: string, deep: boolean) => {
    let queries = [`${filters}&limit=30`];
    let rows = 'first page';
    if (deep) {
      t0 = performance.now();
      const all = await cursorsBetween(filters, 0, Number.MAX_SAFE_INTEGER);
      const mid = all.cursors.slice(Math.floor(all.cursors.length * 0.4), Math.ceil(all.cursors.length * 0.6) + 1);
      if (mid.length === 0) throw new Error(`${name}: the list has no middle page (too few rows)`);
      queries = mid.map((c) => `${filters}&limit=30&cursor=${c}`);
      rows = `${mid.length} cursors at 40–60 % of ${all.total} rows`;
    }
    results.push([name, report(name, await time(queries), rows)]);
  };
  await run('first page', '', false);
  await run('middle pages', '', true);
  await run('filtered first: status=error', 'status=error', false);
  await run('filtered middle: status=error', 'status=error', true);
  await run('filtered first: type=video_ad', 'type=video_ad', false);
  await run('filtered middle: type=video_ad', 'type=video_ad', true);
  await run('filtered middle: status=completed&type=static_ad', 'status=completed&type=static_ad', true);
  // A created_at window holding the rows from 30 % to 50 % down the list.
  const [w] = await sql`
    select to_char(min(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as a,
           to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as b
    from (select created_at from generations where org_id = ${org.id} order by created_at desc offset ${Math.floor(ROWS * 0.3)} limit ${Math.floor(ROWS * 0.2)}) x`;
  const window = `created_after=${encodeURIComponent(w.a)}&created_before=${encodeURIComponent(w.b)}`;
  await run('filtered middle: created_after/before (20 % of rows)', window, true);
  const worst = results.reduce((a, b) => (b[1] > a[1] ? b : a));
  say(
    `lists bench: worst p99 ${worst[1].toFixed(2)} ms (${worst[0]}), ${(worst[1] / baseline).toFixed(2)}× GET /generations/{id}; target p99 < ${TARGET_MS} ms per page ${results.every(([, p]) => p < TARGET_MS) ? 'MET' : 'NOT MET'}`,
  );
} finally {
  await sql.end();
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
