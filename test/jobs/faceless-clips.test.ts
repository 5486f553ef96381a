// Faceless scenes that are clips, end to end over the HTTP API:
//   FACELESS_SCENE_SOURCE=stock_video against the Pexels fake (test/engines/fakes/pexels.ts, whose
//   video files are the item's colour with a white bar crossing it): each scene's keywords asked
//   of the video search, a clip found for it in the MP4 over its whole scene (moving: two frames
//   differ; a 2-second clip looped over a longer scene, never black), the caption band darkened
//   over the footage with the captions on it, a scene with no clip showing a stock photo, and the
//   record (scenes[i].source stock_video with the clip's credit, stock for the photo);
//   FACELESS_SCENE_SOURCE=video_model, FACELESS_VIDEO_MODEL=kling-video against the fal fake
//   (test/engines/fakes/fal.ts, answering ffmpeg's testsrc footage): one image-to-video request
//   per scene with the scene's still as image_url, its text as prompt and the duration covering
//   it, the footage in the scene, engines.video and each scene's provider job recorded.
// Then attempts cut off in the clips stage: the next attempt downloads no stored clip again and
// submits no second provider job (counted at the fakes). Without FAL_KEY the scenes keep their
// stills and the record says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { facelessVideos, media } from '../../src/db/schema/index.ts';
import { extractFrame, probe } from '../../src/media/ffmpeg.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { startFalFake } from '../engines/fakes/fal.ts';
import { startPexelsFake, type FakePhoto, type FakeVideo } from '../engines/fakes/pexels.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { cutOff, poll, saveMp4, tools } from '../helpers/image-model.ts';

const PEXELS_KEY = 'pexels-clips-key-77';
const FAL_KEY = 'fal-clips-id:fal-clips-secret';
const SCRIPT = 'Sparkling water beats soda. It has zero sugar. Try it today.';
const SCENES = ['Sparkling water beats soda.', 'It has zero sugar.', 'Try it today.'];
const RED: [number, number, number] = [255, 0, 0];
const GREEN: [number, number, number] = [0, 255, 0];
const BLUE: [number, number, number] = [0, 0, 255];

const VIDEOS: FakeVideo[] = [
  // A landscape clip matching the first scene too: never used for a portrait video.
  {
    id: 10,
    width: 1920,
    height: 1080,
    duration: 9,
    color: '#0000FF',
    alt: 'sparkling water wide',
    files: [{ width: 1280, height: 720, quality: 'hd' }],
  },
  {
    id: 11,
    width: 1080,
    height: 1920,
    duration: 9,
    color: '#FF0000',
    alt: 'sparkling water glass',
    files: [{ width: 720, height: 1280, quality: 'hd' }],
  },
  // Two seconds for the last scene, which lasts longer: looped.
  {
    id: 12,
    width: 1080,
    height: 1920,
    duration: 2,
    color: '#00FF00',
    alt: 'try today market',
    files: [{ width: 720, height: 1280, quality: 'hd' }],
  },
];
// The second scene has no clip: its still is this photo.
const PHOTOS: FakePhoto[] = [{ id: 21, width: 2000, height: 3000, color: '#0000FF', alt: 'zero sugar drink', photographer: 'Bea Blue' }];

const pexels = await startPexelsFake(PEXELS_KEY, { photos: PHOTOS, videos: VIDEOS });
const fal = await startFalFake(FAL_KEY);
t.teardown(() => Promise.all([pexels.close(), fal.close()]));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-clips-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

