// Clients that stop reading their answer are dropped (src/http/drain.ts), over real sockets: a
// connection whose answer is being written is reset once the client takes no byte of it for
// CONNECTION_TIMEOUT_SECONDS, or takes it slower than RESPONSE_MIN_BYTES_PER_SECOND once
// RESPONSE_DRAIN_TIMEOUT_SECONDS have passed; pipelined requests are answered one at a time, so a
// client that does not read gets no more work done than it takes; and one address may have at most
// MAX_CONCURRENT_DOWNLOADS_PER_ADDRESS media downloads in progress (429 rate_limited past it).
//
// "Dropped" is what the client sees, not only the server's file descriptor: a connection closed
// politely (FIN) while the client is not reading keeps the unsent answer in the kernel, and the
// client stays connected for minutes. So a stalled client here resumes reading after the bound and
// must find its connection reset (ECONNRESET) with only what its own receive buffer held, and the
// server's end must have closed within the bound. Different client addresses (X-Forwarded-For,
// TRUST_PROXY=true) keep the cases apart, so all but the first run at once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { catalogSampleKey as sampleKey } from '../../src/storage/keys.ts';
import { startTestApp } from '../helpers/app.ts';

const CONNECTION_S = 2;
const DRAIN_S = 2;
/** High, so a crawling reader on loopback (with its megabytes of socket buffers) is below it soon. */
const MIN_RATE = 1_000_000;
const MAX_DOWNLOADS = 4;
const app = await startTestApp(t, {
  CONNECTION_TIMEOUT_SECONDS: String(CONNECTION_S),
  RESPONSE_DRAIN_TIMEOUT_SECONDS: String(DRAIN_S),
  RESPONSE_MIN_BYTES_PER_SECOND: String(MIN_RATE),
  MAX_CONCURRENT_DOWNLOADS_PER_ADDRESS: String(MAX_DOWNLOADS),
  TRUST_PROXY: 'true',
});
const server = app.service.app!.server;
const port = Number(new URL(app.url).port);
const storage = app.service.ctx.storage;

// A large stored file behind a signed URL, and the same bytes as a public catalog sample (what
// the sample route serves once the sample is made: no key needed).
const SIZE = 16 * 1024 * 1024;
const big = crypto.randomBytes(SIZE);
await storage.put('generations/slow-readers/big.mp4', big, 'video/mp4');
const media = new URL(storage.signedUrl('generations/slow-readers/big.mp4'));
const MEDIA_PATH = `${media.pathname}${media.search}`;
await storage.put(sampleKey('voices/ava-bright.wav'), big, 'audio/wav');
const SAMPLE_PATH = '/static/previews/voices/ava-bright.wav';
const OPENAPI_BYTES = Buffer.byteLength((await (await fetch(`${app.url}/api/v1/openapi.json`)).text()) ?? '');

/** The server's end of each connection, by the client's port: when it closed, and its answers. */
interface ServerEnd {
  socket: net.Socket;
  closedAt?: number;
  responses: ServerResponse[];
}
const ends = new Map<number, ServerEnd>();
server.on('connection', (socket: net.Socket) => {
  const end: ServerEnd = { socket, responses: [] };
  ends.set(socket.remotePort!, end);
  socket.once('close', () => (end.closedAt = performance.now()));
});
server.on('request', (req: IncomingMessage, res: ServerResponse) => ends.get(req.socket.remotePort!)?.responses.push(res));

async function serverEnd(localPort: number): Promise<ServerEnd> {
  for (let i = 0; i < 200 && !ends.has(localPort); i++) await new Promise((r) => setTimeout(r, 10));
  return ends.get(localPort)!;
}

interface Client {
  socket: net.Socket;
  startedAt: number;
  /** Bytes read so far, and how the connection ended (error code, 'end'), once it did. */
  bytes(): number;
  /** Length of the answer's status line and headers, once they arrived. */
  headLength(): number | undefined;
  ended: Promise<{ how: string; at: number }>;
  end(): Promise<ServerEnd>;
}

/**
 * Connects, sends `head`, and reads nothing (`readEveryMs` 0), or one chunk every `readEveryMs`.
 * A safety net closes it after 25 s, so a failing test still ends.
 */
