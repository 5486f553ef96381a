// Reference inspirations (POST/GET /reference-inspirations) on the real service with workers and
// real media: every refusal costs nothing and stores nothing; a save charges 30 credits per item
// once (idempotent), stores inline images at once and URL media after the analysis, which makes
// it ready (or failed and refunded); the list, the recommendations and the target suggestions;
// another workspace sees nothing; a ready reference works in POST /generations.
import http from 'node:http';
import { eq } from 'drizzle-orm';
import t from 'tap';
import { organizations } from '../../src/db/schema/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { colorPng, colorVideo, dataUrl } from '../editor/helpers.ts';

const png = await colorPng('#ff0000', 40, 30);
const jpeg = await (await import('sharp'))
  .default({ create: { width: 50, height: 20, channels: 3, background: '#00ff00' } })
  .jpeg()
  .toBuffer();
const files: Record<string, { type: string; body: Buffer }> = {
  '/photo.jpg': { type: 'image/jpeg', body: jpeg },
  '/clip.mp4': { type: 'video/mp4', body: colorVideo('reference-clip', 'blue', 1) },
  '/notes.txt': { type: 'text/plain', body: Buffer.from('not an image at all') },
};
const host = http.createServer((req, res) => {
  const f = files[req.url ?? ''];
  if (!f) return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `http://127.0.0.1:${(host.address() as { port: number }).port}`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });

const balance = async (a: TestApp, orgId: string) =>
  (await a.service.ctx.db.select().from(organizations).where(eq(organizations.id, orgId)))[0].credits;
const count = async (table: string, orgId: string) =>
  Number((await app.service.ctx.sql.unsafe(`select count(*)::int as n from ${table} where org_id = $1`, [orgId]))[0].n);

/** GET /reference-inspirations with a query (arrays repeat the parameter). */
function list(key: string, query: Record<string, unknown> = {}) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const x of Array.isArray(v) ? v : [v]) qs.append(k, String(x));
  return app.request('GET', `/api/v1/reference-inspirations${qs.size ? `?${qs}` : ''}`, { key });
}

async function waitFor(key: string, id: string, done = (r: any) => r.status !== 'processing') {
  for (let i = 0; i < 200; i++) {
    const res = await app.request('GET', '/api/v1/reference-inspirations', { key });
    const ref = res.body.data.find((r: any) => r.id === id);
    if (ref && done(ref)) return ref;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`reference ${id} did not finish`);
}

