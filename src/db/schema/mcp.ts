// Workspace members and the OAuth 2.1 authorization server of the MCP endpoint: registered
// clients (RFC 7591), browser sign-in sessions, pending authorization requests, grants (one per
// approval: the family every token of it belongs to), authorization codes and tokens. Every
// secret (password, session cookie, code, token, client secret) is stored only as a hash.
import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

/** People who sign in to a workspace (the OAuth consent flow). Email is stored lowercased. */
export const members = pgTable(
  'members',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    email: text('email').notNull(),
    /** argon2id PHC string. */
    passwordHash: text('password_hash').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('members_email_idx').on(t.email),
    index('members_org_idx').on(t.orgId),
    check('members_email_lowercase', sql`${t.email} = lower(${t.email})`),
  ],
);

/**
 * OAuth clients: dynamically registered ones (`id` is their client_id), and clients whose client_id
 * is the https URL of their Client ID Metadata Document (`metadataUrl`; `id` is then internal).
 */
export const oauthClients = pgTable('oauth_clients', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** The client_id of a Client ID Metadata Document client: the URL its metadata was fetched from; null for registered clients. */
  metadataUrl: text('metadata_url').unique('oauth_clients_metadata_url_key'),
  /** Until when the fetched metadata is used without fetching it again (its Cache-Control, bounded). */
  metadataExpiresAt: ts('metadata_expires_at'),
  /** SHA-256 of the client secret; null for public clients (token_endpoint_auth_method none). */
  secretHash: text('secret_hash'),
  tokenEndpointAuthMethod: text('token_endpoint_auth_method', { enum: ['none', 'client_secret_basic', 'client_secret_post'] }).notNull(),
  redirectUris: text('redirect_uris').array().notNull(),
  clientName: text('client_name'),
  /** The registered metadata as returned by the registration endpoint (without the secret). */
  metadata: jsonb('metadata').notNull(),
  createdAt: createdAt(),
});

/** A browser's sign-in session on the authorization pages (cookie → token_hash). */
export const oauthBrowserSessions = pgTable(
  'oauth_browser_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    /** Null until the browser signs in. */
    memberId: uuid('member_id').references(() => members.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [uniqueIndex('oauth_browser_sessions_token_idx').on(t.tokenHash), index('oauth_browser_sessions_expiry_idx').on(t.expiresAt)],
);

/** A validated /oauth/authorize request waiting for sign-in and consent, bound to one browser session. */
export const oauthAuthorizationRequests = pgTable(
  'oauth_authorization_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => oauthBrowserSessions.id, { onDelete: 'cascade' }),
    clientId: uuid('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    scopes: text('scopes').array().notNull(),
    state: text('state'),
    codeChallenge: text('code_challenge').notNull(),
    resource: text('resource').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    /** Set when the member approved or denied: a request is answered once. */
    completedAt: ts('completed_at'),
  },
  (t) => [index('oauth_authorization_requests_expiry_idx').on(t.expiresAt)],
);

/** One approval by a member: every code and token issued from it belongs to this family. */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    clientId: uuid('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    memberId: uuid('member_id')
      .notNull()
      .references(() => members.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    scopes: text('scopes').array().notNull(),
    /** RFC 8707 resource (the audience of every token of the grant). */
    resource: text('resource').notNull(),
    createdAt: createdAt(),
    /** Revoking a grant revokes every token of the family (refresh-token reuse, code reuse, RFC 7009). */
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('oauth_grants_member_idx').on(t.memberId)],
);

export const oauthCodes = pgTable(
  'oauth_codes',
  {
    /** SHA-256 of the authorization code. */
    codeHash: text('code_hash').primaryKey(),
    grantId: uuid('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [index('oauth_codes_grant_idx').on(t.grantId)],
);

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    grantId: uuid('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    /** SHA-256 of the token. */
    tokenHash: text('token_hash').notNull(),
    /** Scopes of this token (a refresh may narrow them). */
    scopes: text('scopes').array().notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    /** Refresh tokens: set when exchanged; presenting it again revokes the family. */
    usedAt: ts('used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    uniqueIndex('oauth_tokens_hash_idx').on(t.tokenHash),
    index('oauth_tokens_grant_idx').on(t.grantId),
    check('oauth_tokens_kind_valid', sql`${t.kind} in ('access', 'refresh')`),
  ],
);

/**
 * MCP tasks (src/mcp/tasks.ts): a long tool call answered with a task handle. The task follows the
 * records its call queued, read from the call's result as it was answered (`created`); its status
 * and final result are read from those records, so any node answers for any task.
 */
export const mcpTasks = pgTable(
  'mcp_tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    /** The tool whose call created the task (create_generation, create_slideshow, …). */
    tool: text('tool').notNull(),
    /** The call's structured result when the work was queued (the records' ids are read from it). */
    created: jsonb('created').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('mcp_tasks_org_created_idx').on(t.orgId, t.createdAt)],
);
