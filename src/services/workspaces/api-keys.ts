// Workspace API keys: `mapi_` + 43 base64url characters (256 random bits). Only the SHA-256
// of a key is stored (a key has full entropy, so a fast hash is the right tool); the key
// itself is shown once, at creation.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { apiKeys, organizations } from '../../db/schema/index.ts';
import { ApiError } from '../../errors.ts';
import type { AuthContext } from '../../handlers.ts';

export type { AuthContext };

export const SCOPES = ['generations:read', 'generations:write', 'social:read', 'social:write'] as const;
export type Scope = (typeof SCOPES)[number];

const KEY_RE = /^mapi_[A-Za-z0-9_-]{43}$/;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export interface CreatedKey {
  id: string;
  key: string;
  scopes: string[];
  expiresAt: Date | null;
}

export function validateScopes(scopes: string[]): Scope[] {
  if (scopes.length === 0) throw new Error('At least one scope is required');
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) throw new Error(`Unknown scope "${s}" (known: ${SCOPES.join(', ')})`);
  }
  return [...new Set(scopes)] as Scope[];
}

export async function createApiKey(
  db: Db,
  opts: { orgId: string; scopes: string[]; expiresInSeconds?: number; name?: string },
): Promise<CreatedKey> {
  const scopes = validateScopes(opts.scopes);
  const key = `mapi_${randomBytes(32).toString('base64url')}`;
  const expiresAt = opts.expiresInSeconds !== undefined ? new Date(Date.now() + opts.expiresInSeconds * 1000) : null;
  const [row] = await db
    .insert(apiKeys)
    .values({ orgId: opts.orgId, name: opts.name ?? null, prefix: key.slice(0, 12), keyHash: hashKey(key), scopes, expiresAt })
    .returning({ id: apiKeys.id });
  return { id: row.id, key, scopes, expiresAt };
}

export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(eq(apiKeys.id, id))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

/** Resolves an Authorization header to the key's workspace, or throws the seed's 401s. */
export async function authenticate(db: Db, header: string | undefined): Promise<AuthContext> {
  return (await resolveApiKey(db, header)).auth;
}

/** authenticate, with the key's expiry (for callers that cache the answer). */
export async function resolveApiKey(db: Db, header: string | undefined): Promise<{ auth: AuthContext; expiresAt: Date | undefined }> {
  if (header === undefined || header.trim() === '') {
    throw new ApiError('unauthorized', 'Missing bearer token: send "Authorization: Bearer <API key>"');
  }
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new ApiError('invalid_api_key', 'Malformed Authorization header: expected "Bearer <API key>"');
  const key = m[1];
  if (!KEY_RE.test(key)) throw new ApiError('invalid_api_key', 'Malformed API key');
  const [row] = await db
    .select({
      id: apiKeys.id,
      orgId: apiKeys.orgId,
      scopes: apiKeys.scopes,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
      lastUsedAt: apiKeys.lastUsedAt,
      plan: organizations.plan,
    })
    .from(apiKeys)
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(eq(apiKeys.keyHash, hashKey(key)))
    .limit(1);
  if (!row) throw new ApiError('invalid_api_key', 'Unknown API key');
  if (row.revokedAt) throw new ApiError('invalid_api_key', 'This API key has been revoked');
  if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) throw new ApiError('invalid_api_key', 'This API key has expired');
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    // Best effort, at most once a minute per key; never fails the request.
    db.update(apiKeys)
      .set({ lastUsedAt: new Date() })
      .where(and(eq(apiKeys.id, row.id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(Date.now() - 60_000)))))
      .then(
        () => {},
        () => {},
      );
  }
  return { auth: { orgId: row.orgId, keyId: row.id, scopes: row.scopes, plan: row.plan }, expiresAt: row.expiresAt ?? undefined };
}
