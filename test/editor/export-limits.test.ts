// Exports cost no credits but are bounded: at most EXPORTS_IN_FLIGHT_PER_WORKSPACE queued or
// rendering per workspace (held under concurrency, across two API nodes on one database), at
// most EXPORT_SECONDS_PER_DAY seconds of output per rolling 24 hours (canceled and failed
// exports do not count), and DELETE …/exports/{export_id} cancels a queued or rendering export:
// a rendering one's ffmpeg is killed within about a second and its partial output removed.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { completeExport, startExport } from '../../src/pipelines/editor-export/rows.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { colorPng, createProject, editOk, upload } from './helpers.ts';

const exportsUrl = (id: number) => `/api/v1/editor/videos/${id}/exports`;

/** A project with one text item `seconds` long. */
async function textProject(app: TestApp, key: string, seconds: number) {
  const p = await createProject(app, key, { aspect_ratio: '16:9', width: 320, height: 180, fps: 10 });
  await editOk(app, key, p.id, [{ type: 'add_text', text: 'Hello', from_seconds: 0, duration_seconds: seconds }]);
  return p;
}

const inFlight = async (app: TestApp, orgId: string) =>
  Number(
    (
      await app.service.ctx.sql`select count(*)::int as n from editor_exports where org_id = ${orgId} and status in ('queued', 'rendering')`
    )[0].n,
  );

