// Exports: POST /editor/videos/{id}/exports queues a render on pg-boss, the worker renders the
// project with the timeline renderer, GET …/exports/{export_id} reports progress and a signed
// URL. The MP4 is checked frame by frame: known colours at known times and places (trims, rates,
// fit, transform, layer order, fades, text boxes, karaoke highlight), audio where it should be
// and silence where it should not, and the duration.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { extractFrame, FFMPEG_PATH, probe } from '../../src/media/ffmpeg.ts';
import { startTestApp } from '../helpers/app.ts';
import { maxVolume, SILENT_DB } from '../helpers/sound.ts';
import { addMedia, colorPng, createProject, download, editOk, exportAndWait, upload } from './helpers.ts';

const app = await startTestApp(t, {}, { workers: true });
const ws = await app.workspace();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'render-test-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

/** A 3 s source: red, then blue, then green, one second each, with a 440 Hz tone. */
function triColor(): Buffer {
  const file = path.join(work, 'tri.mp4');
  execFileSync(FFMPEG_PATH, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'color=c=red:s=320x180:r=25:d=1',
    '-f',
    'lavfi',
    '-i',
    'color=c=blue:s=320x180:r=25:d=1',
    '-f',
    'lavfi',
    '-i',
    'color=c=lime:s=320x180:r=25:d=1',
    '-f',
    'lavfi',
    '-i',
    'sine=f=440:d=3:sample_rate=48000',
    '-filter_complex',
    '[0:v][1:v][2:v]concat=n=3:v=1:a=0[v]',
    '-map',
    '[v]',
    '-map',
    '3:a',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-g',
    '5',
    '-c:a',
    'aac',
    '-t',
    '3',
    file,
  ]);
  return fs.readFileSync(file);
}

async function pixel(file: string, seconds: number, x: number, y: number): Promise<[number, number, number]> {
  const png = await extractFrame(file, seconds);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * 3;
  return [data[o], data[o + 1], data[o + 2]];
}

/** Pixels of a region whose colour is within `tol` of `rgb`. */
async function count(
  file: string,
  seconds: number,
  box: { x: number; y: number; w: number; h: number },
  rgb: [number, number, number],
  tol = 60,
): Promise<number> {
  const png = await extractFrame(file, seconds);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const o = (y * info.width + x) * 3;
      if (Math.abs(data[o] - rgb[0]) <= tol && Math.abs(data[o + 1] - rgb[1]) <= tol && Math.abs(data[o + 2] - rgb[2]) <= tol) n++;
    }
  }
  return n;
}

const near = (got: number[], want: number[], tol = 45) => got.every((v, i) => Math.abs(v - want[i]) <= tol);

/** Mean volume (dB) of [from, from+dur) of the file's audio (-200 for digital silence). */
function meanVolumeOf(file: string, from: number, dur: number): number {
  const out = spawnSync(
    FFMPEG_PATH,
    ['-hide_banner', '-nostats', '-ss', String(from), '-t', String(dur), '-i', file, '-vn', '-af', 'volumedetect', '-f', 'null', '-'],
    { encoding: 'utf8' },
  );
  const m = /mean_volume: (-?[\d.]+|-inf) dB/.exec(out.stderr);
  return !m || m[1] === '-inf' ? -200 : Number(m[1]);
}

