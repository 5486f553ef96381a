// Completion webhooks: endpoints (secret shown once, private addresses refused, bounded, tenant
// isolated), Standard Webhooks signed deliveries of terminal generations and exports to a local
// HTTPS receiver that verifies every signature with the `standardwebhooks` library, retries with
// backoff and the same webhook-id, one event per terminal transition, refusal at delivery time,
// and the MCP tools.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { webhookEndpoints } from '../../src/db/schema/index.ts';
import { findTemplate } from '../../src/services/catalog/catalog-data.ts';
import { purgeOldWebhookEvents, recordTerminalEvent } from '../../src/services/webhooks/events.ts';
import { startTestApp } from '../helpers/app.ts';
import { addMedia, colorPng, createProject, upload } from '../editor/helpers.ts';
import { connect } from '../mcp/helpers.ts';

// The receiver: HTTPS on 127.0.0.1 (self-signed fixture certificate, trusted by this process).
const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);

interface Received {
  hook: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  verified: unknown;
  answered: number;
}
const received: Received[] = [];
/** Per hook path: the endpoint's secret and how many attempts still get a 500. */
const hooks = new Map<string, { secret: string; failures: number; redirect?: string }>();
const red = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ff0000' } })
  .png()
  .toBuffer();

const receiver = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, (req, res) => {
  if (req.url === '/red.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(red);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const hook = hooks.get(req.url ?? '');
    if (req.method !== 'POST' || !hook) return res.writeHead(404).end('missing');
    if (hook.redirect) {
      received.push({ hook: req.url!, headers: {}, body: '', at: Date.now(), verified: undefined, answered: 307 });
      return res.writeHead(307, { location: hook.redirect }).end();
    }
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let verified: unknown;
    try {
      verified = new Webhook(hook.secret).verify(body, headers);
    } catch (err) {
      verified = undefined;
      received.push({ hook: req.url!, headers, body, at: Date.now(), verified, answered: 400 });
      return res.writeHead(400).end(String(err));
    }
    const answered = hook.failures > 0 ? 500 : 204;
    if (hook.failures > 0) hook.failures--;
    received.push({ hook: req.url!, headers, body, at: Date.now(), verified, answered });
    res.writeHead(answered).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
t.teardown(() => receiver.close());
const port = (receiver.address() as { port: number }).port;
const base = `https://127.0.0.1:${port}`;

// The shortest backoff, and idle workers that look for due retries every second (rather than 5 s).
const RETRY_DELAY = 1;
const app = await startTestApp(
  t,
  { OUTBOUND_ALLOW_IPS: '127.0.0.1', WEBHOOK_RETRY_DELAY_SECONDS: String(RETRY_DELAY), WEBHOOK_RETRY_LIMIT: '2', JOB_POLL_SECONDS: '1' },
  { workers: true },
);
// The cases run at once: each has its own workspace and receiver paths, and mostly waits (renders,
// retries' backoff).
t.jobs = 12;
const STATIC = findTemplate('bold-sale-banner')!;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Registers an endpoint on a fresh receiver path; returns it (with its secret). */
async function endpoint(key: string, name: string, eventTypes: string[], failures = 0) {
  const res = await app.request('POST', '/api/v1/webhook-endpoints', {
    key,
    body: { url: `${base}/hooks/${name}`, description: `receiver ${name}`, event_types: eventTypes },
  });
  if (res.status !== 200) throw new Error(`create endpoint: ${res.status} ${res.text}`);
  hooks.set(`/hooks/${name}`, { secret: res.body.secret, failures });
  return res.body;
}

async function generate(key: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/api/v1/generations', { key, body: { type: 'static_ad', template_slug: STATIC.slug, ...extra } });
  if (res.status !== 200) throw new Error(`generation: ${res.status} ${res.text}`);
  return res.body.generations[0].id;
}

const at = (name: string) => received.filter((r) => r.hook === `/hooks/${name}`);

t.test('the secret is shown once; list and get never show it; bad URLs are refused naming url', async (t) => {
  const ws = await app.workspace();
  const created = await endpoint(ws.key, 'secret-once', ['generation.completed']);
  t.match(created, {
    object: 'webhook_endpoint',
    url: `${base}/hooks/secret-once`,
    description: 'receiver secret-once',
    event_types: ['generation.completed'],
  });
  t.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a Standard Webhooks secret');
  const list = await app.request('GET', '/api/v1/webhook-endpoints', { key: ws.key });
  t.equal(list.status, 200);
  t.same(
    list.body.data.map((e: { id: string }) => e.id),
    [created.id],
  );
  const one = await app.request('GET', `/api/v1/webhook-endpoints/${created.id}`, { key: ws.key });
  t.equal(one.status, 200);
  t.same(one.body.recent_deliveries, []);
  for (const text of [list.text, one.text]) {
    t.notOk(text.includes(created.secret), 'the secret is not in list or get');
    t.notOk(text.includes('whsec_'), 'no secret at all');
  }
  const rotated = await app.request('POST', `/api/v1/webhook-endpoints/${created.id}/rotate-secret`, { key: ws.key });
  t.equal(rotated.status, 200);
  t.match(rotated.body.secret, /^whsec_/);
  t.not(rotated.body.secret, created.secret, 'a new secret');

  for (const url of [
    'https://10.0.0.7/hook',
    'https://192.168.1.20/hook',
    'https://[::1]/hook',
    'https://169.254.169.254/latest',
    'https://localhost/hook',
    'https://127.0.0.2/hook',
  ]) {
    const res = await app.request('POST', '/api/v1/webhook-endpoints', {
      key: ws.key,
      body: { url, event_types: ['generation.completed'] },
    });
    t.equal(res.status, 400, url);
    t.equal(res.body.error.code, 'bad_request');
    t.same(
      res.body.error.context.errors.map((e: { field: string }) => e.field),
      ['body.url'],
      `${url}: names url`,
    );
  }
  const plain = await app.request('POST', '/api/v1/webhook-endpoints', {
    key: ws.key,
    body: { url: `http://127.0.0.1:${port}/hooks/x`, event_types: ['generation.completed'] },
  });
  t.equal(plain.status, 400, 'plain http is refused');
  t.ok(plain.body.error.context.errors.some((e: { field: string }) => e.field === 'body.url'));
  const unknownType = await app.request('POST', '/api/v1/webhook-endpoints', {
    key: ws.key,
    body: { url: `${base}/hooks/x`, event_types: ['generation.started'] },
  });
  t.equal(unknownType.status, 400, 'an event type outside the enum is refused');
  t.equal((await app.request('GET', '/api/v1/webhook-endpoints', { key: ws.key })).body.data.length, 1, 'nothing refused was stored');
});

t.test('at most 10 endpoints per workspace; another workspace’s endpoint is 404; delete', async (t) => {
  const ws = await app.workspace();
  const other = await app.workspace();
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await endpoint(ws.key, `bounded-${i}`, ['export.completed'])).id);
  const over = await app.request('POST', '/api/v1/webhook-endpoints', {
    key: ws.key,
    body: { url: `${base}/hooks/eleventh`, event_types: ['export.completed'] },
  });
  t.equal(over.status, 400);
  t.match(over.body.error, { code: 'bad_request', context: { limit: 10 } });
  t.equal((await app.request('GET', '/api/v1/webhook-endpoints', { key: ws.key })).body.data.length, 10);
  t.same((await app.request('GET', '/api/v1/webhook-endpoints', { key: other.key })).body.data, [], 'the other workspace sees none');
  for (const [method, p] of [
    ['GET', `/api/v1/webhook-endpoints/${ids[0]}`],
    ['DELETE', `/api/v1/webhook-endpoints/${ids[0]}`],
    ['POST', `/api/v1/webhook-endpoints/${ids[0]}/rotate-secret`],
  ] as const) {
    const res = await app.request(method, p, { key: other.key });
    t.equal(res.status, 404, `${method} ${p}`);
    t.same(res.body.error.context, { resource: 'webhook_endpoint', field: 'path.id' });
  }
  const del = await app.request('DELETE', `/api/v1/webhook-endpoints/${ids[0]}`, { key: ws.key });
  t.equal(del.status, 200);
  t.same(del.body, { object: 'webhook_endpoint', id: ids[0], deleted: true });
  t.equal((await app.request('GET', `/api/v1/webhook-endpoints/${ids[0]}`, { key: ws.key })).status, 404, 'gone');
  t.equal((await app.request('DELETE', `/api/v1/webhook-endpoints/${ids[0]}`, { key: ws.key })).status, 404, 'deleting again is 404');
  t.equal((await endpoint(ws.key, 'bounded-again', ['export.completed'])).object, 'webhook_endpoint', 'a freed place can be used');
  const readOnly = await app.workspace({ scopes: ['generations:read'] });
  const forbidden = await app.request('POST', '/api/v1/webhook-endpoints', {
    key: readOnly.key,
    body: { url: `${base}/hooks/ro`, event_types: ['export.completed'] },
  });
  t.equal(forbidden.status, 403, 'creating needs generations:write');
  t.equal((await app.request('GET', '/api/v1/webhook-endpoints', { key: readOnly.key })).status, 200, 'listing needs only read');
});