t.test('in flight: 3 concurrent exports through two API nodes with a limit of 2 → exactly 2 queued and one 429', async (t) => {
  const env = { EXPORTS_IN_FLIGHT_PER_WORKSPACE: '2' };
  const a = await startTestApp(t, env);
  const b = await startTestApp(t, env, { databaseUrl: a.databaseUrl });
  const ws = await a.workspace();
  const p = await textProject(a, ws.key, 5);
  for (let round = 0; round < 3; round++) {
    const results = await Promise.all(
      [a, b, a].map((node) => node.request('POST', exportsUrl(p.id), { key: ws.key, body: { quality: 'draft' } })),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    t.equal(ok.length, round === 0 ? 2 : 0, `round ${round}: queued`);
    t.equal(limited.length, round === 0 ? 1 : 3, `round ${round}: refused`);
    for (const r of limited) {
      t.match(r.body.error, { code: 'rate_limited', retryable: true, context: { limit: 2, in_flight: 2, retry_after_seconds: Number } });
      t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After');
      t.equal(r.headers.get('x-ratelimit-remaining'), '0');
      t.equal(r.headers.get('x-ratelimit-limit'), '2');
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      t.ok(reset > Date.now() && reset < Date.now() + 3_600_000, `X-RateLimit-Reset is Unix ms (${reset})`);
    }
    t.equal(await inFlight(a, ws.orgId), 2, 'two in flight');
  }
  // Another workspace has its own slots.
  const other = await a.workspace();
  const q = await b.request('POST', exportsUrl((await textProject(a, other.key, 2)).id), { key: other.key });
  t.equal(q.status, 200, q.text);
});

t.test('the daily quota: 429 with when it frees up; canceled and failed exports do not count', async (t) => {
  const app = await startTestApp(t, { EXPORTS_IN_FLIGHT_PER_WORKSPACE: '20', EXPORT_SECONDS_PER_DAY: '100' });
  const ws = await app.workspace({ credits: 0 });
  const p = await textProject(app, ws.key, 40);
  const first = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  const second = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(first.status, 200, first.text);
  t.equal(second.status, 200, second.text);
  const third = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(third.status, 429, third.text);
  t.match(third.body.error, {
    code: 'rate_limited',
    retryable: true,
    context: { quota_seconds: 100, used_seconds: 80, requested_seconds: 40 },
  });
  const wait = Number(third.headers.get('retry-after'));
  t.ok(wait > 86_000 && wait <= 86_400, `Retry-After is when the first export leaves the 24 h window (${wait} s)`);
  t.equal(third.headers.get('x-ratelimit-remaining'), '20', 'seconds of quota left');
  t.equal(third.headers.get('x-ratelimit-limit'), '100');

  // The first export was queued almost 24 hours ago: the wait is what is left of its window.
  await app.service.ctx.sql`update editor_exports set created_at = now() - interval '23 hours 59 minutes' where id = ${first.body.id}`;
  const soon = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(soon.status, 429);
  const left = Number(soon.headers.get('retry-after'));
  t.ok(left >= 55 && left <= 61, `Retry-After ${left} s`);
  t.ok(Number(soon.headers.get('x-ratelimit-reset')) - Date.now() < 62_000, 'X-RateLimit-Reset agrees');

  // A failed export does not count; a canceled one neither.
  await app.service.ctx.sql`update editor_exports set status = 'failed' where id = ${first.body.id}`;
  const afterFailed = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(afterFailed.status, 200, afterFailed.text);
  const full = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(full.status, 429);
  const canceled = await app.request('DELETE', `${exportsUrl(p.id)}/${second.body.id}`, { key: ws.key });
  t.equal(canceled.status, 200, canceled.text);
  const afterCancel = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(afterCancel.status, 200, afterCancel.text);

  // A project longer than the whole quota can never be exported: 400, not a 429 to wait for.
  const long = await textProject(app, ws.key, 150);
  const never = await app.request('POST', exportsUrl(long.id), { key: ws.key });
  t.equal(never.status, 400, never.text);
  t.match(never.body.error, { code: 'bad_request', context: { quota_seconds: 100, errors: [{ field: 'path.id' }] } });
});

/** ffmpeg processes this test process started (zombies excluded). */
/** Live ffmpeg processes started by this process (directly, or under the guard shell each run has). */
function ffmpegChildren(): number[] {
  const procs: { pid: number; comm: string; ppid: number }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      const [state, ppid] = (rest ?? '').split(' ');
      if (state !== 'Z') procs.push({ pid: Number(entry), comm: comm ?? '', ppid: Number(ppid) });
    } catch {
      // gone meanwhile
    }
  }
  const mine = new Set(procs.filter((p) => p.ppid === process.pid).map((p) => p.pid));
  return procs.filter((p) => /ffmpeg/.test(p.comm) && (p.ppid === process.pid || mine.has(p.ppid))).map((p) => p.pid);
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('cancel: a rendering export stops within a second, its ffmpeg killed; its slot frees at once', async (t) => {
  const app = await startTestApp(t, { EXPORTS_IN_FLIGHT_PER_WORKSPACE: '1' }, { workers: true });
  const ws = await app.workspace();
  const img = await upload(app, ws.key, 'still.png', 'image/png', await colorPng('#336699', 1080, 1920));
  const p = await createProject(app, ws.key, { aspect_ratio: '9:16', fps: 30 });
  await app.request('POST', `/api/v1/editor/videos/${p.id}/media`, {
    key: ws.key,
    body: { media_id: img.media.id, from_seconds: 0, duration_seconds: 1800 },
  });
  await editOk(app, ws.key, p.id, [{ type: 'add_text', text: 'A long render', from_seconds: 0, duration_seconds: 1800 }]);
  const before = new Set(ffmpegChildren());
  const q = await app.request('POST', exportsUrl(p.id), { key: ws.key, body: { quality: 'high' } });
  t.equal(q.status, 200, q.text);
  const url = `${exportsUrl(p.id)}/${q.body.id}`;
  await until('rendering', async () => (await app.request('GET', url, { key: ws.key })).body.status === 'rendering');
  const running = await until('an ffmpeg of the export', () => {
    const pids = ffmpegChildren().filter((pid) => !before.has(pid));
    return pids.length ? pids : undefined;
  });
  const workDirs = () => fs.readdirSync(path.join(app.service.ctx.config.dataDir, 'tmp')).filter((d) => d === `export-${q.body.id}`);
  t.equal(workDirs().length, 1, 'the render has its work folder');

  // Not yours: 404, naming the video (to another workspace it does not exist).
  const stranger = await app.workspace();
  const foreign = await app.request('DELETE', url, { key: stranger.key });
  t.equal(foreign.status, 404, foreign.text);
  t.match(foreign.body.error, { code: 'not_found', context: { resource: 'editor_video', field: 'path.id' } });

  const canceledAt = Date.now();
  const del = await app.request('DELETE', url, { key: ws.key });
  t.equal(del.status, 200, del.text);
  t.match(del.body, { object: 'editor_export', id: q.body.id, status: 'canceled', url: null });
  await until(
    'ffmpeg killed',
    () =>
      running.some((pid) => fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')))
        ? undefined
        : true,
    10_000,
  );
  const took = Date.now() - canceledAt;
  t.ok(took < 3000, `ffmpeg gone ${took} ms after the cancel`);
  t.same(
    ffmpegChildren().filter((pid) => !before.has(pid)),
    [],
    'no ffmpeg of this test is left',
  );
  await until('the work folder removed', () => (workDirs().length === 0 ? true : undefined), 5000);

  // Idempotent, and it stays canceled (the worker does not fail or retry it).
  const again = await app.request('DELETE', url, { key: ws.key });
  t.equal(again.status, 200);
  t.equal(again.body.status, 'canceled');
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await app.request('GET', url, { key: ws.key })).body.status, 'canceled');

  // The one slot is free again at once.
  const next = await app.request('POST', exportsUrl(p.id), { key: ws.key, body: { quality: 'draft' } });
  t.equal(next.status, 200, next.text);
  const blocked = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(blocked.status, 429, 'the limit of 1 holds');
  const nextDel = await app.request('DELETE', `${exportsUrl(p.id)}/${next.body.id}`, { key: ws.key });
  t.equal(nextDel.status, 200);
  t.equal(nextDel.body.status, 'canceled');
  await until('no ffmpeg left', () => (ffmpegChildren().filter((pid) => !before.has(pid)).length === 0 ? true : undefined), 10_000);
});

