// The resource lifecycle kernel against a real database, on a resource declared for the test
// (./helpers.ts) with its own ledger reason and events.
// Fail is refunded once with one event; a completion after a failure changes nothing; progress
// never goes backwards.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import { creditLedger, facelessVideos, media, organizations, webhookEvents } from '../../src/db/schema/index.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { defineResource } from '../../src/kernel/resource.ts';
import { startTestApp } from '../helpers/app.ts';
import { newThing, thing } from './helpers.ts';

// No workers: the test is the worker.
const app = await startTestApp(t);
const ctx: AppContext = app.service.ctx;
const db = ctx.db;
const setup = (credits?: number) => newThing(app, credits);

const row = async (id: number) => (await db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id)))[0];
const balance = async (orgId: string) =>
  (await db.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId)))[0].credits;
const events = async (orgId: string) =>
  (await db.select().from(webhookEvents).where(eq(webhookEvents.orgId, orgId))).map((e) => ({ type: e.type, body: JSON.parse(e.body) }));
const output = (orgId: string, key: string) => ({
  orgId,
  kind: 'video' as const,
  status: 'completed' as const,
  source: 'render' as const,
  contentType: 'video/mp4',
  sizeBytes: 10,
  storageKey: key,
});
const detail = (message: string) => ({ code: 'render_failed', message, retryable: false, context: {} });

t.test('start: pending or running → running, one more attempt; undefined once finished', async (t) => {
  const { orgId, id } = await setup();
  const first = await thing.start(ctx, id);
  t.match(first, { videoId: id, status: 'generating', attempts: 1 });
  t.ok(first!.startedAt, 'started_at is set');
  const again = await thing.start(ctx, id);
  t.equal(again!.attempts, 2);
  t.same(again!.startedAt, first!.startedAt, 'started_at stays the first attempt’s');
  t.ok(await thing.complete(ctx, id, { media: output(orgId, 'things/a.mp4') }));
  t.equal(await thing.start(ctx, id), undefined, 'a finished resource starts no attempt');
  t.equal((await row(id)).attempts, 2);
});

t.test('fail twice: failed and refunded once, one event', async (t) => {
  const { orgId, id } = await setup();
  await db.update(organizations).set({ credits: 70 }).where(eq(organizations.id, orgId)); // as if charged 30
  await thing.start(ctx, id);
  await thing.progress(ctx, id, 'two', 30);
  const [a, b] = await Promise.all([thing.fail(ctx, id, detail('first')), thing.fail(ctx, id, detail('second'))]);
  t.same([a, b].sort(), [false, true], 'one of two concurrent failures fails it');
  t.equal(await thing.fail(ctx, id, detail('third')), false, 'a later one does nothing');
  const r = await row(id);
  t.match(r, { status: 'error', stage: 'two' });
  t.ok(r.refundedAt, 'refunded_at is set');
  t.ok(['first', 'second'].includes((r.error as { message: string }).message), 'the error of the failure that won');
  const refunds = await db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.orgId, orgId), eq(creditLedger.reason, 'faceless_video_refund')));
  t.same(
    refunds.map((l) => [l.delta, l.reference]),
    [[30, `faceless-video:${id}`]],
    'one refund, with the declared reason and reference',
  );
  t.equal(await balance(orgId), 100);
  const evs = await events(orgId);
  t.same(
    evs.map((e) => e.type),
    ['faceless_video.failed'],
    'one failure event',
  );
  t.match(evs[0].body.data, { object: 'thing', id, status: 'error' }, 'its data is the view read in the failing transaction');
});

t.test('a resource without credits fails without a ledger row', async (t) => {
  const { orgId, id } = await setup();
  await db.update(facelessVideos).set({ credits: 0 }).where(eq(facelessVideos.videoId, id));
  t.ok(await thing.fail(ctx, id, detail('free')), 'a pending resource can fail');
  t.equal(
    (
      await db
        .select()
        .from(creditLedger)
        .where(and(eq(creditLedger.orgId, orgId), eq(creditLedger.reason, 'faceless_video_refund')))
    ).length,
    0,
  );
  t.same(
    (await events(orgId)).map((e) => e.type),
    ['faceless_video.failed'],
  );
});

