// Connecting social accounts in the browser, in headless Chromium against local fakes of the
// platforms' authorize, token and profile endpoints (./oauth-fakes.ts): X (PKCE S256, HTTP Basic
// client credentials) and LinkedIn (no PKCE, credentials in the form) end to end: the stored
// connection (its sealed token is the one the platform issued), the page listing it, Disconnect;
// consent denied, a token endpoint error, a replayed, forged or other browser's state refused,
// an unconfigured platform. Then the MCP side with OAuth access tokens of each social scope.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import t from 'tap';
import { media, socialAccounts, socialConnectStates } from '../../src/db/schema/index.ts';
import { authorizationUrl, SOCIAL_OAUTH } from '../../src/services/social/platforms/oauth.ts';
import { connectAccount, SOCIAL_PLATFORMS } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { Browser, connect, hiddenField, member, oauthTokens, startMcpApp } from '../mcp/helpers.ts';
import {
  fakeLinkedInOAuth,
  fakeOtherPlatforms,
  fakeXOAuth,
  LINKEDIN_MEMBER,
  LINKEDIN_OAUTH_CLIENT,
  X_OAUTH_CLIENT,
  X_USER,
} from './oauth-fakes.ts';

const X = await fakeXOAuth(t);
const LI = await fakeLinkedInOAuth(t);
const OTHER_CLIENT = { id: 'other-client', secret: 'other-secret' };
const OTHER = await fakeOtherPlatforms(t, OTHER_CLIENT);
const otherEnv = Object.fromEntries(
  Object.entries(OTHER.urls).flatMap(([p, url]) => [
    [`SOCIAL_API_BASE_${p.toUpperCase()}`, url],
    // Threads stays without a client id: the page says it is not configured.
    ...(p === 'threads'
      ? []
      : [
          [`SOCIAL_${p.toUpperCase()}_CLIENT_ID`, OTHER_CLIENT.id],
          [`SOCIAL_${p.toUpperCase()}_CLIENT_SECRET`, OTHER_CLIENT.secret],
        ]),
  ]),
);
const app = await startMcpApp(t, {
  ...otherEnv,
  SOCIAL_API_BASE_X: X.url,
  SOCIAL_API_BASE_LINKEDIN: LI.url,
  SOCIAL_X_CLIENT_ID: X_OAUTH_CLIENT.id,
  SOCIAL_X_CLIENT_SECRET: X_OAUTH_CLIENT.secret,
  SOCIAL_LINKEDIN_CLIENT_ID: LINKEDIN_OAUTH_CLIENT.id,
  SOCIAL_LINKEDIN_CLIENT_SECRET: LINKEDIN_OAUTH_CLIENT.secret,
});
X.state.redirectUri = `${app.url}/social/callback/x`;
LI.state.redirectUri = `${app.url}/social/callback/linkedin`;
OTHER.redirect.base = app.url;
const db = app.service.ctx.db;
const cipher = tokenCipher(await loadTokenKey(app.service.ctx.config));
const ws = await app.workspace({ name: 'Social Workspace', scopes: ['social:write'] });
const m = await member(app, ws.orgId, 'sam@example.test', 'a long enough password');
const rows = () => db.select().from(socialAccounts).where(eq(socialAccounts.orgId, ws.orgId));

