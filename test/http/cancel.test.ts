// Cancel over REST and MCP (issue 26 item 4): POST /generations/{id}/cancel,
// /slideshows/{id}/cancel and /videos/{id}/cancel (faceless videos), their MCP tools, and
// cancel_social_publication. Queued work is canceled and refunded in full; running work is
// canceled and refunded in full unless a paid provider call of it completed (the state's
// paidCall), then not at all; either way a `*.canceled` webhook event is written; again answers
// the same with no second refund; finished work is 409; another workspace's id is 404; a
// read-only key is 403. The race: a worker completing the work at the same moment as the cancel
// gives exactly one of completed or canceled, never both, refunded at most once (many rounds).
// No workers run here: "running" is started as a worker starts it (the kernel's `start`), and the
// completion is the worker's own call; test/jobs/cancel-running.test.ts runs real workers.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import {
  creditLedger,
  media,
  socialPublications,
  socialPublicationTargets,
  webhookEndpoints,
  webhookEvents,
} from '../../src/db/schema/index.ts';
import type { Resource } from '../../src/kernel/resource.ts';
import { facelessResource } from '../../src/pipelines/faceless-video/rows.ts';
import { generationResource } from '../../src/pipelines/generation/rows.ts';
import { slideshowResource } from '../../src/pipelines/slideshow/rows.ts';
import { socialPublishJob } from '../../src/pipelines/social-publication/job.ts';
import { connect } from '../mcp/helpers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '10000', OUTBOUND_ALLOW_IPS: '127.0.0.1' });
const ctx: AppContext = app.service.ctx;
type Ws = Awaited<ReturnType<TestApp['workspace']>>;

interface Kind {
  name: string;
  /** The REST path of its records. */
  path: string;
  tool: string;
  refundReason: string;
  event: string;
  resource: Resource<any, any>;
  create(ws: Ws): Promise<{ id: string | number; credits: number }>;
}

