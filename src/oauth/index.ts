// The HTTP side of the authorization server (MCP authorization, revision 2025-06-18):
//   GET  /.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata of the /mcp resource
//   GET  /.well-known/oauth-authorization-server       RFC 8414 metadata
//   POST /oauth/register                               RFC 7591 dynamic client registration
//   GET  /oauth/authorize                              authorization code + PKCE S256 (+ RFC 8707 resource)
//   GET/POST /oauth/sign-in, /oauth/consent, POST /oauth/sign-out   the member's pages
//   GET/POST /oauth/connections                       the member's connected apps (disconnect)
//   POST /oauth/token                                  authorization_code and refresh_token grants
//   POST /oauth/revoke                                 RFC 7009
// Errors follow RFC 6749: before the client and its redirect URI are known, a page (never a
// redirect); after, a redirect with error, error_description, state and iss (RFC 9207); at the
// token endpoint JSON {error, error_description}, 400 or 401 for invalid_client.
//
// The pages are protected by a browser-session cookie (HttpOnly, SameSite=Lax, Path=/oauth,
// Secure on https) bound to each authorization request, a synchronizer token per form (an HMAC
// of the request id keyed by the session secret), Origin / Sec-Fetch-Site checks on every POST,
// and headers forbidding framing, caching and script.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.json' with { type: 'json' };
import type { AppContext } from '../context.ts';
import { SCOPES } from '../services/api-keys.ts';
import { getSignedInMember, normalizeEmail, verifyMemberPassword, type SignedInMember } from '../services/members.ts';
import { OAUTH_LIMITS, waitText } from '../services/oauth-limits.ts';
import {
  approveRequest,
  authenticateClient,
  canonicalResource,
  checkScopes,
  clientGrantTypes,
  createAuthorizationRequest,
  createBrowserSession,
  csrfToken,
  denyRequest,
  exchangeCode,
  findBrowserSession,
  getAuthorizationRequest,
  listGrants,
  revokeGrantById,
  getClient,
  matchRedirectUri,
  OAuthError,
  parseScope,
  PKCE_CHALLENGE,
  refreshTokens,
  registerClient,
  revokeToken,
  safeEqual,
  sameResource,
  switchBrowserSession,
  type AuthorizationRequest,
  type BrowserSession,
} from '../services/oauth.ts';
import { mcpUrls } from '../mcp/auth.ts';
import { connectionsPage, connectionsSignInPage, consentPage, errorPage, signInPage, type ClientView, type ScopeView } from './pages.ts';

const COOKIE = 'mapi_oauth_session';
const FORM_LIMIT = 64 * 1024;

/** What each scope allows, worded in the spec (components.securitySchemes.oauth2). */
const SCOPE_TEXT: Record<string, string> =
  ((openapi as { components?: { securitySchemes?: Record<string, { flows?: { authorizationCode?: { scopes?: Record<string, string> } } }> } })
    .components?.securitySchemes?.oauth2?.flows?.authorizationCode?.scopes ?? {});

export const JSON_ENDPOINTS = new Set(['/oauth/register', '/oauth/token', '/oauth/revoke']);

function readCookie(req: FastifyRequest, name: string): string | undefined {
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

/** The origin (or scheme, for private-use schemes) a consent form redirects to, for CSP form-action. */
function formTarget(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : u.protocol;
}

function redirectHost(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.host || `${u.protocol}//`;
}

function redirectWith(reply: FastifyReply, redirectUri: string, params: Record<string, string | null | undefined>) {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, v);
  return reply.code(303).header('cache-control', 'no-store').header('location', u.toString()).send();
}

function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
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
function readForm(req: FastifyRequest, repeatable: string[] = []): URLSearchParams {
  if (!(req.body instanceof URLSearchParams)) throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded');
  const form = req.body;
  const repeated = [...new Set(form.keys())].filter((k) => !repeatable.includes(k) && form.getAll(k).length > 1);
  if (repeated.length) throw new OAuthError('invalid_request', `Parameter ${repeated.join(', ')} must not be repeated`);
  return form;
}

const opt = (form: URLSearchParams, k: string) => form.get(k) ?? undefined;

