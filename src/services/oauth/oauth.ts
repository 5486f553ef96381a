// The OAuth 2.1 authorization server behind the MCP endpoint, without HTTP in it: client
// registration (RFC 7591), browser sessions and pending authorization requests, grants, codes
// with PKCE S256, access tokens bound to one resource (RFC 8707), rotated refresh tokens whose
// reuse revokes the whole grant, and revocation (RFC 7009).
//
// Every secret is a 256-bit random string shown once and stored as its SHA-256 (full entropy, so
// a fast hash is the right tool, as for API keys).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { OAuthConfig } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import {
  oauthAuthorizationRequests,
  oauthBrowserSessions,
  oauthClients,
  oauthCodes,
  oauthGrants,
  oauthTokens,
  organizations,
} from '../../db/schema/index.ts';
import { SCOPES, type AuthContext } from '../workspaces/api-keys.ts';
import { isUuid } from '../workspaces/organizations.ts';

export const OAUTH_SCOPES: readonly string[] = SCOPES;

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
const later = (seconds: number) => new Date(Date.now() + seconds * 1000);

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An error of RFC 6749 (§4.1.2.1, §5.2), RFC 7591 (§3.2.2) or RFC 8707 (§2). */
export class OAuthError extends Error {
  override name = 'OAuthError';
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }
  toJSON() {
    return { error: this.error, error_description: this.message };
  }
}

export function parseScope(raw: string | undefined | null): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = raw.split(' ').filter(Boolean);
  return [...new Set(list)];
}

export function checkScopes(list: string[], error = 'invalid_scope'): string[] {
  const unknown = list.filter((s) => !OAUTH_SCOPES.includes(s));
  if (unknown.length) throw new OAuthError(error, `Unknown scope ${unknown.join(', ')}; supported: ${OAUTH_SCOPES.join(' ')}`);
  return OAUTH_SCOPES.filter((s) => list.includes(s));
}

// ------------------------------------------------------------------------------------ clients

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
const AUTH_METHODS: ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'filesystem:']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface OAuthClient {
  id: string;
  secretHash: string | null;
  tokenEndpointAuthMethod: ClientAuthMethod;
  redirectUris: string[];
  clientName: string | null;
  metadata: Record<string, unknown>;
  /** The client_id of a Client ID Metadata Document client (the document's URL); null for registered clients. */
  metadataUrl: string | null;
  /** When that document is fetched again. */
  metadataExpiresAt: Date | null;
}

/**
 * What no redirect URI may hold, registered or requested: a fragment, even an empty one (RFC 6749
 * §3.1.2), or a user name or password (credentials sent on, and the semantic attack of RFC 3986
 * §7.6: `https://app.example@evil.example/` is evil.example). A loopback URI matches whatever its
 * port, so authorize refuses these before matching too.
 */
export function redirectUriProblem(raw: string): string | undefined {
  if (raw.includes('#')) return 'must not contain a fragment';
  const url = URL.parse(raw);
  // An empty user info ("https://@host/") leaves no trace in the parsed URL: the raw authority has no "@" either.
  if (url?.username || url?.password || /^[a-z][a-z0-9+.-]*:[\\/]{2}[^\\/?#]*@/i.test(raw))
    return 'must not contain a user name or password';
  return undefined;
}

function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) {
    throw new OAuthError('invalid_redirect_uri', 'Each redirect URI must be a string of 1 to 2000 characters');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError('invalid_redirect_uri', `Redirect URI ${raw} is not an absolute URI`);
  }
  const problem = redirectUriProblem(raw);
  if (problem) throw new OAuthError('invalid_redirect_uri', `Redirect URI ${raw} ${problem}`);
  if (FORBIDDEN_SCHEMES.has(url.protocol))
    throw new OAuthError('invalid_redirect_uri', `Redirect URI scheme ${url.protocol} is not allowed`);
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) {
    throw new OAuthError('invalid_redirect_uri', `Redirect URI ${raw} must use https (plain http is allowed for loopback addresses only)`);
  }
  return raw;
}