t.test('a completed generation delivers generation.completed, signed, once', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const ep = await endpoint(ws.key, 'completed', ['generation.completed', 'generation.failed']);
  const unsubscribed = await endpoint(ws.key, 'exports-only', ['export.completed']);
  const id = await generate(ws.key);
  const [got] = await waitFor('the delivery', () => (at('completed').length ? at('completed') : undefined));
  t.ok(got.verified, 'Webhook.verify accepted the signature');
  t.equal(got.answered, 204);
  const event = JSON.parse(got.body);
  t.equal(event.type, 'generation.completed');
  t.match(event.data, { object: 'generation', id, status: 'completed', progress: 100, error: null });
  t.ok(Date.parse(event.timestamp) <= Date.now());
  const gen = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.same(Object.keys(event.data).sort(), Object.keys(gen.body).sort(), 'data is the resource as GET returns it');
  t.equal(new URL(event.data.url).pathname, new URL(gen.body.url).pathname, 'with its output url');
  t.match(got.headers['webhook-id'], /^[0-9a-f-]{36}$/);
  t.ok(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'webhook-timestamp is now');
  t.match(got.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  t.equal(got.headers['content-type'], 'application/json');

  // One event per terminal transition: recording it again (a re-run of the job) makes none.
  const again = await app.service.ctx.db.transaction((tx) =>
    recordTerminalEvent(app.service.ctx, tx, { orgId: ws.orgId, type: 'generation.completed', data: { object: 'generation', id } }),
  );
  t.equal(again, undefined, 'a second record of the same transition is refused');
  const [{ n }] = await app.service.ctx.sql`select count(*)::int as n from webhook_events where resource_id = ${id}`;
  t.equal(n, 1, 'one event');
  const detail = await waitFor('the delivery to be recorded', async () => {
    const r = await app.request('GET', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
    return r.body.recent_deliveries[0]?.status === 'delivered' ? r.body : undefined;
  });
  t.match(detail.recent_deliveries, [
    {
      event_id: got.headers['webhook-id'],
      event_type: 'generation.completed',
      status: 'delivered',
      attempts: 1,
      last_response_status: 204,
      last_error: null,
      next_attempt_at: null,
    },
  ]);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(at('completed').length, 1, 'delivered once');
  t.equal(at('exports-only').length, 0, 'an endpoint not subscribed to the type gets nothing');
  t.same((await app.request('GET', `/api/v1/webhook-endpoints/${unsubscribed.id}`, { key: ws.key })).body.recent_deliveries, []);
});

t.test('a failed generation delivers generation.failed', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  await endpoint(ws.key, 'failed', ['generation.failed']);
  const id = await generate(ws.key, { reference_image_urls: [`${base}/missing.png`] });
  const [got] = await waitFor('the delivery', () => (at('failed').length ? at('failed') : undefined));
  t.ok(got.verified);
  const event = JSON.parse(got.body);
  t.equal(event.type, 'generation.failed');
  t.match(event.data, { object: 'generation', id, status: 'error', url: null, error: { code: 'input_unavailable', retryable: false } });
});

