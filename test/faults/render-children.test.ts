// A worker killed with kill -9 (its pid alone, as the OOM killer or an operator does) takes its
// render with it within a second (SECURITY.md: ffmpeg "dies within a second of the worker that
// started it"): the ffmpeg of a video generation in flight and the guard around it. The render's
// processes are read from /proc the moment ffmpeg starts, the worker is killed, and /proc is polled
// without reaping the dead worker meanwhile (a dead process is a zombie until its parent reaps it,
// and a busy supervisor may take its time): the render must not wait for that.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { startTestApp } from '../helpers/app.ts';
import { descendants, goneWithin } from '../helpers/process.ts';

const root = path.resolve(import.meta.dirname, '../..');

t.test('kill -9 of a worker rendering a video: its ffmpeg is gone within a second', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-render-children-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const api = await startTestApp(t, { DATA_DIR: dataDir });
  const ws = await api.workspace({ credits: 5000 });
  const vt = (await api.request('GET', '/api/v1/models')).body.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'low');
  const res = await api.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'video_ad',
      template_slug: vt.slug,
      quality_tier: 'low',
      duration: Math.max(...tier.duration_options),
      prompt: 'A render cut short',
    },
  });
  t.equal(res.status, 200, res.text);

  const worker = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: root,
    detached: true, // a process group of its own, for the teardown; the test kills the worker's pid alone
    env: {
      ...process.env,
      ...api.s3?.env,
      DATABASE_URL: api.databaseUrl,
      DATA_DIR: dataDir,
      MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  let render: { pid: number; argv: string[] }[] = [];
  t.teardown(() => {
    for (const pid of [-worker.pid!, ...render.map((p) => p.pid)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });

  const deadline = Date.now() + 90_000;
  while (!(render = descendants(worker.pid!)).some((p) => p.argv[0] === FFMPEG_PATH)) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the worker to start ffmpeg');
    await new Promise((r) => setTimeout(r, 5));
  }
  process.kill(worker.pid!, 'SIGKILL');
  const ms = goneWithin(
    render.map((p) => p.pid),
    10_000,
  );
  const names = render.map((p) => `${p.pid} ${path.basename(p.argv[0])}`).join(', ');
  t.ok(ms >= 0 && ms <= 1000, `the render's processes (${names}) gone ${ms < 0 ? 'not within 10 s' : `${ms} ms`} after the kill`);
});
