// A worker killed while it renders a slideshow's MP4 (the whole process group, as a lost machine)
// leaves a job another worker finishes: one charge, no refund, the slides and timeline items of
// the first attempt kept (none rendered or added twice), and the carousel MP4.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-slideshow-recovery-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const api = await startTestApp(t, { DATA_DIR: dataDir, JOB_HEARTBEAT_SECONDS: '10' });
const sql = api.service.ctx.sql;

function worker(): ChildProcess {
  const child = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: root,
    detached: true, // its own process group, so ffmpeg dies with it
    env: {
      ...process.env,
      DATABASE_URL: api.databaseUrl,
      DATA_DIR: dataDir,
      MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
      JOB_HEARTBEAT_SECONDS: '10',
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  });
  return child;
}

const row = async (id: string) =>
  (await sql`select status, stage, attempts, project_version from slideshows where id = ${id}`)[0] as { status: string; stage: string | null; attempts: number; project_version: number | null };
async function until(what: string, fn: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('kill -9 while the MP4 renders, then another worker finishes the slideshow', async (t) => {
  const ws = await api.workspace({ credits: 1000 });
  const res = await api.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: { prompt: 'Four ways to keep plants alive', slide_count: 4, aspect_ratio: '9:16', generate_text_overlays: true },
  });
  t.equal(res.status, 200);
  const id = res.body.slideshow_id;

  const first = worker();
  await until('the first worker reaches the video stage', async () => (await row(id)).stage === 'video', 90_000);
  const before = await row(id);
  t.equal(before.status, 'generating', 'killed while still generating');
  t.ok(before.project_version, 'the project was filled before the kill');
  const [items] = await sql`select json_array_length(timeline->'items') as n from editor_videos where video_id = ${res.body.video_id}`;
  process.kill(-first.pid!, 'SIGKILL');

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.equal(final.project_version, before.project_version, 'the project was not filled again');
  const [after] = await sql`select json_array_length(timeline->'items') as n from editor_videos where video_id = ${res.body.video_id}`;
  t.equal(after.n, items.n, 'no timeline item added twice');
  t.equal(items.n, 8, 'four image items and four text items');
  const [{ n: slides }] = await sql`select count(*)::int as n from slideshow_slides where slideshow_id = ${id}`;
  t.equal(slides, 4);
  const [{ n: images }] = await sql`select count(*)::int as n from media where org_id = ${ws.orgId} and kind = 'image'`;
  t.equal(images, 4, 'each slide stored once');
  const done = await api.request('GET', `/api/v1/slideshows/${id}`, { key: ws.key });
  t.equal(done.body.slides.length, 4);
  t.equal((await fetch(done.body.video_url)).status, 200);
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 1000],
      ['slideshow_charge', -40],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});