t.test('refusals cost nothing and store nothing', async (t) => {
  const ws = await app.workspace({ credits: 1000, scopes: ['generations:read', 'generations:write'] });
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'an unknown target',
      { template_slug: 'no-such-template', media_kind: 'image', image_urls: [`${base}/photo.jpg`] },
      'body.template_slug',
    ],
    [
      'a category that is not the target’s',
      { template_slug: 'product-spotlight', template_category: 'video-templates', media_kind: 'image', image_urls: [`${base}/photo.jpg`] },
      'body.template_category',
    ],
    [
      'a kind the target does not accept',
      { template_slug: 'product-spotlight', media_kind: 'video', video_url: `${base}/clip.mp4` },
      'body.media_kind',
    ],
    ['video without video_url', { template_slug: 'product-demo-showcase', media_kind: 'video' }, 'body.video_url'],
    [
      'video with images',
      { template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `${base}/clip.mp4`, image_urls: [`${base}/photo.jpg`] },
      'body.image_urls',
    ],
    ['no images', { template_slug: 'product-spotlight', media_kind: 'image' }, 'body.image_urls'],
    [
      'eleven images',
      {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        image_urls: Array(6).fill(`${base}/photo.jpg`),
        images: Array(5).fill({ filename: 'a.png', data: png.toString('base64') }),
      },
      'body.images',
    ],
    [
      'a private address',
      { template_slug: 'product-spotlight', media_kind: 'image', image_urls: ['http://10.0.0.7/secret.png'] },
      'body.image_urls[0]',
    ],
    [
      'inline bytes that are not an image',
      {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'x.png', data: Buffer.from('hello, not a picture').toString('base64') }],
      },
      'body.images[0].data',
    ],
    [
      'a declared type the bytes contradict',
      {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'x.jpg', content_type: 'image/jpeg', data: png.toString('base64') }],
      },
      'body.images[0].content_type',
    ],
    [
      'inline bytes that are a video',
      {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'x.png', data: files['/clip.mp4'].body.toString('base64') }],
      },
      'body.images[0].data',
    ],
    [
      'a GIF data URL',
      {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'x.gif', data: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' }],
      },
      'body.images[0].data',
    ],
  ];
  for (const [name, body, field] of cases) {
    const res = await app.request('POST', '/api/v1/reference-inspirations', { key: ws.key, body });
    t.equal(res.status, 400, name);
    t.equal(res.body.error.code, 'bad_request');
    t.ok(
      res.body.error.context.errors.some((e: { field: string }) => e.field === field),
      `${name}: names ${field} (${JSON.stringify(res.body.error.context.errors)})`,
    );
  }
  t.equal(await balance(app, ws.orgId), 1000, 'no credits taken');
  t.equal(await count('reference_inspirations', ws.orgId), 0);
  t.equal(await count('media', ws.orgId), 0, 'nothing stored');

  const poor = await app.workspace({ credits: 59, scopes: ['generations:write'] });
  const res = await app.request('POST', '/api/v1/reference-inspirations', {
    key: poor.key,
    body: {
      template_slug: 'product-spotlight',
      media_kind: 'image',
      images: [
        { filename: 'a.png', data: png.toString('base64') },
        { filename: 'b.png', data: png.toString('base64') },
      ],
    },
  });
  t.equal(res.status, 402);
  t.match(res.body.error, { code: 'insufficient_credits', context: { credits_required: 60, credits_available: 59 } });
  t.equal(await balance(app, poor.orgId), 59);
  t.equal(await count('media', poor.orgId), 0, 'no upload without the credits');
});

t.test('a save: charged once, inline images at once, URL images after the analysis, then ready', async (t) => {
  const ws = await app.workspace({ credits: 500, scopes: ['generations:read', 'generations:write'] });
  const body = {
    template_slug: 'product-spotlight',
    template_category: 'static-ads',
    media_kind: 'image',
    label: 'Green and red',
    image_urls: [`${base}/photo.jpg`],
    images: [{ filename: 'red.png', data: dataUrl('image/png', png) }],
  };
  const res = await app.request('POST', '/api/v1/reference-inspirations', { key: ws.key, body, headers: { 'idempotency-key': 'ref-1' } });
  t.equal(res.status, 200, res.text);
  const ref = res.body;
  t.match(ref, {
    object: 'reference_inspiration',
    status: 'processing',
    template_slug: 'product-spotlight',
    template_category: 'static-ads',
    media_kind: 'image',
    visibility: 'private',
    review_status: 'not_required',
    label: 'Green and red',
    error: null,
    credits_deducted: 60,
  });
  t.equal(ref.media.length, 1, 'the inline image is stored at once');
  t.equal(await balance(app, ws.orgId), 440, '30 credits per media item');

  const replay = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body,
    headers: { 'idempotency-key': 'ref-1' },
  });
  t.equal(replay.status, 200);
  t.equal(replay.body.id, ref.id);
  t.equal(replay.body.idempotent_replay, true);
  const conflict = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { ...body, label: 'Other' },
    headers: { 'idempotency-key': 'ref-1' },
  });
  t.equal(conflict.status, 409);
  t.equal(await balance(app, ws.orgId), 440, 'charged once');

  const ready = await waitFor(ws.key, ref.id);
  t.equal(ready.status, 'ready');
  t.same(
    ready.media.map((m: { type: string }) => m.type),
    ['image', 'image'],
    'image_urls first, then images',
  );
  const first = await fetch(ready.media[0].url);
  t.equal(first.headers.get('content-type'), 'image/jpeg');
  t.same(Buffer.from(await first.arrayBuffer()), jpeg, 'the fetched copy, byte for byte');
  const second = await fetch(ready.media[1].url);
  t.same(Buffer.from(await second.arrayBuffer()), png, 'the inline image');

  // Usable now in a generation; another workspace neither sees nor uses it.
  const gen = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Olive oil', custom_reference_inspiration_id: ref.id },
  });
  t.equal(gen.status, 200, gen.text);
  const other = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const list = await app.request('GET', '/api/v1/reference-inspirations', { key: other.key });
  t.same(list.body.data, [], 'another workspace lists nothing');
  const stolen = await app.request('POST', '/api/v1/generations', {
    key: other.key,
    body: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'x', custom_reference_inspiration_id: ref.id },
  });
  t.equal(stolen.status, 404);
});

