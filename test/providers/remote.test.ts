// The remote adapter against a fake generation service (node:http on 127.0.0.1:0) that speaks
// the API documented at the top of src/providers/remote.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { probe, runFfmpeg } from '../../src/media/ffmpeg.ts';
import { RemoteProvider, type RemoteProviderOptions } from '../../src/providers/remote.ts';
import { ProviderError, type GenerationJob } from '../../src/providers/types.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'providers-remote-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const KEY = 'sk-test-remote';
const VIDEO = path.join(work, 'fixture.mp4');
await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x112:rate=25:duration=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', VIDEO]);

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  idempotencyKey: string | undefined;
  body?: Record<string, unknown>;
}

interface FakeJob {
  id: string;
  body: Record<string, unknown>;
  polls: number;
}

/** Behaviour is chosen by words in the prompt, so one server serves every test. */
async function startFake() {
  const seen: Seen[] = [];
  const jobs = new Map<string, FakeJob>();
  let n = 0;
  let pollFailures = 0;
  const submitStatus = { next: 0, retryAfter: '' };
  const sockets = new Set<import('node:net').Socket>();

  const cdn = http.createServer(async (req, res) => {
    seen.push({ method: req.method ?? '', url: `cdn:${req.url}`, auth: req.headers.authorization, idempotencyKey: undefined });
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#00ff00' } }).png().toBuffer();
    res.writeHead(200, { 'content-type': 'image/png' }).end(png);
  });
  await new Promise<void>((r) => cdn.listen(0, '127.0.0.1', r));
  const cdnUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}`;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const entry: Seen = { method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, idempotencyKey: req.headers['idempotency-key'] as string | undefined };
    seen.push(entry);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/api/')) return json(404, { error: { code: 'not_found', message: 'no such route' } });
    const route = url.pathname.slice(4);

    if (route.startsWith('/files/')) {
      const job = jobs.get(route.slice(7));
      if (!job) return json(404, { error: { code: 'not_found', message: 'no file' } });
      if (req.headers.authorization !== `Bearer ${KEY}`) return json(401, { error: { code: 'unauthorized', message: 'bad key' } });
      const prompt = String(job.body.prompt);
      if (prompt.includes('garbage')) return res.writeHead(200, { 'content-type': 'image/png' }).end('definitely not a png');
      if (job.body.kind === 'video') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(readFileSync(VIDEO));
      const w = Number(job.body.width);
      const h = Number(job.body.height);
      const img = sharp({ create: { width: w, height: h, channels: 3, background: '#3366cc' } });
      // "wrongformat": always PNG, whatever was asked.
      const fmt = prompt.includes('wrongformat') ? 'png' : String(job.body.format);
      const buf = await (fmt === 'jpeg' ? img.jpeg() : fmt === 'webp' ? img.webp() : img.png()).toBuffer();
      return res.writeHead(200, { 'content-type': `image/${fmt}` }).end(buf);
    }

    if (req.headers.authorization !== `Bearer ${KEY}`) return json(401, { error: { code: 'unauthorized', message: 'invalid API key' } });

    if (req.method === 'POST' && route === '/v1/jobs') {
      const body = JSON.parse(raw) as Record<string, unknown>;
      entry.body = body;
      const prompt = String(body.prompt);
      if (prompt.includes('hang-submit')) return; // never answers
      if (submitStatus.next) {
        const s = submitStatus.next;
        submitStatus.next = 0;
        return json(s, { error: { code: s === 429 ? 'rate_limited' : 'overloaded', message: 'try later' } }, submitStatus.retryAfter ? { 'retry-after': submitStatus.retryAfter } : {});
      }
      if (prompt.includes('invalid-request')) return json(400, { error: { code: 'invalid_prompt', message: 'prompt rejected' } });
      const existing = [...jobs.values()].find((j) => j.body.client_reference === body.client_reference && req.headers['idempotency-key']);
      if (existing) return json(200, { id: existing.id, status: 'queued' });
      const id = `job_${++n}`;
      jobs.set(id, { id, body, polls: 0 });
      return json(202, { id, status: 'queued' });
    }

    const m = /^\/v1\/jobs\/([^/]+)$/.exec(route);
    if (m) {
      const job = jobs.get(m[1]);
      if (!job) return json(404, { error: { code: 'not_found', message: 'no such job' } });
      if (req.method === 'DELETE') return json(200, { id: job.id, status: 'failed' });
      const prompt = String(job.body.prompt);
      job.polls++;
      if (prompt.includes('flaky') && pollFailures < Number(/flaky(\d)/.exec(prompt)?.[1] ?? 2)) {
        pollFailures++;
        return json(502, { error: { code: 'bad_gateway', message: 'upstream hiccup' } });
      }
      if (prompt.includes('slow')) return json(200, { id: job.id, status: 'running', progress: Math.min(0.9, job.polls / 100) });
      if (job.polls === 1) return json(200, { id: job.id, status: 'running', progress: 0.5 });
      if (prompt.includes('fail')) {
        return json(200, { id: job.id, status: 'failed', error: { code: 'content_policy', message: 'prompt blocked by policy', retryable: prompt.includes('transient') } });
      }
      const output_url = prompt.includes('cdn') ? `${cdnUrl}/out/${job.id}.png` : `/api/files/${job.id}`;
      return json(200, { id: job.id, status: 'succeeded', progress: 1, output_url });
    }
    return json(404, { error: { code: 'not_found', message: 'no such route' } });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return {
    url,
    seen,
    jobs,
    submitStatus,
    resetFlaky: () => (pollFailures = 0),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      await new Promise((r) => cdn.close(r));
    },
  };
}

const fake = await startFake();
t.teardown(() => fake.close());

let seq = 0;
const RED = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } }).png().toBuffer();
function job(over: Partial<GenerationJob> = {}): GenerationJob {
  return {
    generationId: `7f0c1a52-0000-4000-8000-${String(++seq).padStart(12, '0')}`,
    type: 'static_ad',
    output: 'image',
    prompt: 'A bright summer sale',
    title: 'Bold Sale Banner',
    templateSlug: 'bold-sale-banner',
    aspectRatio: '4:5',
    width: 820,
    height: 1024,
    imageFormat: 'png',
    brandColors: ['#112233'],
    brandName: 'Acme',
    referenceImages: [RED],
    generateAudio: false,
    ...over,
  };
}
const remote = (over: Partial<RemoteProviderOptions> = {}) => new RemoteProvider({ baseUrl: fake.url, apiKey: KEY, pollMs: 20, ...over });
const fail = (p: Promise<unknown>) => p.then(
  () => {
    throw new Error('expected a rejection');
  },
  (e: unknown) => e as ProviderError,
);

t.test('success: submits, polls, downloads the output', async (t) => {
  const fractions: number[] = [];
  const j = job();
  const res = await remote().generate(j, { workDir: work, onProgress: (f) => fractions.push(f) });
  const buf = readFileSync(res.path);
  const meta = await sharp(buf).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 820, 1024]);
  t.same([res.contentType, res.width, res.height, res.bytes], ['image/png', 820, 1024, buf.length]);
  t.equal(res.path, path.join(work, `${j.generationId}.png`));
  t.ok(fractions.every((f, i) => i === 0 || f > fractions[i - 1]), 'progress increases');
  t.equal(fractions.at(-1), 1);
  t.ok(fractions.some((f) => f > 0.3 && f < 0.9), 'remote progress passed through');

  const submit = fake.seen.find((s) => s.method === 'POST' && s.body?.client_reference === j.generationId);
  t.ok(submit, 'job submitted under the configured base path');
  t.equal(submit?.url, '/api/v1/jobs');
  t.equal(submit?.auth, `Bearer ${KEY}`);
  t.equal(submit?.idempotencyKey, j.generationId);
  const body = submit?.body ?? {};
  t.match(body, { kind: 'image', generation_type: 'static_ad', width: 820, height: 1024, format: 'png', aspect_ratio: '4:5', template: 'bold-sale-banner', brand: { name: 'Acme', colors: ['#112233'] } });
  const refs = body.reference_images as Array<{ content_type: string; data: string }>;
  t.equal(refs.length, 1);
  t.equal(refs[0].content_type, 'image/png');
  t.ok(Buffer.from(refs[0].data, 'base64').equals(RED), 'reference image sent as base64');
});

t.test('success: a video output is checked with ffprobe', async (t) => {
  const j = job({ type: 'video_ad', output: 'video', width: 64, height: 112, aspectRatio: '9:16', durationSeconds: 1, imageFormat: undefined, generateAudio: true });
  const res = await remote().generate(j, { workDir: work });
  t.equal(res.contentType, 'video/mp4');
  t.same([res.width, res.height], [64, 112]);
  t.ok(Math.abs((res.durationSeconds ?? 0) - 1) < 0.1);
  t.equal((await probe(res.path)).video_codec, 'h264');
  const submit = fake.seen.find((s) => s.body?.client_reference === j.generationId);
  t.match(submit?.body, { kind: 'video', format: 'mp4', duration_seconds: 1, generate_audio: true });
});

t.test('an image in another format than requested is converted', async (t) => {
  const res = await remote().generate(job({ prompt: 'wrongformat please', imageFormat: 'jpeg' }), { workDir: work });
  const meta = await sharp(res.path).metadata();
  t.same([meta.format, res.contentType, path.extname(res.path)], ['jpeg', 'image/jpeg', '.jpg']);
});

t.test('output on another origin: downloaded without our key', async (t) => {
  const before = fake.seen.length;
  const res = await remote().generate(job({ prompt: 'cdn hosted' }), { workDir: work });
  t.equal((await sharp(res.path).metadata()).width, 40);
  const cdnHit = fake.seen.slice(before).find((s) => s.url.startsWith('cdn:'));
  t.ok(cdnHit, 'fetched from the output URL');
  t.equal(cdnHit?.auth, undefined, 'no Authorization sent to a foreign origin');
});

t.test('a failed job is a non-retryable ProviderError (unless the remote says otherwise)', async (t) => {
  const err = await fail(remote().generate(job({ prompt: 'please fail' }), { workDir: work }));
  t.ok(err instanceof ProviderError);
  t.equal(err.retryable, false);
  t.equal(err.code, 'remote_content_policy');
  t.match(err.message, /prompt blocked by policy/);
  const err2 = await fail(remote().generate(job({ prompt: 'fail transient' }), { workDir: work }));
  t.equal(err2.retryable, true);
});

t.test('5xx and 429 are retryable; 4xx are not', async (t) => {
  fake.submitStatus.next = 503;
  const e503 = await fail(remote().generate(job(), { workDir: work }));
  t.ok(e503 instanceof ProviderError);
  t.same([e503.retryable, e503.status, e503.code], [true, 503, 'remote_unavailable']);

  fake.submitStatus.next = 429;
  fake.submitStatus.retryAfter = '7';
  const e429 = await fail(remote().generate(job(), { workDir: work }));
  fake.submitStatus.retryAfter = '';
  t.same([e429.retryable, e429.status, e429.code, e429.retryAfterMs], [true, 429, 'remote_rate_limited', 7000]);

  const e400 = await fail(remote().generate(job({ prompt: 'invalid-request' }), { workDir: work }));
  t.same([e400.retryable, e400.status, e400.code], [false, 400, 'remote_rejected']);
  t.match(e400.message, /prompt rejected/);
});

t.test('a wrong key is a non-retryable error', async (t) => {
  const err = await fail(remote({ apiKey: 'sk-wrong' }).generate(job(), { workDir: work }));
  t.ok(err instanceof ProviderError);
  t.same([err.retryable, err.status, err.code], [false, 401, 'remote_unauthorized']);
  t.match(err.message, /invalid API key/);
});

t.test('transient poll failures are tolerated up to a limit', async (t) => {
  fake.resetFlaky();
  const ok = await remote({ maxPollErrors: 3 }).generate(job({ prompt: 'flaky2' }), { workDir: work });
  t.ok(ok.bytes > 0, 'two 502s while polling, then success');
  fake.resetFlaky();
  const err = await fail(remote({ maxPollErrors: 1 }).generate(job({ prompt: 'flaky3' }), { workDir: work }));
  t.same([err.retryable, err.status], [true, 502]);
});

t.test('network failure is retryable', async (t) => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const err = await fail(remote({ baseUrl: `http://127.0.0.1:${port}/api` }).generate(job(), { workDir: work }));
  t.ok(err instanceof ProviderError);
  t.same([err.retryable, err.code], [true, 'remote_unreachable']);
});