function optionalString(body: Record<string, unknown>, key: string, max: number): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max)
    throw new OAuthError('invalid_client_metadata', `${key} must be a string of at most ${max} characters`);
  return v;
}

function optionalUrl(body: Record<string, unknown>, key: string): string | undefined {
  const v = optionalString(body, key, 2000);
  if (v === undefined) return undefined;
  try {
    const u = new URL(v);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new OAuthError('invalid_client_metadata', `${key} must be an http(s) URL`);
  }
  return v;
}

function stringList(body: Record<string, unknown>, key: string, allowed: string[] | undefined, fallback: string[]): string[] {
  const v = body[key];
  if (v === undefined || v === null) return fallback;
  if (!Array.isArray(v) || v.length === 0 || v.length > 10 || v.some((x) => typeof x !== 'string')) {
    throw new OAuthError('invalid_client_metadata', `${key} must be a non-empty array of strings`);
  }
  const bad = allowed ? v.filter((x) => !allowed.includes(x)) : [];
  if (bad.length)
    throw new OAuthError('invalid_client_metadata', `${key} ${bad.join(', ')} not supported; supported: ${allowed!.join(', ')}`);
  return [...new Set(v as string[])];
}

/** Client metadata checked (RFC 7591 §2): what a registration or a Client ID Metadata Document may hold. */
export interface CheckedClientMetadata {
  redirectUris: string[];
  method: ClientAuthMethod;
  clientName: string | undefined;
  /** The metadata as stored and returned (without any secret). */
  metadata: Record<string, unknown>;
}

/**
 * Checks client metadata (a registration request's or a Client ID Metadata Document's);
 * `defaultMethod` is the token_endpoint_auth_method when it is omitted. Errors are
 * invalid_redirect_uri or invalid_client_metadata.
 */
export function checkClientMetadata(body: unknown, defaultMethod: ClientAuthMethod): CheckedClientMetadata {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'The client metadata must be a JSON object');
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be an array of 1 to 20 redirect URIs');
  }
  const redirectUris = [...new Set(uris.map(checkRedirectUri))];
  const method = (b.token_endpoint_auth_method ?? defaultMethod) as ClientAuthMethod;
  if (!AUTH_METHODS.includes(method)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  const grantTypes = stringList(b, 'grant_types', GRANT_TYPES, GRANT_TYPES);
  if (!grantTypes.includes('authorization_code'))
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code');
  const responseTypes = stringList(b, 'response_types', ['code'], ['code']);
  let scope: string | undefined;
  if (b.scope !== undefined && b.scope !== null) {
    if (typeof b.scope !== 'string') throw new OAuthError('invalid_client_metadata', 'scope must be a space-separated string');
    scope = checkScopes(parseScope(b.scope) ?? [], 'invalid_client_metadata').join(' ') || undefined;
  }
  const metadata: Record<string, unknown> = {
    redirect_uris: redirectUris,
    token_endpoint_auth_method: method,
    grant_types: grantTypes,
    response_types: responseTypes,
  };
  const named = {
    client_name: optionalString(b, 'client_name', 200),
    client_uri: optionalUrl(b, 'client_uri'),
    logo_uri: optionalUrl(b, 'logo_uri'),
    tos_uri: optionalUrl(b, 'tos_uri'),
    policy_uri: optionalUrl(b, 'policy_uri'),
    software_id: optionalString(b, 'software_id', 200),
    software_version: optionalString(b, 'software_version', 100),
    scope,
  };
  for (const [k, v] of Object.entries(named)) if (v !== undefined) metadata[k] = v;
  return { redirectUris, method, clientName: named.client_name, metadata };
}

/**
 * RFC 7591 dynamic registration. Public clients (`token_endpoint_auth_method: none`, what MCP
 * clients register as) get no secret; confidential ones get a secret shown once. When
 * grant_types is omitted the client gets authorization_code and refresh_token.
 */
