// Faceless scenes from stock photos (FACELESS_SCENE_SOURCE=stock_photo) against the Pexels fake
// (test/engines/fakes/pexels.ts), end to end over the HTTP API: the fake is asked keyword queries
// built from the scene texts (fewer words when one finds nothing), the photos it serves (flat
// colours) are what the MP4 shows in their scenes, a scene nothing is found for is drawn here,
// and each scene's source and attribution are recorded in the scenes stage's output and shown
// by GET /videos/{id} (scenes, engines.stock). Then an
// attempt cut off in the scenes stage: the next one downloads only the scenes not stored yet, and
// the record of the stored ones survives.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { facelessVideos, media } from '../../src/db/schema/index.ts';
import { extractFrame, probe } from '../../src/media/ffmpeg.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { startPexelsFake, type FakePhoto } from '../engines/fakes/pexels.ts';
import { poll } from '../helpers/image-model.ts';
import { startTestApp } from '../helpers/app.ts';

const KEY = 'pexels-test-key-4242';
const PHOTOS: FakePhoto[] = [
  // Matches the first scene's words too, but is landscape: never used for a portrait video.
  { id: 1, width: 4500, height: 3000, color: '#0000FF', alt: 'sparkling water glass wide' },
  { id: 2, width: 3000, height: 4500, color: '#FF0000', alt: 'sparkling water glass', photographer: 'Rosa Red' },
  { id: 3, width: 2000, height: 3000, color: '#00FF00', alt: 'zero sugar drink', photographer: 'Gus Green' },
];
const SCRIPT = 'Sparkling water beats soda. It has zero sugar. Try it today.';