const post = async (ws: Ws, path: string, body: object) => {
  const res = await app.request('POST', `/api/v1/${path}`, { key: ws.key, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
};

const kinds: Kind[] = [
  {
    name: 'generation',
    path: 'generations',
    tool: 'cancel_generation',
    refundReason: 'generation_refund',
    event: 'generation.canceled',
    resource: generationResource,
    create: async (ws) => {
      const b = await post(ws, 'generations', { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Summer sale' });
      return { id: b.generations[0].id, credits: b.credits_deducted };
    },
  },
  {
    name: 'slideshow',
    path: 'slideshows',
    tool: 'cancel_slideshow',
    refundReason: 'slideshow_refund',
    event: 'slideshow.canceled',
    resource: slideshowResource,
    create: async (ws) => {
      const b = await post(ws, 'slideshows', { prompt: 'Why water beats soda', slide_count: 3 });
      return { id: b.slideshow_id, credits: b.credits_deducted };
    },
  },
  {
    name: 'faceless video',
    path: 'videos',
    tool: 'cancel_video',
    refundReason: 'faceless_video_refund',
    event: 'faceless_video.canceled',
    resource: facelessResource,
    create: async (ws) => {
      const b = await post(ws, 'faceless-videos', { script: 'Water keeps you sharp. Drink a glass now.', duration: '6' });
      return { id: b.video_id, credits: b.credits_deducted };
    },
  },
];

const balance = async (orgId: string) => (await ctx.sql`select credits from organizations where id = ${orgId}`)[0].credits as number;
const refunds = async (orgId: string, reason: string) =>
  (
    await ctx.db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.orgId, orgId), eq(creditLedger.reason, reason)))
  ).map((l) => l.delta);
const events = async (orgId: string) =>
  (await ctx.db.select().from(webhookEvents).where(eq(webhookEvents.orgId, orgId))).map((e) => [e.type, e.resourceId]);
const rowOf = async (k: Kind, id: string | number) => {
  const c = k.resource.declaration.columns;
  const table = k.resource.declaration.table;
  const [row] = await ctx.db.select().from(table).where(eq(table[c.id], id));
  return row as Record<string, any>;
};
const cancel = (k: Kind, ws: Ws, id: string | number) => app.request('POST', `/api/v1/${k.path}/${id}/cancel`, { key: ws.key });

/** A workspace whose webhook endpoint takes every event (so the events are written). */
async function subscribed(credits = 1000): Promise<Ws> {
  const ws = await app.workspace({ credits });
  const types = [...kinds.map((k) => k.event), 'generation.completed', 'slideshow.completed', 'faceless_video.completed'];
  const res = await app.request('POST', '/api/v1/webhook-endpoints', {
    key: ws.key,
    body: { url: 'https://hooks.example.test/cancel', event_types: types },
  });
  if (res.status !== 200 && res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${res.text}`);
  return ws;
}

for (const k of kinds) {
  t.test(`${k.name}: queued → canceled over REST, refunded in full once, its event; again the same; finished 409`, async (t) => {
    const ws = await subscribed();
    const { id, credits } = await k.create(ws);
    t.equal(await balance(ws.orgId), 1000 - credits);
    const res = await cancel(k, ws, id);
    t.equal(res.status, 200, res.text);
    t.match(res.body, { id, status: 'canceled' });
    t.equal(await balance(ws.orgId), 1000, 'refunded in full');
    t.same(await refunds(ws.orgId, k.refundReason), [credits], 'one refund row');
    t.same(await events(ws.orgId), [[k.event, String(id)]], `one ${k.event} event`);
    const again = await cancel(k, ws, id);
    t.equal(again.status, 200);
    t.same(again.body, res.body, 'again: the same answer');
    t.same(await refunds(ws.orgId, k.refundReason), [credits], 'and no second refund');
    t.equal((await events(ws.orgId)).length, 1, 'nor a second event');

    const done = await k.create(ws);
    await k.resource.start(ctx, done.id);
    await k.resource.fail(ctx, done.id, { code: 'test', message: 'failed', retryable: false, context: {} });
    const refused = await cancel(k, ws, done.id);
    t.equal(refused.status, 409, refused.text);
    t.match(refused.body, { error: { code: 'conflict', context: { status: /error|failed/ } } });
  });

  t.test(`${k.name}: running → canceled, refunded in full unless a paid provider call completed`, async (t) => {
    const ws = await subscribed();
    const a = await k.create(ws);
    t.ok(await k.resource.start(ctx, a.id), 'a worker starts it');
    const res = await cancel(k, ws, a.id);
    t.equal(res.status, 200, res.text);
    t.match(res.body, { status: 'canceled' });
    t.same(await refunds(ws.orgId, k.refundReason), [a.credits], 'no paid call completed: refunded in full');
    t.ok((await rowOf(k, a.id)).refundedAt);
    t.same(await events(ws.orgId), [[k.event, String(a.id)]]);

    const b = await k.create(ws);
    t.ok(await k.resource.start(ctx, b.id));
    await k.resource.markPaid(ctx, b.id, 'replicate');
    const before = await balance(ws.orgId);
    const paid = await cancel(k, ws, b.id);
    t.equal(paid.status, 200, paid.text);
    t.match(paid.body, { status: 'canceled' });
    t.equal(await balance(ws.orgId), before, 'a paid call completed: nothing refunded');
    t.same(await refunds(ws.orgId, k.refundReason), [a.credits], 'no refund row for it');
    t.equal((await rowOf(k, b.id)).refundedAt, null);
    t.equal((await cancel(k, ws, b.id)).status, 200, 'again: the same');
    t.equal(await balance(ws.orgId), before);
    await k.resource.markPaid(ctx, b.id, 'fal');
    t.match((await rowOf(k, b.id)).status, 'canceled', 'nothing is written after the cancel');
  });

  t.test(`${k.name}: another workspace's id is 404, a read-only key 403, over REST and MCP`, async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const { id } = await k.create(ws);
    const other = await app.workspace({ credits: 1000 });
    const missing = await cancel(k, other, id);
    t.equal(missing.status, 404, missing.text);
    t.match(missing.body, { error: { code: 'not_found' } });
    const reader = await app.workspace({ credits: 1000, scopes: ['generations:read'] });
    const forbidden = await app.request('POST', `/api/v1/${k.path}/${id}/cancel`, { key: reader.key });
    t.equal(forbidden.status, 403, forbidden.text);
    const client = await connect(app, other.key);
    t.teardown(() => client.close());
    const viaMcp = await client.callTool({ name: k.tool, arguments: { id } });
    t.ok(viaMcp.isError, 'MCP: another workspace’s is an error');
    t.match(JSON.stringify(viaMcp.content), /not_found|not found/);
    t.not((await rowOf(k, id)).status, 'canceled', 'the owner’s is untouched');
  });

  t.test(`${k.name}: MCP ${k.tool} cancels as REST does`, async (t) => {
    const ws = await app.workspace({ credits: 1000 });
    const { id, credits } = await k.create(ws);
    const client = await connect(app, ws.key);
    t.teardown(() => client.close());
    const res = await client.callTool({ name: k.tool, arguments: { id } });
    t.notOk(res.isError, JSON.stringify(res.content));
    t.match(res.structuredContent, { id, status: 'canceled' });
    t.equal(await balance(ws.orgId), 1000, `refunded ${credits}`);
    const rest = await app.request('GET', `/api/v1/${k.path}/${id}`, { key: ws.key });
    t.same(res.structuredContent, rest.body, 'the record as its GET returns it');
  });

  t.test(`${k.name}: cancel while the worker completes it: exactly one of completed or canceled, refunded at most once`, async (t) => {
    const ws = await subscribed(1_000_000);
    const outcomes = { completed: 0, canceled: 0 };
    const rounds = 20;
    for (let round = 0; round < rounds; round++) {
      const { id, credits } = await k.create(ws);
      t.ok(await k.resource.start(ctx, id));
      const before = await balance(ws.orgId);
      const completion = () =>
        k.resource.complete(ctx, id, {
          media: {
            orgId: ws.orgId,
            kind: 'video',
            status: 'completed',
            source: 'render',
            title: 'race',
            filename: 'race.mp4',
            contentType: 'video/mp4',
            sizeBytes: 1,
            storageKey: `race/${randomUUID()}.mp4`,
            width: 16,
            height: 16,
          },
        });
      // Both at the same moment, either one sent first in turn.
      const [completed, canceled] =
        round % 2 ? await Promise.all([completion(), cancel(k, ws, id)]) : (await Promise.all([cancel(k, ws, id), completion()])).reverse();
      const row = await rowOf(k, id);
      const evs = (await events(ws.orgId)).filter(([, r]) => r === String(id)).map(([type]) => type);
      if (completed) {
        t.equal((canceled as { status: number }).status, 409, `round ${round}: completed, so the cancel is a conflict`);
        t.equal(row.status, 'completed');
        t.equal(await balance(ws.orgId), before, 'nothing refunded');
        t.same(evs, [k.event.replace('canceled', 'completed')], 'only the completed event');
        outcomes.completed++;
      } else {
        t.equal((canceled as { status: number }).status, 200, `round ${round}: canceled, so the completion wrote nothing`);
        t.equal(row.status, 'canceled');
        t.equal(await balance(ws.orgId), before + credits, 'refunded once');
        t.same(evs, [k.event], 'only the canceled event');
        outcomes.canceled++;
      }
    }
    t.equal(outcomes.completed + outcomes.canceled, rounds);
    t.equal((await refunds(ws.orgId, k.refundReason)).length, outcomes.canceled, 'one refund per canceled one, none for a completed one');
    const outputs = await ctx.db
      .select()
      .from(media)
      .where(and(eq(media.orgId, ws.orgId), eq(media.title, 'race')));
    t.equal(outputs.length, outcomes.completed, 'an output only for a completed one');
    t.comment(`completed ${outcomes.completed}, canceled ${outcomes.canceled}`);
  });
}

