// Cancelling queued work (the service functions MCP tasks/cancel calls) for each paid kind — a
// generation, a slideshow, a faceless video, a reference inspiration: canceled with a full refund
// (one ledger row, refunded_at) and its queued job cancelled, a later delivery of the job doing
// nothing; again answers the same (no second refund); running work is canceled too, refunded in
// full when no paid provider call of it completed (test/http/cancel.test.ts has the rule's other
// half); finished work is a conflict; another workspace's is the GET's 404; a worker starting the
// job while it is canceled either finds it canceled or is canceled after, refunded once, many
// times over. No workers run: the work stays queued until the
// test runs its job itself.
import { and, eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import { creditLedger, media } from '../../src/db/schema/index.ts';
import { ApiError } from '../../src/errors.ts';
import type { Resource } from '../../src/kernel/resource.ts';
import { cancelFacelessVideo, facelessResource } from '../../src/pipelines/faceless-video/rows.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { cancelGeneration, generationResource } from '../../src/pipelines/generation/rows.ts';
import { imageGenerationJob } from '../../src/pipelines/generation/job.ts';
import { cancelReferenceInspiration, referenceResource } from '../../src/pipelines/reference-analysis/rows.ts';
import { referenceAnalysisJob } from '../../src/pipelines/reference-analysis/job.ts';
import { cancelSlideshow, slideshowResource } from '../../src/pipelines/slideshow/rows.ts';
import { slideshowJob } from '../../src/pipelines/slideshow/job.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '10000' });
const ctx: AppContext = app.service.ctx;
const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366cc' } })
  .png()
  .toBuffer();

type Ws = Awaited<ReturnType<TestApp['workspace']>>;
interface Kind {
  name: string;
  refundReason: string;
  /** Queues one through its POST; its id and the credits charged. */
  create(ws: Ws): Promise<{ id: string | number; credits: number }>;
  cancel(orgId: string, id: string | number): Promise<{ status: string; id: unknown }>;
  resource: Resource<any, any>;
  /** Runs one delivery of its job, as a worker would. */
  deliver(id: string | number): Promise<unknown>;
}

const post = async (ws: Ws, path: string, body: object) => {
  const res = await app.request('POST', `/api/v1/${path}`, { key: ws.key, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
};
const run = <D>(job: { declaration: { run: (...args: any[]) => Promise<unknown> } }, data: D) =>
  job.declaration.run(
    ctx,
    { id: 'test-delivery', data, attempt: 1, lastAttempt: false },
    {
      signal: new AbortController().signal,
      progress() {},
      annotate() {},
    },
  );

const kinds: Kind[] = [
  {
    name: 'generation',
    refundReason: 'generation_refund',
    create: async (ws) => {
      const b = await post(ws, 'generations', { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Summer sale' });
      return { id: b.generations[0].id, credits: b.credits_deducted };
    },
    cancel: (orgId, id) => cancelGeneration(ctx, orgId, id as string),
    resource: generationResource,
    deliver: (id) => run(imageGenerationJob, { generationId: id }),
  },
  {
    name: 'slideshow',
    refundReason: 'slideshow_refund',
    create: async (ws) => {
      const b = await post(ws, 'slideshows', { prompt: 'Why water beats soda', slide_count: 3 });
      return { id: b.slideshow_id, credits: b.credits_deducted };
    },
    cancel: (orgId, id) => cancelSlideshow(ctx, orgId, id as string),
    resource: slideshowResource,
    deliver: (id) => run(slideshowJob, { slideshowId: id }),
  },
  {
    name: 'faceless video',
    refundReason: 'faceless_video_refund',
    create: async (ws) => {
      const b = await post(ws, 'faceless-videos', { script: 'Water keeps you sharp. Drink a glass now.', duration: '6' });
      return { id: b.video_id, credits: b.credits_deducted };
    },
    cancel: (orgId, id) => cancelFacelessVideo(ctx, orgId, id as number),
    resource: facelessResource,
    deliver: (id) => run(facelessJob, { videoId: id }),
  },
  {
    name: 'reference inspiration',
    refundReason: 'reference_refund',
    create: async (ws) => {
      const b = await post(ws, 'reference-inspirations', {
        template_slug: 'product-spotlight',
        media_kind: 'image',
        images: [{ filename: 'a.png', data: png.toString('base64') }],
      });
      return { id: b.id, credits: b.credits_deducted };
    },
    cancel: (orgId, id) => cancelReferenceInspiration(ctx, orgId, id as string),
    resource: referenceResource,
    deliver: (id) => run(referenceAnalysisJob, { referenceId: id }),
  },
];

const balance = async (orgId: string) => (await ctx.sql`select credits from organizations where id = ${orgId}`)[0].credits as number;
const refunds = (orgId: string, reason: string) =>
  ctx.db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.orgId, orgId), eq(creditLedger.reason, reason)));
const jobState = async (jobId: string) => (await ctx.sql`select state from pgboss.job where id = ${jobId}`)[0]?.state as string | undefined;
const rowOf = async (k: Kind, id: string | number) => {
  const c = k.resource.declaration.columns;
  const table = k.resource.declaration.table;
  const [row] = await ctx.db.select().from(table).where(eq(table[c.id], id));
  return row as Record<string, any>;
};
const conflict = (message: RegExp) => (err: unknown) => err instanceof ApiError && err.code === 'conflict' && message.test(err.message);
/** `a` and `b` at once (`bFirst`: `b` is called first); their results in the order a, b. */
async function both<A, B>(a: () => Promise<A>, b: () => Promise<B>, bFirst: boolean): Promise<[A, B]> {
  if (!bFirst) return Promise.all([a(), b()]);
  const pb = b();
  return [await a(), await pb];
}
/** What `p` was rejected with (undefined when it was not). */
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

for (const k of kinds) {
  t.test(`${k.name}: a queued one is canceled and refunded in full, once; its job does nothing`, async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const { id, credits } = await k.create(ws);
    t.ok(credits > 0, 'it was charged');
    t.equal(await balance(ws.orgId), 1000 - credits);
    const jobId = (await rowOf(k, id)).jobId as string;
    t.equal(await jobState(jobId), 'created', 'its job is queued');

    const view = await k.cancel(ws.orgId, id);
    t.match(view, { id, status: 'canceled' }, 'the record as its GET returns it');
    t.equal(await balance(ws.orgId), 1000, 'the balance is restored exactly');
    const ledger = await refunds(ws.orgId, k.refundReason);
    t.same(
      ledger.map((l) => l.delta),
      [credits],
      'one refund row of the whole charge',
    );
    const row = await rowOf(k, id);
    t.ok(row.refundedAt, 'refunded_at is set');
    t.equal(await jobState(jobId), 'cancelled', 'its job is cancelled');

    t.same(await k.cancel(ws.orgId, id), view, 'cancelling again answers the same');
    t.equal((await refunds(ws.orgId, k.refundReason)).length, 1, 'and refunds nothing more');

    const mediaBefore = (await ctx.db.select().from(media).where(eq(media.orgId, ws.orgId))).length;
    await k.deliver(id);
    t.equal((await rowOf(k, id)).status, 'canceled', 'a delivery of its job leaves it canceled');
    t.equal((await rowOf(k, id)).attempts, 0, 'and starts no attempt');
    t.equal((await ctx.db.select().from(media).where(eq(media.orgId, ws.orgId))).length, mediaBefore, 'no output');
    t.equal(await balance(ws.orgId), 1000, 'no second refund');
    t.equal((await refunds(ws.orgId, k.refundReason)).length, 1);
  });

  t.test(`${k.name}: running is canceled and refunded in full; finished is a conflict; another workspace's is not found`, async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const { id } = await k.create(ws);
    t.ok(await k.resource.start(ctx, id), 'a worker starts it');
    t.match(await k.cancel(ws.orgId, id), { status: 'canceled' }, 'running: canceled');
    t.equal(await balance(ws.orgId), 1000, 'refunded in full (no paid provider call completed)');
    t.equal((await refunds(ws.orgId, k.refundReason)).length, 1, 'one refund');
    t.equal((await rowOf(k, id)).status, 'canceled');

    const queued = await k.create(ws);
    const other = await app.workspace({ credits: 1000 });
    const missing = await rejection(k.cancel(other.orgId, queued.id));
    t.match(missing, { code: 'not_found', context: { field: 'path.id' } }, 'another workspace: the GET’s 404');
    t.not((await rowOf(k, queued.id)).status, 'canceled', 'the owner’s is untouched');

    const failed = await k.create(ws);
    await k.resource.start(ctx, failed.id);
    await k.resource.fail(ctx, failed.id, { code: 'test', message: 'failed', retryable: false, context: {} });
    t.ok(
      conflict(/already (error|failed); only queued or running work/)(await rejection(k.cancel(ws.orgId, failed.id))),
      'a finished one is a conflict',
    );
  });

  t.test(`${k.name}: a worker starting it while it is canceled: canceled either way, refunded once`, async (t) => {
    const ws = await app.workspace({ credits: 100000 });
    const outcomes = { canceled: 0, started: 0 };
    for (let round = 0; round < 12; round++) {
      const { id, credits } = await k.create(ws);
      const before = await balance(ws.orgId);
      // Either one is sent first, in turn.
      const [started, canceled] = await both(
        () => k.resource.start(ctx, id),
        () => k.cancel(ws.orgId, id).catch((err: unknown) => err),
        round % 2 === 1,
      );
      const row = await rowOf(k, id);
      if (started) {
        t.match(canceled, { status: 'canceled' }, `round ${round}: started first, then canceled while running`);
        t.equal(row.status, 'canceled');
        t.equal(row.attempts, 1);
        t.equal(await balance(ws.orgId), before + credits, 'refunded once (no paid call completed)');
        outcomes.started++;
      } else {
        t.match(canceled, { status: 'canceled' }, `round ${round}: canceled, so the worker did not start it`);
        t.equal(row.status, 'canceled');
        t.equal(row.attempts, 0);
        t.equal(await balance(ws.orgId), before + credits, 'refunded once');
        outcomes.canceled++;
      }
    }
    t.equal(outcomes.canceled + outcomes.started, 12);
    t.equal((await refunds(ws.orgId, k.refundReason)).length, 12, 'one refund per round');
    t.comment(`canceled ${outcomes.canceled}, started ${outcomes.started}`);
  });
}
