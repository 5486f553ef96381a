// GET /metrics: the Prometheus exposition of this process, behind METRICS_TOKEN. Scraped before
// and after real work (generations rendered by the workers, one failing and refunded, MCP tool
// calls through the SDK client, an unknown route) to see each series move by what was done.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { JOBS } from '../../src/pipelines/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/server.ts';
import { freePort, startTestApp, type TestApp } from '../helpers/app.ts';
import { connect } from '../mcp/helpers.ts';

const TOKEN = 'metrics-test-token-0123456789';

// A fixture host on loopback for the failing generation's reference image (it answers 404).
const fixtures = http.createServer((_req, res) => res.writeHead(404).end('missing'));
await new Promise<void>((r) => fixtures.listen(0, '127.0.0.1', r));
t.teardown(() => fixtures.close());
const missingImage = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}/missing.png`;

// JOB_SUPERVISE_SECONDS=1: pg-boss counts the queues every second (10 s by default), for the queue depth case.
// And an app without METRICS_TOKEN, started alongside.
const [app, bare] = await Promise.all([
  startTestApp(
    t,
    { METRICS_TOKEN: TOKEN, OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000', JOB_SUPERVISE_SECONDS: '1' },
    { workers: true },
  ),
  startTestApp(t),
]);

// --------------------------------------------------------------------------- exposition parsing

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (0.0.4) strictly: every line is a comment, blank, or a sample of a declared family. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string>; problems: string[] } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const problems: string[] = [];
  const sampleRe = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/;
  const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const typeLine = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (typeLine) {
      types.set(typeLine[1], typeLine[2]);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const m = sampleRe.exec(line);
    if (!m) {
      problems.push(`unparsable line: ${line}`);
      continue;
    }
    const labels: Record<string, string> = {};
    if (m[2]) {
      let consumed = 0;
      for (const l of m[2].matchAll(labelRe)) {
        labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        consumed += l[0].length;
      }
      if (consumed !== m[2].length) problems.push(`bad labels: ${line}`);
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') problems.push(`bad value: ${line}`);
    const family = m[1].replace(/_(bucket|sum|count)$/, '');
    if (!types.has(m[1]) && !types.has(family)) problems.push(`sample without # TYPE: ${line}`);
    samples.push({ name: m[1], labels, value });
  }
  return { samples, types, problems };
}

type Scrape = ReturnType<typeof parseExposition> & { get(name: string, labels: Record<string, string>): number };