export async function registerClient(db: Db, body: unknown): Promise<Record<string, unknown>> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'The registration request must be a JSON object');
  const { redirectUris, method, clientName, metadata } = checkClientMetadata(body, 'client_secret_basic');
  const clientSecret = method === 'none' ? undefined : secret('mcs_');
  const [row] = await db
    .insert(oauthClients)
    .values({
      secretHash: clientSecret ? sha256(clientSecret) : null,
      tokenEndpointAuthMethod: method,
      redirectUris,
      clientName: clientName ?? null,
      metadata,
    })
    .returning();
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
    ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
    ...metadata,
  };
}

/**
 * The client of a client_id: a registered client by its id, or a Client ID Metadata Document client
 * by its URL (as last fetched: ./client-metadata.ts fetches it again when its lifetime is over).
 * A metadata client's internal id is not a client_id.
 */
export async function getClient(db: Db, clientId: string): Promise<OAuthClient | undefined> {
  const where = clientId.startsWith('https://')
    ? eq(oauthClients.metadataUrl, clientId)
    : isUuid(clientId)
      ? and(eq(oauthClients.id, clientId), isNull(oauthClients.metadataUrl))
      : undefined;
  if (!where) return undefined;
  const [row] = await db.select().from(oauthClients).where(where);
  return row ? toClient(row) : undefined;
}

export const toClient = (row: typeof oauthClients.$inferSelect): OAuthClient => ({
  id: row.id,
  secretHash: row.secretHash,
  tokenEndpointAuthMethod: row.tokenEndpointAuthMethod,
  redirectUris: row.redirectUris,
  clientName: row.clientName,
  metadata: row.metadata as Record<string, unknown>,
  metadataUrl: row.metadataUrl,
  metadataExpiresAt: row.metadataExpiresAt,
});

export const clientGrantTypes = (c: OAuthClient) => (c.metadata.grant_types as string[] | undefined) ?? GRANT_TYPES;

/**
 * The registered redirect URI matching `uri` exactly, or, for a loopback http URI, matching
 * in everything but the port (RFC 8252 §7.3: native apps pick an ephemeral port).
 */
export function matchRedirectUri(client: OAuthClient, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' || !LOOPBACK.has(u.hostname)) return false;
  return client.redirectUris.some((r) => {
    const x = new URL(r);
    return x.protocol === 'http:' && x.hostname === u.hostname && x.pathname === u.pathname && x.search === u.search;
  });
}

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3): exactly the
 * method the client registered. Failures are invalid_client (401).
 */
export async function authenticateClient(
  db: Db,
  input: { basic?: { id: string; secret: string }; clientId?: string; clientSecret?: string },
): Promise<OAuthClient> {
  if (input.basic && (input.clientSecret !== undefined || (input.clientId !== undefined && input.clientId !== input.basic.id))) {
    throw new OAuthError('invalid_request', 'Use one client authentication method per request');
  }
  const id = input.basic?.id ?? input.clientId;
  if (!id) throw new OAuthError('invalid_client', 'Client authentication failed: client_id is missing', 401);
  const client = await getClient(db, id);
  if (!client) throw new OAuthError('invalid_client', 'Client authentication failed: unknown client', 401);
  const presented = input.basic ? input.basic.secret : input.clientSecret;
  const via: ClientAuthMethod = input.basic ? 'client_secret_basic' : input.clientSecret !== undefined ? 'client_secret_post' : 'none';
  if (via !== client.tokenEndpointAuthMethod) {
    throw new OAuthError(
      'invalid_client',
      `Client authentication failed: this client authenticates with ${client.tokenEndpointAuthMethod}`,
      401,
    );
  }
  if (via !== 'none' && !(client.secretHash && presented !== undefined && safeEqual(sha256(presented), client.secretHash))) {
    throw new OAuthError('invalid_client', 'Client authentication failed: wrong client secret', 401);
  }
  return client;
}

// --------------------------------------------------------------------- browser sessions, requests

export interface BrowserSession {
  id: string;
  token: string;
  memberId: string | null;
}

