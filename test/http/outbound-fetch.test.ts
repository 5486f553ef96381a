// Outbound fetches of user-supplied URLs over HTTP, against a server that drips one byte every
// 500 ms: the fetch behind POST /editor/videos/{id}/media ends at OUTBOUND_FETCH_TIMEOUT_MS with
// a 400 envelope naming body.url (the dripping connection closed then, not 18 minutes later); a
// client that hangs up (REST, and MCP by both of its paths) cancels its fetch at once, leaving
// nothing stored; a job's fetch ends at OUTBOUND_FETCH_JOB_TIMEOUT_MS and refunds; and every
// address the connection-time check refuses is refused at request time, charging nothing.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { eq } from 'drizzle-orm';
import t, { type Test as Tap } from 'tap';
import { organizations } from '../../src/db/schema/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProject } from '../editor/helpers.ts';

const DEADLINE_MS = 3000;
const JOB_DEADLINE_MS = 2000;

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);

interface Conn {
  opened: number;
  closed?: number;
  /** The path its request asked for: each case drips on paths of its own, so cases run at once. */
  path?: string;
}
const conns: Conn[] = [];
const sockets = new Set<Socket>();
const connOf = new WeakMap<Socket, Conn>();
const drip = (req: http.IncomingMessage, res: http.ServerResponse) => {
  const conn = connOf.get(req.socket);
  if (conn) conn.path = req.url;
  res.writeHead(200, { 'content-type': 'image/png' });
  res.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  const timer = setInterval(() => res.write('x'), 500);
  res.on('close', () => clearInterval(timer));
};
const track = (socket: Socket) => {
  const c: Conn = { opened: Date.now() };
  conns.push(c);
  connOf.set(socket, c);
  sockets.add(socket);
  socket.on('close', () => {
    c.closed = Date.now();
    sockets.delete(socket);
  });
};
const secure = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, drip);
const plain = http.createServer(drip);
// The TLS socket (what the request sees) for HTTPS, the TCP one for HTTP.
secure.on('secureConnection', track);
plain.on('connection', track);
for (const s of [secure, plain]) {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
}
t.teardown(() => {
  for (const s of sockets) s.destroy();
  secure.close();
  plain.close();
});
const dripUrl = (name: string) => `https://127.0.0.1:${(secure.address() as { port: number }).port}/${name}.mp3`;
const plainDripUrl = (name: string) => `http://127.0.0.1:${(plain.address() as { port: number }).port}/${name}.png`;
/** The connections whose request asked for this drip URL. */
const connsTo = (url: string) => conns.filter((c) => c.path === new URL(url).pathname);

const app = await startTestApp(
  t,
  {
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
    OUTBOUND_FETCH_TIMEOUT_MS: String(DEADLINE_MS),
    OUTBOUND_FETCH_JOB_TIMEOUT_MS: String(JOB_DEADLINE_MS),
  },
  { workers: true },
);
// The cases at once: each has its own workspace and drip paths, and mostly waits out a deadline.
t.jobs = 5;

const balance = async (a: TestApp, orgId: string) =>
  (await a.service.ctx.db.select().from(organizations).where(eq(organizations.id, orgId)))[0].credits;
const mediaCount = async (orgId: string) =>
  Number((await app.service.ctx.sql`select count(*)::int as n from media where org_id = ${orgId}`)[0].n);
/** The workspace's stored editor media, read through storage (whatever its backend). */
const storedFiles = async (orgId: string) => {
  const keys: string[] = [];
  for await (const o of app.service.ctx.storage.list(`editor-media/${orgId}/`)) keys.push(o.key);
  return keys;
};
const waitUntil = async (ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return ok();
};

