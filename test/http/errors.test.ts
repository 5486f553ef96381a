// The error envelope on every error path, and request validation naming the failing fields.
import t, { type Test } from 'tap';
import { operationIndex, operationsById } from '../../src/operations/executor.ts';
import { PENDING_OPERATIONS } from '../../src/operations/pending.ts';
import { startTestApp } from '../helpers/app.ts';
import { exampleRequest } from '../helpers/examples.ts';

const app = await startTestApp(t, { BODY_LIMIT_BYTES: String(64 * 1024) });
const { key } = await app.workspace({ credits: 1000 });

const envelope = (t: Test, res: { status: number; body: any }, status: number, code: string) => {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.error?.code, code, `code ${code}`);
  t.type(res.body?.error?.message, 'string');
  t.equal(res.body?.error?.retryable, status === 429 || status >= 500, 'retryable exactly for 429 and 5xx');
  t.type(res.body?.error?.context, 'object');
};

t.test('unknown route → 404 not_found in the envelope; a known path with a wrong method → 405 with Allow', async (t) => {
  envelope(t, await app.request('GET', '/api/v1/nope'), 404, 'not_found');
  envelope(t, await app.request('GET', '/'), 404, 'not_found');
  const wrong = await app.request('DELETE', '/api/v1/models');
  envelope(t, wrong, 405, 'method_not_allowed');
  t.equal(wrong.headers.get('allow'), 'GET, HEAD');
});

t.test('malformed JSON → 400 bad_request', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', { key, raw: '{"type": "static_ad",', contentType: 'application/json' });
  envelope(t, res, 400, 'bad_request');
  t.match(res.body.error.message, /Malformed JSON/);
  const empty = await app.request('POST', '/api/v1/generations', { key, raw: '', contentType: 'application/json' });
  envelope(t, empty, 400, 'bad_request');
});

t.test('body over the limit → 413 payload_too_large', async (t) => {
  // The operation's own limit from the contract (x-body-limit-bytes: 131072 on createGeneration).
  const res = await app.request('POST', '/api/v1/generations', {
    key,
    raw: JSON.stringify({ type: 'static_ad', prompt: 'x'.repeat(130 * 1024) }),
    contentType: 'application/json',
  });
  envelope(t, res, 413, 'payload_too_large');
  t.equal(res.body.error.context.limit_bytes, 128 * 1024);
  // /mcp declares none: BODY_LIMIT_BYTES (64 KiB in this file) applies.
  const mcp = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70 * 1024) } }),
  });
  t.equal(mcp.status, 413);
});

t.test('unsupported content type → 415', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', {
    key,
    raw: 'type=static_ad',
    contentType: 'application/x-www-form-urlencoded',
  });
  envelope(t, res, 415, 'unsupported_media_type');
});

t.test('unknown body fields are a 400 naming the field', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', { key, body: { type: 'static_ad', promt: 'typo' } });
  envelope(t, res, 400, 'bad_request');
  t.match(res.body.error.context.errors, [{ field: 'body.promt', message: 'is not a known field' }]);
  t.match(res.body.error.message, /promt/);
});

t.test('invalid body values name each failing field and why', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', {
    key,
    body: {
      type: 'banner',
      prompt: 'x'.repeat(8001),
      request_count: 11,
      reference_image_urls: Array(11).fill('https://example.com/a.png'),
    },
  });
  envelope(t, res, 400, 'bad_request');
  const fields = res.body.error.context.errors.map((e: { field: string }) => e.field).sort();
  t.same(fields, ['body.prompt', 'body.reference_image_urls', 'body.request_count', 'body.type']);
  const byField = Object.fromEntries(res.body.error.context.errors.map((e: { field: string; message: string }) => [e.field, e.message]));
  t.match(byField['body.prompt'], /8000/);
  t.match(byField['body.request_count'], /10/);
  t.match(byField['body.type'], /static_ad/);
});

t.test('a missing required field and a wrong type are named', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', { key, body: { prompt: 5 } });
  envelope(t, res, 400, 'bad_request');
  t.match(res.body.error.context.errors, [
    { field: 'body.type', message: 'is required' },
    { field: 'body.prompt', message: 'must be string' },
  ]);
  const noBody = await app.request('POST', '/api/v1/generations', { key });
  envelope(t, noBody, 400, 'bad_request');
});

t.test('bodies are not coerced: "3" is not an integer', async (t) => {
  const res = await app.request('POST', '/api/v1/generations', { key, body: { type: 'static_ad', request_count: '3' } });
  envelope(t, res, 400, 'bad_request');
  t.match(res.body.error.context.errors, [{ field: 'body.request_count', message: 'must be integer' }]);
});

t.test('invalid path and query parameters → 400 naming the parameter', async (t) => {
  const gen = await app.request('GET', '/api/v1/generations/not-a-uuid', { key });
  envelope(t, gen, 400, 'bad_request');
  t.match(gen.body.error.context.errors, [{ field: 'path.id' }]);
  const video = await app.request('GET', '/api/v1/videos/abc', { key });
  envelope(t, video, 400, 'bad_request');
  t.match(video.body.error.context.errors, [{ field: 'path.id' }]);
  const zero = await app.request('GET', '/api/v1/videos/0', { key });
  envelope(t, zero, 400, 'bad_request');
  const limit = await app.request('GET', '/api/v1/editor/videos?limit=101', { key });
  envelope(t, limit, 400, 'bad_request');
  t.match(limit.body.error.context.errors, [{ field: 'query.limit' }]);
  const unknown = await app.request('GET', '/api/v1/editor/videos?lmit=5', { key });
  envelope(t, unknown, 400, 'bad_request');
  t.match(unknown.body.error.context.errors, [{ field: 'query.lmit', message: 'is not a known field' }]);
  const header = await app.request('POST', '/api/v1/generations', {
    key,
    body: { type: 'static_ad' },
    headers: { 'idempotency-key': 'k'.repeat(161) },
  });
  envelope(t, header, 400, 'bad_request');
  t.match(header.body.error.context.errors, [{ field: 'header.idempotency-key' }]);
});

t.test('operations whose capability lands later answer 501 not_implemented, after auth and validation', async (t) => {
  for (const id of PENDING_OPERATIONS) {
    const op = operationsById.get(id)!;
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { key, body: req.body });
    envelope(t, res, 501, 'not_implemented');
    t.equal(res.body.error.context.operation_id, id);
  }
  // Only pending operations declare 501.
  for (const op of operationIndex.operations) {
    t.equal('501' in op.responses, PENDING_OPERATIONS.has(op.operationId), `${op.operationId} declares 501 iff pending`);
  }
});

t.test('an unexpected failure is a 500 server_error in the envelope, retryable, with no internals leaked', async (t) => {
  // A real failure underneath: the table the key lookup reads disappears for a moment.
  await app.service.ctx.sql`alter table api_keys rename to api_keys_gone`;
  try {
    const res = await app.request('GET', '/api/v1/assets', { key });
    envelope(t, res, 500, 'server_error');
    t.notMatch(res.text, /api_keys_gone|relation|stack/i, 'no SQL or stack in the body');
  } finally {
    await app.service.ctx.sql`alter table api_keys_gone rename to api_keys`;
  }
  const after = await app.request('GET', '/api/v1/assets', { key });
  t.equal(after.status, 200, 'recovers once the table is back');
});