export async function createBrowserSession(db: Db, cfg: OAuthConfig, memberId: string | null = null): Promise<BrowserSession> {
  const token = secret('mss_');
  const [row] = await db
    .insert(oauthBrowserSessions)
    .values({ tokenHash: sha256(token), memberId, expiresAt: later(cfg.sessionTtlSeconds) })
    .returning({ id: oauthBrowserSessions.id });
  // Opportunistic clean-up of what has expired (sessions cascade to their requests).
  await db.delete(oauthBrowserSessions).where(lt(oauthBrowserSessions.expiresAt, new Date()));
  return { id: row.id, token, memberId };
}

export async function findBrowserSession(db: Db, token: string | undefined): Promise<BrowserSession | undefined> {
  if (!token || !/^mss_[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const [row] = await db
    .select()
    .from(oauthBrowserSessions)
    .where(eq(oauthBrowserSessions.tokenHash, sha256(token)));
  if (!row || row.expiresAt.getTime() <= Date.now()) return undefined;
  return { id: row.id, token, memberId: row.memberId };
}

/**
 * Signing in (memberId) or out (null) replaces the browser's session by a new one (new cookie:
 * no session fixation) and moves its pending authorization requests over.
 */
export async function switchBrowserSession(
  db: Db,
  cfg: OAuthConfig,
  old: BrowserSession,
  memberId: string | null,
): Promise<BrowserSession> {
  return db.transaction(async (tx) => {
    const token = secret('mss_');
    const [row] = await tx
      .insert(oauthBrowserSessions)
      .values({ tokenHash: sha256(token), memberId, expiresAt: later(cfg.sessionTtlSeconds) })
      .returning({ id: oauthBrowserSessions.id });
    await tx.update(oauthAuthorizationRequests).set({ sessionId: row.id }).where(eq(oauthAuthorizationRequests.sessionId, old.id));
    await tx.delete(oauthBrowserSessions).where(eq(oauthBrowserSessions.id, old.id));
    return { id: row.id, token, memberId };
  });
}

/** Form token of one authorization request in one browser session (synchronizer token, not stored). */
export const csrfToken = (session: BrowserSession, requestId: string) =>
  createHmac('sha256', session.token).update(`csrf:${requestId}`).digest('base64url');

export interface AuthorizationRequest {
  id: string;
  sessionId: string;
  client: OAuthClient;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string;
  resource: string;
}

export async function createAuthorizationRequest(
  db: Db,
  cfg: OAuthConfig,
  r: Omit<AuthorizationRequest, 'id' | 'client'> & { clientId: string },
): Promise<string> {
  const [row] = await db
    .insert(oauthAuthorizationRequests)
    .values({
      sessionId: r.sessionId,
      clientId: r.clientId,
      redirectUri: r.redirectUri,
      scopes: r.scopes,
      state: r.state,
      codeChallenge: r.codeChallenge,
      resource: r.resource,
      // Long enough to sign in and read the consent page, bounded by the session.
      expiresAt: later(Math.min(1800, cfg.sessionTtlSeconds)),
    })
    .returning({ id: oauthAuthorizationRequests.id });
  return row.id;
}

/** The pending request, if it exists, belongs to this browser session and is still open. */
export async function getAuthorizationRequest(
  db: Db,
  id: string | undefined,
  session: BrowserSession | undefined,
): Promise<AuthorizationRequest | undefined> {
  if (!id || !isUuid(id) || !session) return undefined;
  const [row] = await db
    .select()
    .from(oauthAuthorizationRequests)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthAuthorizationRequests.clientId))
    .where(and(eq(oauthAuthorizationRequests.id, id), eq(oauthAuthorizationRequests.sessionId, session.id)));
  if (!row) return undefined;
  const r = row.oauth_authorization_requests;
  if (r.completedAt || r.expiresAt.getTime() <= Date.now()) return undefined;
  const c = row.oauth_clients;
  return {
    id: r.id,
    sessionId: r.sessionId,
    client: toClient(c),
    redirectUri: r.redirectUri,
    scopes: r.scopes,
    state: r.state,
    codeChallenge: r.codeChallenge,
    resource: r.resource,
  };
}

