// The one client through which the server fetches user-supplied URLs. Every connection goes
// through request-filtering-agent, which checks the address actually connected to (after DNS,
// so rebinding does not help) and refuses private, loopback, link-local and reserved ranges.
// Redirects are followed by hand, each hop checked again; size and time are bounded.
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export class FetchRefused extends Error {
  readonly reason: 'scheme' | 'address' | 'status' | 'too_large' | 'timeout' | 'network' | 'redirects';
  readonly retryable: boolean;
  constructor(reason: FetchRefused['reason'], message: string, retryable = false) {
    super(message);
    this.name = 'FetchRefused';
    this.reason = reason;
    this.retryable = retryable;
  }
}

export interface GuardedFetchOptions {
  /** Refuse plain http (editor media must be HTTPS). */
  httpsOnly?: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface FetchedBody {
  url: string;
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

export interface GuardedFetcher {
  fetch(url: string, opts?: GuardedFetchOptions): Promise<FetchedBody>;
  /** Cheap pre-check at request time: scheme and literal addresses (the connection check is the real one). */
  precheck(url: string, opts?: { httpsOnly?: boolean }): string | undefined;
}

const PRIVATE_NAME = /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i;

export function createGuardedFetcher(allowIps: string[] = []): GuardedFetcher {
  const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false, allowIPAddressList: allowIps, denyIPAddressList: [] };
  const agents = {
    'http:': new RequestFilteringHttpAgent({ keepAlive: true, ...filter }),
    'https:': new RequestFilteringHttpsAgent({ keepAlive: true, ...filter }),
  };

  const precheck: GuardedFetcher['precheck'] = (raw, opts = {}) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return 'is not a valid URL';
    }
    if (u.protocol !== 'https:' && (opts.httpsOnly || u.protocol !== 'http:')) {
      return opts.httpsOnly ? 'must be an https:// URL' : 'must be an http(s) URL';
    }
    if (u.username || u.password) return 'must not contain credentials';
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (allowIps.includes(host)) return undefined;
    if (PRIVATE_NAME.test(host)) return 'points to a private host';
    if (/^[\d.]+$/.test(host) || host.includes(':')) {
      // A literal address: refuse the ranges the agent would refuse at connect time.
      if (/^(0|10|127)\./.test(host) || /^169\.254\./.test(host) || /^192\.168\./.test(host) || /^172\.(1[6-9]|2\d|3[01])\./.test(host)) {
        return 'points to a private, loopback or link-local address';
      }
      if (/^(::1?|f[cd][0-9a-f]{2}:|fe[89ab][0-9a-f]:|::ffff:)/i.test(host)) return 'points to a private, loopback or link-local address';
    }
    return undefined;
  };

  function once(url: URL, opts: Required<GuardedFetchOptions>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const lib = url.protocol === 'https:' ? https : http;
      const req = lib.get(url, { agent: agents[url.protocol as 'http:' | 'https:'], timeout: opts.timeoutMs, headers: { 'user-agent': 'media-api/1.0 (+reference fetch)', accept: '*/*' } }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.resume();
          return resolve({ status, headers: res.headers, body: Buffer.alloc(0) });
        }
        const declared = Number(res.headers['content-length']);
        if (declared > opts.maxBytes) {
          res.destroy();
          return reject(new FetchRefused('too_large', `is larger than ${opts.maxBytes} bytes`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) {
            res.destroy();
            reject(new FetchRefused('too_large', `is larger than ${opts.maxBytes} bytes`));
          } else chunks.push(c);
        });
        res.on('end', () => resolve({ status, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (err) => reject(new FetchRefused('network', err.message, true)));
      });
      req.on('timeout', () => req.destroy(new FetchRefused('timeout', `did not answer within ${opts.timeoutMs} ms`, true)));
      req.on('error', (err) => {
        if (err instanceof FetchRefused) return reject(err);
        // request-filtering-agent's refusal names the address and says why.
        if (/is not allowed|private|reserved|meta/i.test(err.message)) {
          return reject(new FetchRefused('address', 'points to a private, loopback, link-local or reserved address'));
        }
        reject(new FetchRefused('network', err.message, true));
      });
    });
  }

  return {
    precheck,
    async fetch(raw, options = {}) {
      const opts: Required<GuardedFetchOptions> = {
        httpsOnly: options.httpsOnly ?? false,
        maxBytes: options.maxBytes ?? 25 * 1024 * 1024,
        timeoutMs: options.timeoutMs ?? 15_000,
        maxRedirects: options.maxRedirects ?? 3,
      };
      let current = raw;
      for (let hop = 0; hop <= opts.maxRedirects; hop++) {
        const problem = precheck(current, opts);
        if (problem) throw new FetchRefused(/private|loopback|link-local/.test(problem) ? 'address' : 'scheme', problem);
        const url = new URL(current);
        const res = await once(url, opts);
        if (res.status >= 300 && res.status < 400 && res.headers.location) {
          current = new URL(res.headers.location, url).toString();
          continue;
        }
        if (res.status < 200 || res.status >= 300) {
          throw new FetchRefused('status', `answered HTTP ${res.status}`, res.status >= 500 || res.status === 429);
        }
        return { url: current, status: res.status, contentType: res.headers['content-type']?.split(';')[0].trim().toLowerCase(), body: res.body };
      }
      throw new FetchRefused('redirects', `redirected more than ${opts.maxRedirects} times`);
    },
  };
}