/** Sends `body` to the API, hangs up once the fetch it causes is dripping, and checks that the dripping connection closes at once. */
async function hangUpMidFetch(
  t: Tap,
  url: string,
  method: string,
  apiPath: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const req = http.request(`${app.url}${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
  });
  let answered = false;
  req.on('response', () => (answered = true));
  req.on('error', () => {}); // we hang up ourselves
  req.end(JSON.stringify(body));
  t.ok(await waitUntil(() => connsTo(url).length > 0, 5000), 'the fetch reached the dripping server');
  const [conn] = connsTo(url);
  await new Promise((r) => setTimeout(r, 700)); // mid-body: a byte or two has dripped
  t.notOk(conn.closed, 'still dripping when the client hangs up');
  const hungUpAt = Date.now();
  req.destroy();
  t.ok(await waitUntil(() => conn.closed !== undefined, DEADLINE_MS + 2000), 'the dripping connection closed');
  const after = conn.closed! - hungUpAt;
  t.ok(after < 1000, `closed ${after} ms after the client hung up (the deadline was ${DEADLINE_MS - (hungUpAt - conn.opened)} ms away)`);
  t.notOk(answered, 'no answer was read');
}

t.test('a dripping URL behind POST /editor/videos/{id}/media ends at the deadline with a 400 naming body.url', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const project = await createProject(app, ws.key);
  const url = dripUrl('deadline');
  const started = Date.now();
  const res = await app.request('POST', `/api/v1/editor/videos/${project.id}/media`, { key: ws.key, body: { url, media_type: 'audio' } });
  const took = Date.now() - started;
  t.equal(res.status, 400, res.text.slice(0, 300));
  t.equal(res.body.error.code, 'bad_request');
  t.equal(res.body.error.context.reason, 'timeout');
  t.match(res.body.error.message, new RegExp(`did not finish within ${DEADLINE_MS} ms`));
  t.ok(
    res.body.error.context.errors.some((e: { field: string }) => e.field === 'body.url'),
    JSON.stringify(res.body.error.context),
  );
  t.ok(took >= DEADLINE_MS - 100 && took < DEADLINE_MS + 3000, `answered after ${took} ms`);
  const mine = connsTo(url);
  t.equal(mine.length, 1, 'one outgoing connection');
  t.ok(await waitUntil(() => mine.every((c) => c.closed), 2000), 'the dripping connection is closed');
  t.ok(mine[0].closed! - started < DEADLINE_MS + 1500, `closed ${mine[0].closed! - started} ms after the request`);
  t.equal(await mediaCount(ws.orgId), 0, 'nothing stored');
  t.same(await storedFiles(ws.orgId), []);
  t.equal(await balance(app, ws.orgId), 100);
});

t.test('a client that hangs up cancels its fetch: REST', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const project = await createProject(app, ws.key);
  const [upload, effect] = [dripUrl('rest-upload'), dripUrl('rest-effect')];
  await hangUpMidFetch(t, upload, 'POST', `/api/v1/editor/videos/${project.id}/media`, ws.key, { url: upload, media_type: 'audio' });
  // Edits that download (a sound effect by URL) are cancelled the same way.
  await hangUpMidFetch(t, effect, 'PATCH', `/api/v1/editor/videos/${project.id}`, ws.key, {
    operations: [{ type: 'add_sound_effect', url: effect }],
  });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await mediaCount(ws.orgId), 0, 'nothing stored');
  t.same(await storedFiles(ws.orgId), []);
  t.equal(await balance(app, ws.orgId), 100, 'nothing charged');
  const after = await app.request('GET', `/api/v1/editor/videos/${project.id}`, { key: ws.key });
  t.equal(after.body.version, project.version, 'the project is unchanged');
});

t.test('a client that hangs up cancels its fetch: MCP, direct path and SDK Server path', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const mcpHeaders = { accept: 'application/json, text/event-stream' };
  const call = (params: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
  const [direct, sdk] = [dripUrl('mcp-direct'), dripUrl('mcp-sdk')];
  // One plain tools/call: answered by the direct path.
  await hangUpMidFetch(
    t,
    direct,
    'POST',
    '/mcp',
    ws.key,
    call({ name: 'upload_editor_media_from_url', arguments: { url: direct, media_type: 'audio' } }),
    mcpHeaders,
  );
  // With _meta: the SDK Server answers it (its request signal aborts when the Server closes).
  await hangUpMidFetch(
    t,
    sdk,
    'POST',
    '/mcp',
    ws.key,
    call({ name: 'upload_editor_media_from_url', arguments: { url: sdk, media_type: 'audio' }, _meta: { progressToken: 7 } }),
    mcpHeaders,
  );
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await mediaCount(ws.orgId), 0, 'nothing stored');
  t.same(await storedFiles(ws.orgId), []);
});

t.test('a job’s fetch ends at the job deadline: the reference fails and is refunded', async (t) => {
  const ws = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const url = plainDripUrl('job');
  const res = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-spotlight', media_kind: 'image', image_urls: [url] },
  });
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.equal(await balance(app, ws.orgId), 70, 'charged 30');
  let ref: any;
  for (let i = 0; i < 150 && ref?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    ref = (await app.request('GET', '/api/v1/reference-inspirations', { key: ws.key })).body.data.find((r: any) => r.id === res.body.id);
  }
  t.equal(ref?.status, 'failed');
  t.match(ref?.error, {
    code: 'media_rejected',
    message: new RegExp(`did not finish within ${JOB_DEADLINE_MS} ms`),
    context: { field: 'body.image_urls[0]', credits_refunded: 30 },
  });
  t.equal(await balance(app, ws.orgId), 100, 'refunded');
  const mine = connsTo(url);
  t.equal(mine.length, 1);
  t.ok(
    mine[0].closed && mine[0].closed - mine[0].opened < JOB_DEADLINE_MS + 1500,
    `the job's connection lasted ${(mine[0].closed ?? Date.now()) - mine[0].opened} ms`,
  );
  t.equal(await mediaCount(ws.orgId), 0);
});