t.test('connect X and LinkedIn in Chromium, see them listed, refusals, disconnect', async (t) => {
  const context = await launchBrowser(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const h1 = () => page.getByRole('heading', { level: 1 }).textContent();
  const alert = async () => (await page.getByRole('alert').textContent())?.trim();
  // The pages' accessibility basics (page scripts are strings: the project's TypeScript has no DOM library).
  const a11y = async (what: string) =>
    t.same(
      await page.evaluate(`({ lang: document.documentElement.lang, h1: document.querySelectorAll('h1').length,
        unlabelled: [...document.querySelectorAll('input:not([type=hidden])')].filter((i) => i.labels.length === 0).length,
        unnamed: [...document.querySelectorAll('button, a')].filter((b) => !b.textContent.trim()).length })`),
      { lang: 'en', h1: 1, unlabelled: 0, unnamed: 0 },
      `${what}: language, one h1, labelled fields, named buttons and links`,
    );

  // Not signed in: Connect X asks for sign-in first, then goes on to X.
  let res = await page.goto(`${app.url}/social/connect/x`);
  t.match(page.url(), /\/social\/connections\?connect=x$/);
  t.equal(await h1(), 'Sign in to connect social accounts');
  await a11y('sign-in');
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(m.password);
  await Promise.all([page.waitForURL(/\/social\/connections\?connected=x$/), page.getByRole('button', { name: 'Sign in' }).click()]);

  // X saw its documented authorization request: PKCE S256, the exact scopes, our callback.
  t.equal(X.state.authorizations.length, 1);
  const xa = X.state.authorizations[0];
  t.equal(xa.get('client_id'), X_OAUTH_CLIENT.id);
  t.equal(xa.get('redirect_uri'), `${app.url}/social/callback/x`);
  t.equal(xa.get('scope'), 'tweet.read tweet.write users.read media.write offline.access');
  t.equal(xa.get('code_challenge_method'), 'S256');
  t.match(xa.get('state'), /^[\w-]{43}$/);
  const xt = X.state.tokenRequests[0];
  t.equal(
    xt.headers.authorization,
    `Basic ${Buffer.from(`${X_OAUTH_CLIENT.id}:${X_OAUTH_CLIENT.secret}`).toString('base64')}`,
    'confidential client: HTTP Basic',
  );
  t.ok(xt.form.get('code_verifier'), 'the verifier, which the fake checked against the challenge');
  t.notOk(xt.form.has('client_secret'), 'the secret is not in the form');
  t.equal(X.state.meRequests, 1);

  let [x] = (await rows()).filter((r) => r.platform === 'x');
  t.match(x, {
    platformAccountId: X_USER.id,
    handle: X_USER.username,
    displayName: X_USER.name,
    status: 'connected',
    scopes: ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'],
  });
  t.equal(cipher.decrypt(x.accessTokenEnc), X.state.issued[0].access, 'the sealed token is the one X issued');
  t.equal(cipher.decrypt(x.refreshTokenEnc!), X.state.issued[0].refresh);
  t.notMatch(x.accessTokenEnc, X.state.issued[0].access, 'not stored in the clear');
  const left = x.expiresAt!.getTime() - Date.now();
  t.ok(left > 7000_000 && left <= 7200_000, 'expiry from expires_in');
  t.equal((await db.select().from(socialConnectStates)).length, 0, 'the state was spent');

  t.equal((await page.getByRole('status').textContent())?.trim(), 'Connected your X account. The workspace can publish to it now.');
  t.equal(await page.getByRole('heading', { level: 2, name: 'X: brandx' }).count(), 1, 'listed');
  await a11y('connections');
  t.match(await page.getByRole('list', { name: 'Platforms' }).textContent(), /Threads: not configured on this server/);

  // A replay of X's redirect (same code and state) is refused: the state was used once.
  const replay = X.state.redirects[0];
  res = await page.goto(replay);
  t.equal(res?.status(), 400);
  t.equal(await h1(), 'This connection link cannot be used');
  t.equal(X.state.tokenRequests.length, 1, 'no second code exchange');
  // A forged state likewise.
  res = await page.goto(`${app.url}/social/callback/x?code=anything&state=${'A'.repeat(43)}`);
  t.equal(res?.status(), 400);
  t.equal(await h1(), 'This connection link cannot be used');

  // Reconnecting the same X account updates the connection (no second row).
  await page.goto(`${app.url}/social/connect/x`);
  t.match(page.url(), /connected=x$/);
  [x] = (await rows()).filter((r) => r.platform === 'x');
  t.equal((await rows()).length, 1, 'upserted by X user id');
  t.equal(cipher.decrypt(x.accessTokenEnc), X.state.issued[1].access, 'the new token');

  // LinkedIn: no PKCE; client id and secret in the form.
  await page.getByRole('link', { name: 'Connect LinkedIn' }).click();
  await page.waitForURL(/connected=linkedin$/);
  const la = LI.state.authorizations[0];
  t.equal(la.get('scope'), 'openid profile w_member_social');
  t.notOk(la.has('code_challenge') || la.has('code_challenge_method'), 'no PKCE for LinkedIn');
  const lt = LI.state.tokenRequests[0];
  t.match(Object.fromEntries(lt.form), {
    grant_type: 'authorization_code',
    client_id: LINKEDIN_OAUTH_CLIENT.id,
    client_secret: LINKEDIN_OAUTH_CLIENT.secret,
    redirect_uri: `${app.url}/social/callback/linkedin`,
  });
  t.notOk(lt.form.has('code_verifier'));
  const [li] = (await rows()).filter((r) => r.platform === 'linkedin');
  t.match(li, {
    platformAccountId: LINKEDIN_MEMBER.sub,
    handle: 'Ana Brand',
    refreshTokenEnc: null,
    scopes: ['openid', 'profile', 'w_member_social'],
  });
  t.equal(cipher.decrypt(li.accessTokenEnc), LI.state.issued[0].access);
  t.equal(await page.getByRole('heading', { level: 2, name: 'LinkedIn: Ana Brand' }).count(), 1);

  // Consent denied at X: a clear page, nothing stored.
  X.state.deny = true;
  res = await page.goto(`${app.url}/social/connect/x`);
  t.equal(res?.status(), 400);
  t.equal(await h1(), 'X access was not allowed');
  t.match(await alert(), /You did not allow access at X/);
  // The token endpoint refuses: its words on the page, not a 500.
  LI.state.failToken = 'The authorization code has expired';
  res = await page.goto(`${app.url}/social/connect/linkedin`);
  t.equal(res?.status(), 502);
  t.equal(await h1(), 'LinkedIn connection failed');
  t.match(await alert(), /linkedin answered 400 to POST \/oauth\/v2\/accessToken: The authorization code has expired/);
  // A platform without a client id: said so, no redirect.
  res = await page.goto(`${app.url}/social/connect/threads`);
  t.equal(res?.status(), 409);
  t.equal(await h1(), 'Threads is not configured');
  t.equal(page.url(), `${app.url}/social/connect/threads`);
  res = await page.goto(`${app.url}/social/connect/myspace`);
  t.equal(res?.status(), 404);
  t.equal((await rows()).length, 2, 'still X and LinkedIn only');

  // A state started in another browser (another session) is refused here, and still works there.
  const other = new Browser(app.url);
  let r = await other.fetch('/social/connections');
  r = await other.post('/social/connections', {
    action: 'sign-in',
    csrf: hiddenField(await r.text(), 'csrf')!,
    email: m.email,
    password: m.password,
  });
  t.equal(r.status, 303);
  r = await other.fetch('/social/connect/x');
  t.equal(r.status, 303);
  const atX = await fetch(r.headers.get('location')!, { redirect: 'manual' });
  const back = atX.headers.get('location')!;
  t.match(back, `${app.url}/social/callback/x?state=`);
  res = await page.goto(back);
  t.equal(res?.status(), 400, 'the state is bound to the browser session that started it');
  r = await other.fetch(back);
  t.equal(r.status, 303);
  t.equal(r.headers.get('location'), '/social/connections?connected=x', 'completed in its own session');

  // Disconnect X on the page; another workspace's account cannot be disconnected from here.
  await page.goto(`${app.url}/social/connections`);
  await Promise.all([page.waitForURL(/disconnected=x$/), page.getByRole('button', { name: 'Disconnect X brandx' }).click()]);
  t.equal((await page.getByRole('status').textContent())?.trim(), 'Disconnected the X account.');
  t.same(
    (await rows()).map((r) => r.platform),
    ['linkedin'],
    'X is gone with its tokens',
  );
  t.equal(await page.getByRole('heading', { level: 2, name: 'X: brandx' }).count(), 0);
  const theirs = await app.workspace();
  const their = await connectAccount(db, cipher, { orgId: theirs.orgId, platform: 'x', handle: 'theirs', accessToken: 'their-token' });
  r = await other.fetch('/social/connections');
  r = await other.post('/social/connections', { action: 'disconnect', account: their.id, csrf: hiddenField(await r.text(), 'csrf')! });
  t.equal(r.status, 404);
  t.equal((await db.select().from(socialAccounts).where(eq(socialAccounts.id, their.id))).length, 1, 'theirs is untouched');
  // A forged form (wrong token, or from another site) is refused.
  r = await other.post('/social/connections', { action: 'disconnect', account: li.id, csrf: 'forged' });
  t.equal(r.status, 403);
  r = await other.post('/social/connections', { action: 'disconnect', account: li.id, csrf: 'x' }, { origin: 'https://evil.example' });
  t.equal(r.status, 403);
  t.equal((await rows()).length, 1, 'LinkedIn is still connected');
});

t.test(
  'MCP with OAuth access tokens: social:read lists, social:write publishes; duplicates ignored; other workspaces not_found',
  async (t) => {
    const cipherRow = (platform: 'x' | 'linkedin', handle: string, orgId = ws.orgId) =>
      connectAccount(db, cipher, { orgId, platform, handle, accessToken: `t-${handle}`, platformAccountId: randomUUID() });
    const xAcc = await cipherRow('x', 'oauthx');
    const theirs = await cipherRow('x', 'elsewhere', (await app.workspace()).orgId);
    const mediaId = randomUUID();
    const key = `editor-media/${ws.orgId}/${mediaId}.png`;
    await app.service.ctx.storage.put(key, Buffer.alloc(2000, 1), 'image/png');
    await db.insert(media).values({
      id: mediaId,
      orgId: ws.orgId,
      kind: 'image',
      status: 'completed',
      source: 'upload',
      contentType: 'image/png',
      sizeBytes: 2000,
      storageKey: key,
      width: 1080,
      height: 1080,
    });

    const reader = await oauthTokens(app, { email: m.email, password: m.password, scope: 'social:read' });
    const writer = await oauthTokens(app, { email: m.email, password: m.password, scope: 'social:write' });
    t.equal(reader.scope, 'social:read');
    t.equal(writer.scope, 'social:write');
    for (const [name, tok] of [
      ['social:read', reader],
      ['social:write', writer],
    ] as const) {
      const c = await connect(app, tok.access_token);
      const res = await c.callTool({ name: 'list_social_accounts', arguments: {} });
      await c.close();
      t.notOk(res.isError, `${name} lists`);
      const ids = (res.structuredContent as { data: { id: string }[] }).data.map((a) => a.id);
      t.ok(ids.includes(xAcc.id), `${name}: this workspace's accounts`);
      t.notOk(ids.includes(theirs.id), `${name}: not another workspace's`);
    }

    // social:read cannot publish: the insufficient_scope challenge.
    const raw = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${reader.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'publish_media_to_social', arguments: { account_ids: [xAcc.id], media_id: mediaId } },
      }),
    });
    t.equal(raw.status, 403);
    t.match(raw.headers.get('www-authenticate'), /^Bearer error="insufficient_scope".*scope="social:read social:write"/);

    // social:write publishes (duplicates ignored) and reads back; another workspace's account is not_found.
    const c = await connect(app, writer.access_token);
    t.teardown(() => c.close());
    let res = await c.callTool({
      name: 'publish_media_to_social',
      arguments: { account_ids: [xAcc.id, xAcc.id], media_id: mediaId, caption: 'hello' },
    });
    t.notOk(res.isError, JSON.stringify(res.structuredContent));
    const pub = res.structuredContent as { id: string; results: { account_id: string; status: string }[] };
    t.same(
      pub.results.map((r) => [r.account_id, r.status]),
      [[xAcc.id, 'queued']],
      'one target for the repeated id',
    );
    res = await c.callTool({ name: 'get_social_publication', arguments: { id: pub.id } });
    t.match(res.structuredContent, { id: pub.id });
    res = await c.callTool({ name: 'publish_media_to_social', arguments: { account_ids: [xAcc.id, theirs.id], media_id: mediaId } });
    t.ok(res.isError);
    t.match(res.structuredContent, { error: { code: 'not_found', context: { resource: 'social_account', field: 'account_ids.1' } } });
  },
);

