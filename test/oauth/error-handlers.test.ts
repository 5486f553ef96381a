// The OAuth authorization server (src/oauth/) and the MCP adapter (src/mcp/) are separate
// encapsulated scopes of one Fastify app. Errors Fastify raises before a handler runs (a body too
// large or unparsable) are answered by the scope the route belongs to: RFC 6749 JSON at the OAuth
// JSON endpoints, an HTML page on the OAuth pages, JSON-RPC on /mcp; the form parser of the OAuth
// forms does not leak into the REST API, and the MCP 401 points at metadata that the OAuth scope
// serves.
import t from 'tap';
import { startMcpApp } from '../mcp/helpers.ts';

const app = await startMcpApp(t);
const ws = await app.workspace({ scopes: ['generations:read'] });
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const bigForm = `a=${'x'.repeat(70 * 1024)}`; // over the 64 KiB form limit

t.test('OAuth JSON endpoints answer RFC 6749 JSON', async (t) => {
  const tooBig = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: FORM, body: bigForm });
  t.equal(tooBig.status, 400, 'a form over 64 KiB at /oauth/token: 400');
  t.equal(tooBig.headers.get('cache-control'), 'no-store');
  t.match(await tooBig.json(), { error: 'invalid_request', error_description: String });

  const notJson = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"redirect_uris":',
  });
  t.equal(notJson.status, 400, 'unparsable registration: 400');
  t.match(await notJson.json(), { error: 'invalid_client_metadata', error_description: String });
});

t.test('OAuth pages answer an HTML page', async (t) => {
  const tooBig = await fetch(`${app.url}/oauth/consent`, { method: 'POST', headers: { ...FORM, origin: app.url }, body: bigForm });
  t.equal(tooBig.status, 413, 'a form over 64 KiB at /oauth/consent: 413');
  t.match(tooBig.headers.get('content-type'), /^text\/html/);
  t.match(tooBig.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  t.match(await tooBig.text(), /<h1 id="page-title">Request refused<\/h1>/);

  const notJson = await fetch(`${app.url}/oauth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: app.url },
    body: '{',
  });
  t.equal(notJson.status, 400, 'unparsable body on a page: 400');
  t.match(await notJson.text(), /<h1 id="page-title">Request refused<\/h1>/);
});

t.test('/mcp answers JSON-RPC, with or without a trailing slash', async (t) => {
  const auth = { authorization: `Bearer ${ws.key}` };
  // A form body reaches the endpoint: the bearer is checked first, then the transport's 415.
  const anonymous = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { ...MCP, ...FORM }, body: 'a=1' });
  t.equal(anonymous.status, 401, 'a form without a bearer: 401');
  t.match(anonymous.headers.get('www-authenticate'), /^Bearer resource_metadata="/);
  const form = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { ...MCP, ...FORM, ...auth }, body: 'a=1' });
  t.equal(form.status, 415, 'a form with a bearer: 415');
  t.match(await form.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /^Unsupported Media Type/ } });
  const tooBig = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { ...MCP, ...FORM, ...auth }, body: bigForm });
  t.equal(tooBig.status, 413, 'a form over 64 KiB: 413');
  t.match(await tooBig.json(), { jsonrpc: '2.0', id: null, error: { code: -32600 } });

  for (const path of ['/mcp', '/mcp/']) {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { ...MCP, ...auth }, body: '{oops' });
    t.equal(res.status, 400, `${path}: unparsable JSON is 400`);
    t.match(
      await res.json(),
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: /^Parse error/ } },
      `${path}: a JSON-RPC parse error`,
    );
  }
});

t.test('the OAuth form parser stays out of the REST API', async (t) => {
  const res = await fetch(`${app.url}/api/v1/generations`, {
    method: 'POST',
    headers: { ...FORM, authorization: `Bearer ${ws.key}` },
    body: 'type=static_ad',
  });
  t.equal(res.status, 415);
  t.match(await res.json(), { error: { code: 'unsupported_media_type' } });
});

t.test('the MCP 401 names metadata the OAuth server serves', async (t) => {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: MCP,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  t.equal(res.status, 401);
  const url = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
  t.equal(url, `${app.url}/.well-known/oauth-protected-resource`);
  const md = await fetch(url!);
  t.equal(md.status, 200);
  const doc = (await md.json()) as { resource: string; authorization_servers: string[] };
  t.equal(doc.resource, `${app.url}/mcp`);
  const as = await fetch(`${doc.authorization_servers[0]}/.well-known/oauth-authorization-server`);
  t.equal(as.status, 200);
  t.match(await as.json(), { issuer: app.url, token_endpoint: `${app.url}/oauth/token` });
});
