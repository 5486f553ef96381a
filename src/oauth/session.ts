// The member's browser session, shared by the authorization pages, the connected-apps page and
// the social connection pages (/social/…): a cookie (HttpOnly, SameSite=Lax, Path=/, Secure on
// https; a cookie of the former Path=/oauth is cleared whenever it is set), the same-site check every form
// POST passes, and password sign-in with failed attempts limited per account and per address.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { normalizeEmail, verifyMemberPassword, type SignedInMember } from '../services/oauth/members.ts';
import { OAUTH_LIMITS, waitText } from '../services/oauth/oauth-limits.ts';
import { findBrowserSession, type BrowserSession } from '../services/oauth/oauth.ts';
import { limited, readCookie, sendPage, type OAuthServer } from './http.ts';
import { errorPage } from './pages.ts';

const COOKIE = 'mapi_oauth_session';

export const setSessionCookie = ({ cfg, secure }: OAuthServer, reply: FastifyReply, s: BrowserSession) =>
  reply.header('set-cookie', [
    `${COOKIE}=${s.token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${cfg.sessionTtlSeconds}${secure ? '; Secure' : ''}`,
    // The cookie of earlier versions (Path=/oauth) would shadow this one on the /oauth pages.
    `${COOKIE}=; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`,
  ]);

/** The browser session the request's cookie names, if it is still valid. */
export const currentSession = ({ ctx }: OAuthServer, req: FastifyRequest) => findBrowserSession(ctx.db, readCookie(req, COOKIE));

/** Whether a form POST comes from this site's own pages (else a 403 page was sent). */
export function sameSite({ origin }: OAuthServer, req: FastifyRequest, reply: FastifyReply): boolean {
  const site = req.headers['sec-fetch-site'];
  const from = req.headers.origin;
  if ((site !== undefined && site !== 'same-origin' && site !== 'none') || (from !== undefined && from !== origin)) {
    sendPage(reply, 403, errorPage('Request refused', 'This form can only be sent from this site’s own pages.'));
    return false;
  }
  return true;
}

/**
 * Checks a member's password, with failed sign-ins limited per account and per address
 * (src/services/oauth/oauth-limits.ts): the member, or the message and status to show (Retry-After set).
 */
export async function attemptSignIn(
  { ctx, limiter }: OAuthServer,
  req: FastifyRequest,
  reply: FastifyReply,
  email: string,
  password: string,
): Promise<{ member: SignedInMember } | { refused: string; status: number }> {
  const account = normalizeEmail(email);
  const accountLimit = limiter(OAUTH_LIMITS.signInAccount);
  const ipLimit = limiter(OAUTH_LIMITS.signInIp);
  const checks = await Promise.all([accountLimit.peek(account), ipLimit.peek(req.ip)]);
  const blocked = checks.find((d) => !d.allowed);
  if (blocked) {
    limited(reply, blocked.retryAfterSeconds);
    return { refused: `Too many failed sign-in attempts. Wait ${waitText(blocked.retryAfterSeconds)}, then try again.`, status: 429 };
  }
  const member = await verifyMemberPassword(ctx.db, email, password);
  if (!member) {
    await Promise.all([accountLimit.consume(account), ipLimit.consume(req.ip)]);
    return { refused: 'The email or password is incorrect. Check both and try again.', status: 400 };
  }
  await accountLimit.reset(account);
  return { member };
}
