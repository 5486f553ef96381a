// GET/POST /oauth/connections: a member sees the apps they connected (their grants not revoked)
// and disconnects any of them (the grant and its tokens are revoked; /mcp refuses them at once).
// Same browser session, cookie and protections as the authorization pages (./session.ts); the
// form token is bound to the session. The page signs in and out by itself (action=sign-in,
// sign-out, disconnect).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getSignedInMember } from '../services/oauth/members.ts';
import { OAUTH_LIMITS, waitText } from '../services/oauth/oauth-limits.ts';
import {
  createBrowserSession,
  csrfToken,
  listGrants,
  revokeGrantById,
  safeEqual,
  switchBrowserSession,
  type BrowserSession,
} from '../services/oauth/oauth.ts';
import { FORM_LIMIT, limited, sendPage, seeOther, type OAuthServer } from './http.ts';
import { connectionsPage, connectionsSignInPage, errorPage } from './pages.ts';
import { attemptSignIn, currentSession, sameSite, setSessionCookie } from './session.ts';

const CONNECTIONS = '/oauth/connections';

const connectionsCsrf = (s: BrowserSession) => csrfToken(s, 'connections');

async function renderConnections(
  { ctx }: OAuthServer,
  reply: FastifyReply,
  session: BrowserSession,
  opts: { disconnected?: string; error?: string; status?: number } = {},
) {
  const member = session.memberId ? await getSignedInMember(ctx.db, session.memberId) : undefined;
  if (!member) return sendPage(reply, opts.status ?? 200, connectionsSignInPage({ csrf: connectionsCsrf(session), error: opts.error }));
  const grants = await listGrants(ctx.db, { memberId: member.id });
  // After a disconnection (?disconnected=<grant id>): the name of that app, if it was this member's.
  const gone = opts.disconnected
    ? (await listGrants(ctx.db, { memberId: member.id, revoked: true })).find((g) => g.id === opts.disconnected)
    : undefined;
  const notice = gone ? `Disconnected ${gone.client_name ?? 'the app'}. It can no longer use your workspace.` : undefined;
  return sendPage(
    reply,
    opts.status ?? 200,
    connectionsPage({
      csrf: connectionsCsrf(session),
      memberEmail: member.email,
      workspace: member.orgName,
      connections: grants.map((g) => ({
        grantId: g.id,
        name: g.client_name,
        scopes: g.scopes,
        connectedAt: g.created_at,
        lastUsedAt: g.last_token_at,
      })),
      notice,
      error: opts.error,
    }),
  );
}

async function showConnections(server: OAuthServer, req: FastifyRequest, reply: FastifyReply) {
  let session = await currentSession(server, req);
  if (!session) {
    // A session row per new browser: limited per address like authorization requests.
    const decision = await server.limiter(OAUTH_LIMITS.authorize).consume(req.ip);
    if (!decision.allowed) {
      limited(reply, decision.retryAfterSeconds);
      return sendPage(
        reply,
        429,
        errorPage(
          'Too many requests',
          `Too many sign-in pages opened from this address; retry in ${waitText(decision.retryAfterSeconds)}.`,
        ),
      );
    }
    session = await createBrowserSession(server.ctx.db, server.cfg);
    setSessionCookie(server, reply, session);
  }
  return renderConnections(server, reply, session, { disconnected: (req.query as Record<string, string | undefined>).disconnected });
}

async function actOnConnections(server: OAuthServer, req: FastifyRequest, reply: FastifyReply) {
  const { ctx, cfg } = server;
  if (!sameSite(server, req, reply)) return reply;
  if (!(req.body instanceof URLSearchParams)) return sendPage(reply, 400, errorPage('Request refused', 'The form was not sent as a form.'));
  const form = req.body;
  const session = await currentSession(server, req);
  // No session (expired, or cookies refused): start over on the page.
  if (!session) return seeOther(reply, CONNECTIONS);
  if (!safeEqual(form.get('csrf') ?? '', connectionsCsrf(session))) {
    return sendPage(reply, 403, errorPage('Request refused', 'The form was out of date. Go back, reload the page and try again.'));
  }
  const action = form.get('action');
  if (action === 'sign-in') {
    const email = (form.get('email') ?? '').trim();
    const password = form.get('password') ?? '';
    const again = (message: string, status = 400) =>
      sendPage(reply, status, connectionsSignInPage({ csrf: connectionsCsrf(session), email, error: message }));
    if (!email || !password) return again(!email ? 'Enter your email address.' : 'Enter your password.');
    const attempt = await attemptSignIn(server, req, reply, email, password);
    if ('refused' in attempt) return again(attempt.refused, attempt.status);
    setSessionCookie(server, reply, await switchBrowserSession(ctx.db, cfg, session, attempt.member.id));
    return seeOther(reply, CONNECTIONS);
  }
  if (action === 'sign-out') {
    setSessionCookie(server, reply, await switchBrowserSession(ctx.db, cfg, session, null));
    return seeOther(reply, CONNECTIONS);
  }
  if (action === 'disconnect') {
    if (!session.memberId) return renderConnections(server, reply, session, { status: 400, error: 'Sign in first.' });
    const grantId = form.get('grant') ?? '';
    const grant = (await listGrants(ctx.db, { memberId: session.memberId })).find((g) => g.id === grantId);
    if (!grant || !(await revokeGrantById(ctx.db, grant.id, 'revoked_by_member', session.memberId))) {
      return renderConnections(server, reply, session, {
        status: 404,
        error: 'That app is not connected with your account (it may be disconnected already).',
      });
    }
    return seeOther(reply, `${CONNECTIONS}?disconnected=${grant.id}`);
  }
  return renderConnections(server, reply, session, { status: 400, error: 'Unknown action.' });
}

export function registerConnections(app: FastifyInstance, server: OAuthServer): void {
  app.get(CONNECTIONS, async (req, reply) => showConnections(server, req, reply));
  app.post(CONNECTIONS, { bodyLimit: FORM_LIMIT }, async (req, reply) => actOnConnections(server, req, reply));
}
