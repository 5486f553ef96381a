// The social account pages (the logic is src/services/social/connect.ts), on the same member
// browser session, cookie and protections as the authorization pages (./session.ts):
//   GET  /social/connect/{platform}    sends the signed-in member to the platform's authorization
//                                      page (a state bound to the session; PKCE where supported)
//   GET  /social/callback/{platform}   the platform's redirect: state checked and spent, the code
//                                      exchanged, the account stored; a page for every failure
//   GET/POST /social/connections       the workspace's accounts, Disconnect, sign-in and sign-out
// The callback URL to register at each platform is PUBLIC_BASE_URL + /social/callback/{platform}.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getSignedInMember } from '../services/oauth/members.ts';
import { OAUTH_LIMITS, waitText } from '../services/oauth/oauth-limits.ts';
import { createBrowserSession, csrfToken, safeEqual, switchBrowserSession, type BrowserSession } from '../services/oauth/oauth.ts';
import { disconnectAccount, isSocialPlatform, listAccounts, SOCIAL_PLATFORMS, type SocialPlatform } from '../services/social/accounts.ts';
import {
  authorizeOrigin,
  beginConnect,
  ConnectRefused,
  consumeConnectState,
  finishConnect,
  oauthClientOf,
} from '../services/social/connect.ts';
import { FORM_LIMIT, limited, sendPage, seeOther, type OAuthServer } from './http.ts';
import { socialConnectionsPage, socialErrorPage, socialSignInPage } from './pages.ts';
import { attemptSignIn, currentSession, sameSite, setSessionCookie } from './session.ts';

const CONNECTIONS = '/social/connections';

const LABELS: Record<SocialPlatform, string> = {
  instagram: 'Instagram',
  facebook: 'Facebook Pages',
  tiktok: 'TikTok',
  x: 'X',
  linkedin: 'LinkedIn',
  threads: 'Threads',
  youtube: 'YouTube',
  pinterest: 'Pinterest',
};