const base = { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000', PROVIDER_POLL_MS: '40' };
const stockEnv = { ...base, FACELESS_SCENE_SOURCE: 'stock_video', PEXELS_API_KEY: PEXELS_KEY, PEXELS_API_BASE: pexels.url };
const modelEnv = {
  ...base,
  FACELESS_SCENE_SOURCE: 'video_model',
  FACELESS_VIDEO_MODEL: 'kling-video',
  FAL_KEY,
  FAL_QUEUE_BASE: fal.url,
};
const KLING = 'fal-ai/kling-video/v2.1/standard/image-to-video';

/** Raw RGB of the frame at `seconds`. */
async function frameAt(file: string, seconds: number) {
  const png = await extractFrame({ path: file, type: 'video/mp4' }, seconds);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { png, data, width: info.width, height: info.height };
}
type Frame = Awaited<ReturnType<typeof frameAt>>;

/** Rows `y0`..`y1` (fractions) of a frame, as [r, g, b] triples. */
function* pixels(f: Frame, y0: number, y1: number): Generator<[number, number, number]> {
  for (let y = Math.round(y0 * f.height); y < Math.round(y1 * f.height); y++)
    for (let x = 0; x < f.width; x++) {
      const i = (y * f.width + x) * 3;
      yield [f.data[i], f.data[i + 1], f.data[i + 2]];
    }
}
/** The share of the region's pixels near `rgb`. */
function share(f: Frame, rgb: readonly number[], y0 = 0.15, y1 = 0.6): number {
  let n = 0;
  let all = 0;
  for (const p of pixels(f, y0, y1)) {
    all++;
    if (Math.abs(p[0] - rgb[0]) + Math.abs(p[1] - rgb[1]) + Math.abs(p[2] - rgb[2]) < 90) n++;
  }
  return n / all;
}
/** Mean brightness (0–255) of a region. */
function brightness(f: Frame, y0: number, y1: number): number {
  let sum = 0;
  let all = 0;
  for (const p of pixels(f, y0, y1)) {
    all++;
    sum += (p[0] + p[1] + p[2]) / 3;
  }
  return sum / all;
}
/** Mean absolute difference of two frames' pixels in rows `y0`..`y1` and columns `x0`..`x1` (fractions; default: above the caption band). */
function difference(a: Frame, b: Frame, { x0 = 0, x1 = 1, y0 = 0, y1 = 0.6 } = {}): number {
  let sum = 0;
  let all = 0;
  for (let y = Math.round(y0 * a.height); y < Math.round(y1 * a.height); y++)
    for (let x = Math.round(x0 * a.width); x < Math.round(x1 * a.width); x++)
      for (let c = 0; c < 3; c++) {
        const i = (y * a.width + x) * 3 + c;
        sum += Math.abs(a.data[i] - b.data[i]);
        all++;
      }
  return sum / all;
}

/** The scene items (the scene track's, by start) of the video's editor project, and the overlay item. */
async function sceneItems(app: TestApp, key: string, id: number) {
  const project = (await app.request('GET', `/api/v1/editor/videos/${id}`, { key })).body;
  const sceneTrack = project.tracks.find((tr: any) => tr.order === 0);
  const items = (project.items as any[]).filter((i) => i.track_id === sceneTrack.track_id).sort((a, b) => a.from_seconds - b.from_seconds);
  const overlay = (project.items as any[]).find((i) => i.type === 'image' && i.layer === 1);
  return { items, overlay, captions: (project.items as any[]).find((i) => i.type === 'captions') };
}

/** No frame of the video is black above the caption band (sampled every half second). */
async function assertNeverBlack(t: { fail(m: string): void; pass(m: string): void }, file: string, duration: number) {
  for (let s = 0.1; s < duration - 0.1; s += 0.5) {
    const f = await frameAt(file, s);
    const dark = share(f, [0, 0, 0], 0, 0.6);
    if (dark > 0.5) t.fail(`the frame at ${s.toFixed(1)} s is black (${dark.toFixed(2)})`);
  }
  t.pass('no black frame above the caption band');
}

t.test('stock_video over HTTP: a stock clip per scene, moving in its scene, looped, a photo where none is found', async (t) => {
  const app = await startTestApp(t, stockEnv, { workers: true });
  const ws = await app.workspace({ credits: 1000 });
  const searchesBefore = pexels.searches().length;
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '10' } });
  t.equal(created.status, 200, created.text);
  const id = created.body.video_id as number;
  const video = await poll(app, ws.key, `/api/v1/videos/${id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));

  const videoSearches = pexels
    .searches()
    .slice(searchesBefore)
    .filter((s) => s.path === '/videos/search');
  t.same(
    videoSearches.map((s) => s.query.get('query')).sort(),
    ['sparkling water beats soda', 'sparkling water beats', 'sparkling water', 'zero sugar', 'sugar', 'try today'].sort(),
    'each scene’s keywords asked of the video search (fewer until one finds a clip)',
  );
  t.ok(
    videoSearches.every(
      (s) => s.authorization === PEXELS_KEY && s.query.get('orientation') === 'portrait' && s.query.get('size') === 'small',
    ),
    'every video search with the key, the video orientation and the size class of 720×1280',
  );
  const clipDownloads = pexels.downloads.filter((d) => d.startsWith('/video-files/'));
  t.same(
    clipDownloads.sort(),
    ['/video-files/11/110_720_1280.mp4', '/video-files/12/120_720_1280.mp4'],
    'each clip downloaded once, never the landscape one',
  );

  t.match(video.scenes, [
    {
      source: 'stock_video',
      clip_media_id: /^[0-9a-f-]{36}$/,
      attribution: { provider: 'Pexels', author_name: 'Filmmaker 11', page_url: 'https://www.pexels.com/video/sparkling-water-glass-11/' },
    },
    { source: 'stock', attribution: { author_name: 'Bea Blue' } },
    { source: 'stock_video', attribution: { author_name: 'Filmmaker 12', license_url: 'https://www.pexels.com/license/' } },
  ]);
  t.notOk('clip_media_id' in video.scenes[1], 'the photo scene has no clip');
  t.same(video.engines.stock, { kind: 'hosted', provider: 'pexels', model: null });
  const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
  const clips = (row.artifacts as any).clips;
  t.match(clips.sources, [
    {
      source: 'stock_video',
      queries: ['sparkling water beats soda', 'sparkling water beats', 'sparkling water'],
      stock: { id: '11', durationSeconds: 9 },
    },
    { source: 'still', queries: ['zero sugar'], fallback: 'no_results' },
    { source: 'stock_video', stock: { id: '12', durationSeconds: 2, attribution: { authorName: 'Filmmaker 12' } } },
  ]);
  const rows = await app.service.ctx.db.select().from(media).where(eq(media.id, clips.mediaIds[2]));
  t.match(rows[0], { kind: 'video', contentType: 'video/mp4', width: 1080, height: 1920, hasAudio: false }, 'a clip is a video media row');

  const file = await saveMp4(video.url, tmp, 'stock-clips.mp4');
  const probed = await probe({ path: file, type: 'video/mp4' });
  t.match(probed, { width: 1080, height: 1920 });
  const { items, overlay, captions } = await sceneItems(app, ws.key, id);
  t.same(
    items.map((i) => [i.type, i.media_id]),
    [
      ['video', clips.mediaIds[0]],
      ['image', video.scenes[1].media_id],
      ['video', clips.mediaIds[2]],
    ],
  );
  t.ok(overlay, 'the caption scrim and brand overlay over the scenes');
  const last = items[2];
  t.ok(last.duration_seconds > 4, `the last scene (${last.duration_seconds} s) lasts longer than its 2-second clip`);
  for (const [i, colour] of [
    [0, RED],
    [2, GREEN],
  ] as const) {
    const item = items[i];
    // The scene's own span: up to the next scene's start (the item lasts under the next scene's transition).
    const end = items[i + 1]?.from_seconds ?? item.from_seconds + item.duration_seconds;
    const [a, b] = [item.from_seconds + 0.3, end - 0.3];
    const fa = await frameAt(file, a);
    const fb = await frameAt(file, b);
    fs.writeFileSync(path.join(tmp, `scene-${i}-a.png`), fa.png);
    fs.writeFileSync(path.join(tmp, `scene-${i}-b.png`), fb.png);
    t.ok(
      share(fa, colour) > 0.7 && share(fb, colour) > 0.7,
      `scene ${i + 1} shows its clip (${share(fa, colour).toFixed(2)}, ${share(fb, colour).toFixed(2)})`,
    );
    t.ok(
      difference(fa, fb) > 3,
      `scene ${i + 1} moves: frames at ${a.toFixed(1)} s and ${b.toFixed(1)} s differ (${difference(fa, fb).toFixed(1)})`,
    );
    // The caption band: darker than the footage above it.
    t.ok(brightness(fa, 0.85, 1) < 0.6 * brightness(fa, 0.15, 0.6), `scene ${i + 1}: the caption band is darkened over the footage`);
  }
  const photo = await frameAt(file, items[1].from_seconds + items[1].duration_seconds / 2);
  t.ok(share(photo, BLUE) > 0.7, `scene 2 (no clip) is the stock photo (${share(photo, BLUE).toFixed(2)})`);
  // Captions over the footage: white (or highlighted) words in the band while a cue is shown.
  const cue = captions.captions.find((c: any) => c.startMs / 1000 >= last.from_seconds - 0.05);
  const cf = await frameAt(file, (cue.startMs + cue.endMs) / 2000);
  fs.writeFileSync(path.join(tmp, 'caption.png'), cf.png);
  const band = [captions.transform.top, captions.transform.top + captions.transform.height] as const;
  const words = share(cf, [255, 255, 255], ...band) + share(cf, [255, 212, 0], ...band);
  t.ok(words > 0.004, `the caption "${cue.text}" is on the footage (${words.toFixed(3)} of the band)`);
  await assertNeverBlack(t, file, probed.duration_seconds ?? 10);
});

t.test('stock_video: an attempt cut off in the clips stage; the next downloads no stored clip again', async (t) => {
  const app = await startTestApp(t, stockEnv);
  const ctx = app.service.ctx;
  const ws = await app.workspace({ credits: 1000 });
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '10' } });
  const videoId = created.body.video_id as number;
  const abort = new AbortController();
  const before = pexels.downloads.length;
  const seen: string[] = [];
  await t.rejects(
    facelessJob.declaration.run(
      ctx,
      { id: 'c1', data: { videoId }, attempt: 1, lastAttempt: false },
      {
        ...tools(abort.signal),
        progress: (stage: string, percent: number) => {
          seen.push(`${stage} ${percent}`);
          if (stage === 'clips' && percent > 50) abort.abort(new Error('worker killed'));
        },
      },
    ),
  );
  await new Promise((r) => setTimeout(r, 1500));
  const [mid] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.notOk((mid.artifacts as any).clips, 'the clips stage did not finish');
  const stored = (await ctx.db.select().from(media).where(eq(media.orgId, ws.orgId))).filter((m) => m.kind === 'video');
  t.ok(stored.length >= 1, `${stored.length} clip(s) stored by the first attempt (${seen.join(', ')})`);
  const first = pexels.downloads.slice(before);
  const resumedFrom = pexels.downloads.length;
  const searchesFrom = pexels.searches().length;
  await facelessJob.declaration.run(
    ctx,
    { id: 'c2', data: { videoId }, attempt: 2, lastAttempt: false },
    tools(new AbortController().signal),
  );
  const [done] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(done.status, 'completed', JSON.stringify(done.error));
  const clips = (done.artifacts as any).clips;
  const again = pexels.downloads.slice(resumedFrom);
  const storedIds = new Set(stored.map((m) => m.id));
  for (const [i, id] of (clips.mediaIds as (string | null)[]).entries()) {
    if (!id || !storedIds.has(id)) continue;
    const file = `/video-files/${clips.sources[i].stock.id}/`;
    t.ok(
      first.some((d) => d.startsWith(file)),
      `scene ${i + 1}'s clip was downloaded by the first attempt`,
    );
    t.notOk(
      again.some((d) => d.startsWith(file)),
      `scene ${i + 1}'s clip, stored, is not downloaded again`,
    );
  }
  t.notOk(
    pexels
      .searches()
      .slice(searchesFrom)
      .some((s) => s.path === '/videos/search' && s.query.get('query')?.startsWith('sparkling')),
    'the stored first scene is not searched again',
  );
  t.match(clips.sources, [
    { source: 'stock_video', stock: { id: '11' } },
    { source: 'still' },
    { source: 'stock_video', stock: { id: '12' } },
  ]);
});

