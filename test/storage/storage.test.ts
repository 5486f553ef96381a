// The storage interface, the same cases against both backends: local files (DATA_DIR/media) and
// S3 (a real S3 API server, s3rver, on 127.0.0.1). Put/read/range/stream/size/stat/list/delete,
// a 12 MB streamed upload (multipart on S3), missing objects (code ENOENT everywhere), key
// checks, S3_PREFIX, and the start-up check of a missing bucket.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createStorage, isNotFound, StorageUnavailable, type Storage } from '../../src/storage/index.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';

const secret = Buffer.from('storage-test-secret');

async function backend(
  t: Test,
  kind: 'local' | 's3',
  extra: Record<string, string> = {},
): Promise<{ storage: Storage; s3?: TestS3; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-test-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const s3 = kind === 's3' ? await startS3(t) : undefined;
  const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://127.0.0.1:9', ...s3?.env, ...extra });
  const storage = await createStorage(config, secret);
  t.teardown(() => storage.close());
  await storage.check();
  return { storage, s3, dataDir };
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function keys(storage: Storage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of storage.list(prefix)) out.push(o.key);
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const kind of ['local', 's3'] as const) {
  t.test(`${kind}: put, read, range, size, stat, exists, list, delete`, async (t) => {
    const { storage, s3, dataDir } = await backend(t, kind);
    t.equal(storage.kind, kind);
    const png = randomBytes(3000);
    const stored = await storage.put('editor-media/org-1/a.png', png, 'image/png');
    t.same(stored, { key: 'editor-media/org-1/a.png', bytes: 3000, contentType: 'image/png' });
    t.same(await storage.readBuffer('editor-media/org-1/a.png'), png, 'readBuffer');
    t.same(await collect(storage.read('editor-media/org-1/a.png')), png, 'read (stream)');
    t.same(await collect(storage.read('editor-media/org-1/a.png', { start: 100, end: 199 })), png.subarray(100, 200), 'read a byte range');
    t.equal(await storage.size('editor-media/org-1/a.png'), 3000, 'size');
    t.equal(await storage.exists('editor-media/org-1/a.png'), true, 'exists');
    const info = await storage.stat('editor-media/org-1/a.png');
    t.match(info, { bytes: 3000, contentType: 'image/png', etag: /^"[^"]+"$/ });
    t.ok(info!.lastModified instanceof Date && Math.abs(info!.lastModified.getTime() - Date.now()) < 120_000, 'lastModified is now');

    // From a file and from a stream.
    const src = path.join(dataDir, 'src.wav');
    const wav = randomBytes(70_000);
    fs.writeFileSync(src, wav);
    t.equal((await storage.put('editor-media/org-1/b.wav', { file: src }, 'audio/wav')).bytes, 70_000, 'put from a file');
    t.equal(
      (await storage.put('generations/org-1/c.mp4', Readable.from([wav.subarray(0, 1000), wav.subarray(1000)]), 'video/mp4')).bytes,
      70_000,
      'put from a stream',
    );
    const copy = path.join(dataDir, 'copy.mp4');
    await storage.copyToFile('generations/org-1/c.mp4', copy);
    t.same(fs.readFileSync(copy), wav, 'copyToFile');
    t.equal((await storage.stat('generations/org-1/c.mp4'))!.contentType, 'video/mp4');

    // Overwrite: steps that store are safe to repeat.
    await storage.put('editor-media/org-1/a.png', png.subarray(0, 10), 'image/png');
    t.equal(await storage.size('editor-media/org-1/a.png'), 10, 'a second put replaces the object');

    t.same(
      await keys(storage, 'editor-media/org-1/'),
      ['editor-media/org-1/a.png', 'editor-media/org-1/b.wav'],
      'list by prefix, in key order',
    );
    t.same(await keys(storage, 'editor-media/org-1/b'), ['editor-media/org-1/b.wav'], 'a prefix that ends inside a name');
    t.same(await keys(storage, 'editor-media/org-2/'), [], 'an empty prefix lists nothing');
    t.same(await keys(storage, 'gen'), ['generations/org-1/c.mp4']);

    await storage.delete('editor-media/org-1/a.png');
    t.equal(await storage.exists('editor-media/org-1/a.png'), false, 'deleted');
    await storage.delete('editor-media/org-1/a.png');
    t.pass('deleting a missing object is not an error');
    if (s3)
      t.same(
        (await s3.list()).map((o) => o.key).sort(),
        ['editor-media/org-1/b.wav', 'generations/org-1/c.mp4'],
        'the bucket holds exactly the objects',
      );
    else
      t.notOk(
        fs.readdirSync(path.join(dataDir, 'media', 'editor-media', 'org-1')).some((n) => n.endsWith('.tmp')),
        'no temporary files',
      );
  });

  t.test(`${kind}: a 12 MB upload streamed from a stream and from a file`, async (t) => {
    const { storage, s3, dataDir } = await backend(t, kind);
    const big = randomBytes(12 * 1024 * 1024);
    const before = s3?.requests.length ?? 0;
    // In uneven chunks, as an HTTP upload arrives.
    const chunks = (function* () {
      for (let i = 0; i < big.length; i += 700_001) yield big.subarray(i, Math.min(big.length, i + 700_001));
    })();
    const stored = await storage.put('editor-media/org-1/big.mp4', Readable.from(chunks), 'video/mp4');
    t.equal(stored.bytes, big.length);
    t.equal(await storage.size('editor-media/org-1/big.mp4'), big.length);
    const copy = path.join(dataDir, 'big-copy.mp4');
    await storage.copyToFile('editor-media/org-1/big.mp4', copy);
    t.equal(sha(fs.readFileSync(copy)), sha(big), 'copied back byte-identical');
    t.same(
      await collect(storage.read('editor-media/org-1/big.mp4', { start: 9_000_000, end: 9_000_999 })),
      big.subarray(9_000_000, 9_001_000),
      'a range past the first part',
    );
    if (s3) {
      const reqs = s3.requests.slice(before);
      const parts = reqs.filter((r) => r.startsWith('PUT ') && /[?&]partNumber=\d+/.test(r) && /[?&]uploadId=/.test(r));
      t.ok(parts.length >= 2, `a multipart upload of ${parts.length} parts (8 MiB each)`);
      t.ok(
        reqs.some((r) => r.startsWith('POST ') && /[?&]uploads\b/.test(r)),
        'CreateMultipartUpload',
      );
      t.ok(
        reqs.some((r) => r.startsWith('POST ') && /[?&]uploadId=/.test(r)),
        'CompleteMultipartUpload',
      );
    }
    const file = path.join(dataDir, 'big-src.mp4');
    fs.writeFileSync(file, big);
    t.equal((await storage.put('generations/org-1/big.mp4', { file }, 'video/mp4')).bytes, big.length, 'from a file');
    t.equal(sha(await storage.readBuffer('generations/org-1/big.mp4')), sha(big));
  });

  t.test(`${kind}: a missing object is the same not-found everywhere`, async (t) => {
    const { storage, dataDir } = await backend(t, kind);
    const key = 'editor-media/org-1/missing.png';
    t.equal(await storage.exists(key), false);
    t.equal(await storage.stat(key), undefined);
    const calls: [string, () => Promise<unknown>][] = [
      ['readBuffer', () => storage.readBuffer(key)],
      ['size', () => storage.size(key)],
      ['copyToFile', () => storage.copyToFile(key, path.join(dataDir, 'x.png'))],
      ['read', () => collect(storage.read(key))],
    ];
    for (const [what, call] of calls) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      t.ok(err && isNotFound(err), `${what}: rejects with code ENOENT (${(err as Error)?.message})`);
    }
    t.notOk(fs.existsSync(path.join(dataDir, 'x.png')), 'copyToFile of a missing object leaves no file');
  });

  t.test(`${kind}: keys that could leave their place are refused`, async (t) => {
    const { storage } = await backend(t, kind);
    for (const bad of ['../etc/passwd', 'a/../../b', '/abs', 'a//b', 'a/./b', '', 'sp ace']) {
      t.throws(() => storage.read(bad), /Invalid storage key/, JSON.stringify(bad));
      await t.rejects(storage.put(bad, Buffer.from('x'), 'text/plain'), /Invalid storage key/);
    }
  });

  t.test(`${kind}: signed URLs verify, expire and refuse tampering`, async (t) => {
    const { storage } = await backend(t, kind);
    const u = new URL(storage.signedUrl('generations/org-1/x_y-1.png', 60));
    t.equal(u.origin, 'http://127.0.0.1:9');
    t.equal(u.pathname, '/media/generations/org-1/x_y-1.png');
    const expires = u.searchParams.get('expires')!;
    const sig = u.searchParams.get('signature')!;
    t.equal(storage.verify('generations/org-1/x_y-1.png', expires, sig), 'ok');
    t.equal(storage.verify('generations/org-2/x_y-1.png', expires, sig), 'invalid', 'another key');
    t.equal(storage.verify('generations/org-1/x_y-1.png', String(Number(expires) + 1), sig), 'invalid', 'another expiry');
    const old = new URL(storage.signedUrl('generations/org-1/x.png', -10));
    t.equal(storage.verify('generations/org-1/x.png', old.searchParams.get('expires')!, old.searchParams.get('signature')!), 'expired');
  });
}

