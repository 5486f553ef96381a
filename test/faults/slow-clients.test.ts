// A slow client holding 200 connections (slowloris) against the real service as a child process
// (API_ONLY=1, external PostgreSQL), with short limits: HEADERS_TIMEOUT_SECONDS=3,
// BODY_TIMEOUT_SECONDS=3, UPLOAD_IDLE_TIMEOUT_SECONDS=3. 200 connections trickle a byte every
// 500 ms: 80 never finish their headers, 80 their JSON body, 40 their multipart upload. Meanwhile
// normal clients (catalog reads and paid POST /generations with idempotency keys) keep getting
// 200, compared with a baseline measured the same way before (a loose ratio: the machine is
// shared). Every slow connection is cut by the documented limits (408 when an answer could be
// written), the process's client connections come back to the baseline (its bounded database pools may keep what they grew to), and the paid requests were
// neither lost nor charged twice (balance = ledger sum).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { connect } from '../../src/db/client.ts';
import { createApiKey, SCOPES } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import { freePort } from '../helpers/app.ts';
import { checkResponse } from '../helpers/contract.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { errorLines, sleep, startService, waitFor } from '../helpers/process.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-slow-clients-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const LIMIT_S = 3;

/** A process's TCP connections: those of clients to its port, and all of them (its database pools too). */
function openSockets(pid: number, port: number): { clients: number; all: number } {
  const lines = execFileSync('ss', ['-tanpH'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(`pid=${pid},`) && !l.startsWith('LISTEN'));
  return { clients: lines.filter((l) => l.split(/\s+/)[3] === `127.0.0.1:${port}`).length, all: lines.length };
}

interface Slow {
  kind: string;
  done: Promise<{ kind: string; ms: number; status?: number; sent: number }>;
  stop(): void;
}

/** Sends `head`, then `drip` every 500 ms until the server closes the connection. */
function slowClient(base: string, kind: string, head: string, drip: string): Slow {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  const started = Date.now();
  let received = '';
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<{ kind: string; ms: number; status?: number; sent: number }>((resolve) => {
    const finish = () => {
      clearInterval(timer);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      resolve({ kind, ms: Date.now() - started, status: status ? Number(status) : undefined, sent });
    };
    socket.on('close', finish);
    socket.on('error', () => {});
  });
  socket.setEncoding('utf8');
  socket.on('data', (d) => (received += d));
  socket.on('connect', () => {
    socket.write(head);
    timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) {
        socket.write(drip);
        sent++;
      }
    }, 500);
  });
  return { kind, done, stop: () => socket.destroy() };
}

