// Cancelling a publication's queued targets (cancelPublication, for MCP tasks/cancel): every
// still-queued target canceled with its job, a later delivery doing nothing; again answers the same;
// a publishing target is left publishing (a conflict when nothing else can be canceled); another
// workspace's is the get's 404; a worker starting a target while it is canceled gives exactly one
// of the two. Publishing is free: nothing is charged or refunded. The publications are written as
// publish_media_to_social writes them (rows and one job per target, whose id is the target's) on a
// service without workers.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import { creditLedger, socialPublications, socialPublicationTargets } from '../../src/db/schema/index.ts';
import { ApiError } from '../../src/errors.ts';
import { socialPublishJob } from '../../src/pipelines/social-publication/job.ts';
import { cancelPublication, publicationTargetResource, startTarget } from '../../src/pipelines/social-publication/rows.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t);
const ctx: AppContext = app.service.ctx;

/** A publication to `accounts` targets, queued with their jobs. */
async function publication(orgId: string, accounts = 2): Promise<{ id: string; targets: string[] }> {
  return ctx.db.transaction(async (tx) => {
    const [pub] = await tx.insert(socialPublications).values({ orgId, mediaIds: [], source: {}, caption: 'hello' }).returning();
    const targets = await tx
      .insert(socialPublicationTargets)
      .values(
        Array.from({ length: accounts }, (_, position) => ({
          publicationId: pub.id,
          orgId,
          accountId: randomUUID(),
          platform: 'x',
          position,
        })),
      )
      .returning();
    for (const target of targets) await ctx.queue.sendInTx(tx, socialPublishJob, { targetId: target.id }, target.id);
    return { id: pub.id, targets: targets.map((target) => target.id) };
  });
}
const statuses = async (id: string) =>
  (await ctx.db.select().from(socialPublicationTargets).where(eq(socialPublicationTargets.publicationId, id))).map((r) => r.status).sort();
const jobState = async (jobId: string) => (await ctx.sql`select state from pgboss.job where id = ${jobId}`)[0]?.state as string | undefined;
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );
const deliver = (targetId: string) =>
  socialPublishJob.declaration.run(
    ctx,
    { id: 'test-delivery', data: { targetId }, attempt: 1, lastAttempt: false },
    { signal: new AbortController().signal, progress() {}, annotate() {} },
  );

t.test('every queued target is canceled with its job; a delivery does nothing; again answers the same', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const { id, targets } = await publication(ws.orgId);
  const view = await cancelPublication(ctx, ws.orgId, id);
  t.match(view, { id, status: 'canceled', results: [{ status: 'canceled' }, { status: 'canceled' }] });
  for (const target of targets) t.equal(await jobState(target), 'cancelled', 'its job is cancelled');
  t.same(await cancelPublication(ctx, ws.orgId, id), view, 'again: the same answer');
  await deliver(targets[0]);
  t.same(await statuses(id), ['canceled', 'canceled'], 'a delivery leaves it canceled');
  t.equal(
    (await ctx.db.select().from(socialPublicationTargets).where(eq(socialPublicationTargets.id, targets[0])))[0].attempts,
    0,
    'with no attempt',
  );
  t.equal((await ctx.db.select().from(creditLedger).where(eq(creditLedger.orgId, ws.orgId))).length, 1, 'free: only the grant');
  const [pub] = await ctx.db.select().from(socialPublications).where(eq(socialPublications.id, id));
  t.ok(pub.completedAt, 'the publication is settled');
});

t.test('a publishing target stays publishing; with nothing else to cancel it is a conflict; other workspace 404', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const { id, targets } = await publication(ws.orgId);
  t.ok(await startTarget(ctx, targets[0]), 'a worker starts the first target');
  const view = await cancelPublication(ctx, ws.orgId, id);
  t.equal(view.status, 'queued', 'one still publishing');
  t.same(await statuses(id), ['canceled', 'publishing']);
  t.same(await cancelPublication(ctx, ws.orgId, id), view, 'again: the same answer');

  const running = await publication(ws.orgId, 1);
  await startTarget(ctx, running.targets[0]);
  const err = await rejection(cancelPublication(ctx, ws.orgId, running.id));
  t.ok(
    err instanceof ApiError && err.code === 'conflict' && /already publishing and can no longer be canceled/.test(err.message),
    String(err),
  );
  t.same(await statuses(running.id), ['publishing']);

  const other = await app.workspace({ credits: 100 });
  t.match(await rejection(cancelPublication(ctx, other.orgId, id)), { code: 'not_found' }, 'another workspace: not found');
  t.match(await rejection(cancelPublication(ctx, ws.orgId, 'not-a-uuid')), { code: 'not_found' }, 'an id that is no uuid: not found');
});

t.test('a worker starting a target while the publication is canceled: exactly one of the two', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  for (let round = 0; round < 12; round++) {
    const { id, targets } = await publication(ws.orgId, 1);
    const [started, answer] = await Promise.all([startTarget(ctx, targets[0]), rejection(cancelPublication(ctx, ws.orgId, id))]);
    const [status] = await statuses(id);
    if (started) {
      t.match(answer, { code: 'conflict' }, `round ${round}: started, so the cancel is a conflict`);
      t.equal(status, 'publishing');
    } else {
      t.equal(answer, undefined, `round ${round}: canceled`);
      t.equal(status, 'canceled');
      t.equal(await publicationTargetResource.start(ctx, targets[0]), undefined, 'and no worker starts it after');
    }
  }
});