/** Marks the request answered; false when it already was (double submit). */
async function completeRequest(db: Db | Parameters<Parameters<Db['transaction']>[0]>[0], id: string): Promise<boolean> {
  const rows = await db
    .update(oauthAuthorizationRequests)
    .set({ completedAt: new Date() })
    .where(and(eq(oauthAuthorizationRequests.id, id), isNull(oauthAuthorizationRequests.completedAt)))
    .returning({ id: oauthAuthorizationRequests.id });
  return rows.length === 1;
}

export const denyRequest = (db: Db, id: string) => completeRequest(db, id);

/** The member approved `scopes` (a subset of the request's): a grant and its one-time code. */
export async function approveRequest(
  db: Db,
  cfg: OAuthConfig,
  req: AuthorizationRequest,
  member: { id: string; orgId: string },
  scopes: string[],
): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    if (!(await completeRequest(tx, req.id))) return undefined;
    const [grant] = await tx
      .insert(oauthGrants)
      .values({ clientId: req.client.id, memberId: member.id, orgId: member.orgId, scopes, resource: req.resource })
      .returning({ id: oauthGrants.id });
    const code = secret('mac_');
    await tx.insert(oauthCodes).values({
      codeHash: sha256(code),
      grantId: grant.id,
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      expiresAt: later(cfg.codeTtlSeconds),
    });
    return code;
  });
}

// ------------------------------------------------------------------------------------- tokens

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

async function issueTokens(
  tx: Tx,
  cfg: OAuthConfig,
  grantId: string,
  accessScopes: string[],
  refreshScopes: string[] | null,
): Promise<TokenResponse> {
  const access = secret('mat_');
  const rows: (typeof oauthTokens.$inferInsert)[] = [
    { grantId, kind: 'access', tokenHash: sha256(access), scopes: accessScopes, expiresAt: later(cfg.accessTokenTtlSeconds) },
  ];
  let refresh: string | undefined;
  if (refreshScopes) {
    refresh = secret('mrt_');
    rows.push({
      grantId,
      kind: 'refresh',
      tokenHash: sha256(refresh),
      scopes: refreshScopes,
      expiresAt: later(cfg.refreshTokenTtlSeconds),
    });
  }
  await tx.insert(oauthTokens).values(rows);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: cfg.accessTokenTtlSeconds,
    ...(refresh ? { refresh_token: refresh } : {}),
    scope: accessScopes.join(' '),
  };
}

async function revokeGrant(db: Db | Tx, grantId: string, reason: string): Promise<void> {
  const now = new Date();
  await db
    .update(oauthGrants)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)));
  await db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(verifier)) == challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  return safeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}

export const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
export const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * authorization_code grant (RFC 6749 §4.1.3 with PKCE). A code works once: presenting it again
 * revokes every token issued from it (§4.1.2). The revocation is committed although the call
 * fails, so it runs outside the transaction that would roll back.
 */
