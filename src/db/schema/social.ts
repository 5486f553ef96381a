// Social publishing: the accounts a workspace connected (tokens encrypted at rest with
// AES-256-GCM, services/social/token-crypto.ts; the key is never in the database).
import { integer, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';
import { members, oauthBrowserSessions } from './mcp.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A connected account. `platform` is one of SOCIAL_PLATFORMS; `status` is `connected` or
 * `needs_reauth` (a refresh failed: cannot publish until reconnected). Tokens are `v1.<iv>.<tag>.<ciphertext>`.
 */
export const socialAccounts = pgTable(
  'social_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    platform: text('platform').notNull(),
    /** The account's id on the platform (X user id, LinkedIn person/organization URN …). */
    platformAccountId: text('platform_account_id').notNull(),
    handle: text('handle').notNull(),
    displayName: text('display_name'),
    status: text('status').notNull().default('connected'),
    /** Why the account needs reauthorization, when it does. */
    statusReason: text('status_reason'),
    accessTokenEnc: text('access_token_enc').notNull(),
    refreshTokenEnc: text('refresh_token_enc'),
    expiresAt: ts('expires_at'),
    scopes: text('scopes').array().notNull().default([]),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('social_accounts_org_idx').on(t.orgId, t.createdAt),
    uniqueIndex('social_accounts_org_platform_account_uq').on(t.orgId, t.platform, t.platformAccountId),
  ],
);

/**
 * One publish_media_to_social call: the media it resolved (media rows, in order), the caption and
 * the per-platform options. A repeated call is answered by the charged command's idempotency
 * records (idempotency_keys); `idempotency_key` and `request_hash` are no longer written (calls
 * made before that kept their key here) and can be dropped by a migration.
 */
export const socialPublications = pgTable(
  'social_publications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    mediaIds: uuid('media_ids').array().notNull(),
    /** What was referenced: { media_id | generation_id | export_id | slideshow_id | url }. */
    source: jsonb('source').notNull(),
    caption: text('caption').notNull().default(''),
    options: jsonb('options').notNull().default({}),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    completedAt: ts('completed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('social_publications_org_idx').on(t.orgId, t.createdAt),
    uniqueIndex('social_publications_idempotency_uq').on(t.orgId, t.idempotencyKey),
  ],
);

/**
 * One account of a publication, worked by one `social-publish` job: `queued` → `publishing` →
 * `published` | `failed`. `state` is the adapter's resume point (the platform's upload/container
 * ids, uploaded chunks, the post id once created), saved after each step so a crashed attempt
 * resumes from it and never posts twice.
 */
export const socialPublicationTargets = pgTable(
  'social_publication_targets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    publicationId: uuid('publication_id')
      .notNull()
      .references(() => socialPublications.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    /** The social account (no foreign key: the target keeps naming it after a disconnect). */
    accountId: uuid('account_id').notNull(),
    platform: text('platform').notNull(),
    position: integer('position').notNull(),
    status: text('status', { enum: ['queued', 'publishing', 'published', 'failed', 'canceled'] })
      .notNull()
      .default('queued'),
    state: jsonb('state').notNull().default({}),
    attempts: integer('attempts').notNull().default(0),
    platformPostId: text('platform_post_id'),
    postUrl: text('post_url'),
    error: jsonb('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('social_publication_targets_publication_idx').on(t.publicationId, t.position),
    uniqueIndex('social_publication_targets_account_uq').on(t.publicationId, t.accountId),
  ],
);

/**
 * A browser connect flow waiting for the platform's callback (src/oauth/social.ts): the `state`
 * sent to the platform (stored as its SHA-256), bound to the member's browser session, used once
 * (deleted when the callback consumes it) and expiring. `code_verifier` is the PKCE secret for
 * platforms that take one (null otherwise).
 */
export const socialConnectStates = pgTable(
  'social_connect_states',
  {
    stateHash: text('state_hash').primaryKey(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => oauthBrowserSessions.id, { onDelete: 'cascade' }),
    memberId: uuid('member_id')
      .notNull()
      .references(() => members.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    platform: text('platform').notNull(),
    codeVerifier: text('code_verifier'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('social_connect_states_expiry_idx').on(t.expiresAt)],
);
