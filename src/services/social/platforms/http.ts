// What every social adapter shares: the platform's fixed hosts (SOCIAL_API_BASE_<PLATFORM>
// replaces scheme and host, keeping the path; these are operator-configured, not user input, so
// they do not go through the user-URL guard), the bearer token with one refresh after a 401, and
// the platform's answers turned into PlatformError (429/5xx retryable, with its Retry-After).
import type { MediaRow } from '../../editor/media.ts';
import type { SocialAccountRow } from '../accounts.ts';
import { RefreshRefused, type Credentials, type RefreshedTokens } from '../connection.ts';
import type { Storage } from '../../../storage/index.ts';

/** Longest one platform request may take. */
const REQUEST_TIMEOUT_MS = 120_000;
/** Longest error body kept in a message. */
const MAX_ERROR_TEXT = 500;

export class PlatformError extends Error {
  override name = 'PlatformError';
  readonly status: number;
  readonly retryable: boolean;
  /** Seconds the platform asked to wait (Retry-After, x-rate-limit-reset), when it said. */
  readonly retryAfterSeconds: number | undefined;
  readonly platformCode: string | undefined;
  constructor(message: string, status: number, retryable: boolean, retryAfterSeconds?: number, platformCode?: string) {
    super(message);
    this.status = status;
    this.retryable = retryable;
    this.retryAfterSeconds = retryAfterSeconds;
    this.platformCode = platformCode;
  }
}

export interface PlatformRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** Absolute URL on the platform's real host; rewritten when SOCIAL_API_BASE_<PLATFORM> is set. */
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | FormData | URLSearchParams;
  /** Send the connection's bearer token (default true). */
  auth?: boolean;
  /** Send the token in this query parameter instead of the Authorization header (Meta's Graph APIs: `access_token`). */
  tokenParam?: string;
  /** Non-2xx statuses that are answers, not errors (YouTube's 308 Resume Incomplete). */
  accept?: number[];
}

export interface PlatformResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Replaces scheme and host of `url` with `base` (an origin), keeping path and query. */
export function rebase(url: string, base: string | undefined): string {
  if (!base) return url;
  const u = new URL(url);
  return `${base}${u.pathname}${u.search}`;
}

export function retryAfter(headers: Headers): number | undefined {
  const ra = headers.get('retry-after');
  if (ra) {
    if (/^\d+$/.test(ra.trim())) return Number(ra.trim());
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, (at - Date.now()) / 1000);
  }
  const reset = headers.get('x-rate-limit-reset'); // X: epoch seconds
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) - Date.now() / 1000);
  return graphRegainSeconds(headers);
}

// Meta's Graph APIs (Instagram, Facebook, Threads): errors are {"error": {"message", "type", "code",
// "error_subcode", "fbtrace_id"}}, usually with HTTP 400 whatever the cause. Code 190 (OAuthException)
// is an expired or revoked token (as a 401 elsewhere); codes 4, 17, 32, 613 and 80001–80014 are rate
// limits, 1 and 2 temporary failures (as a 429/5xx elsewhere), and so is any error marked is_transient.
const GRAPH_RETRYABLE_CODES = new Set([1, 2, 4, 17, 32, 341, 613]);
export const graphError = (json: any): { code: number; subcode?: number; message: string; transient: boolean } | undefined => {
  const e = json?.error;
  if (!e || typeof e !== 'object' || typeof e.code !== 'number') return undefined;
  return {
    code: e.code,
    subcode: typeof e.error_subcode === 'number' ? e.error_subcode : undefined,
    message: String(e.message ?? e.error_user_msg ?? ''),
    transient: e.is_transient === true,
  };
};
const graphTokenRejected = (json: any) => graphError(json)?.code === 190;
const graphRetryable = (json: any) => {
  const e = graphError(json);
  return !!e && (GRAPH_RETRYABLE_CODES.has(e.code) || (e.code >= 80001 && e.code <= 80014) || e.transient);
};
/** Minutes Meta says until access is regained (X-Business-Use-Case-Usage), as seconds. */
function graphRegainSeconds(headers: Headers): number | undefined {
  const buc = headers.get('x-business-use-case-usage');
  if (!buc) return undefined;
  try {
    const minutes = Object.values(JSON.parse(buc) as Record<string, { estimated_time_to_regain_access?: number }[]>)
      .flat()
      .map((u) => Number(u.estimated_time_to_regain_access))
      .filter((n) => Number.isFinite(n));
    return minutes.length ? Math.max(...minutes) * 60 : undefined;
  } catch {
    return undefined;
  }
}

