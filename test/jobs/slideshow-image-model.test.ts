// Slideshow slides from the catalog's AI image model (SLIDESHOW_IMAGE_MODEL=flux-image) end to
// end over the HTTP API against the Replicate fake (test/engines/fakes/replicate.ts: Flux and
// Flux Kontext, answering a flat #2a7fff picture): one prediction per slide with its copy in the
// prompt, a product image edited by Kontext with its bytes, the picture in every slide PNG and
// carousel frame, and the records (per slide: model, provider, job id, seconds; engines.image).
// An attempt cut off while a slide's picture is made: the next one polls that prediction and pays
// for no second one (counted at the fake). Without the provider's key the slides are drawn here
// as before, and the record says why. A slug the catalog lacks refuses start-up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { checkImageModels, ImageModelConfigError } from '../../src/boot/image-models.ts';
import { loadConfig } from '../../src/config.ts';
import { slideshows } from '../../src/db/schema/index.ts';
import { slideGeometry } from '../../src/engines/local/slide.ts';
import { extractFrame } from '../../src/media/ffmpeg.ts';
import { slideshowJob } from '../../src/pipelines/slideshow/job.ts';
import { SLIDE_SECONDS } from '../../src/pipelines/slideshow/stages.ts';
import { png, startFake } from '../engines/fakes/common.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';
import { startTestApp } from '../helpers/app.ts';
import { BLUE, bytesOf, cutOff, FLUX, imageModelEnv, poll, saveMp4, share, tools } from '../helpers/image-model.ts';

const TOKEN = 'r8_image_model_token';
const replicate = await startReplicateFake(TOKEN);
const refs = await startFake((_req, _res, json) => json(404, {}));
// A product photo: a red square on white.
refs.files.set('product.png', {
  type: 'image/png',
  bytes: await sharp({ create: { width: 400, height: 400, channels: 3, background: '#ffffff' } })
    .composite([{ input: await png(200, 200, '#e01010'), left: 100, top: 100 }])
    .png()
    .toBuffer(),
});
t.teardown(() => Promise.all([replicate.close(), refs.close()]));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'slideshow-image-model-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
const env = imageModelEnv(replicate.url, TOKEN);
const app = await startTestApp(t, env, { workers: true });

/** The predictions created at the fake since `from`. */
const since = (from: number) => [...replicate.predictions.values()].slice(from);

/** The product slot of a 1080×1350 card slide, as fractions of the slide (inset a little, clear of the avatar). */
function slotBox() {
  const g = slideGeometry(1080, 1350).productSlot;
  return { x: (g.x + g.w * 0.3) / 1080, y: (g.y + g.h * 0.1) / 1350, w: (g.w * 0.6) / 1080, h: (g.h * 0.5) / 1350 };
}

