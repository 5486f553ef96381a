// A worker killed (kill -9 of its process group) while it renders a faceless video: another
// worker resumes the job after the stored stages and finishes it; one charge, no refund.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-faceless-recovery-'));
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

const row = async (id: number) =>
  (await sql`select status, stage, attempts, artifacts from faceless_videos where video_id = ${id}`)[0] as { status: string; stage: string | null; attempts: number; artifacts: any };
async function until(what: string, fn: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('kill -9 while rendering, then another worker finishes the video', async (t) => {
  const ws = await api.workspace({ credits: 100 });
  const res = await api.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script: 'Tea is calm. Coffee is loud. Pick your mood today.', duration: '12' } });
  t.equal(res.status, 200, res.text);
  const id = res.body.video_id as number;

  const first = worker();
  await until('the first worker reaches the render', async () => (await row(id)).stage === 'render', 90_000);
  const scenes = (await row(id)).artifacts.scenes;
  process.kill(-first.pid!, 'SIGKILL');
  t.equal((await row(id)).status, 'generating', 'killed while still generating');

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.same(final.artifacts.scenes, scenes, 'the scenes of the first attempt were kept');
  const video = await api.request('GET', `/api/v1/videos/${id}`, { key: ws.key });
  t.match(video.body, { status: 'completed', progress: 100 });
  t.equal((await fetch(video.body.url)).status, 200);
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 100],
      ['faceless_video_charge', -40],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});
