// Terminal failure through the dead-letter queue: a job whose last attempt was lost (its worker
// died holding it: pg-boss fails it, as the supervisor does once the heartbeat stops) lands on
// `<queue>-dead`, and a worker fails the generation with `worker_lost` and refunds it once.
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

// No retries, so the first lost attempt is the last. The API node runs no workers: the test holds
// the job itself, as a worker that is about to die would.
const api = await startTestApp(t, { GENERATION_RETRY_LIMIT: '0' });
const sql = api.service.ctx.sql;
const boss = api.service.boss!;

t.test('a video generation lost on its last attempt fails as worker_lost, refunded once', async (t) => {
  const ws = await api.workspace({ credits: 5000 });
  const models = (await api.request('GET', '/api/v1/models')).body;
  const vt = models.video_ads[0];
  const res = await api.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'video_ad', template_slug: vt.slug, quality_tier: 'low', prompt: 'Lost' },
  });
  t.equal(res.status, 200);
  const id: string = res.body.generations[0].id;
  const charged: number = res.body.credits_deducted;
  const [job] =
    await sql`select j.id, j.name, j.dead_letter, j.data from generations g join pgboss.job j on j.id = g.job_id::uuid where g.id = ${id}`;
  t.match(
    job,
    { name: 'generation-video', dead_letter: 'generation-video-dead', data: { generationId: id, $version: 1 } },
    'a video goes to the video queue, its payload versioned',
  );

  // Held, then lost: the fetch makes it active, the failure of its only attempt dead-letters it.
  const [held] = await boss.fetch('generation-video', { includeMetadata: true });
  t.equal(held?.id, job.id);
  await boss.fail('generation-video', held!, { message: 'worker lost' });
  const [dead] = await sql`select name, data from pgboss.job where source_id = ${job.id}`;
  t.match(dead, { name: 'generation-video-dead', data: { generationId: id } }, 'the job reached the dead-letter queue');

  // A worker node picks the dead letter up.
  await startTestApp(t, {}, { workers: true, databaseUrl: api.databaseUrl });
  const deadline = Date.now() + 30_000;
  let g = (await api.request('GET', `/api/v1/generations/${id}`, { key: ws.key })).body;
  while (g.status === 'generating' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    g = (await api.request('GET', `/api/v1/generations/${id}`, { key: ws.key })).body;
  }
  t.match(g, { status: 'error', error: { code: 'worker_lost', retryable: true } });
  const ledger = await sql`select reason, delta from credit_ledger where org_id = ${ws.orgId} order by id`;
  t.same(
    ledger.map((l) => [l.reason, l.delta]),
    [
      ['initial_grant', 5000],
      ['generation_charge', -charged],
      ['generation_refund', charged],
    ],
    'charged once, refunded once',
  );
  const [org] = await sql`select credits from organizations where id = ${ws.orgId}`;
  t.equal(org.credits, 5000);
});
