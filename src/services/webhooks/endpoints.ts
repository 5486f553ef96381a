// Webhook endpoints of a workspace: create (the signing secret is returned once), list, get with
// its recent deliveries, delete, rotate the secret. At most MAX_ENDPOINTS per workspace. URLs are
// HTTPS and pass the guarded client's pre-check (private, loopback, link-local and reserved
// literal addresses and private names are refused here; every delivery checks the address it
// actually connects to again).
import { randomBytes } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { webhookDeliveries, webhookEndpoints, webhookEvents } from '../../db/schema/index.ts';
import { badRequest, notFound } from '../../errors.ts';
import { WEBHOOK_DELIVERY_QUEUE } from './events.ts';

type S = components['schemas'];
export type WebhookEndpointView = S['WebhookEndpoint'];
export type WebhookEventType = S['WebhookEventType'];

/** Endpoints one workspace may have (the contract's WebhookEndpointList.maxItems). */
export const MAX_ENDPOINTS = 10;
/** Deliveries GET /webhook-endpoints/{id} shows (WebhookEndpointDetail.recent_deliveries.maxItems). */
const RECENT_DELIVERIES = 20;

type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** A Standard Webhooks signing secret: `whsec_` and the base64 of 32 random bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function view(row: EndpointRow): WebhookEndpointView {
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.eventTypes as WebhookEventType[],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const notFoundEndpoint = (id: string) => notFound('Webhook endpoint', id, 'webhook_endpoint');

export async function createEndpoint(
  ctx: AppContext,
  orgId: string,
  body: S['CreateWebhookEndpointRequest'],
): Promise<S['WebhookEndpointWithSecret']> {
  const problem = ctx.fetcher.precheck(body.url, { httpsOnly: true });
  if (problem) throw badRequest(`url ${problem}`, [{ field: 'body.url', message: problem }]);
  return ctx.db.transaction(async (tx) => {
    // The workspace's endpoint lock: the count and the insert are one step, whichever node serves.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${orgId}`}, 0))`);
    const [{ n }] = await tx.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(eq(webhookEndpoints.orgId, orgId));
    if (n >= MAX_ENDPOINTS) {
      throw badRequest(
        `This workspace already has ${n} webhook endpoints, the most it may have; delete one first (DELETE /webhook-endpoints/{id})`,
        [],
        { limit: MAX_ENDPOINTS },
      );
    }
    const secret = newSecret();
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({ orgId, url: body.url, description: body.description ?? null, eventTypes: [...new Set(body.event_types)], secret })
      .returning();
    return { ...view(row), secret };
  });
}

export async function listEndpoints(ctx: AppContext, orgId: string): Promise<S['WebhookEndpointList']> {
  const rows = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.orgId, orgId))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
    .limit(MAX_ENDPOINTS);
  return { object: 'list', data: rows.map(view) };
}

async function findEndpoint(ctx: AppContext, orgId: string, id: string): Promise<EndpointRow> {
  const [row] = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId)));
  if (!row) throw notFoundEndpoint(id);
  return row;
}

export async function getEndpoint(ctx: AppContext, orgId: string, id: string): Promise<S['WebhookEndpointDetail']> {
  const row = await findEndpoint(ctx, orgId, id);
  const deliveries = await ctx.db
    .select({ d: webhookDeliveries, type: webhookEvents.type })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.endpointId, row.id))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(RECENT_DELIVERIES);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const recent = await Promise.all(
    deliveries.map(
      async ({ d, type }): Promise<S['WebhookDelivery']> => ({
        event_id: d.eventId,
        event_type: type as WebhookEventType,
        status: d.status,
        attempts: d.attempts,
        last_response_status: d.lastResponseStatus,
        last_error: d.lastError,
        last_attempt_at: iso(d.lastAttemptAt),
        next_attempt_at: d.status === 'pending' ? await nextAttempt(ctx, d.id) : null,
        delivered_at: iso(d.deliveredAt),
        created_at: d.createdAt.toISOString(),
      }),
    ),
  );
  return { ...view(row), recent_deliveries: recent };
}

/** When the delivery's job runs next (pg-boss keeps it: the delivery id is the job id). */
async function nextAttempt(ctx: AppContext, deliveryId: string): Promise<string | null> {
  const [job] = await ctx.queue.boss.findJobs(WEBHOOK_DELIVERY_QUEUE.name, { id: deliveryId }).catch(() => []);
  if (!job || (job.state !== 'created' && job.state !== 'retry')) return null;
  return new Date(Math.max(job.startAfter.getTime(), Date.now())).toISOString();
}

export async function deleteEndpoint(ctx: AppContext, orgId: string, id: string): Promise<S['WebhookEndpointDeleted']> {
  // Its deliveries go with it (cascade); a delivery job that runs later finds nothing to send.
  const rows = await ctx.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId)))
    .returning({ id: webhookEndpoints.id });
  if (!rows.length) throw notFoundEndpoint(id);
  return { object: 'webhook_endpoint', id, deleted: true };
}

export async function rotateSecret(ctx: AppContext, orgId: string, id: string): Promise<S['WebhookEndpointWithSecret']> {
  const secret = newSecret();
  const [row] = await ctx.db
    .update(webhookEndpoints)
    .set({ secret, updatedAt: new Date() })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, orgId)))
    .returning();
  if (!row) throw notFoundEndpoint(id);
  return { ...view(row), secret };
}
