// Honest catalog, honest records (issue 23): GET /models says who makes every AI model variant,
// static template and quality tier in this deployment, at the price this deployment charges; a
// request is charged that price and its record carries the same label. LOCAL_FALLBACK=preview
// (the default) has the local engines make a preview of a model that is not configured, at the
// catalog's local preview price, never the model's; LOCAL_FALLBACK=off refuses it with 400
// engine_unavailable, nothing charged. REST and MCP agree.
import t from 'tap';
import { ProviderError } from '../../src/engines/generation.ts';
import { imageGenerationJob } from '../../src/pipelines/generation/job.ts';
import {
  findAiModel,
  findTemplate,
  localPreviewPricing,
  staticTemplateModel,
  tierModel,
  type RawQualityTier,
  type RawStaticTemplate,
} from '../../src/services/catalog/catalog-data.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';

const PREVIEW = localPreviewPricing();
// Keys for providers that are never reached: the tests here only queue (no workers), except the
// one that runs a job itself.
const KEYS = {
  REPLICATE_API_TOKEN: 'r8_test',
  FAL_KEY: 'fal-test',
  REPLICATE_API_BASE: 'http://127.0.0.1:9',
  FAL_QUEUE_BASE: 'http://127.0.0.1:9',
};

type Label = { kind: string; provider: string | null; model: string | null; preview: boolean; requires: string | null };
interface Entry {
  where: string;
  credits: number;
  engine: Label;
  raw: { output: 'image' | 'video'; credits: number; default_duration: number; provider?: { name: string; model: string } };
}

/** Every priced entry of a GET /models body, with the catalog data it comes from. */
function entries(models: any): Entry[] {
  const out: Entry[] = [];
  // A template's model is the AI model variant its catalog made_by names (none: local only).
  for (const s of models.static_ads) {
    const raw = staticTemplateModel(findTemplate(s.slug) as RawStaticTemplate);
    out.push({ where: `static ${s.slug}`, credits: s.credits, engine: s.engine, raw: raw as Entry['raw'] });
  }
  for (const v of [...models.video_ads, ...models.ugc_ads])
    for (const q of v.quality_tiers) {
      const tier = (findTemplate(v.slug) as { quality_tiers: RawQualityTier[] }).quality_tiers.find((x) => x.id === q.id)!;
      out.push({ where: `tier ${v.slug}/${q.id}`, credits: q.credits, engine: q.engine, raw: tierModel(tier) as Entry['raw'] });
    }
  for (const m of models.ai_models)
    for (const v of m.variants) {
      const raw = findAiModel(m.slug)!.variants.find((x) => x.id === v.id)!;
      out.push({ where: `variant ${m.slug}/${v.id}`, credits: v.credits, engine: v.engine, raw: raw as Entry['raw'] });
    }
  return out;
}

const previewPrice = (e: Entry) => (e.raw.output === 'image' ? PREVIEW.image : PREVIEW.video_per_second * e.raw.default_duration);

async function ledger(app: TestApp, orgId: string) {
  const rows = await app.service.ctx.sql`select reason, delta::int as delta from credit_ledger where org_id = ${orgId} order by id`;
  return rows.map((r) => [r.reason, r.delta]);
}