t.test('s3: S3_PREFIX keeps every object under its prefix', async (t) => {
  const { storage, s3 } = await backend(t, 's3', { S3_PREFIX: '/tenant-a/' });
  await storage.put('generations/org-1/x.png', Buffer.from('png'), 'image/png');
  t.same(
    (await s3!.list()).map((o) => o.key),
    ['tenant-a/generations/org-1/x.png'],
    'stored under the prefix',
  );
  t.same(await keys(storage, 'generations/'), ['generations/org-1/x.png'], 'listed without it');
  t.same(await storage.readBuffer('generations/org-1/x.png'), Buffer.from('png'));
});

t.test('s3: start-up check of a missing bucket fails with a message naming it', async (t) => {
  const s3 = await startS3(t);
  const config = loadConfig({ DATA_DIR: os.tmpdir(), ...s3.env, S3_BUCKET: 'no-such-bucket' });
  const storage = await createStorage(config, secret);
  t.teardown(() => storage.close());
  const err = await storage.check().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof StorageUnavailable, 'StorageUnavailable');
  t.match((err as Error).message, /S3 bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+ \(S3_BUCKET\) does not exist; create it first/);
});

t.test('s3: an unreachable S3 is StorageUnavailable (503 to clients), not a missing object', async (t) => {
  const { storage, s3 } = await backend(t, 's3');
  await storage.put('generations/org-1/x.png', Buffer.from('png'), 'image/png');
  await s3!.stop();
  const calls: [string, () => Promise<unknown>][] = [
    ['put', () => storage.put('generations/org-1/y.png', Buffer.from('png'), 'image/png')],
    ['put (stream)', () => storage.put('generations/org-1/y.png', Readable.from([randomBytes(9 * 1024 * 1024)]), 'image/png')],
    ['stat', () => storage.stat('generations/org-1/x.png')],
    ['exists', () => storage.exists('generations/org-1/x.png')],
    ['size', () => storage.size('generations/org-1/x.png')],
    ['readBuffer', () => storage.readBuffer('generations/org-1/x.png')],
    ['delete', () => storage.delete('generations/org-1/x.png')],
    ['list', () => keys(storage, 'generations/')],
  ];
  for (const [what, call] of calls) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof StorageUnavailable, `${what}: StorageUnavailable (${(err as Error)?.message})`);
    t.notOk(isNotFound(err), `${what}: not a not-found`);
  }
});

t.test('configuration: STORAGE and the S3 variables are checked', async (t) => {
  t.same(loadConfig({}).storage, { kind: 'local' }, 'local by default');
  t.throws(() => loadConfig({ STORAGE: 'gcs' }), /STORAGE must be "local" or "s3"/);
  t.throws(() => loadConfig({ STORAGE: 's3' }), /STORAGE=s3 needs S3_BUCKET/);
  t.throws(() => loadConfig({ STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'ftp://x' }), /S3_ENDPOINT must be an http\(s\) URL/);
  t.throws(() => loadConfig({ STORAGE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' }), /set both, or neither/);
  t.throws(() => loadConfig({ STORAGE: 's3', S3_BUCKET: 'b', S3_PART_SIZE_MB: '4' }), /S3_PART_SIZE_MB must be an integer between 5/);
  t.match(loadConfig({ STORAGE: 's3', S3_BUCKET: 'b' }).storage, {
    kind: 's3',
    s3: {
      bucket: 'b',
      region: 'us-east-1',
      endpoint: undefined,
      forcePathStyle: false,
      accessKeyId: undefined,
      secretAccessKey: undefined,
      prefix: '',
      partSizeBytes: 8 * 1024 * 1024,
    },
  });
});
