// The authorization flow (authorization code + PKCE S256, RFC 8707 resource indicator):
//   GET  /oauth/authorize             checks the request, stores it, sends the browser on to
//   GET/POST /oauth/sign-in            the member's sign-in page, then to
//   GET/POST /oauth/consent            the consent page (allow with the scopes left checked, or deny)
//   POST /oauth/sign-out               back to sign-in with another account
// Before the client and its redirect URI are known, errors are a page (never a redirect); after,
// a redirect with error, error_description, state and iss (RFC 9207).
//
// The pages are bound to the authorization request through the browser session (./session.ts);
// each form carries a synchronizer token (an HMAC of the request id keyed by the session secret)
// and passes the Origin / Sec-Fetch-Site check; the headers forbid framing, caching and script.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.json' with { type: 'json' };
import { SCOPES } from '../services/workspaces/api-keys.ts';
import { getSignedInMember } from '../services/oauth/members.ts';
import { OAUTH_LIMITS, waitText } from '../services/oauth/oauth-limits.ts';
import {
  approveRequest,
  canonicalResource,
  checkScopes,
  clientGrantTypes,
  createAuthorizationRequest,
  createBrowserSession,
  csrfToken,
  denyRequest,
  getAuthorizationRequest,
  getClient,
  matchRedirectUri,
  type OAuthClient,
  OAuthError,
  parseScope,
  PKCE_CHALLENGE,
  redirectUriProblem,
  safeEqual,
  sameResource,
  switchBrowserSession,
  type AuthorizationRequest,
  type BrowserSession,
} from '../services/oauth/oauth.ts';
import { isClientIdUrl, resolveMetadataClient } from '../services/oauth/client-metadata.ts';
import { FORM_LIMIT, formTarget, limited, redirectHost, redirectWith, sendPage, seeOther, type OAuthServer } from './http.ts';
import { consentPage, errorPage, signInPage, type ClientView, type ScopeView } from './pages.ts';
import { attemptSignIn, currentSession, sameSite, setSessionCookie } from './session.ts';

/** What each scope allows, worded in the spec (components.securitySchemes.oauth2). */
const SCOPE_TEXT: Record<string, string> =
  (
    openapi as {
      components?: { securitySchemes?: Record<string, { flows?: { authorizationCode?: { scopes?: Record<string, string> } } }> };
    }
  ).components?.securitySchemes?.oauth2?.flows?.authorizationCode?.scopes ?? {};

/**
 * The client of an authorization request: a registered one, or the client a Client ID Metadata
 * Document describes (fetched unless kept and fresh; a fetch counts as a registration against the
 * per-address limit). A document that cannot be used is `refused`, with the reason to show.
 */
async function findClient(
  { ctx, cfg, limiter }: OAuthServer,
  req: FastifyRequest,
  reply: FastifyReply,
  clientId: string,
): Promise<{ client: OAuthClient | undefined } | { refused: string; status: number }> {
  if (!isClientIdUrl(clientId)) return { client: await getClient(ctx.db, clientId) };
  try {
    const client = await resolveMetadataClient(ctx.db, ctx.fetcher, clientId, {
      timeoutMs: cfg.clientMetadataTimeoutMs,
      beforeFetch: async () => {
        const decision = await limiter(OAUTH_LIMITS.register).consume(req.ip);
        if (decision.allowed) return;
        limited(reply, decision.retryAfterSeconds);
        const wait = waitText(decision.retryAfterSeconds);
        throw new OAuthError('temporarily_unavailable', `Too many new apps from this address; retry in ${wait}`, 429);
      },
    });
    return { client };
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    return { refused: `${err.message} (${err.error}).`, status: err.status };
  }
}

