// Bearer tokens on /mcp: OAuth access tokens of our authorization server (bound to the /mcp
// resource) and workspace API keys. Failures are 401 with the RFC 9728 challenge pointing at the
// protected-resource metadata; a tool needing a scope the token lacks is a 403 insufficient_scope
// challenge (RFC 6750 §3.1) naming it.
import { hash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { Sql } from '../db/client.ts';
import { ApiError } from '../errors.ts';
import { resolveApiKey, type AuthContext } from '../services/workspaces/api-keys.ts';
import { resolveAccessToken } from '../services/oauth/oauth.ts';

export const MCP_PATH = '/mcp';

/** The absolute URLs of the MCP endpoint and its authorization server, from PUBLIC_BASE_URL. */
export function mcpUrls(publicBaseUrl: string) {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return {
    base,
    resource: `${base}${MCP_PATH}`,
    resourceMetadata: `${base}/.well-known/oauth-protected-resource`,
    authorizationServerMetadata: `${base}/.well-known/oauth-authorization-server`,
    issuer: base,
    authorize: `${base}/oauth/authorize`,
    token: `${base}/oauth/token`,
    register: `${base}/oauth/register`,
    revoke: `${base}/oauth/revoke`,
    signIn: `${base}/oauth/sign-in`,
    consent: `${base}/oauth/consent`,
    docs: `${base}/api/v1/skill.md`,
  };
}

/** A refused bearer token: the status, the challenge header and the envelope to send. */
export class BearerError extends Error {
  readonly status: 401 | 403;
  readonly challenge: string;
  readonly apiError: ApiError;
  constructor(status: 401 | 403, challenge: string, apiError: ApiError) {
    super(apiError.message);
    this.status = status;
    this.challenge = challenge;
    this.apiError = apiError;
  }
}

// Quoted-string values of a challenge: no quotes, backslashes or control characters.
const q = (s: string) => `"${s.replace(/["\\\u0000-\u001f\u007f]/g, "'")}"`;

export function unauthorized(resourceMetadata: string, apiError: ApiError, invalidToken: boolean): BearerError {
  const params = [`resource_metadata=${q(resourceMetadata)}`];
  if (invalidToken) params.push('error="invalid_token"', `error_description=${q(apiError.message)}`);
  return new BearerError(401, `Bearer ${params.join(', ')}`, apiError);
}

export function insufficientScope(resourceMetadata: string, needed: string[], granted: string[], tool: string): BearerError {
  const scope = [...new Set([...granted, needed[0]])].join(' ');
  const apiError = new ApiError('forbidden', `The tool ${tool} needs the scope ${needed.join(' or ')}, which this token was not granted`, {
    scope: needed[0],
    required_scopes: needed,
    granted_scopes: granted,
    tool,
  });
  return new BearerError(
    403,
    `Bearer error="insufficient_scope", scope=${q(scope)}, resource_metadata=${q(resourceMetadata)}, error_description=${q(apiError.message)}`,
    apiError,
  );
}

// Resolved tokens, reused for MCP_AUTH_CACHE_SECONDS (never past an access token's expiry): a
// stateless MCP client sends its token with every message, and resolving it is a database round
// trip that would dominate cheap tool calls. Keyed by the token's SHA-256.
// Every change that can alter a resolved answer (a key or token revoked, a grant revoked, a plan
// changed, a member deleted) fires a trigger that notifies channel auth_changed on commit
// (migration 0007); every API node listens and empties its cache, so revocation reaches /mcp at
// once. The TTL remains the bound when a notification is lost (the listening connection is
// re-established and the cache emptied again then). A resolution that started before a clear is
// not cached (`generation`), so a revocation racing with a cache miss cannot be undone by it.
const MAX_CACHED = 10_000;
const cache = new Map<string, { auth: AuthContext; until: number }>();
let generation = 0;

/** Empties the cache of resolved tokens (on auth_changed, and when listening (re)starts). */
export function forgetResolvedTokens(): void {
  generation++;
  cache.clear();
}

export const AUTH_CHANGED_CHANNEL = 'auth_changed';

/**
 * Listens to auth_changed on `sql` (a dedicated connection postgres.js keeps and re-establishes);
 * resolves once listening, with the function that stops it.
 */
export async function listenForAuthChanges(sql: Sql): Promise<() => Promise<void>> {
  // On (re)connection as well: anything may have changed while nobody listened.
  const { unlisten } = await sql.listen(AUTH_CHANGED_CHANNEL, forgetResolvedTokens, forgetResolvedTokens);
  return unlisten;
}

function remember(key: string, auth: AuthContext, until: number) {
  if (cache.size >= MAX_CACHED) {
    const now = Date.now();
    for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
    while (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, { auth, until });
}

const cacheKey = (header: string) => hash('sha256', header, 'base64');

/** The caller of an /mcp request when its token was resolved less than the cache TTL ago. */
export function cachedBearer(ctx: AppContext, header: string | undefined): AuthContext | undefined {
  if (header === undefined || ctx.config.oauth.mcpAuthCacheSeconds <= 0) return undefined;
  const hit = cache.get(cacheKey(header));
  return hit && hit.until > Date.now() ? hit.auth : undefined;
}

/** The caller of an /mcp request, or a BearerError (401). */
export async function resolveBearer(ctx: AppContext, header: string | undefined): Promise<AuthContext> {
  const ttl = ctx.config.oauth.mcpAuthCacheSeconds * 1000;
  if (ttl <= 0 || header === undefined) return (await resolveUncached(ctx, header)).auth;
  const key = cacheKey(header);
  const hit = cache.get(key);
  const now = Date.now();
  if (hit && hit.until > now) return hit.auth;
  const started = generation;
  const { auth, expiresAt } = await resolveUncached(ctx, header);
  if (started === generation) remember(key, auth, Math.min(now + ttl, expiresAt?.getTime() ?? Infinity));
  return auth;
}

async function resolveUncached(ctx: AppContext, header: string | undefined): Promise<{ auth: AuthContext; expiresAt?: Date }> {
  const urls = mcpUrls(ctx.config.publicBaseUrl);
  if (header === undefined || header.trim() === '') {
    throw unauthorized(
      urls.resourceMetadata,
      new ApiError(
        'unauthorized',
        'Missing bearer token: connect through the OAuth sign-in flow or send "Authorization: Bearer <API key>"',
      ),
      false,
    );
  }
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m)
    throw unauthorized(
      urls.resourceMetadata,
      new ApiError('invalid_api_key', 'Malformed Authorization header: expected "Bearer <token>"'),
      true,
    );
  const token = m[1];
  if (token.startsWith('mapi_')) {
    try {
      return await resolveApiKey(ctx.db, header);
    } catch (err) {
      if (err instanceof ApiError) throw unauthorized(urls.resourceMetadata, err, true);
      throw err;
    }
  }
  const auth = await resolveAccessToken(ctx.db, token, urls.resource);
  if ('refused' in auth) throw unauthorized(urls.resourceMetadata, new ApiError('invalid_api_key', auth.refused), true);
  const { expiresAt, ...rest } = auth;
  return { auth: rest, expiresAt };
}
