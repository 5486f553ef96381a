// The guarded outbound client against real local servers: a total deadline a dripping server
// cannot stretch (the socket is destroyed at it), the per-call deadline, the idle timeout, the
// caller's AbortSignal, the size cap (the fetcher's default and a caller's own), and one address
// policy — the request-time precheck refuses every literal address the connection-time check
// refuses (whatever the spelling), and the lookup connections use refuses what DNS answers.
import http from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import t, { type Test } from 'tap';
import { addressRefusal } from '../../src/net/address-policy.ts';
import { createGuardedFetcher, FetchRefused } from '../../src/net/guarded-fetch.ts';

/** A server on 127.0.0.1 that sends its headers, then one byte every `everyMs`, forever; it records when each connection opened and closed. */
async function dripServer(t: Test, everyMs = 500) {
  const conns: { opened: number; closed?: number }[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    if (req.url === '/ok') return res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    if (req.url === '/big') return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(4096, 1));
    if (req.url === '/big-declared') return res.writeHead(200, { 'content-length': 4096 }).end(Buffer.alloc(4096, 1));
    if (req.url === '/silent') return res.writeHead(200, { 'content-type': 'text/plain' }).flushHeaders();
    if (req.url === '/redirect') return res.writeHead(302, { location: '/drip' }).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const timer = setInterval(() => res.write('x'), everyMs);
    res.on('close', () => clearInterval(timer));
  });
  server.on('connection', (socket) => {
    const c: { opened: number; closed?: number } = { opened: Date.now() };
    conns.push(c);
    sockets.add(socket);
    socket.on('close', () => {
      c.closed = Date.now();
      sockets.delete(socket);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  const port = (server.address() as { port: number }).port;
  return { base: `http://127.0.0.1:${port}`, port, conns };
}

async function refusal(p: Promise<unknown>): Promise<FetchRefused> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FetchRefused) return err;
    throw err;
  }
  throw new Error('the fetch succeeded');
}

// The cases at once: each has its own server (and fetcher), and mostly waits out a deadline.
t.jobs = 7;

const waitUntil = async (ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return ok();
};

t.test('a dripping server cannot stretch a fetch past its deadline', async (t) => {
  const drip = await dripServer(t);
  const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'], timeoutMs: 1500 });
  // The redirect and the per-call deadline below run meanwhile, on a server of their own.
  const other = await dripServer(t);
  const viaRedirect = Date.now();
  const redirected = refusal(fetcher.fetch(`${other.base}/redirect`)).then((e) => ({ e, took: Date.now() - viaRedirect }));
  const short = Date.now();
  const perCall = refusal(fetcher.fetch(`${other.base}/drip`, { timeoutMs: 600 })).then((e) => ({ e, took: Date.now() - short }));
  const started = Date.now();
  const err = await refusal(fetcher.fetch(`${drip.base}/drip`));
  const took = Date.now() - started;
  t.equal(err.reason, 'timeout');
  t.equal(err.retryable, true);
  t.match(err.message, /did not finish within 1500 ms/);
  t.ok(took >= 1450 && took < 3000, `gave up at the deadline (${took} ms)`);
  t.ok(await waitUntil(() => drip.conns.every((c) => c.closed), 1000), 'the server saw its connection closed');
  const c = drip.conns[0];
  t.ok(c.closed! - started < 2500, `closed ${c.closed! - started} ms after the start`);

  // The deadline covers every hop: a redirect to the drip is bounded the same way.
  const r = await redirected;
  t.equal(r.e.reason, 'timeout');
  t.ok(r.took < 3000, 'redirect + drip bounded by one deadline');

  // Per call: a shorter deadline wins over the fetcher's.
  const p = await perCall;
  t.equal(p.e.reason, 'timeout');
  t.ok(p.took < 1400, `per-call deadline (${p.took} ms)`);

  // A healthy answer is unaffected and leaves no timer behind (the test would hang otherwise).
  const ok = await fetcher.fetch(`${drip.base}/ok`);
  t.equal(ok.body.toString(), 'hello');
});

t.test('the idle timeout still ends a silent server before the deadline', async (t) => {
  const drip = await dripServer(t);
  const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'], timeoutMs: 10_000, idleTimeoutMs: 400 });
  const started = Date.now();
  const err = await refusal(fetcher.fetch(`${drip.base}/silent`));
  t.equal(err.reason, 'timeout');
  t.match(err.message, /sent nothing for 400 ms/);
  t.ok(Date.now() - started < 2000, `idle timeout (${Date.now() - started} ms)`);
});

