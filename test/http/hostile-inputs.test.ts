// Hostile inputs that used to reach a 500 (or Fastify's own error format) are 4xx in the
// envelope, naming what is wrong, and no error ever carries SQL: lone surrogates in JSON strings,
// non-decimal and non-finite numbers in path and query parameters, a multipart body with no
// closing boundary, an over-long path parameter, JSON nested 10,000 deep (REST and MCP), and
// JSON bodies in another charset than UTF-8.
import t, { type Test } from 'tap';
import { JSON_MAX_DEPTH } from '../../src/http/json-body.ts';
import { findTemplate } from '../../src/services/catalog/catalog-data.ts';
import { startTestApp, type ApiResponse } from '../helpers/app.ts';

const app = await startTestApp(t);
const { key } = await app.workspace({ credits: 1000 });
const STATIC = findTemplate('bold-sale-banner')!;

const SQL = /failed query|insert into|select .* from|update .* set|delete from|params:|\$\d|relation "/i;

function envelope(t: Test, res: ApiResponse, status: number, code: string, field?: string) {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.error?.code, code, `code ${code}`);
  t.type(res.body?.error?.message, 'string');
  t.equal(res.body?.error?.retryable, false);
  t.type(res.body?.error?.context, 'object');
  if (field) t.match(res.body?.error?.context?.errors, [{ field }], `names ${field}`);
  t.notMatch(res.text, SQL, 'no SQL in the answer');
}

const json = (raw: string) => ({ key, raw, contentType: 'application/json' });

t.test('a lone surrogate in any JSON string is 400 naming the field', async (t) => {
  // The escape as it travels in the raw body ("\ud800" is valid JSON text, not valid Unicode).
  const prompt = await app.request(
    'POST',
    '/api/v1/generations',
    json(`{"type":"static_ad","template_slug":"${STATIC.slug}","prompt":"a\\ud800"}`),
  );
  envelope(t, prompt, 400, 'bad_request', 'body.prompt');
  t.match(prompt.body.error.message, /body\.prompt.*surrogate/);

  const low = await app.request(
    'POST',
    '/api/v1/generations',
    json(`{"type":"static_ad","template_slug":"${STATIC.slug}","prompt":"\\udc00 tail"}`),
  );
  envelope(t, low, 400, 'bad_request', 'body.prompt');
  const nested = await app.request('POST', '/api/v1/editor/videos', json('{"title":"ok","tracks":[{"name":"x\\udbff"}]}'));
  envelope(t, nested, 400, 'bad_request', 'body.tracks[0].name');
  const inKey = await app.request('POST', '/api/v1/editor/videos', json('{"title":"ok","k\\ud800":1}'));
  envelope(t, inKey, 400, 'bad_request');
  t.match(inKey.body.error.context.errors[0].field, /^body\.k/);

  // A well-formed pair (an emoji as escapes) is text like any other.
  const pair = await app.request(
    'POST',
    '/api/v1/generations',
    json(`{"type":"static_ad","template_slug":"${STATIC.slug}","prompt":"sale \\ud83d\\ude00"}`),
  );
  t.equal(pair.status, 200, pair.text.slice(0, 300));

  // A query string cannot carry a lone surrogate: percent-encoded surrogate bytes are not UTF-8
  // and stay as the literal text.
  const query = await app.request('GET', '/api/v1/editor/media?query=a%ED%A0%80', { key });
  t.equal(query.status, 200);
});

t.test('a database failure under a generation is a 500 with no SQL in it', async (t) => {
  // The row insert fails for real: the generations table is gone for a moment.
  await app.service.ctx.sql`alter table generations rename to generations_gone`;
  try {
    const res = await app.request('POST', '/api/v1/generations', {
      key,
      body: { type: 'static_ad', template_slug: STATIC.slug, prompt: 'sale' },
    });
    t.equal(res.status, 500);
    t.equal(res.body?.error?.code, 'server_error');
    t.same(res.body.error.context, {}, 'nothing of the failure in the context');
    t.notMatch(res.text, /generations_gone|insert|relation|select|\$\d/i, 'no SQL, table or parameter in the answer');
  } finally {
    await app.service.ctx.sql`alter table generations_gone rename to generations`;
  }
});

t.test('numbers in path and query parameters: plain decimal only, finite, in range', async (t) => {
  for (const id of [
    'Infinity',
    '-Infinity',
    '1e309',
    'NaN',
    '0x10',
    '1e1',
    '-0',
    '+5',
    '%2012',
    '12.0',
    '99999999999999999999',
    '9007199254740993',
  ]) {
    const editor = await app.request('GET', `/api/v1/editor/videos/${id}`, { key });
    envelope(t, editor, 400, 'bad_request', 'path.id');
    const video = await app.request('GET', `/api/v1/videos/${id}`, { key });
    envelope(t, video, 400, 'bad_request', 'path.id');
  }
  for (const limit of ['1e309', 'Infinity', '0x10', '1e1', '-0', ' 5', '99999999999999999999']) {
    const res = await app.request('GET', `/api/v1/editor/videos?limit=${encodeURIComponent(limit)}`, { key });
    envelope(t, res, 400, 'bad_request', 'query.limit');
  }
  // Plain decimal still works.
  t.equal((await app.request('GET', '/api/v1/editor/videos?limit=5', { key })).status, 200);
  const missing = await app.request('GET', '/api/v1/editor/videos/9007199254740991', { key });
  t.equal(missing.status, 404, 'the largest id is a valid id (not found)');
});