t.test('trims, rates, fit, transform, layers and fades, frame by frame', async (t) => {
  const tri = await upload(app, ws.key, 'tri.mp4', 'video/mp4', triColor());
  const white = await upload(app, ws.key, 'white.png', 'image/png', await colorPng('#ffffff', 50, 50));
  const yellow = await upload(app, ws.key, 'yellow.png', 'image/png', await colorPng('#ffff00', 100, 50));
  const p = await createProject(app, ws.key, { aspect_ratio: '16:9', width: 640, height: 360, fps: 25 });
  const a = await addMedia(app, ws.key, p.id, { media_id: tri.media.id, from_seconds: 0, duration_seconds: 2 });
  const b = await addMedia(app, ws.key, p.id, { media_id: tri.media.id, from_seconds: 2, duration_seconds: 1 });
  const corner = await addMedia(app, ws.key, p.id, { media_id: white.media.id, from_seconds: 0, duration_seconds: 4, fit: 'fill' });
  const back = await addMedia(app, ws.key, p.id, { media_id: yellow.media.id, from_seconds: 3, duration_seconds: 1, fit: 'contain' });
  const faded = await addMedia(app, ws.key, p.id, { media_id: white.media.id, from_seconds: 3, duration_seconds: 1, fit: 'fill' });
  await editOk(app, ws.key, p.id, [
    { type: 'set_item_source', item_id: a.item.item_id, source_start_seconds: 1 },
    { type: 'set_item_source', item_id: b.item.item_id, playback_rate: 2 },
    { type: 'set_item_transform', item_id: corner.item.item_id, left: 0.75, top: 0, width: 0.25, height: 0.25 },
    { type: 'set_item_layer_order', item_id: corner.item.item_id, position: 'front' },
    { type: 'set_item_transform', item_id: faded.item.item_id, left: 0, top: 0.75, width: 0.25, height: 0.25 },
    { type: 'set_item_animation', item_id: faded.item.item_id, enter: { type: 'fade', duration_seconds: 1 } },
  ]);
  const { queued, done, seen } = await exportAndWait(app, ws.key, p.id, { quality: 'draft' });
  t.match(queued, {
    object: 'editor_export',
    video_id: p.id,
    status: 'queued',
    progress: 0,
    url: null,
    quality: 'draft',
    width: 640,
    height: 360,
    fps: 25,
    duration_seconds: 4,
  });
  t.equal(done.status, 'completed', JSON.stringify(done.error));
  t.equal(done.progress, 100);
  t.ok(done.size_bytes > 1000);
  t.ok(seen.has('completed'));
  const file = await download(done.url, 'a.mp4');
  const pr = await probe(file);
  t.match(pr, { video_codec: 'h264', audio_codec: 'aac', width: 640, height: 360, has_audio: true });
  t.ok((maxVolume(file) ?? -200) > SILENT_DB, `the clip's tone is heard (peak ${maxVolume(file)} dB)`);
  t.ok(Math.abs((pr.duration_seconds ?? 0) - 4) < 0.15, `duration ${pr.duration_seconds}`);

  t.ok(near(await pixel(file, 0.5, 320, 180), [0, 0, 255]), 'trimmed 1 s in: blue at 0.5 s');
  t.ok(near(await pixel(file, 1.5, 320, 180), [0, 255, 0]), 'green at 1.5 s');
  t.ok(near(await pixel(file, 2.2, 320, 180), [255, 0, 0]), 'double speed: source 0.4 s (red) at 2.2 s');
  t.ok(near(await pixel(file, 2.8, 320, 180), [0, 0, 255]), 'double speed: source 1.6 s (blue) at 2.8 s');
  t.ok(near(await pixel(file, 0.5, 620, 20), [255, 255, 255]), 'the corner image: top right, in front');
  t.ok(near(await pixel(file, 0.5, 460, 20), [0, 0, 255]), 'left of the corner box: the video');
  t.ok(near(await pixel(file, 3.5, 620, 20), [255, 255, 255]), 'still in front over the last second');
  // contain: a 2:1 image in the 16:9 frame: yellow in the middle band, black above and below
  t.ok(near(await pixel(file, 3.5, 320, 180), [255, 255, 0]), 'contain: yellow in the middle');
  t.ok(near(await pixel(file, 3.5, 320, 10), [0, 0, 0]), 'contain: letterbox above');
  // The fading white box lies over the yellow image: half way, white and yellow mix.
  const mid = await pixel(file, 3.5, 40, 320);
  t.ok(mid[0] > 200 && mid[1] > 200 && mid[2] > 70 && mid[2] < 190, `fade-in half way: half white over yellow at 3.5 s (${mid})`);
  t.ok(near(await pixel(file, 3.1, 40, 320), [255, 255, 0], 60), 'barely faded in at 3.1 s');
  t.ok(near(await pixel(file, 3.96, 40, 320), [255, 255, 255], 60), 'fully faded in at the end');
  t.ok(meanVolumeOf(file, 0.2, 2.6) > -40, 'the clip tone is in the mix');
  t.ok(meanVolumeOf(file, 3.1, 0.8) < -70, 'silence when no audio plays');

  const other = await app.workspace();
  t.equal((await app.request('GET', `/api/v1/editor/videos/${p.id}/exports/${done.id}`, { key: other.key })).status, 404);
  t.equal((await app.request('POST', `/api/v1/editor/videos/${p.id}/exports`, { key: other.key })).status, 404);
  t.equal(
    (await app.request('GET', `/api/v1/editor/videos/${p.id}/exports/00000000-0000-4000-8000-000000000000`, { key: ws.key })).status,
    404,
  );
});