t.test('a receiver answering 500 twice gets the same webhook-id three times, with growing intervals', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const ep = await endpoint(ws.key, 'flaky', ['generation.completed'], 2);
  await generate(ws.key);
  await waitFor('the first attempt', () => (at('flaky').length ? true : undefined));
  // Read between attempts: once pg-boss has settled the failed one, the retry is scheduled (while
  // an attempt runs, or before its failure is settled, there is no next attempt to show).
  const pending = await waitFor('the failed attempt to be recorded', async () => {
    const r = await app.request('GET', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
    const d = r.body.recent_deliveries[0];
    return d?.last_response_status === 500 && d.next_attempt_at ? d : undefined;
  });
  t.equal(pending.status, 'pending', 'still pending after a 500');
  t.match(pending.last_error, /HTTP 500/);
  t.ok(pending.next_attempt_at, `next attempt due at ${pending.next_attempt_at}`);
  const attempts = await waitFor('three attempts', () => (at('flaky').length >= 3 ? at('flaky') : undefined));
  t.same(
    attempts.map((a) => a.answered),
    [500, 500, 204],
  );
  t.ok(
    attempts.every((a) => a.verified),
    'every attempt is signed',
  );
  t.equal(new Set(attempts.map((a) => a.headers['webhook-id'])).size, 1, 'the same webhook-id every time');
  t.equal(new Set(attempts.map((a) => a.body)).size, 1, 'the same body every time');
  const gap1 = (attempts[1].at - attempts[0].at) / 1000;
  const gap2 = (attempts[2].at - attempts[1].at) / 1000;
  // pg-boss backoff: the n-th retry waits between d·2^(n-1) and d·2^n seconds (plus up to a poll).
  t.ok(gap1 >= RETRY_DELAY - 0.2, `first retry after ${gap1} s ≥ ${RETRY_DELAY} s`);
  t.ok(gap2 >= 2 * RETRY_DELAY - 0.2, `second retry after ${gap2} s ≥ ${2 * RETRY_DELAY} s`);
  t.ok(gap1 < 30 && gap2 < 30, 'and not much later');
  const done = await waitFor('delivered', async () => {
    const r = await app.request('GET', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
    return r.body.recent_deliveries[0]?.status === 'delivered' ? r.body.recent_deliveries[0] : undefined;
  });
  t.match(done, { attempts: 3, last_response_status: 204, last_error: null, next_attempt_at: null });
});

t.test('a receiver that never answers 2xx is given up after the last retry (recorded)', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const ep = await endpoint(ws.key, 'down', ['generation.completed'], 1000);
  await generate(ws.key);
  // WEBHOOK_RETRY_LIMIT=2: three attempts in all.
  const failed = await waitFor(
    'given up',
    async () => {
      const r = await app.request('GET', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
      return r.body.recent_deliveries[0]?.status === 'failed' ? r.body.recent_deliveries[0] : undefined;
    },
    120_000,
  );
  t.match(failed, { status: 'failed', attempts: 3, last_response_status: 500, next_attempt_at: null });
  t.equal(at('down').length, 3);
});

t.test('an endpoint whose address turns private is refused at delivery, not retried', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  // Registered when its name resolved publicly; now it points at a private address (stored
  // directly: the API refuses such a URL at creation).
  const [row] = await app.service.ctx.db
    .insert(webhookEndpoints)
    .values({
      orgId: ws.orgId,
      url: `https://127.0.0.2:${port}/hooks/private`,
      eventTypes: ['generation.completed'],
      secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    })
    .returning();
  hooks.set('/hooks/private', { secret: row.secret, failures: 0 });
  await generate(ws.key);
  const failed = await waitFor('refused', async () => {
    const r = await app.request('GET', `/api/v1/webhook-endpoints/${row.id}`, { key: ws.key });
    return r.body.recent_deliveries[0]?.status === 'failed' ? r.body.recent_deliveries[0] : undefined;
  });
  t.match(failed, { attempts: 1, last_response_status: null, last_error: /private, loopback, link-local or reserved/ });
  t.equal(at('private').length, 0, 'nothing reached the private address');
});

