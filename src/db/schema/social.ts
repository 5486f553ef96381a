// Social publishing: the accounts a workspace connected (tokens encrypted at rest with
// AES-256-GCM, services/social/token-crypto.ts; the key is never in the database).
import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';

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
