// Rate limits of the OAuth authorization server (src/services/oauth/oauth-limits.ts) on the real
// service with small limits: failed sign-ins per account (a correct password waits too, other
// accounts do not, success clears the count) and per client IP; client registrations and
// authorization requests per client IP; the client IP from X-Forwarded-For only with TRUST_PROXY.
import { eq } from 'drizzle-orm';
import t from 'tap';
import { oauthBrowserSessions } from '../../src/db/schema/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { Browser, hiddenField, member, pkce, registerClient, startMcpApp } from './helpers.ts';

const LIMITS = {
  RATE_LIMIT_SIGN_IN_FAILURES: '3',
  RATE_LIMIT_SIGN_IN_FAILURES_PER_IP: '5',
  RATE_LIMIT_OAUTH_REGISTRATIONS: '4',
  RATE_LIMIT_OAUTH_AUTHORIZATIONS: '6',
  TRUST_PROXY: 'loopback',
};

/** A browser at the sign-in page of a fresh authorization request, coming from `ip`. */
async function signInPage(app: TestApp, clientId: string, ip: string) {
  const b = new Browser(app.url);
  const { challenge } = pkce();
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:9/callback',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's',
  });
  let res = await b.fetch(`/oauth/authorize?${q}`, { headers: { 'x-forwarded-for': ip } });
  if (res.status !== 303) throw new Error(`authorize: ${res.status}`);
  res = await b.fetch(res.headers.get('location')!);
  const html = await res.text();
  const signIn = (email: string, password: string) =>
    b.post(
      '/oauth/sign-in',
      { request: hiddenField(html, 'request')!, csrf: hiddenField(html, 'csrf')!, email, password },
      { 'x-forwarded-for': ip },
    );
  return { browser: b, signIn };
}

t.test('failed sign-ins: per account, a wait even for the right password, success clears the count', async (t) => {
  const app = await startMcpApp(t, LIMITS);
  const ws = await app.workspace();
  const alice = await member(app, ws.orgId, 'alice@example.test', 'alice password 1');
  const bob = await member(app, ws.orgId, 'bob@example.test', 'bob password 1');
  const client = await registerClient(app);

  const page = await signInPage(app, client.client_id, '203.0.113.1');
  for (let i = 0; i < 3; i++) {
    const res = await page.signIn('Alice@Example.test', 'wrong');
    t.equal(res.status, 400, `failure ${i + 1}: the usual error`);
    t.match(await res.text(), /The email or password is incorrect/);
  }
  // The account is now waiting, whatever the case of the email and even with the right password.
  let res = await page.signIn('alice@example.test', alice.password);
  t.equal(res.status, 429, 'the right password must wait too');
  const wait = Number(res.headers.get('retry-after'));
  t.ok(wait > 0 && wait <= 900, `Retry-After within the 15-minute window (${wait})`);
  const html = await res.text();
  t.match(html, /Too many failed sign-in attempts\. Wait \d+ minutes?, then try again\./);
  t.match(html, /role="alert"|aria-live/, 'the error is announced like the others');
  t.match(res.headers.get('content-type'), /^text\/html/);

  // Another account from another address is not affected; its success clears its own count.
  const other = await signInPage(app, client.client_id, '203.0.113.2');
  t.equal((await other.signIn('bob@example.test', 'wrong')).status, 400);
  t.equal((await other.signIn('bob@example.test', 'wrong')).status, 400);
  res = await other.signIn('bob@example.test', bob.password);
  t.equal(res.status, 303, 'bob signs in');
  const [sessions] = await Promise.all([
    app.service.ctx.db.select().from(oauthBrowserSessions).where(eq(oauthBrowserSessions.memberId, bob.id)),
  ]);
  t.equal(sessions.length, 1, 'bob has a signed-in session');
  const again = await signInPage(app, client.client_id, '203.0.113.2');
  for (let i = 0; i < 2; i++)
    t.equal((await again.signIn('bob@example.test', 'wrong')).status, 400, 'the count started over after success');
  t.equal((await again.signIn('bob@example.test', bob.password)).status, 303, 'still under the limit: two failures since the success');
});