t.test('preview (the default): with no model configured, everything is a labelled local preview at the preview price', async (t) => {
  const app = await startMcpApp(t);
  const models = (await app.request('GET', '/api/v1/models')).body;
  t.equal(models.local_fallback, 'preview');
  const all = entries(models);
  t.ok(all.length > 50, `${all.length} priced entries`);
  const wrong = all.filter(
    (e) =>
      e.engine.kind !== 'local' ||
      !e.engine.preview ||
      e.engine.provider !== 'local' ||
      e.credits !== previewPrice(e) ||
      e.credits >= e.raw.credits ||
      e.engine.requires !==
        (e.raw.provider ? { replicate: 'REPLICATE_API_TOKEN', fal: 'FAL_KEY', openai: 'OPENAI_API_KEY' }[e.raw.provider.name] : null),
  );
  t.same(
    wrong.map((e) => e.where),
    [],
    'every entry: local preview, at the preview price (below the catalog price), naming the key that would make it',
  );

  const ws = await app.workspace({ credits: 100 });
  // flux-1.1-pro sells at 8 credits on Replicate: without the key it is a 2-credit preview.
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ai_model', model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'a lemon', request_count: 2 },
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.credits_deducted, 2 * PREVIEW.image, 'charged the preview price, twice');
  const g = await app.request('GET', `/api/v1/generations/${res.body.generations[0].id}`, { key: ws.key });
  t.same(g.body.engine, {
    kind: 'local',
    provider: 'local',
    model: 'local-image-renderer',
    preview: true,
    requires: 'REPLICATE_API_TOKEN',
  });
  // A video tier away from its default duration: the preview price per second.
  const tier = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'video_ad', template_slug: 'product-demo-showcase', quality_tier: 'high', duration: 4 },
  });
  t.equal(tier.status, 200, tier.text);
  t.equal(tier.body.credits_deducted, 4 * PREVIEW.video_per_second, 'veo-3-fast (120 credits) as a 4-second preview');
  t.same(await ledger(app, ws.orgId), [
    ['initial_grant', 100],
    ['generation_charge', -2 * PREVIEW.image],
    ['generation_charge', -4 * PREVIEW.video_per_second],
  ]);

  // MCP: the same catalog, the same price.
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const listed = await client.callTool({ name: 'list_generation_catalog', arguments: {} });
  t.same(listed.structuredContent, models, 'list_generation_catalog is GET /models');
  const created = await client.callTool({
    name: 'create_generation',
    arguments: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Summer sale' },
  });
  t.notOk(created.isError, JSON.stringify(created.structuredContent));
  t.equal((created.structuredContent as { credits_deducted: number }).credits_deducted, PREVIEW.image, 'a static ad preview over MCP');
});

t.test('a configured provider makes its models at the catalog price, and says so', async (t) => {
  const app = await startTestApp(t, KEYS);
  const models = (await app.request('GET', '/api/v1/models')).body;
  const all = entries(models);
  const hosted = all.filter((e) => e.raw.provider && e.raw.provider.name !== 'openai');
  t.ok(hosted.length >= 10, `${hosted.length} variants have a keyed provider`);
  t.same(
    hosted.filter(
      (e) =>
        e.engine.kind !== 'hosted' ||
        e.engine.preview ||
        e.engine.provider !== e.raw.provider!.name ||
        e.engine.model !== e.raw.provider!.model ||
        e.credits !== e.raw.credits,
    ),
    [],
    'each is made by its hosted model, at the catalog price',
  );
  const gpt = all.find((e) => e.where === 'variant gpt-image/generate')!;
  t.match(
    gpt,
    { credits: PREVIEW.image, engine: { kind: 'local', preview: true, requires: 'OPENAI_API_KEY' } },
    'OpenAI has no key: a preview',
  );

  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ai_model', model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'a lemon' },
  });
  t.equal(res.status, 200, res.text);
  const flux = findAiModel('flux-image')!.variants.find((v) => v.id === 'text-to-image')!;
  t.equal(res.body.credits_deducted, flux.credits, 'the hosted price');
  const g = await app.request('GET', `/api/v1/generations/${res.body.generations[0].id}`, { key: ws.key });
  t.same(g.body.engine, { kind: 'hosted', provider: 'replicate', model: 'black-forest-labs/flux-1.1-pro', preview: false, requires: null });
});

t.test('a generation priced for a hosted model is never made locally: a worker without the key fails it and refunds', async (t) => {
  const app = await startTestApp(t, KEYS);
  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ai_model', model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'a lemon' },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.generations[0].id as string;
  // The job run by a worker whose configuration has lost the Replicate key: the attempt fails
  // without a retry, and the job's terminal failure fails the generation and refunds it.
  const ctx = app.service.ctx;
  const keyless = {
    ...ctx,
    config: { ...ctx.config, provider: { ...ctx.config.provider, replicate: { ...ctx.config.provider.replicate, key: undefined } } },
  };
  const job = imageGenerationJob.declaration;
  const tools = { signal: new AbortController().signal, progress() {}, annotate() {} };
  const err = await job.run(keyless, { id: 'attempt-1', data: { generationId: id }, attempt: 1, lastAttempt: false }, tools).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, ProviderError);
  const { detail, retry } = job.describeFailure!(err);
  t.equal(retry, false, 'not retried');
  await job.onTerminalFailure!(keyless, { generationId: id }, detail);
  const g = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.match(g.body, { status: 'error', error: { code: 'engine_unavailable', retryable: false } });
  t.notOk(g.body.url, 'no output');
  t.same(await ledger(app, ws.orgId), [
    ['initial_grant', 100],
    ['generation_charge', -8],
    ['generation_refund', 8],
  ]);
});