t.test('a multipart body with no closing boundary is 400', async (t) => {
  const b = '----unterminated';
  const part = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n`;
  for (const raw of [part, `${part}more bytes\r\n--${b}`, `--${b}\r\nContent-Disposition: form-data; name="title"\r\n\r\nhalf a field`]) {
    const res = await app.request('POST', '/api/v1/editor/media', { key, raw, contentType: `multipart/form-data; boundary=${b}` });
    envelope(t, res, 400, 'bad_request', 'body');
  }
});

t.test("a path parameter over 200 characters is 400 in the envelope, not Fastify's format", async (t) => {
  for (const path of [`/api/v1/generations/${'a'.repeat(201)}`, `/api/v1/editor/videos/${'9'.repeat(300)}`]) {
    const res = await app.request('GET', path, { key, unchecked: true });
    envelope(t, res, 400, 'bad_request', 'path');
    t.notOk('statusCode' in res.body, 'no Fastify error body');
  }
  const undecodable = await app.request('GET', '/api/v1/generations/%E0%A4%A', { key, unchecked: true });
  t.equal(undecodable.status < 500, true);
  t.equal(typeof undecodable.body?.error?.code, 'string', 'an undecodable URL is in the envelope too');
});

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

t.test('JSON nested deeper than the limit is 400 naming where (REST)', async (t) => {
  for (const kind of ['array', 'object'] as const) {
    const res = await app.request('POST', '/api/v1/generations', json(`{"type":"static_ad","prompt":${nested(10_000, kind)}}`));
    envelope(t, res, 400, 'bad_request');
    t.match(res.body.error.context.errors[0].field, /^body\.prompt/);
    t.match(res.body.error.message, new RegExp(`more than ${JSON_MAX_DEPTH} levels`));
  }
  // At the limit it is an ordinary (invalid) value: the validator names the field.
  const atLimit = await app.request(
    'POST',
    '/api/v1/generations',
    json(`{"type":"static_ad","template_slug":"${STATIC.slug}","prompt":${nested(JSON_MAX_DEPTH - 1, 'array')}}`),
  );
  envelope(t, atLimit, 400, 'bad_request', 'body.prompt');
  t.match(atLimit.body.error.context.errors, [{ field: 'body.prompt', message: 'must be string' }]);
});

t.test('MCP tools/call with arguments nested 10,000 deep: a JSON-RPC invalid-request error, never server_error', async (t) => {
  const headers = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
  const calls = [
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_generation","arguments":{"type":"static_ad","prompt":${nested(10_000, 'array')}}}}`,
    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_workspace","arguments":{"x":${nested(10_000, 'object')}}}}`,
    // A batch goes to the SDK Server rather than the direct path: refused the same way.
    `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_workspace","arguments":{"x":${nested(10_000, 'object')}}}}]`,
  ];
  for (const body of calls) {
    const res = await fetch(`${app.url}/mcp`, { method: 'POST', headers, body });
    const text = await res.text();
    t.equal(res.status, 400, text.slice(0, 200));
    const msg = JSON.parse(text);
    t.match(msg, { jsonrpc: '2.0', id: null, error: { code: -32600, message: /more than 64 levels/ } });
    t.notMatch(text, /server_error|Internal/);
  }
  // A lone surrogate in MCP arguments (routed to a query parameter) is refused the same way.
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_editor_media","arguments":{"query":"a\\ud800"}}}',
  });
  t.equal(res.status, 400);
  t.match(await res.json(), { error: { code: -32600, message: /params\.arguments\.query .*surrogate/ } });
  // A normal call still works.
  const ok = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_workspace","arguments":{}}}',
  });
  t.equal(ok.status, 200);
  t.notOk(((await ok.json()) as { result: { isError?: boolean } }).result.isError);
});

t.test('JSON bodies in a charset other than UTF-8 are 415 unsupported_media_type', async (t) => {
  const body = JSON.stringify({ title: 'charset' });
  for (const contentType of [
    'application/json; charset=utf-16',
    'application/json;charset="UTF-16LE"',
    'application/json; charset=iso-8859-1',
  ]) {
    const res = await app.request('POST', '/api/v1/editor/videos', {
      key,
      raw: Buffer.from(body, contentType.includes('16') ? 'utf16le' : 'latin1'),
      contentType,
    });
    envelope(t, res, 415, 'unsupported_media_type');
    t.match(res.body.error.message, /UTF-8/);
  }
  for (const contentType of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json']) {
    const res = await app.request('POST', '/api/v1/editor/videos', { key, raw: body, contentType });
    t.equal(res.status, 200, `${contentType}: accepted`);
  }
  // The same on /mcp, as a JSON-RPC error with the HTTP status.
  const mcp = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json; charset=utf-16',
      accept: 'application/json, text/event-stream',
    },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  });
  t.equal(mcp.status, 415);
  t.match(await mcp.json(), { jsonrpc: '2.0', error: { code: -32600, message: /UTF-8/ } });
});
