// The /mcp token cache empties itself when a change that matters commits anywhere (migration
// 0007's triggers → NOTIFY auth_changed → every API node's LISTEN): with a 300-second cache, a
// key revoked, a plan changed or an OAuth token revoked — by the service or by plain SQL from
// another connection — is refused on the next call, while the writes of ordinary use (a key's
// last_used_at, credits) notify nothing and keep the cache.
import postgres from 'postgres';
import t from 'tap';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { member, oauthTokens, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t, { MCP_AUTH_CACHE_SECONDS: '300' });
// Another connection, like another service or an operator's psql session.
const other = postgres(app.databaseUrl, { max: 1, onnotice: () => {} });
t.teardown(() => other.end());

const notes: string[] = [];
const listening = await other.listen('auth_changed', (payload) => notes.push(payload));
t.teardown(() => listening.unlisten());

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const call = (token: string, name: string, args: Record<string, unknown> = {}) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });

/** The status of calls made every 50 ms until `done` holds (at most 3 s, far below the 300-s cache). */
async function until(fn: () => Promise<Response>, done: (res: Response) => boolean): Promise<Response> {
  const end = Date.now() + 3000;
  for (;;) {
    const res = await fn();
    if (done(res) || Date.now() > end) return res;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 300));

t.test('ordinary use notifies nothing: last_used_at and credit writes keep the cache', async (t) => {
  const ws = await app.workspace({ credits: 500, scopes: ['generations:read', 'generations:write'] });
  await other`update api_keys set last_used_at = now() - interval '1 hour' where id = ${ws.keyId}`;
  await settle();
  notes.length = 0;
  t.equal((await call(ws.key, 'get_workspace')).status, 200, 'resolves the key (and records last_used_at)');
  const res = await call(ws.key, 'create_generation', { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Olive oil' });
  t.equal(res.status, 200);
  const last = await other`select last_used_at from api_keys where id = ${ws.keyId}`;
  t.ok(Date.now() - new Date(last[0].last_used_at).getTime() < 60_000, 'last_used_at was written');
  await settle();
  t.same(notes, [], 'no auth_changed for last_used_at or credits');
});

t.test('a key revoked from another connection is refused on the next call', async (t) => {
  const ws = await app.workspace({ scopes: ['generations:read'] });
  t.equal((await call(ws.key, 'list_generation_catalog')).status, 200, 'resolved and cached');
  notes.length = 0;
  await other`update api_keys set revoked_at = now() where id = ${ws.keyId}`;
  const res = await until(
    () => call(ws.key, 'list_generation_catalog'),
    (r) => r.status === 401,
  );
  t.equal(res.status, 401, 'refused at once, not after 300 s');
  t.match(res.headers.get('www-authenticate'), /^Bearer .*resource_metadata=/);
  // The API node's listener may hear the notification before this one does: wait for it, then
  // for any second one.
  for (const end = Date.now() + 3000; !notes.length && Date.now() < end; ) await settle();
  await settle();
  t.same(notes, ['api_keys'], 'one notification, naming the table');
});

t.test('a plan change reaches the cached caller', async (t) => {
  const ws = await app.workspace({ scopes: ['generations:read', 'generations:write'] });
  const plan = async () =>
    ((await (await call(ws.key, 'get_workspace')).json()) as { result: { structuredContent: { plan: string } } }).result.structuredContent
      .plan;
  t.equal(await plan(), 'paid');
  await other`update organizations set plan = 'none' where id = ${ws.orgId}`;
  // The notification arrives asynchronously: the first calls may still see the cached plan.
  type Answer = { result: { isError?: boolean; structuredContent: { error?: { code: string } } } };
  let body: Answer | undefined;
  const end = Date.now() + 3000;
  do {
    const res = await call(ws.key, 'create_generation', { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'x' });
    t.equal(res.status, 200);
    body = (await res.json()) as Answer;
    if (body.result.structuredContent.error?.code === 'payment_required') break;
    await new Promise((r) => setTimeout(r, 50));
  } while (Date.now() < end);
  t.equal(body!.result.isError, true);
  t.equal(body!.result.structuredContent.error?.code, 'payment_required', 'the new plan applies within moments, not 300 s');
  t.equal(await plan(), 'none');
});

t.test('an OAuth access token revoked at /oauth/revoke is refused on the next call', async (t) => {
  const ws = await app.workspace();
  const m = await member(app, ws.orgId);
  const tokens = await oauthTokens(app, { email: m.email, password: m.password });
  t.equal((await call(tokens.access_token, 'get_workspace')).status, 200, 'resolved and cached');
  const revoked = await fetch(`${app.url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: tokens.access_token, client_id: tokens.client.client_id }),
  });
  t.equal(revoked.status, 200);
  const res = await until(
    () => call(tokens.access_token, 'get_workspace'),
    (r) => r.status === 401,
  );
  t.equal(res.status, 401);
});

t.test('deleting a member ends the grants of its tokens at once', async (t) => {
  const ws = await app.workspace();
  const m = await member(app, ws.orgId);
  const tokens = await oauthTokens(app, { email: m.email, password: m.password });
  t.equal((await call(tokens.access_token, 'get_workspace')).status, 200);
  await other`delete from members where id = ${m.id}`;
  const res = await until(
    () => call(tokens.access_token, 'get_workspace'),
    (r) => r.status === 401,
  );
  t.equal(res.status, 401);
});

t.test('a cached key is never used past its expiry', async (t) => {
  const ws = await app.workspace();
  const key = await createApiKey(app.service.ctx.db, { orgId: ws.orgId, scopes: ['generations:read'], expiresInSeconds: 2 });
  notes.length = 0;
  t.equal((await call(key.key, 'get_workspace')).status, 200, 'resolved and cached');
  await new Promise((r) => setTimeout(r, 2100));
  t.equal((await call(key.key, 'get_workspace')).status, 401, 'expired: refused although the cache lasts 300 s');
  t.same(notes, [], 'by its expiry, with no notification');
});
