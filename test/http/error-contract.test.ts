// Errors that keep the contract: a capped field list that says what it left out, no control
// characters echoed, one 404 context shape, 405 with Allow, and the served document's absolute
// server URL. app.request checks every response against the spec (its patterns, maxItems, enums).
import t from 'tap';
import { operationIndex } from '../../src/operations/executor.ts';
import { PENDING_OPERATIONS } from '../../src/operations/pending.ts';
import { startTestApp } from '../helpers/app.ts';
import { exampleRequest } from '../helpers/examples.ts';
import { createProject } from '../editor/helpers.ts';

const app = await startTestApp(t);
const { key } = await app.workspace({ credits: 1000 });
const CONTROL = /[\u0000-\u001F\u007F]/;

t.test('150 failing caption entries → at most 100 field errors, and the message says how many were left out', async (t) => {
  const p = await createProject(app, key);
  const captions = Array.from({ length: 150 }, () => ({ text: 'x', startMs: -1, endMs: 10 }));
  const res = await app.request('PATCH', `/api/v1/editor/videos/${p.id}`, {
    key,
    body: { operations: [{ type: 'add_captions', from_seconds: 0, captions }] },
  });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'bad_request');
  t.equal(res.body.error.context.errors.length, 100);
  t.match(res.body.error.context.errors[0].field, /^body\.operations\[0\]\.captions\[0\]\.startMs$/);
  t.match(res.body.error.message, /first 100; 50 more were left out/);
});

t.test('control characters in a query name are escaped, never echoed', async (t) => {
  const res = await app.request('GET', '/api/v1/models?a%1Fb=1');
  t.equal(res.status, 400);
  const { message, context } = res.body.error;
  t.notOk(CONTROL.test(message), 'message has no control character');
  t.ok(context.errors.length > 0);
  for (const e of context.errors)
    t.notOk(CONTROL.test(e.field) || CONTROL.test(e.message), `${JSON.stringify(e.field)} has no control character`);
  t.ok(
    context.errors.some((e: { field: string }) => e.field === 'query.a\\u001fb'),
    'the name is shown with its escape',
  );
  t.match(message, /query\.a\\u001fb/);
  // Escaping makes text longer: still within the contract's lengths (checked by app.request).
  const names = Array.from({ length: 6 }, (_, i) => `${i}${'%1F'.repeat(150)}=1`).join('&');
  const long = await app.request('GET', `/api/v1/models?${names}`);
  t.equal(long.status, 400);
  for (const e of long.body.error.context.errors) t.notOk(CONTROL.test(e.field));
});

t.test('every 404 of an operation with a path id has the context {resource, field}', async (t) => {
  const p = await createProject(app, key);
  let walked = 0;
  for (const op of operationIndex.operations) {
    if (!op.routePath.includes(':') || PENDING_OPERATIONS.has(op.operationId)) continue;
    // Once with no such video, once (for the export operations) with a video but no such export.
    const variants: Record<string, number>[] = op.routePath.includes(':export_id') ? [{}, { id: p.id }] : [{}];
    for (const ids of variants) {
      const req = exampleRequest(op, ids);
      const res = await app.request(op.method, req.path, { key, body: req.body });
      t.equal(res.status, 404, `${op.operationId} ${req.path} → 404`);
      const ctx = res.body?.error?.context ?? {};
      t.type(ctx.resource, 'string', `${op.operationId}: context.resource`);
      t.match(ctx.field, /^(path|body)\.[a-z_]+$/, `${op.operationId}: context.field names where the id was sent`);
      walked++;
    }
  }
  t.ok(walked >= 8, `walked ${walked} operations`);
  const gen = await app.request('GET', '/api/v1/generations/00000000-0000-4000-8000-000000000001', { key });
  t.same(gen.body.error.context, { resource: 'generation', field: 'path.id' });
  const none = await app.request('GET', '/api/v1/nope');
  t.same(none.body.error.context, { resource: 'route', field: 'path', method: 'GET', path: '/api/v1/nope' });
});

t.test('a known path with a wrong method → 405 method_not_allowed with Allow', async (t) => {
  for (const [method, path, allow] of [
    ['DELETE', '/api/v1/models', 'GET, HEAD'],
    ['PUT', '/api/v1/editor/videos/4242', 'GET, HEAD, PATCH'],
    ['POST', '/api/v1/editor/videos/4242/exports/4242', 'DELETE, GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['PATCH', '/api/v1/models/', 'GET, HEAD'],
  ] as const) {
    const res = await app.request(method, path, { key });
    t.equal(res.status, 405, `${method} ${path}`);
    t.equal(res.body.error.code, 'method_not_allowed');
    t.equal(res.body.error.retryable, false);
    t.equal(res.headers.get('allow'), allow, `${method} ${path} Allow`);
  }
  // A path that exists with no method: still 404.
  t.equal((await app.request('DELETE', '/api/v1/editor/videos/4242/nothing', { key })).status, 404);
});

t.test('the served OpenAPI document names absolute servers from PUBLIC_BASE_URL', async (t) => {
  const base = app.service.ctx.config.publicBaseUrl;
  t.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  const res = await app.request('GET', '/api/v1/openapi.json');
  t.equal(res.status, 200);
  const doc = JSON.parse(res.text);
  t.equal(doc.servers[0].url, `${base}/api/v1`);
  t.equal(doc.paths['/healthz'].servers[0].url, base);
  t.equal(doc.paths['/readyz'].servers[0].url, base);
  t.ok(doc.components.schemas.ErrorResponse, 'the envelope is ErrorResponse');
  t.notOk(doc.components.schemas.Error, 'no schema named Error');
  // The base URL works: the served server URL reaches the API.
  const models = await fetch(`${doc.servers[0].url}/models`);
  t.equal(models.status, 200);
  await models.text();
});
