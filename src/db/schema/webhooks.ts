// Completion webhooks: the endpoints a workspace registers, the events (one per terminal
// transition of a generation, export, slideshow, faceless video or publication: the outbox,
// written in the transaction that writes the terminal state) and one delivery per event and
// subscribed endpoint (its job retries with backoff; the row records the attempts).
import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A workspace's webhook endpoint. `secret` (whsec_…) signs its deliveries; shown once at creation. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    url: text('url').notNull(),
    description: text('description'),
    /** The event types it subscribes to (WebhookEventType). */
    eventTypes: text('event_types').array().notNull(),
    secret: text('secret').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_org_idx').on(t.orgId, t.createdAt)],
);

/**
 * One event per terminal transition: `(type, resource_id)` is unique, so a job delivered twice
 * (at-least-once) never makes a second event. `body` is the JSON text sent (and signed) on every
 * attempt, byte for byte; the event id is the `webhook-id` header.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    type: text('type').notNull(),
    resourceId: text('resource_id').notNull(),
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_events_transition_unique').on(t.type, t.resourceId),
    index('webhook_events_org_idx').on(t.orgId, t.createdAt),
  ],
);

/** One event to one endpoint: pending until a 2xx (delivered) or the last retry (failed). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    eventId: uuid('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** The HTTP status of the last attempt (null: no answer, e.g. a timeout or a refused address). */
    lastResponseStatus: integer('last_response_status'),
    lastError: text('last_error'),
    lastAttemptAt: ts('last_attempt_at'),
    deliveredAt: ts('delivered_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_endpoint_unique').on(t.eventId, t.endpointId),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    check('webhook_deliveries_status_valid', sql`${t.status} in ('pending', 'delivered', 'failed')`),
  ],
);