// Every literal the connection-time check refuses is a 400 at request time (nothing charged).
const REFUSED = [
  'http://100.64.0.1/x.png',
  'http://100.127.255.254/x.png',
  'http://1681915905/x.png',
  'http://198.18.0.1/x.png',
  'http://198.19.0.1/x.png',
  'http://[64:ff9b::a00:1]/x.png',
  'http://[64:ff9b::808:808]/x.png',
  'http://0.0.0.0/x.png',
  'http://224.0.0.1/x.png',
  'http://240.0.0.1/x.png',
  'http://255.255.255.255/x.png',
  'http://192.0.2.1/x.png',
  // 127.0.0.1 itself is allowed here (OUTBOUND_ALLOW_IPS), its neighbour is not, in any spelling.
  'http://0x7f.2/x.png',
  'http://2130706434/x.png',
  'http://0177.0.0.2/x.png',
  'http://127.0.0.2./x.png',
  'http://0xa9fea9fe/latest',
  'http://[::1]/x.png',
  'http://[::]/x.png',
  'http://[fc00::1]/x.png',
  'http://[fe80::1]/x.png',
  'http://[::ffff:127.0.0.2]/x.png',
  'http://[::ffff:10.0.0.1]/x.png',
  'http://[2001:db8::1]/x.png',
  'http://[2002:a00:1::]/x.png',
  'http://[2001::1]/x.png',
  'http://[::7f00:1]/x.png',
];

t.test('refused addresses are a 400 at request time naming the field, and nothing is charged', async (t) => {
  const ws = await app.workspace({ credits: 1000, scopes: ['generations:read', 'generations:write'] });
  for (const url of REFUSED) {
    const res = await app.request('POST', '/api/v1/reference-inspirations', {
      key: ws.key,
      body: { template_slug: 'product-spotlight', media_kind: 'image', image_urls: [url] },
    });
    t.equal(res.status, 400, url);
    t.ok(
      res.body.error.context.errors?.some(
        (e: { field: string; message: string }) =>
          e.field === 'body.image_urls[0]' && /private, loopback, link-local or reserved/.test(e.message),
      ),
      `${url}: ${JSON.stringify(res.body.error.context.errors)}`,
    );
  }
  t.equal(await balance(app, ws.orgId), 1000, 'no credits taken');
  const [refs] = await app.service.ctx.sql`select count(*)::int as n from reference_inspirations where org_id = ${ws.orgId}`;
  t.equal(refs.n, 0, 'no reference created');

  const project = await createProject(app, ws.key);
  for (const url of REFUSED.map((u) => u.replace(/^http:/, 'https:'))) {
    const res = await app.request('POST', `/api/v1/editor/videos/${project.id}/media`, { key: ws.key, body: { url } });
    t.equal(res.status, 400, url);
    t.ok(
      res.body.error.context.errors?.some((e: { field: string }) => e.field === 'body.url'),
      url,
    );
  }
  t.same(
    conns.filter((c) => c.path === '/x.png' || c.path === '/latest'),
    [],
    'nothing was fetched',
  );
  t.equal(await mediaCount(ws.orgId), 0);
});
