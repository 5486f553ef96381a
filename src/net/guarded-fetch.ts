// The one client through which the server fetches user-supplied URLs. Every connection goes
// through request-filtering-agent, which checks the address actually connected to (after DNS,
// so rebinding does not help) and refuses private, loopback, link-local and reserved ranges;
// the lookup it connects with applies our address policy (./address-policy.ts) too, the same
// policy `precheck` applies to literal addresses at request time. Redirects are followed by
// hand, each hop checked again. Every fetch is bounded: a size cap (`maxBytes`, default
// OUTBOUND_FETCH_MAX_BYTES), a total deadline over the whole exchange — DNS, connect, TLS, every
// redirect hop and the body — (`timeoutMs`, default OUTBOUND_FETCH_TIMEOUT_MS) besides the socket
// idle timeout, and an AbortSignal (the caller hung up): on either the socket is destroyed at
// once and a FetchRefused ('timeout' or 'aborted') is thrown.
// The same client POSTs webhook deliveries (`post`): same policy, same bounds, no redirects.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { addressRefusal, isAddressRefusal } from './address-policy.ts';

export class FetchRefused extends Error {
  readonly reason: 'scheme' | 'address' | 'status' | 'too_large' | 'timeout' | 'aborted' | 'network' | 'redirects';
  readonly retryable: boolean;
  /** The HTTP status answered (reason 'status' only). */
  readonly status: number | undefined;
  constructor(reason: FetchRefused['reason'], message: string, retryable = false, status?: number) {
    super(message);
    this.name = 'FetchRefused';
    this.reason = reason;
    this.retryable = retryable;
    this.status = status;
  }
}

export interface GuardedFetchOptions {
  /** Refuse plain http (editor media must be HTTPS). */
  httpsOnly?: boolean;
  /** Size cap of the body; default: the fetcher's (OUTBOUND_FETCH_MAX_BYTES). */
  maxBytes?: number;
  /** Total deadline of the whole fetch (every hop and the body); default: the fetcher's (OUTBOUND_FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Aborting it (the caller went away) destroys the request at once. */
  signal?: AbortSignal;
  /** A POST of this body instead of a GET (webhook deliveries); redirects are then not followed. */
  post?: { body: string | Buffer; headers: Record<string, string> };
  /** The Accept header of a GET (default any type). */
  accept?: string;
}

export interface GuardedFetcherOptions {
  /** IPs reachable although the policy refuses them (OUTBOUND_ALLOW_IPS; tests only). */
  allowIps?: string[];
  /** Default total deadline of one fetch. */
  timeoutMs?: number;
  /** Default size cap of one fetch. */
  maxBytes?: number;
  /** Socket idle timeout (no byte for this long); never longer than the deadline. */
  idleTimeoutMs?: number;
  /** The resolver connections use (default dns.lookup); every address it answers passes the policy. */
  lookup?: LookupFunction;
}

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_FETCH_MAX_BYTES = 25 * 1024 * 1024;
const DEFAULT_IDLE_TIMEOUT_MS = 15_000;

export interface FetchedBody {
  url: string;
  status: number;
  contentType: string | undefined;
  /** The response's headers (e.g. Cache-Control for a caller that caches). */
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface GuardedFetcher {
  fetch(url: string, opts?: GuardedFetchOptions): Promise<FetchedBody>;
  /** Cheap pre-check at request time: scheme and literal addresses (the connection check is the real one). */
  precheck(url: string, opts?: { httpsOnly?: boolean }): string | undefined;
}

const PRIVATE_NAME = /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i;
const ADDRESS_REFUSED = 'points to a private, loopback, link-local or reserved address';

/** `inner`, with every address it answers checked against the policy (connection time). */
function policyLookup(inner: LookupFunction, allowIps: string[]): LookupFunction {
  return (hostname, options, callback) => {
    inner(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const answers = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      for (const a of answers) {
        const why = addressRefusal(a.address, allowIps);
        if (why) return callback(Object.assign(new Error(`${hostname} ${why}`), { code: 'EADDRREFUSED' }), address, family);
      }
      callback(null, address, family);
    });
  };
}

