// GET /models, /openapi.json, /skill.md and the pages it links: public, real data, matching the contract.
import fs from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { operationIndex } from '../../src/operations/executor.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t, { PUBLIC_BASE_URL: 'https://api.example.test' });

t.test('GET /models serves the catalog from spec/catalog.yaml', async (t) => {
  const res = await app.request('GET', '/api/v1/models');
  t.equal(res.status, 200);
  const c = res.body;
  t.equal(c.object, 'catalog');
  t.ok(c.static_ads.length >= 6, 'at least 6 static-ad templates');
  t.ok(c.video_ads.length >= 4, 'at least 4 video-ad templates');
  t.ok(c.ugc_ads.length >= 4, 'at least 4 UGC templates');
  t.ok(c.ai_models.length >= 5, 'at least 5 AI models');
  const raw = parse(fs.readFileSync(new URL('../../spec/catalog.yaml', import.meta.url), 'utf8'));
  t.same(
    c.static_ads.map((x: { slug: string }) => x.slug),
    raw.static_ads.map((x: { slug: string }) => x.slug),
    'served from the data file, in its order',
  );
  for (const v of [...c.video_ads, ...c.ugc_ads]) {
    t.same(v.quality_tiers.map((q: { id: string }) => q.id).sort(), ['high', 'low'], `${v.slug} has high and low tiers`);
    for (const q of v.quality_tiers)
      t.ok(q.duration_options.includes(q.default_duration), `${v.slug}/${q.id} default duration is an option`);
  }
  const modes = new Set(c.ai_models.flatMap((m: any) => m.variants.flatMap((v: any) => v.input_mode.split('+'))));
  t.same([...modes].sort(), ['audio', 'image', 'text', 'video'], 'variants cover every input mode');
  for (const m of c.ai_models)
    t.ok(
      m.variants.some((v: { id: string }) => v.id === m.default_variant_id),
      `${m.slug} default variant exists`,
    );
  t.match(c.static_ads[0].preview_image_url, /^https:\/\/api\.example\.test\/static\/previews\/.+\.svg$/, 'URLs use PUBLIC_BASE_URL');
});

t.test('every preview URL in the catalog and the public avatars serves an SVG', async (t) => {
  const res = await app.request('GET', '/api/v1/models');
  const urls = new Set<string>();
  JSON.stringify(res.body, (k, v) => {
    if (typeof v === 'string' && /_url$/.test(k)) urls.add(v);
    return v;
  });
  t.ok(urls.size > 50);
  for (const u of urls) {
    const path = new URL(u).pathname;
    const r = await app.request('GET', path, { unchecked: true });
    t.equal(r.status, 200, path);
    t.match(r.headers.get('content-type'), /^image\/svg\+xml/);
    t.match(r.text, /^<svg|^<\?xml/);
  }
  const traversal = await app.request('GET', '/static/previews/..%2f..%2fpackage.json', { unchecked: true });
  t.not(traversal.status, 200, 'no path traversal out of the previews folder');
});

t.test('GET /openapi.json serves the contract', async (t) => {
  const res = await app.request('GET', '/api/v1/openapi.json');
  t.equal(res.status, 200);
  t.equal(res.body.openapi, '3.1.0');
  t.equal(res.body.info.version, '1.0.0');
  // Absolute server URLs from PUBLIC_BASE_URL, so generated clients work from anywhere.
  const base = app.service.ctx.config.publicBaseUrl;
  t.same(
    res.body.servers.map((s: { url: string }) => s.url),
    [`${base}/api/v1`],
  );
  t.same(
    res.body.paths['/healthz'].servers.map((s: { url: string }) => s.url),
    [base],
  );
  const spec = parse(fs.readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8'));
  spec.servers[0].url = `${base}/api/v1`;
  for (const p of ['/healthz', '/readyz']) spec.paths[p].servers[0].url = base;
  t.same(res.body, spec, 'spec/openapi.yaml with its server URLs made absolute, nothing else changed');
});

/** The targets of a Markdown page's links (`[text](target)`). */
const linksOf = (text: string) => [...new Set([...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]))];

t.test('GET /skill.md and every page it links, over HTTP: agent instructions covering every endpoint', async (t) => {
  const indexUrl = new URL('/api/v1/skill.md', app.url);
  const fetchPage = async (url: URL) => {
    t.equal(url.origin, indexUrl.origin, `${url} is on this server`);
    const res = await app.request('GET', url.pathname);
    t.equal(res.status, 200, `GET ${url.pathname}`);
    t.match(res.headers.get('content-type'), /^text\/markdown/);
    t.equal(res.headers.get('cache-control'), 'public, max-age=300', 'cacheable like /skill.md');
    return res.text as string;
  };
  const index = await fetchPage(indexUrl);
  const links = linksOf(index);
  t.ok(links.length >= 6, `the index links ${links.length} pages`);
  const texts = [index];
  for (const link of links) {
    // Resolved against the page's own URL, as a reader of the page would.
    const url = new URL(link, indexUrl);
    const text = await fetchPage(url);
    texts.push(text);
    for (const back of linksOf(text)) t.equal(new URL(back, url).href, indexUrl.href, `${link} links back to the index`);
  }
  const all = texts.join('\n');
  for (const op of operationIndex.operations) t.match(all, `${op.method} ${op.path}`, `mentions ${op.operationId}`);
  for (const tool of operationIndex.mcpOnlyTools) t.match(all, `### \`${tool.operationId}\``, `describes ${tool.operationId}`);
  for (const topic of [
    'Authorization: Bearer',
    'generations:read',
    'generations:write',
    'Idempotency-Key',
    'Poll',
    'retryable',
    'Retry-After',
    '8000',
  ]) {
    t.match(all, topic, `covers ${topic}`);
  }
});

t.test('GET /skill/{area}.md of an area the index does not link: 404 in the error envelope', async (t) => {
  for (const area of ['nope', 'Editor', 'skill-editor', 'editor.md', 'index']) {
    const res = await app.request('GET', `/api/v1/skill/${area}.md`);
    t.equal(res.status, 404, area);
    t.match(res.body, { error: { code: 'not_found', retryable: false, context: { resource: 'route', field: 'path.area' } } }, area);
    t.match(res.body.error.message, area);
  }
});

t.test('CORS: any origin may call the API with a bearer key (the spec declares Access-Control-Allow-Origin: *)', async (t) => {
  const get = await app.request('GET', '/api/v1/models', { headers: { origin: 'https://app.example.test' } });
  t.equal(get.headers.get('access-control-allow-origin'), '*');
  const err = await app.request('GET', '/api/v1/assets', { headers: { origin: 'https://app.example.test' } });
  t.equal(err.status, 401);
  t.equal(err.headers.get('access-control-allow-origin'), '*', 'errors too, so browsers can read them');
  const preflight = await app.request('OPTIONS', '/api/v1/generations', {
    unchecked: true,
    headers: {
      origin: 'https://app.example.test',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  });
  t.equal(preflight.status, 204);
  t.match(preflight.headers.get('access-control-allow-headers'), /Idempotency-Key/);
  t.match(preflight.headers.get('access-control-allow-methods'), /POST/);
});
