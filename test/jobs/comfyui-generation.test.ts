// An AI model generation made by a self-hosted ComfyUI server, end to end over the HTTP API and the
// worker, against the ComfyUI fake (test/engines/fakes/comfyui.ts): with COMFYUI_MODELS naming
// flux-1.1-pro, its text-to-image variant is made by the bundled workflow on ComfyUI, not by
// Replicate though its token is set; the fake saw the prompt at the workflow's prompt node, and
// the delivered PNG is the fake's picture at the requested size. An attempt that fails after
// queueing the prompt (the output download answered 503) is retried by polling the stored prompt:
// one POST /prompt in all.
import sharp from 'sharp';
import t from 'tap';
import { seedOf } from '../../src/engines/hosted/hosted.ts';
import { startTestApp } from '../helpers/app.ts';
import { colourOf, startComfyuiFake } from '../engines/fakes/comfyui.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';

const comfy = await startComfyuiFake();
const replicate = await startReplicateFake('r8_test_token');
t.teardown(() => Promise.all([comfy.close(), replicate.close()]));

const app = await startTestApp(
  t,
  {
    COMFYUI_URL: comfy.url,
    COMFYUI_MODELS: 'flux-1.1-pro',
    REPLICATE_API_BASE: replicate.url,
    REPLICATE_API_TOKEN: 'r8_test_token',
    PROVIDER_POLL_MS: '40',
  },
  { workers: true },
);
const sql = app.service.ctx.sql;

async function generate(body: Record<string, unknown>) {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'ai_model', ...body } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const id = res.body.generations[0].id as string;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const g = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
    if (g.body.status !== 'generating') return { ws, id, g: g.body, charged: res.body.credits_deducted as number };
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function pixel(url: string): Promise<string> {
  const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
  const { data } = await sharp(bytes).extract({ left: 10, top: 10, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
  return `#${[...data.subarray(0, 3)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

t.test('flux-1.1-pro text to image is made by ComfyUI: the fake saw the prompt, the PNG is its picture', async (t) => {
  const prompt = 'A red sneaker on a beach';
  const { id, g, charged } = await generate({ model_slug: 'flux-image', variant_id: 'text-to-image', prompt, aspect_ratio: '9:16' });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.same(g.engine, { kind: 'self_hosted', provider: 'comfyui', model: 'flux-1.1-pro', preview: false, requires: null }, 'labelled');
  t.equal(charged, 8, 'the catalog price: a real model, on the operator’s server');
  t.match(g.output, { content_type: 'image/png', width: 576, height: 1024 });
  const queued = [...comfy.prompts.values()].filter((p) => p.graph['6'].inputs?.text === prompt);
  t.equal(queued.length, 1, 'one prompt queued, the caller’s prompt at the CLIPTextEncode node');
  t.same([queued[0].graph['5'].inputs?.width, queued[0].graph['5'].inputs?.height], [576, 1024], 'the size at EmptyLatentImage');
  t.equal(queued[0].graph['3'].inputs?.seed, seedOf(id), 'the generation’s seed at the KSampler');
  const meta = await sharp(Buffer.from(await (await fetch(g.url)).arrayBuffer())).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 576, 1024]);
  t.equal(await pixel(g.url), colourOf(prompt, seedOf(id)), 'the delivered pixels are the fake’s');
  t.equal(replicate.seen.length, 0, 'Replicate, though keyed, was not asked');
  const [row] = await sql`select provider_job from generations where id = ${id}`;
  t.same(row.provider_job, { provider: 'comfyui', id: queued[0].id }, 'the prompt id is stored on the generation');
});

t.test('an attempt failing after the prompt was queued is retried by polling the same prompt', async (t) => {
  const prompt = 'A blue kettle, retried';
  comfy.failViews = 1;
  const { id, g } = await generate({ model_slug: 'flux-image', variant_id: 'text-to-image', prompt, aspect_ratio: '1:1' });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.equal(comfy.failViews, 0, 'the first download failed');
  const queued = [...comfy.prompts.values()].filter((p) => p.graph['6'].inputs?.text === prompt);
  t.equal(queued.length, 1, 'one POST /prompt in all');
  const views = comfy.seen.filter((s) => s.path === '/view');
  t.ok(views.length >= 2, 'the output was fetched again by the retry');
  t.equal(await pixel(g.url), colourOf(prompt, seedOf(id)));
});

t.test('the catalog says which entries ComfyUI makes: the text-to-image work of the models it is configured for', async (t) => {
  const models = (await app.request('GET', '/api/v1/models')).body;
  const flux = models.ai_models.find((m: { slug: string }) => m.slug === 'flux-image');
  const label = (id: string) => flux.variants.find((v: { id: string }) => v.id === id).engine;
  t.match(label('text-to-image'), { kind: 'self_hosted', provider: 'comfyui', model: 'flux-1.1-pro' });
  t.match(label('kontext-edit'), { kind: 'hosted', provider: 'replicate' }, 'an edit is not what its text-to-image workflow does');
  t.match(label('ultra'), { kind: 'hosted', provider: 'replicate' }, 'a model it is not configured for');
  const banner = models.static_ads.find((s: { slug: string }) => s.slug === 'bold-sale-banner');
  t.match(banner.engine, { kind: 'self_hosted', provider: 'comfyui', model: 'flux-1.1-pro' }, 'a template whose model it makes');
});

t.test('a static ad whose hero model ComfyUI makes: its picture from the workflow, the template composited over it', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Night market sale' },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.generations[0].id as string;
  let g: any;
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    g = (await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key })).body;
    if (g.status !== 'generating') break;
  }
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.match(g.engine, { kind: 'self_hosted', provider: 'comfyui' });
  const queued = [...comfy.prompts.values()].filter((p) =>
    /^Night market sale\n\nStyle: Bold Sale Banner/.test(String(p.graph['6'].inputs?.text)),
  );
  t.equal(queued.length, 1, 'one prompt, with the template style');
  const [row] = await sql`select state from generations where id = ${id}`;
  t.match(row.state.generating, { provider: 'comfyui', model: 'flux-1.1-pro', providerJobId: queued[0].id });
});