/** What every fetch of one fetcher shares: its defaults, the addresses allowed, the connection agents and lookup. */
interface FetcherState {
  allowIps: string[];
  defaults: { timeoutMs: number; maxBytes: number; idleTimeoutMs: number };
  lookup: LookupFunction;
  agents: Record<'http:' | 'https:', http.Agent>;
}

interface HopOptions {
  maxBytes: number;
  idleTimeoutMs: number;
  signal: AbortSignal;
  post?: GuardedFetchOptions['post'];
  accept?: string;
}

type FollowOptions = Required<Omit<GuardedFetchOptions, 'signal' | 'post' | 'accept'>> & HopOptions;

interface HopResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export function createGuardedFetcher(config: GuardedFetcherOptions = {}): GuardedFetcher {
  const allowIps = config.allowIps ?? [];
  const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false, allowIPAddressList: allowIps, denyIPAddressList: [] };
  const state: FetcherState = {
    allowIps,
    defaults: {
      timeoutMs: config.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
      maxBytes: config.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
      idleTimeoutMs: config.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    },
    lookup: policyLookup(config.lookup ?? (dns.lookup as LookupFunction), allowIps),
    agents: {
      'http:': new RequestFilteringHttpAgent({ keepAlive: true, ...filter }),
      'https:': new RequestFilteringHttpsAgent({ keepAlive: true, ...filter }),
    },
  };
  return {
    precheck: (raw, opts) => problemOf(allowIps, raw, opts)?.message,
    fetch: (raw, options) => boundedFetch(state, raw, options),
  };
}

/** What is wrong with `raw` before any connection: scheme, credentials, private names and literal addresses. */
function problemOf(
  allowIps: string[],
  raw: string,
  opts: { httpsOnly?: boolean } = {},
): { reason: 'scheme' | 'address'; message: string } | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { reason: 'scheme', message: 'is not a valid URL' };
  }
  if (u.protocol !== 'https:' && (opts.httpsOnly || u.protocol !== 'http:')) {
    return { reason: 'scheme', message: opts.httpsOnly ? 'must be an https:// URL' : 'must be an http(s) URL' };
  }
  if (u.username || u.password) return { reason: 'scheme', message: 'must not contain credentials' };
  // The WHATWG parser has normalised IPv4 spellings (0x7f.1, 2130706433, 0177.0.0.1, a trailing
  // dot) to dotted decimal and IPv6 to its canonical form in brackets.
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (allowIps.includes(host)) return undefined;
  if (PRIVATE_NAME.test(host)) return { reason: 'address', message: 'points to a private host' };
  if (/^[\d.]+$/.test(host) || host.includes(':')) {
    const why = addressRefusal(host, allowIps);
    if (why) return { reason: 'address', message: why };
  }
  return undefined;
}

/** One fetch under one signal for the whole exchange: the deadline or the caller's abort, whichever comes first. */
async function boundedFetch(state: FetcherState, raw: string, options: GuardedFetchOptions = {}): Promise<FetchedBody> {
  const timeoutMs = options.timeoutMs ?? state.defaults.timeoutMs;
  const bounded = new AbortController();
  const timer = setTimeout(() => bounded.abort(new FetchRefused('timeout', `did not finish within ${timeoutMs} ms`, true)), timeoutMs);
  const outer = options.signal;
  const onAbort = () => bounded.abort(new FetchRefused('aborted', 'was abandoned: the request that asked for it went away', true));
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await follow(state, raw, {
      httpsOnly: options.httpsOnly ?? false,
      maxBytes: options.maxBytes ?? state.defaults.maxBytes,
      timeoutMs,
      maxRedirects: options.post ? 0 : (options.maxRedirects ?? 3),
      idleTimeoutMs: Math.min(state.defaults.idleTimeoutMs, timeoutMs),
      signal: bounded.signal,
      post: options.post,
      accept: options.accept,
    });
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

/** Fetches `raw`, following up to `maxRedirects` redirects, every hop checked again. */
async function follow(state: FetcherState, raw: string, opts: FollowOptions): Promise<FetchedBody> {
  let current = raw;
  for (let hop = 0; hop <= opts.maxRedirects; hop++) {
    const problem = problemOf(state.allowIps, current, opts);
    if (problem) throw new FetchRefused(problem.reason, problem.message);
    const url = new URL(current);
    const res = await once(state, url, opts);
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      current = new URL(res.headers.location, url).toString();
      continue;
    }
    if (res.status < 200 || res.status >= 300) {
      throw new FetchRefused('status', `answered HTTP ${res.status}`, res.status >= 500 || res.status === 429, res.status);
    }
    return {
      url: current,
      status: res.status,
      contentType: res.headers['content-type']?.split(';')[0].trim().toLowerCase(),
      headers: res.headers,
      body: res.body,
    };
  }
  throw new FetchRefused('redirects', `redirected more than ${opts.maxRedirects} times`);
}