export async function exchangeCode(
  db: Db,
  cfg: OAuthConfig,
  client: OAuthClient,
  p: { code: string; redirectUri: string | undefined; codeVerifier: string | undefined; resource: string | undefined },
): Promise<TokenResponse> {
  if (!p.codeVerifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!PKCE_VERIFIER.test(p.codeVerifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]');
  if (!p.redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required');
  const outcome = await db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(oauthCodes)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
      .where(eq(oauthCodes.codeHash, sha256(p.code)))
      .for('update');
    if (!row) return { error: new OAuthError('invalid_grant', 'Unknown authorization code') };
    const code = row.oauth_codes;
    const grant = row.oauth_grants;
    if (grant.clientId !== client.id)
      return { error: new OAuthError('invalid_grant', 'The authorization code was issued to another client') };
    if (code.usedAt)
      return {
        error: new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked'),
        revoke: grant.id,
      };
    if (code.expiresAt.getTime() <= Date.now()) return { error: new OAuthError('invalid_grant', 'The authorization code has expired') };
    if (grant.revokedAt) return { error: new OAuthError('invalid_grant', 'The authorization has been revoked') };
    if (code.redirectUri !== p.redirectUri)
      return { error: new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request') };
    if (!pkceMatches(p.codeVerifier!, code.codeChallenge))
      return { error: new OAuthError('invalid_grant', 'PKCE verification failed: code_verifier does not match code_challenge') };
    if (p.resource !== undefined && !sameResource(p.resource, grant.resource)) {
      return { error: new OAuthError('invalid_target', `This code is for resource ${grant.resource}`) };
    }
    await tx.update(oauthCodes).set({ usedAt: new Date() }).where(eq(oauthCodes.codeHash, code.codeHash));
    const refresh = clientGrantTypes(client).includes('refresh_token') ? grant.scopes : null;
    return { tokens: await issueTokens(tx, cfg, grant.id, grant.scopes, refresh) };
  });
  if ('revoke' in outcome && outcome.revoke) await revokeGrant(db, outcome.revoke, 'authorization_code_reuse');
  if ('error' in outcome && outcome.error) throw outcome.error;
  return (outcome as { tokens: TokenResponse }).tokens;
}

/**
 * refresh_token grant (RFC 6749 §6, OAuth 2.1 §4.3.1): the refresh token is rotated; a rotated
 * one presented again means it leaked, so the whole grant (every token of the family) is revoked.
 * `scope` may narrow the new access token; the new refresh token keeps the original scopes.
 */
export async function refreshTokens(
  db: Db,
  cfg: OAuthConfig,
  client: OAuthClient,
  p: { refreshToken: string; scope: string[] | undefined; resource: string | undefined },
): Promise<TokenResponse> {
  if (!clientGrantTypes(client).includes('refresh_token'))
    throw new OAuthError('unauthorized_client', 'This client did not register the refresh_token grant');
  const outcome = await db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(and(eq(oauthTokens.tokenHash, sha256(p.refreshToken)), eq(oauthTokens.kind, 'refresh')))
      .for('update');
    if (!row) return { error: new OAuthError('invalid_grant', 'Unknown refresh token') };
    const token = row.oauth_tokens;
    const grant = row.oauth_grants;
    if (grant.clientId !== client.id) return { error: new OAuthError('invalid_grant', 'The refresh token was issued to another client') };
    if (grant.revokedAt || token.revokedAt) return { error: new OAuthError('invalid_grant', 'The refresh token has been revoked') };
    if (token.usedAt) {
      return {
        error: new OAuthError('invalid_grant', 'The refresh token was already used; every token of this authorization is revoked'),
        revoke: grant.id,
      };
    }
    if (token.expiresAt.getTime() <= Date.now()) return { error: new OAuthError('invalid_grant', 'The refresh token has expired') };
    if (p.resource !== undefined && !sameResource(p.resource, grant.resource)) {
      return { error: new OAuthError('invalid_target', `This refresh token is for resource ${grant.resource}`) };
    }
    let scopes = token.scopes;
    if (p.scope) {
      const extra = p.scope.filter((s) => !token.scopes.includes(s));
      if (extra.length) return { error: new OAuthError('invalid_scope', `Scope ${extra.join(' ')} was not granted`) };
      scopes = OAUTH_SCOPES.filter((s) => p.scope!.includes(s));
    }
    await tx.update(oauthTokens).set({ usedAt: new Date() }).where(eq(oauthTokens.id, token.id));
    return { tokens: await issueTokens(tx, cfg, grant.id, scopes, token.scopes) };
  });
  if ('revoke' in outcome && outcome.revoke) await revokeGrant(db, outcome.revoke, 'refresh_token_reuse');
  if ('error' in outcome && outcome.error) throw outcome.error;
  return (outcome as { tokens: TokenResponse }).tokens;
}

/**
 * RFC 7009: revoking a refresh token revokes the grant (all its tokens); revoking an access
 * token revokes that token. Unknown tokens, and tokens of other clients, are ignored (200).
 */
