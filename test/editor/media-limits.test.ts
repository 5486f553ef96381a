// Decompression bombs: a 16000×16000 PNG of one colour compresses to under 1 MB but decodes to
// 768 MB of pixels. Every way a user hands the service an image or a video frame checks its
// size against MEDIA_MAX_PIXELS / MEDIA_MAX_DIMENSION from the header, before anything decodes
// it: editor uploads (multipart and JSON base64), reference inspirations (inline: 400 and nothing
// charged; by URL: the analysis fails without retry and is refunded). And the editor's timeline
// limit (EDITOR_MAX_TIMELINE_SECONDS) for edits, placements and exports.
import http from 'node:http';
import zlib from 'node:zlib';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { organizations } from '../../src/db/schema/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { colorPng, colorVideo, createProject, edit, upload } from './helpers.ts';

/**
 * A valid PNG of width×height white RGB pixels, made without holding or compressing its pixels
 * (sharp took 7 s of CPU to encode the 768 MB): one band of rows is deflated with a full flush
 * (byte-aligned, no reference to earlier data) and repeated, then the final block and the
 * Adler-32 of the whole, combined from the band's as zlib's adler32_combine does.
 */
function whitePng(width: number, height: number, rowsPerBand = 160): Buffer {
  const row = Buffer.alloc(1 + width * 3, 0xff);
  row[0] = 0; // filter: none
  const band = Buffer.concat(Array.from({ length: rowsPerBand }, () => row));
  const bands = height / rowsPerBand;
  if (!Number.isInteger(bands)) throw new Error('height must be a multiple of rowsPerBand');
  const BASE = 65521;
  let a = 1;
  let b = 0;
  for (const byte of band) {
    a = (a + byte) % BASE;
    b = (b + a) % BASE;
  }
  let adler = 1;
  for (let i = 0; i < bands; i++) {
    const rem = band.length % BASE;
    const sum1 = ((adler & 0xffff) + a + BASE - 1) % BASE;
    const sum2 = ((((adler & 0xffff) * rem) % BASE) + (adler >>> 16) + b + BASE - rem) % BASE;
    adler = ((sum2 << 16) | sum1) >>> 0;
  }
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler);
  const deflated = zlib.deflateRawSync(band, { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const idat = Buffer.concat([
    Buffer.from([0x78, 0xda]),
    ...Array.from({ length: bands }, () => deflated),
    zlib.deflateRawSync(Buffer.alloc(0)),
    trailer,
  ]);
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(zlib.crc32(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
const bomb = whitePng(16000, 16000);
const wide = await sharp({ create: { width: 20000, height: 8, channels: 3, background: '#f00' } })
  .png()
  .toBuffer();

const files: Record<string, Buffer> = { '/bomb.png': bomb };
const host = http.createServer((req, res) => {
  const f = files[req.url ?? ''];
  if (!f) return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': f.length }).end(f);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `http://127.0.0.1:${(host.address() as { port: number }).port}`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', EDITOR_MAX_TIMELINE_SECONDS: '60' }, { workers: true });

const balance = async (a: TestApp, orgId: string) =>
  (await a.service.ctx.db.select().from(organizations).where(eq(organizations.id, orgId)))[0].credits;
/** The workspace's ledger as [reason, delta] pairs, oldest first (a charge stays there whether or not the refund came yet). */
const ledger = async (a: TestApp, orgId: string) =>
  (await a.service.ctx.sql`select reason, delta from credit_ledger where org_id = ${orgId} order by id`).map((l) => [
    l.reason,
    Number(l.delta),
  ]);
const mediaCount = async (a: TestApp, orgId: string) =>
  Number((await a.service.ctx.sql`select count(*)::int as n from media where org_id = ${orgId}`)[0].n);

function multipart(file: { filename: string; type: string; body: Buffer }) {
  const boundary = `----limits${Date.now()}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`;
  return {
    raw: new Uint8Array(Buffer.concat([Buffer.from(head), file.body, Buffer.from(`\r\n--${boundary}--\r\n`)])),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

t.test('the bomb is refused: multipart upload, quickly, naming the field and the limit', async (t) => {
  t.ok(bomb.length < 2 * 1024 * 1024, `the bomb is small (${bomb.length} bytes)`);
  // The bomb is a real PNG: its header says 16000×16000, and the same construction, small, decodes to white.
  t.match(await sharp(bomb, { limitInputPixels: false }).metadata(), { format: 'png', width: 16000, height: 16000 });
  const small = whitePng(300, 320);
  t.match(await sharp(small).metadata(), { format: 'png', width: 300, height: 320 });
  t.same(
    (await sharp(small).stats()).channels.map((c) => [c.min, c.max]),
    [
      [255, 255],
      [255, 255],
      [255, 255],
    ],
    'every pixel white',
  );
  const ws = await app.workspace();
  const started = Date.now();
  const res = await app.request('POST', '/api/v1/editor/media', {
    key: ws.key,
    ...multipart({ filename: 'bomb.png', type: 'image/png', body: bomb }),
  });
  const took = Date.now() - started;
  t.equal(res.status, 400, res.text);
  t.match(res.body.error, {
    code: 'bad_request',
    retryable: false,
    context: { limit_pixels: 40_000_000, limit_dimension: 16384, errors: [{ field: 'body.file', message: /40000000 pixels/ }] },
  });
  t.match(res.body.error.message, /body\.file/);
  t.ok(took < 5000, `answered in ${took} ms`);
  t.equal(await mediaCount(app, ws.orgId), 0, 'nothing stored');
});

t.test('the bomb is refused as JSON base64, and a frame too wide by its side', async (t) => {
  const ws = await app.workspace();
  const res = await app.request('POST', '/api/v1/editor/media', {
    key: ws.key,
    body: { media: { filename: 'bomb.png', content_type: 'image/png', data: bomb.toString('base64') } },
  });
  t.equal(res.status, 400, res.text);
  t.match(res.body.error, { code: 'bad_request', context: { limit_pixels: 40_000_000, errors: [{ field: 'body.media.data' }] } });
  const tooWide = await app.request('POST', '/api/v1/editor/media', {
    key: ws.key,
    body: { media: { filename: 'wide.png', data: wide.toString('base64') } },
  });
  t.equal(tooWide.status, 400, tooWide.text);
  t.match(tooWide.body.error.context, {
    limit_dimension: 16384,
    errors: [{ field: 'body.media.data', message: /20000×8 pixels; at most 16384 pixels per side/ }],
  });
  t.equal(await mediaCount(app, ws.orgId), 0, 'nothing stored');
  // An ordinary image still goes in.
  const ok = await upload(app, ws.key, 'fine.png', 'image/png', await colorPng('#00ff00', 4000, 3000));
  t.match(ok.media, { width: 4000, height: 3000 });
});

t.test('reference inspirations: an inline bomb is 400 and costs nothing; one by URL fails, refunded', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-spotlight', media_kind: 'image', images: [{ filename: 'bomb.png', data: bomb.toString('base64') }] },
  });
  t.equal(res.status, 400, res.text);
  t.match(res.body.error, {
    code: 'bad_request',
    context: { limit_pixels: 40_000_000, errors: [{ field: 'body.images[0].data', message: /pixels/ }] },
  });
  t.equal(await balance(app, ws.orgId), 100, 'balance unchanged');
  t.equal(await mediaCount(app, ws.orgId), 0, 'nothing stored');

  const byUrl = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-spotlight', media_kind: 'image', image_urls: [`${base}/bomb.png`] },
  });
  t.equal(byUrl.status, 200, byUrl.text);
  // Charged before the analysis is queued (the job may already have failed and refunded by now).
  t.equal(byUrl.body.credits_deducted, 30);
  t.same(
    (await ledger(app, ws.orgId)).slice(0, 2),
    [
      ['initial_grant', 100],
      ['reference_charge', -30],
    ],
    'charged before it is analysed',
  );
  let ref: any;
  for (let i = 0; i < 300 && ref?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    ref = (await app.request('GET', '/api/v1/reference-inspirations', { key: ws.key })).body.data.find((r: any) => r.id === byUrl.body.id);
    if (ref?.status === 'ready') break;
  }
  t.match(ref, {
    status: 'failed',
    error: {
      code: 'media_rejected',
      retryable: false,
      message: /body\.image_urls\[0\] has more than 40000000 pixels/,
      context: { credits_refunded: 30 },
    },
  });
  t.equal(await balance(app, ws.orgId), 100, 'refunded');
});

t.test('a generation whose reference image is a bomb fails without decoding it, refunded', async (t) => {
  const ws = await app.workspace({ credits: 500 });
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'bold-sale-banner', reference_image_urls: [`${base}/bomb.png`] },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.generations[0].id;
  t.ok(res.body.credits_deducted > 0);
  t.same(
    (await ledger(app, ws.orgId)).slice(0, 2),
    [
      ['initial_grant', 500],
      ['generation_charge', -res.body.credits_deducted],
    ],
    'charged before it renders',
  );
  let g: any;
  for (let i = 0; i < 600 && !['completed', 'error'].includes(g?.status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    g = (await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key })).body;
  }
  t.match(g, {
    status: 'error',
    error: { code: 'invalid_reference_image', retryable: false, message: /reference image 1 has more than 40000000 pixels/ },
  });
  t.equal(await balance(app, ws.orgId), 500, 'refunded');
});