t.test('200 slow connections: others are served, the slow ones are cut by the limits, sockets come back', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const { db, sql } = connect(databaseUrl, 2);
  t.teardown(() => sql.end());
  const org = await createOrganization(db, { name: 'Slow clients', plan: 'paid', credits: 1_000_000 });
  const { key } = await createApiKey(db, { orgId: org.id, scopes: [...SCOPES] });

  const port = await freePort();
  const api = startService(t, 'api', {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    API_ONLY: '1',
    LOG_LEVEL: 'warn',
    MEDIA_SIGNING_SECRET: 'slow-clients',
    HEADERS_TIMEOUT_SECONDS: String(LIMIT_S),
    BODY_TIMEOUT_SECONDS: String(LIMIT_S),
    UPLOAD_IDLE_TIMEOUT_SECONDS: String(LIMIT_S),
    RATE_LIMIT_GENERATIONS: '100000',
  });
  await api.ready;
  const base = api.base();
  const auth = { authorization: `Bearer ${key}` };
  const catalog = (await (await fetch(`${base}/api/v1/models`)).json()) as { video_ads: { slug: string }[] };
  const body = JSON.stringify({ type: 'video_ad', template_slug: catalog.video_ads[0].slug, prompt: 'Slow clients' });
  const acknowledged = new Map<string, string>();
  const unexpected: string[] = [];
  let n = 0;

  /** 30 normal requests, 3 at a time (reads and paid requests); their latencies. */
  async function normalLoad(label: string): Promise<number[]> {
    const latencies: number[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        for (let i = 0; i < 10; i++) {
          const paid = i % 2 === 1;
          const idem = `${label}-${n++}`;
          const p = paid ? '/api/v1/generations' : '/api/v1/models';
          const started = performance.now();
          const res = await fetch(
            `${base}${p}`,
            paid ? { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': idem }, body } : {},
          );
          const parsed = await res.json();
          latencies.push(performance.now() - started);
          const check = checkResponse(
            paid ? 'POST' : 'GET',
            `${base}${p}`,
            res.status,
            res.headers.get('content-type'),
            parsed,
            Object.fromEntries(res.headers),
          );
          for (const problem of check.problems) t.fail(`contract: ${problem}`);
          if (res.status !== 200) unexpected.push(`${label} ${p}: ${res.status} ${JSON.stringify(parsed).slice(0, 200)}`);
          else if (paid) acknowledged.set(idem, (parsed as { generations: { id: string }[] }).generations[0].id);
        }
      }),
    );
    return latencies.sort((x, y) => x - y);
  }
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)];

  await normalLoad('warm-up');
  await sleep(300);
  const socketsBefore = openSockets(api.pid, port);
  const baseline = await normalLoad('baseline');

  // 200 slow connections.
  const BOUNDARY = '----slow';
  const slow: Slow[] = [
    ...Array.from({ length: 80 }, () => slowClient(base, 'headers', 'GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 'a')),
    ...Array.from({ length: 80 }, () =>
      slowClient(
        base,
        'json body',
        `POST /api/v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"type":`,
        ' ',
      ),
    ),
    ...Array.from({ length: 40 }, () =>
      slowClient(
        base,
        'upload',
        `POST /api/v1/editor/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG`,
        '\0',
      ),
    ),
  ];
  t.teardown(() =>
    slow.forEach((s) => {
      s.stop();
    }),
  );
  const slowStarted = Date.now();
  await sleep(500);
  const socketsDuring = openSockets(api.pid, port);
  const during = await normalLoad('during');
  const duringMs = Date.now() - slowStarted;
  const results = await Promise.all(slow.map((s) => s.done));
  const cutAt = Date.now() - slowStarted;

  const ratio = median(during) / median(baseline);
  t.comment(
    `baseline median ${median(baseline).toFixed(1)} ms, slowest ${baseline.at(-1)!.toFixed(1)} ms; with 200 slow connections median ${median(during).toFixed(1)} ms, slowest ${during.at(-1)!.toFixed(1)} ms; ratio ${ratio.toFixed(2)} (normal load done ${duringMs} ms after the slow clients came)`,
  );
  t.same(unexpected, [], 'every normal request answered 200 during the slow connections');
  t.ok(duringMs < LIMIT_S * 1000, `the normal load ran while the slow connections were held (${duringMs} ms)`);
  t.ok(
    socketsDuring.clients >= socketsBefore.clients + 150,
    `the slow connections were open (${socketsDuring.clients} client connections, ${socketsBefore.clients} before)`,
  );
  t.ok(
    ratio < 20 && during.at(-1)! < 5000,
    `normal requests were not held up (median ratio ${ratio.toFixed(2)} < 20, slowest ${during.at(-1)!.toFixed(0)} ms < 5 s)`,
  );

  // Every slow connection was cut by the limits.
  const bound = (LIMIT_S + 1 + 4) * 1000; // the limit, one check interval, a margin for a busy machine
  const slowest = Math.max(...results.map((r) => r.ms));
  t.comment(`all 200 slow connections cut ${cutAt} ms after they came; slowest ${slowest} ms`);
  const byKind = (kind: string) => results.filter((r) => r.kind === kind);
  for (const kind of ['headers', 'json body', 'upload']) {
    const rs = byKind(kind);
    t.ok(
      rs.every((r) => r.ms >= (LIMIT_S - 0.5) * 1000 && r.ms < bound),
      `${kind}: every one cut between ${LIMIT_S} s and ${bound / 1000} s (${Math.min(...rs.map((r) => r.ms))}–${Math.max(...rs.map((r) => r.ms))} ms)`,
    );
    t.ok(
      rs.every((r) => r.sent >= 4),
      `${kind}: every one kept sending until cut`,
    );
    const answered = rs.filter((r) => r.status !== undefined);
    t.same(
      [...new Set(answered.map((r) => r.status))].filter((s) => s !== 408),
      [],
      `${kind}: answered 408 when answered at all (${answered.length} of ${rs.length})`,
    );
  }

  // The process's sockets come back to normal.
  // Client connections back to the baseline; the database pools (bounded: 20 + 4 + pg-boss's) may
  // have grown under the auth lookups of the slow uploads, and keep their connections.
  const socketsAfter = await waitFor(
    'the client connections to be released',
    () => {
      const s = openSockets(api.pid, port);
      return s.clients <= socketsBefore.clients + 4 ? s : undefined;
    },
    10_000,
  ).catch(() => openSockets(api.pid, port));
  // (+4: the normal clients' own keep-alive connections, 3 at a time and the catalog read)
  t.ok(
    socketsAfter.clients <= socketsBefore.clients + 4,
    `client connections back to normal: ${socketsAfter.clients} (${socketsBefore.clients} before, ${socketsDuring.clients} during)`,
  );
  t.ok(
    socketsAfter.all <= socketsBefore.all + 30,
    `all sockets bounded: ${socketsAfter.all} (${socketsBefore.all} before, ${socketsDuring.all} during)`,
  );
  t.comment(`recovery: client connections back to ${socketsAfter.clients} ${Date.now() - slowStarted} ms after the slow clients came`);
  const after = await normalLoad('after');
  t.same(unexpected, [], 'served normally afterwards');
  t.comment(`afterwards median ${median(after).toFixed(1)} ms`);

  // Nothing lost, nothing charged twice.
  const rows = await sql<{ id: string; credits: number }[]>`select id, credits from generations where org_id = ${org.id}`;
  const ids = new Set(rows.map((r) => r.id));
  t.same(
    [...acknowledged.values()].filter((id) => !ids.has(id)),
    [],
    `no acknowledged generation lost (${acknowledged.size})`,
  );
  t.equal(rows.length, acknowledged.size, 'one generation per idempotency key');
  const [{ credits }] = await sql<{ credits: number }[]>`select credits from organizations where id = ${org.id}`;
  const [{ sum }] = await sql<{ sum: number }[]>`select coalesce(sum(delta), 0)::int as sum from credit_ledger where org_id = ${org.id}`;
  t.equal(credits, sum, 'balance = ledger sum');
  t.equal(credits, 1_000_000 - rows.reduce((a, r) => a + r.credits, 0), 'each generation charged once');

  t.same(
    errorLines(api.output()).map((l) => l.msg),
    [],
    'no error line',
  );
  api.child.kill('SIGTERM');
  t.equal((await api.exited).code, 0, 'the service stops with exit 0');
});