t.test('text boxes, word-highlighted captions, voiceover and music levels', async (t) => {
  const p = await createProject(app, ws.key, { aspect_ratio: '16:9', width: 640, height: 360, fps: 25 });
  const r = await editOk(app, ws.key, p.id, [
    {
      type: 'add_text',
      text: 'BOXED',
      from_seconds: 0,
      duration_seconds: 2.5,
      style: { top: 0.05, font_size: 48, background_color: '#FF00FF', color: '#FFFFFF' },
    },
    {
      type: 'add_captions',
      from_seconds: 0,
      duration_seconds: 3,
      captions: [{ text: 'MMMM', startMs: 0, endMs: 3000, words: [{ text: 'MMMM', startMs: 1000, endMs: 1600 }] }],
      style: { top: 0.6, font_size: 72, color: '#FFFFFF', highlight_color: '#00FF00', stroke_width: 0 },
    },
    { type: 'add_voiceover', text: 'Hello there', from_seconds: 0.2 },
  ]);
  const voiceId = r.applied_operations[2].item_ids[0];
  const { done } = await exportAndWait(app, ws.key, p.id);
  t.equal(done.status, 'completed', JSON.stringify(done.error));
  const file = await download(done.url, 'b.mp4');
  const band = { x: 0, y: 0, w: 640, h: 70 };
  t.ok((await count(file, 1, band, [255, 0, 255])) > 800, 'the text box is magenta');
  const caption = { x: 100, y: 200, w: 440, h: 120 };
  const whiteBefore = await count(file, 0.5, caption, [255, 255, 255]);
  const greenBefore = await count(file, 0.5, caption, [0, 255, 0]);
  const greenAfter = await count(file, 2.2, caption, [0, 255, 0]);
  const whiteAfter = await count(file, 2.2, caption, [255, 255, 255]);
  t.ok(whiteBefore > 300 && greenBefore < 20, `before the word: white glyphs (${whiteBefore} white, ${greenBefore} green)`);
  t.ok(greenAfter > 300 && whiteAfter < whiteBefore / 4, `after the word: highlighted (${greenAfter} green, ${whiteAfter} white)`);
  t.equal(await count(file, 2.8, band, [255, 0, 255]), 0, 'the text is gone after its end');
  const vo = r.video.items.find((i: { item_id: string }) => i.item_id === voiceId);
  t.ok(meanVolumeOf(file, 0.3, Math.min(0.8, vo.duration_seconds - 0.2)) > -45, 'the voiceover is audible');
  t.ok(
    Math.abs(((await probe(file)).duration_seconds ?? 0) - Math.max(3, 0.2 + vo.duration_seconds)) < 0.15,
    'the duration is the end of the last item',
  );
});

t.test('exports snapshot the version; an empty project is refused', async (t) => {
  const empty = await createProject(app, ws.key);
  const res = await app.request('POST', `/api/v1/editor/videos/${empty.id}/exports`, { key: ws.key, body: {} });
  t.equal(res.status, 400);
  t.match(res.body.error.message, /no items/);
  const p = await createProject(app, ws.key, { aspect_ratio: '1:1', width: 200, height: 200, fps: 10 });
  const img = await upload(app, ws.key, 'red.png', 'image/png', await colorPng('#ff0000'));
  await addMedia(app, ws.key, p.id, { media_id: img.media.id, duration_seconds: 1 });
  const q = await app.request('POST', `/api/v1/editor/videos/${p.id}/exports`, { key: ws.key });
  t.equal(q.status, 200, 'no body is fine');
  t.equal(q.body.version, 2);
  await editOk(app, ws.key, p.id, [{ type: 'set_title', title: 'changed after export' }]);
  const { done } = await exportAndWait(app, ws.key, p.id);
  t.equal(done.version, 3, 'a new export renders the new version');
  const first = await app.request('GET', `/api/v1/editor/videos/${p.id}/exports/${q.body.id}`, { key: ws.key });
  t.equal(first.body.version, 2, 'the earlier export keeps its version');
  const lib = await app.request('GET', '/api/v1/editor/media?media_type=video&query=changed', { key: ws.key });
  t.equal(lib.body.data.length, 1, 'the export is in the media library');
  const file = await download(done.url, 'still.mp4');
  t.equal((await probe(file)).has_audio, false, 'nothing audible in the project: no audio stream, never a silent track');
  t.equal(lib.body.data[0].has_audio, false, 'and the library says so');
});