t.test('a video whose frames are over the limit is refused', async (t) => {
  const small = await startTestApp(t, { MEDIA_MAX_PIXELS: '50000' });
  const ws = await small.workspace();
  const res = await small.request('POST', '/api/v1/editor/media', {
    key: ws.key,
    body: { media: { filename: 'clip.mp4', content_type: 'video/mp4', data: colorVideo('limits-clip', 'red', 1).toString('base64') } },
  });
  t.equal(res.status, 400, res.text);
  t.match(res.body.error.context, {
    limit_pixels: 50000,
    errors: [{ field: 'body.media.data', message: /has frames that are 320×240 pixels \(76800\); at most 50000 pixels/ }],
  });
});

t.test('the timeline limit: placements and edits that end later are 400; an older, longer project cannot be exported', async (t) => {
  const ws = await app.workspace();
  const img = await upload(app, ws.key, 'still.png', 'image/png', await colorPng('#0000ff'));
  const p = await createProject(app, ws.key);
  const place = await app.request('POST', `/api/v1/editor/videos/${p.id}/media`, {
    key: ws.key,
    body: { media_id: img.media.id, from_seconds: 58, duration_seconds: 5 },
  });
  t.equal(place.status, 400, place.text);
  t.match(place.body.error.context, {
    field: 'body.from_seconds',
    errors: [{ field: 'body.from_seconds', message: /end at 63 s, beyond the 60 s timeline limit/ }],
  });
  const text = await edit(app, ws.key, p.id, [{ type: 'add_text', text: 'Too long', from_seconds: 0, duration_seconds: 61 }]);
  t.equal(text.status, 400, text.text);
  t.match(text.body.error.context, { field: 'body.operations[0].duration_seconds', operation_index: 0 });
  const fine = await edit(app, ws.key, p.id, [{ type: 'add_text', text: 'Fits', from_seconds: 0, duration_seconds: 60 }]);
  t.equal(fine.status, 200, fine.text);
  const stretch = await edit(app, ws.key, p.id, [{ type: 'set_item_timing', item_id: fine.body.video.items[0].item_id, from_seconds: 1 }]);
  t.equal(stretch.status, 400, stretch.text);
  t.match(stretch.body.error.message, /beyond the 60 s timeline limit/);

  // A project made longer before the limit was lowered (older data): its export is refused.
  await app.service.ctx
    .sql`update editor_videos set timeline = jsonb_set(timeline::jsonb, '{items,0,duration_seconds}', '600')::json where video_id = ${p.id}`;
  const exp = await app.request('POST', `/api/v1/editor/videos/${p.id}/exports`, { key: ws.key, body: { quality: 'draft' } });
  t.equal(exp.status, 400, exp.text);
  t.match(exp.body.error, {
    code: 'bad_request',
    context: { limit_seconds: 60, errors: [{ field: 'path.id', message: /600 s long, more than the 60 s/ }] },
  });
  t.equal(
    Number((await app.service.ctx.sql`select count(*)::int as n from editor_exports where org_id = ${ws.orgId}`)[0].n),
    0,
    'nothing queued',
  );
});