const pexels = await startPexelsFake(KEY, { photos: PHOTOS });
t.teardown(() => pexels.close());
const env = {
  OUTBOUND_ALLOW_IPS: '127.0.0.1',
  RATE_LIMIT_GENERATIONS: '1000',
  FACELESS_SCENE_SOURCE: 'stock_photo',
  PEXELS_API_KEY: KEY,
  PEXELS_API_BASE: pexels.url,
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-stock-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The share of the frame's pixels above the caption band near `rgb`. */
async function share(file: string, seconds: number, rgb: [number, number, number]): Promise<number> {
  const { data, info } = await sharp(await extractFrame({ path: file, type: 'video/mp4' }, seconds))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const rows = Math.round(info.height * 0.6);
  let n = 0;
  for (let i = 0; i < rows * info.width * 3; i += 3) {
    if (Math.abs(data[i] - rgb[0]) + Math.abs(data[i + 1] - rgb[1]) + Math.abs(data[i + 2] - rgb[2]) < 90) n++;
  }
  return n / (rows * info.width);
}

const queriesOf = () =>
  pexels
    .searches()
    .filter((s) => s.path === '/v1/search')
    .map((s) => s.query.get('query'));

t.test('stock photo scenes over HTTP: queries from the scene texts, the photos in the MP4, attribution recorded', async (t) => {
  const app = await startTestApp(t, env, { workers: true });
  const ws = await app.workspace({ credits: 1000 });
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  t.equal(created.status, 200, created.text);
  const id = created.body.video_id as number;
  const video = await poll(app, ws.key, `/api/v1/videos/${id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));

  t.same(
    [...queriesOf()].sort(),
    ['sparkling water beats soda', 'sparkling water beats', 'sparkling water', 'zero sugar', 'try today', 'today'].sort(),
    'keywords of each scene, then fewer until one finds a photo (or none is left)',
  );
  t.ok(
    pexels.searches().every((s) => s.authorization === KEY && s.query.get('orientation') === 'portrait'),
    'every search with the key and the video orientation',
  );
  t.same(
    [...pexels.downloads].sort(),
    [
      '/photos/2/pexels-photo-2.jpeg?auto=compress&cs=tinysrgb&dpr=2&h=650&w=940',
      '/photos/3/pexels-photo-3.jpeg?auto=compress&cs=tinysrgb&dpr=2&h=650&w=940',
    ],
    'each found photo downloaded once, at the rendition that covers 720×1280 (large2x), never the landscape one',
  );

  const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
  const scenes = (row.artifacts as any).scenes;
  t.match(scenes.sources, [
    {
      source: 'stock',
      queries: ['sparkling water beats soda', 'sparkling water beats', 'sparkling water'],
      stock: {
        engine: 'pexels',
        id: '2',
        query: 'sparkling water',
        width: 867,
        height: 1300,
        attribution: {
          provider: 'Pexels',
          authorName: 'Rosa Red',
          authorUrl: 'https://www.pexels.com/@rosa-red',
          pageUrl: 'https://www.pexels.com/photo/sparkling-water-glass-2/',
          licenseUrl: 'https://www.pexels.com/license/',
        },
      },
    },
    { source: 'stock', queries: ['zero sugar'], stock: { id: '3', attribution: { authorName: 'Gus Green' } } },
    { source: 'drawn', queries: ['try today', 'today'], fallback: 'no_results' },
  ]);
  t.equal(scenes.mediaIds.length, 3);
  // GET /videos/{id}: each scene's source and the photo's credit, and the stock library among the engines.
  t.same(
    video.scenes.map((sc: any) => sc.media_id),
    scenes.mediaIds,
  );
  const pexelsLicense = {
    license: 'Pexels License: free to use; crediting the creator and Pexels is appreciated',
    license_url: 'https://www.pexels.com/license/',
  };
  t.same(video.scenes[0], {
    media_id: scenes.mediaIds[0],
    source: 'stock',
    attribution: {
      provider: 'Pexels',
      author_name: 'Rosa Red',
      author_url: 'https://www.pexels.com/@rosa-red',
      page_url: 'https://www.pexels.com/photo/sparkling-water-glass-2/',
      ...pexelsLicense,
    },
  });
  t.match(video.scenes[1], {
    source: 'stock',
    attribution: {
      provider: 'Pexels',
      author_name: 'Gus Green',
      page_url: /^https:\/\/www\.pexels\.com\/photo\/.+-3\/$/,
      ...pexelsLicense,
    },
  });
  t.same(video.scenes[2], { media_id: scenes.mediaIds[2], source: 'drawn', attribution: null }, 'the scene no photo was found for: drawn');
  t.same(video.engines.stock, { kind: 'hosted', provider: 'pexels', model: null });
  t.same(video.engines.scene, { kind: 'local', provider: 'local', model: 'local-scene-renderer' }, 'the scene renderer crops and composes');

  // The MP4: each scene shows its photo (or not) above the caption band.
  const res = await fetch(video.url);
  const file = path.join(tmp, 'stock.mp4');
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  t.match(await probe({ path: file, type: 'video/mp4' }), { width: 1080, height: 1920 });
  const project = await app.request('GET', `/api/v1/editor/videos/${id}`, { key: ws.key });
  const items = (project.body.items as any[]).filter((i) => i.type === 'image' && i.layer === 0);
  t.equal(items.length, 3);
  const mid = (i: number) => items[i].from_seconds + items[i].duration_seconds / 2;
  const red: [number, number, number] = [255, 0, 0];
  const green: [number, number, number] = [0, 255, 0];
  const s1 = [await share(file, mid(0), red), await share(file, mid(0), green)];
  const s2 = [await share(file, mid(1), red), await share(file, mid(1), green)];
  const s3 = [await share(file, mid(2), red), await share(file, mid(2), green)];
  t.ok(s1[0] > 0.9 && s1[1] < 0.01, `scene 1 is the red photo (red ${s1[0].toFixed(2)}, green ${s1[1].toFixed(2)})`);
  t.ok(s2[1] > 0.9 && s2[0] < 0.01, `scene 2 is the green photo (green ${s2[1].toFixed(2)}, red ${s2[0].toFixed(2)})`);
  t.ok(s3[0] < 0.05 && s3[1] < 0.05, `scene 3 is drawn (red ${s3[0].toFixed(2)}, green ${s3[1].toFixed(2)})`);
});

t.test('an attempt cut off in the scenes stage: the next one skips the stored scenes without downloading them again', async (t) => {
  const app = await startTestApp(t, env);
  const ctx = app.service.ctx;
  const ws = await app.workspace({ credits: 1000 });
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  const videoId = created.body.video_id as number;
  const before = pexels.downloads.length;

  const abort = new AbortController();
  const tools = (signal: AbortSignal, onProgress: (stage: string, percent: number) => void = () => {}) => ({
    signal,
    progress: onProgress,
    annotate() {},
  });
  // Attempt 1: stopped as soon as the first scene is stored (the scenes stage reports past its start).
  await t.rejects(
    facelessJob.declaration.run(
      ctx,
      { id: 'a1', data: { videoId }, attempt: 1, lastAttempt: false },
      tools(abort.signal, (stage, percent) => {
        if (stage === 'scenes' && percent > 5) abort.abort(new Error('worker killed'));
      }),
    ),
  );
  // Let a scene already past its download finish its writes.
  await new Promise((r) => setTimeout(r, 1500));
  const [mid] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.notOk((mid.artifacts as any).scenes, 'the scenes stage did not finish');
  const storedIds = new Set((await ctx.db.select({ id: media.id }).from(media).where(eq(media.orgId, ws.orgId))).map((m) => m.id));
  t.ok(storedIds.size >= 1, `${storedIds.size} scene(s) stored by the first attempt`);
  const firstDownloads = pexels.downloads.slice(before);

  const resumedFrom = pexels.downloads.length;
  await facelessJob.declaration.run(
    ctx,
    { id: 'a2', data: { videoId }, attempt: 2, lastAttempt: false },
    tools(new AbortController().signal),
  );
  const [done] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(done.status, 'completed');
  const scenes = (done.artifacts as any).scenes;
  const again = pexels.downloads.slice(resumedFrom);
  for (const [i, id] of (scenes.mediaIds as string[]).entries()) {
    const src = scenes.sources[i];
    if (!storedIds.has(id) || src.source !== 'stock') continue;
    t.notOk(
      again.some((d) => d.startsWith(`/photos/${src.stock.id}/`)),
      `scene ${i + 1}, stored by the first attempt, is not downloaded again`,
    );
    t.ok(
      firstDownloads.some((d) => d.startsWith(`/photos/${src.stock.id}/`)),
      `scene ${i + 1} was downloaded by the first attempt`,
    );
  }
  const view = (await app.request('GET', `/api/v1/videos/${videoId}`, { key: ws.key })).body;
  t.same(
    view.scenes.map((sc: any) => [sc.source, sc.attribution?.author_name ?? null]),
    [
      ['stock', 'Rosa Red'],
      ['stock', 'Gus Green'],
      ['drawn', null],
    ],
    'the resumed video shows every scene’s source, the ones the first attempt stored too',
  );
  t.match(view.engines, { scene: { model: 'local-scene-renderer' }, stock: { kind: 'hosted', provider: 'pexels' } });
  t.match(scenes.sources, [
    { source: 'stock', stock: { id: '2', attribution: { authorName: 'Rosa Red' } } },
    { source: 'stock', stock: { id: '3', attribution: { authorName: 'Gus Green' } } },
    { source: 'drawn', fallback: 'no_results' },
  ]);
});