async function scrape(t: Test, a: TestApp = app): Promise<Scrape> {
  const res = await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (res.status !== 200) t.fail(`scrape answered ${res.status}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? ''))
    t.fail(`content type ${res.headers.get('content-type')}`);
  const parsed = parseExposition(await res.text());
  return {
    ...parsed,
    // The sample with exactly these labels (a histogram's _count/_sum: all labels but `le`); 0 when absent.
    get(name, labels) {
      const want = Object.entries(labels);
      const s = parsed.samples.find(
        (x) => x.name === name && Object.keys(x.labels).length === want.length && want.every(([k, v]) => x.labels[k] === v),
      );
      return s?.value ?? 0;
    },
  };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// ------------------------------------------------------------------------------------- tests

t.test('unauthenticated scrapes are refused; without METRICS_TOKEN there is no /metrics', async (t) => {
  const none = await app.request('GET', '/metrics', { unchecked: true });
  t.equal(none.status, 401);
  t.equal(none.body.error.code, 'unauthorized');
  t.equal(none.body.error.retryable, false);
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  t.notMatch(none.text, /process_cpu|http_request_duration/);
  const wrong = await app.request('GET', '/metrics', { unchecked: true, headers: { authorization: `Bearer ${TOKEN}x` } });
  t.equal(wrong.status, 401);
  // An API key of a workspace is not the metrics token either.
  const { key } = await app.workspace({ credits: 0 });
  t.equal((await app.request('GET', '/metrics', { unchecked: true, key })).status, 401);
  const post = await app.request('POST', '/metrics', { unchecked: true, headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD');

  const res = await bare.request('GET', '/metrics', { unchecked: true, headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(res.status, 404, 'no token configured: no route');
  t.equal(res.body.error.code, 'not_found');
});

t.test('the exposition parses, with the process metrics and every family declared', async (t) => {
  const s = await scrape(t);
  t.same(s.problems, [], 'every line parses and belongs to a declared family');
  for (const [name, type] of [
    ['http_request_duration_seconds', 'histogram'],
    ['mcp_tool_calls_total', 'counter'],
    ['job_queue_depth', 'gauge'],
    ['job_duration_seconds', 'histogram'],
    ['credits_charged_total', 'counter'],
    ['credits_refunded_total', 'counter'],
    ['process_cpu_user_seconds_total', 'counter'],
    ['process_resident_memory_bytes', 'gauge'],
    ['nodejs_heap_size_used_bytes', 'gauge'],
    ['nodejs_eventloop_lag_seconds', 'gauge'],
  ] as const) {
    t.equal(s.types.get(name), type, `${name} is a ${type}`);
  }
  t.ok(s.get('process_resident_memory_bytes', {}) > 10_000_000, 'the resident memory is reported');
  // Queue depth for every queue the service declares, read from pg-boss.
  for (const queue of ['generation', 'generation-video', 'editor-export', 'reference-analysis']) {
    t.ok(
      s.samples.some((x) => x.name === 'job_queue_depth' && x.labels.queue === queue && x.labels.state === 'queued'),
      `${queue} queued depth`,
    );
    t.ok(
      s.samples.some((x) => x.name === 'job_queue_depth' && x.labels.queue === queue && x.labels.state === 'active'),
      `${queue} active depth`,
    );
  }
});

t.test('requests, generations (completed and failed), refunds and MCP tool calls move their series', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const before = await scrape(t);
  const labels200 = { operation: 'createGeneration', method: 'POST', status_code: '200' };

  // Three generations that complete, one that fails (its reference image is missing) and is refunded.
  const created: { id: string; credits: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await app.request('POST', '/api/v1/generations', {
      key: ws.key,
      body: { type: 'static_ad', template_slug: 'bold-sale-banner' },
    });
    t.equal(res.status, 200);
    created.push({ id: res.body.generations[0].id, credits: res.body.credits_deducted });
  }
  const failing = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'bold-sale-banner', reference_image_urls: [missingImage] },
  });
  t.equal(failing.status, 200);
  const failingId: string = failing.body.generations[0].id;
  const charged = created.reduce((n, g) => n + g.credits, 0) + failing.body.credits_deducted;
  t.ok(charged > 0, `${charged} credits deducted`);
  // A refused request (400) and an unknown route.
  t.equal((await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'static_ad' } })).status, 400);
  t.equal((await app.request('GET', '/api/v1/no-such-thing', { key: ws.key })).status, 404);

  // Two MCP tool calls through the SDK client: one succeeds, one is a not_found result.
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const catalog = await client.callTool({ name: 'list_generation_catalog', arguments: {} });
  t.notOk(catalog.isError);
  const missing = await client.callTool({ name: 'get_generation', arguments: { id: '00000000-0000-4000-8000-000000000001' } });
  t.ok(missing.isError);

  const finished = async (id: string) =>
    waitFor(`generation ${id}`, async () => {
      const res = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
      return res.body.status === 'generating' ? undefined : (res.body.status as string);
    });
  for (const g of created) t.equal(await finished(g.id), 'completed');
  t.equal(await finished(failingId), 'error');
  const [{ credits: balance }] = await app.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`;
  t.equal(balance, 1000 - charged + failing.body.credits_deducted, 'the failing generation was refunded');

  const after = await scrape(t);
  t.same(after.problems, []);
  const moved = (name: string, labels: Record<string, string>) => after.get(name, labels) - before.get(name, labels);
  t.equal(moved('http_request_duration_seconds_count', labels200), 4, 'createGeneration 200 counted 4 times');
  t.ok(moved('http_request_duration_seconds_sum', labels200) > 0, 'and its time summed');
  t.equal(moved('http_request_duration_seconds_bucket', { ...labels200, le: '+Inf' }), 4);
  t.equal(
    moved('http_request_duration_seconds_count', { operation: 'createGeneration', method: 'POST', status_code: '400' }),
    1,
    'the 400 by its status',
  );
  t.equal(
    moved('http_request_duration_seconds_count', { operation: '(no route)', method: 'GET', status_code: '404' }),
    1,
    'an unknown route',
  );
  t.ok(moved('http_request_duration_seconds_count', { operation: 'getGeneration', method: 'GET', status_code: '200' }) >= 4, 'the polls');
  t.ok(
    moved('http_request_duration_seconds_count', { operation: '/mcp', method: 'POST', status_code: '200' }) >= 2,
    'routes outside the contract by their pattern',
  );

  t.equal(moved('credits_charged_total', { operation: 'createGeneration' }), charged, 'credits charged = credits deducted');
  t.equal(
    moved('credits_refunded_total', { reason: 'generation_refund' }),
    failing.body.credits_deducted,
    'credits refunded = the failed generation',
  );
  const [{ sum: ledgerCharged }] = await app.service.ctx
    .sql`select -sum(delta)::int as sum from credit_ledger where org_id = ${ws.orgId} and reason = 'generation_charge'`;
  t.equal(ledgerCharged, charged, 'the ledger agrees');

  t.equal(moved('job_duration_seconds_count', { queue: 'generation', outcome: 'completed' }), 3, 'three jobs completed');
  t.equal(moved('job_duration_seconds_count', { queue: 'generation', outcome: 'failed' }), 1, 'one failed');
  t.equal(moved('job_duration_seconds_count', { queue: 'generation', outcome: 'retried' }), 0, 'none retried');
  t.ok(moved('job_duration_seconds_sum', { queue: 'generation', outcome: 'completed' }) > 0);

  t.equal(moved('mcp_tool_calls_total', { tool: 'list_generation_catalog', outcome: 'success' }), 1);
  t.equal(moved('mcp_tool_calls_total', { tool: 'get_generation', outcome: 'not_found' }), 1);
});