t.test('POST /videos/{id}/cancel of an editor video is 404 (only faceless videos are work)', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const ed = await post(ws, 'editor/videos', { title: 'Project', width: 1080, height: 1920 });
  const res = await app.request('POST', `/api/v1/videos/${ed.id}/cancel`, { key: ws.key });
  t.equal(res.status, 404, res.text);
  t.match(res.body, { error: { code: 'not_found' } });
});

t.test('batch generations cancel one by one', async (t) => {
  const ws = await app.workspace({ credits: 1000 });
  const b = await post(ws, 'generations', {
    type: 'static_ad',
    template_slug: 'bold-sale-banner',
    prompt: 'Two of them',
    request_count: 2,
  });
  t.equal(b.generations.length, 2);
  const [first, second] = b.generations.map((g: { id: string }) => g.id);
  t.equal((await app.request('POST', `/api/v1/generations/${first}/cancel`, { key: ws.key })).status, 200);
  t.equal((await app.request('GET', `/api/v1/generations/${second}`, { key: ws.key })).body.status, 'generating', 'the other is untouched');
  t.equal(await balance(ws.orgId), 1000 - b.credits_deducted / 2, 'its own share refunded');
});

t.test('cancel_social_publication cancels the queued targets of a publication (MCP)', async (t) => {
  const ws = await app.workspace({ credits: 100, scopes: ['social:read', 'social:write'] });
  const id = await ctx.db.transaction(async (tx) => {
    const [pub] = await tx.insert(socialPublications).values({ orgId: ws.orgId, mediaIds: [], source: {}, caption: 'hello' }).returning();
    const [target] = await tx
      .insert(socialPublicationTargets)
      .values({ publicationId: pub.id, orgId: ws.orgId, accountId: randomUUID(), platform: 'x', position: 0 })
      .returning();
    await ctx.queue.sendInTx(tx, socialPublishJob, { targetId: target.id }, target.id);
    return pub.id;
  });
  await ctx.db
    .insert(webhookEndpoints)
    .values({ orgId: ws.orgId, url: 'https://hooks.example.test/x', eventTypes: ['publication.canceled'], secret: 'whsec_test' });
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const res = await client.callTool({ name: 'cancel_social_publication', arguments: { id } });
  t.notOk(res.isError, JSON.stringify(res.content));
  t.match(res.structuredContent, { id, status: 'canceled', results: [{ status: 'canceled' }] });
  t.same(await events(ws.orgId), [['publication.canceled', id]], 'a publication.canceled event');
  const again = await client.callTool({ name: 'cancel_social_publication', arguments: { id } });
  t.same(again.structuredContent, res.structuredContent, 'again: the same');
  const other = await app.workspace({ scopes: ['social:write'] });
  const otherClient = await connect(app, other.key);
  t.teardown(() => otherClient.close());
  const missing = await otherClient.callTool({ name: 'cancel_social_publication', arguments: { id } });
  t.ok(missing.isError, 'another workspace’s is not found');
  t.match(JSON.stringify(missing.content), /not found|not_found/);
});