t.test('YouTube, TikTok, Pinterest, Instagram and Facebook: each one’s documented code exchange and profile, over HTTP', async (t) => {
  const b = new Browser(app.url);
  let r = await b.fetch('/social/connections');
  r = await b.post('/social/connections', {
    action: 'sign-in',
    csrf: hiddenField(await r.text(), 'csrf')!,
    email: m.email,
    password: m.password,
  });
  t.equal(r.status, 303);
  for (const p of ['youtube', 'tiktok', 'pinterest', 'instagram', 'facebook'] as const) {
    r = await b.fetch(`/social/connect/${p}`);
    t.equal(r.status, 303, p);
    const to = new URL(r.headers.get('location')!);
    t.equal(to.origin, OTHER.urls[p], `${p}: the authorization host is re-based`);
    if (p === 'youtube') OTHER.google.challenge = to.searchParams.get('code_challenge')!;
    r = await b.fetch(`/social/callback/${p}?code=good-code&state=${to.searchParams.get('state')}`);
    t.equal(r.status, 303, `${p}: ${r.status === 303 ? '' : await r.text()}`);
    t.equal(r.headers.get('location'), `/social/connections?connected=${p}`);
  }
  const all = await rows();
  const of = (p: string) =>
    all
      .filter((r) => r.platform === p)
      .map((r) => ({
        id: r.platformAccountId,
        handle: r.handle,
        name: r.displayName,
        access: cipher.decrypt(r.accessTokenEnc),
        refresh: r.refreshTokenEnc && cipher.decrypt(r.refreshTokenEnc),
        expires: r.expiresAt !== null,
      }));
  t.same(of('youtube'), [
    { id: 'UCbrand123', handle: 'brandtv', name: 'Brand TV', access: 'ya29.yt-access', refresh: '1//yt-refresh', expires: true },
  ]);
  t.same(of('tiktok'), [
    { id: 'tt-open-1', handle: 'brandtok', name: 'Brand Tok', access: 'act.tt-access', refresh: 'rft.tt-refresh', expires: true },
  ]);
  t.same(of('pinterest'), [
    { id: '549755885175', handle: 'brandpins', name: 'Brand Pins', access: 'pina_access', refresh: 'pinr_refresh', expires: true },
  ]);
  t.same(
    of('instagram'),
    [{ id: '17841400001', handle: 'brandgram', name: 'Brand Gram', access: 'IG-long', refresh: 'IG-long', expires: true }],
    'the 60-day token, which is also what ig_refresh_token sends',
  );
  t.same(
    of('facebook').sort((a, b) => a.id.localeCompare(b.id)),
    [
      { id: '101100', handle: 'Brand Page', name: 'Brand Page', access: 'EAA-page-1', refresh: 'FB-long', expires: false },
      { id: '101200', handle: 'Brand Outlet', name: 'Brand Outlet', access: 'EAA-page-2', refresh: 'FB-long', expires: false },
    ],
    'one connection per Page, with its Page token (the long-lived user token refreshes it)',
  );
  t.ok(OTHER.calls.includes('facebook GET /v23.0/me/accounts'));
  // A refused exchange at a platform that answers errors with HTTP 200 (TikTok): a page, nothing stored.
  r = await b.fetch('/social/connect/tiktok');
  const state = new URL(r.headers.get('location')!).searchParams.get('state');
  r = await b.fetch(`/social/callback/tiktok?code=stale-code&state=${state}`);
  t.equal(r.status, 502);
  t.match(await r.text(), /tiktok did not issue a token: Authorization code is expired/);
  // An attempt older than its 10 minutes is refused before any exchange.
  r = await b.fetch('/social/connect/pinterest');
  const late = new URL(r.headers.get('location')!).searchParams.get('state');
  await db.update(socialConnectStates).set({ expiresAt: new Date(Date.now() - 1000) });
  const exchanges = OTHER.calls.length;
  r = await b.fetch(`/social/callback/pinterest?code=good-code&state=${late}`);
  t.equal(r.status, 400, 'expired');
  t.equal(OTHER.calls.length, exchanges, 'the platform was not called');
});

