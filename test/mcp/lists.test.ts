// list_generations, list_slideshows and list_videos over MCP: the same pages as their REST twins
// (GET /generations, /slideshows, /videos) through the one executor, paged with the cursor the
// previous call returned, filters as arguments, a cursor from another filter set or workspace an
// error result naming `cursor`, another workspace's work never listed.
import t from 'tap';
import { connect, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' });
const ws = await app.workspace({ credits: 10_000 });
const other = await app.workspace({ credits: 10_000 });
const client = await connect(app, ws.key);
const stranger = await connect(app, other.key);
t.teardown(() => client.close());
t.teardown(() => stranger.close());

const post = async (key: string, path: string, body: object) => {
  const res = await app.request('POST', `/api/v1/${path}`, { key, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
};
for (let i = 0; i < 3; i++) await post(ws.key, 'generations', { type: 'ai_model', model_slug: 'flux-image', prompt: `Bottle ${i}` });
await post(ws.key, 'generations', { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Summer sale' });
await post(ws.key, 'slideshows', { prompt: 'Why water beats soda', slide_count: 3 });
await post(ws.key, 'faceless-videos', { script: 'Water keeps you sharp. Drink a glass now.', duration: '6' });
await post(other.key, 'generations', { type: 'ai_model', model_slug: 'flux-image', prompt: 'Not yours' });

const call = async (c: typeof client, name: string, args: Record<string, unknown>) => {
  const res = await c.callTool({ name, arguments: args });
  return res as { isError?: boolean; structuredContent?: any };
};

t.test('each list tool answers what its REST twin answers, page by page', async (t) => {
  for (const [tool, path, args] of [
    ['list_generations', 'generations', { limit: 2 }],
    ['list_generations', 'generations', { limit: 1, type: 'ai_model', status: 'generating' }],
    ['list_slideshows', 'slideshows', { limit: 1 }],
    ['list_videos', 'videos', { limit: 1, kind: 'faceless' }],
    ['list_videos', 'videos', { limit: 1 }],
  ] as const) {
    let cursor: string | null = null;
    let pages = 0;
    do {
      const a: Record<string, unknown> = { ...args, ...(cursor ? { cursor } : {}) };
      const res = await call(client, tool, a);
      t.notOk(res.isError, `${tool}: ${JSON.stringify(res.structuredContent?.error ?? '')}`);
      const q = new URLSearchParams(Object.entries(a).map(([k, v]): [string, string] => [k, String(v)]));
      const rest = await app.request('GET', `/api/v1/${path}?${q}`, { key: ws.key });
      t.same(
        res.structuredContent.data.map((x: { id: unknown }) => x.id),
        rest.body.data.map((x: { id: unknown }) => x.id),
        `${tool} page ${pages}`,
      );
      t.equal(res.structuredContent.object, 'list');
      cursor = res.structuredContent.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    t.ok(pages >= 1);
  }
  const gens = await call(client, 'list_generations', { limit: 100 });
  t.equal(gens.structuredContent.data.length, 4, "only this workspace's generations");
});

t.test('a cursor from another filter set or workspace is an error result naming cursor', async (t) => {
  const first = await call(client, 'list_generations', { limit: 1, type: 'ai_model' });
  const cursor = first.structuredContent.next_cursor as string;
  t.ok(cursor);
  t.notOk((await call(client, 'list_generations', { limit: 1, type: 'ai_model', cursor })).isError);
  for (const [c, args, why] of [
    [client, { limit: 1, cursor }, 'without the filter'],
    [client, { limit: 1, type: 'static_ad', cursor }, 'another type'],
    [stranger, { limit: 1, type: 'ai_model', cursor }, 'another workspace'],
  ] as const) {
    const res = await call(c, 'list_generations', args);
    t.equal(res.isError, true, why);
    t.match(res.structuredContent, { error: { code: 'bad_request' } });
    t.match(JSON.stringify(res.structuredContent.error.context), /"cursor"/, `${why}: names the cursor argument`);
  }
});