t.test('a redirect is not followed: it counts as a failed attempt', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const target = await endpoint(ws.key, 'redirect-target', ['generation.failed']);
  const ep = await endpoint(ws.key, 'redirecting', ['generation.completed']);
  hooks.get('/hooks/redirecting')!.redirect = `${base}/hooks/redirect-target`;
  await generate(ws.key);
  const pending = await waitFor('the failed attempt to be recorded', async () => {
    const r = await app.request('GET', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
    return r.body.recent_deliveries[0]?.last_error ? r.body.recent_deliveries[0] : undefined;
  });
  t.match(pending, { status: 'pending', attempts: 1, last_error: /redirect/ });
  t.equal(at('redirecting').length, 1);
  t.equal(at('redirect-target').length, 0, 'the redirect target got nothing');
  await app.request('DELETE', `/api/v1/webhook-endpoints/${ep.id}`, { key: ws.key });
  await app.request('DELETE', `/api/v1/webhook-endpoints/${target.id}`, { key: ws.key });
});

t.test('a completed export delivers export.completed', async (t) => {
  const ws = await app.workspace();
  await endpoint(ws.key, 'export', ['export.completed', 'export.failed']);
  const p = await createProject(app, ws.key, { aspect_ratio: '1:1', width: 200, height: 200, fps: 10 });
  const img = await upload(app, ws.key, 'red.png', 'image/png', await colorPng('#ff0000'));
  await addMedia(app, ws.key, p.id, { media_id: img.media.id, duration_seconds: 1 });
  const q = await app.request('POST', `/api/v1/editor/videos/${p.id}/exports`, { key: ws.key });
  t.equal(q.status, 200);
  const [got] = await waitFor('the delivery', () => (at('export').length ? at('export') : undefined), 120_000);
  t.ok(got.verified);
  const event = JSON.parse(got.body);
  t.equal(event.type, 'export.completed');
  t.match(event.data, { object: 'editor_export', id: q.body.id, video_id: p.id, status: 'completed', progress: 100 });
  t.match(event.data.url, /^http/);
});