t.test(
  'the authorization request of each of the eight platforms: real host, client id parameter, scopes, PKCE where supported',
  async (t) => {
    const want = {
      x: ['https://x.com/i/oauth2/authorize', 'client_id', 'tweet.read tweet.write users.read media.write offline.access', true],
      linkedin: ['https://www.linkedin.com/oauth/v2/authorization', 'client_id', 'openid profile w_member_social', false],
      youtube: [
        'https://accounts.google.com/o/oauth2/v2/auth',
        'client_id',
        'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly',
        true,
      ],
      tiktok: [
        'https://www.tiktok.com/v2/auth/authorize/',
        'client_key',
        'user.info.basic,user.info.profile,video.publish,video.upload',
        false,
      ],
      pinterest: [
        'https://www.pinterest.com/oauth/',
        'client_id',
        'user_accounts:read,boards:read,boards:write,pins:read,pins:write',
        false,
      ],
      instagram: [
        'https://www.instagram.com/oauth/authorize',
        'client_id',
        'instagram_business_basic,instagram_business_content_publish',
        false,
      ],
      threads: ['https://threads.com/oauth/authorize', 'client_id', 'threads_basic,threads_content_publish', false],
      facebook: [
        'https://www.facebook.com/v23.0/dialog/oauth',
        'client_id',
        'pages_show_list,pages_read_engagement,pages_manage_posts',
        false,
      ],
    } as const;
    t.same(Object.keys(want).sort(), [...SOCIAL_PLATFORMS].sort(), 'all eight');
    for (const p of SOCIAL_PLATFORMS) {
      const [base, idParam, scope, pkce] = want[p];
      t.equal(SOCIAL_OAUTH[p].pkce, pkce, `${p}: PKCE`);
      const u = new URL(
        authorizationUrl(p, {
          clientId: 'cid',
          redirectUri: `https://api.example.com/social/callback/${p}`,
          state: 'st',
          codeChallenge: 'c'.repeat(43),
        }),
      );
      t.equal(`${u.origin}${u.pathname}`, base, `${p}: authorization URL`);
      t.equal(u.searchParams.get(idParam), 'cid', `${p}: ${idParam}`);
      t.match(
        Object.fromEntries(u.searchParams),
        { response_type: 'code', scope, state: 'st', redirect_uri: `https://api.example.com/social/callback/${p}` },
        p,
      );
      t.equal(u.searchParams.get('code_challenge_method'), pkce ? 'S256' : null, `${p}: code_challenge_method`);
    }
    const g = new URL(
      authorizationUrl('youtube', { clientId: 'cid', redirectUri: 'https://a.example/cb', state: 's', codeChallenge: 'c'.repeat(43) }),
    );
    t.match(Object.fromEntries(g.searchParams), { access_type: 'offline', prompt: 'consent' }, 'Google issues a refresh token');
  },
);