t.test('timeouts: a request that never answers, a job that never finishes', async (t) => {
  const started = Date.now();
  const err = await fail(remote({ requestTimeoutMs: 300 }).generate(job({ prompt: 'hang-submit' }), { workDir: work }));
  t.same([err.retryable, err.code], [true, 'remote_timeout']);
  t.ok(Date.now() - started < 3000, 'gave up promptly');

  const j = job({ prompt: 'slow render' });
  const err2 = await fail(remote({ jobTimeoutMs: 400 }).generate(j, { workDir: work }));
  t.same([err2.retryable, err2.code], [true, 'remote_timeout']);
  const id = [...fake.jobs.values()].find((x) => x.body.client_reference === j.generationId)?.id;
  t.ok(fake.seen.some((s) => s.method === 'DELETE' && s.url === `/api/v1/jobs/${id}`), 'remote job cancelled');
});

t.test('abort: while polling (remote job cancelled) and while a request hangs', async (t) => {
  const ac = new AbortController();
  const j = job({ prompt: 'slow again' });
  const p = remote().generate(j, {
    workDir: work,
    signal: ac.signal,
    onProgress: (f) => {
      if (f > 0.02) ac.abort();
    },
  });
  const err = await p.catch((e) => e);
  t.equal(err?.name, 'AbortError');
  const id = [...fake.jobs.values()].find((x) => x.body.client_reference === j.generationId)?.id;
  t.ok(fake.seen.some((s) => s.method === 'DELETE' && s.url === `/api/v1/jobs/${id}`), 'remote job cancelled');

  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 100);
  const started = Date.now();
  const err2 = await remote().generate(job({ prompt: 'hang-submit' }), { workDir: work, signal: ac2.signal }).catch((e) => e);
  t.equal(err2?.name, 'AbortError');
  t.ok(Date.now() - started < 2000);
});