t.test('video_model (kling-video on fal) over HTTP: each scene’s still animated, the footage in its scene', async (t) => {
  const app = await startTestApp(t, modelEnv, { workers: true });
  const ws = await app.workspace({ credits: 1000 });
  const from = fal.requests.size;
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  t.equal(created.status, 200, created.text);
  const id = created.body.video_id as number;
  const video = await poll(app, ws.key, `/api/v1/videos/${id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  const calls = [...fal.requests.values()].slice(from);
  t.equal(calls.length, 3, 'one image-to-video request per scene');
  const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
  const artifacts = row.artifacts as any;
  for (const [i, text] of SCENES.entries()) {
    const call = calls.find((c) => c.input.prompt.startsWith(text));
    if (!call) {
      t.fail(`no request for scene ${i + 1}`);
      continue;
    }
    t.equal(call.endpoint, KLING);
    t.equal(call.input.duration, '5', 'the shortest duration covering the scene');
    t.match(call.input.prompt, /No text, lettering/);
    // The first frame is the scene's stored still.
    const still = await app.service.ctx.storage.readBuffer(
      (await app.service.ctx.db.select().from(media).where(eq(media.id, artifacts.scenes.mediaIds[i])))[0].storageKey,
    );
    t.ok(Buffer.from(call.input.image_url.split(',')[1], 'base64').equals(still), `scene ${i + 1}: its still is the first frame`);
    t.match(artifacts.clips.sources[i], {
      source: 'model_video',
      model: { modelSlug: 'kling-video', variantId: 'standard', provider: 'fal', providerJobId: call.id, durationSeconds: 5 },
    });
  }
  t.same(video.engines.video, { kind: 'hosted', provider: 'fal', model: KLING });
  t.same(
    video.scenes.map((s: any) => [s.source, s.attribution]),
    [
      ['model_video', null],
      ['model_video', null],
      ['model_video', null],
    ],
  );
  const file = await saveMp4(video.url, tmp, 'model-clips.mp4');
  const { items } = await sceneItems(app, ws.key, id);
  t.same(
    items.map((i) => i.type),
    ['video', 'video', 'video'],
  );
  for (const [i, item] of items.entries()) {
    const fa = await frameAt(file, item.from_seconds + 0.2);
    const fb = await frameAt(file, item.from_seconds + 0.7);
    fs.writeFileSync(path.join(tmp, `model-scene-${i}.png`), fb.png);
    // testsrc's moving part is its scrolling gradient, low in the frame: compared at the left
    // edge, where no caption is ever drawn (captions keep 6 % from the sides).
    const moved = difference(fa, fb, { x0: 0, x1: 0.05, y0: 0.7, y1: 0.9 });
    t.ok(moved > 3, `scene ${i + 1}: the footage moves (${moved.toFixed(1)})`);
    // testsrc's colour bars: saturated pixels of several hues, which no drawn still has.
    const hues = [RED, GREEN, BLUE, [255, 255, 0], [0, 255, 255], [255, 0, 255]].filter((c) => share(fb, c, 0.15, 0.6) > 0.02);
    t.ok(hues.length >= 3, `scene ${i + 1}: the fake's colour bars (${hues.length} hues)`);
  }
  await assertNeverBlack(t, file, 6);
});

