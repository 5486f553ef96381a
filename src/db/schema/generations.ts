// Generations, the media library they read from and write to, saved references,
// idempotency records and the shared rate-limit counters.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Stored media of a workspace: uploads, generation outputs, voiceovers. `storage_key` locates the
 * bytes in the storage backend; the probed facts come from the real file.
 */
export const media = pgTable(
  'media',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    kind: text('kind', { enum: ['image', 'video', 'audio', 'voice'] }).notNull(),
    status: text('status', { enum: ['processing', 'completed', 'failed'] })
      .notNull()
      .default('completed'),
    source: text('source', { enum: ['upload', 'url', 'generation', 'voiceover', 'sound_effect', 'render'] }).notNull(),
    title: text('title'),
    filename: text('filename'),
    contentType: text('content_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    storageKey: text('storage_key').notNull(),
    width: integer('width'),
    height: integer('height'),
    durationSeconds: doublePrecision('duration_seconds'),
    hasAudio: boolean('has_audio'),
    /** Searchable text beyond the filename (transcript, prompt, tags). */
    indexedText: text('indexed_text'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('media_org_idx').on(t.orgId, t.createdAt), check('media_size_non_negative', sql`${t.sizeBytes} >= 0`)],
);

/** Saved references (inspirations); `ready` ones can be used by generations. */
export const referenceInspirations = pgTable(
  'reference_inspirations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    status: text('status', { enum: ['processing', 'ready', 'rejected', 'failed', 'canceled'] })
      .notNull()
      .default('processing'),
    templateSlug: text('template_slug').notNull(),
    templateCategory: text('template_category', { enum: ['static-ads', 'video-templates', 'slideshow-carousel'] }).notNull(),
    mediaKind: text('media_kind', { enum: ['image', 'slideshow', 'video'] }).notNull(),
    visibility: text('visibility', { enum: ['private', 'public'] })
      .notNull()
      .default('private'),
    /** not_required (private) or pending → approved / rejected (public; reviewed before others see it). */
    reviewStatus: text('review_status', { enum: ['not_required', 'pending', 'approved', 'rejected'] })
      .notNull()
      .default('not_required'),
    label: text('label'),
    /** The stored media (media rows), in the order given; URL media join once the analysis fetched them. */
    mediaIds: uuid('media_ids').array().notNull().default(sql`'{}'::uuid[]`),
    /** What the analysis job still has to fetch and check: the media in the order given. */
    inputs: jsonb('inputs').notNull().default(sql`'[]'::jsonb`),
    /** The analysis of each stored media item (src/media/analysis.ts), in media_ids order; null until ready. */
    analysis: jsonb('analysis'),
    /** Why it was rejected or failed (FailureDetail), else null. */
    error: jsonb('error'),
    jobId: uuid('job_id'),
    creditsDeducted: integer('credits_deducted').notNull().default(0),
    /** Attempts of the analysis job started (0 while queued: only then can it be canceled, with a full refund). */
    attempts: integer('attempts').notNull().default(0),
    startedAt: ts('started_at'),
    /** Set with the refund of a failed or canceled reference (its credits_deducted given back once). */
    refundedAt: ts('refunded_at'),
    /**
     * The stage runner's state (src/kernel/stages.ts): the fetch stage's output (the URL media it
     * stored, as media rows to insert on completion) and its record of each stage's runs.
     */
    state: jsonb('state').notNull().default(sql`'{}'::jsonb`),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('reference_inspirations_org_idx').on(t.orgId, t.createdAt)],
);

export const generations = pgTable(
  'generations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    batchId: uuid('batch_id').notNull(),
    type: text('type', { enum: ['static_ad', 'video_ad', 'ugc_ad', 'ai_model'] }).notNull(),
    status: text('status', { enum: ['generating', 'completed', 'error', 'canceled'] })
      .notNull()
      .default('generating'),
    /** The resolved job: template/model, dimensions, duration, references… (see src/pipelines/generation/request.ts). */
    spec: jsonb('spec').notNull(),
    credits: integer('credits').notNull(),
    outputMediaId: uuid('output_media_id').references(() => media.id),
    error: jsonb('error'),
    progress: integer('progress').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    jobId: text('job_id'),
    /** The hosted provider's job ({provider, id, app?}), stored before polling so a retry resumes it. */
    providerJob: jsonb('provider_job'),
    /**
     * The stage runner's state (src/kernel/stages.ts): each finished stage's output (a template's
     * model output stored before compositing, the stored render) and its record of the runs.
     */
    state: jsonb('state').notNull().default(sql`'{}'::jsonb`),
    refundedAt: ts('refunded_at'),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // GET /generations: keyset pages newest first by (created_at, id), unfiltered or by status or type.
    index('generations_org_idx').on(t.orgId, t.createdAt, t.id),
    index('generations_org_status_idx').on(t.orgId, t.status, t.createdAt, t.id),
    index('generations_org_type_idx').on(t.orgId, t.type, t.createdAt, t.id),
    index('generations_batch_idx').on(t.batchId),
    check('generations_credits_non_negative', sql`${t.credits} >= 0`),
    check('generations_progress_range', sql`${t.progress} between 0 and 100`),
    check('generations_completed_has_output', sql`${t.status} <> 'completed' or ${t.outputMediaId} is not null`),
  ],
);

/**
 * Idempotency records, per (org, operation, key), with the request's fingerprint, written in the
 * same transaction as the work. `state`: partial (a batch to resume) or completed (response
 * replayed). Expire 24 h after creation. (in_flight is kept by a transaction-scoped advisory lock.)
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    operation: text('operation').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    state: text('state', { enum: ['partial', 'completed'] }).notNull(),
    /** Data a resumed request needs (e.g. the batch id and what is queued so far). */
    progress: jsonb('progress'),
    response: jsonb('response'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.operation, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

/** Fixed-window counters of rate-limiter-flexible's Drizzle store (one atomic upsert per request). */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  points: integer('points').notNull(),
  expire: ts('expire'),
});