/** GET /oauth/authorize: the checked request is stored, then sign-in (or consent if signed in). */
async function authorize(server: OAuthServer, req: FastifyRequest, reply: FastifyReply) {
  const { ctx, cfg, urls, limiter } = server;
  const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  const repeated = [...new Set(q.keys())].filter((k) => q.getAll(k).length > 1);
  const one = (k: string) => q.get(k) ?? undefined;
  const bad = (message: string, status = 400) => sendPage(reply, status, errorPage('This sign-in link cannot be used', message));

  // Until the client and its redirect URI are established, errors are shown, never redirected.
  const clientId = one('client_id');
  if (!clientId) return bad('The app did not identify itself (client_id is missing).');
  if (repeated.includes('client_id') || repeated.includes('redirect_uri')) return bad('client_id and redirect_uri must not be repeated.');
  const found = await findClient(server, req, reply, clientId);
  if ('refused' in found) return bad(found.refused, found.status);
  const client = found.client;
  if (!client) return bad('This app is not registered with the service (unknown client_id).');
  const redirectUri = one('redirect_uri');
  if (!redirectUri) return bad('The app did not say where to return (redirect_uri is missing).');
  const problem = redirectUriProblem(redirectUri);
  if (problem) return bad(`The return address (redirect_uri) ${problem}.`);
  if (!matchRedirectUri(client, redirectUri)) return bad('The return address (redirect_uri) is not registered for this app.');

  const state = one('state');
  const fail = (error: string, description: string) =>
    redirectWith(reply, redirectUri, {
      error,
      error_description: description,
      state: repeated.includes('state') ? undefined : state,
      iss: urls.issuer,
    });
  if (repeated.length) return fail('invalid_request', `Parameter ${repeated.join(', ')} must not be repeated`);
  const responseType = one('response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  if (!clientGrantTypes(client).includes('authorization_code'))
    return fail('unauthorized_client', 'This client did not register the authorization_code grant');
  const challenge = one('code_challenge');
  if (!challenge) return fail('invalid_request', 'code_challenge is required: PKCE with S256');
  if (one('code_challenge_method') !== 'S256')
    return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  if (!PKCE_CHALLENGE.test(challenge))
    return fail('invalid_request', 'code_challenge must be BASE64URL(SHA256(code_verifier)): 43 characters');
  if (state !== undefined && state.length > 2000) return fail('invalid_request', 'state must be at most 2000 characters');
  let scopes: string[];
  try {
    const requested = parseScope(one('scope')) ?? parseScope(client.metadata.scope as string | undefined) ?? [...SCOPES];
    scopes = checkScopes(requested.length ? requested : [...SCOPES]);
  } catch (err) {
    if (err instanceof OAuthError) return fail(err.error, err.message);
    throw err;
  }
  const resource = one('resource');
  if (resource !== undefined && !sameResource(resource, urls.resource)) {
    return fail('invalid_target', `Unknown resource ${resource}: this server issues tokens for ${urls.resource} only`);
  }

  const decision = await limiter(OAUTH_LIMITS.authorize).consume(req.ip);
  if (!decision.allowed) {
    limited(reply, decision.retryAfterSeconds);
    return fail('temporarily_unavailable', `Too many sign-in requests from this address; retry in ${waitText(decision.retryAfterSeconds)}`);
  }
  let session = await currentSession(server, req);
  if (!session) {
    session = await createBrowserSession(ctx.db, cfg);
    setSessionCookie(server, reply, session);
  }
  const id = await createAuthorizationRequest(ctx.db, cfg, {
    sessionId: session.id,
    clientId: client.id,
    redirectUri,
    scopes,
    state: state ?? null,
    codeChallenge: challenge,
    resource: canonicalResource(urls.resource)!,
  });
  const next = session.memberId ? '/oauth/consent' : '/oauth/sign-in';
  return seeOther(reply, `${next}?request=${id}`);
}

const expired = (reply: FastifyReply) =>
  sendPage(
    reply,
    400,
    errorPage(
      'This sign-in link has expired',
      'The connection request was already answered, has expired, or was opened in another browser.',
    ),
  );

const clientView = (r: AuthorizationRequest): ClientView => ({
  name: r.client.clientName,
  redirectHost: redirectHost(r.redirectUri),
  idHost: r.client.metadataUrl ? new URL(r.client.metadataUrl).host : undefined,
});
const scopeViews = (r: AuthorizationRequest): ScopeView[] => r.scopes.map((s) => ({ scope: s, description: SCOPE_TEXT[s] ?? s }));

/** Session and request of a page request; for POSTs also the same-origin and form-token checks. */
async function pageContext(server: OAuthServer, req: FastifyRequest, reply: FastifyReply, post: boolean) {
  let form: URLSearchParams | undefined;
  if (post) {
    if (!sameSite(server, req, reply)) return undefined;
    if (!(req.body instanceof URLSearchParams)) {
      sendPage(reply, 400, errorPage('Request refused', 'The form was not sent as a form.'));
      return undefined;
    }
    form = req.body;
  }
  const requestId = post ? (form!.get('request') ?? undefined) : ((req.query as Record<string, string | undefined>).request ?? undefined);
  const session = await currentSession(server, req);
  const request = await getAuthorizationRequest(server.ctx.db, requestId, session);
  if (!session || !request) {
    expired(reply);
    return undefined;
  }
  if (post && !safeEqual(form!.get('csrf') ?? '', csrfToken(session, request.id))) {
    sendPage(reply, 403, errorPage('Request refused', 'The form was out of date. Go back, reload the page and try again.'));
    return undefined;
  }
  return { session, request, form: form ?? new URLSearchParams() };
}

async function renderConsent(
  { ctx }: OAuthServer,
  reply: FastifyReply,
  session: BrowserSession,
  request: AuthorizationRequest,
  status = 200,
  error?: string,
  checked?: string[],
) {
  const member = session.memberId ? await getSignedInMember(ctx.db, session.memberId) : undefined;
  if (!member) return reply.code(303).header('location', `/oauth/sign-in?request=${request.id}`).send();
  return sendPage(
    reply,
    status,
    consentPage({
      client: clientView(request),
      requestId: request.id,
      csrf: csrfToken(session, request.id),
      memberEmail: member.email,
      workspace: member.orgName,
      plan: member.plan,
      scopes: scopeViews(request),
      checked,
      error,
    }),
    [formTarget(request.redirectUri)],
  );
}

export function registerAuthorize(app: FastifyInstance, server: OAuthServer): void {
  const { ctx, cfg, urls } = server;

  app.get('/oauth/authorize', async (req, reply) => authorize(server, req, reply));

  app.get('/oauth/sign-in', async (req, reply) => {
    const c = await pageContext(server, req, reply, false);
    if (!c) return reply;
    if (c.session.memberId) return reply.code(303).header('location', `/oauth/consent?request=${c.request.id}`).send();
    return sendPage(
      reply,
      200,
      signInPage({ client: clientView(c.request), requestId: c.request.id, csrf: csrfToken(c.session, c.request.id) }),
    );
  });

  app.post('/oauth/sign-in', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(server, req, reply, true);
    if (!c) return reply;
    const email = (c.form.get('email') ?? '').trim();
    const password = c.form.get('password') ?? '';
    const again = (message: string, status = 400) =>
      sendPage(
        reply,
        status,
        signInPage({
          client: clientView(c.request),
          requestId: c.request.id,
          csrf: csrfToken(c.session, c.request.id),
          email,
          error: message,
        }),
      );
    if (!email || !password) return again(!email ? 'Enter your email address.' : 'Enter your password.');
    const attempt = await attemptSignIn(server, req, reply, email, password);
    if ('refused' in attempt) return again(attempt.refused, attempt.status);
    const member = attempt.member;
    const session = await switchBrowserSession(ctx.db, cfg, c.session, member.id);
    setSessionCookie(server, reply, session);
    return seeOther(reply, `/oauth/consent?request=${c.request.id}`);
  });

  app.get('/oauth/consent', async (req, reply) => {
    const c = await pageContext(server, req, reply, false);
    if (!c) return reply;
    return renderConsent(server, reply, c.session, c.request);
  });

  app.post('/oauth/consent', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(server, req, reply, true);
    if (!c) return reply;
    const member = c.session.memberId ? await getSignedInMember(ctx.db, c.session.memberId) : undefined;
    if (!member) return reply.code(303).header('location', `/oauth/sign-in?request=${c.request.id}`).send();
    const decision = c.form.get('decision');
    const back = { state: c.request.state, iss: urls.issuer };
    if (decision === 'deny') {
      if (!(await denyRequest(ctx.db, c.request.id))) return expired(reply);
      return redirectWith(reply, c.request.redirectUri, {
        error: 'access_denied',
        error_description: 'The workspace member denied access',
        ...back,
      });
    }
    if (decision !== 'approve') return renderConsent(server, reply, c.session, c.request, 400, 'Choose “Allow access” or “Deny”.');
    const chosen = c.form.getAll('scope').filter((s) => c.request.scopes.includes(s));
    if (chosen.length === 0) {
      return renderConsent(server, reply, c.session, c.request, 400, 'Leave at least one permission checked, or choose “Deny”.', []);
    }
    const code = await approveRequest(
      ctx.db,
      cfg,
      c.request,
      member,
      SCOPES.filter((s) => chosen.includes(s)),
    );
    if (!code) return expired(reply);
    return redirectWith(reply, c.request.redirectUri, { code, ...back });
  });

  app.post('/oauth/sign-out', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(server, req, reply, true);
    if (!c) return reply;
    const session = await switchBrowserSession(ctx.db, cfg, c.session, null);
    setSessionCookie(server, reply, session);
    return seeOther(reply, `/oauth/sign-in?request=${c.request.id}`);
  });
}
