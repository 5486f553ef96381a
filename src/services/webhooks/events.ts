// Completion events and their delivery.
//
// `recordTerminalEvent` is THE function the resource kernel (src/kernel/resource.ts) calls when a
// resource reaches a terminal state, inside the transaction that writes that state (the outbox): it writes one
// event (unique per type and resource, so a repeated job never makes a second one) and one
// delivery row and job per endpoint of the workspace subscribed to the type. Nothing is written
// when no endpoint subscribes. The delivery job (services/webhooks/delivery-job.ts) POSTs the event
// through the guarded client, signed per Standard Webhooks; a 2xx delivers it, anything else is
// retried by pg-boss with exponential backoff (WEBHOOK_RETRY_*) and the last failure is recorded.
import { and, eq, lt, notExists, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { AppContext } from '../../context.ts';
import type { Db, Tx } from '../../db/client.ts';
import { webhookDeliveries, webhookEndpoints, webhookEvents } from '../../db/schema/index.ts';
import { JobFailure, type FailureDetail } from '../../jobs/define-job.ts';
import type { QueueRef } from '../../jobs/queue.ts';
import { FetchRefused } from '../../net/guarded-fetch.ts';
import type { WebhookEventType } from './endpoints.ts';

/**
 * The delivery job's queue and payload version (services/webhooks/delivery-job.ts declares the job on it;
 * it is named here, where deliveries are sent, since that job runs this module's functions).
 */
export const WEBHOOK_DELIVERY_QUEUE: QueueRef = { name: 'webhook-delivery', version: 1 };

export interface TerminalEvent {
  orgId: string;
  /** `<resource>.completed` or `<resource>.failed` (the contract's WebhookEventType). */
  type: WebhookEventType;
  /** The resource as its GET operation returns it (it carries `object` and `id`). */
  data: { object: string; id: string | number };
  /** When it reached the terminal state (default: now). */
  at?: Date;
}

/**
 * Records a terminal transition for webhook delivery, in `tx` (the transaction that writes the
 * terminal state, so the event exists exactly when the state does). Returns the event id, or
 * undefined when no endpoint subscribes or the transition was already recorded.
 */
export async function recordTerminalEvent(ctx: Pick<AppContext, 'queue'>, tx: Tx, event: TerminalEvent): Promise<string | undefined> {
  const endpoints = await tx
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.orgId, event.orgId), sql`${event.type} = any(${webhookEndpoints.eventTypes})`));
  if (!endpoints.length) return undefined;
  const body = JSON.stringify({ type: event.type, timestamp: (event.at ?? new Date()).toISOString(), data: event.data });
  const [row] = await tx
    .insert(webhookEvents)
    .values({ orgId: event.orgId, type: event.type, resourceId: String(event.data.id), body })
    .onConflictDoNothing({ target: [webhookEvents.type, webhookEvents.resourceId] })
    .returning({ id: webhookEvents.id });
  if (!row) return undefined;
  const deliveries = await tx
    .insert(webhookDeliveries)
    .values(endpoints.map((e) => ({ orgId: event.orgId, eventId: row.id, endpointId: e.id })))
    .returning({ id: webhookDeliveries.id });
  // The delivery id is the job's id (GET /webhook-endpoints/{id} reads when it runs next).
  for (const d of deliveries) await ctx.queue.sendInTx(tx, WEBHOOK_DELIVERY_QUEUE, { deliveryId: d.id }, d.id);
  return row.id;
}

// ------------------------------------------------------------------------------ worker side

/** Largest answer body read from an endpoint (it is discarded; only the status counts). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** One attempt of a delivery. Throws JobFailure (retryable unless the URL itself is refused) when it is not delivered. */
export async function attemptDelivery(ctx: AppContext, deliveryId: string, signal: AbortSignal): Promise<void> {
  const [row] = await ctx.db
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, lastAttemptAt: new Date() })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending')))
    .returning({ eventId: webhookDeliveries.eventId, endpointId: webhookDeliveries.endpointId });
  if (!row) return; // delivered or given up already, or its endpoint was deleted
  const [target] = await ctx.db
    .select({ url: webhookEndpoints.url, secret: webhookEndpoints.secret, body: webhookEvents.body })
    .from(webhookEndpoints)
    .innerJoin(webhookEvents, eq(webhookEvents.id, row.eventId))
    .where(eq(webhookEndpoints.id, row.endpointId));
  if (!target) return;
  const now = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': row.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(target.secret).sign(row.eventId, now, target.body),
  };
  let status: number | null = null;
  try {
    const res = await ctx.fetcher.fetch(target.url, {
      httpsOnly: true,
      timeoutMs: ctx.config.webhooks.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      signal,
      post: { body: target.body, headers },
    });
    status = res.status;
  } catch (err) {
    if (!(err instanceof FetchRefused)) throw err;
    const refused = err.reason === 'address' || err.reason === 'scheme';
    const message = `${err.reason === 'status' ? 'The endpoint' : 'The endpoint URL'} ${err.message}`.slice(0, 500);
    await ctx.db
      .update(webhookDeliveries)
      .set({ lastResponseStatus: err.status ?? null, lastError: message })
      .where(eq(webhookDeliveries.id, deliveryId));
    // A refused URL (private address, not https) stays refused: no retry.
    throw new JobFailure(
      { code: refused ? 'webhook_refused' : 'webhook_failed', message, retryable: !refused, context: { reason: err.reason } },
      !refused,
    );
  }
  await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'delivered', lastResponseStatus: status, lastError: null, deliveredAt: new Date() })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending')));
}

/** The last attempt failed (or the URL was refused, or the job was lost): the delivery is given up. */
export async function giveUpDelivery(ctx: AppContext, deliveryId: string, detail: FailureDetail): Promise<void> {
  await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'failed', lastError: sql`coalesce(${webhookDeliveries.lastError}, ${detail.message.slice(0, 500)})` })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending')));
}

/** How long events (and their delivery records) are kept once none of their deliveries is pending. */
const EVENT_RETENTION_DAYS = 30;

/** Housekeeping: removes settled events older than the retention (their deliveries go with them). */
export async function purgeOldWebhookEvents(db: Db): Promise<number> {
  const rows = await db
    .delete(webhookEvents)
    .where(
      and(
        lt(webhookEvents.createdAt, sql`now() - make_interval(days => ${EVENT_RETENTION_DAYS})`),
        notExists(
          db
            .select({ one: sql`1` })
            .from(webhookDeliveries)
            .where(and(eq(webhookDeliveries.eventId, webhookEvents.id), eq(webhookDeliveries.status, 'pending'))),
        ),
      ),
    )
    .returning({ id: webhookEvents.id });
  return rows.length;
}