function client(head: string, readEveryMs = 0): Client {
  const socket = new net.Socket();
  socket.pause();
  const startedAt = performance.now();
  let bytes = 0;
  let first = '';
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<{ how: string; at: number }>((resolve) => {
    socket.on('error', (err: NodeJS.ErrnoException) => resolve({ how: err.code ?? err.message, at: performance.now() }));
    socket.on('end', () => resolve({ how: 'end', at: performance.now() }));
    socket.on('close', () => resolve({ how: 'close', at: performance.now() }));
  });
  socket.on('data', (d: Buffer) => {
    if (bytes < 4096) first += d.subarray(0, 4096).toString('latin1');
    bytes += d.length;
    if (readEveryMs > 0) {
      socket.pause();
      timer = setTimeout(() => socket.resume(), readEveryMs);
    }
  });
  let localPort = 0;
  const connected = new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
  connected.then(() => {
    localPort = socket.localPort!;
    socket.write(head);
    if (readEveryMs > 0) socket.resume();
  });
  const guard = setTimeout(() => socket.destroy(), 25_000);
  ended.then(() => {
    clearTimeout(guard);
    clearTimeout(timer);
    socket.destroy();
  });
  const headLength = () => (first.includes('\r\n\r\n') ? first.indexOf('\r\n\r\n') + 4 : undefined);
  return { socket, startedAt, bytes: () => bytes, headLength, ended, end: async () => (await connected, serverEnd(localPort)) };
}