t.test('aborting the signal destroys the request at once', async (t) => {
  const drip = await dripServer(t);
  const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'], timeoutMs: 20_000 });
  const ac = new AbortController();
  const pending = refusal(fetcher.fetch(`${drip.base}/drip`, { signal: ac.signal }));
  t.ok(await waitUntil(() => drip.conns.length > 0, 2000), 'connected');
  await new Promise((r) => setTimeout(r, 700)); // mid-body
  const abortedAt = Date.now();
  ac.abort();
  const err = await pending;
  t.equal(err.reason, 'aborted');
  t.ok(Date.now() - abortedAt < 200, 'rejected at once');
  t.ok(await waitUntil(() => drip.conns.every((c) => c.closed), 1000), 'the server saw its connection closed');
  t.ok(drip.conns[0].closed! - abortedAt < 1000, `closed ${drip.conns[0].closed! - abortedAt} ms after the abort`);

  // Already aborted: nothing is even connected.
  const before = drip.conns.length;
  t.equal((await refusal(fetcher.fetch(`${drip.base}/drip`, { signal: AbortSignal.abort() }))).reason, 'aborted');
  t.equal(drip.conns.length, before, 'no connection made');
});

t.test('the size cap: the fetcher default, a caller’s own, declared or streamed', async (t) => {
  const drip = await dripServer(t);
  const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'], maxBytes: 1024 });
  t.equal((await refusal(fetcher.fetch(`${drip.base}/big`))).reason, 'too_large', 'streamed body over the default cap');
  const declared = await refusal(fetcher.fetch(`${drip.base}/big-declared`));
  t.equal(declared.reason, 'too_large');
  t.match(declared.message, /larger than 1024 bytes/);
  t.equal((await fetcher.fetch(`${drip.base}/big`, { maxBytes: 8192 })).body.length, 4096, 'a caller’s own cap');
  t.equal((await refusal(fetcher.fetch(`${drip.base}/big`, { maxBytes: 100 }))).reason, 'too_large');
});

// Every range request-filtering-agent refuses at connect time, and the IPv6 it calls unicast
// although IANA never hands it out (outside 2000::/3), in the spellings the URL parser accepts.
const REFUSED_URLS = [
  'http://127.0.0.1/x',
  'http://127.1/x',
  'http://0x7f.1/x',
  'http://0x7f000001/x',
  'http://2130706433/x',
  'http://0177.0.0.1/x',
  'http://127.0.0.1./x',
  'http://0.0.0.0/x',
  'http://0/x',
  'http://0.1.2.3/x',
  'http://10.0.0.1/x',
  'http://012.1/x',
  'http://172.16.0.1/x',
  'http://172.31.255.255/x',
  'http://192.168.1.1/x',
  'http://3232235777/x',
  'http://169.254.169.254/latest/meta-data',
  'http://0xa9fea9fe/x',
  'http://100.64.0.1/x',
  'http://100.127.255.254/x',
  'http://1681915905/x',
  'http://198.18.0.1/x',
  'http://198.19.255.1/x',
  'http://192.0.0.8/x',
  'http://192.0.2.1/x',
  'http://198.51.100.7/x',
  'http://203.0.113.9/x',
  'http://192.88.99.1/x',
  'http://224.0.0.1/x',
  'http://239.255.255.250/x',
  'http://240.0.0.1/x',
  'http://255.255.255.255/x',
  'http://[::1]/x',
  'http://[::]/x',
  'http://[0:0:0:0:0:0:0:1]/x',
  'http://[fc00::1]/x',
  'http://[fd12:3456::1]/x',
  'http://[fe80::1]/x',
  'http://[febf::1]/x',
  'http://[fec0::1]/x',
  'http://[ff02::1]/x',
  'http://[64:ff9b::a00:1]/x',
  'http://[64:ff9b::808:808]/x',
  'http://[64:ff9b:1::1]/x',
  'http://[::ffff:127.0.0.1]/x',
  'http://[::ffff:10.0.0.1]/x',
  'http://[::ffff:169.254.169.254]/x',
  'http://[::ffff:7f00:1]/x',
  'http://[::127.0.0.1]/x',
  'http://[::ffff:0:127.0.0.1]/x',
  'http://[2001:db8::1]/x',
  'http://[2002:a00:1::1]/x',
  'http://[2002:7f00:1::]/x',
  'http://[2001::1]/x',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x',
  'http://[100::1]/x',
  'http://[4000::1]/x',
  'https://localhost/x',
  'https://a.localhost/x',
  'https://printer.local/x',
  'https://metadata.google.internal/x',
];
const ALLOWED_URLS = [
  'https://8.8.8.8/x',
  'https://1.1.1.1/x',
  'https://[2606:4700:4700::1111]/x',
  'https://example.com/a.png',
  'https://100.63.255.255/x',
  'https://100.128.0.1/x',
  'https://198.20.0.1/x',
  'https://172.32.0.1/x',
];

