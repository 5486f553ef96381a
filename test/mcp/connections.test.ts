// The member's connected-apps page (/oauth/connections) over HTTP: sign in on the page, see only
// one's own live grants, disconnect one (its tokens are refused on /mcp at once, the other app
// keeps working), no disconnecting another member's grant, form token and same-origin checks,
// sign-out. The keyboard walk through the same page in Chromium is in browser.test.ts.
import t from 'tap';
import { Browser, hiddenField, member, oauthTokens, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t);
const ws = await app.workspace();
const ana = await member(app, ws.orgId, 'ana@example.test', 'ana password 1');
const ben = await member(app, ws.orgId, 'ben@example.test', 'ben password 1');

const listTools = (token: string) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

async function signedIn(email: string, password: string) {
  const b = new Browser(app.url);
  let res = await b.fetch('/oauth/connections');
  t.equal(res.status, 200);
  let html = await res.text();
  t.match(html, /<h1 id="page-title">Sign in to see your connected apps<\/h1>/);
  t.match(res.headers.get('set-cookie'), /^mapi_oauth_session=mss_[\w-]+; Path=\/; HttpOnly; SameSite=Lax/);
  res = await b.post('/oauth/connections', { action: 'sign-in', csrf: hiddenField(html, 'csrf')!, email, password });
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), '/oauth/connections');
  res = await b.fetch('/oauth/connections');
  html = await res.text();
  return { b, html };
}

t.test('a member sees their connected apps and disconnects one at once', async (t) => {
  const first = await oauthTokens(app, { email: ana.email, password: ana.password });
  const second = await oauthTokens(app, { email: ana.email, password: ana.password });
  const bens = await oauthTokens(app, { email: ben.email, password: ben.password });

  const { b, html } = await signedIn(ana.email, ana.password);
  t.match(html, /<h1 id="page-title">Connected apps<\/h1>/);
  t.match(html, /Signed in as <strong>ana@example\.test<\/strong>/);
  const grants = [...html.matchAll(/name="grant" value="([^"]+)"/g)].map((m) => m[1]);
  t.equal(grants.length, 2, 'her two apps, not Ben’s');
  t.equal([...html.matchAll(/aria-label="Disconnect Test client"/g)].length, 2, 'each button names its app');
  t.match(html, /Permissions: <code>generations:read<\/code>/);

  // Which grant is the first app's? Disconnect it and see which token stops.
  let res = await b.post('/oauth/connections', { action: 'disconnect', grant: grants[0], csrf: hiddenField(html, 'csrf')! });
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), `/oauth/connections?disconnected=${grants[0]}`);
  res = await b.fetch(res.headers.get('location')!);
  const after = await res.text();
  t.match(after, /<p class="status" role="status">Disconnected Test client\. It can no longer use your workspace\.<\/p>/);
  t.same(
    [...after.matchAll(/name="grant" value="([^"]+)"/g)].map((m) => m[1]),
    [grants[1]],
    'one app left',
  );

  // The revocation reaches the token cache through a notification: poll for a moment.
  let statuses: number[] = [];
  for (let i = 0; i < 60 && !statuses.includes(401); i++) {
    if (i) await new Promise((r) => setTimeout(r, 50));
    statuses = await Promise.all([first, second, bens].map(async (x) => (await listTools(x.access_token)).status));
  }
  t.same(statuses.toSorted(), [200, 200, 401], 'exactly one token refused: the disconnected app’s');
  t.equal((await listTools(bens.access_token)).status, 200, 'Ben’s app untouched');

  // The notice is only for this member's own disconnected grants.
  const spoof = await (await b.fetch(`/oauth/connections?disconnected=${grants[1]}`)).text();
  t.notMatch(spoof, /role="status"/, 'a live grant id shows no notice');
});

t.test('no disconnecting another member’s app; form token, origin and sign-out', async (t) => {
  const bens = await oauthTokens(app, { email: ben.email, password: ben.password });
  const { b, html } = await signedIn(ana.email, ana.password);
  const csrf = hiddenField(html, 'csrf')!;
  const benGrant = (await app.service.ctx.sql`select id from oauth_grants where member_id = ${ben.id} and revoked_at is null limit 1`)[0]
    .id as string;

  let res = await b.post('/oauth/connections', { action: 'disconnect', grant: benGrant, csrf });
  t.equal(res.status, 404);
  t.match(await res.text(), /role="alert">That app is not connected with your account/);
  t.equal((await listTools(bens.access_token)).status, 200, 'Ben’s app still works');

  res = await b.post('/oauth/connections', { action: 'disconnect', grant: benGrant, csrf: 'forged' });
  t.equal(res.status, 403, 'a wrong form token');
  res = await b.post('/oauth/connections', { action: 'sign-out', csrf }, { origin: 'https://evil.example' });
  t.equal(res.status, 403, 'another origin');
  res = await b.post('/oauth/connections', { action: 'sign-out', csrf }, { 'sec-fetch-site': 'cross-site' });
  t.equal(res.status, 403, 'a cross-site form');

  res = await b.post('/oauth/connections', { action: 'sign-out', csrf });
  t.equal(res.status, 303);
  const out = await (await b.fetch('/oauth/connections')).text();
  t.match(out, /Sign in to see your connected apps/, 'signed out: the sign-in form again');
  res = await b.post('/oauth/connections', { action: 'disconnect', grant: benGrant, csrf: hiddenField(out, 'csrf')! });
  t.equal(res.status, 400);
  t.match(await res.text(), /Sign in first/);

  // Without any session (cookie gone): back to the page.
  const stranger = new Browser(app.url);
  res = await stranger.post('/oauth/connections', { action: 'sign-out', csrf });
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), '/oauth/connections');
});

t.test('sign-in errors on the page: wrong password, missing fields', async (t) => {
  const b = new Browser(app.url);
  const html = await (await b.fetch('/oauth/connections')).text();
  const csrf = hiddenField(html, 'csrf')!;
  let res = await b.post('/oauth/connections', { action: 'sign-in', csrf, email: ana.email, password: 'wrong' });
  t.equal(res.status, 400);
  const page = await res.text();
  t.match(page, /<div class="alert" role="alert" id="form-error">The email or password is incorrect/);
  t.match(page, /value="ana@example\.test" aria-invalid="true" aria-describedby="form-error"/, 'the email kept, the fields marked');
  res = await b.post('/oauth/connections', { action: 'sign-in', csrf, email: '', password: 'x' });
  t.equal(res.status, 400);
  t.match(await res.text(), /Enter your email address\./);
});
