// The whole service on S3 storage (STORAGE=s3 against a real S3 API server, s3rver, on 127.0.0.1):
// an editor upload stored in the bucket (a 7 MB one as a multipart upload of 5 MiB parts) and served back through
// the signed URL byte for byte, ranges included; a generation's output and an export rendered by
// the worker from and into the bucket; a catalog sample made into the bucket and served; nothing
// written under DATA_DIR/media; and `npm start` refusing to start on a missing bucket.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FFMPEG_PATH, probe } from '../../src/media/ffmpeg.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startS3 } from '../helpers/s3.ts';
import { addMedia, colorVideo, createProject, exportAndWait } from '../editor/helpers.ts';

const s3 = await startS3(t);
// The smallest part size S3 allows, so a 7 MB upload is already two parts (a 12 MB one at the default 8 MiB proved no more).
const app = await startTestApp(t, { ...s3.env, S3_PART_SIZE_MB: '5', OUTBOUND_ALLOW_IPS: '127.0.0.1' }, { workers: true });
const ws = await app.workspace({ credits: 1000 });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-service-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A multipart/form-data upload of one file part, streamed by the service into storage. */
async function uploadMultipart(a: TestApp, key: string, filename: string, type: string, body: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(body)], { type }), filename);
  const res = await fetch(`${a.url}/api/v1/editor/media`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** An MP4 of lossless noise, so it is large (about 7 MB, more than one 5 MiB part) yet a real video. */
function noiseVideo(): Buffer {
  const file = path.join(work, 'noise.mp4');
  execFileSync(FFMPEG_PATH, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    "nullsrc=s=480x270:r=25:d=1.4,geq=lum='random(1)*255':cb=128:cr=128",
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-qp',
    '0',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
  return fs.readFileSync(file);
}

t.test('an editor upload lives in the bucket and comes back through the signed URL, byte for byte, with ranges', async (t) => {
  t.equal(app.service.ctx.storage.kind, 's3');
  const video = noiseVideo();
  t.ok(video.length > 6 * 1024 * 1024, `a large upload (${(video.length / 1048576).toFixed(1)} MiB): more than one part`);
  const before = s3.requests.length;
  const up = await uploadMultipart(app, ws.key, 'noise.mp4', 'video/mp4', video);
  t.match(up.media, { media_type: 'video', content_type: 'video/mp4', size_bytes: video.length, status: 'ready' });
  const reqs = s3.requests.slice(before);
  t.ok(reqs.filter((r) => r.startsWith('PUT ') && /[?&]partNumber=\d+/.test(r)).length >= 2, 'stored with a multipart upload');

  const objects = await s3.list(`editor-media/${ws.orgId}/`);
  t.same(objects, [{ key: `editor-media/${ws.orgId}/${up.media.id}.mp4`, bytes: video.length }], 'the object is in the bucket');

  const url = up.media.url as string;
  t.match(url, new RegExp(`^${app.url}/media/editor-media/`), "the URL is the service's own signed URL");
  const whole = await fetch(url);
  t.equal(whole.status, 200);
  t.equal(whole.headers.get('content-type'), 'video/mp4');
  t.equal(Number(whole.headers.get('content-length')), video.length);
  t.equal(whole.headers.get('accept-ranges'), 'bytes');
  t.equal(whole.headers.get('cache-control'), 'private, max-age=300');
  t.equal(sha(Buffer.from(await whole.arrayBuffer())), sha(video), 'byte-identical');

  const part = await fetch(url, { headers: { range: 'bytes=6000000-6000999' } });
  t.equal(part.status, 206);
  t.equal(part.headers.get('content-range'), `bytes 6000000-6000999/${video.length}`);
  t.equal(Number(part.headers.get('content-length')), 1000);
  t.same(Buffer.from(await part.arrayBuffer()), video.subarray(6_000_000, 6_001_000), 'the range, from a later part of the object');
  const tail = await fetch(url, { headers: { range: 'bytes=-500' } });
  t.equal(tail.status, 206);
  t.same(Buffer.from(await tail.arrayBuffer()), video.subarray(video.length - 500), 'a suffix range');
  const open = await fetch(url, { headers: { range: `bytes=${video.length - 10}-` } });
  t.same(Buffer.from(await open.arrayBuffer()), video.subarray(video.length - 10), 'an open-ended range');
  const beyond = await fetch(url, { headers: { range: `bytes=${video.length}-` } });
  t.equal(beyond.status, 416);
  t.equal(beyond.headers.get('content-range'), `bytes */${video.length}`);
  t.match(await beyond.json(), { error: { code: 'bad_request', retryable: false, context: { field: 'range', size_bytes: video.length } } });
  const head = await fetch(url, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(Number(head.headers.get('content-length')), video.length);
  t.equal((await head.arrayBuffer()).byteLength, 0, 'HEAD has no body');
  const etag = whole.headers.get('etag')!;
  t.ok(etag, 'an ETag');
  t.equal((await fetch(url, { headers: { 'if-none-match': etag } })).status, 304, 'If-None-Match: 304');

  // The signature still guards the bucket's objects.
  const tampered = new URL(url);
  tampered.pathname = tampered.pathname.replace(ws.orgId, '00000000-0000-4000-8000-000000000000');
  const refused = await fetch(tampered);
  t.equal(refused.status, 403, 'another key with this signature is refused');
  t.match(await refused.json(), { error: { code: 'forbidden' } });
  const garbled = await fetch(`${app.url}/media/editor-media/a%25zz.mp4?expires=1&signature=x`);
  t.equal(garbled.status, 403, 'a key that does not decode is refused, not a 500');

  // Deleted from the bucket behind the service's back: 404 in the envelope.
  await app.service.ctx.storage.delete(objects[0].key);
  const gone = await fetch(url);
  t.equal(gone.status, 404);
  t.match(await gone.json(), { error: { code: 'not_found', context: { resource: 'media' } } });
  t.notOk(fs.existsSync(path.join(app.service.ctx.config.dataDir, 'media')), 'nothing under DATA_DIR/media');
});

t.test("a generation's output is stored in the bucket and served from it", async (t) => {
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Fresh lemonade, 20% off', aspect_ratio: '1:1' },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.generations[0].id;
  const deadline = Date.now() + 120_000;
  let g: any;
  for (;;) {
    g = (await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key })).body;
    if (g.status !== 'generating' || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const objects = await s3.list(`generations/${ws.orgId}/`);
  t.same(
    objects.map((o) => o.key),
    [`generations/${ws.orgId}/${id}.png`],
    'the output is in the bucket',
  );
  const file = await fetch(g.url);
  t.equal(file.status, 200);
  t.equal(file.headers.get('content-type'), 'image/png');
  const bytes = Buffer.from(await file.arrayBuffer());
  t.equal(bytes.length, objects[0].bytes);
  t.same(bytes, await app.service.ctx.storage.readBuffer(objects[0].key), 'served from the bucket');
  t.same([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
});

t.test('an export reads its media from the bucket and stores the render there', async (t) => {
  const clip = colorVideo('s3-export', 'green', 2, { width: 320, height: 240 });
  const up = await uploadMultipart(app, ws.key, 'clip.mp4', 'video/mp4', clip);
  const p = await createProject(app, ws.key, { aspect_ratio: '1:1' });
  await addMedia(app, ws.key, p.id, { media_id: up.media.id, from_seconds: 0 });
  const { done } = await exportAndWait(app, ws.key, p.id, { quality: 'draft' });
  t.equal(done.status, 'completed', JSON.stringify(done.error ?? null));
  const exported = (await s3.list()).filter((o) => o.key.endsWith('.mp4') && !o.key.startsWith('editor-media/'));
  t.equal(exported.length, 1, `the render is in the bucket (${exported.map((o) => o.key).join(', ')})`);
  const file = path.join(work, 'export.mp4');
  const res = await fetch(done.url);
  t.equal(res.status, 200);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  t.equal(fs.statSync(file).size, exported[0].bytes);
  const facts = await probe(file);
  t.equal(facts.video_codec, 'h264');
  t.ok(Math.abs(facts.duration_seconds! - 2) < 0.3, `${facts.duration_seconds} s`);
});

t.test('a catalog sample is made into the bucket and served from it', async (t) => {
  const assets = (await app.request('GET', '/api/v1/assets', { key: ws.key })).body;
  const voice = assets.voices.find((v: { source: string }) => v.source === 'built_in');
  const url = `${app.url}${new URL(voice.preview_url).pathname}`;
  const res = await fetch(url);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'audio/wav');
  t.match(res.headers.get('cache-control'), /max-age=86400/);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
  const objects = await s3.list('catalog-samples/');
  t.same(objects, [{ key: `catalog-samples/voices/${voice.id}.wav`, bytes: bytes.length }], 'kept in the bucket');
  const part = await fetch(url, { headers: { range: 'bytes=0-43' } });
  t.equal(part.status, 206);
  t.same(Buffer.from(await part.arrayBuffer()), bytes.subarray(0, 44), 'ranges on samples too');
  t.notOk(fs.existsSync(path.join(app.service.ctx.config.dataDir, 'samples')), 'nothing under DATA_DIR/samples');
});

t.test('npm start with a missing bucket exits 78 with a message naming the bucket', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(work, 'data-'));
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: {
      ...process.env,
      ...s3.env,
      S3_BUCKET: 'no-such-bucket',
      DATABASE_URL: app.databaseUrl,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'silent',
      DEMO_WORKSPACE: '0',
      MEDIA_SIGNING_SECRET: 'x',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearTimeout(timer);
  t.equal(code, 78, stderr);
  t.match(stderr, /Storage: S3 bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+ \(S3_BUCKET\) does not exist; create it first/);
  t.notMatch(stderr, /\n\s+at /, 'a message, not a stack trace');
});

t.test('S3 unreachable: uploads and media URLs answer 503 service_unavailable, retryable', async (t) => {
  const own = await startS3(t);
  const a = await startTestApp(t, { ...own.env });
  const w = await a.workspace();
  const png = await (await import('sharp'))
    .default({ create: { width: 8, height: 8, channels: 3, background: '#123456' } })
    .png()
    .toBuffer();
  const up = await a.request('POST', '/api/v1/editor/media', {
    key: w.key,
    body: { media: { filename: 'a.png', content_type: 'image/png', data: png.toString('base64') } },
  });
  t.equal(up.status, 200, up.text);
  await own.stop();
  const media = await fetch(up.body.media.url);
  t.equal(media.status, 503);
  t.equal(media.headers.get('retry-after'), '5');
  t.match(await media.json(), { error: { code: 'service_unavailable', retryable: true } });
  const again = await a.request('POST', '/api/v1/editor/media', {
    key: w.key,
    body: { media: { filename: 'b.png', content_type: 'image/png', data: png.toString('base64') } },
  });
  t.equal(again.status, 503, again.text);
  t.match(again.body, { error: { code: 'service_unavailable', retryable: true } });
  t.equal(again.headers.get('retry-after'), '5');
  const sample = await fetch(`${a.url}/static/previews/avatars/chloe-beauty.mp4`);
  t.equal(sample.status, 503, 'a catalog sample cannot be looked up either: 503');
  t.match(await sample.json(), { error: { code: 'service_unavailable', retryable: true } });
  const [{ n }] = await a.service.ctx.sql`select count(*)::int as n from media where org_id = ${w.orgId}`;
  t.equal(n, 1, 'no row for the upload that could not be stored');
});