export function registerOAuth(app: FastifyInstance, ctx: AppContext): void {
  const urls = mcpUrls(ctx.config.publicBaseUrl);
  const cfg = ctx.config.oauth;
  const origin = new URL(urls.base).origin;
  const secure = urls.base.startsWith('https:');

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
    done(null, new URLSearchParams(body as string)),
  );

  // ------------------------------------------------------------------------------ metadata
  const protectedResource = JSON.stringify({
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: (openapi as { info: { title: string } }).info.title,
    resource_documentation: urls.docs,
  });
  const prm = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(protectedResource);
  app.get('/.well-known/oauth-protected-resource', prm);
  app.get('/.well-known/oauth-protected-resource/mcp', prm);

  const authMethods = ['none', 'client_secret_basic', 'client_secret_post'];
  const serverMetadata = JSON.stringify({
    issuer: urls.issuer,
    authorization_endpoint: urls.authorize,
    token_endpoint: urls.token,
    registration_endpoint: urls.register,
    revocation_endpoint: urls.revoke,
    scopes_supported: SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: urls.docs,
  });
  app.get('/.well-known/oauth-authorization-server', async (_req, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(serverMetadata),
  );

  // --------------------------------------------------------------------------- registration
  /** A refusal for too many requests: 429 with Retry-After (the OAuth error is the caller's). */
  const limited = (reply: FastifyReply, retryAfterSeconds: number) => reply.header('retry-after', String(retryAfterSeconds));
  const limiter = (policy: string) => {
    const l = ctx.rateLimiters[policy];
    if (!l) throw new Error(`No rate limiter configured for policy ${policy}`);
    return l;
  };

  app.post('/oauth/register', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    try {
      const decision = await limiter(OAUTH_LIMITS.register).consume(req.ip);
      if (!decision.allowed) {
        limited(reply, decision.retryAfterSeconds);
        throw new OAuthError('temporarily_unavailable', `Too many client registrations from this address; retry in ${waitText(decision.retryAfterSeconds)}`, 429);
      }
      const client = await registerClient(ctx.db, req.body);
      return reply.code(201).header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(client));
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      throw err;
    }
  });

  // ------------------------------------------------------------------------------ authorize
  const setSessionCookie = (reply: FastifyReply, s: BrowserSession) =>
    reply.header('set-cookie', `${COOKIE}=${s.token}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${cfg.sessionTtlSeconds}${secure ? '; Secure' : ''}`);

  app.get('/oauth/authorize', async (req, reply) => {
    const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    const repeated = [...new Set(q.keys())].filter((k) => q.getAll(k).length > 1);
    const one = (k: string) => q.get(k) ?? undefined;
    const bad = (message: string) => sendPage(reply, 400, errorPage('This sign-in link cannot be used', message));

    // Until the client and its redirect URI are established, errors are shown, never redirected.
    const clientId = one('client_id');
    if (!clientId) return bad('The app did not identify itself (client_id is missing).');
    if (repeated.includes('client_id') || repeated.includes('redirect_uri')) return bad('client_id and redirect_uri must not be repeated.');
    const client = await getClient(ctx.db, clientId);
    if (!client) return bad('This app is not registered with the service (unknown client_id).');
    const redirectUri = one('redirect_uri');
    if (!redirectUri) return bad('The app did not say where to return (redirect_uri is missing).');
    if (!matchRedirectUri(client, redirectUri)) return bad('The return address (redirect_uri) is not registered for this app.');

    const state = one('state');
    const fail = (error: string, description: string) =>
      redirectWith(reply, redirectUri, { error, error_description: description, state: repeated.includes('state') ? undefined : state, iss: urls.issuer });
    if (repeated.length) return fail('invalid_request', `Parameter ${repeated.join(', ')} must not be repeated`);
    const responseType = one('response_type');
    if (!responseType) return fail('invalid_request', 'response_type is required');
    if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
    if (!clientGrantTypes(client).includes('authorization_code')) return fail('unauthorized_client', 'This client did not register the authorization_code grant');
    const challenge = one('code_challenge');
    if (!challenge) return fail('invalid_request', 'code_challenge is required: PKCE with S256');
    if (one('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
    if (!PKCE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be BASE64URL(SHA256(code_verifier)): 43 characters');
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
    let session = await findBrowserSession(ctx.db, readCookie(req, COOKIE));
    if (!session) {
      session = await createBrowserSession(ctx.db, cfg);
      setSessionCookie(reply, session);
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
    return reply.code(303).header('cache-control', 'no-store').header('location', `${next}?request=${id}`).send();
  });

  // ------------------------------------------------------------------------ member's pages
  const expired = (reply: FastifyReply) =>
    sendPage(
      reply,
      400,
      errorPage(
        'This sign-in link has expired',
        'The connection request was already answered, has expired, or was opened in another browser.',
      ),
    );

  const clientView = (r: AuthorizationRequest): ClientView => ({ name: r.client.clientName, redirectHost: redirectHost(r.redirectUri) });
  const scopeViews = (r: AuthorizationRequest): ScopeView[] => r.scopes.map((s) => ({ scope: s, description: SCOPE_TEXT[s] ?? s }));

  /** Session and request of a page request; for POSTs also the same-origin and form-token checks. */
  async function pageContext(req: FastifyRequest, reply: FastifyReply, post: boolean) {
    let form: URLSearchParams | undefined;
    if (post) {
      if (!sameSite(req, reply)) return undefined;
      if (!(req.body instanceof URLSearchParams)) {
        sendPage(reply, 400, errorPage('Request refused', 'The form was not sent as a form.'));
        return undefined;
      }
      form = req.body;
    }
    const requestId = post ? (form!.get('request') ?? undefined) : ((req.query as Record<string, string | undefined>).request ?? undefined);
    const session = await findBrowserSession(ctx.db, readCookie(req, COOKIE));
    const request = await getAuthorizationRequest(ctx.db, requestId, session);
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

  const renderConsent = async (reply: FastifyReply, session: BrowserSession, request: AuthorizationRequest, status = 200, error?: string, checked?: string[]) => {
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
  };

  /**
   * Checks a member's password, with failed sign-ins limited per account and per address
   * (src/services/oauth-limits.ts): the member, or the message and status to show (Retry-After set).
   */
  async function attemptSignIn(
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

  /** Whether a form POST comes from this site's own pages (else a 403 page was sent). */
  function sameSite(req: FastifyRequest, reply: FastifyReply): boolean {
    const site = req.headers['sec-fetch-site'];
    const from = req.headers.origin;
    if ((site !== undefined && site !== 'same-origin' && site !== 'none') || (from !== undefined && from !== origin)) {
      sendPage(reply, 403, errorPage('Request refused', 'This form can only be sent from this site’s own pages.'));
      return false;
    }
    return true;
  }

  app.get('/oauth/sign-in', async (req, reply) => {
    const c = await pageContext(req, reply, false);
    if (!c) return reply;
    if (c.session.memberId) return reply.code(303).header('location', `/oauth/consent?request=${c.request.id}`).send();
    return sendPage(reply, 200, signInPage({ client: clientView(c.request), requestId: c.request.id, csrf: csrfToken(c.session, c.request.id) }));
  });

  app.post('/oauth/sign-in', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(req, reply, true);
    if (!c) return reply;
    const email = (c.form.get('email') ?? '').trim();
    const password = c.form.get('password') ?? '';
    const again = (message: string, status = 400) =>
      sendPage(reply, status, signInPage({ client: clientView(c.request), requestId: c.request.id, csrf: csrfToken(c.session, c.request.id), email, error: message }));
    if (!email || !password) return again(!email ? 'Enter your email address.' : 'Enter your password.');
    const attempt = await attemptSignIn(req, reply, email, password);
    if ('refused' in attempt) return again(attempt.refused, attempt.status);
    const member = attempt.member;
    const session = await switchBrowserSession(ctx.db, cfg, c.session, member.id);
    setSessionCookie(reply, session);
    return reply.code(303).header('cache-control', 'no-store').header('location', `/oauth/consent?request=${c.request.id}`).send();
  });

  app.get('/oauth/consent', async (req, reply) => {
    const c = await pageContext(req, reply, false);
    if (!c) return reply;
    return renderConsent(reply, c.session, c.request);
  });

  app.post('/oauth/consent', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(req, reply, true);
    if (!c) return reply;
    const member = c.session.memberId ? await getSignedInMember(ctx.db, c.session.memberId) : undefined;
    if (!member) return reply.code(303).header('location', `/oauth/sign-in?request=${c.request.id}`).send();
    const decision = c.form.get('decision');
    const back = { state: c.request.state, iss: urls.issuer };
    if (decision === 'deny') {
      if (!(await denyRequest(ctx.db, c.request.id))) return expired(reply);
      return redirectWith(reply, c.request.redirectUri, { error: 'access_denied', error_description: 'The workspace member denied access', ...back });
    }
    if (decision !== 'approve') return renderConsent(reply, c.session, c.request, 400, 'Choose “Allow access” or “Deny”.');
    const chosen = c.form.getAll('scope').filter((s) => c.request.scopes.includes(s));
    if (chosen.length === 0) {
      return renderConsent(reply, c.session, c.request, 400, 'Leave at least one permission checked, or choose “Deny”.', []);
    }
    const code = await approveRequest(ctx.db, cfg, c.request, member, SCOPES.filter((s) => chosen.includes(s)));
    if (!code) return expired(reply);
    return redirectWith(reply, c.request.redirectUri, { code, ...back });
  });

  app.post('/oauth/sign-out', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    const c = await pageContext(req, reply, true);
    if (!c) return reply;
    const session = await switchBrowserSession(ctx.db, cfg, c.session, null);
    setSessionCookie(reply, session);
    return reply.code(303).header('cache-control', 'no-store').header('location', `/oauth/sign-in?request=${c.request.id}`).send();
  });

  // ------------------------------------------------------------------- connected apps page
  // A member sees the apps they connected (their grants not revoked) and disconnects any of them
  // (the grant and its tokens are revoked; /mcp refuses them at once). Same browser session,
  // cookie and protections as the authorization pages; the form token is bound to the session.
  const CONNECTIONS = '/oauth/connections';
  const connectionsCsrf = (s: BrowserSession) => csrfToken(s, 'connections');
  const renderConnections = async (
    reply: FastifyReply,
    session: BrowserSession,
    opts: { disconnected?: string; error?: string; status?: number } = {},
  ) => {
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
        connections: grants.map((g) => ({ grantId: g.id, name: g.client_name, scopes: g.scopes, connectedAt: g.created_at, lastUsedAt: g.last_token_at })),
        notice,
        error: opts.error,
      }),
    );
  };

  app.get(CONNECTIONS, async (req, reply) => {
    let session = await findBrowserSession(ctx.db, readCookie(req, COOKIE));
    if (!session) {
      // A session row per new browser: limited per address like authorization requests.
      const decision = await limiter(OAUTH_LIMITS.authorize).consume(req.ip);
      if (!decision.allowed) {
        limited(reply, decision.retryAfterSeconds);
        return sendPage(reply, 429, errorPage('Too many requests', `Too many sign-in pages opened from this address; retry in ${waitText(decision.retryAfterSeconds)}.`));
      }
      session = await createBrowserSession(ctx.db, cfg);
      setSessionCookie(reply, session);
    }
    return renderConnections(reply, session, { disconnected: (req.query as Record<string, string | undefined>).disconnected });
  });

  app.post(CONNECTIONS, { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    if (!sameSite(req, reply)) return reply;
    if (!(req.body instanceof URLSearchParams)) return sendPage(reply, 400, errorPage('Request refused', 'The form was not sent as a form.'));
    const form = req.body;
    const session = await findBrowserSession(ctx.db, readCookie(req, COOKIE));
    // No session (expired, or cookies refused): start over on the page.
    if (!session) return reply.code(303).header('cache-control', 'no-store').header('location', CONNECTIONS).send();
    if (!safeEqual(form.get('csrf') ?? '', connectionsCsrf(session))) {
      return sendPage(reply, 403, errorPage('Request refused', 'The form was out of date. Go back, reload the page and try again.'));
    }
    const action = form.get('action');
    if (action === 'sign-in') {
      const email = (form.get('email') ?? '').trim();
      const password = form.get('password') ?? '';
      const again = (message: string, status = 400) => sendPage(reply, status, connectionsSignInPage({ csrf: connectionsCsrf(session), email, error: message }));
      if (!email || !password) return again(!email ? 'Enter your email address.' : 'Enter your password.');
      const attempt = await attemptSignIn(req, reply, email, password);
      if ('refused' in attempt) return again(attempt.refused, attempt.status);
      setSessionCookie(reply, await switchBrowserSession(ctx.db, cfg, session, attempt.member.id));
      return reply.code(303).header('cache-control', 'no-store').header('location', CONNECTIONS).send();
    }
    if (action === 'sign-out') {
      setSessionCookie(reply, await switchBrowserSession(ctx.db, cfg, session, null));
      return reply.code(303).header('cache-control', 'no-store').header('location', CONNECTIONS).send();
    }
    if (action === 'disconnect') {
      if (!session.memberId) return renderConnections(reply, session, { status: 400, error: 'Sign in first.' });
      const grantId = form.get('grant') ?? '';
      const grant = (await listGrants(ctx.db, { memberId: session.memberId })).find((g) => g.id === grantId);
      if (!grant || !(await revokeGrantById(ctx.db, grant.id, 'revoked_by_member', session.memberId))) {
        return renderConnections(reply, session, { status: 404, error: 'That app is not connected with your account (it may be disconnected already).' });
      }
      return reply.code(303).header('cache-control', 'no-store').header('location', `${CONNECTIONS}?disconnected=${grant.id}`).send();
    }
    return renderConnections(reply, session, { status: 400, error: 'Unknown action.' });
  });

  // ---------------------------------------------------------------------- token, revocation
  app.post('/oauth/token', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    let basic: { id: string; secret: string } | undefined;
    try {
      const form = readForm(req, ['resource']);
      if (form.getAll('resource').length > 1) throw new OAuthError('invalid_target', 'One resource per token request');
      basic = parseBasic(req.headers.authorization);
      if (req.headers.authorization && !basic) throw new OAuthError('invalid_client', 'Unsupported client authentication scheme', 401);
      const grantType = opt(form, 'grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
      const client = await authenticateClient(ctx.db, { basic, clientId: opt(form, 'client_id'), clientSecret: opt(form, 'client_secret') });
      let tokens;
      if (grantType === 'authorization_code') {
        const code = opt(form, 'code');
        if (!code) throw new OAuthError('invalid_request', 'code is required');
        tokens = await exchangeCode(ctx.db, cfg, client, {
          code,
          redirectUri: opt(form, 'redirect_uri'),
          codeVerifier: opt(form, 'code_verifier'),
          resource: opt(form, 'resource'),
        });
      } else if (grantType === 'refresh_token') {
        const refreshToken = opt(form, 'refresh_token');
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
        const scope = parseScope(opt(form, 'scope'));
        if (scope) checkScopes(scope);
        tokens = await refreshTokens(ctx.db, cfg, client, { refreshToken, scope, resource: opt(form, 'resource') });
      } else {
        throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported; use authorization_code or refresh_token`);
      }
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(tokens));
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err, basic !== undefined || /^Basic/i.test(req.headers.authorization ?? ''));
      throw err;
    }
  });

  app.post('/oauth/revoke', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    let basic: { id: string; secret: string } | undefined;
    try {
      const form = readForm(req);
      basic = parseBasic(req.headers.authorization);
      if (req.headers.authorization && !basic) throw new OAuthError('invalid_client', 'Unsupported client authentication scheme', 401);
      const client = await authenticateClient(ctx.db, { basic, clientId: opt(form, 'client_id'), clientSecret: opt(form, 'client_secret') });
      const token = opt(form, 'token');
      if (!token) throw new OAuthError('invalid_request', 'token is required');
      await revokeToken(ctx.db, client, token);
      return reply.code(200).header('cache-control', 'no-store').send();
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err, basic !== undefined || /^Basic/i.test(req.headers.authorization ?? ''));
      throw err;
    }
  });
}