t.test('complete after fail changes nothing; fail after complete neither', async (t) => {
  const { orgId, id } = await setup();
  await thing.start(ctx, id);
  t.ok(await thing.fail(ctx, id, detail('gone')));
  const before = await row(id);
  let extra = 0;
  t.equal(await thing.complete(ctx, id, { media: output(orgId, 'things/late.mp4'), extra: async () => void extra++ }), false);
  t.same(await row(id), before, 'the row is unchanged');
  t.equal(extra, 0, 'no extra rows');
  t.equal((await db.select().from(media).where(eq(media.storageKey, 'things/late.mp4'))).length, 0, 'its media row was rolled back');
  t.same(
    (await events(orgId)).map((e) => e.type),
    ['faceless_video.failed'],
  );

  const done = await setup();
  await thing.start(ctx, done.id);
  t.ok(
    await thing.complete(ctx, done.id, {
      media: output(done.orgId, 'things/b.mp4'),
      set: { title: 'Made' },
      extra: async () => void extra++,
    }),
  );
  t.equal(
    await thing.complete(ctx, done.id, { media: output(done.orgId, 'things/b2.mp4'), extra: async () => void extra++ }),
    false,
    'a second completion does nothing',
  );
  t.equal(await thing.fail(ctx, done.id, detail('too late')), false);
  const r = await row(done.id);
  t.match(r, { status: 'completed', progress: 100, stage: null, title: 'Made', error: null, refundedAt: null });
  const [m] = await db.select().from(media).where(eq(media.id, r.outputMediaId!));
  t.equal(m.storageKey, 'things/b.mp4', 'the output media row is recorded');
  t.equal(extra, 1, 'the extra rows of the one completion');
  t.equal(await balance(done.orgId), 100, 'no refund');
  t.same(
    (await events(done.orgId)).map((e) => e.type),
    ['faceless_video.completed'],
    'one completion event',
  );
});

t.test('progress never goes backwards, and is written only while running', async (t) => {
  const { id } = await setup();
  const state = async () => {
    const r = await row(id);
    return [r.stage, r.progress];
  };
  await thing.progress(ctx, id, 'one', 5);
  t.same(await state(), [null, 0], 'not before the attempt starts');
  await thing.start(ctx, id);
  await thing.progress(ctx, id, 'two', 30);
  await thing.progress(ctx, id, 'one', 20);
  t.same(await state(), ['two', 30], 'a report of an earlier stage is not taken');
  await thing.progress(ctx, id, 'two', 25);
  t.same(await state(), ['two', 30], 'nor a lower percent');
  await thing.progress(ctx, id, 'three', 30);
  t.same(await state(), ['three', 30], 'the next stage at the same percent is');
  await thing.progress(ctx, id, 'two', 30);
  t.same(await state(), ['three', 30], 'the late end of the stage before is not');
  await thing.progress(ctx, id, 'four', 250.4);
  t.same(await state(), ['four', 99], 'at most 99 until completed');
  await thing.fail(ctx, id, detail('stop'));
  await thing.progress(ctx, id, 'four', 99);
  t.equal((await row(id)).status, 'error');
});

t.test(
  'cancel: a pending one is canceled with its job; again answers it; a finished one is a conflict; another workspace’s is not found',
  async (t) => {
    const cancelable = defineResource({
      ...thing.declaration,
      columns: { ...thing.declaration.columns, jobId: 'jobId' },
      statuses: { ...thing.declaration.statuses, canceled: 'canceled' as never },
      cancel: { queue: facelessJob.name, conflict: (r) => new Error(`already ${r.status}`) },
    });
    const { orgId, id } = await setup();
    const jobId = randomUUID();
    await db.transaction((tx) => ctx.queue.sendInTx(tx, facelessJob, { videoId: id }, jobId));
    await db.update(facelessVideos).set({ jobId }).where(eq(facelessVideos.videoId, id));
    const other = await app.workspace({ credits: 0 });
    t.equal(await cancelable.cancel(ctx, other.orgId, id), undefined, 'scoped to the workspace');
    const done = await cancelable.cancel(ctx, orgId, id);
    t.match(done, { previous: 'queued', row: { status: 'canceled' } });
    t.ok(done!.row.completedAt, 'completed_at is set');
    const [job] = await ctx.sql`select state from pgboss.job where id = ${jobId}`;
    t.equal(job.state, 'cancelled', 'its queued job is cancelled');
    t.match(await cancelable.cancel(ctx, orgId, id), { previous: 'canceled' }, 'cancelling again answers it');
    t.equal(await cancelable.statusOf(ctx, id), 'canceled');
    t.equal(await cancelable.start(ctx, id), undefined, 'a canceled one starts no attempt');

    const finished = await setup();
    await cancelable.start(ctx, finished.id);
    await cancelable.complete(ctx, finished.id, { media: output(finished.orgId, 'things/c.mp4') });
    await t.rejects(cancelable.cancel(ctx, finished.orgId, finished.id), /already completed/);
  },
);
