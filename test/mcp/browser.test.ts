// The whole OAuth flow as a person and a real MCP client go through it: the SDK's client
// discovers the authorization server from the 401, registers itself, and sends the member to
// the authorization URL; headless Chromium (from npm, test/helpers/browser.ts, driven by playwright-core) signs
// in and approves on the service's pages using the keyboard only; the client finishes with the
// code and calls tools with the access token. Also checks the pages' accessibility basics.
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { launchBrowser } from '../helpers/browser.ts';
import { member, startMcpApp } from './helpers.ts';

class TestOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl: string;
  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Browser test client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return 'browser-state';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The client's redirect target: a loopback server that hands over the query of the first hit. */
async function callbackServer(t: Test) {
  let resolve!: (u: URL) => void;
  const hit = new Promise<URL>((r) => (resolve = r));
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Connected</title><h1>You can close this window</h1></html>');
    resolve(new URL(req.url!, 'http://127.0.0.1'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`, hit };
}

// Page scripts are strings: the project's TypeScript has no DOM library.
async function a11yBasics(t: Test, page: Page, what: string) {
  const facts = (await page.evaluate(`({
    lang: document.documentElement.lang,
    title: document.title,
    h1: document.querySelectorAll('h1').length,
    unlabelled: [...document.querySelectorAll('input:not([type=hidden])')].filter((i) => i.labels.length === 0).map((i) => i.id),
    unnamedButtons: [...document.querySelectorAll('button')].filter((b) => !b.textContent.trim()).length,
  })`)) as { lang: string; title: string; h1: number; unlabelled: string[]; unnamedButtons: number };
  t.equal(facts.lang, 'en', `${what}: page language`);
  t.ok(facts.title, `${what}: title`);
  t.equal(facts.h1, 1, `${what}: one h1`);
  t.same(facts.unlabelled, [], `${what}: every field has a label`);
  t.equal(facts.unnamedButtons, 0, `${what}: every button has a name`);
}

const focused = (page: Page) =>
  page.evaluate('document.activeElement?.id || document.activeElement?.textContent?.trim() || document.activeElement?.tagName');

t.test('OAuth sign-in and consent in Chromium, then tools with the token', async (t) => {
  const app = await startMcpApp(t);
  const ws = await app.workspace({ credits: 50, name: 'Browser Workspace' });
  const m = await member(app, ws.orgId, 'ana@example.test', 'a long enough password');
  const callback = await callbackServer(t);
  const mcpUrl = new URL(`${app.url}/mcp`);

  // 1. The SDK client meets the 401, discovers, registers, and asks us to open the browser.
  const provider = new TestOAuthProvider(callback.url);
  const first = new Client({ name: 'browser-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const refused = await first.connect(transport).catch((e: unknown) => e);
  t.ok(refused instanceof UnauthorizedError, 'needs authorization');
  const authUrl = provider.authorizationUrl!;
  t.ok(authUrl, 'the client was sent to the authorization endpoint');
  t.equal(`${authUrl.origin}${authUrl.pathname}`, `${app.url}/oauth/authorize`);
  t.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  t.equal(authUrl.searchParams.get('resource'), mcpUrl.href, 'RFC 8707 resource of /mcp');
  t.ok(provider.info?.client_id, 'registered dynamically');

  // 2. The member, in the browser, with the keyboard.
  const context = await launchBrowser(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const shots = process.env.MCP_SCREENSHOTS;
  await page.goto(authUrl.href);
  t.match(page.url(), /\/oauth\/sign-in\?request=/);
  await a11yBasics(t, page, 'sign-in');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to connect “Browser test client”');
  t.equal(await focused(page), 'email', 'focus starts in the email field');
  await page.keyboard.type(m.email);
  await page.keyboard.press('Tab');
  t.equal(await focused(page), 'password', 'Tab moves to the password');
  await page.keyboard.type('not the password');
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  const alert = page.getByRole('alert');
  t.equal((await alert.textContent())?.trim(), 'The email or password is incorrect. Check both and try again.', 'a clear error');
  t.equal(await page.getByLabel('Email').inputValue(), m.email, 'the email is kept');
  t.equal(await page.getByLabel('Password').getAttribute('aria-invalid'), 'true');
  t.equal(await page.getByLabel('Password').getAttribute('aria-describedby'), 'form-error', 'the field points at the error');
  t.equal(await focused(page), 'password', 'focus is where the fix goes');
  if (shots) await page.screenshot({ path: path.join(shots, 'sign-in-error.png'), fullPage: true });
  await page.keyboard.type(m.password);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);

  t.match(page.url(), /\/oauth\/consent\?request=/);
  await a11yBasics(t, page, 'consent');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Allow “Browser test client” to access Browser Workspace?');
  const group = page.getByRole('group', { name: 'Permissions requested' });
  const boxes = group.getByRole('checkbox');
  t.equal(await boxes.count(), 4, 'the four requested scopes');
  for (const s of ['generations:read', 'generations:write', 'social:read', 'social:write']) {
    t.ok(await group.getByRole('checkbox', { name: new RegExp(`^${s}:`) }).isChecked(), `${s}: listed, checked, labelled`);
  }
  t.match(await page.locator('.who').textContent(), /ana@example\.test.*Browser Workspace/);
  if (shots) await page.screenshot({ path: path.join(shots, 'consent.png'), fullPage: true });
  t.equal(await focused(page), 'Allow access', 'focus on the primary action');
  // Keyboard only: leave social:write out (Shift+Tab back through the list, Space toggles).
  const socialWrite = group.getByRole('checkbox', { name: /^social:write:/ });
  await socialWrite.focus();
  await page.keyboard.press('Space');
  t.notOk(await socialWrite.isChecked(), 'Space unchecks');
  await page.getByRole('button', { name: 'Allow access' }).focus();
  await Promise.all([page.waitForURL(/\/callback\?/), page.keyboard.press('Enter')]);

  // 3. Back at the client: the code, the state, the issuer.
  const back = await callback.hit;
  t.equal(back.searchParams.get('state'), 'browser-state');
  t.equal(back.searchParams.get('iss'), app.url);
  await transport.finishAuth(back.searchParams.get('code')!);
  t.equal(provider.saved?.scope, 'generations:read generations:write social:read', 'what the member approved');
  t.match(provider.saved?.refresh_token, /^mrt_/);

  const client = new Client({ name: 'browser-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  t.teardown(() => client.close());
  const wsResult = await client.callTool({ name: 'get_workspace', arguments: {} });
  t.match(wsResult.structuredContent, {
    organization: { id: ws.orgId, name: 'Browser Workspace' },
    scopes: ['generations:read', 'generations:write', 'social:read'],
  });
  const catalog = await client.callTool({ name: 'list_generation_catalog', arguments: {} });
  t.same(catalog.structuredContent, (await app.request('GET', '/api/v1/models')).body);
  const assets = await client.callTool({ name: 'list_workspace_assets', arguments: {} });
  t.match(assets.structuredContent, { object: 'workspace_assets' });
  const created = await client.callTool({
    name: 'create_generation',
    arguments: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Sneakers on a beach', idempotency_key: 'browser-1' },
  });
  const rest = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Sneakers on a beach' },
    headers: { 'idempotency-key': 'browser-rest-1' },
  });
  t.equal(Boolean(created.isError), rest.status >= 400, 'the tool succeeds exactly when its REST twin does');
  if (!created.isError) {
    const id = (created.structuredContent as { generations: { id: string }[] }).generations[0].id;
    const got = await client.callTool({ name: 'get_generation', arguments: { id } });
    t.match(got.structuredContent, { id });
  }

  // 4. The member disconnects the app on the connected-apps page (still signed in), keyboard only.
  await page.goto(`${app.url}/oauth/connections`);
  await a11yBasics(t, page, 'connections');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Connected apps');
  t.equal(await page.getByRole('heading', { level: 2 }).textContent(), 'Browser test client');
  const disconnect = page.getByRole('button', { name: 'Disconnect Browser test client' });
  t.equal(await disconnect.count(), 1, 'a button named after the app');
  const label = () => page.evaluate('document.activeElement?.getAttribute("aria-label")');
  for (let i = 0; i < 5 && (await label()) !== 'Disconnect Browser test client'; i++) await page.keyboard.press('Tab');
  t.equal(await label(), 'Disconnect Browser test client', 'reached with Tab');
  await Promise.all([page.waitForURL(/disconnected=/), page.keyboard.press('Enter')]);
  t.equal((await page.getByRole('status').textContent())?.trim(), 'Disconnected Browser test client. It can no longer use your workspace.');
  t.match(await page.locator('main').textContent(), /No app is connected with your account/);
  if (shots) await page.screenshot({ path: path.join(shots, 'connections.png'), fullPage: true });
  // The revocation reaches the token cache through a notification: a call may still pass for a moment.
  let after: unknown = 'answered';
  for (let i = 0; i < 60 && after === 'answered'; i++) {
    after = await client.callTool({ name: 'get_workspace', arguments: {} }).then(
      () => 'answered',
      (err: unknown) => err,
    );
    if (after === 'answered') await new Promise((r) => setTimeout(r, 50));
  }
  // The SDK client meets a 401, tries its refresh token, and is told it was revoked (invalid_grant).
  t.equal((after as Error)?.constructor?.name, 'InvalidGrantError', 'the client is disconnected');
  t.match((after as Error).message, /refresh token has been revoked/, 'its refresh token too');
});