t.test('cancel: a queued export never renders; a finished one is 409 conflict', async (t) => {
  const app = await startTestApp(t, {}, { workers: true });
  const ws = await app.workspace();
  const p = await textProject(app, ws.key, 1);
  const done = await app.request('POST', exportsUrl(p.id), { key: ws.key, body: { quality: 'draft' } });
  const url = `${exportsUrl(p.id)}/${done.body.id}`;
  const finished = await until('completed', async () => {
    const r = await app.request('GET', url, { key: ws.key });
    return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
  });
  t.equal(finished.status, 'completed', JSON.stringify(finished.error));
  const late = await app.request('DELETE', url, { key: ws.key });
  t.equal(late.status, 409, late.text);
  t.match(late.body.error, { code: 'conflict', retryable: false, context: { status: 'completed', field: 'path.export_id' } });
  t.equal((await app.request('GET', url, { key: ws.key })).body.status, 'completed', 'still completed');

  // Queued (an API node without workers): canceled before any worker takes it, never started.
  const other = await startTestApp(t);
  const ws2 = await other.workspace();
  const p2 = await textProject(other, ws2.key, 1);
  const queued = await other.request('POST', exportsUrl(p2.id), { key: ws2.key });
  const del = await other.request('DELETE', `${exportsUrl(p2.id)}/${queued.body.id}`, { key: ws2.key });
  t.equal(del.status, 200, del.text);
  t.match(del.body, { status: 'canceled', progress: 0 });
  const row = (await other.service.ctx.sql`select started_at, job_id from editor_exports where id = ${queued.body.id}`)[0];
  t.equal(row.started_at, null, 'never started');
  const job = (await other.service.ctx.sql`select state from pgboss.job where id = ${row.job_id}`)[0];
  t.equal(job?.state, 'cancelled', 'its job is cancelled');
});

