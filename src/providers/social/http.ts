// What every social adapter shares: the platform's fixed hosts (SOCIAL_API_BASE_<PLATFORM>
// replaces scheme and host, keeping the path; these are operator-configured, not user input, so
// they do not go through the user-URL guard), the bearer token with one refresh after a 401, and
// the platform's answers turned into PlatformError (429/5xx retryable, with its Retry-After).
import type { MediaRow } from '../../services/editor/media.ts';
import type { SocialAccountRow } from '../../services/social/accounts.ts';
import type { Credentials, RefreshedTokens } from '../../services/social/connection.ts';
import type { Storage } from '../../storage/index.ts';

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
  return undefined;
}

/** The platform's own words from an error body (X problem details, LinkedIn's message, OAuth error). */
function errorText(json: any, text: string): { message: string; code?: string } {
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
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(rebase(req.url, base), {
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
      if (res.status === 401 && auth) {
        token = await creds.refreshAfter401(token!);
        res = await once(req, token);
      }
      if ((res.status >= 200 && res.status < 300) || req.accept?.includes(res.status)) return res;
      const { message, code } = errorText(res.json, res.text);
      const path = new URL(req.url).pathname;
      const retryable = res.status === 429 || res.status >= 500;
      throw new PlatformError(`${platform} answered ${res.status} to ${req.method} ${path}: ${message}`, res.status, retryable, retryable ? retryAfter(res.headers) : undefined, code);
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
  /** Exchanges a refresh token at the platform's token endpoint; throws RefreshRefused on a 4xx. */
  refresh(api: Caller, client: { id: string; secret: string | undefined } | undefined, refreshToken: string): Promise<RefreshedTokens>;
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
