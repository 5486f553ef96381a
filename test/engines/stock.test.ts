// The stock engines (src/engines/stock/) against local fakes of Pexels and Pixabay that enforce
// the real request shapes, auth and rate-limit answers (test/engines/fakes/pexels.ts, pixabay.ts):
// each request passes its fake; items are held to the orientation, resolution and duration asked
// for whatever the provider answered; each names the smallest rendition that is large enough (the
// file downloaded there has the size the item says); attribution; errors retryable or not, with
// the wait a rate limit asks for, and never the key.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { ProviderError } from '../../src/engines/generation.ts';
import { engineFor } from '../../src/engines/index.ts';
import type { StockEngine, StockQuery } from '../../src/engines/stock/types.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { startPexelsFake } from './fakes/pexels.ts';
import { startPixabayFake } from './fakes/pixabay.ts';

const PEXELS_KEY = 'pexels-secret-key-0123456789';
const PIXABAY_KEY = '12345678-pixabaysecretkey0123';

const pexels = await startPexelsFake(PEXELS_KEY, {
  photos: [
    { id: 1, width: 3000, height: 4500, color: '#ff0000', alt: 'ocean waves at dawn', photographer: 'Ana Lima' },
    { id: 2, width: 4500, height: 3000, color: '#00ff00', alt: 'ocean waves landscape' },
    { id: 3, width: 600, height: 900, color: '#0000ff', alt: 'ocean waves small' },
    { id: 4, width: 800, height: 1200, color: '#ffff00', alt: 'ocean waves medium' },
  ],
  videos: [
    {
      id: 10,
      width: 1080,
      height: 1920,
      duration: 2,
      color: '#ff00ff',
      alt: 'city night',
      files: [
        { width: 180, height: 320, quality: 'sd' },
        { width: 360, height: 640, quality: 'sd' },
        { width: 720, height: 1280, quality: 'hd' },
        { width: 360, height: 640, quality: 'hd', file_type: 'application/x-mpegURL' },
      ],
    },
    {
      id: 11,
      width: 1080,
      height: 1920,
      duration: 40,
      color: '#00ffff',
      alt: 'city night long',
      files: [{ width: 360, height: 640, quality: 'sd' }],
    },
    {
      id: 12,
      width: 1920,
      height: 1080,
      duration: 3,
      color: '#ffffff',
      alt: 'city night wide',
      files: [{ width: 640, height: 360, quality: 'sd' }],
    },
  ],
});
t.teardown(() => pexels.close());

const pixabay = await startPixabayFake(PIXABAY_KEY, {
  images: [
    { id: 21, width: 4000, height: 6000, color: '#ff0000', tags: 'mountain lake, nature', user: 'Hiker' },
    { id: 22, width: 6000, height: 4000, color: '#00ff00', tags: 'mountain lake, wide' },
    { id: 23, width: 300, height: 450, color: '#0000ff', tags: 'mountain lake, tiny' },
  ],
  clips: [
    {
      id: 30,
      duration: 2,
      color: '#ff00ff',
      tags: 'rain street',
      renditions: { medium: { width: 360, height: 640 }, small: { width: 270, height: 480 }, tiny: { width: 180, height: 320 } },
    },
    { id: 31, duration: 1, color: '#00ffff', tags: 'rain street short', renditions: { tiny: { width: 180, height: 320 } } },
  ],
});
t.teardown(() => pixabay.close());

const pexelsEngine = (env: Record<string, string> = {}) =>
  engineFor('stock', { config: loadConfig({ PEXELS_API_KEY: PEXELS_KEY, PEXELS_API_BASE: pexels.url, ...env }) }) as StockEngine;
const pixabayEngine = (env: Record<string, string> = {}) =>
  engineFor('stock', {
    config: loadConfig({ PIXABAY_API_KEY: PIXABAY_KEY, PIXABAY_API_BASE: `${pixabay.url}/api`, ...env }),
  }) as StockEngine;

const photoQuery = (text: string, over: Partial<StockQuery> = {}): StockQuery => ({
  text,
  orientation: 'portrait',
  kind: 'photo',
  minWidth: 720,
  minHeight: 1280,
  ...over,
});

