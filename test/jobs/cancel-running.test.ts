// Cancelling running work with real workers (issue 26 item 4): the worker notices the cancel within
// about a second, cancels the hosted provider's job at the provider (Replicate POST
// /v1/predictions/{id}/cancel, fal PUT …/requests/{id}/cancel, against fakes that enforce the real
// request shapes), kills its ffmpeg (a local render), removes its work folder, and writes nothing
// after: no completion, no failure, no second refund. The refund rule's record: a hosted provider
// job that delivered is a paid call completed (the generation's state `paidCall`).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { startFalFake } from '../engines/fakes/fal.ts';
import { startReplicateFake } from '../engines/fakes/replicate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const replicate = await startReplicateFake('r8_test_token');
const fal = await startFalFake('fal-key-id:fal-key-secret');
t.teardown(() => Promise.all([replicate.close(), fal.close()]));

const app = await startTestApp(
  t,
  {
    REPLICATE_API_BASE: replicate.url,
    REPLICATE_API_TOKEN: 'r8_test_token',
    FAL_QUEUE_BASE: fal.url,
    FAL_KEY: 'fal-key-id:fal-key-secret',
    PROVIDER_POLL_MS: '40',
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
    RATE_LIMIT_GENERATIONS: '1000',
  },
  { workers: true },
);
const { ctx } = app.service;
const sql = ctx.sql;
type Ws = Awaited<ReturnType<TestApp['workspace']>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
const balance = async (orgId: string) => (await sql`select credits from organizations where id = ${orgId}`)[0].credits as number;
const ledger = async (orgId: string) =>
  (await sql`select reason, delta from credit_ledger where org_id = ${orgId} order by id`).map((l) => [l.reason, l.delta]);
const workDir = (name: string) => path.join(ctx.config.dataDir, 'tmp', name);
/** ffmpeg processes under this test process (the workers run in it; ffmpeg runs under a guard shell). */
const ffmpegChildren = () => {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,comm='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/));
  const mine = new Set([String(process.pid)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of rows) {
      if (mine.has(ppid) && !mine.has(pid)) {
        mine.add(pid);
        grew = true;
      }
    }
  }
  return rows.filter(([pid, , comm]) => mine.has(pid) && comm === 'ffmpeg').map(([pid]) => pid);
};

async function generation(ws: Ws, body: object): Promise<{ id: string; charged: number }> {
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { type: 'ai_model', ...body } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return { id: res.body.generations[0].id, charged: res.body.credits_deducted };
}

/** The generation stays canceled, with one refund of the whole charge and no output, a while after. */
async function staysCanceled(t: Test, ws: Ws, id: string, charged: number) {
  await sleep(1500);
  const [g] = await sql`select status, output_media_id, error, state from generations where id = ${id}`;
  t.equal(g.status, 'canceled', 'still canceled');
  t.equal(g.output_media_id, null, 'no output');
  t.equal(g.error, null, 'no failure written');
  t.same(
    await ledger(ws.orgId),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
      ['generation_refund', charged],
    ],
    'charged once, refunded once in full (no paid call completed)',
  );
  t.notOk(g.state?.paidCall, 'no paid call recorded');
}

const providers = [
  {
    name: 'Replicate',
    body: { model_slug: 'flux-image', variant_id: 'text-to-image', prompt: 'slow red sneaker', aspect_ratio: '1:1' },
    canceledAt: (jobId: string) =>
      replicate.seen.find((s) => s.method === 'POST' && s.path === `/v1/predictions/${jobId}/cancel`)?.at as number | undefined,
  },
  {
    name: 'fal',
    body: { model_slug: 'veo-3', variant_id: 'fast', prompt: 'slow waves at dusk', aspect_ratio: '16:9' },
    canceledAt: (jobId: string) =>
      fal.seen.find((s) => s.method === 'PUT' && s.path.endsWith(`/requests/${jobId}/cancel`))?.at as number | undefined,
  },
];

for (const p of providers) {
  t.test(
    `${p.name}: a running generation canceled: its provider job canceled within a second, its folder removed, refunded in full`,
    async (t) => {
      const ws = await app.workspace({ credits: 1000 });
      const { id, charged } = await generation(ws, p.body);
      const job = await until('the provider job', async () => {
        const [g] = await sql`select provider_job from generations where id = ${id}`;
        return g.provider_job?.id as string | undefined;
      });
      t.ok(fs.existsSync(workDir(`gen-${id}`)), 'the work folder exists while it runs');
      const sent = Date.now();
      const res = await app.request('POST', `/api/v1/generations/${id}/cancel`, { key: ws.key });
      t.equal(res.status, 200, res.text);
      t.match(res.body, { id, status: 'canceled', url: null });
      t.equal(await balance(ws.orgId), 1000, 'refunded in full at once');
      const at = await until('the provider cancel', async () => p.canceledAt(job), 10_000);
      t.comment(`provider job canceled ${at - sent} ms after the cancel`);
      t.ok(at - sent < 3000, `the worker noticed within about a second (${at - sent} ms)`);
      await until('the work folder removed', async () => !fs.existsSync(workDir(`gen-${id}`)), 5000);
      t.pass('the work folder is removed');
      await staysCanceled(t, ws, id, charged);
    },
  );
}

t.test('a hosted provider job that delivered is recorded as a paid call completed', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const { id } = await generation(ws, {
    model_slug: 'flux-image',
    variant_id: 'text-to-image',
    prompt: 'a blue kettle',
    aspect_ratio: '1:1',
  });
  const g = await until('completion', async () => {
    const [row] = await sql`select status, state from generations where id = ${id}`;
    return row.status !== 'generating' && row;
  });
  t.equal(g.status, 'completed');
  t.match(g.state.paidCall, { provider: 'replicate', at: String }, 'paidCall recorded in the state');
  const res = await app.request('POST', `/api/v1/generations/${id}/cancel`, { key: ws.key });
  t.equal(res.status, 409, 'finished: a conflict');
});

t.test('a running local render canceled: ffmpeg killed, folder removed, nothing written after', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const res = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script: 'Water keeps you sharp. Drink a glass now. Then another one. And one more.', duration: '30' },
  });
  t.equal(res.status, 200, res.text);
  const { video_id: id, credits_deducted: charged } = res.body;
  await until('ffmpeg running for it', async () => {
    const [v] = await sql`select status from faceless_videos where video_id = ${id}`;
    return v.status === 'generating' && ffmpegChildren().length > 0;
  });
  const canceled = await app.request('POST', `/api/v1/videos/${id}/cancel`, { key: ws.key });
  t.equal(canceled.status, 200, canceled.text);
  t.match(canceled.body, { status: 'canceled' });
  const sent = Date.now();
  await until('the worker stopped', async () => ffmpegChildren().length === 0 && !fs.existsSync(workDir(`faceless-${id}`)), 10_000);
  t.comment(`ffmpeg gone and folder removed ${Date.now() - sent} ms after the cancel`);
  await sleep(1500);
  const [v] = await sql`select status, output_media_id, error from faceless_videos where video_id = ${id}`;
  t.same([v.status, v.output_media_id, v.error], ['canceled', null, null], 'nothing written after the cancel');
  t.same(
    (await ledger(ws.orgId)).slice(1),
    [
      ['faceless_video_charge', -charged],
      ['faceless_video_refund', charged],
    ],
    'refunded once in full (local engines: no paid call)',
  );
});
