// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization
// 2025-11-25): an MCP client whose client_id is the https URL of its metadata completes the flow
// without registering (the document served by a local HTTPS server, 127.0.0.1 allowed through
// OUTBOUND_ALLOW_IPS, its self-signed certificate trusted by this process), the document is kept
// for its Cache-Control lifetime, and every document that cannot be used is refused with an error
// page (never a redirect: the client's redirect URIs are not established). Also RFC 9207's iss on
// the success redirect and the step-up challenge of a token lacking a social scope.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import { metadataLifetimeSeconds } from '../../src/services/oauth/client-metadata.ts';
import { authorizeOverHttp, member, pkce, startMcpApp, tokenRequest } from '../mcp/helpers.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);

const CB = 'http://127.0.0.1:9/callback';
const fetches = new Map<string, number>();
let base = '';
const doc = (p: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: `${base}${p}`,
    client_name: 'Metadata Client',
    redirect_uris: [CB],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

// Each path one kind of document.
const routes: Record<string, (res: import('node:http').ServerResponse, p: string) => void> = {
  '/clients/good.json': (res, p) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(doc(p)),
  '/clients/mismatch.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(doc('/clients/other.json')),
  '/clients/no-redirects.json': (res, p) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(doc(p, { redirect_uris: undefined })),
  '/clients/secret.json': (res, p) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(doc(p, { token_endpoint_auth_method: 'client_secret_basic' })),
  '/clients/big.json': (res, p) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(doc(p, { software_statement: 'x'.repeat(6000) })),
  '/clients/slow.json': (res, p) => {
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(doc(p)), 3000);
    res.on('close', () => clearTimeout(timer));
  },
  '/clients/page.html': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Hello</title>'),
  '/clients/moved.json': (res) => res.writeHead(302, { location: '/clients/good.json' }).end(),
  '/clients/gone.json': (res) => res.writeHead(404).end(),
};
const server = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, (req, res) => {
  const p = (req.url ?? '').split('?')[0];
  fetches.set(p, (fetches.get(p) ?? 0) + 1);
  const route = routes[p];
  if (route) route(res, p);
  else res.writeHead(404).end();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => server.close(() => r())));
server.on('connection', (s) => t.teardown(() => s.destroy()));
base = `https://127.0.0.1:${(server.address() as { port: number }).port}`;

const app = await startMcpApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', OAUTH_CLIENT_METADATA_TIMEOUT_MS: '800', MCP_AUTH_CACHE_SECONDS: '0' });
const ws = await app.workspace({ credits: 10, name: 'Metadata Studio' });
const m = await member(app, ws.orgId);
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const authorize = (clientId: string, redirectUri = CB, url = app.url) =>
  fetch(
    `${url}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 's',
    })}`,
    { redirect: 'manual' },
  );

t.test('the authorization server metadata says it takes Client ID Metadata Documents and sends iss', async (t) => {
  const md = (await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.equal(md.client_id_metadata_document_supported, true);
  t.equal(md.authorization_response_iss_parameter_supported, true);
});

t.test('a client identified by its metadata URL: authorize → code (with iss) → token → /mcp, no registration', async (t) => {
  const clientId = `${base}/clients/good.json`;
  const { verifier, challenge } = pkce();
  const back = await authorizeOverHttp(app, { clientId, challenge, email: m.email, password: m.password, state: 'cimd' });
  const code = back.searchParams.get('code');
  t.ok(code, 'a code');
  t.equal(back.searchParams.get('state'), 'cimd');
  t.equal(back.searchParams.get('iss'), app.url, 'RFC 9207: the success redirect names the issuer');
  const tokens = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: CB,
    client_id: clientId,
    code_verifier: verifier,
    resource: `${app.url}/mcp`,
  });
  t.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.body.access_token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_workspace', arguments: {} } }),
  });
  t.equal(res.status, 200);
  t.match(await res.text(), /Metadata Studio/);

  // The refresh token works with the same client_id.
  const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
  t.equal(refreshed.status, 200);

  // Kept for its max-age: a second authorization does not fetch the document again.
  t.equal(fetches.get('/clients/good.json'), 1, 'fetched once');
  const again = await authorize(clientId);
  t.equal(again.status, 303);
  t.equal(fetches.get('/clients/good.json'), 1, 'served from what was kept');

  // The consent page names the app as its document does.
  const page = await fetch(`${app.url}${again.headers.get('location')}`, {
    headers: { cookie: again.headers.get('set-cookie')!.split(';')[0] },
  });
  const html = await page.text();
  t.match(html, /Metadata Client/);
  t.match(html, `published by the app at <strong>${new URL(base).host}</strong>`, 'and the host that publishes it (§8.5)');
});

