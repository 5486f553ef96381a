// Drizzle schema. Tables are plural snake_case; every tenant table carries org_id and every
// query filters on it. Migrations are generated with `npm run db:generate` into src/db/drizzle/.
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, real, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const organizations = pgTable(
  'organizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    plan: text('plan', { enum: ['paid', 'none'] })
      .notNull()
      .default('paid'),
    // Denormalised balance: changed only together with a credit_ledger row, in one transaction.
    credits: integer('credits').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check('organizations_credits_non_negative', sql`${t.credits} >= 0`),
    check('organizations_plan_valid', sql`${t.plan} in ('paid', 'none')`),
    check('organizations_name_length', sql`char_length(${t.name}) between 1 and 200`),
  ],
);

/** Append-only: a trigger (migration 0001) refuses UPDATE and DELETE. */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    delta: integer('delta').notNull(),
    balanceAfter: integer('balance_after').notNull(),
    reason: text('reason').notNull(),
    /** What the change is about: a generation id, an idempotency key, an admin action. */
    reference: text('reference'),
    createdAt: createdAt(),
  },
  (t) => [
    index('credit_ledger_org_idx').on(t.orgId, t.id),
    check('credit_ledger_delta_nonzero', sql`${t.delta} <> 0`),
    check('credit_ledger_balance_non_negative', sql`${t.balanceAfter} >= 0`),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name'),
    /** First characters of the key, safe to display ("mapi_AbCd…"). */
    prefix: text('prefix').notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_keys_hash_idx').on(t.keyHash), index('api_keys_org_idx').on(t.orgId)],
);

export const brandKits = pgTable(
  'brand_kits',
  {
    // bigint like every integer id column: the contract's ids (IntegerId) go up to 2^53-1.
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    brandId: bigint('brand_id', { mode: 'number' }).notNull(),
    kitName: text('kit_name').notNull(),
    kitData: jsonb('kit_data').notNull().default({}),
    trainingStatus: text('training_status'),
    /** The uploaded logo in storage (brand-kits/<org>/…); served by signed URL. Null: none, or kit_data.logo_url (older kits). */
    logoKey: text('logo_key'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('brand_kits_org_idx').on(t.orgId, t.id)],
);

export const customAvatars = pgTable(
  'custom_avatars',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    imageUrl: text('image_url').notNull(),
    videoUrl: text('video_url').notNull(),
    /** The face-centred portrait in storage (avatars/<org>/…) of an uploaded avatar; image_url/video_url are then ''. */
    imageKey: text('image_key'),
    createdAt: createdAt(),
  },
  (t) => [index('custom_avatars_org_idx').on(t.orgId, t.createdAt)],
);

export const customVoices = pgTable(
  'custom_voices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    /** Only `ready` clones are offered in GET /assets. */
    status: text('status', { enum: ['processing', 'ready', 'failed'] })
      .notNull()
      .default('processing'),
    previewUrl: text('preview_url').notNull(),
    locale: text('locale').array().notNull(),
    gender: text('gender').notNull(),
    age: text('age').notNull(),
    styleTags: text('style_tags').array().notNull().default(sql`'{}'::text[]`),
    credits916: integer('credits_9_16').notNull(),
    credits169: integer('credits_16_9').notNull(),
    recommendationSummary: text('recommendation_summary').notNull().default(''),
    /** The uploaded sample in storage (voices/<org>/…); preview_url is then ''. */
    sampleKey: text('sample_key'),
    /** The built-in voice (spec/voices.yaml id) that speaks for this clone, chosen by language and pitch. */
    baseVoice: text('base_voice'),
    /** The sample's estimated fundamental frequency (Hz). */
    pitchHz: real('pitch_hz'),
    createdAt: createdAt(),
  },
  (t) => [index('custom_voices_org_idx').on(t.orgId, t.createdAt)],
);

/** Secrets the service generates once and every node shares (e.g. the media URL signing key). */
export const serviceSecrets = pgTable('service_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});
