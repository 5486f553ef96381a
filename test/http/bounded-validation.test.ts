// Validation cost is bounded by the contract, not by the input (security issue: a 100,000-operation
// PATCH body took 34 s of API CPU and froze every other request; a 100k-item array answered 500
// `Maximum call stack size exceeded`). Each case answers its 4xx at once while another request is served.
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';
import { createProject } from '../editor/helpers.ts';

const app = await startTestApp(t);
const { key, orgId } = await app.workspace({ credits: 1000 });
const balance = async () => (await app.request('GET', '/api/v1/assets', { key })).status; // touches the API only

/** Sends `req` and, 50 ms later, GET /models; both answer; returns both times. */
async function alongside(req: () => Promise<{ status: number; body: any }>) {
  const started = performance.now();
  const main = req().then((r) => ({ r, ms: performance.now() - started }));
  await new Promise((r) => setTimeout(r, 50));
  const t0 = performance.now();
  const models = await app.request('GET', '/api/v1/models');
  const modelsMs = performance.now() - t0;
  return { ...(await main), models, modelsMs };
}

t.test('PATCH with 100,000 empty operations: 400 naming the limit, at once, while GET /models is served', async (t) => {
  const video = await createProject(app, key);
  const raw = JSON.stringify({ operations: Array.from({ length: 100_000 }, () => ({})) });
  t.ok(raw.length > 290 * 1024, 'the body of the report (~293 KiB)');
  const { r, ms, models, modelsMs } = await alongside(() =>
    app.request('PATCH', `/api/v1/editor/videos/${video.id}`, { key, raw, contentType: 'application/json' }),
  );
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'bad_request');
  t.same(r.body.error.context.errors, [{ field: 'body.operations', message: 'must NOT have more than 100 items' }]);
  t.match(r.body.error.message, /validation stopped at its first error/);
  // Was 34 s; generous bounds, the point is "not proportional to the square of the input".
  t.ok(ms < 1500, `answered in ${Math.round(ms)} ms`);
  t.equal(models.status, 200, 'GET /models answered meanwhile');
  t.ok(modelsMs < 1500, `GET /models took ${Math.round(modelsMs)} ms`);
  const after = await app.request('GET', `/api/v1/editor/videos/${video.id}`, { key });
  t.equal(after.body.version, video.version, 'the project is unchanged');
});

t.test('a large body that fails on an early field reports that field, not a scan of the rest', async (t) => {
  const video = await createProject(app, key);
  const raw = JSON.stringify({
    instructions: 5,
    operations: Array.from({ length: 99 }, () => ({ type: 'set_title', title: 'x'.repeat(30_000) })),
  });
  const r = await app.request('PATCH', `/api/v1/editor/videos/${video.id}`, { key, raw, contentType: 'application/json' });
  t.equal(r.status, 400);
  t.ok(
    r.body.error.context.errors.some((e: any) => e.field === 'body.instructions'),
    'names body.instructions',
  );
});

t.test("over the operation's declared body limit → 413 with that limit, before parsing", async (t) => {
  const raw = JSON.stringify({ type: 'static_ad', reference_image_urls: Array.from({ length: 1_000_000 }, () => 'x') });
  const { r, ms, models } = await alongside(() =>
    app.request('POST', '/api/v1/generations', { key, raw, contentType: 'application/json' }),
  );
  t.equal(r.status, 413);
  t.equal(r.body.error.code, 'payload_too_large');
  t.equal(r.body.error.context.limit_bytes, 131072, 'createGeneration declares x-body-limit-bytes 131072');
  t.ok(ms < 1500, `answered in ${Math.round(ms)} ms`);
  t.equal(models.status, 200);
  t.equal(await balance(), 200);
});

t.test('100,000 reference URLs through MCP (16 MiB body): bad_request naming the field, never server_error', async (t) => {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'create_generation',
      arguments: { type: 'static_ad', reference_image_urls: Array.from({ length: 100_000 }, (_, i) => `https://example.com/${i}.png`) },
    },
  };
  const started = performance.now();
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  const ms = performance.now() - started;
  t.equal(res.status, 200);
  const out = (await res.json()) as any;
  t.equal(out.result?.isError, true);
  t.equal(out.result?.structuredContent?.error?.code, 'bad_request');
  t.match(JSON.stringify(out.result.structuredContent.error.context.errors), /reference_image_urls/);
  t.ok(ms < 3000, `answered in ${Math.round(ms)} ms`);
  const row = await app.service.ctx.sql`select credits from organizations where id = ${orgId}`;
  t.equal(Number(row[0].credits), 1000, 'nothing charged');
});

t.test('more failing fields than the contract allows: at most 100 in context.errors, the rest counted in the message', async (t) => {
  const video = await createProject(app, key);
  const operations = Array.from({ length: 100 }, () => ({ type: 'set_title', title: 5, extra: true }));
  const r = await app.request('PATCH', `/api/v1/editor/videos/${video.id}`, { key, body: { operations } });
  t.equal(r.status, 400);
  t.equal(r.body.error.context.errors.length, 100, 'capped at the schema maxItems');
  t.match(r.body.error.message, /and \d+ more/);
});
