// src/media/fetch-media.ts against a real local server through the real guarded client: what
// each refusal tells the caller (fetch, type, pixels, rejected, kind, duration), that the
// caller's own error is what is thrown, and that a refused inspection leaves no file behind.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { checkMediaBytes, fetchCheckedMedia, fetchMediaBytes, type MediaRefusal } from '../../src/media/fetch-media.ts';
import { DEFAULT_PIXEL_LIMITS } from '../../src/media/limits.ts';
import { createGuardedFetcher } from '../../src/net/guarded-fetch.ts';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** 16-bit mono PCM WAV of `seconds` of silence. */
function wav(seconds: number, rate = 8000): Buffer {
  const data = Buffer.alloc(Math.round(seconds * rate) * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#3366cc' } });
const small = await solid(4, 4).png().toBuffer();
const bodies: Record<string, Buffer> = {
  '/small.png': small,
  '/wide.png': await solid(20000, 8).png().toBuffer(),
  // A PNG's signature and header chunk, its checksum broken: sniffed as a PNG, not decodable.
  '/broken.png': Buffer.concat([small.subarray(0, 29), Buffer.from([0, 0, 0, 0]), Buffer.alloc(40, 7)]),
  '/photo.jpg': await solid(4, 4).jpeg().toBuffer(),
  '/anim.gif': await solid(4, 4).gif().toBuffer(),
  '/notes.txt': Buffer.from('just some words, no media here'),
  '/two-seconds.wav': wav(2),
};

async function server(t: Test): Promise<string> {
  const srv = http.createServer((req, res) => {
    const body = bodies[req.url ?? ''];
    if (!body) return res.writeHead(404).end();
    // The server's Content-Type is never believed: everything is served as a PNG.
    res.writeHead(200, { 'content-type': 'image/png' }).end(body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
}

class Refused extends Error {
  readonly refusal: MediaRefusal;
  constructor(refusal: MediaRefusal) {
    super(`refused: ${refusal.reason}`);
    this.refusal = refusal;
  }
}
const refuse = (r: MediaRefusal) => new Refused(r);

async function refusalOf(p: Promise<unknown>): Promise<MediaRefusal> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Refused) return err.refusal;
    throw err;
  }
  throw new Error('it was accepted');
}

const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'] });
const base = await server(t);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fetch-media-test-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

t.test('an allowed image comes back as its bytes and sniffed type', async (t) => {
  const got = await fetchCheckedMedia(fetcher, `${base}/small.png`, {
    maxBytes: 1 << 20,
    types: IMAGE_TYPES,
    pixels: DEFAULT_PIXEL_LIMITS,
    refuse,
  });
  t.same(got.bytes, bodies['/small.png']);
  t.same(got.sniffed, { mime: 'image/png', ext: 'png' });
  t.equal(got.inspected, undefined, 'nothing inspected unless asked');
});

t.test("the guarded client's refusals: status, size, abandoned", async (t) => {
  t.match(await refusalOf(fetchMediaBytes(fetcher, `${base}/missing.png`, { maxBytes: 1 << 20, refuse })), {
    reason: 'fetch',
    code: 'status',
    message: 'answered HTTP 404',
  });
  t.match(await refusalOf(fetchMediaBytes(fetcher, `${base}/small.png`, { maxBytes: 10, refuse })), {
    reason: 'fetch',
    code: 'too_large',
    message: 'is larger than 10 bytes',
  });
  t.match(await refusalOf(fetchMediaBytes(fetcher, `${base}/small.png`, { maxBytes: 1 << 20, signal: AbortSignal.abort(), refuse })), {
    reason: 'fetch',
    code: 'aborted',
  });
  t.match(await refusalOf(fetchMediaBytes(fetcher, 'http://10.0.0.1/x.png', { maxBytes: 1 << 20, refuse })), {
    reason: 'fetch',
    code: 'address',
  });
  t.match(await refusalOf(fetchMediaBytes(fetcher, `${base}/small.png`, { maxBytes: 1 << 20, httpsOnly: true, refuse })), {
    reason: 'fetch',
    code: 'scheme',
    message: 'must be an https:// URL',
  });
});

t.test('types: the sniffed type, never the served one, is held to the list', async (t) => {
  t.match(await refusalOf(fetchCheckedMedia(fetcher, `${base}/photo.jpg`, { maxBytes: 1 << 20, types: ['image/png'], refuse })), {
    reason: 'type',
    mime: 'image/jpeg',
    message: 'is image/jpeg',
  });
  // A type the media inspector does not take (GIF, SVG, …) is no recognised file, as no type at all.
  t.match(await refusalOf(fetchCheckedMedia(fetcher, `${base}/anim.gif`, { maxBytes: 1 << 20, types: IMAGE_TYPES, refuse })), {
    reason: 'type',
    mime: undefined,
    message: 'is not a recognised file',
  });
  t.match(await refusalOf(fetchCheckedMedia(fetcher, `${base}/notes.txt`, { maxBytes: 1 << 20, types: IMAGE_TYPES, refuse })), {
    reason: 'type',
    mime: undefined,
    message: 'is not a recognised file',
  });
});

t.test("pixels: an image's header over the limits, or one that does not decode", async (t) => {
  const wide = await refusalOf(checkMediaBytes(bodies['/wide.png'], { types: IMAGE_TYPES, pixels: DEFAULT_PIXEL_LIMITS, refuse }));
  t.match(wide, { reason: 'pixels', code: 'pixels', message: 'is 20000×8 pixels; at most 16384 pixels per side are accepted' });
  t.match(await refusalOf(checkMediaBytes(bodies['/broken.png'], { types: IMAGE_TYPES, pixels: DEFAULT_PIXEL_LIMITS, refuse })), {
    reason: 'pixels',
    message: 'could not be decoded',
  });
  await t.resolves(checkMediaBytes(bodies['/wide.png'], { types: IMAGE_TYPES, refuse }), 'without pixel limits the header is not read');
});

t.test('inspect: audio and video written to a file and probed; kinds and duration held; a refusal leaves no file', async (t) => {
  const file = path.join(dir, 'input-ok');
  const ok = await fetchCheckedMedia(fetcher, `${base}/two-seconds.wav`, {
    maxBytes: 1 << 20,
    inspect: { file, limits: DEFAULT_PIXEL_LIMITS, kinds: ['audio'], maxSeconds: 5 },
    refuse,
  });
  t.equal(ok.inspected.file, file);
  t.match(ok.inspected.facts, { kind: 'audio', contentType: 'audio/wav', durationSeconds: 2 });
  t.same(fs.readFileSync(file), bodies['/two-seconds.wav'], 'the file holds the bytes fetched');

  const long = path.join(dir, 'input-long');
  const tooLong = await refusalOf(
    fetchCheckedMedia(fetcher, `${base}/two-seconds.wav`, {
      maxBytes: 1 << 20,
      inspect: { file: long, limits: DEFAULT_PIXEL_LIMITS, maxSeconds: 1.5 },
      refuse,
    }),
  );
  t.match(tooLong, { reason: 'duration', seconds: 2, limit: 1.5, message: 'lasts 2 s, more than the 1.5 s accepted' });
  t.notOk(fs.existsSync(long), 'refused: the file is removed');

  const named = (s: { ext: string }) => path.join(dir, `input-kind.${s.ext}`);
  const kind = await refusalOf(
    fetchCheckedMedia(fetcher, `${base}/two-seconds.wav`, {
      maxBytes: 1 << 20,
      inspect: { file: named, limits: DEFAULT_PIXEL_LIMITS, kinds: ['video'] },
      refuse,
    }),
  );
  t.match(kind, { reason: 'kind', inspected: { kind: 'audio' }, message: 'is audio/wav' });
  t.notOk(fs.existsSync(path.join(dir, 'input-kind.wav')), 'a file named from the sniffed type is removed too');

  const text = path.join(dir, 'input-text');
  const rejected = await refusalOf(
    fetchCheckedMedia(fetcher, `${base}/notes.txt`, { maxBytes: 1 << 20, inspect: { file: text, limits: DEFAULT_PIXEL_LIMITS }, refuse }),
  );
  t.match(rejected, { reason: 'rejected', code: 'type', message: /is not a recognised image, video or audio file/ });
  t.notOk(fs.existsSync(text), 'nothing written for bytes of no known type');

  const frames = await refusalOf(
    checkMediaBytes(bodies['/wide.png'], { inspect: { file: path.join(dir, 'wide'), limits: DEFAULT_PIXEL_LIMITS }, refuse }),
  );
  t.match(frames, { reason: 'rejected', code: 'pixels', message: /20000×8 pixels/ }, 'inspection bounds pixels too');
});