/** The platform's own words from an error body (X problem details, LinkedIn's message, OAuth error). */
function errorText(json: any, text: string): { message: string; code?: string } {
  // Meta's Graph error (numeric code, no `errors` list; Google's has one and is read below).
  const g = Array.isArray(json?.error?.errors) ? undefined : graphError(json);
  if (g)
    return { message: g.message.slice(0, MAX_ERROR_TEXT) || 'no message', code: g.subcode ? `${g.code}/${g.subcode}` : String(g.code) };
  // {"error": {...}}: TikTok {code, message, log_id}; Google {code, message, errors: [{reason}]}.
  if (json && typeof json === 'object' && json.error && typeof json.error === 'object') {
    const e = json.error;
    const reason = Array.isArray(e.errors) ? e.errors[0]?.reason : undefined;
    const code = reason ?? e.code ?? e.status;
    const message = e.message || code;
    if (message) return { message: String(message).slice(0, MAX_ERROR_TEXT), code: code === undefined ? undefined : String(code) };
  }
  if (json && typeof json === 'object') {
    const e = Array.isArray(json.errors) ? json.errors[0] : undefined;
    const message = json.detail ?? json.message ?? e?.message ?? json.error_description ?? json.title ?? json.error;
    const code = json.code ?? json.serviceErrorCode ?? json.error ?? e?.code ?? json.type;
    if (message) return { message: String(message).slice(0, MAX_ERROR_TEXT), code: code === undefined ? undefined : String(code) };
  }
  return { message: text.slice(0, MAX_ERROR_TEXT) || 'no body' };
}

export interface Caller {
  call(req: PlatformRequest): Promise<PlatformResponse>;
}

/** A caller for one platform and connection. */
export function caller(platform: string, base: string | undefined, creds: Credentials | undefined, signal: AbortSignal): Caller {
  const once = async (req: PlatformRequest, token: string | undefined): Promise<PlatformResponse> => {
    const headers: Record<string, string> = { ...req.headers };
    let url = req.url;
    if (token && req.tokenParam) {
      const u = new URL(url);
      u.searchParams.set(req.tokenParam, token);
      url = u.href;
    } else if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(rebase(url, base), {
      method: req.method,
      headers,
      body: req.body as RequestInit['body'],
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      // fetch turns every 3xx into an error under 'error': a 3xx the request accepts is read as is.
      redirect: req.accept?.some((s) => s >= 300 && s < 400) ? 'manual' : 'error',
    }).catch((err: Error) => {
      if (signal.aborted) throw err;
      throw new PlatformError(`${platform} could not be reached: ${err.message}`, 0, true);
    });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return {
    async call(req) {
      const auth = req.auth !== false && creds;
      let token = auth ? await creds.accessToken() : undefined;
      let res = await once(req, token);
      if ((res.status === 401 || graphTokenRejected(res.json)) && auth) {
        token = await creds.refreshAfter401(token!);
        res = await once(req, token);
      }
      if ((res.status >= 200 && res.status < 300) || req.accept?.includes(res.status)) return res;
      const { message, code } = errorText(res.json, res.text);
      const path = new URL(req.url).pathname;
      const retryable = res.status === 429 || res.status >= 500 || graphRetryable(res.json);
      throw new PlatformError(
        `${platform} answered ${res.status} to ${req.method} ${path}: ${message}`,
        res.status,
        retryable,
        retryable ? retryAfter(res.headers) : undefined,
        code,
      );
    },
  };
}

/** One target's work as an adapter sees it. */
export interface PublishTask {
  account: SocialAccountRow;
  caption: string;
  media: MediaRow[];
  options: Record<string, unknown>;
  /** The resume point saved by earlier attempts. */
  state: Record<string, any>;
  /** Saves (merges) the resume point: call after each platform step, before the next. */
  save(patch: Record<string, unknown>): Promise<void>;
  api: Caller;
  storage: Storage;
  signal: AbortSignal;
}

export interface SocialAdapter {
  publish(task: PublishTask): Promise<{ id: string; url: string | null }>;
  /** Exchanges a refresh token at the platform's token endpoint; throws RefreshRefused on a 4xx. `account` is the connection (Facebook: whose Page token to read). */
  refresh(
    api: Caller,
    client: { id: string; secret: string | undefined } | undefined,
    refreshToken: string,
    account?: SocialAccountRow,
  ): Promise<RefreshedTokens>;
}

type AppClient = { id: string; secret: string | undefined } | undefined;

/**
 * The OAuth refresh_token grant (RFC 6749 §6) at a platform's token endpoint, with the app's
 * credentials as that platform takes them: `basic` — HTTP Basic with the secret (a public client
 * sends its id in the form), `form` — id and secret in the form (`idField`: TikTok says client_key).
 * A 4xx or an answer without an access token is RefreshRefused (the connection needs reauthorizing).
 */
export async function refreshGrant(
  api: Caller,
  platform: string,
  url: string,
  refreshToken: string,
  client: AppClient,
  auth: 'basic' | 'form',
  idField = 'client_id',
): Promise<RefreshedTokens> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth === 'basic' && client?.secret)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;
  else if (client) {
    form.set(idField, client.id);
    if (auth === 'form' && client.secret) form.set('client_secret', client.secret);
  }
  try {
    const res = await api.call({ method: 'POST', url, headers, body: form.toString(), auth: false });
    const j = res.json;
    if (typeof j?.access_token !== 'string')
      throw new RefreshRefused(`${platform} refused the refresh: ${j?.error_description ?? j?.error ?? 'no access_token in its answer'}`);
    return {
      accessToken: j.access_token,
      refreshToken: typeof j.refresh_token === 'string' ? j.refresh_token : undefined,
      expiresInSeconds: typeof j.expires_in === 'number' ? j.expires_in : undefined,
    };
  } catch (err) {
    if (err instanceof PlatformError && !err.retryable) throw new RefreshRefused(err.message);
    throw err;
  }
}

/** Bytes [start, end] (inclusive) of a stored media file. */
export async function readRange(storage: Storage, key: string, start: number, end: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of storage.read(key, { start, end })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