t.test('MCP tools manage webhook endpoints', async (t) => {
  const ws = await app.workspace();
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const created = await client.callTool({
    name: 'create_webhook_endpoint',
    arguments: { url: `${base}/hooks/mcp`, event_types: ['slideshow.completed', 'faceless_video.failed'] },
  });
  t.notOk(created.isError, JSON.stringify(created.structuredContent));
  const ep = created.structuredContent as { id: string; secret: string };
  t.match(ep.secret, /^whsec_/);
  const listed = await client.callTool({ name: 'list_webhook_endpoints', arguments: {} });
  t.same(
    (listed.structuredContent as { data: { id: string }[] }).data.map((e) => e.id),
    [ep.id],
  );
  t.notOk(JSON.stringify(listed).includes('whsec_'), 'no secret in the list');
  const got = await client.callTool({ name: 'get_webhook_endpoint', arguments: { id: ep.id } });
  t.match(got.structuredContent, { id: ep.id, event_types: ['slideshow.completed', 'faceless_video.failed'], recent_deliveries: [] });
  t.notOk(JSON.stringify(got).includes('whsec_'), 'no secret in get');
  const rotated = await client.callTool({ name: 'rotate_webhook_endpoint_secret', arguments: { id: ep.id } });
  t.not((rotated.structuredContent as { secret: string }).secret, ep.secret);
  const refused = await client.callTool({
    name: 'create_webhook_endpoint',
    arguments: { url: 'https://10.1.2.3/hook', event_types: ['export.failed'] },
  });
  t.equal(refused.isError, true);
  t.match(refused.structuredContent, { error: { code: 'bad_request' } });
  const deleted = await client.callTool({ name: 'delete_webhook_endpoint', arguments: { id: ep.id } });
  t.same(deleted.structuredContent, { object: 'webhook_endpoint', id: ep.id, deleted: true });
  const gone = await client.callTool({ name: 'get_webhook_endpoint', arguments: { id: ep.id } });
  t.equal(gone.isError, true);
  t.match(gone.structuredContent, { error: { code: 'not_found', context: { resource: 'webhook_endpoint' } } });
});

t.test('housekeeping removes settled events older than 30 days, keeps pending and recent ones', async (t) => {
  const ws = await app.workspace();
  const ep = await endpoint(ws.key, 'purge', ['export.failed']);
  const sql = app.service.ctx.sql;
  const event = async (age: string, status: string) => {
    const [e] =
      await sql`insert into webhook_events (org_id, type, resource_id, body, created_at) values (${ws.orgId}, 'export.failed', gen_random_uuid()::text, '{}', now() - ${age}::interval) returning id`;
    await sql`insert into webhook_deliveries (org_id, event_id, endpoint_id, status) values (${ws.orgId}, ${e.id}, ${ep.id}, ${status})`;
    return e.id as string;
  };
  const oldDelivered = await event('31 days', 'delivered');
  const oldFailed = await event('31 days', 'failed');
  const oldPending = await event('31 days', 'pending');
  const recent = await event('29 days', 'delivered');
  t.ok((await purgeOldWebhookEvents(app.service.ctx.db)) >= 2);
  const left = (await sql`select id from webhook_events where org_id = ${ws.orgId}`).map((r) => r.id);
  t.notOk(left.includes(oldDelivered) || left.includes(oldFailed), 'settled old events are gone');
  t.ok(left.includes(oldPending) && left.includes(recent), 'pending and recent ones stay');
  const [{ n }] = await sql`select count(*)::int as n from webhook_deliveries where event_id in (${oldDelivered}, ${oldFailed})`;
  t.equal(n, 0, 'their deliveries went with them');
});