t.test('precheck refuses every refused range, in every spelling', async (t) => {
  const fetcher = createGuardedFetcher();
  for (const url of REFUSED_URLS) t.match(fetcher.precheck(url), /private/, `${url} (${new URL(url).hostname})`);
  for (const url of ALLOWED_URLS) t.equal(fetcher.precheck(url), undefined, url);
  t.equal(fetcher.precheck('http://8.8.8.8/x', { httpsOnly: true }), 'must be an https:// URL');
  t.equal(fetcher.precheck('ftp://8.8.8.8/x'), 'must be an http(s) URL');
  t.equal(fetcher.precheck('https://u:p@8.8.8.8/x'), 'must not contain credentials');
  // OUTBOUND_ALLOW_IPS exempts exactly the listed addresses.
  const allowing = createGuardedFetcher({ allowIps: ['127.0.0.1', '100.64.0.1'] });
  t.equal(allowing.precheck('http://127.0.0.1:8080/x'), undefined);
  t.equal(allowing.precheck('http://0x7f.1/x'), undefined, 'the normalised spelling of an allowed IP');
  t.equal(allowing.precheck('http://100.64.0.1/x'), undefined);
  t.match(allowing.precheck('http://127.0.0.2/x'), /loopback/);
  t.match(allowing.precheck('http://100.64.0.2/x'), /carrier-grade NAT/);
  // The fetcher refuses them itself (no connection), with reason 'address'.
  for (const url of ['http://100.64.0.1/x', 'http://[64:ff9b::a00:1]/x', 'http://198.18.0.1/x']) {
    t.equal((await refusal(fetcher.fetch(url))).reason, 'address', url);
  }
});

t.test('the policy function over a table of addresses', async (t) => {
  const refused: [string, RegExp][] = [
    ['100.64.0.1', /carrier-grade NAT/],
    ['198.18.0.1', /reserved/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /broadcast/],
    ['127.0.0.1', /loopback/],
    ['10.1.2.3', /private/],
    ['169.254.1.1', /link-local/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fc00::1', /unique local/],
    ['fe80::1', /link-local/],
    ['64:ff9b::a00:1', /NAT64/],
    ['::ffff:10.0.0.1', /IPv4-mapped/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['2001:db8::1', /reserved/],
    ['2002:a00:1::', /6to4/],
    ['2001::1', /Teredo/],
    ['::7f00:1', /reserved/],
    ['4000::1', /reserved/],
    ['fe80::1%eth0', /link-local/],
    ['not-an-ip', /not an IP/],
  ];
  for (const [ip, why] of refused) t.match(addressRefusal(ip), why, ip);
  for (const ip of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '2a00:1450:4001::200e']) t.equal(addressRefusal(ip), undefined, ip);
  t.equal(addressRefusal('127.0.0.1', ['127.0.0.1']), undefined, 'allow list');
  t.equal(addressRefusal('0:0:0:0:0:0:0:1', ['::1']), undefined, 'allow list by canonical form');
});

t.test('connection time: every address DNS answers passes the same policy', async (t) => {
  const drip = await dripServer(t);
  // A resolver we control (no DNS here): names resolve to the address the test chose.
  const answers = new Map<string, string>();
  const lookup: LookupFunction = (hostname, options, cb) => {
    const address = answers.get(hostname);
    if (!address) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
    const family = address.includes(':') ? 6 : 4;
    if (options.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const strict = createGuardedFetcher({ lookup, timeoutMs: 3000 });
  const allowing = createGuardedFetcher({ lookup, timeoutMs: 3000, allowIps: ['127.0.0.1'] });

  answers.set('cdn.example.test', '127.0.0.1');
  const ok = await allowing.fetch(`http://cdn.example.test:${drip.port}/ok`);
  t.equal(ok.body.toString(), 'hello', 'the fetcher connects with this resolver (allowed address)');
  const before = drip.conns.length;
  const loop = await refusal(strict.fetch(`http://cdn.example.test:${drip.port}/ok`));
  t.equal(loop.reason, 'address', 'a public-looking name resolving to loopback is refused at connect time');
  t.equal(drip.conns.length, before, 'no connection made');

  for (const ip of ['100.64.0.1', '198.18.0.1', '10.0.0.1', '169.254.169.254', '64:ff9b::a00:1', '::ffff:7f00:1', '::7f00:1', 'fe80::1']) {
    answers.set('cdn.example.test', ip);
    const err = await refusal(strict.fetch(`http://cdn.example.test:${drip.port}/ok`));
    t.equal(err.reason, 'address', `resolves to ${ip}: ${err.message}`);
  }
  t.equal(drip.conns.length, before, 'none of them connected');
});
