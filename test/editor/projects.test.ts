// Editor projects: create (frame size from the aspect ratio), list (newest first, limit and
// cursor), get, GET /videos/{id} for editor videos, and tenant isolation.
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';
import { createProject } from './helpers.ts';

const app = await startTestApp(t);

t.test('create: ready at once, frame size from the aspect ratio, integer ids', async (t) => {
  const ws = await app.workspace();
  const res = await app.request('POST', '/api/v1/editor/videos', {
    key: ws.key,
    body: { title: 'Summer launch teaser', aspect_ratio: '9:16', fps: 30 },
  });
  t.equal(res.status, 200);
  t.match(res.body, {
    object: 'editor_video',
    title: 'Summer launch teaser',
    status: 'ready',
    aspect_ratio: '9:16',
    width: 1080,
    height: 1920,
    fps: 30,
    duration_seconds: 0,
    version: 1,
    tracks: [],
    items: [],
    edits: [],
  });
  t.ok(Number.isSafeInteger(res.body.id) && res.body.id >= 1);
  const defaults = await app.request('POST', '/api/v1/editor/videos', { key: ws.key, body: {} });
  t.match(defaults.body, { title: 'Untitled video', aspect_ratio: '9:16', fps: 30, width: 1080, height: 1920 });
  for (const [ratio, w, h] of [
    ['16:9', 1920, 1080],
    ['1:1', 1080, 1080],
    ['4:5', 1080, 1350],
  ] as const) {
    const r = await app.request('POST', '/api/v1/editor/videos', { key: ws.key, body: { aspect_ratio: ratio, fps: 25 } });
    t.match(r.body, { aspect_ratio: ratio, width: w, height: h, fps: 25 }, ratio);
  }
  const custom = await app.request('POST', '/api/v1/editor/videos', {
    key: ws.key,
    body: { aspect_ratio: '16:9', width: 1280, height: 720 },
  });
  t.match(custom.body, { width: 1280, height: 720 });
  const wrong = await app.request('POST', '/api/v1/editor/videos', {
    key: ws.key,
    body: { aspect_ratio: '16:9', width: 1080, height: 1080 },
  });
  t.equal(wrong.status, 400);
  t.equal(wrong.body.error.context.errors[0].field, 'body.height');
  const half = await app.request('POST', '/api/v1/editor/videos', { key: ws.key, body: { width: 1080 } });
  t.equal(half.status, 400);
  t.equal(half.body.error.context.errors[0].field, 'body.height');
  const bad = await app.request('POST', '/api/v1/editor/videos', { key: ws.key, body: { aspect_ratio: '3:2', fps: 0, color: 'red' } });
  t.equal(bad.status, 400);
  t.same(bad.body.error.context.errors.map((e: { field: string }) => e.field).sort(), ['body.aspect_ratio', 'body.color', 'body.fps']);
  const ids = [res.body.id, defaults.body.id];
  t.ok(ids[1] > ids[0], 'ids increase');
});

t.test('list: newest first, whole projects, limit and cursor, only the own workspace', async (t) => {
  const ws = await app.workspace();
  const made = [];
  for (let k = 0; k < 5; k++) made.push(await createProject(app, ws.key, { title: `Project ${k}` }));
  await app.request('PATCH', `/api/v1/editor/videos/${made[4].id}`, {
    key: ws.key,
    body: { operations: [{ type: 'add_text', text: 'Hi' }], instructions: 'greet' },
  });
  const all = await app.request('GET', '/api/v1/editor/videos', { key: ws.key });
  t.equal(all.status, 200);
  t.same(
    all.body.data.map((v: { title: string }) => v.title),
    ['Project 4', 'Project 3', 'Project 2', 'Project 1', 'Project 0'],
  );
  t.equal(all.body.next_cursor, null);
  t.equal(all.body.data[0].items.length, 1, 'items included');
  t.equal(all.body.data[0].edits[0].instructions, 'greet', 'history included');
  const p1 = await app.request('GET', '/api/v1/editor/videos?limit=2', { key: ws.key });
  t.same(
    p1.body.data.map((v: { title: string }) => v.title),
    ['Project 4', 'Project 3'],
  );
  const p2 = await app.request('GET', `/api/v1/editor/videos?limit=2&cursor=${p1.body.next_cursor}`, { key: ws.key });
  t.same(
    p2.body.data.map((v: { title: string }) => v.title),
    ['Project 2', 'Project 1'],
  );
  const p3 = await app.request('GET', `/api/v1/editor/videos?limit=2&cursor=${p2.body.next_cursor}`, { key: ws.key });
  t.same(
    p3.body.data.map((v: { title: string }) => v.title),
    ['Project 0'],
  );
  t.equal(p3.body.next_cursor, null);
  for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=%21%21', 'cursor=e30']) {
    const r = await app.request('GET', `/api/v1/editor/videos?${q}`, { key: ws.key });
    t.equal(r.status, 400, q);
  }
  const other = await app.workspace();
  t.same((await app.request('GET', '/api/v1/editor/videos', { key: other.key })).body.data, [], 'another workspace sees none of them');
  const reader = await app.workspace({ scopes: ['generations:read'] });
  t.equal((await app.request('GET', '/api/v1/editor/videos', { key: reader.key })).status, 200, 'read scope lists');
  t.equal((await app.request('POST', '/api/v1/editor/videos', { key: reader.key, body: {} })).status, 403, 'read scope cannot create');
});

t.test('get and GET /videos/{id}: one id space, ready, 404 across workspaces', async (t) => {
  const ws = await app.workspace();
  const p = await createProject(app, ws.key, { title: 'Status check' });
  const got = await app.request('GET', `/api/v1/editor/videos/${p.id}`, { key: ws.key });
  t.same(got.body, p);
  const status = await app.request('GET', `/api/v1/videos/${p.id}`, { key: ws.key });
  t.equal(status.status, 200);
  t.match(status.body, {
    object: 'video',
    id: p.id,
    kind: 'editor',
    status: 'ready',
    title: 'Status check',
    url: null,
    error: null,
    progress: 100,
  });
  const other = await app.workspace();
  for (const path of [`/api/v1/editor/videos/${p.id}`, `/api/v1/videos/${p.id}`]) {
    const r = await app.request('GET', path, { key: other.key });
    t.equal(r.status, 404, path);
    t.equal(r.body.error.code, 'not_found');
  }
  t.equal((await app.request('GET', '/api/v1/videos/99999999', { key: ws.key })).status, 404);
  t.equal((await app.request('GET', '/api/v1/videos/abc', { key: ws.key })).status, 400, 'an invalid id is 400');
  t.equal((await app.request('GET', '/api/v1/editor/videos/0', { key: ws.key })).status, 400);
});
