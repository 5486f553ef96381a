// A worker killed mid-job (the whole process group, as a lost machine) leaves a job that another
// worker finishes later: one charge, no refund, a real output.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-recovery-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const api = await startTestApp(t, { DATA_DIR: dataDir, JOB_HEARTBEAT_SECONDS: '10' });
const sql = api.service.ctx.sql;

function worker(): ChildProcess {
  const child = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: root,
    detached: true, // its own process group, so ffmpeg dies with it
    env: {
      ...process.env,
      ...api.s3?.env, // the API's bucket under TEST_STORAGE=s3
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

const row = async (id: string) => (await sql`select status, attempts, progress from generations where id = ${id}`)[0] as { status: string; attempts: number; progress: number };
async function until(what: string, fn: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('kill -9 mid-render, then another worker finishes the job', async (t) => {
  const ws = await api.workspace({ credits: 5000 });
  const models = (await api.request('GET', '/api/v1/models')).body;
  const vt = models.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'high');
  const res = await api.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'video_ad', template_slug: vt.slug, quality_tier: 'high', duration: Math.max(...tier.duration_options), resolution: '1080p', prompt: 'A long render' },
  });
  t.equal(res.status, 200);
  const id = res.body.generations[0].id;
  const charged = res.body.credits_deducted;

  const first = worker();
  await until('the first worker starts the job', async () => (await row(id)).attempts >= 1, 60_000);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await row(id)).status, 'generating', 'killed while still generating');
  process.kill(-first.pid!, 'SIGKILL');

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  const done = await api.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.equal(done.body.output.content_type, 'video/mp4');
  t.equal((await fetch(done.body.url)).status, 200);
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 5000],
      ['generation_charge', -charged],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});
