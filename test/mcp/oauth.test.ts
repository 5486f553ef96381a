// The OAuth 2.1 authorization server of /mcp over HTTP: metadata (RFC 9728, RFC 8414), dynamic
// registration (RFC 7591), the authorization code flow with PKCE S256, every RFC 6749 error the
// issue names, refresh-token rotation with reuse detection, revocation (RFC 7009), resource
// binding (RFC 8707), and the page protections (CSRF, same-origin, browser binding).
import { createHash } from 'node:crypto';
import t from 'tap';
import { eq } from 'drizzle-orm';
import { oauthCodes, oauthGrants, oauthTokens } from '../../src/db/schema/index.ts';
import {
  approveRequest,
  createAuthorizationRequest,
  createBrowserSession,
  getAuthorizationRequest,
  sha256,
} from '../../src/services/oauth/oauth.ts';
import {
  authorizeOverHttp,
  Browser,
  connect,
  hiddenField,
  member,
  oauthTokens as getTokens,
  pkce,
  registerClient,
  startMcpApp,
  tokenRequest,
} from './helpers.ts';

// Resolve every token on every request: revocation must show at once in these tests.
const app = await startMcpApp(t, { MCP_AUTH_CACHE_SECONDS: '0' });
const ws = await app.workspace({ credits: 100, name: 'Acme Studio' });
const m = await member(app, ws.orgId);
const CB = 'http://127.0.0.1:9/callback';
const resource = `${app.url}/mcp`;
const db = app.service.ctx.db;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const listTools = (token: string) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