t.test(
  'a slideshow with SLIDESHOW_IMAGE_MODEL=flux-image: one Flux prediction per slide, its picture in every slide and frame',
  async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const before = replicate.predictions.size;
    const res = await app.request('POST', '/api/v1/slideshows', {
      key: ws.key,
      body: { prompt: 'Why sparkling water beats soda at work', slide_count: 3, aspect_ratio: '4:5', generate_text_overlays: true },
    });
    t.equal(res.status, 200, res.text);
    const body = await poll(app, ws.key, `/api/v1/slideshows/${res.body.slideshow_id}`);
    t.equal(body.status, 'completed', JSON.stringify(body.error));
    t.same(body.engines.image, FLUX, 'the image model is among the engines');

    const calls = since(before);
    t.equal(calls.length, 3, 'one prediction per slide');
    const [row] = await app.service.ctx.db.select().from(slideshows).where(eq(slideshows.id, body.id));
    const copy = row.copy as { slides: { heading: string; body: string }[] };
    for (const [i, call] of calls.entries()) {
      t.equal(call.model, 'black-forest-labs/flux-1.1-pro', `slide ${i}: the text variant's model`);
      t.ok(call.input.prompt.includes(copy.slides[i].heading.trim()), `slide ${i}: its heading is in the prompt`);
      t.match(call.input.prompt, /Why sparkling water beats soda at work/, `slide ${i}: the slideshow's prompt too`);
      t.match(call.input.prompt, /No text, lettering/, `slide ${i}: no words in the picture`);
      t.equal(call.input.aspect_ratio, '3:2', `slide ${i}: the card's picture slot's shape`);
    }
    const state = row.state as any;
    for (let i = 0; i < 3; i++) {
      t.match(state.slidePictures[i], {
        source: 'model',
        modelSlug: 'flux-image',
        variantId: 'text-to-image',
        kind: 'hosted',
        provider: 'replicate',
        model: 'black-forest-labs/flux-1.1-pro',
        providerJobId: calls[i].id,
      });
      t.ok(state.slidePictures[i].seconds >= 0);
    }
    t.same(state.runs.slides.engines.image, FLUX, 'the slides stage names the image engine');

    // The slides: the model's picture in the card's slot; the brand corner and the dots as before.
    for (const slide of body.slides) {
      const img = await bytesOf(slide.image_url);
      t.ok((await share(img, BLUE, slotBox(), 30)) > 0.95, `slide ${slide.index}: the model's picture fills the slot`);
      t.ok((await share(img, BLUE, { x: 0, y: 0, w: 0.05, h: 0.05 }, 30)) < 0.05, `slide ${slide.index}: the corner is the background`);
    }
    // The carousel: each slide's frame shows it.
    const file = await saveMp4(body.video_url, tmp, 'slideshow.mp4');
    for (let i = 0; i < 3; i++) {
      const frame = await extractFrame({ path: file, type: 'video/mp4' }, i * SLIDE_SECONDS + SLIDE_SECONDS / 2);
      fs.writeFileSync(path.join(tmp, `slide-frame-${i}.png`), frame);
      t.ok((await share(frame, BLUE, slotBox())) > 0.9, `frame of slide ${i}: the model's picture`);
    }
  },
);

t.test('a slideshow with a product image: Flux Kontext edits the product photo for each slide', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const before = replicate.predictions.size;
  const res = await app.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: {
      prompt: 'Our red cube lamp',
      slide_count: 3,
      aspect_ratio: '4:5',
      product_image_urls: [`${refs.url}/files/product.png`],
      product_context: 'A lamp shaped like a red cube',
    },
  });
  t.equal(res.status, 200, res.text);
  const body = await poll(app, ws.key, `/api/v1/slideshows/${res.body.slideshow_id}`);
  t.equal(body.status, 'completed', JSON.stringify(body.error));
  const calls = since(before);
  t.equal(calls.length, 3, 'one prediction per slide');
  for (const call of calls) {
    t.equal(call.model, 'black-forest-labs/flux-kontext-pro', 'the edit variant');
    t.match(call.input.prompt, /A lamp shaped like a red cube/);
    t.match(call.input.input_image, /^data:image\/png;base64,/);
    const sent = Buffer.from(call.input.input_image.split(',')[1], 'base64');
    t.ok((await share(sent, [224, 16, 16], { x: 0.3, y: 0.3, w: 0.4, h: 0.4 }, 10)) > 0.99, 'the product photo itself is sent');
  }
  t.same(body.engines.image, { kind: 'hosted', provider: 'replicate', model: 'black-forest-labs/flux-kontext-pro' });
  for (const slide of body.slides) {
    const img = await bytesOf(slide.image_url);
    t.ok((await share(img, BLUE, slotBox(), 30)) > 0.95, `slide ${slide.index}: the edited picture, not the product photo`);
    t.ok((await share(img, [224, 16, 16], slotBox(), 30)) < 0.01);
  }
});

