// GENERATION_PROVIDER=remote end to end: the worker submits to a remote generation API (a local
// fake speaking the adapter's protocol), polls it, stores the output, and fails with a refund
// when the remote job fails.
import http from 'node:http';
import sharp from 'sharp';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

const png = await sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#00aa55' } }).png().toBuffer();
const jobs = new Map<string, { polls: number; fail: boolean; body: any }>();
const fake = http.createServer((req, res) => {
  const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.headers.authorization !== 'Bearer remote-secret' && !req.url!.startsWith('/files/')) return json(401, { error: { code: 'unauthorized', message: 'bad key' } });
  if (req.method === 'POST' && req.url === '/v1/jobs') {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      const id = `job-${jobs.size + 1}`;
      jobs.set(id, { polls: 0, fail: /fail/.test(body.prompt), body });
      json(202, { id, status: 'queued' });
    });
    return;
  }
  const m = /^\/v1\/jobs\/([^/]+)$/.exec(req.url!);
  if (req.method === 'GET' && m && jobs.has(m[1])) {
    const job = jobs.get(m[1])!;
    job.polls++;
    if (job.polls < 2) return json(200, { id: m[1], status: 'running', progress: 0.5 });
    if (job.fail) return json(200, { id: m[1], status: 'failed', error: { code: 'content_rejected', message: 'The remote service rejected the prompt' } });
    return json(200, { id: m[1], status: 'succeeded', progress: 1, output_url: `/files/${m[1]}.png` });
  }
  if (req.method === 'GET' && req.url!.startsWith('/files/')) return res.writeHead(200, { 'content-type': 'image/png' }).end(png);
  json(404, { error: { code: 'not_found', message: 'no such route' } });
});
await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
t.teardown(() => fake.close());
const base = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;

const app = await startTestApp(
  t,
  { GENERATION_PROVIDER: 'remote', REMOTE_PROVIDER_URL: base, REMOTE_PROVIDER_API_KEY: 'remote-secret', REMOTE_PROVIDER_POLL_MS: '50' },
  { workers: true },
);

async function finished(key: string, id: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await app.request('GET', `/api/v1/generations/${id}`, { key });
    if (res.body.status !== 'generating') return res;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('a remote job that succeeds becomes the generation’s output', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Remote ad', aspect_ratio: '1:1' } });
  t.equal(res.status, 200);
  const done = await finished(ws.key, res.body.generations[0].id);
  t.equal(done.body.status, 'completed', JSON.stringify(done.body.error));
  t.match(done.body.output, { content_type: 'image/png', width: 1024, height: 1024 });
  const file = Buffer.from(await (await fetch(done.body.url)).arrayBuffer());
  t.same(await sharp(file).metadata().then((m) => [m.format, m.width, m.height]), ['png', 1024, 1024], 'the remote output, stored and served');
  const submitted = [...jobs.values()].find((j) => j.body.client_reference === res.body.generations[0].id)!;
  t.match(submitted.body, { kind: 'image', generation_type: 'static_ad', width: 1024, height: 1024, format: 'png', template: 'bold-sale-banner' });
});

t.test('a remote job that fails fails the generation and refunds it', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'please fail' } });
  const done = await finished(ws.key, res.body.generations[0].id);
  t.equal(done.body.status, 'error');
  t.match(done.body.error, { code: 'content_rejected', retryable: false });
  const [{ credits }] = await app.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`;
  t.equal(credits, 100, 'refunded');
});
