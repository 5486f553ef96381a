// Slow clients are cut (src/http/timeouts.ts), over real sockets: headers trickled, a JSON body
// trickled, a multipart upload that stalls or crawls, and one that keeps a decent rate past the
// overall cap. Each connection is closed by the server within its limit (plus Node's 1 s check
// interval and a generous margin), with 408 request_timeout in the envelope when nothing was
// answered yet, while other clients are served. With the default limits, a fast large upload and
// a normal JSON request go through. The cases use separate connections and run concurrently:
// each one waits out a limit, and none changes what another sees.
import net from 'node:net';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const LIMIT_S = 1;
/** The overall cap: well past the other limits (and a crawling upload's cut), so it is clearly the one that acts. */
const CAP_S = 4;
const app = await startTestApp(t, {
  HEADERS_TIMEOUT_SECONDS: String(LIMIT_S),
  BODY_TIMEOUT_SECONDS: String(LIMIT_S),
  UPLOAD_IDLE_TIMEOUT_SECONDS: String(LIMIT_S),
  UPLOAD_MIN_BYTES_PER_SECOND: '1000',
  REQUEST_TIMEOUT_SECONDS: String(CAP_S),
});
const ws = await app.workspace({ scopes: ['generations:read', 'generations:write'] });
// Every case below at once (each on connections of its own).
t.jobs = 8;

interface Slow {
  /** Everything the server sent, and when (ms after connecting) it closed the connection. */
  done: Promise<{ text: string; closedMs: number }>;
  /** Bytes written after the head (trickle). */
  sent(): number;
  /** What the server sent so far. */
  text(): string;
}

/** Connects, writes `head`, then writes `chunk` every `everyMs` (never, if 0) until the server closes. */
function slowClient(a: TestApp, head: string | Buffer, chunk = 'x', everyMs = 0): Slow {
  const { port } = new URL(a.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  const started = performance.now();
  let text = '';
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write(head);
    if (everyMs > 0) {
      timer = setInterval(() => {
        if (!socket.writable) return;
        socket.write(chunk);
        sent += Buffer.byteLength(chunk);
      }, everyMs);
    }
  });
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => {}); // writes after the server closed (EPIPE, ECONNRESET)
  const done = new Promise<{ text: string; closedMs: number }>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, closedMs: performance.now() - started });
    }),
  );
  // A safety net so a failing test still ends: the server should have closed long before.
  const guard = setTimeout(() => socket.destroy(), 30_000);
  done.then(() => clearTimeout(guard));
  return { done, sent: () => sent, text: () => text };
}

/** The status and parsed JSON body of a raw HTTP/1.1 response. */
function parseResponse(text: string): { status: number; headers: string; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const at = text.indexOf('\r\n\r\n');
  const headers = at >= 0 ? text.slice(0, at).toLowerCase() : '';
  let body: any;
  try {
    body = at >= 0 ? JSON.parse(text.slice(at + 4)) : undefined;
  } catch {
    body = undefined;
  }
  return { status, headers, body };
}

function timedOut(t: Test, r: { text: string; closedMs: number }, boundMs: number, what: string) {
  t.ok(r.closedMs < boundMs, `${what}: closed by the server after ${Math.round(r.closedMs)} ms (bound ${boundMs} ms)`);
  t.ok(r.closedMs > LIMIT_S * 1000 - 200, `${what}: not before its limit (${Math.round(r.closedMs)} ms)`);
  const res = parseResponse(r.text);
  t.equal(res.status, 408, `${what}: 408`);
  t.match(res.headers, /connection: close/, `${what}: Connection: close`);
  t.match(res.body, { error: { code: 'request_timeout', retryable: false, context: {} } }, `${what}: request_timeout in the envelope`);
  t.type(res.body?.error?.message, 'string');
}

/** GET /api/v1/models while slow clients hang on: answered, and quickly. */
async function servedMeanwhile(t: Test) {
  const started = performance.now();
  const res = await app.request('GET', '/api/v1/models');
  t.equal(res.status, 200, 'a normal request is answered meanwhile');
  t.ok(performance.now() - started < 5000, 'and quickly');
}

const BOUND_MS = LIMIT_S * 1000 + 1000 + 2500; // the limit, one check interval (tick), margin