t.test('documents that cannot be used: an error page, never a redirect, and nothing kept', async (t) => {
  const cases: [string, RegExp][] = [
    [`${base}/clients/mismatch.json`, /names another client_id/],
    [`${base}/clients/no-redirects.json`, /redirect_uris must be an array/],
    [`${base}/clients/secret.json`, /token_endpoint_auth_method none/],
    [`${base}/clients/big.json`, /larger than 5120 bytes/],
    [`${base}/clients/slow.json`, /did not arrive in time/],
    [`${base}/clients/page.html`, /is not JSON/],
    [`${base}/clients/moved.json`, /redirect/],
    [`${base}/clients/gone.json`, /HTTP 404/],
    // Not a Client Identifier URL at all.
    [`${base}/`, /must have a path/],
    [`${base}/clients/../clients/good.json`, /path segments/],
    [`https://user@127.0.0.1:1/c.json`, /user name or password/],
    // The guarded client's policy: no private address (only 127.0.0.1 is allowed in this test).
    ['https://10.1.2.3/client.json', /private/],
  ];
  for (const [clientId, text] of cases) {
    const res = await authorize(clientId);
    t.equal(res.status, 400, clientId);
    t.notOk(res.headers.get('location'), 'no redirect');
    t.match(res.headers.get('content-type'), /text\/html/);
    const html = await res.text();
    t.match(html, text, clientId);
    t.match(html, /invalid_client/);
  }
  // Refused documents are fetched again next time (never cached).
  const before = fetches.get('/clients/mismatch.json');
  await authorize(`${base}/clients/mismatch.json`);
  t.equal(fetches.get('/clients/mismatch.json'), before! + 1);
  // A client never resolved has no token endpoint access either.
  const token = await tokenRequest(app, { grant_type: 'authorization_code', code: 'x', client_id: `${base}/clients/mismatch.json` });
  t.equal(token.status, 401);
  t.equal(token.body.error, 'invalid_client');
});

t.test('a redirect URI the document does not list: an error page', async (t) => {
  const res = await authorize(`${base}/clients/good.json`, 'http://127.0.0.1:9/elsewhere');
  t.equal(res.status, 400);
  t.notOk(res.headers.get('location'));
  t.match(await res.text(), /redirect_uri\) is not registered/);
});

t.test('step-up: a tool needing social:read, called with a token without it, gets the insufficient_scope challenge', async (t) => {
  const clientId = `${base}/clients/good.json`;
  const { verifier, challenge } = pkce();
  const back = await authorizeOverHttp(app, { clientId, challenge, email: m.email, password: m.password, scope: 'generations:read' });
  const tokens = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code')!,
    redirect_uri: CB,
    client_id: clientId,
    code_verifier: verifier,
  });
  t.equal(tokens.body.scope, 'generations:read');
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.body.access_token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_social_accounts', arguments: {} } }),
  });
  t.equal(res.status, 403);
  t.match(
    res.headers.get('www-authenticate'),
    new RegExp(
      `^Bearer error="insufficient_scope", scope="generations:read social:read", resource_metadata="${app.url}/\\.well-known/oauth-protected-resource[^"]*"`,
    ),
  );
});

t.test('how long a document is kept: its Cache-Control, within 1 minute and 1 day', async (t) => {
  t.equal(metadataLifetimeSeconds('public, max-age=600', undefined), 600);
  t.equal(metadataLifetimeSeconds('max-age=600', '100'), 500, 'less its Age');
  t.equal(metadataLifetimeSeconds('max-age=600, s-maxage=1200', undefined), 1200, 's-maxage for a shared cache');
  t.equal(metadataLifetimeSeconds('max-age=5', undefined), 60, 'at least a minute');
  t.equal(metadataLifetimeSeconds('no-store', undefined), 60);
  t.equal(metadataLifetimeSeconds('max-age=99999999', undefined), 86400, 'at most a day');
  t.equal(metadataLifetimeSeconds(undefined, undefined), 3600, 'an hour when it says nothing');
});

t.test('fetching new documents counts against the per-address registration limit', async (t) => {
  const limited = await startMcpApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_OAUTH_REGISTRATIONS: '1' });
  t.equal((await authorize(`${base}/clients/good.json`, CB, limited.url)).status, 303);
  const before = fetches.get('/clients/gone.json') ?? 0;
  const res = await authorize(`${base}/clients/gone.json`, CB, limited.url);
  t.equal(res.status, 429);
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  t.match(await res.text(), /Too many new apps from this address/);
  t.equal(fetches.get('/clients/gone.json') ?? 0, before, 'not fetched');
  t.equal((await authorize(`${base}/clients/good.json`, CB, limited.url)).status, 303, 'a kept document needs no fetch');
});