t.test('outputs are checked: too large, not decodable', async (t) => {
  const big = await fail(remote({ maxOutputBytes: 100 }).generate(job(), { workDir: work }));
  t.same([big.retryable, big.code], [false, 'remote_output_too_large']);
  const bad = await fail(remote().generate(job({ prompt: 'garbage out' }), { workDir: work }));
  t.same([bad.retryable, bad.code], [false, 'remote_invalid_output']);
  const leftovers = (await import('node:fs')).readdirSync(work).filter((f) => f.endsWith('.download'));
  t.same(leftovers, [], 'no partial downloads left');
});

t.test('outputs are checked against the pixel limits (MEDIA_MAX_PIXELS, MEDIA_MAX_DIMENSION)', async (t) => {
  const many = await fail(remote({ pixelLimits: { maxPixels: 820 * 1024 - 1, maxDimension: 16384 } }).generate(job(), { workDir: work }));
  t.same([many.retryable, many.code], [false, 'remote_invalid_output']);
  t.match(many.message, /more than 839679 pixels/);
  const converted = await fail(remote({ pixelLimits: { maxPixels: 100, maxDimension: 16384 } }).generate(job({ prompt: 'wrongformat please', imageFormat: 'jpeg' }), { workDir: work }));
  t.same([converted.retryable, converted.code], [false, 'remote_invalid_output'], 'refused before it is converted');
  const tall = await fail(remote({ pixelLimits: { maxPixels: 40_000_000, maxDimension: 100 } }).generate(job({ type: 'video_ad', output: 'video', width: 64, height: 112, aspectRatio: '9:16', durationSeconds: 1, imageFormat: undefined }), { workDir: work }));
  t.same([tall.retryable, tall.code], [false, 'remote_invalid_output']);
  t.match(tall.message, /frames are 64×112 pixels; at most 100 pixels per side/);
  t.ok(await remote({ pixelLimits: { maxPixels: 820 * 1024, maxDimension: 1024 } }).generate(job(), { workDir: work }), 'exactly at the limits: accepted');
});

t.test('configuration is validated', async (t) => {
  t.throws(() => new RemoteProvider({ baseUrl: 'not a url', apiKey: 'k' }), /absolute http\(s\) URL/);
  t.throws(() => new RemoteProvider({ baseUrl: 'file:///etc', apiKey: 'k' }), /absolute http\(s\) URL/);
  t.throws(() => new RemoteProvider({ baseUrl: 'https://x', apiKey: '' }), /API key/);
});