t.test('GET and DELETE …/exports/{export_id}: a missing video names path.id, a missing export path.export_id (REST and MCP)', async (t) => {
  const app = await startTestApp(t);
  const ws = await app.workspace();
  const other = await app.workspace();
  const mine = await textProject(app, ws.key, 1);
  const sibling = await textProject(app, ws.key, 1);
  const theirs = await textProject(app, other.key, 1);
  const mineExport = (await app.request('POST', exportsUrl(mine.id), { key: ws.key })).body.id;
  const theirExport = (await app.request('POST', exportsUrl(theirs.id), { key: other.key })).body.id;
  const unknownVideo = 987654321;
  const unknownExport = '00000000-0000-4000-8000-00000000abcd';
  const cases: [string, number, string, { resource: string; field: string }][] = [
    ['no such video', unknownVideo, unknownExport, { resource: 'editor_video', field: 'path.id' }],
    ['no such video, an export id of this workspace', unknownVideo, mineExport, { resource: 'editor_video', field: 'path.id' }],
    ["another workspace's video and its export", theirs.id, theirExport, { resource: 'editor_video', field: 'path.id' }],
    ['own video, no such export', mine.id, unknownExport, { resource: 'editor_export', field: 'path.export_id' }],
    ["own video, another video's export", sibling.id, mineExport, { resource: 'editor_export', field: 'path.export_id' }],
    ["own video, another workspace's export", mine.id, theirExport, { resource: 'editor_export', field: 'path.export_id' }],
  ];
  for (const [name, videoId, exportId, context] of cases) {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await app.request(method, `${exportsUrl(videoId)}/${exportId}`, { key: ws.key });
      t.equal(res.status, 404, `${method} ${name}: ${res.text.slice(0, 200)}`);
      t.match(res.body.error, { code: 'not_found', context }, `${method} ${name}: names ${context.field}`);
    }
    for (const tool of ['get_editor_video_export', 'cancel_editor_video_export']) {
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ws.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: tool, arguments: { id: videoId, export_id: exportId } },
        }),
      });
      const { result } = (await res.json()) as { result: { isError?: boolean; structuredContent?: any } };
      t.ok(result.isError, `${tool} ${name}: an error`);
      t.match(
        result.structuredContent,
        { error: { code: 'not_found', context: { resource: context.resource, field: context.field.slice('path.'.length) } } },
        `${tool} ${name}: names ${context.field.slice('path.'.length)}`,
      );
    }
  }
  t.equal(
    (await app.request('GET', `${exportsUrl(theirs.id)}/${theirExport}`, { key: other.key })).body.status,
    'queued',
    'their export is untouched',
  );
  t.equal((await app.request('GET', `${exportsUrl(mine.id)}/${mineExport}`, { key: ws.key })).body.status, 'queued', 'and so is this one');
});

t.test('a render that finishes after its export was canceled does not complete it', async (t) => {
  // A worker's attempt, held by the test: the export is rendering, then canceled before the
  // render's completion is written.
  const app = await startTestApp(t);
  const ctx = app.service.ctx;
  const ws = await app.workspace();
  const p = await textProject(app, ws.key, 1);
  const q = await app.request('POST', exportsUrl(p.id), { key: ws.key });
  t.equal(q.status, 200, q.text);
  const row = await startExport(ctx, q.body.id);
  t.equal(row?.status, 'rendering');
  const del = await app.request('DELETE', `${exportsUrl(p.id)}/${q.body.id}`, { key: ws.key });
  t.equal(del.body.status, 'canceled');
  const out = { storageKey: `editor-exports/${ws.orgId}/${q.body.id}.mp4`, bytes: 1000, durationSeconds: 1, hasAudio: false };
  t.equal(await completeExport(ctx, row!, out), false, 'the late completion does nothing, and says so');
  const got = await app.request('GET', `${exportsUrl(p.id)}/${q.body.id}`, { key: ws.key });
  t.match(got.body, { status: 'canceled', url: null, size_bytes: null });
  const [{ n }] = await ctx.sql`select count(*)::int as n from media where org_id = ${ws.orgId} and source = 'render'`;
  t.equal(n, 0, 'no media row for it');
});
