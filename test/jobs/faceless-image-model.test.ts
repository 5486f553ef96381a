// Faceless scenes from the catalog's AI image model (FACELESS_SCENE_SOURCE=image_model,
// FACELESS_IMAGE_MODEL=flux-image) end to end over the HTTP API against the Replicate fake
// (test/engines/fakes/replicate.ts, answering a flat #2a7fff picture): one prediction per scene
// with its description and the request's style in the prompt, the picture in the scene frames of
// the MP4, and the records (per scene: model, provider, job id; engines.image; GET /videos/{id}
// scenes with source model). An attempt cut off while scene pictures are made: the next one
// polls those predictions and pays for no second one (counted at the fake). Without the
// provider's key the scenes are drawn here as before, and the record says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import t from 'tap';
import { facelessVideos } from '../../src/db/schema/index.ts';
import { extractFrame } from '../../src/media/ffmpeg.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';
import { startTestApp } from '../helpers/app.ts';
import { BLUE, cutOff, FLUX, imageModelEnv, poll, saveMp4, share, tools } from '../helpers/image-model.ts';

const TOKEN = 'r8_image_model_token';
const replicate = await startReplicateFake(TOKEN);
t.teardown(() => replicate.close());
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-image-model-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
const env = imageModelEnv(replicate.url, TOKEN);
const SCRIPT = 'Sparkling water beats soda. It has zero sugar. Try it today.';
const app = await startTestApp(t, env, { workers: true });

/** The predictions created at the fake since `from`. */
const since = (from: number) => [...replicate.predictions.values()].slice(from);

t.test(
  'a faceless video with FACELESS_SCENE_SOURCE=image_model: one Flux prediction per scene, its picture in the scene frames',
  async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const before = replicate.predictions.size;
    const res = await app.request('POST', '/api/v1/faceless-videos', {
      key: ws.key,
      body: { script: SCRIPT, duration: '6', image_style: 'cinematic' },
    });
    t.equal(res.status, 200, res.text);
    const id = res.body.video_id as number;
    const video = await poll(app, ws.key, `/api/v1/videos/${id}`);
    t.equal(video.status, 'completed', JSON.stringify(video.error));
    const calls = since(before);
    t.equal(calls.length, 3, 'one prediction per scene');
    const scenes = ['Sparkling water beats soda.', 'It has zero sugar.', 'Try it today.'];
    t.same(calls.map((c) => c.input.prompt.split('\n\n')[0]).sort(), [...scenes].sort(), 'each scene description is a prompt');
    for (const call of calls) {
      t.equal(call.model, 'black-forest-labs/flux-1.1-pro');
      t.equal(call.input.aspect_ratio, '9:16');
      t.match(call.input.prompt, /Style: cinematic/);
      t.match(call.input.prompt, /No text, lettering/);
    }
    t.same(video.engines.image, FLUX);
    t.same(
      video.scenes.map((s: any) => [s.source, s.attribution]),
      [
        ['model', null],
        ['model', null],
        ['model', null],
      ],
    );
    const [row] = await app.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id));
    const sources = (row.artifacts as any).scenes.sources;
    for (const [i, text] of scenes.entries()) {
      const call = calls.find((c) => c.input.prompt.startsWith(text))!;
      t.match(sources[i], { source: 'model', model: { provider: 'replicate', providerJobId: call.id, modelSlug: 'flux-image' } });
    }

    const file = await saveMp4(video.url, tmp, 'faceless.mp4');
    const project = await app.request('GET', `/api/v1/editor/videos/${id}`, { key: ws.key });
    const items = (project.body.items as any[]).filter((i) => i.type === 'image' && i.layer === 0);
    t.equal(items.length, 3);
    for (const [i, item] of items.entries()) {
      const frame = await extractFrame({ path: file, type: 'video/mp4' }, item.from_seconds + item.duration_seconds / 2);
      fs.writeFileSync(path.join(tmp, `scene-frame-${i}.png`), frame);
      const above = await share(frame, BLUE, { x: 0, y: 0.15, w: 1, h: 0.4 });
      t.ok(above > 0.9, `scene ${i + 1}: the model's picture above the captions (${above.toFixed(2)})`);
    }
  },
);

t.test('a faceless attempt cut off while scene pictures are made: the next attempt polls them, no second prediction', async (t) => {
  const direct = await startTestApp(t, env);
  const ctx = direct.service.ctx;
  const ws = await direct.workspace({ credits: 1000 });
  const res = await direct.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  const videoId = res.body.video_id as number;
  const before = replicate.predictions.size;
  const release = replicate.hold();
  await cutOff(
    (signal) => facelessJob.declaration.run(ctx, { id: 'f1', data: { videoId }, attempt: 1, lastAttempt: false }, tools(signal)),
    () => replicate.predictions.size >= before + 2,
  );
  const first = since(before);
  t.equal(first.length, 2, 'two scenes were being made (two at a time)');
  const [mid] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  const stored = Object.values((mid.artifacts as any).sceneJobs ?? {}).map((r: any) => r.id);
  t.same(stored.sort(), first.map((p) => p.id).sort(), 'both job ids were stored');
  release();
  await facelessJob.declaration.run(
    ctx,
    { id: 'f2', data: { videoId }, attempt: 2, lastAttempt: false },
    tools(new AbortController().signal),
  );
  const [done] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(done.status, 'completed', JSON.stringify(done.error));
  t.equal(since(before).length, 3, 'three predictions for three scenes: the two submitted were polled, not submitted again');
  const ids = (done.artifacts as any).scenes.sources.map((s: any) => s.model.providerJobId);
  t.same(
    ids.sort(),
    since(before)
      .map((p) => p.id)
      .sort(),
  );
});

t.test('no key for the model’s provider: the scenes are drawn here as before, and the record says why', async (t) => {
  const local = await startTestApp(t, { ...env, REPLICATE_API_TOKEN: '' }, { workers: true });
  const ws = await local.workspace({ credits: 1000 });
  const before = replicate.predictions.size;
  const v = await local.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: SCRIPT, duration: '6' } });
  const video = await poll(local, ws.key, `/api/v1/videos/${v.body.video_id}`);
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  t.equal(replicate.predictions.size, before, 'nothing asked of the provider');
  t.notOk(video.engines.image, 'no image engine');
  t.same(
    video.scenes.map((sc: any) => sc.source),
    ['drawn', 'drawn', 'drawn'],
  );
  const [f] = await local.service.ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, video.id));
  t.match((f.artifacts as any).scenes.sources[0], { source: 'drawn', fallback: 'engine_unavailable', requires: 'REPLICATE_API_TOKEN' });
});