t.test('off: a model no engine here makes is a 400 engine_unavailable naming the field and the key, nothing charged', async (t) => {
  const app = await startMcpApp(t, { LOCAL_FALLBACK: 'off', FAL_KEY: 'fal-test', FAL_QUEUE_BASE: 'http://127.0.0.1:9' });
  const models = (await app.request('GET', '/api/v1/models')).body;
  t.equal(models.local_fallback, 'off');
  const all = entries(models);
  t.same(
    all.filter((e) => (e.raw.provider?.name === 'fal' ? e.engine.kind !== 'hosted' : e.engine.kind !== 'unavailable')).map((e) => e.where),
    [],
    'fal models are hosted, everything else unavailable',
  );
  t.match(
    all.find((e) => e.where === 'variant flux-image/text-to-image'),
    {
      credits: findAiModel('flux-image')!.variants[0].credits,
      engine: { kind: 'unavailable', provider: null, model: null, preview: false, requires: 'REPLICATE_API_TOKEN' },
    },
  );

  const ws = await app.workspace({ credits: 100 });
  const before = await ledger(app, ws.orgId);
  const cases: [string, Record<string, unknown>, string, string | null][] = [
    [
      'an AI model variant named',
      { type: 'ai_model', model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'x' },
      'body.variant_id',
      'REPLICATE_API_TOKEN',
    ],
    [
      'an AI model by its default variant',
      { type: 'ai_model', model_slug: 'flux-image', prompt: 'x' },
      'body.model_slug',
      'REPLICATE_API_TOKEN',
    ],
    // Hedra Character-3 has no hosted model in the catalog (fal does not serve it): nothing here can make it.
    ['a quality tier', { type: 'ugc_ad', template_slug: 'founder-story', quality_tier: 'low' }, 'body.quality_tier', null],
    ['a static template', { type: 'static_ad', template_slug: 'bold-sale-banner' }, 'body.template_slug', 'REPLICATE_API_TOKEN'],
  ];
  for (const [what, body, field, requires] of cases) {
    const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body });
    t.equal(res.status, 400, `${what}: 400`);
    t.match(res.body.error, { code: 'engine_unavailable', retryable: false, context: { field } }, `${what}: names ${field}`);
    t.equal(res.body.error.context.requires, requires, `${what}: requires ${requires}`);
    if (requires) t.match(res.body.error.message, requires, 'the message names the key');
  }
  const veo = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'ai_model', model_slug: 'veo-3', variant_id: 'fast', prompt: 'a lemon rolling' },
  });
  t.equal(veo.status, 200, 'a fal model is made by fal');
  t.equal(veo.body.credits_deducted, findAiModel('veo-3')!.variants.find((v) => v.id === 'fast')!.credits);
  t.same(
    (await ledger(app, ws.orgId)).slice(before.length),
    [['generation_charge', -veo.body.credits_deducted]],
    'only the hosted one charged',
  );

  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const refused = await client.callTool({
    name: 'create_generation',
    arguments: { type: 'ai_model', model_slug: 'flux-image', prompt: 'x' },
  });
  t.equal(refused.isError, true);
  t.match(refused.structuredContent, {
    // MCP names the tool's argument.
    error: { code: 'engine_unavailable', context: { field: 'model_slug', requires: 'REPLICATE_API_TOKEN' } },
  });
  t.equal((await ledger(app, ws.orgId)).length, before.length + 1, 'nothing charged over MCP');
});