/** The request headers of a GET (reference fetch) or a POST (webhook delivery). */
function hopHeaders(post: HopOptions['post'], accept = '*/*'): http.OutgoingHttpHeaders {
  return post
    ? {
        'user-agent': 'media-api/1.0 (+webhook)',
        accept: '*/*',
        'content-length': String(Buffer.byteLength(post.body)),
        ...post.headers,
      }
    : { 'user-agent': 'media-api/1.0 (+reference fetch)', accept };
}

/** One request and its response (a redirect's body is not read); destroyed at once when the signal aborts. */
function once(state: FetcherState, url: URL, opts: HopOptions): Promise<HopResponse> {
  return new Promise((resolve, reject) => {
    if (opts.signal.aborted) return reject(opts.signal.reason);
    const lib = url.protocol === 'https:' ? https : http;
    let res: http.IncomingMessage | undefined;
    const stop = () => {
      reject(opts.signal.reason);
      res?.destroy();
      req.destroy();
    };
    const done = () => opts.signal.removeEventListener('abort', stop);
    const settle = {
      resolve: (hop: HopResponse) => {
        done();
        resolve(hop);
      },
      fail: (err: FetchRefused) => {
        done();
        reject(err);
      },
    };
    const req = lib.request(
      url,
      {
        method: opts.post ? 'POST' : 'GET',
        agent: state.agents[url.protocol as 'http:' | 'https:'],
        lookup: state.lookup,
        timeout: opts.idleTimeoutMs,
        headers: hopHeaders(opts.post, opts.accept),
      },
      (response) => {
        res = response;
        readResponse(response, opts.maxBytes, settle);
      },
    );
    opts.signal.addEventListener('abort', stop, { once: true });
    req.on('timeout', () => req.destroy(new FetchRefused('timeout', `sent nothing for ${opts.idleTimeoutMs} ms`, true)));
    req.on('error', (err) => {
      if (err instanceof FetchRefused) return settle.fail(err);
      // The policy's refusal (our lookup) or request-filtering-agent's names the address.
      if (isAddressRefusal(err.message)) return settle.fail(new FetchRefused('address', ADDRESS_REFUSED));
      settle.fail(new FetchRefused('network', err.message, true));
    });
    req.end(opts.post?.body);
  });
}

/** Reads a response: a redirect settles at once (its body discarded), any other status with its body up to `maxBytes`. */
function readResponse(
  response: http.IncomingMessage,
  maxBytes: number,
  settle: { resolve(hop: HopResponse): void; fail(err: FetchRefused): void },
): void {
  const status = response.statusCode ?? 0;
  if (status >= 300 && status < 400) {
    response.resume();
    settle.resolve({ status, headers: response.headers, body: Buffer.alloc(0) });
    return;
  }
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.destroy();
    settle.fail(new FetchRefused('too_large', `is larger than ${maxBytes} bytes`));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (c: Buffer) => {
    size += c.length;
    if (size > maxBytes) {
      response.destroy();
      settle.fail(new FetchRefused('too_large', `is larger than ${maxBytes} bytes`));
    } else chunks.push(c);
  });
  response.on('end', () => settle.resolve({ status, headers: response.headers, body: Buffer.concat(chunks) }));
  response.on('error', (err) => settle.fail(err instanceof FetchRefused ? err : new FetchRefused('network', err.message, true)));
  response.on('close', () => {
    if (!response.complete) settle.fail(new FetchRefused('network', 'closed the connection before the body was complete', true));
  });
}
