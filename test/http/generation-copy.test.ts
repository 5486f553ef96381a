// The ad copy of a template generation over HTTP (issue 24, part 1): POST /generations `copy`
// ({headline, subheadline, cta, offer}) is shown verbatim, read back from the rendered ad by OCR;
// without it the headline is short copy derived from the prompt, never the prompt pasted; `copy`
// on an ai_model generation, a blank field or an unknown one is a 400 naming it, nothing charged.
import { eq } from 'drizzle-orm';
import t from 'tap';
import { generations } from '../../src/db/schema/index.ts';
import { stopOcr } from '../../src/media/ocr.ts';
import { recordedManifest } from '../../src/pipelines/recorded-manifest.ts';
import { startTestApp } from '../helpers/app.ts';
import { normWords, ocrWords } from '../helpers/ocr.ts';

t.teardown(() => stopOcr());
const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 10_000, scopes: ['generations:read', 'generations:write'] });
const api = (method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { key: ws.key, body });
const balance = async () => (await app.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`)[0].credits;

// The docs' own example prompt of a static ad (spec/openapi.yaml).
const DOCS_PROMPT = 'Our new citrus sparkling water on a sunny kitchen counter, headline "Zero sugar. All zest."';
const STATIC = { type: 'static_ad', template_slug: 'product-spotlight', aspect_ratio: '1:1', resolution: '1K' };

/** Queues one generation and returns its id and its output's bytes once completed. */
async function render(body: Record<string, unknown>): Promise<{ id: string; bytes: Buffer }> {
  const res = await api('POST', '/generations', body);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const id = res.body.generations[0].id;
  const deadline = Date.now() + 120_000;
  let g = (await api('GET', `/generations/${id}`)).body;
  while (g.status === 'generating') {
    if (Date.now() > deadline) throw new Error(`${id} did not finish`);
    await new Promise((r) => setTimeout(r, 150));
    g = (await api('GET', `/generations/${id}`)).body;
  }
  if (g.status !== 'completed') throw new Error(`${id} ${g.status}: ${JSON.stringify(g.error)}`);
  return { id, bytes: Buffer.from(await (await fetch(g.url)).arrayBuffer()) };
}

const norm = normWords;

t.test('copy on the wrong type, blank, too long or unknown is a 400 naming it; nothing is charged', async (t) => {
  const model = (await api('GET', '/models')).body.ai_models[0].slug;
  const before = await balance();
  const cases: [string, Record<string, unknown>, string][] = [
    ['copy on ai_model', { type: 'ai_model', model_slug: model, prompt: 'A lake', copy: { headline: 'Hi' } }, 'body.copy'],
    ['blank headline', { ...STATIC, copy: { headline: '   ' } }, 'body.copy.headline'],
    ['headline over 80', { ...STATIC, copy: { headline: 'x'.repeat(81) } }, 'body.copy.headline'],
    ['cta over 24', { ...STATIC, copy: { cta: 'x'.repeat(25) } }, 'body.copy.cta'],
    ['empty offer', { ...STATIC, copy: { offer: '' } }, 'body.copy.offer'],
    ['unknown field', { ...STATIC, copy: { tagline: 'Hi' } }, 'body.copy'],
  ];
  for (const [name, body, field] of cases) {
    const res = await api('POST', '/generations', body);
    t.equal(res.status, 400, name);
    t.equal(res.body.error?.code !== undefined, true, `${name}: the error envelope`);
    const fields = [res.body.error?.context?.field, ...(res.body.error?.context?.errors ?? []).map((e: { field: string }) => e.field)];
    t.ok(
      fields.some((f) => typeof f === 'string' && f.startsWith(field)),
      `${name}: names ${field} (got ${JSON.stringify(res.body.error)})`,
    );
  }
  t.equal(await balance(), before, 'no credits were taken');
});

t.test('a static ad shows the customer copy verbatim', async (t) => {
  const copy = { headline: 'Zero sugar. All zest.', cta: 'Grab a can' };
  const { id, bytes } = await render({ ...STATIC, prompt: DOCS_PROMPT.replace(/, headline.*$/, ''), copy });
  const [row] = await app.service.ctx.db.select({ spec: generations.spec }).from(generations).where(eq(generations.id, id));
  t.same((row.spec as { copy?: unknown }).copy, copy, 'the copy is stored with the generation');
  // The boxes the renderer says it drew in say where to look (a button's words are lost in a band).
  const manifest = await recordedManifest(app.service.ctx.db, 'generation', id);
  t.ok(manifest?.texts.length, 'the render recorded the texts it placed');
  const read = await ocrWords(bytes, manifest);
  t.ok(read.includes(norm(copy.headline)), `the headline is drawn verbatim (read: ${read})`);
  t.ok(read.includes(norm(copy.cta)), `the CTA is drawn verbatim (read: ${read})`);
  t.notOk(read.includes('sunny kitchen'), 'no prompt text');
});

t.test('without copy: the headline is short copy, not the prompt', async (t) => {
  const { bytes } = await render({ ...STATIC, prompt: DOCS_PROMPT });
  const read = await ocrWords(bytes);
  t.ok(read.includes('zero sugar all zest'), `the quoted headline is drawn (read: ${read})`);
  t.notOk(read.includes('sunny kitchen counter'), 'the scene is not pasted');
  t.notOk(read.includes('headline'), 'the word "headline" is not pasted');
  const plain = await ocrWords(
    (await render({ ...STATIC, prompt: 'Show off the STM32F3 Discovery board for embedded Rust beginners' })).bytes,
  );
  t.notMatch(plain, /^off the|\boff the stm32/, `"Show off" is not cut to "Off the" (read: ${plain})`);
  t.match(plain, /stm32f3/, 'the subject is there');
});