t.test('failed sign-ins per address, across accounts', async (t) => {
  const app = await startMcpApp(t, LIMITS);
  const ws = await app.workspace();
  const carol = await member(app, ws.orgId, 'carol@example.test', 'carol password 1');
  const client = await registerClient(app);
  const page = await signInPage(app, client.client_id, '198.51.100.7');
  // Five failures on five accounts (each under its own limit of three) exhaust the address.
  for (let i = 0; i < 5; i++) t.equal((await page.signIn(`guess${i}@example.test`, 'Summer2026!')).status, 400);
  const res = await page.signIn('carol@example.test', carol.password);
  t.equal(res.status, 429, 'this address must wait');
  t.ok(Number(res.headers.get('retry-after')) > 0);
  const elsewhere = await signInPage(app, client.client_id, '198.51.100.8');
  t.equal((await elsewhere.signIn('carol@example.test', carol.password)).status, 303, 'carol signs in from another address');
});

t.test('registrations and authorization requests per address; X-Forwarded-For only from trusted proxies', async (t) => {
  const app = await startMcpApp(t, LIMITS);
  const register = (ip: string) =>
    fetch(`${app.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ client_name: 'Spam', redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
    });
  for (let i = 0; i < 4; i++) t.equal((await register('192.0.2.10')).status, 201, `registration ${i + 1}`);
  const count = async () => Number((await app.service.ctx.sql`select count(*)::int as n from oauth_clients`)[0].n);
  const before = await count();
  let res = await register('192.0.2.10');
  t.equal(res.status, 429);
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.match(await res.json(), {
    error: 'temporarily_unavailable',
    error_description: /Too many client registrations from this address; retry in \d+ minutes?/,
  });
  t.equal(await count(), before, 'nothing stored');
  t.equal((await register('192.0.2.11')).status, 201, 'another address registers');

  // Authorization requests: the seventh from one address is refused by redirect (RFC 6749 4.1.2.1).
  const client = await registerClient(app, {});
  const authorize = (ip: string) => {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:9/callback',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
    });
    return fetch(`${app.url}/oauth/authorize?${q}`, { redirect: 'manual', headers: { 'x-forwarded-for': ip } });
  };
  for (let i = 0; i < 6; i++) t.equal((await authorize('192.0.2.20')).status, 303, `authorization request ${i + 1}`);
  const sessions = async () => Number((await app.service.ctx.sql`select count(*)::int as n from oauth_browser_sessions`)[0].n);
  const stored = await sessions();
  res = await authorize('192.0.2.20');
  t.equal(res.status, 303);
  const back = new URL(res.headers.get('location')!);
  t.equal(`${back.origin}${back.pathname}`, 'http://127.0.0.1:9/callback', 'back to the client');
  t.equal(back.searchParams.get('error'), 'temporarily_unavailable');
  t.equal(back.searchParams.get('state'), 'xyz');
  t.ok(Number(res.headers.get('retry-after')) > 0);
  t.equal(await sessions(), stored, 'no session or request stored');
  t.equal((await authorize('192.0.2.21')).status, 303, 'another address goes on');
  t.match((await authorize('192.0.2.21')).headers.get('location'), /^\/oauth\/sign-in\?request=/);
});

t.test('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address is the client', async (t) => {
  const app = await startMcpApp(t, { ...LIMITS, TRUST_PROXY: '' });
  const register = (ip: string) =>
    fetch(`${app.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
    });
  for (let i = 0; i < 4; i++) t.equal((await register(`192.0.2.${30 + i}`)).status, 201);
  t.equal((await register('192.0.2.99')).status, 429, 'a forged header does not buy another budget');
});