const jsonHead = (length: number, key?: string) =>
  `POST /api/v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
  `${key ? `Authorization: Bearer ${key}\r\n` : ''}\r\n{"type":`;

const BOUNDARY = '----slowupload';
const multipartHead = (length: number, key: string) =>
  `POST /api/v1/editor/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
  `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n` +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG`;

t.test('headers trickled a byte at a time: cut at HEADERS_TIMEOUT_SECONDS with 408', async (t) => {
  const slow = slowClient(app, 'GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 'a', 100);
  await servedMeanwhile(t);
  timedOut(t, await slow.done, BOUND_MS, 'slow headers');
  t.ok(slow.sent() >= 5, 'the client kept sending');
});

t.test('a JSON body trickled (no credentials): cut at BODY_TIMEOUT_SECONDS with 408, others served', async (t) => {
  // Many at once, as an attacker would: none outlives the limit.
  const slow = Array.from({ length: 30 }, () => slowClient(app, jsonHead(100_000), ' ', 200));
  await servedMeanwhile(t);
  const results = await Promise.all(slow.map((s) => s.done));
  for (const [i, r] of results.entries()) timedOut(t, r, BOUND_MS + 2000, `slow JSON body #${i}`);
});

t.test('a JSON body trickled by an authenticated client: the same', async (t) => {
  const slow = slowClient(app, jsonHead(100_000, ws.key), ' ', 300);
  timedOut(t, await slow.done, BOUND_MS, 'slow JSON body');
});

t.test('a multipart upload that stops sending: cut at UPLOAD_IDLE_TIMEOUT_SECONDS with 408', async (t) => {
  const slow = slowClient(app, multipartHead(10_000_000, ws.key));
  await servedMeanwhile(t);
  timedOut(t, await slow.done, BOUND_MS, 'stalled upload');
});

t.test('a multipart upload that crawls below UPLOAD_MIN_BYTES_PER_SECOND: cut once its grace is over', async (t) => {
  const slow = Array.from({ length: 10 }, () => slowClient(app, multipartHead(10_000_000, ws.key), 'y'.repeat(20), 100)); // 200 B/s
  await servedMeanwhile(t);
  const results = await Promise.all(slow.map((s) => s.done));
  for (const [i, r] of results.entries()) timedOut(t, r, BOUND_MS + 2000, `crawling upload #${i}`);
});

t.test('an upload at a decent rate is cut by REQUEST_TIMEOUT_SECONDS, the overall cap', async (t) => {
  const slow = slowClient(app, multipartHead(10_000_000, ws.key), 'z'.repeat(400), 100); // 4000 B/s
  const r = await slow.done;
  t.ok(r.closedMs > CAP_S * 1000 - 200, `lived past the body and idle limits (${Math.round(r.closedMs)} ms)`);
  t.ok(r.closedMs < CAP_S * 1000 + 1000 + 3000, `closed by the cap (${Math.round(r.closedMs)} ms)`);
  t.ok(slow.sent() > 2 * 1000 * CAP_S, 'the client kept sending above the minimum rate');
  const res = parseResponse(r.text);
  t.equal(res.status, 408);
  t.match(res.body, { error: { code: 'request_timeout', retryable: false } });
});

t.test('a body that arrives in time is not cut, and an answer sent early still closes a trickle', async (t) => {
  // A JSON body complete at once: answered normally (400 for the bad body, not 408).
  const ok = slowClient(app, `${jsonHead(10, ws.key)}1}`);
  // A content type no parser takes is refused (415) before the body is read; the body trickled
  // after that answer is still cut and the connection closed.
  const early = slowClient(
    app,
    'POST /api/v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nab',
    'c',
    200,
  );
  const r = await early.done;
  t.ok(r.closedMs < BOUND_MS, `a trickle after an early answer is closed (${Math.round(r.closedMs)} ms)`);
  t.equal(parseResponse(r.text).status, 415, 'the early answer stands');
  t.equal(parseResponse(r.text).body?.error?.code, 'unsupported_media_type');
  const res = parseResponse(ok.text());
  t.equal(res.status, 400, 'the complete request was answered');
  t.equal(res.body?.error?.code, 'bad_request');
  const closed = await Promise.race([ok.done.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 100))]);
  t.equal(closed, false, 'and keeps its keep-alive connection past the body limit');
});

t.test('with the default limits, a fast large multipart upload and a JSON request go through', async (t) => {
  const plain = await startTestApp(t);
  const own = await plain.workspace();
  const png = await sharp({
    create: { width: 1600, height: 1600, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .png({ compressionLevel: 0 })
    .toBuffer();
  t.ok(png.length > 5_000_000, `a large file (${png.length} bytes)`);
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="noise.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const res = await plain.request('POST', '/api/v1/editor/media', {
    key: own.key,
    raw: new Uint8Array(Buffer.concat([head, png, tail])),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  });
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.match(res.body.media, { media_type: 'image', size_bytes: png.length, width: 1600, height: 1600 });
  const project = await plain.request('POST', '/api/v1/editor/videos', {
    key: own.key,
    body: { title: 'Timeouts', aspect_ratio: '9:16', fps: 30 },
  });
  t.equal(project.status, 200, project.text.slice(0, 300));
});