t.test('queue depth by queue: a job waiting while the workers are off reads as queued, then 0 once worked', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const boss = app.service.boss!;
  const depth = async (state: 'queued' | 'active') => (await scrape(t)).get('job_queue_depth', { queue: 'generation', state });
  await boss.offWork('generation', { wait: true });
  let restarted = false;
  const restart = async () => {
    if (restarted) return;
    restarted = true;
    await JOBS.find((j) => j.name === 'generation')!.start(boss, app.service.ctx);
  };
  t.teardown(restart);
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'bold-sale-banner' },
  });
  t.equal(res.status, 200);
  // pg-boss counts its queues every JOB_SUPERVISE_SECONDS; this process reuses a count for half of that.
  await waitFor('the waiting job to be counted', async () => ((await depth('queued')) === 1 ? true : undefined), 60_000);
  t.pass('one job queued');
  await restart();
  await waitFor('the generation to complete', async () => {
    const g = await app.request('GET', `/api/v1/generations/${res.body.generations[0].id}`, { key: ws.key });
    return g.body.status === 'completed' ? true : undefined;
  });
  await waitFor(
    'the queue to read empty',
    async () => ((await depth('queued')) === 0 && (await depth('active')) === 0 ? true : undefined),
    60_000,
  );
  t.pass('the queue reads empty again');
});

t.test('a worker process (no API) with METRICS_TOKEN serves GET /metrics alone on PORT', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-worker-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = {
    DATABASE_URL: app.databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    DEMO_WORKSPACE: '0',
    MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
  };
  const worker = await startService({ config: loadConfig({ ...env, METRICS_TOKEN: TOKEN }), api: false, workers: true });
  t.teardown(() => worker.stop());
  t.equal(worker.address, `http://127.0.0.1:${port}`);
  const s = await scrape(t, { ...app, url: worker.address! });
  t.same(s.problems, []);
  t.equal(s.types.get('job_duration_seconds'), 'histogram');
  t.ok(
    s.samples.some((x) => x.name === 'job_queue_depth' && x.labels.queue === 'generation'),
    'queue depth',
  );
  t.equal((await fetch(`${worker.address}/metrics`)).status, 401, 'unauthenticated: refused');
  const api = await fetch(`${worker.address}/api/v1/models`);
  t.equal(api.status, 404, 'no API on a worker');
  t.equal(((await api.json()) as { error: { code: string } }).error.code, 'not_found');

  // Without METRICS_TOKEN a worker listens on nothing.
  const quiet = await startService({ config: loadConfig({ ...env, PORT: String(await freePort()) }), api: false, workers: false });
  t.teardown(() => quiet.stop());
  t.equal(quiet.address, undefined);
  t.equal(quiet.app, undefined);

  // A short token is refused at start-up.
  t.throws(() => loadConfig({ ...env, METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 16 characters/);
});
