// Faceless videos over HTTP: inputs checked before any charge (400/404 naming the field), the
// price, idempotent replay, the states and stages of GET /videos/{id}, the MP4 itself (size,
// duration, audio, captions burned in at the voice's word times, brand colour and reference
// pixels), the editor project with the same id, refund on a terminal failure, tenant isolation.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { brandKits, creditLedger, facelessVideos, organizations, webhookEndpoints, webhookEvents } from '../../src/db/schema/index.ts';
import { extractFrame, probe } from '../../src/media/ffmpeg.ts';
import { facelessProgress } from '../../src/pipelines/faceless-video/rows.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { maxVolume, SILENT_DB } from '../helpers/sound.ts';

const magenta = await sharp({ create: { width: 300, height: 150, channels: 3, background: '#FF00FF' } })
  .png()
  .toBuffer();
const green = await sharp({ create: { width: 480, height: 360, channels: 3, background: '#00FF00' } })
  .png()
  .toBuffer();
const host = http.createServer((req, res) => {
  if (req.url === '/logo.png') return res.writeHead(200, { 'content-type': 'image/png', 'content-length': magenta.length }).end(magenta);
  if (req.url === '/ref.png') return res.writeHead(200, { 'content-type': 'image/png', 'content-length': green.length }).end(green);
  res.writeHead(404, { 'content-type': 'text/plain' }).end('missing');
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `http://127.0.0.1:${(host.address() as { port: number }).port}`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const db = app.service.ctx.db;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-test-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SCRIPT = 'Sparkling water beats soda. It has zero sugar. Try it today.';

async function credits(orgId: string): Promise<number> {
  const [o] = await db.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId));
  return o.credits;
}

interface Polled {
  video: any;
  statuses: string[];
  stages: string[];
  progress: number[];
}