t.test('media the analysis refuses: failed with the reason, refunded exactly once', async (t) => {
  const ws = await app.workspace({ credits: 300, scopes: ['generations:read', 'generations:write'] });
  for (const [name, urls, message, field] of [
    ['a missing file', [`${base}/missing.png`, `${base}/photo.jpg`], /could not be fetched/, 'body.image_urls[0]'],
    ['not an image', [`${base}/notes.txt`, `${base}/photo.jpg`], /unsupported|not|image/i, 'body.image_urls[0]'],
    ['a missing file after a good one', [`${base}/photo.jpg`, `${base}/missing.png`], /could not be fetched/, 'body.image_urls[1]'],
  ] as const) {
    const res = await app.request('POST', '/api/v1/reference-inspirations', {
      key: ws.key,
      body: { template_slug: 'photo-dump-carousel', media_kind: 'slideshow', image_urls: urls },
    });
    t.equal(res.status, 200, name);
    t.equal(await balance(app, ws.orgId), 240, `${name}: charged 60`);
    const failed = await waitFor(ws.key, res.body.id);
    t.equal(failed.status, 'failed', name);
    t.match(failed.error, { code: 'media_rejected', retryable: false, message, context: { field, credits_refunded: 60 } });
    t.same(failed.media, [], 'nothing attached');
    t.equal(await balance(app, ws.orgId), 300, `${name}: refunded`);
  }
  const ledger = await app.service.ctx
    .sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} and reason like 'reference%' order by id`;
  t.same(
    ledger.map((r) => `${r.reason} ${r.delta}`),
    [
      'reference_charge -60',
      'reference_refund 60',
      'reference_charge -60',
      'reference_refund 60',
      'reference_charge -60',
      'reference_refund 60',
    ],
    'one charge and one refund each',
  );
  t.equal(await count('media', ws.orgId), 0, 'the fetched good image was not kept either');
  const stored: string[] = [];
  for await (const o of app.service.ctx.storage.list(`editor-media/${ws.orgId}/`)) stored.push(o.key);
  t.same(stored, [], 'and no file of it is left in storage');
});

t.test('a video reference, public: ready with its video, review pending', async (t) => {
  const ws = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const wrong = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `${base}/photo.jpg` },
  });
  t.equal(wrong.status, 200);
  t.match(await waitFor(ws.key, wrong.body.id), {
    status: 'failed',
    error: { code: 'media_rejected', message: 'body.video_url is image/jpeg, not a video' },
  });
  const res = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-demo-showcase', media_kind: 'video', visibility: 'public', video_url: `${base}/clip.mp4` },
  });
  t.equal(res.status, 200, res.text);
  t.match(res.body, { status: 'processing', visibility: 'public', review_status: 'pending', credits_deducted: 30, media: [] });
  const ready = await waitFor(ws.key, res.body.id);
  t.equal(ready.status, 'ready');
  t.same(
    ready.media.map((m: { type: string }) => m.type),
    ['video'],
  );
  t.equal((await fetch(ready.media[0].url)).headers.get('content-type'), 'video/mp4');
});

t.test('the list, the recommendations and the target suggestions', async (t) => {
  const ws = await app.workspace({ credits: 1000, scopes: ['generations:read', 'generations:write'] });
  const save = async (slug: string, kind: string, label: string) => {
    const res = await app.request('POST', '/api/v1/reference-inspirations', {
      key: ws.key,
      body: { template_slug: slug, media_kind: kind, label, images: [{ filename: 'a.png', data: png.toString('base64') }] },
    });
    t.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  // Saved one after the other (the list's order is theirs), then waited for together.
  const saved = [
    await save('product-spotlight', 'image', 'Spotlight look'),
    await save('bold-sale-banner', 'image', 'Banner look'),
    await save('photo-dump-carousel', 'slideshow', 'Carousel look'),
  ];
  const [spot, banner, carousel] = await Promise.all(saved.map((id) => waitFor(ws.key, id)));

  let res = await app.request('GET', '/api/v1/reference-inspirations', { key: ws.key });
  t.equal(res.body.object, 'reference_inspiration_list');
  t.same(
    res.body.data.map((r: { id: string }) => r.id),
    [carousel.id, banner.id, spot.id],
    'newest first',
  );
  t.ok(res.body.template_targets.length > 20, 'with every template target');
  res = await list(ws.key, { template_category: 'static-ads', limit: 1 });
  t.same(
    res.body.data.map((r: { id: string }) => r.id),
    [banner.id],
    'filtered and limited',
  );
  t.ok(res.body.template_targets.every((x: { template_category: string }) => x.template_category === 'static-ads'));

  res = await list(ws.key, { recommend: true, template_slug: 'product-spotlight' });
  t.equal(res.body.object, 'reference_inspiration_recommendations');
  t.same(
    res.body.data.map((r: any) => r.reference_inspiration.id),
    [spot.id, banner.id],
    'the same template first, then its category; not the carousel',
  );
  t.ok(res.body.data[0].score > res.body.data[1].score);
  t.match(res.body.data[0].reason, /Product Spotlight itself/);

  res = await list(ws.key, {
    suggest_targets: true,
    description: 'A product spotlight of our citrus bottle',
    image_url: [`${base}/photo.jpg`],
  });
  t.match(res.body, {
    object: 'reference_template_target_suggestions',
    media_kind: 'image',
    image_count: 1,
    has_video: false,
    next_step: /create_reference_inspiration/,
  });
  t.equal(res.body.suggestions[0].template_slug, 'product-spotlight', 'the words of the description pick the template');
  t.match(res.body.suggestions[0].reason, /matches “product”, “spotlight”/);
  t.ok(res.body.suggestions.length <= 12);
  t.ok(res.body.suggestions.every((s: { accepts_media_kinds: string[] }) => s.accepts_media_kinds.includes('image')));
  res = await list(ws.key, { suggest_targets: true, image_url: [`${base}/photo.jpg`, `${base}/photo.jpg`, `${base}/photo.jpg`] });
  t.match(res.body, { media_kind: 'slideshow', image_count: 3 });
  t.equal(res.body.suggestions[0].template_category, 'slideshow-carousel', 'several images suggest a carousel');
  res = await list(ws.key, { suggest_targets: true, video_url: `${base}/clip.mp4` });
  t.match(res.body, { media_kind: 'video', has_video: true });
  t.ok(res.body.suggestions.every((s: { accepts_media_kinds: string[] }) => s.accepts_media_kinds.includes('video')));

  for (const [query, field] of [
    [{ recommend: true, suggest_targets: true }, 'query.recommend'],
    [{ description: 'x' }, 'query.description'],
    [{ recommend: true, template_slug: 'nope' }, 'query.template_slug'],
    [{ template_slug: 'product-spotlight', template_category: 'slideshow-carousel' }, 'query.template_category'],
  ] as const) {
    res = await list(ws.key, query);
    t.equal(res.status, 400, JSON.stringify(query));
    t.ok(
      res.body.error.context.errors.some((e: { field: string }) => e.field === field),
      `names ${field}`,
    );
  }
});

t.test('review of public references with the admin CLI: approve, reject', async (t) => {
  // `reference pending` runs as a real process (one JSON object, exit 0); the reviews run the same
  // command code in this process (a CLI process costs ~1 s of CPU).
  const admin = (...args: string[]) => adminInProcess({ DATABASE_URL: app.databaseUrl }, args);
  const ws = await app.workspace({ credits: 200, scopes: ['generations:read', 'generations:write'] });
  const save = async (label: string) => {
    const res = await app.request('POST', '/api/v1/reference-inspirations', {
      key: ws.key,
      body: {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        visibility: 'public',
        label,
        images: [{ filename: 'a.png', data: png.toString('base64') }],
      },
    });
    return res.body.id as string;
  };
  const saved = [await save('Good one'), await save('Bad one')];
  const [good, bad] = await Promise.all(saved.map((id) => waitFor(ws.key, id)));
  let r = await runAdmin({ DATABASE_URL: app.databaseUrl }, ['reference', 'pending']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim().split('\n').length, 1, 'one JSON object on stdout');
  const pending = JSON.parse(r.stdout).data.filter((x: { org: string }) => x.org === ws.orgId);
  t.same(
    pending.map((x: { id: string }) => x.id),
    [good.id, bad.id],
    'oldest first',
  );
  t.match(pending[0], { review_status: 'pending', status: 'ready', template_slug: 'product-spotlight', media_count: 1, label: 'Good one' });

  r = await admin('reference', 'review', '--id', good.id, '--decision', 'approve');
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { id: good.id, review_status: 'approved', status: 'ready' });
  r = await admin('reference', 'review', '--id', bad.id, '--decision', 'reject', '--reason', 'Shows a competitor logo');
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { id: bad.id, review_status: 'rejected', status: 'rejected' });

  const after = await list(ws.key);
  const byId = new Map(after.body.data.map((x: { id: string }) => [x.id, x]));
  t.match(byId.get(good.id), { review_status: 'approved', status: 'ready' });
  t.match(byId.get(bad.id), {
    review_status: 'rejected',
    status: 'rejected',
    error: { code: 'review_rejected', message: 'Shows a competitor logo', retryable: false },
  });
  const use = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'x', custom_reference_inspiration_id: bad.id },
  });
  t.equal(use.status, 400, 'a rejected reference cannot be used');
  t.equal(await balance(app, ws.orgId), 140, 'the review does not refund');

  r = await admin('reference', 'review', '--id', good.id, '--decision', 'reject');
  t.equal(r.code, 1, 'reviewed already');
  t.match(r.stderr, /not a ready public reference waiting for review/);
  r = await admin('reference', 'review', '--id', good.id, '--decision', 'maybe');
  t.equal(r.code, 2);
});

t.test('under concurrency: one charge per idempotency key, never below zero', async (t) => {
  const ws = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const body = { template_slug: 'product-spotlight', media_kind: 'image', images: [{ filename: 'a.png', data: png.toString('base64') }] };
  // Ten at once with one key: one reference, one charge; the others replay it or are told it is in flight.
  const same = await Promise.all(
    Array.from({ length: 10 }, () =>
      app.request('POST', '/api/v1/reference-inspirations', { key: ws.key, body, headers: { 'idempotency-key': 'burst-1' } }),
    ),
  );
  const ok = same.filter((r) => r.status === 200);
  t.ok(ok.length >= 1, 'at least one answered 200');
  t.ok(
    same.every((r) => r.status === 200 || r.status === 409),
    `200 or 409 only (${same.map((r) => r.status).join(',')})`,
  );
  t.equal(new Set(ok.map((r) => r.body.id)).size, 1, 'one reference');
  t.equal(await balance(app, ws.orgId), 70, 'charged once');
  // Ten at once without a key on 70 credits at 30 each: two succeed, the rest are 402, never below zero.
  const burst = await Promise.all(
    Array.from({ length: 10 }, () => app.request('POST', '/api/v1/reference-inspirations', { key: ws.key, body })),
  );
  const statuses = burst.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 200).length, 2, `two fit in the balance (${statuses.join(',')})`);
  t.equal(statuses.filter((s) => s === 402).length, 8);
  t.equal(await balance(app, ws.orgId), 10, 'never below zero');
  t.equal(await count('reference_inspirations', ws.orgId), 3, 'a reference per charge');
  t.equal(await count('media', ws.orgId), 3, 'no media stored for refused requests');
  const ledger = await app.service.ctx
    .sql`select coalesce(sum(delta), 0)::int as s from credit_ledger where org_id = ${ws.orgId} and reason = 'reference_charge'`;
  t.equal(ledger[0].s, -90, 'the ledger agrees');
});