t.test('a slideshow attempt cut off while a slide picture is made: the next attempt polls it, no second prediction', async (t) => {
  const direct = await startTestApp(t, env);
  const ctx = direct.service.ctx;
  const ws = await direct.workspace({ credits: 1000 });
  const res = await direct.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: { prompt: 'Three tips for calm mornings', slide_count: 3 },
  });
  const slideshowId = res.body.slideshow_id as string;
  const before = replicate.predictions.size;
  const release = replicate.hold();
  await cutOff(
    (signal) => slideshowJob.declaration.run(ctx, { id: 's1', data: { slideshowId }, attempt: 1, lastAttempt: false }, tools(signal)),
    () => replicate.predictions.size > before,
  );
  const first = since(before);
  t.equal(first.length, 1, 'the first attempt submitted the first slide only');
  const [mid] = await ctx.db.select().from(slideshows).where(eq(slideshows.id, slideshowId));
  t.same((mid.state as any).slideJobs, { 0: { provider: 'replicate', id: first[0].id } }, 'its job id was stored');
  release();
  await slideshowJob.declaration.run(
    ctx,
    { id: 's2', data: { slideshowId }, attempt: 2, lastAttempt: false },
    tools(new AbortController().signal),
  );
  const [done] = await ctx.db.select().from(slideshows).where(eq(slideshows.id, slideshowId));
  t.equal(done.status, 'completed');
  const all = since(before);
  t.equal(all.length, 3, 'three predictions for three slides: the first was polled again, not submitted again');
  t.equal((done.state as any).slidePictures[0].providerJobId, first[0].id, 'slide 1 is the first attempt’s prediction');
  t.same(
    [1, 2].map((i) => (done.state as any).slidePictures[i].providerJobId),
    all.slice(1).map((p) => p.id),
  );
});

t.test('no key for the model’s provider: the slides are drawn here as before, and the record says why', async (t) => {
  const local = await startTestApp(t, { ...env, REPLICATE_API_TOKEN: '' }, { workers: true });
  const ws = await local.workspace({ credits: 1000 });
  const before = replicate.predictions.size;
  const s = await local.request('POST', '/api/v1/slideshows', { key: ws.key, body: { prompt: 'Calm mornings', slide_count: 3 } });
  const slideshow = await poll(local, ws.key, `/api/v1/slideshows/${s.body.slideshow_id}`);
  t.equal(slideshow.status, 'completed', JSON.stringify(slideshow.error));
  t.equal(replicate.predictions.size, before, 'nothing asked of the provider');
  t.notOk(slideshow.engines.image, 'no image engine');
  const [row] = await local.service.ctx.db.select().from(slideshows).where(eq(slideshows.id, slideshow.id));
  t.same((row.state as any).slidePictures[0], {
    source: 'local',
    modelSlug: 'flux-image',
    variantId: 'text-to-image',
    reason: 'engine_unavailable',
    requires: 'REPLICATE_API_TOKEN',
  });
});

t.test('an image model the catalog lacks, or one that makes no images, refuses start-up naming the variable', async (t) => {
  t.throws(() => checkImageModels({ slideshowImageModel: 'no-such-model', facelessImageModel: undefined }), ImageModelConfigError);
  t.throws(() => checkImageModels({ slideshowImageModel: undefined, facelessImageModel: 'veo-3' }), {
    name: 'ImageModelConfigError',
    message: /FACELESS_IMAGE_MODEL=veo-3 makes no images/,
  });
  t.doesNotThrow(() => checkImageModels({ slideshowImageModel: 'gpt-image', facelessImageModel: 'gemini-flash-image' }));
  t.throws(() => loadConfig({ FACELESS_SCENE_SOURCE: 'image_model' }), /FACELESS_SCENE_SOURCE=image_model needs FACELESS_IMAGE_MODEL/);
  t.throws(() => loadConfig({ SLIDESHOW_IMAGE_MODEL: 'Flux Image' }), /SLIDESHOW_IMAGE_MODEL must be the slug/);
});