const socialCsrf = (s: BrowserSession) => csrfToken(s, 'social-connections');
const queryOf = (req: FastifyRequest) => {
  const q = req.query as Record<string, unknown>;
  return (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
};

/** The request's session, or a new one (limited per address like authorization requests); undefined when a 429 page was sent. */
async function sessionOrNew(server: OAuthServer, req: FastifyRequest, reply: FastifyReply): Promise<BrowserSession | undefined> {
  const session = await currentSession(server, req);
  if (session) return session;
  const decision = await server.limiter(OAUTH_LIMITS.authorize).consume(req.ip);
  if (!decision.allowed) {
    limited(reply, decision.retryAfterSeconds);
    sendPage(
      reply,
      429,
      socialErrorPage(
        'Too many requests',
        `Too many sign-in pages opened from this address; retry in ${waitText(decision.retryAfterSeconds)}.`,
      ),
    );
    return undefined;
  }
  const fresh = await createBrowserSession(server.ctx.db, server.cfg);
  setSessionCookie(server, reply, fresh);
  return fresh;
}

/**
 * The sign-in page; when it goes on to connecting a platform, its CSP form-action also names that
 * platform's authorization origin (browsers apply form-action to the redirects after a submit).
 */
function sendSignIn(
  server: OAuthServer,
  reply: FastifyReply,
  session: BrowserSession,
  o: { connect?: SocialPlatform; email?: string; error?: string; status?: number },
) {
  const targets = o.connect && oauthClientOf(server.ctx, o.connect) ? [authorizeOrigin(server.ctx, o.connect)] : [];
  return sendPage(
    reply,
    o.status ?? 200,
    socialSignInPage({ csrf: socialCsrf(session), connect: o.connect, email: o.email, error: o.error }),
    targets,
  );
}

async function renderConnections(
  server: OAuthServer,
  reply: FastifyReply,
  session: BrowserSession,
  opts: { connect?: SocialPlatform; notice?: string; error?: string; status?: number } = {},
) {
  const { ctx } = server;
  const member = session.memberId ? await getSignedInMember(ctx.db, session.memberId) : undefined;
  if (!member) return sendSignIn(server, reply, session, { connect: opts.connect, error: opts.error, status: opts.status });
  const accounts = await listAccounts(ctx.db, member.orgId);
  return sendPage(
    reply,
    opts.status ?? 200,
    socialConnectionsPage({
      csrf: socialCsrf(session),
      memberEmail: member.email,
      workspace: member.orgName,
      accounts: accounts.map((a) => ({
        id: a.id,
        platform: a.platform,
        handle: a.handle,
        displayName: a.displayName,
        status: a.status,
        statusReason: a.statusReason,
        connectedAt: a.createdAt.toISOString(),
      })),
      platforms: SOCIAL_PLATFORMS.map((p) => ({ platform: p, label: LABELS[p], configured: !!oauthClientOf(ctx, p) })),
      notice: opts.notice,
      error: opts.error,
    }),
  );
}

async function showConnections(server: OAuthServer, req: FastifyRequest, reply: FastifyReply) {
  const session = await sessionOrNew(server, req, reply);
  if (!session) return reply;
  const q = queryOf(req);
  const connect = q('connect');
  let notice: string | undefined;
  const connected = q('connected');
  const disconnected = q('disconnected');
  if (connected && isSocialPlatform(connected))
    notice = `Connected your ${LABELS[connected]} account. The workspace can publish to it now.`;
  if (disconnected && isSocialPlatform(disconnected)) notice = `Disconnected the ${LABELS[disconnected]} account.`;
  return renderConnections(server, reply, session, { connect: connect && isSocialPlatform(connect) ? connect : undefined, notice });
}

async function actOnConnections(server: OAuthServer, req: FastifyRequest, reply: FastifyReply) {
  const { ctx, cfg } = server;
  if (!sameSite(server, req, reply)) return reply;
  if (!(req.body instanceof URLSearchParams))
    return sendPage(reply, 400, socialErrorPage('Request refused', 'The form was not sent as a form.'));
  const form = req.body;
  const session = await currentSession(server, req);
  if (!session) return seeOther(reply, CONNECTIONS);
  if (!safeEqual(form.get('csrf') ?? '', socialCsrf(session))) {
    return sendPage(reply, 403, socialErrorPage('Request refused', 'The form was out of date. Go back, reload the page and try again.'));
  }
  const action = form.get('action');
  if (action === 'sign-in') {
    const email = (form.get('email') ?? '').trim();
    const password = form.get('password') ?? '';
    const connect = form.get('connect') ?? '';
    const next = isSocialPlatform(connect) ? connect : undefined;
    const again = (message: string, status = 400) => sendSignIn(server, reply, session, { connect: next, email, error: message, status });
    if (!email || !password) return again(!email ? 'Enter your email address.' : 'Enter your password.');
    const attempt = await attemptSignIn(server, req, reply, email, password);
    if ('refused' in attempt) return again(attempt.refused, attempt.status);
    setSessionCookie(server, reply, await switchBrowserSession(ctx.db, cfg, session, attempt.member.id));
    return seeOther(reply, next ? `/social/connect/${next}` : CONNECTIONS);
  }
  if (action === 'sign-out') {
    setSessionCookie(server, reply, await switchBrowserSession(ctx.db, cfg, session, null));
    return seeOther(reply, CONNECTIONS);
  }
  if (action === 'disconnect') {
    const member = session.memberId ? await getSignedInMember(ctx.db, session.memberId) : undefined;
    if (!member) return renderConnections(server, reply, session, { status: 400, error: 'Sign in first.' });
    const id = form.get('account') ?? '';
    // Only an account of the member's own workspace.
    const account = (await listAccounts(ctx.db, member.orgId)).find((a) => a.id === id);
    const gone = account ? await disconnectAccount(ctx.db, account.id) : undefined;
    if (!gone)
      return renderConnections(server, reply, session, {
        status: 404,
        error: 'That account is not connected to your workspace (it may be disconnected already).',
      });
    ctx.log.info({ org: member.orgId, member: member.id, socialAccount: gone.id, platform: gone.platform }, 'social account disconnected');
    return seeOther(reply, `${CONNECTIONS}?disconnected=${gone.platform}`);
  }
  return renderConnections(server, reply, session, { status: 400, error: 'Unknown action.' });
}

async function startConnect(server: OAuthServer, req: FastifyRequest, reply: FastifyReply, platform: SocialPlatform) {
  const { ctx } = server;
  if (!oauthClientOf(ctx, platform)) {
    return sendPage(
      reply,
      409,
      socialErrorPage(
        `${LABELS[platform]} is not configured`,
        `Connecting ${LABELS[platform]} accounts is not configured on this server (the operator sets its app's client id). No account was connected.`,
      ),
    );
  }
  const session = await sessionOrNew(server, req, reply);
  if (!session) return reply;
  const member = session.memberId ? await getSignedInMember(ctx.db, session.memberId) : undefined;
  if (!member) return seeOther(reply, `${CONNECTIONS}?connect=${platform}`);
  // Each attempt stores a pending state: limited per address like authorization requests.
  const decision = await server.limiter(OAUTH_LIMITS.authorize).consume(req.ip);
  if (!decision.allowed) {
    limited(reply, decision.retryAfterSeconds);
    return sendPage(
      reply,
      429,
      socialErrorPage(
        'Too many requests',
        `Too many connection attempts from this address; retry in ${waitText(decision.retryAfterSeconds)}.`,
      ),
    );
  }
  const url = await beginConnect(ctx, { sessionId: session.id, memberId: member.id, orgId: member.orgId, platform });
  return reply.code(303).header('cache-control', 'no-store').header('location', url).send();
}

async function callback(server: OAuthServer, req: FastifyRequest, reply: FastifyReply, platform: SocialPlatform) {
  const { ctx } = server;
  const q = queryOf(req);
  const label = LABELS[platform];
  const refuse = (status: number, title: string, message: string) => sendPage(reply, status, socialErrorPage(title, message));
  const session = await currentSession(server, req);
  const attempt = session ? await consumeConnectState(ctx, { sessionId: session.id, platform, state: q('state') }) : undefined;
  if (!session || !attempt || attempt.memberId !== session.memberId) {
    return refuse(
      400,
      'This connection link cannot be used',
      `The ${label} connection was already completed, has expired, or was started in another browser or by someone else. No account was connected; start again from the social accounts page.`,
    );
  }
  const error = q('error');
  if (error) {
    const description = q('error_description');
    if (error === 'access_denied' || error === 'user_denied' || error === 'user_cancelled_authorize') {
      return refuse(400, `${label} access was not allowed`, `You did not allow access at ${label}, so no account was connected.`);
    }
    return refuse(
      400,
      `${label} refused the connection`,
      `${label} answered ${error}${description ? `: ${description.slice(0, 300)}` : ''}. No account was connected.`,
    );
  }
  const code = q('code');
  if (!code) return refuse(400, `${label} sent no code`, `${label} returned without an authorization code. No account was connected.`);
  try {
    const rows = await finishConnect(ctx, attempt, code);
    ctx.log.info(
      { org: attempt.orgId, member: attempt.memberId, platform, socialAccounts: rows.map((r) => r.id) },
      'social account connected',
    );
  } catch (err) {
    if (err instanceof ConnectRefused)
      return refuse(502, `${label} connection failed`, `${err.message.replace(/\.$/, '')}. No account was connected; try again.`);
    throw err;
  }
  return seeOther(reply, `${CONNECTIONS}?connected=${platform}`);
}

export function registerSocialConnect(app: FastifyInstance, server: OAuthServer): void {
  const platformOf = (req: FastifyRequest, reply: FastifyReply): SocialPlatform | undefined => {
    const p = (req.params as { platform: string }).platform;
    if (isSocialPlatform(p)) return p;
    sendPage(
      reply,
      404,
      socialErrorPage('Unknown platform', `There is no platform “${p.slice(0, 40)}”. Choose one of ${SOCIAL_PLATFORMS.join(', ')}.`),
    );
    return undefined;
  };
  app.get('/social/connect/:platform', async (req, reply) => {
    const p = platformOf(req, reply);
    return p ? startConnect(server, req, reply, p) : reply;
  });
  app.get('/social/callback/:platform', async (req, reply) => {
    const p = platformOf(req, reply);
    return p ? callback(server, req, reply, p) : reply;
  });
  app.get(CONNECTIONS, async (req, reply) => showConnections(server, req, reply));
  app.post(CONNECTIONS, { bodyLimit: FORM_LIMIT }, async (req, reply) => actOnConnections(server, req, reply));
}