async function poll(a: TestApp, key: string, id: number, timeoutMs = 120_000): Promise<Polled> {
  const statuses: string[] = [];
  const stages: string[] = [];
  const progress: number[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await a.request('GET', `/api/v1/videos/${id}`, { key });
    if (res.status !== 200) throw new Error(`GET /videos/${id}: ${res.status} ${res.text}`);
    const v = res.body;
    if (statuses.at(-1) !== v.status) statuses.push(v.status);
    if (v.stage && stages.at(-1) !== v.stage) stages.push(v.stage);
    progress.push(v.progress);
    if (v.status === 'completed' || v.status === 'error') return { video: v, statuses, stages, progress };
    if (Date.now() > end) throw new Error(`video ${id} still ${v.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function download(url: string, name: string): Promise<string> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`download ${res.status}`);
  const file = path.join(tmp, name);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

/** Raw RGB pixels of a frame at `seconds`. */
async function frame(file: string, seconds: number) {
  const png = await extractFrame({ path: file, type: 'video/mp4' }, seconds);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

type Frame = Awaited<ReturnType<typeof frame>>;

/** Pixels in the rows [top, bottom) matching `pred`. */
function count(f: Frame, top: number, bottom: number, pred: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let y = Math.max(0, Math.round(top)); y < Math.min(f.height, Math.round(bottom)); y++) {
    for (let x = 0; x < f.width; x++) {
      const i = (y * f.width + x) * 3;
      if (pred(f.data[i], f.data[i + 1], f.data[i + 2])) n++;
    }
  }
  return n;
}
const near = (rgb: [number, number, number], tol: number) => (r: number, g: number, b: number) =>
  Math.abs(r - rgb[0]) + Math.abs(g - rgb[1]) + Math.abs(b - rgb[2]) < tol;
/** Caption text: near-white or the karaoke yellow. */
const captionInk = (r: number, g: number, b: number) => (r > 200 && g > 200 && b > 200) || (r > 200 && g > 170 && b < 90);

t.test('bad inputs are 400/404 naming the field, and nothing is charged', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const other = await app.workspace({ credits: 10 });
  const [foreignKit] = await db.insert(brandKits).values({ orgId: other.orgId, brandId: 1, kitName: 'Theirs', kitData: {} }).returning();
  const ok = { script: SCRIPT, duration: '6', voice_id: 'ava-bright' };
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['1:1 aspect', { ...ok, aspect_ratio: '1:1' }, 400, 'aspect_ratio'],
    ['11 URLs', { ...ok, reference_image_urls: Array.from({ length: 11 }, (_, i) => `${base}/ref.png?${i}`) }, 400, 'reference_image_urls'],
    ['a private URL', { ...ok, reference_image_urls: ['http://10.1.2.3/a.png'] }, 400, 'reference_image_urls[0]'],
    ['an unknown voice', { ...ok, voice_id: 'nobody-voice' }, 404, 'voice_id'],
    ['a foreign brand kit', { ...ok, brand_kit_id: foreignKit.id }, 404, 'brand_kit_id'],
    ['a too short duration', { ...ok, duration: '3' }, 400, 'duration'],
    ['a too long duration', { ...ok, duration: '600' }, 400, 'duration'],
    ['no prompt or script', { duration: '6' }, 400, 'prompt'],
    ['a blank prompt', { prompt: '   ', duration: '6' }, 400, 'prompt'],
    ['a voice of another language', { ...ok, voice_id: 'sofia-es', language: 'English' }, 400, 'voice_id'],
    ['an unknown language', { ...ok, voice_id: undefined, language: 'Klingon' }, 400, 'language'],
    ['an unknown image style', { ...ok, image_style: 'banana' }, 400, 'image_style'],
    ['an unknown AI style', { ...ok, selected_ai_styles: ['sparkles'] }, 400, 'selected_ai_styles'],
    ['an unknown caption style', { ...ok, caption_style: 'wobble' }, 400, 'caption_style'],
    ['a script too long for the duration', { ...ok, script: 'word '.repeat(80) }, 400, 'script'],
    ['a prompt in a language the writer does not write', { prompt: 'お茶の話', language: 'Japanese', duration: '6' }, 400, 'language'],
  ];
  for (const [what, body, status, field] of cases) {
    const res = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body });
    t.equal(res.status, status, `${what}: ${status}`);
    t.ok(
      JSON.stringify(res.body.error).includes(field),
      `${what}: the error names ${field} (${JSON.stringify(res.body.error).slice(0, 200)})`,
    );
  }
  t.equal(await credits(ws.orgId), 1000, 'nothing was charged');
  t.equal((await db.select().from(facelessVideos).where(eq(facelessVideos.orgId, ws.orgId))).length, 0, 'no video was queued');
});

t.test('402 when the workspace cannot pay; nothing is queued', async (t) => {
  const ws = await app.workspace({ credits: 39 });
  const res = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script: SCRIPT, duration: '6', voice_id: 'ava-bright' },
  });
  t.equal(res.status, 402);
  t.match(res.body.error, { code: 'insufficient_credits', context: { credits_required: 40, credits_available: 39 } });
  t.equal(await credits(ws.orgId), 39);
  // Price rule: the voice's credits per started 30 seconds (16:9 at 45 s: 2 × 50).
  const rich = await app.workspace({ credits: 99 });
  const long = await app.request('POST', '/api/v1/faceless-videos', {
    key: rich.key,
    body: { script: SCRIPT, duration: '45', aspect_ratio: '16:9', voice_id: 'ava-bright' },
  });
  t.equal(long.status, 402);
  t.match(long.body.error, { context: { credits_required: 100 } });
});

t.test('a faceless video end to end: charge, replay, states, the MP4, captions, brand, reference, editor', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const other = await app.workspace({ credits: 1000 });
  const [kit] = await db
    .insert(brandKits)
    .values({ orgId: ws.orgId, brandId: 7, kitName: 'Acme', kitData: { colors: ['#E11D48', '#1E40AF'], logo_url: `${base}/logo.png` } })
    .returning();
  const body = {
    script: SCRIPT,
    title: 'Swap your soda',
    duration: '5',
    voice_id: 'ava-bright',
    language: 'English',
    image_style: 'neon',
    caption_style: 'pop',
    brand_kit_id: kit.id,
    reference_image_urls: [`${base}/ref.png`],
  };
  const created = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body, headers: { 'idempotency-key': 'fv-1' } });
  t.equal(created.status, 200, created.text);
  t.match(created.body, {
    object: 'faceless_video_generation',
    status: 'queued',
    title: 'Swap your soda',
    credits_deducted: 40,
    remaining_credits: 960,
  });
  const id = created.body.video_id as number;
  const replay = await app.request('POST', '/api/v1/faceless-videos', { key: ws.key, body, headers: { 'idempotency-key': 'fv-1' } });
  t.equal(replay.status, 200);
  t.match(replay.body, { video_id: id, idempotent_replay: true, credits_deducted: 40 });
  t.equal(await credits(ws.orgId), 960, 'charged once');

  const foreign = await app.request('GET', `/api/v1/videos/${id}`, { key: other.key });
  t.equal(foreign.status, 404, "another workspace's id is 404");

  const { video, statuses, stages, progress } = await poll(app, ws.key, id);
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  t.ok(statuses.includes('generating'), `states seen: ${statuses.join(' → ')}`);
  t.ok(
    stages.length >= 2 && stages.every((s) => ['script', 'scenes', 'voiceover', 'captions', 'render'].includes(s)),
    `stages seen: ${stages.join(' → ')}`,
  );
  t.same(
    progress,
    [...progress].sort((a, b) => a - b),
    'progress never goes back',
  );
  t.match(video, { kind: 'faceless', progress: 100, stage: null, title: 'Swap your soda' });
  t.notOk('write' in video.engines, 'a given script: no writer made it');
  t.same(Object.keys(video.engines).sort(), ['render', 'scene', 'speech'], 'no stock library, no transcription');
  t.ok(Math.abs(video.duration_seconds - 5) <= 0.5, `duration ${video.duration_seconds} within 10 % of 5`);
  t.ok(video.size_bytes > 10_000);

  const file = await download(video.url, 'a.mp4');
  t.equal(fs.statSync(file).size, video.size_bytes);
  const p = await probe({ path: file, type: 'video/mp4' });
  t.match(p, { width: 1080, height: 1920, video_codec: 'h264', audio_codec: 'aac', has_audio: true });
  t.ok((maxVolume(file) ?? -200) > SILENT_DB, `narration and music are heard (peak ${maxVolume(file)} dB)`);
  t.ok(Math.abs(p.duration_seconds! - 5) <= 0.5, `MP4 lasts ${p.duration_seconds}`);

  // The editor project with the same id: scenes, voiceover, captions.
  const project = await app.request('GET', `/api/v1/editor/videos/${id}`, { key: ws.key });
  t.equal(project.status, 200);
  const items = project.body.items as any[];
  const scenes = items.filter((i) => i.type === 'image' && i.layer === 0);
  t.equal(scenes.length, 3, 'one scene per sentence');
  t.equal(scenes[0].from_seconds, 0, 'the first scene starts at 0 (no black frame)');
  t.ok(items.some((i) => i.type === 'audio' && i.audio_role === 'voiceover'));
  t.ok(
    items.some((i) => i.type === 'audio' && i.audio_role === 'music'),
    'a music bed',
  );
  const captions = items.find((i) => i.type === 'captions');
  t.ok(captions?.captions?.length >= 2, 'word-timed cues');
  t.equal((await app.request('GET', `/api/v1/editor/videos/${id}`, { key: other.key })).status, 404);
  const edited = await app.request('PATCH', `/api/v1/editor/videos/${id}`, {
    key: ws.key,
    body: {
      operations: [
        { type: 'set_item_animation', item_id: scenes[1].item_id, enter: { type: 'pan', direction: 'left', duration_seconds: 1 } },
      ],
    },
  });
  t.equal(edited.status, 200, `the generated project is editable: ${edited.text.slice(0, 200)}`);
  t.equal(edited.body.version, 2);
  t.match(
    (await app.request('GET', `/api/v1/videos/${id}`, { key: ws.key })).body,
    { kind: 'faceless', status: 'completed' },
    'still the faceless video',
  );

  // Captions burned in at the voice's word times, and only then.
  const band = { top: captions.transform.top * 1920 - 20, bottom: (captions.transform.top + captions.transform.height) * 1920 + 20 };
  const cues = captions.captions as { startMs: number; endMs: number; words: { startMs: number; endMs: number }[] }[];
  const word = cues[1].words[0];
  const atWord = await frame(file, (word.startMs + word.endMs) / 2000);
  const lastEnd = cues.at(-1)!.endMs / 1000;
  t.ok(lastEnd < 4.8, `the narration ends at ${lastEnd} s, before the video`);
  const afterWords = await frame(file, Math.min(4.9, (lastEnd + 5) / 2));
  const inkAtWord = count(atWord, band.top, band.bottom, captionInk);
  const inkAfter = count(afterWords, band.top, band.bottom, captionInk);
  t.ok(inkAtWord > 3000 && inkAtWord > 4 * (inkAfter + 100), `caption pixels at a word ${inkAtWord}, after the narration ${inkAfter}`);

  // The captions in the asked style; the scenes change with transitions; the brand on an overlay
  // that does not move over the panning scenes, its name inside the frame's margins.
  t.equal(captions.style.caption_style, 'pop', 'the caption style asked for');
  t.ok(
    scenes.slice(1).every((sc, i) => sc.transition?.from_item_id === scenes[i].item_id && sc.transition.overlap_seconds > 0),
    'each scene after the first enters over the one before',
  );
  const overlay = items.find((i) => i.type === 'image' && i.layer === 1);
  t.match(overlay, { from_seconds: 0, animation: null }, 'the caption scrim and brand: one still overlay');
  t.ok(Math.abs(overlay.duration_seconds - project.body.duration_seconds) < 0.01, 'over the whole video');
  const [row] = await db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
  const manifest = (row.artifacts as any).render.manifest;
  t.match(manifest, { width: 1080, height: 1920, safeZone: { top: 0.14, bottom: 0.2 } }, 'a media manifest for the quality checker');
  t.same(
    manifest.sceneStarts,
    scenes.map((sc) => sc.from_seconds),
    'its scene starts',
  );
  const brand = manifest.texts.find((x: any) => x.role === 'brand');
  t.equal(brand?.text, 'Acme', "the brand's name is placed");
  t.ok(
    brand.box.x >= 1080 * 0.04 && brand.box.x + brand.box.w <= 1080 * 0.96 && brand.box.y >= 1920 * 0.14,
    'inside the margins, below the UI zone',
  );
  t.ok(manifest.texts.filter((x: any) => x.role === 'caption').length === cues.length, 'every caption cue');
  t.ok(manifest.narration.length >= 1, 'the narration spans');

  // Brand colour and the reference image's pixels.
  const mid = await frame(file, 1);
  t.ok(count(mid, 0, 1920, near([0xe1, 0x1d, 0x48], 70)) > 5000, 'the brand colour is drawn');
  t.ok(count(mid, 0, 1920, near([0, 255, 0], 90)) > 50_000, 'the reference image is composited');
  t.ok(count(mid, 0, 1920 * 0.3, near([255, 0, 255], 90)) > 3000, "the brand kit's logo is drawn");

  const ledger = await db.select().from(creditLedger).where(eq(creditLedger.orgId, ws.orgId));
  t.equal(ledger.filter((l) => l.reason === 'faceless_video_charge').length, 1);
  t.equal(ledger.filter((l) => l.reason === 'faceless_video_refund').length, 0);
});

t.test('from a prompt in Spanish, 16:9, another style: the written script, full 1920×1080, black and white', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: {
      prompt: 'Por qué el agua con gas es el cambio más fácil para dejar los refrescos',
      language: 'Spanish',
      duration: '8',
      aspect_ratio: '16:9',
      image_style: 'vintage',
      selected_flux_dev_styles: ['black_and_white'],
      selected_ai_styles: ['grain'],
    },
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.credits_deducted, 50, "the Spanish default voice's 16:9 price");
  const { video } = await poll(app, ws.key, res.body.video_id);
  const project = await app.request('GET', `/api/v1/editor/videos/${res.body.video_id}`, { key: ws.key });
  const scenes = (project.body.items as any[]).filter((i) => i.type === 'image' && i.layer === 0);
  // No provider configured: the record names the local engines that made it.
  const local = (model: string) => ({ kind: 'local', provider: 'local', model });
  t.same(
    video.engines,
    {
      write: local('local-writer'),
      scene: local('local-scene-renderer'),
      speech: { ...local('flite+espeak-ng'), timings: 'engine' },
      render: local('ffmpeg'),
    },
    'the local writer, scene renderer, eSpeak NG (its own word timings) and ffmpeg',
  );
  t.same(
    video.scenes,
    scenes.map((s) => ({ media_id: s.media_id, source: 'drawn', attribution: null })),
    'every scene drawn here, in the order of the image track',
  );
  // A video made before engines and scene sources were recorded reads cleanly: no engines, every scene drawn.
  const [row] = await db.select().from(facelessVideos).where(eq(facelessVideos.videoId, res.body.video_id));
  const { runs: _runs, ...older } = row.artifacts as Record<string, unknown>;
  await db.update(facelessVideos).set({ artifacts: older }).where(eq(facelessVideos.videoId, res.body.video_id));
  const old = await app.request('GET', `/api/v1/videos/${res.body.video_id}`, { key: ws.key });
  t.equal(old.status, 200);
  t.same(old.body.engines, {}, 'no engines recorded, none shown');
  t.same(old.body.scenes, video.scenes);
  t.ok(scenes.length >= 5 && scenes.length <= 7, `${scenes.length} scenes: a hook, three to five beats, a call to action`);
  const cues = (project.body.items as any[]).find((i) => i.type === 'captions').captions as { text: string }[];
  t.ok(cues.length >= 3, 'captions of the written narration');
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  const file = await download(video.url, 'b.mp4');
  const p = await probe({ path: file, type: 'video/mp4' });
  t.match(p, { width: 1920, height: 1080, has_audio: true });
  t.ok(Math.abs(p.duration_seconds! - 8) <= 0.8, `MP4 lasts ${p.duration_seconds}`);
  // black_and_white: the scene (above the caption band) has no saturated pixel.
  const f = await frame(file, 1);
  const coloured = count(f, 0, 1080 * 0.6, (r, g, b) => Math.max(r, g, b) - Math.min(r, g, b) > 40);
  t.ok(coloured < 2000, `${coloured} saturated pixels in a black-and-white scene`);
});

t.test('a reference that fails at render time: error, refunded once', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  await db
    .insert(webhookEndpoints)
    .values({ orgId: ws.orgId, url: 'https://127.0.0.1:9/hook', eventTypes: ['faceless_video.failed'], secret: 'whsec_dGVzdA==' });
  const res = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script: SCRIPT, duration: '6', reference_image_urls: [`${base}/gone.png`] },
  });
  t.equal(res.status, 200);
  t.equal(await credits(ws.orgId), 60);
  const { video } = await poll(app, ws.key, res.body.video_id);
  t.equal(video.status, 'error');
  t.match(video.error, { code: 'input_unavailable', context: { field: 'reference_image_urls[0]', credits_refunded: 40 } });
  t.equal(video.stage, 'scenes', 'the stage it failed in');
  t.equal(video.url, null);
  t.equal(await credits(ws.orgId), 100, 'refunded');
  const ledger = await db.select().from(creditLedger).where(eq(creditLedger.orgId, ws.orgId));
  t.equal(ledger.filter((l) => l.reason === 'faceless_video_refund').length, 1, 'refunded once');
  const events = await db.select().from(webhookEvents).where(eq(webhookEvents.orgId, ws.orgId));
  t.equal(events.length, 1, 'one faceless_video.failed event');
  t.match(JSON.parse(events[0].body), {
    type: 'faceless_video.failed',
    data: { object: 'video', id: res.body.video_id, kind: 'faceless', status: 'error' },
  });
});

t.test('progress never goes backwards: a late report of the last stage does not undo the next one', async (t) => {
  // Progress reports are written without waiting: the end of `script` can land after the start of
  // `scenes` (the same percent). A finished video is put back in `generating` for the check.
  const [row] = await db.select().from(facelessVideos).where(eq(facelessVideos.status, 'completed')).limit(1);
  t.ok(row, 'a finished video to use');
  const id = row.videoId;
  const state = async () =>
    (
      await db
        .select({ stage: facelessVideos.stage, progress: facelessVideos.progress })
        .from(facelessVideos)
        .where(eq(facelessVideos.videoId, id))
    )[0];
  await db.update(facelessVideos).set({ status: 'generating', stage: 'scenes', progress: 20 }).where(eq(facelessVideos.videoId, id));
  await facelessProgress(app.service.ctx, id, 'script', 20);
  t.same(await state(), { stage: 'scenes', progress: 20 }, 'the late end of script is ignored');
  await facelessProgress(app.service.ctx, id, 'script', 12);
  t.same(await state(), { stage: 'scenes', progress: 20 }, 'so is an earlier percent');
  await facelessProgress(app.service.ctx, id, 'scenes', 26);
  t.same(await state(), { stage: 'scenes', progress: 26 }, 'the current stage moves on');
  await facelessProgress(app.service.ctx, id, 'voiceover', 26);
  t.same(await state(), { stage: 'voiceover', progress: 26 }, 'and the next stage starts at the same percent');
  await db
    .update(facelessVideos)
    .set({ status: row.status, stage: row.stage, progress: row.progress })
    .where(eq(facelessVideos.videoId, id));
});