async function size(url: string): Promise<{ width?: number; height?: number }> {
  const res = await fetch(url);
  return sharp(Buffer.from(await res.arrayBuffer())).metadata();
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(err)}`);
  return err;
}

t.test('Pexels photos: the request passes the fake; orientation and resolution held; the smallest rendition large enough', async (t) => {
  const items = await pexelsEngine().search(photoQuery('ocean waves'));
  const seen = pexels.searches().at(-1)!;
  t.equal(seen.path, '/v1/search');
  t.equal(seen.authorization, PEXELS_KEY, 'Authorization: the key itself');
  t.same(Object.fromEntries(seen.query), { query: 'ocean waves', orientation: 'portrait', size: 'small', per_page: '20' });
  t.same(
    items.map((i) => i.id),
    ['1'],
    'the landscape photo and the portrait ones too small for 720×1280 are left out',
  );
  const [item] = items;
  t.match(item, { kind: 'photo', width: 867, height: 1300 }, 'large2x (fits 1880×1300) is the smallest rendition of at least 720×1280');
  t.match(item.url, /\/photos\/1\/pexels-photo-1\.jpeg\?.*dpr=2/);
  t.match(await size(item.url), { width: 867, height: 1300 }, 'the file has the size the item says');
  t.same(item.attribution, {
    provider: 'Pexels',
    authorName: 'Ana Lima',
    authorUrl: 'https://www.pexels.com/@ana-lima',
    pageUrl: 'https://www.pexels.com/photo/ocean-waves-at-dawn-1/',
    license: 'Pexels License: free to use; crediting the creator and Pexels is appreciated',
    licenseUrl: 'https://www.pexels.com/license/',
  });

  const smaller = await pexelsEngine().search(photoQuery('ocean waves', { minWidth: 400, minHeight: 600 }));
  t.same(
    smaller.map((i) => [i.id, i.width, i.height]),
    [
      ['1', 433, 650],
      ['3', 433, 650],
      ['4', 433, 650],
    ],
    'a smaller need: `large` (fits 940×650) is enough for each',
  );
  const wide = await pexelsEngine().search(photoQuery('ocean waves', { orientation: 'landscape', minWidth: 1280, minHeight: 720 }));
  t.same(
    wide.map((i) => [i.id, i.width, i.height]),
    [['2', 1880, 1253]],
  );
  t.equal(pexels.searches().at(-1)!.query.get('orientation'), 'landscape');
  t.same(await pexelsEngine().search(photoQuery('desert')), [], 'no match: no items');
});

t.test('Pexels videos: duration and orientation held; the smallest MP4 file large enough (never the HLS playlist)', async (t) => {
  const q = { text: 'city night', orientation: 'portrait', kind: 'video', minWidth: 300, minHeight: 600, maxDurationSeconds: 10 } as const;
  const items = await pexelsEngine().search(q);
  const seen = pexels.searches().at(-1)!;
  t.equal(seen.path, '/videos/search');
  t.same(Object.fromEntries(seen.query), { query: 'city night', orientation: 'portrait', size: 'small', per_page: '20' });
  t.same(
    items.map((i) => i.id),
    ['10'],
    'the 40 s video is longer than asked, the landscape one the wrong way round',
  );
  t.match(items[0], {
    kind: 'video',
    width: 360,
    height: 640,
    durationSeconds: 2,
    attribution: { provider: 'Pexels', authorName: 'Filmmaker 10', authorUrl: 'https://www.pexels.com/@filmmaker-10' },
  });
  t.match(items[0].url, /_360_640\.mp4$/);
  const res = await fetch(items[0].url);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stock-test-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'clip.mp4');
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  t.match(await probe({ path: file, type: 'video/mp4' }), { width: 360, height: 640 }, 'the file is the MP4 the item names');
  t.same(
    (await pexelsEngine().search({ ...q, minDurationSeconds: 5, maxDurationSeconds: undefined })).map((i) => i.id),
    ['11'],
    'a least duration leaves the short one out',
  );
  t.same(await pexelsEngine().search({ ...q, minWidth: 1080, minHeight: 1920 }), [], 'no file that large: no items');
  t.equal(pexels.searches().at(-1)!.query.get('size'), 'medium', 'Full HD asked for: size=medium');
});

t.test('the Pexels fake refuses what the real API refuses', async (t) => {
  const noAuth = await fetch(`${pexels.url}/v1/search?query=ocean`);
  t.equal(noAuth.status, 401, 'no Authorization header');
  const badPer = await fetch(`${pexels.url}/v1/search?query=ocean&per_page=81`, { headers: { authorization: PEXELS_KEY } });
  t.equal(badPer.status, 400, 'per_page over 80');
  const badOrientation = await fetch(`${pexels.url}/v1/search?query=ocean&orientation=vertical`, {
    headers: { authorization: PEXELS_KEY },
  });
  t.equal(badOrientation.status, 400, 'an orientation Pexels does not have');
});

t.test('Pexels errors: a wrong key is not retryable, a spent quota is (with its reset), and the key is never in the message', async (t) => {
  const wrong = await failure(pexelsEngine({ PEXELS_API_KEY: 'not-the-key-987654321' }).search(photoQuery('ocean')));
  t.match(wrong, { status: 401, retryable: false, code: 'provider_unauthorized' });
  t.notMatch(wrong.message, 'not-the-key-987654321');

  const spent = await startPexelsFake(PEXELS_KEY, { photos: [], limit: 0 });
  t.teardown(() => spent.close());
  const limited = await failure(pexelsEngine({ PEXELS_API_BASE: spent.url }).search(photoQuery('ocean')));
  t.match(limited, { status: 429, retryable: true, code: 'provider_rate_limited' });
  t.ok(limited.retryAfterMs! > 29 * 24 * 3600_000, `retryAfterMs from X-Ratelimit-Reset: ${limited.retryAfterMs}`);
  t.notMatch(limited.message, PEXELS_KEY);

  const down = await failure(pexelsEngine({ PEXELS_API_BASE: 'http://127.0.0.1:9' }).search(photoQuery('ocean')));
  t.match(down, { retryable: true, code: 'provider_unavailable' }, 'unreachable: retryable');
  t.notMatch(down.message, PEXELS_KEY);
});

t.test('Pixabay photos: the key as a parameter, the documented values; orientation and resolution held', async (t) => {
  const items = await pixabayEngine().search(photoQuery('mountain lake'));
  const seen = pixabay.searches().at(-1)!;
  t.equal(seen.path, '/api/');
  t.same(Object.fromEntries(seen.query), {
    key: PIXABAY_KEY,
    q: 'mountain lake',
    safesearch: 'true',
    per_page: '20',
    image_type: 'photo',
    orientation: 'vertical',
  });
  t.same(
    items.map((i) => i.id),
    ['21'],
    'the horizontal image and the one too small are left out',
  );
  t.match(items[0], { kind: 'photo', width: 853, height: 1280 }, 'largeImageURL (fits 1280×1280)');
  t.match(await size(items[0].url), { width: 853, height: 1280 });
  t.same(items[0].attribution, {
    provider: 'Pixabay',
    authorName: 'Hiker',
    authorUrl: 'https://pixabay.com/users/Hiker-3021/',
    pageUrl: 'https://pixabay.com/photos/mountain-lake-nature-21/',
    license: 'Pixabay Content License: free to use; attribution not required',
    licenseUrl: 'https://pixabay.com/service/license-summary/',
  });
  const small = await pixabayEngine().search(photoQuery('mountain lake', { minWidth: 400, minHeight: 600 }));
  t.match(small[0], { id: '21', width: 427, height: 640 }, 'webformatURL when 640 is enough');
  t.match(small[0].url, /_640\.jpg$/);
  t.match(await size(small[0].url), { width: 427, height: 640 });
  await pixabayEngine().search(photoQuery('mountain lake', { orientation: 'square', minWidth: 10, minHeight: 10 }));
  t.equal(pixabay.searches().at(-1)!.query.get('orientation'), 'all', 'Pixabay has no square: all, filtered here');
});

t.test('Pixabay videos: an empty rendition skipped, the smallest large enough, duration held', async (t) => {
  const items = await pixabayEngine().search({
    text: 'rain street',
    orientation: 'portrait',
    kind: 'video',
    minWidth: 200,
    minHeight: 400,
    minDurationSeconds: 1.5,
  });
  const seen = pixabay.searches().at(-1)!;
  t.equal(seen.path, '/api/videos/');
  t.same(Object.fromEntries(seen.query), { key: PIXABAY_KEY, q: 'rain street', safesearch: 'true', per_page: '20', video_type: 'film' });
  t.same(
    items.map((i) => [i.id, i.width, i.height, i.durationSeconds]),
    [['30', 270, 480, 2]],
    'small (270×480) is the smallest of at least 200×400; the 1 s clip is too short',
  );
  t.match(items[0].url, /\/video\/30\/small\.mp4$/);
  t.match(items[0].attribution, { provider: 'Pixabay', authorUrl: 'https://pixabay.com/users/creator30-3030/' });
});

t.test('the Pixabay fake refuses what the real API refuses', async (t) => {
  const noKey = await fetch(`${pixabay.url}/api/?q=lake`);
  t.equal(noKey.status, 400);
  t.equal(await noKey.text(), '[ERROR 400] Invalid or missing API key');
  t.equal((await fetch(`${pixabay.url}/api/?key=${PIXABAY_KEY}&q=lake&per_page=2`)).status, 400, 'per_page under 3');
  t.equal(
    (await fetch(`${pixabay.url}/api/?key=${PIXABAY_KEY}&q=lake&orientation=portrait`)).status,
    400,
    'orientation is horizontal/vertical',
  );
});

t.test('Pixabay errors: not retryable for a wrong key, retryable with the window reset for 429, never the key', async (t) => {
  const other = 'wrong-pixabay-key-555555';
  const wrong = await failure(pixabayEngine({ PIXABAY_API_KEY: other }).search(photoQuery('lake')));
  t.match(wrong, { status: 400, retryable: false, code: 'provider_rejected' });
  t.match(wrong.message, '[ERROR 400] Invalid or missing API key');
  t.notMatch(wrong.message, other);

  const spent = await startPixabayFake(PIXABAY_KEY, { limit: 0, resetSeconds: 3600 });
  t.teardown(() => spent.close());
  const limited = await failure(pixabayEngine({ PIXABAY_API_BASE: `${spent.url}/api` }).search(photoQuery('lake')));
  t.match(limited, { status: 429, retryable: true, code: 'provider_rate_limited', retryAfterMs: 3_600_000 });
  t.match(limited.message, 'API rate limit exceeded');
  t.notMatch(limited.message, PIXABAY_KEY);

  const down = await failure(pixabayEngine({ PIXABAY_API_BASE: 'http://127.0.0.1:9/api' }).search(photoQuery('lake')));
  t.match(down, { retryable: true, code: 'provider_unavailable' });
  t.notMatch(down.message, PIXABAY_KEY);
});