t.test('video_model: an attempt cut off while clips are made; the next polls them, no second submission', async (t) => {
  const app = await startTestApp(t, modelEnv);
  const ctx = app.service.ctx;
  const ws = await app.workspace({ credits: 1000 });
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  const videoId = created.body.video_id as number;
  const before = fal.requests.size;
  const release = fal.hold();
  await cutOff(
    (signal) => facelessJob.declaration.run(ctx, { id: 'm1', data: { videoId }, attempt: 1, lastAttempt: false }, tools(signal)),
    () => fal.requests.size >= before + 2,
  );
  const first = [...fal.requests.values()].slice(before);
  t.equal(first.length, 2, 'two clips were being made (two at a time)');
  const [mid] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  const stored = Object.values((mid.artifacts as any).clipJobs ?? {}).map((r: any) => r.id);
  t.same(stored.sort(), first.map((r) => r.id).sort(), 'both provider job ids stored before polling');
  release();
  const downloadsBefore = fal.seen.filter((s) => s.path.startsWith('/files/')).length;
  await facelessJob.declaration.run(
    ctx,
    { id: 'm2', data: { videoId }, attempt: 2, lastAttempt: false },
    tools(new AbortController().signal),
  );
  const [done] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(done.status, 'completed', JSON.stringify(done.error));
  const all = [...fal.requests.values()].slice(before);
  t.equal(all.length, 3, 'three submissions for three scenes: the two submitted were polled, not submitted again');
  t.equal(fal.seen.filter((s) => s.path.startsWith('/files/')).length - downloadsBefore, 3, 'each clip downloaded once');
  t.same((done.artifacts as any).clips.sources.map((s: any) => s.model.providerJobId).sort(), all.map((r) => r.id).sort());
});

t.test('video_model without the provider’s key: the scenes keep their stills, and the record says why', async (t) => {
  const app = await startTestApp(t, { ...modelEnv, FAL_KEY: '' }, { workers: true });
  const ws = await app.workspace({ credits: 1000 });
  const before = fal.requests.size;
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  const video = await poll(app, ws.key, `/api/v1/videos/${created.body.video_id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  t.equal(fal.requests.size, before, 'nothing asked of the provider');
  t.notOk(video.engines.video, 'no video engine');
  t.same(
    video.scenes.map((s: any) => s.source),
    ['drawn', 'drawn', 'drawn'],
  );
  const [f] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, video.id));
  t.match((f.artifacts as any).clips.sources[0], { source: 'still', fallback: 'engine_unavailable', requires: 'FAL_KEY' });
  const file = await saveMp4(video.url, tmp, 'no-key.mp4');
  await assertNeverBlack(t, file, 6);
});
