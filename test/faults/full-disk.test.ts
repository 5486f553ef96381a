// A full disk for the media folder, with the real service as a child process (API and workers in
// one, external PostgreSQL). DATA_DIR/media is a 2 MB tmpfs (mount -t tmpfs, we run as root here;
// the test is skipped where mounting is not allowed), filled to the last byte by a filler file:
// the job and upload temporary files (DATA_DIR/tmp) stay on the ordinary disk, so the fault is
// exactly at the storage interface's put. While it is full, an upload answers 503
// service_unavailable with Retry-After (never 500) and stores nothing; a generation whose output
// cannot be stored is retried (GENERATION_RETRY_LIMIT=1: two attempts), then fails retryable and
// is refunded once. After the filler is removed, uploads and generations succeed again (the time
// to the first 200 is printed). No partial object is left, every media row has its object, and
// the balance moved exactly as the ledger.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { connect } from '../../src/db/client.ts';
import { createApiKey, SCOPES } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import { freePort } from '../helpers/app.ts';
import { checkResponse } from '../helpers/contract.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { errorLines, sleep, startService, waitFor } from '../helpers/process.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-full-disk-'));
const mediaDir = path.join(dataDir, 'media');
fs.mkdirSync(mediaDir);
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0755', 'tmpfs', mediaDir], { stdio: 'pipe' });
  mounted = true;
} catch (err) {
  t.comment(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
}
t.teardown(() => {
  if (mounted) execFileSync('umount', ['-l', mediaDir]);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Fills the media folder's filesystem to the last byte. */
function fill(file: string): number {
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        written += fs.writeSync(fd, chunk, 0, size);
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOSPC') throw err;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return written;
}

/** Every file under the media folder, relative, except the filler. */
function storedFiles(): string[] {
  return (fs.readdirSync(mediaDir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile() && e.name !== 'filler')
    .map((e) => path.relative(mediaDir, path.join(e.parentPath, e.name)));
}

t.test(
  'a full media disk: 503 for uploads, a generation retried then refunded once, success once space is back',
  { skip: !mounted && 'a tmpfs cannot be mounted here' },
  async (t) => {
    const databaseUrl = await createTestDatabase(t);
    const { db, sql } = connect(databaseUrl, 2);
    t.teardown(() => sql.end());
    const org = await createOrganization(db, { name: 'Full disk', plan: 'paid', credits: 10_000 });
    const { key } = await createApiKey(db, { orgId: org.id, scopes: [...SCOPES] });

    const port = await freePort();
    const api = startService(t, 'api', {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      MEDIA_SIGNING_SECRET: 'full-disk',
      GENERATION_RETRY_LIMIT: '1',
      IMAGE_CONCURRENCY: '2',
    });
    await api.ready;
    const base = api.base();
    const auth = { authorization: `Bearer ${key}` };
    const statuses: number[] = [];
    const call = async (
      method: string,
      p: string,
      opts: { headers?: Record<string, string>; body?: string | Uint8Array; contentType?: string } = {},
    ) => {
      const res = await fetch(`${base}${p}`, {
        method,
        headers: { ...auth, ...opts.headers, ...(opts.contentType ? { 'content-type': opts.contentType } : {}) },
        body: opts.body,
      });
      const text = await res.text();
      const parsed = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
      const check = checkResponse(
        method,
        `${base}${p}`,
        res.status,
        res.headers.get('content-type'),
        parsed,
        Object.fromEntries(res.headers),
      );
      for (const problem of check.problems) t.fail(`contract: ${problem}`);
      statuses.push(res.status);
      return { status: res.status, body: parsed as any, headers: res.headers };
    };
    const png = await sharp({
      create: { width: 300, height: 300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
    })
      .png()
      .toBuffer();
    const BOUNDARY = '----fulldisk';
    const form = new Uint8Array(
      Buffer.concat([
        Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="noise.png"\r\nContent-Type: image/png\r\n\r\n`,
        ),
        png,
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]),
    );
    const upload = () => call('POST', '/api/v1/editor/media', { body: form, contentType: `multipart/form-data; boundary=${BOUNDARY}` });
    const catalog = (await (await fetch(`${base}/api/v1/models`)).json()) as { static_ads: { slug: string }[] };
    const generate = (idem: string) =>
      call('POST', '/api/v1/generations', {
        headers: { 'idempotency-key': idem },
        contentType: 'application/json',
        body: JSON.stringify({
          type: 'static_ad',
          template_slug: catalog.static_ads[0].slug,
          prompt: 'Full disk check',
          aspect_ratio: '1:1',
        }),
      });
    const generation = async (id: string) => (await call('GET', `/api/v1/generations/${id}`)).body;
    const settled = (id: string) =>
      waitFor(
        `generation ${id} to settle`,
        async () => {
          const g = await generation(id);
          return g.status === 'completed' || g.status === 'error' ? g : undefined;
        },
        40_000,
        200,
      ).catch(async (err) => {
        t.comment(`generation ${id}: ${JSON.stringify(await generation(id))}\nservice output:\n${api.output().slice(-3000)}`);
        throw err;
      });

    // Before: an upload is stored.
    const first = await upload();
    t.equal(first.status, 200, 'an upload before the disk is full');

    // The disk fills up.
    const filler = fill(path.join(mediaDir, 'filler'));
    t.comment(`the media tmpfs filled with a ${filler}-byte filler`);
    const full = await upload();
    t.equal(full.status, 503, 'an upload on a full disk: 503');
    t.match(full.body, { error: { code: 'service_unavailable', retryable: true } });
    t.ok(Number(full.headers.get('retry-after')) > 0, 'with Retry-After');
    const replay = await upload();
    t.equal(replay.status, 503, 'again: 503 (nothing half-stored makes the second one different)');

    const queued = await generate('full-1');
    t.equal(queued.status, 200, 'a generation is accepted (charged) while the disk is full');
    const charged = queued.body.credits_deducted as number;
    const failedGen = await settled(queued.body.generations[0].id);
    t.equal(failedGen.status, 'error', 'its output cannot be stored: the generation fails');
    t.match(failedGen.error, { retryable: true }, 'with a retryable error');
    const [{ attempts }] = await sql<{ attempts: number }[]>`select attempts from generations where id = ${failedGen.id}`;
    t.equal(attempts, 2, 'after a retry (GENERATION_RETRY_LIMIT=1: two attempts)');

    // Space is freed: the next requests succeed.
    fs.rmSync(path.join(mediaDir, 'filler'));
    const freedAt = Date.now();
    const after = await upload();
    const recoveryMs = Date.now() - freedAt;
    t.equal(after.status, 200, 'an upload once space is back: 200');
    t.comment(`recovery: first upload 200 ${recoveryMs} ms after space was freed`);
    const stored = await fetch(after.body.media.url);
    t.equal(stored.status, 200, 'the stored upload is served');
    t.equal(Buffer.from(await stored.arrayBuffer()).length, png.length, 'whole');
    const retried = await generate('full-2');
    t.equal(retried.status, 200);
    const okGen = await settled(retried.body.generations[0].id);
    t.equal(okGen.status, 'completed', 'a generation once space is back completes');
    t.equal((await fetch(okGen.url)).status, 200, 'its output is served');

    // Nothing partial, nothing orphaned, nothing charged twice.
    await sleep(200);
    const files = storedFiles();
    t.same(
      files.filter((f) => f.endsWith('.tmp')),
      [],
      'no partial object left in the media folder',
    );
    const rows = await sql<
      { storage_key: string; size_bytes: number }[]
    >`select storage_key, size_bytes from media where org_id = ${org.id}`;
    for (const r of rows)
      t.equal(
        fs.statSync(path.join(mediaDir, r.storage_key), { throwIfNoEntry: false })?.size,
        Number(r.size_bytes),
        `media row ${r.storage_key}: its object is whole`,
      );
    t.same(files.sort(), rows.map((r) => r.storage_key).sort(), 'every stored object has its row (the refused uploads stored nothing)');
    t.equal(rows.length, 3, 'two uploads and one generation output');
    const [{ credits }] = await sql<{ credits: number }[]>`select credits from organizations where id = ${org.id}`;
    const ledger = await sql<
      { delta: number; reason: string; reference: string | null }[]
    >`select delta, reason, reference from credit_ledger where org_id = ${org.id} order by id`;
    t.equal(
      credits,
      ledger.reduce((a, l) => a + l.delta, 0),
      'balance = ledger sum',
    );
    t.equal(credits, 10_000 - charged, 'the failed generation was refunded, the completed one charged once');
    const rowsOf = (reason: string) => ledger.filter((l) => l.reason === reason).length;
    t.same(
      [rowsOf('generation_charge'), rowsOf('generation_refund')],
      [2, 1],
      `one charge per generation, one refund (${JSON.stringify(ledger.map((l) => [l.delta, l.reason]))})`,
    );

    t.same(
      statuses.filter((s) => s >= 500 && s !== 503),
      [],
      'no 5xx other than 503',
    );
    t.notMatch(api.output(), /"msg":"unhandled error"|Uncaught|Unhandled rejection/, 'no unhandled error logged');
    t.same(
      errorLines(api.output())
        .filter((l) => l.msg !== 'media storage unavailable' && !/attempt|failed/.test(String(l.msg)))
        .map((l) => l.msg),
      [],
      'no error line other than the storage outage and the failed job',
    );
    api.child.kill('SIGTERM');
    t.equal((await api.exited).code, 0, 'the service stops with exit 0');
  },
);
