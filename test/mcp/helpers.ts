// Helpers of the MCP tests: the service on a known port (PUBLIC_BASE_URL must be the URL clients
// use, since it names the OAuth resource and endpoints), SDK clients, members, and the OAuth flow
// driven over plain HTTP (the browser test drives the same pages in Chromium).
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Test } from 'tap';
import { createMember } from '../../src/services/oauth/members.ts';
import { freePort, startTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';

/** The service with PUBLIC_BASE_URL equal to the address it listens on. */
export async function startMcpApp(t: Test, env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<TestApp> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      return await startTestApp(t, { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env }, opts);
    } catch (err) {
      if (attempt < 3 && /EADDRINUSE/.test(String(err))) continue;
      throw err;
    }
  }
}

export async function connect(app: TestApp, token: string, name = 'media-api-tests'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

export async function member(
  app: TestApp,
  orgId: string,
  email = `m${randomBytes(4).toString('hex')}@example.test`,
  password = 'correct horse battery',
) {
  const m = await createMember(app.service.ctx.db, { orgId, email, password });
  return { ...m, password };
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** fetch without following redirects, with a cookie jar of one cookie (the session). */
export class Browser {
  cookie: string | undefined;
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookie) headers.set('cookie', this.cookie);
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, { ...init, headers, redirect: 'manual' });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    return res;
  }
  async post(path: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    return this.fetch(path, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base, ...headers },
    });
  }
}

export const hiddenField = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

export async function registerClient(app: TestApp, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: ['http://127.0.0.1:9/callback'],
      token_endpoint_auth_method: 'none',
      ...extra,
    }),
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
  return body as { client_id: string; client_secret?: string; redirect_uris: string[] };
}

export interface FlowOptions {
  clientId: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  email: string;
  password: string;
  decision?: 'approve' | 'deny';
  scopesChecked?: string[];
}

/** authorize → sign in → consent over HTTP; returns the final redirect URL (code or error). */
export async function authorizeOverHttp(app: TestApp, o: FlowOptions & { challenge: string }): Promise<URL> {
  const b = new Browser(app.url);
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri ?? 'http://127.0.0.1:9/callback',
    code_challenge: o.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? 'st4te',
    resource: `${app.url}/mcp`,
    ...(o.scope !== undefined ? { scope: o.scope } : {}),
  });
  let res = await b.fetch(`/oauth/authorize?${q}`);
  if (res.status !== 303) throw new Error(`authorize: ${res.status} ${await res.text()}`);
  const signInUrl = res.headers.get('location')!;
  res = await b.fetch(signInUrl);
  let html = await res.text();
  res = await b.post('/oauth/sign-in', {
    request: hiddenField(html, 'request')!,
    csrf: hiddenField(html, 'csrf')!,
    email: o.email,
    password: o.password,
  });
  if (res.status !== 303) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  res = await b.fetch(res.headers.get('location')!);
  html = await res.text();
  const scopes = o.scopesChecked ?? [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);
  res = await b.post('/oauth/consent', {
    request: hiddenField(html, 'request')!,
    csrf: hiddenField(html, 'csrf')!,
    decision: o.decision ?? 'approve',
    scope: scopes,
  });
  if (res.status !== 303) throw new Error(`consent: ${res.status} ${await res.text()}`);
  return new URL(res.headers.get('location')!);
}

export async function tokenRequest(app: TestApp, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/** The whole flow over HTTP: a public client's access and refresh tokens. */
export async function oauthTokens(app: TestApp, o: { email: string; password: string; scope?: string; scopesChecked?: string[] }) {
  const client = await registerClient(app);
  const { verifier, challenge } = pkce();
  const back = await authorizeOverHttp(app, { clientId: client.client_id, challenge, ...o });
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back}`);
  const res = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: 'http://127.0.0.1:9/callback',
    client_id: client.client_id,
    code_verifier: verifier,
    resource: `${app.url}/mcp`,
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
  return { client, ...(res.body as { access_token: string; refresh_token: string; scope: string; expires_in: number }) };
}
