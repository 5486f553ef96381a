// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the MCP
// authorization spec of 2025-11-25 prefers them to dynamic registration): a client_id that is an
// https URL names a JSON document of the client's metadata, served at that URL by the client.
//
// The document is fetched through the guarded outbound client (no private or special-use address,
// no redirect followed, at most CLIENT_METADATA_MAX_BYTES, within OAUTH_CLIENT_METADATA_TIMEOUT_MS),
// checked like a registration (the same rules) plus the draft's own (its client_id is the URL,
// no shared-secret authentication: public clients only), and kept as a row of oauth_clients
// (metadata_url) until the lifetime its Cache-Control gives, bounded to [1 minute, 1 day], is
// over. A failed fetch or an invalid document is never kept (§5.2); a valid one replaces the row.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { oauthClients } from '../../db/schema/index.ts';
import { FetchRefused, type GuardedFetcher } from '../../net/guarded-fetch.ts';
import { checkClientMetadata, OAuthError, toClient, type OAuthClient } from './oauth.ts';

/** The draft's recommended read limit (§8.7). */
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;
export const CLIENT_METADATA_MIN_SECONDS = 60;
export const CLIENT_METADATA_MAX_SECONDS = 24 * 3600;
/** The lifetime of a document served without max-age. */
const DEFAULT_SECONDS = 3600;

/** A client_id that names a metadata document (registered clients' ids are UUIDs, never URLs). */
export const isClientIdUrl = (clientId: string) => clientId.startsWith('https://');

/** What makes `raw` unusable as a Client Identifier URL (§3), or undefined. */
export function clientIdUrlProblem(raw: string): string | undefined {
  if (raw.length > 2000) return 'is longer than 2000 characters';
  const u = URL.parse(raw);
  if (u?.protocol !== 'https:') return 'is not an https URL';
  if (u.username || u.password || /^https:\/\/[^/?#]*@/i.test(raw)) return 'must not contain a user name or password';
  if (raw.includes('#')) return 'must not contain a fragment';
  if (u.pathname === '/' || u.pathname === '') return 'must have a path';
  // The parser has removed dot segments: a raw URL that differs in its path had some.
  if (/\/\.{1,2}(\/|$|\?)/.test(raw.replace(/[?#].*$/, ''))) return 'must not contain . or .. path segments';
  return undefined;
}

/** Seconds a fetched document is used for: its Cache-Control (s-maxage, max-age, less Age), bounded. */
export function metadataLifetimeSeconds(cacheControl: string | undefined, age: string | undefined): number {
  const directives = new Map<string, string>();
  for (const part of (cacheControl ?? '').split(',')) {
    const [name, value = ''] = part.trim().split('=', 2);
    if (name) directives.set(name.toLowerCase(), value.replace(/^"|"$/g, ''));
  }
  let seconds = DEFAULT_SECONDS;
  if (directives.has('no-store') || directives.has('no-cache') || directives.has('private')) seconds = 0;
  else {
    const maxAge = directives.get('s-maxage') ?? directives.get('max-age');
    if (maxAge !== undefined && /^\d+$/.test(maxAge)) seconds = Number(maxAge) - (/^\d+$/.test(age ?? '') ? Number(age) : 0);
  }
  return Math.min(CLIENT_METADATA_MAX_SECONDS, Math.max(CLIENT_METADATA_MIN_SECONDS, seconds));
}

/** Why a Client ID Metadata Document cannot be used (shown to the person signing in; never cached). */
export class ClientMetadataError extends OAuthError {
  constructor(url: string, why: string) {
    super('invalid_client', `The app's client metadata document at ${url} ${why}`, 400);
  }
}

const refusal = (err: FetchRefused): string => {
  switch (err.reason) {
    case 'too_large':
      return `is larger than ${CLIENT_METADATA_MAX_BYTES} bytes`;
    case 'timeout':
      return 'did not arrive in time';
    case 'redirects':
      return 'answered with a redirect (a metadata document is served at its own URL)';
    case 'status':
      return `could not be fetched: HTTP ${err.status}`;
    default:
      return `could not be fetched: it ${err.message}`;
  }
};

/** The document's metadata as stored, or a ClientMetadataError. */
export function checkMetadataDocument(url: string, body: Buffer): ReturnType<typeof checkClientMetadata> {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ClientMetadataError(url, 'is not JSON');
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ClientMetadataError(url, 'is not a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== url) throw new ClientMetadataError(url, 'names another client_id (it must be the URL it is served at)');
  if ('client_secret' in d || 'client_secret_expires_at' in d) throw new ClientMetadataError(url, 'must not contain a client secret');
  let checked: ReturnType<typeof checkClientMetadata>;
  try {
    checked = checkClientMetadata(d, 'none');
  } catch (err) {
    if (err instanceof OAuthError) throw new ClientMetadataError(url, `is invalid: ${err.message}`);
    throw err;
  }
  if (checked.method !== 'none')
    throw new ClientMetadataError(url, 'must declare token_endpoint_auth_method none (this server has no shared secret with it)');
  return checked;
}

/**
 * The client of a Client Identifier URL, its document fetched (again) unless the row kept is still
 * within its lifetime; `beforeFetch` runs first when a fetch is needed (the caller's rate limit).
 */
export async function resolveMetadataClient(
  db: Db,
  fetcher: GuardedFetcher,
  url: string,
  opts: { timeoutMs: number; beforeFetch?: () => Promise<void> },
): Promise<OAuthClient> {
  const problem = clientIdUrlProblem(url);
  if (problem) throw new ClientMetadataError(url, `cannot be used: the client_id ${problem}`);
  const [kept] = await db.select().from(oauthClients).where(eq(oauthClients.metadataUrl, url));
  if (kept?.metadataExpiresAt && kept.metadataExpiresAt.getTime() > Date.now()) return toClient(kept);
  await opts.beforeFetch?.();
  let fetched: Awaited<ReturnType<GuardedFetcher['fetch']>>;
  try {
    fetched = await fetcher.fetch(url, {
      httpsOnly: true,
      maxRedirects: 0,
      maxBytes: CLIENT_METADATA_MAX_BYTES,
      timeoutMs: opts.timeoutMs,
      accept: 'application/json',
    });
  } catch (err) {
    if (err instanceof FetchRefused) throw new ClientMetadataError(url, refusal(err));
    throw err;
  }
  const { redirectUris, clientName, metadata } = checkMetadataDocument(url, fetched.body);
  const cacheControl = fetched.headers['cache-control'];
  const seconds = metadataLifetimeSeconds(Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl, fetched.headers.age);
  const values = {
    secretHash: null,
    tokenEndpointAuthMethod: 'none' as const,
    redirectUris,
    clientName: clientName ?? null,
    metadata: { client_id: url, ...metadata },
    metadataExpiresAt: new Date(Date.now() + seconds * 1000),
  };
  const [row] = await db
    .insert(oauthClients)
    .values({ metadataUrl: url, ...values })
    .onConflictDoUpdate({ target: oauthClients.metadataUrl, set: values })
    .returning();
  return toClient(row);
}