export async function revokeToken(db: Db, client: OAuthClient, token: string): Promise<void> {
  const [row] = await db
    .select({ id: oauthTokens.id, kind: oauthTokens.kind, grantId: oauthTokens.grantId, clientId: oauthGrants.clientId })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, sha256(token)));
  if (!row || row.clientId !== client.id) return;
  if (row.kind === 'refresh') await revokeGrant(db, row.grantId, 'revoked_by_client');
  else
    await db
      .update(oauthTokens)
      .set({ revokedAt: sql`coalesce(${oauthTokens.revokedAt}, now())` })
      .where(eq(oauthTokens.id, row.id));
}

/** Resource indicators compare as URLs without a trailing slash (RFC 8707 §2, MCP canonical URI). */
export function canonicalResource(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    if (u.hash) return undefined;
    return u.href.replace(/\/$/, '');
  } catch {
    return undefined;
  }
}

export const sameResource = (a: string, b: string) => {
  const x = canonicalResource(a);
  return x !== undefined && x === canonicalResource(b);
};

export const ACCESS_TOKEN_RE = /^mat_[A-Za-z0-9_-]{43}$/;

/**
 * An access token presented to `resource`: the caller's workspace, plan and the token's scopes,
 * or the reason it is refused. `keyId` is the grant id (one per approval).
 */