t.test('metadata: protected resource (RFC 9728) and authorization server (RFC 8414)', async (t) => {
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const res = await fetch(`${app.url}${path}`);
    t.equal(res.status, 200);
    t.same(await res.json(), {
      resource,
      authorization_servers: [app.url],
      scopes_supported: ['generations:read', 'generations:write', 'social:read', 'social:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Media Generation and Editing API',
      resource_documentation: `${app.url}/api/v1/skill.md`,
    });
  }
  const res = await fetch(`${app.url}/.well-known/oauth-authorization-server`);
  const md = (await res.json()) as Record<string, unknown>;
  t.match(md, {
    issuer: app.url,
    authorization_endpoint: `${app.url}/oauth/authorize`,
    token_endpoint: `${app.url}/oauth/token`,
    registration_endpoint: `${app.url}/oauth/register`,
    revocation_endpoint: `${app.url}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
  });
});

t.test('dynamic client registration (RFC 7591)', async (t) => {
  const pub = await registerClient(app, {
    client_name: 'Claude',
    redirect_uris: ['http://localhost:33418/oauth/callback', 'cursor://anysphere.cursor-retrieval/oauth/callback'],
  });
  t.match(pub, {
    client_id: /^[0-9a-f-]{36}$/,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_name: 'Claude',
  });
  t.notOk('client_secret' in pub, 'public clients get no secret');
  const conf = await registerClient(app, {
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: ['https://app.example.test/cb'],
  });
  t.match(conf.client_secret, /^mcs_/);
  const bad = async (body: Record<string, unknown>, error: string) => {
    const res = await fetch(`${app.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    t.equal(res.status, 400);
    t.match(await res.json(), { error, error_description: String }, `${JSON.stringify(body)} → ${error}`);
  };
  await bad({ redirect_uris: ['http://evil.example.test/cb'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: ['https://app.example.test/cb#frag'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: ['https://app.example.test/cb#'] }, 'invalid_redirect_uri');
  // No credentials in a redirect URI: they would be sent on, and `https://app.example.test@evil.example/`
  // reads as one host while being another (RFC 3986 §7.6).
  await bad({ redirect_uris: ['https://user:pw@app.example.test/cb'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: ['https://user@app.example.test/cb'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: ['http://user:pw@127.0.0.1:9/callback'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: [CB, 'https://:pw@app.example.test/cb'] }, 'invalid_redirect_uri');
  await bad({ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri');
  await bad({}, 'invalid_redirect_uri');
  await bad({ redirect_uris: [CB], grant_types: ['password'] }, 'invalid_client_metadata');
  await bad({ redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata');
  await bad({ redirect_uris: [CB], scope: 'admin' }, 'invalid_client_metadata');
  const notJson = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
  t.equal(notJson.status, 400);
  t.match(await notJson.json(), { error: 'invalid_client_metadata' });
});

t.test('the whole flow over HTTP: tokens that work on /mcp, stored only as hashes', async (t) => {
  const tokens = await getTokens(app, { email: m.email, password: m.password });
  t.match(tokens, { token_type: 'Bearer', expires_in: 900, scope: 'generations:read generations:write social:read social:write' });
  t.match(tokens.access_token, /^mat_/);
  t.match(tokens.refresh_token, /^mrt_/);
  const client = await connect(app, tokens.access_token);
  t.teardown(() => client.close());
  const res = await client.callTool({ name: 'get_workspace', arguments: {} });
  t.match(res.structuredContent, {
    organization: { id: ws.orgId, name: 'Acme Studio' },
    scopes: ['generations:read', 'generations:write', 'social:read', 'social:write'],
  });
  const rows = await db.select().from(oauthTokens);
  t.notOk(JSON.stringify(rows).includes(tokens.access_token), 'the access token is not stored');
  t.notOk(JSON.stringify(rows).includes(tokens.refresh_token), 'the refresh token is not stored');
  t.ok(
    rows.some((r) => r.tokenHash === sha256(tokens.access_token)),
    'its SHA-256 is',
  );
});

t.test('the member approves a subset of the scopes: the token carries that subset', async (t) => {
  const tokens = await getTokens(app, { email: m.email, password: m.password, scopesChecked: ['generations:read'] });
  t.equal(tokens.scope, 'generations:read');
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.access_token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_generation', arguments: { type: 'static_ad' } },
    }),
  });
  t.equal(res.status, 403);
  t.match(res.headers.get('www-authenticate'), /error="insufficient_scope", scope="generations:read generations:write"/);
});

t.test('authorize: errors before the client is known are pages, never redirects', async (t) => {
  const client = await registerClient(app);
  const { challenge } = pkce();
  const base = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CB,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  const cases: [Record<string, string>, RegExp][] = [
    [{ ...base, client_id: '' }, /client_id is missing/],
    [{ ...base, client_id: '7a0e4c8e-1c1f-4b8f-9f0e-000000000000' }, /not registered/],
    [{ ...base, redirect_uri: 'http://127.0.0.1:9/elsewhere' }, /redirect_uri\) is not registered/],
    [{ ...base, redirect_uri: '' }, /redirect_uri is missing/],
    // A loopback redirect URI matches whatever its port (RFC 8252 §7.3), never with a fragment
    // (RFC 6749 §3.1.2) or credentials added.
    [{ ...base, redirect_uri: `${CB}#frag` }, /must not contain a fragment/],
    [{ ...base, redirect_uri: `${CB}#` }, /must not contain a fragment/],
    [{ ...base, redirect_uri: 'http://127.0.0.1:4567/callback#frag' }, /must not contain a fragment/],
    [{ ...base, redirect_uri: 'http://user:pw@127.0.0.1:9/callback' }, /must not contain a user name or password/],
  ];
  for (const [q, text] of cases) {
    const res = await fetch(`${app.url}/oauth/authorize?${new URLSearchParams(q)}`, { redirect: 'manual' });
    t.equal(res.status, 400);
    t.notOk(res.headers.get('location'), 'no redirect');
    t.match(res.headers.get('content-type'), /text\/html/);
    t.match(await res.text(), text);
  }
});

t.test('authorize: errors after the client is known redirect with error, state and iss', async (t) => {
  const client = await registerClient(app);
  const { challenge } = pkce();
  const base = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CB,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
  };
  const cases: [Record<string, string>, string][] = [
    [{ ...base, code_challenge: '' }, 'invalid_request'],
    [{ ...base, code_challenge_method: 'plain' }, 'invalid_request'],
    [{ ...base, code_challenge: 'short' }, 'invalid_request'],
    [{ ...base, response_type: 'token' }, 'unsupported_response_type'],
    [{ ...base, scope: 'generations:read admin' }, 'invalid_scope'],
    [{ ...base, resource: 'https://other.example.test/mcp' }, 'invalid_target'],
  ];
  for (const [q, error] of cases) {
    const res = await fetch(`${app.url}/oauth/authorize?${new URLSearchParams(q)}`, { redirect: 'manual' });
    t.equal(res.status, 303, error);
    const to = new URL(res.headers.get('location')!);
    t.equal(`${to.origin}${to.pathname}`, CB);
    t.equal(to.searchParams.get('error'), error);
    t.equal(to.searchParams.get('state'), 'xyz');
    t.equal(to.searchParams.get('iss'), app.url);
    t.ok(to.searchParams.get('error_description'));
  }
  const dup = await fetch(`${app.url}/oauth/authorize?${new URLSearchParams(base)}&scope=a&scope=b`, { redirect: 'manual' });
  t.equal(new URL(dup.headers.get('location')!).searchParams.get('error'), 'invalid_request', 'repeated parameters');
});

t.test('deny: access_denied back to the client, with its state', async (t) => {
  const client = await registerClient(app);
  const { challenge } = pkce();
  const back = await authorizeOverHttp(app, {
    clientId: client.client_id,
    challenge,
    email: m.email,
    password: m.password,
    decision: 'deny',
    state: 'deny-state',
  });
  t.equal(back.searchParams.get('error'), 'access_denied');
  t.equal(back.searchParams.get('state'), 'deny-state');
  t.equal(back.searchParams.get('iss'), app.url);
  t.notOk(back.searchParams.get('code'));
});

/** A fresh code for a public client (and its verifier). */
async function freshCode(scope?: string) {
  const client = await registerClient(app);
  const { verifier, challenge } = pkce();
  const back = await authorizeOverHttp(app, { clientId: client.client_id, challenge, email: m.email, password: m.password, scope });
  return { client, verifier, code: back.searchParams.get('code')! };
}

const exchange = (c: { client: { client_id: string }; verifier: string; code: string }, extra: Record<string, string> = {}) =>
  tokenRequest(app, {
    grant_type: 'authorization_code',
    code: c.code,
    redirect_uri: CB,
    client_id: c.client.client_id,
    code_verifier: c.verifier,
    resource,
    ...extra,
  });

t.test('token endpoint: the RFC 6749 errors', async (t) => {
  const c = await freshCode();
  const expectError = async (
    p: Promise<{ status: number; headers: Headers; body: Record<string, unknown> }>,
    status: number,
    error: string,
    what: string,
  ) => {
    const r = await p;
    t.equal(r.status, status, `${what}: status`);
    t.equal(r.body.error, error, `${what}: ${error}`);
    t.type(r.body.error_description, 'string');
    t.equal(r.headers.get('cache-control'), 'no-store');
    return r;
  };
  await expectError(
    exchange(c, { code_verifier: `${createHash('sha256').update('x').digest('base64url')}abcdefgh` }),
    400,
    'invalid_grant',
    'bad PKCE verifier',
  );
  await expectError(exchange(c, { redirect_uri: 'http://127.0.0.1:9/other' }), 400, 'invalid_grant', 'wrong redirect_uri');
  await expectError(exchange(c, { code_verifier: '' }), 400, 'invalid_request', 'missing code_verifier');
  await expectError(exchange(c, { resource: 'https://other.example.test/mcp' }), 400, 'invalid_target', 'another resource');
  await expectError(exchange(c, { grant_type: 'password' }), 400, 'unsupported_grant_type', 'password grant');
  await expectError(exchange(c, { grant_type: 'client_credentials' }), 400, 'unsupported_grant_type', 'client_credentials grant');
  await expectError(exchange(c, { client_id: '7a0e4c8e-1c1f-4b8f-9f0e-000000000000' }), 401, 'invalid_client', 'unknown client');
  await expectError(exchange(c, { client_id: (await registerClient(app)).client_id }), 400, 'invalid_grant', 'code of another client');
  await expectError(exchange(c, { code: 'mac_nope' }), 400, 'invalid_grant', 'unknown code');
  const notForm = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(notForm.status, 400);
  t.match(await notForm.json(), { error: 'invalid_request' });

  // The failed attempts above did not consume the code: it still works once, then never again.
  const ok = await exchange(c);
  t.equal(ok.status, 200);
  t.equal((await listTools(ok.body.access_token)).status, 200, 'the access token works');
  await expectError(exchange(c), 400, 'invalid_grant', 'reused code');
  t.equal((await listTools(ok.body.access_token)).status, 401, 'reusing the code revoked the tokens issued from it');
  const refreshed = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: ok.body.refresh_token,
    client_id: c.client.client_id,
  });
  t.equal(refreshed.body.error, 'invalid_grant', 'so is its refresh token');
});

t.test('an expired code is invalid_grant', async (t) => {
  const c = await freshCode();
  await db
    .update(oauthCodes)
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where(eq(oauthCodes.codeHash, sha256(c.code)));
  const r = await exchange(c);
  t.equal(r.status, 400);
  t.equal(r.body.error, 'invalid_grant');
  t.match(r.body.error_description, /expired/);
});

t.test('confidential clients authenticate with their registered method', async (t) => {
  const client = await registerClient(app, { token_endpoint_auth_method: 'client_secret_basic' });
  const { verifier, challenge } = pkce();
  const code = (
    await authorizeOverHttp(app, { clientId: client.client_id, challenge, email: m.email, password: m.password })
  ).searchParams.get('code')!;
  const basic = (secret: string) =>
    `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const form = { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier };
  const wrong = await tokenRequest(app, form, { authorization: basic('mcs_wrong') });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error, 'invalid_client');
  t.match(wrong.headers.get('www-authenticate'), /^Basic /);
  const post = await tokenRequest(app, { ...form, client_id: client.client_id, client_secret: client.client_secret! });
  t.equal(post.body.error, 'invalid_client', 'client_secret_post is not its method');
  const none = await tokenRequest(app, { ...form, client_id: client.client_id });
  t.equal(none.body.error, 'invalid_client', 'no secret at all');
  const ok = await tokenRequest(app, form, { authorization: basic(client.client_secret!) });
  t.equal(ok.status, 200);
  t.match(ok.body, { token_type: 'Bearer' });
});

t.test('refresh tokens rotate; presenting a rotated one revokes the whole family', async (t) => {
  const first = await getTokens(app, { email: m.email, password: m.password });
  const r1 = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
    client_id: first.client.client_id,
  });
  t.equal(r1.status, 200);
  t.not(r1.body.refresh_token, first.refresh_token, 'a new refresh token');
  t.not(r1.body.access_token, first.access_token, 'a new access token');
  t.equal((await listTools(r1.body.access_token)).status, 200);

  const narrow = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: r1.body.refresh_token,
    client_id: first.client.client_id,
    scope: 'generations:read',
  });
  t.equal(narrow.status, 200);
  t.equal(narrow.body.scope, 'generations:read', 'a refresh may narrow the access token');
  const wider = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: narrow.body.refresh_token,
    client_id: first.client.client_id,
    scope: 'generations:read admin',
  });
  t.equal(wider.body.error, 'invalid_scope');
  const r3 = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: narrow.body.refresh_token,
    client_id: first.client.client_id,
  });
  t.equal(r3.body.scope, 'generations:read generations:write social:read social:write', 'the refresh token keeps the granted scopes');

  // An attacker replays the first (rotated) refresh token.
  const replay = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
    client_id: first.client.client_id,
  });
  t.equal(replay.status, 400);
  t.equal(replay.body.error, 'invalid_grant');
  t.equal((await listTools(r3.body.access_token)).status, 401, 'the newest access token of the family is revoked');
  const later = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: r3.body.refresh_token,
    client_id: first.client.client_id,
  });
  t.equal(later.body.error, 'invalid_grant', 'and the newest refresh token');
  const [grant] = await db
    .select()
    .from(oauthGrants)
    .innerJoin(oauthTokens, eq(oauthTokens.grantId, oauthGrants.id))
    .where(eq(oauthTokens.tokenHash, sha256(first.refresh_token)));
  t.equal(grant.oauth_grants.revokedReason, 'refresh_token_reuse');
});

t.test('revocation (RFC 7009)', async (t) => {
  const a = await getTokens(app, { email: m.email, password: m.password });
  const revoke = (token: string, clientId = a.client.client_id) =>
    fetch(`${app.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clientId }),
    });
  t.equal((await revoke('mat_unknown')).status, 200, 'unknown tokens: 200');
  const other = await registerClient(app);
  t.equal((await revoke(a.access_token, other.client_id)).status, 200, 'another client’s token: 200 …');
  t.equal((await listTools(a.access_token)).status, 200, '… and nothing revoked');
  t.equal((await revoke(a.access_token)).status, 200);
  const refused = await listTools(a.access_token);
  t.equal(refused.status, 401, 'a revoked access token is refused');
  t.match(refused.headers.get('www-authenticate'), /error="invalid_token"/);
  const r = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: a.refresh_token, client_id: a.client.client_id });
  t.equal(r.status, 200, 'revoking an access token leaves the refresh token');
  t.equal((await revoke(r.body.refresh_token)).status, 200);
  t.equal((await listTools(r.body.access_token)).status, 401, 'revoking the refresh token revokes the family');
  const unauth = await fetch(`${app.url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: 'x' }),
  });
  t.equal(unauth.status, 401);
  t.match(await unauth.json(), { error: 'invalid_client' });
});

t.test('a token bound to another resource, or expired, is refused by /mcp', async (t) => {
  const cfg = app.service.ctx.config.oauth;
  const client = await registerClient(app);
  const session = await createBrowserSession(db, cfg, m.id);
  const id = await createAuthorizationRequest(db, cfg, {
    sessionId: session.id,
    clientId: client.client_id,
    redirectUri: CB,
    scopes: ['generations:read'],
    state: null,
    codeChallenge: pkce().challenge,
    resource: 'https://other.example.test/mcp',
  });
  const req = await getAuthorizationRequest(db, id, session);
  const { verifier, challenge } = pkce();
  const code = await approveRequest(db, cfg, { ...req!, codeChallenge: challenge }, { id: m.id, orgId: ws.orgId }, ['generations:read']);
  const tok = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: CB,
    client_id: client.client_id,
    code_verifier: verifier,
  });
  t.equal(tok.status, 200, 'a token for https://other.example.test/mcp');
  const res = await listTools(tok.body.access_token);
  t.equal(res.status, 401);
  t.match(
    res.headers.get('www-authenticate'),
    /error="invalid_token", error_description="This access token was issued for another resource/,
  );

  const mine = await getTokens(app, { email: m.email, password: m.password });
  await db
    .update(oauthTokens)
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where(eq(oauthTokens.tokenHash, sha256(mine.access_token)));
  const expired = await listTools(mine.access_token);
  t.equal(expired.status, 401);
  t.match(expired.headers.get('www-authenticate'), /expired/);
});

t.test('the pages: CSRF token, same-origin POSTs, bound to the browser that started the flow', async (t) => {
  const client = await registerClient(app);
  const { challenge } = pkce();
  const b = new Browser(app.url);
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CB,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const start = await b.fetch(`/oauth/authorize?${q}`);
  t.equal(start.status, 303);
  t.match(start.headers.get('set-cookie'), /^mapi_oauth_session=mss_[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
  const page = await b.fetch(start.headers.get('location')!);
  t.equal(page.status, 200);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  const html = await page.text();
  const request = hiddenField(html, 'request')!;
  const csrf = hiddenField(html, 'csrf')!;
  const creds = { request, email: m.email, password: m.password };

  const noCsrf = await b.post('/oauth/sign-in', { ...creds, csrf: 'forged' });
  t.equal(noCsrf.status, 403, 'a wrong form token is refused');
  const crossSite = await b.post('/oauth/sign-in', { ...creds, csrf }, { origin: 'https://evil.example.test' });
  t.equal(crossSite.status, 403, 'a cross-origin POST is refused');
  const fetchSite = await b.post('/oauth/sign-in', { ...creds, csrf }, { 'sec-fetch-site': 'cross-site' });
  t.equal(fetchSite.status, 403, 'Sec-Fetch-Site: cross-site is refused');
  const otherBrowser = new Browser(app.url);
  const stolen = await otherBrowser.post('/oauth/sign-in', { ...creds, csrf });
  t.equal(stolen.status, 400, 'another browser cannot use the request');
  t.match(await stolen.text(), /expired/);

  const wrong = await b.post('/oauth/sign-in', { ...creds, password: 'wrong password', csrf });
  t.equal(wrong.status, 400);
  const wrongHtml = await wrong.text();
  t.match(wrongHtml, /role="alert"[^>]*>The email or password is incorrect/);
  t.match(wrongHtml, /aria-invalid="true"/);
  t.match(wrongHtml, new RegExp(`value="${m.email.replace(/\./g, '\\.')}"`), 'the email is kept');
  const unknown = await b.post('/oauth/sign-in', { ...creds, email: 'nobody@example.test', csrf });
  t.match(await unknown.text(), /The email or password is incorrect/, 'an unknown email reads the same');

  const ok = await b.post('/oauth/sign-in', { ...creds, csrf });
  t.equal(ok.status, 303);
  t.match(ok.headers.get('set-cookie'), /^mapi_oauth_session=mss_/, 'a new session cookie after sign-in');
  const consent = await b.fetch(ok.headers.get('location')!);
  const consentHtml = await consent.text();
  t.match(consentHtml, /Signed in as <strong>/);
  t.match(consentHtml, /Acme Studio/);
  for (const s of ['generations:read', 'generations:write', 'social:read', 'social:write'])
    t.match(consentHtml, new RegExp(`<code>${s}</code>`), `lists ${s}`);
  t.not(hiddenField(consentHtml, 'csrf'), csrf, 'the form token changed with the session');
  const oldToken = await b.post('/oauth/consent', { request, csrf, decision: 'approve', scope: 'generations:read' });
  t.equal(oldToken.status, 403, 'the pre-sign-in form token no longer works');
  const none = await b.post('/oauth/consent', { request, csrf: hiddenField(consentHtml, 'csrf')!, decision: 'approve' });
  t.equal(none.status, 400);
  t.match(await none.text(), /Leave at least one permission checked/);
  const approve = await b.post('/oauth/consent', {
    request,
    csrf: hiddenField(consentHtml, 'csrf')!,
    decision: 'approve',
    scope: 'generations:read',
  });
  t.equal(approve.status, 303);
  t.ok(new URL(approve.headers.get('location')!).searchParams.get('code'));
  const again = await b.post('/oauth/consent', {
    request,
    csrf: hiddenField(consentHtml, 'csrf')!,
    decision: 'approve',
    scope: 'generations:read',
  });
  t.equal(again.status, 400, 'a request is answered once');
});

t.test('signing in twice: a signed-in browser goes straight to consent; sign-out switches accounts', async (t) => {
  const client = await registerClient(app);
  const b = new Browser(app.url);
  const q = () =>
    new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CB,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
  let res = await b.fetch(`/oauth/authorize?${q()}`);
  let html = await (await b.fetch(res.headers.get('location')!)).text();
  res = await b.post('/oauth/sign-in', {
    request: hiddenField(html, 'request')!,
    csrf: hiddenField(html, 'csrf')!,
    email: m.email,
    password: m.password,
  });
  t.equal(res.status, 303);
  res = await b.fetch(`/oauth/authorize?${q()}`);
  t.match(res.headers.get('location'), /^\/oauth\/consent\?request=/, 'already signed in');
  html = await (await b.fetch(res.headers.get('location')!)).text();
  res = await b.post('/oauth/sign-out', { request: hiddenField(html, 'request')!, csrf: hiddenField(html, 'csrf')! });
  t.equal(res.status, 303);
  t.match(res.headers.get('location'), /^\/oauth\/sign-in\?request=/);
  const signIn = await b.fetch(res.headers.get('location')!);
  t.match(await signIn.text(), /<label for="email">Email<\/label>/, 'the sign-in page again');
});
