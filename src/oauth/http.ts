// What the route groups of the authorization server share: its addresses and settings, the form
// body parser, cookies, Basic client credentials, and the three ways it answers (RFC 6749 JSON
// errors at the JSON endpoints, HTML pages with their security headers, 303 redirects).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { mcpUrls } from '../mcp/auth.ts';
import { OAuthError } from '../services/oauth/oauth.ts';

/** Largest form body of the OAuth endpoints and pages, and of a dynamic registration. */
export const FORM_LIMIT = 64 * 1024;

/** The endpoints that answer errors as RFC 6749 JSON; every other OAuth path answers a page. */
export const JSON_ENDPOINTS = new Set(['/oauth/register', '/oauth/token', '/oauth/revoke']);

/** What every route group is registered with. */
export interface OAuthServer {
  ctx: AppContext;
  /** The absolute URLs of the /mcp resource and of this server, from PUBLIC_BASE_URL. */
  urls: ReturnType<typeof mcpUrls>;
  cfg: AppContext['config']['oauth'];
  /** The origin of PUBLIC_BASE_URL: the only Origin a form POST may come from. */
  origin: string;
  /** PUBLIC_BASE_URL is https: cookies are Secure. */
  secure: boolean;
  /** The rate limiter of a policy (src/services/oauth/oauth-limits.ts). */
  limiter(policy: string): AppContext['rateLimiters'][string];
}

export function oauthServer(ctx: AppContext): OAuthServer {
  const urls = mcpUrls(ctx.config.publicBaseUrl);
  return {
    ctx,
    urls,
    cfg: ctx.config.oauth,
    origin: new URL(urls.base).origin,
    secure: urls.base.startsWith('https:'),
    limiter: (policy) => {
      const l = ctx.rateLimiters[policy];
      if (!l) throw new Error(`No rate limiter configured for policy ${policy}`);
      return l;
    },
  };
}

/** application/x-www-form-urlencoded bodies, parsed to URLSearchParams (in the caller's scope). */
export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
    done(null, new URLSearchParams(body as string)),
  );
}

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function sendOAuthError(reply: FastifyReply, err: OAuthError, basicAttempted = false) {
  if (err.error === 'invalid_client' && basicAttempted) reply.header('www-authenticate', 'Basic realm="media-api", charset="UTF-8"');
  return reply
    .code(err.status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(err.toJSON()));
}

export function sendPage(reply: FastifyReply, status: number, html: string, formTargets: string[] = []) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${formTargets.map((t) => ` ${t}`).join('')}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .send(html);
}

/** A refusal for too many requests: 429 with Retry-After (the OAuth error is the caller's). */
export const limited = (reply: FastifyReply, retryAfterSeconds: number) => reply.header('retry-after', String(retryAfterSeconds));

/** The origin (or scheme, for private-use schemes) a consent form redirects to, for CSP form-action. */
export function formTarget(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : u.protocol;
}

export function redirectHost(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.host || `${u.protocol}//`;
}

export function redirectWith(reply: FastifyReply, redirectUri: string, params: Record<string, string | null | undefined>) {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, v);
  return reply.code(303).header('cache-control', 'no-store').header('location', u.toString()).send();
}

/** A 303 to a page of this server. */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply.code(303).header('cache-control', 'no-store').header('location', location).send();

export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401);
  const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  try {
    return { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
  } catch {
    throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401);
  }
}

/** A form body (application/x-www-form-urlencoded); parameters may not repeat (RFC 6749 §3.2). */
export function readForm(req: FastifyRequest, repeatable: string[] = []): URLSearchParams {
  if (!(req.body instanceof URLSearchParams))
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded');
  const form = req.body;
  const repeated = [...new Set(form.keys())].filter((k) => !repeatable.includes(k) && form.getAll(k).length > 1);
  if (repeated.length) throw new OAuthError('invalid_request', `Parameter ${repeated.join(', ')} must not be repeated`);
  return form;
}

export const opt = (form: URLSearchParams, k: string) => form.get(k) ?? undefined;