export async function resolveAccessToken(
  db: Db,
  token: string,
  resource: string,
): Promise<(AuthContext & { expiresAt: Date }) | { refused: string }> {
  if (!ACCESS_TOKEN_RE.test(token)) return { refused: 'Malformed access token' };
  const [row] = await db
    .select({
      kind: oauthTokens.kind,
      scopes: oauthTokens.scopes,
      expiresAt: oauthTokens.expiresAt,
      revokedAt: oauthTokens.revokedAt,
      grantId: oauthGrants.id,
      grantRevokedAt: oauthGrants.revokedAt,
      resource: oauthGrants.resource,
      orgId: oauthGrants.orgId,
      plan: organizations.plan,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(organizations, eq(organizations.id, oauthGrants.orgId))
    .where(eq(oauthTokens.tokenHash, sha256(token)));
  if (row?.kind !== 'access') return { refused: 'Unknown access token' };
  if (row.revokedAt || row.grantRevokedAt) return { refused: 'This access token has been revoked' };
  if (row.expiresAt.getTime() <= Date.now()) return { refused: 'This access token has expired' };
  if (!sameResource(row.resource, resource)) return { refused: `This access token was issued for another resource (${row.resource})` };
  return { orgId: row.orgId, keyId: row.grantId, scopes: row.scopes, plan: row.plan, expiresAt: row.expiresAt };
}

/** How long rows outlive their expiry before the maintenance job deletes them (for audits and support). */
export const OAUTH_RETENTION_SECONDS = 24 * 3600;

export interface OAuthPurge {
  codes: number;
  tokens: number;
  sessions: number;
  requests: number;
  grants: number;
}

/**
 * Deletes what can no longer be used, a day after it expired: codes, access and refresh tokens
 * (a refresh token presented after its row is gone is simply unknown: invalid_grant), browser
 * sessions (their pending requests go with them), pending requests, and grants older than a day
 * left with no token and no code. Registered clients are kept: a client may register once and
 * come back months later.
 */
export async function purgeExpiredOAuth(db: Db, now = new Date()): Promise<OAuthPurge> {
  const before = new Date(now.getTime() - OAUTH_RETENTION_SECONDS * 1000);
  return db.transaction(async (tx) => {
    const codes = await tx.delete(oauthCodes).where(lt(oauthCodes.expiresAt, before)).returning({ k: oauthCodes.codeHash });
    const tokens = await tx.delete(oauthTokens).where(lt(oauthTokens.expiresAt, before)).returning({ k: oauthTokens.id });
    const requests = await tx
      .delete(oauthAuthorizationRequests)
      .where(lt(oauthAuthorizationRequests.expiresAt, before))
      .returning({ k: oauthAuthorizationRequests.id });
    const sessions = await tx
      .delete(oauthBrowserSessions)
      .where(lt(oauthBrowserSessions.expiresAt, before))
      .returning({ k: oauthBrowserSessions.id });
    const grants = await tx
      .delete(oauthGrants)
      .where(
        and(
          lt(oauthGrants.createdAt, before),
          sql`not exists (select 1 from ${oauthTokens} where ${oauthTokens.grantId} = ${oauthGrants.id})`,
          sql`not exists (select 1 from ${oauthCodes} where ${oauthCodes.grantId} = ${oauthGrants.id})`,
        ),
      )
      .returning({ k: oauthGrants.id });
    return { codes: codes.length, tokens: tokens.length, sessions: sessions.length, requests: requests.length, grants: grants.length };
  });
}

/** A member's approval of a client, as the admin CLI lists it. */
export interface GrantSummary {
  object: 'oauth_grant';
  id: string;
  client_id: string;
  client_name: string | null;
  member_email: string;
  scopes: string[];
  resource: string;
  created_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
  /** Unrevoked, unexpired access and refresh tokens of the grant. */
  live_tokens: number;
  /** When the grant last had a token issued (sign-in or refresh). */
  last_token_at: string | null;
}

/**
 * The grants (connected apps) of an organization's members, or of one member (`memberId`; then
 * only those not revoked, or with `revoked` only the revoked ones), newest first.
 */
export async function listGrants(db: Db, owner: { orgId: string } | { memberId: string; revoked?: boolean }): Promise<GrantSummary[]> {
  const byOrg = 'orgId' in owner;
  const id = byOrg ? owner.orgId : owner.memberId;
  if (!isUuid(id)) return [];
  type Row = Omit<GrantSummary, 'object' | 'created_at' | 'revoked_at' | 'last_token_at'> & {
    created_at: Date;
    revoked_at: Date | null;
    last_token_at: Date | null;
  };
  const rows = await db.execute<Row>(sql`
    select g.id, coalesce(c.metadata_url, g.client_id::text) as client_id, c.client_name, m.email as member_email, g.scopes, g.resource, g.created_at, g.revoked_at,
           g.revoked_reason,
           (select count(*)::int from ${oauthTokens} t where t.grant_id = g.id and t.revoked_at is null and t.expires_at > now()) as live_tokens,
           (select max(t.created_at) from ${oauthTokens} t where t.grant_id = g.id) as last_token_at
      from ${oauthGrants} g
      join ${oauthClients} c on c.id = g.client_id
      join members m on m.id = g.member_id
     where ${byOrg ? sql`g.org_id = ${id}` : owner.revoked ? sql`g.member_id = ${id} and g.revoked_at is not null` : sql`g.member_id = ${id} and g.revoked_at is null`}
     order by g.created_at desc, g.id`);
  const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
  return rows.map((r) => ({
    object: 'oauth_grant' as const,
    id: r.id,
    client_id: r.client_id,
    client_name: r.client_name,
    member_email: r.member_email,
    scopes: r.scopes,
    resource: r.resource,
    created_at: iso(r.created_at)!,
    revoked_at: iso(r.revoked_at),
    revoked_reason: r.revoked_reason,
    live_tokens: r.live_tokens,
    last_token_at: iso(r.last_token_at),
  }));
}

/**
 * Revokes a grant and every token issued from it (the client must send the member through sign-in
 * and consent again). False when there is no such grant (or it is not `memberId`'s); true also
 * when it was revoked already.
 */
export async function revokeGrantById(db: Db, grantId: string, reason = 'revoked_by_admin', memberId?: string): Promise<boolean> {
  if (!isUuid(grantId)) return false;
  return db.transaction(async (tx) => {
    const [grant] = await tx
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(memberId === undefined ? eq(oauthGrants.id, grantId) : and(eq(oauthGrants.id, grantId), eq(oauthGrants.memberId, memberId)))
      .for('update');
    if (!grant) return false;
    await revokeGrant(tx, grantId, reason);
    return true;
  });
}