const get = (path: string, from: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${from}\r\n\r\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bound within which the server must have dropped a stalled client: its limit, a check interval, and margin. */
const BOUND_MS = CONNECTION_S * 1000 + 1000 + 2500;

/**
 * A client that stopped reading: the server's end closed within `boundMs`, and, reading again
 * after that, the client finds the connection reset with less than the whole answer.
 */
async function dropped(t: Test, c: Client, boundMs: number, what: string, whole = SIZE) {
  const end = await c.end();
  await sleep(Math.max(0, c.startedAt + boundMs - performance.now()));
  t.ok(end.closedAt !== undefined, `${what}: the server closed its end within ${boundMs} ms`);
  c.socket.resume();
  const r = await c.ended;
  t.equal(r.how, 'ECONNRESET', `${what}: reading again, the client finds the connection reset (not still delivering)`);
  t.ok(c.bytes() < whole, `${what}: it did not get the whole answer (${c.bytes()} of ${whole} bytes)`);
}

const fds = () => fs.readdirSync('/proc/self/fd').length;
const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

t.test('clients that stop reading are reset within CONNECTION_TIMEOUT_SECONDS; open files return to baseline', async (t) => {
  const fds0 = fds();
  const conns0 = await connections();
  // Pipelining clients that never read: 200 requests each for the 450 KB contract.
  const pipelined = Array.from({ length: 10 }, () => client(get('/api/v1/openapi.json', '198.51.100.1').repeat(200)));
  // A signed media download and a public catalog sample, never read.
  const media = Array.from({ length: 3 }, () => client(get(MEDIA_PATH, '198.51.100.2')));
  const samples = Array.from({ length: 3 }, () => client(get(SAMPLE_PATH, '198.51.100.3')));
  await Promise.all([
    ...pipelined.map((c, i) => dropped(t, c, BOUND_MS, `pipelined openapi.json #${i}`, 200 * OPENAPI_BYTES)),
    ...media.map((c, i) => dropped(t, c, BOUND_MS, `stalled media download #${i}`)),
    ...samples.map((c, i) => dropped(t, c, BOUND_MS, `stalled catalog sample #${i}`)),
  ]);
  // The server answered only what it could hand over: a stalled pipeline gets no more work done.
  for (const [i, c] of pipelined.entries()) {
    const end = await c.end();
    const answered = end.responses.filter((r) => r.headersSent).length;
    const handedOver = Math.ceil(end.socket.bytesWritten / OPENAPI_BYTES);
    t.ok(
      answered <= handedOver + 1,
      `pipelined #${i}: ${answered} of ${end.responses.length} requests answered, ${handedOver} answers' worth written`,
    );
  }
  for (let i = 0; i < 50 && (await connections()) > conns0; i++) await sleep(100);
  t.equal(await connections(), conns0, 'open connections are back to what they were');
  t.ok(fds() <= fds0 + 2, `open files are back to baseline (${fds0} before, ${fds()} after)`);
});

// The other cases at once, each from its own address.
t.test('slow readers, live readers and the per-address cap', async (t) => {
  t.jobs = 4;
  t.test('a client that stops reading but keeps sending (the next request, a byte at a time) is reset too', async (t) => {
    // Node's socket timeout counts the client's bytes as traffic; what counts is what it takes.
    const c = client(`${get(MEDIA_PATH, '198.51.100.4')}GET /api/v1/models HTTP/1.1\r\nX-Slow: `);
    await c.end();
    const drip = setInterval(() => c.socket.writable && c.socket.write('a'), 200);
    await dropped(t, c, BOUND_MS, 'a client sending but not reading');
    clearInterval(drip);
  });

  t.test('a reader crawling below RESPONSE_MIN_BYTES_PER_SECOND is cut once RESPONSE_DRAIN_TIMEOUT_SECONDS have passed', async (t) => {
    // One chunk (at most 64 KiB) every 300 ms: at most about 220 KB/s, and it never stops for long.
    const crawler = client(get(MEDIA_PATH, '198.51.100.5'), 300);
    const r = await crawler.ended;
    const end = await crawler.end();
    const ms = r.at - crawler.startedAt;
    t.ok(ms > DRAIN_S * 1000 - 200, `not before the drain period (${Math.round(ms)} ms)`);
    t.ok(ms < 15_000, `cut after ${Math.round(ms)} ms`);
    t.equal(r.how, 'ECONNRESET', 'by a reset');
    t.ok(crawler.bytes() < SIZE, `before it had the answer (${crawler.bytes()} of ${SIZE} bytes)`);
    t.ok(end.closedAt !== undefined && end.closedAt - crawler.startedAt < 15_000, 'the server closed its end');
  });

  t.test('a live reader of a large download is not cut, even one slower than the limits', async (t) => {
    const res = await fetch(`${app.url}${MEDIA_PATH}`, { headers: { 'x-forwarded-for': '198.51.100.6' } });
    t.equal(res.status, 200);
    t.ok(Buffer.from(await res.arrayBuffer()).equals(big), 'a fast reader gets every byte');
    // One chunk every 15 ms (some MB/s): the download lasts longer than both limits.
    const steady = client(get(MEDIA_PATH, '198.51.100.6'), 15);
    const whole = () => steady.bytes() >= SIZE + (steady.headLength() ?? Infinity);
    for (let i = 0; i < 400 && !whole() && !steady.socket.destroyed; i++) await sleep(50);
    const took = performance.now() - steady.startedAt;
    t.ok(whole(), `the steady reader got the whole answer (${steady.bytes()} bytes in ${Math.round(took)} ms)`);
    t.ok(took > CONNECTION_S * 1000, 'over a longer time than the limits');
    steady.socket.destroy();
  });

  t.test('MAX_CONCURRENT_DOWNLOADS_PER_ADDRESS: 429 rate_limited past it for that address only', async (t) => {
    const from = '203.0.113.9';
    const stalled = Array.from({ length: MAX_DOWNLOADS }, (_, i) => client(get(i % 2 ? SAMPLE_PATH : MEDIA_PATH, from)));
    const started = async () => (await Promise.all(stalled.map((c) => c.end()))).every((e) => e.responses[0]?.headersSent);
    for (let i = 0; i < 100 && !(await started()); i++) await sleep(20);
    t.ok(await started(), `${MAX_DOWNLOADS} downloads in progress from one address`);

    for (const path of [MEDIA_PATH, SAMPLE_PATH]) {
      const res = await fetch(`${app.url}${path}`, { headers: { 'x-forwarded-for': from } });
      t.equal(res.status, 429, 'one more from that address: 429');
      if (res.status !== 429) {
        await res.body?.cancel();
        continue;
      }
      const body = (await res.json()) as { error: { message: string; context: { retry_after_seconds: number } } };
      t.match(body, { error: { code: 'rate_limited', retryable: true, context: { retry_after_seconds: Number } } });
      t.type(body.error.message, 'string');
      t.equal(res.headers.get('retry-after'), String(body.error.context.retry_after_seconds), 'Retry-After as in the context');
      t.match(res.headers.get('content-type'), /^application\/json/);
    }
    const head = await fetch(`${app.url}${MEDIA_PATH}`, { method: 'HEAD', headers: { 'x-forwarded-for': from } });
    t.equal(head.status, 200, 'HEAD streams nothing and is not counted');
    const other = await fetch(`${app.url}${MEDIA_PATH}`, { headers: { 'x-forwarded-for': '203.0.113.10' } });
    t.equal(other.status, 200, 'another address downloads');
    t.equal((await other.arrayBuffer()).byteLength, SIZE);
    const api = await app.request('GET', '/api/v1/models', { headers: { 'x-forwarded-for': from } });
    t.equal(api.status, 200, 'API requests from the capped address are served');

    await Promise.all(stalled.map((c, i) => dropped(t, c, BOUND_MS, `capped download #${i}`)));
    const again = await fetch(`${app.url}${MEDIA_PATH}`, { headers: { 'x-forwarded-for': from } });
    t.equal(again.status, 200, 'once they are dropped, that address downloads again');
    t.equal((await again.arrayBuffer()).byteLength, SIZE);
  });
});
