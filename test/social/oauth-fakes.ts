// Local fakes of the authorization side of X and LinkedIn (node:http on 127.0.0.1), for the
// browser connect flow: the authorize page checks what the platform checks (client id, the
// registered redirect URI, the exact scopes, a state, PKCE S256 required by X and absent for
// LinkedIn) and sends the browser back with a code (or error=access_denied when told to deny);
// the token endpoint enforces the documented grant (X: HTTP Basic client credentials +
// code_verifier whose S256 must equal the challenge; LinkedIn: client_id/client_secret in the
// form, no verifier), single-use codes bound to their redirect URI, and answers with the real
// token bodies and error bodies; the "me" endpoint (X /2/users/me, LinkedIn OpenID userinfo)
// wants the issued bearer token. Each records what it saw.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  form: URLSearchParams;
}

interface Spec {
  authorizePath: string;
  tokenPath: string;
  mePath: string;
  clientId: string;
  clientSecret: string;
  /** The scope parameter exactly as the service must send it. */
  scope: string;
  pkce: boolean;
  clientAuth: 'basic' | 'form';
  /** The token body for an issued access token. */
  tokenBody(access: string, refresh: string): Record<string, unknown>;
  me(access: string): Record<string, unknown>;
  errors: {
    invalidClient: { status: number; body: Record<string, unknown> };
    invalidGrant(message: string): { status: number; body: Record<string, unknown> };
    unauthorized: { status: number; body: Record<string, unknown> };
  };
}

async function fakeOAuth(t: Test, spec: Spec) {
  const state = {
    /** The redirect URI registered for the app at the platform (set once the service's URL is known). */
    redirectUri: '',
    /** Answer the next authorization with error=access_denied (the member clicked Cancel). */
    deny: false,
    /** Answer the next token request with this error body (status 400). */
    failToken: undefined as string | undefined,
    authorizations: [] as URLSearchParams[],
    /** Where each authorization sent the browser back. */
    redirects: [] as string[],
    tokenRequests: [] as Seen[],
    meRequests: 0,
    issued: [] as { access: string; refresh: string }[],
    codes: new Map<string, { challenge: string | undefined; redirectUri: string; used: boolean }>(),
    tokens: new Set<string>(),
  };
  const page = (res: http.ServerResponse, status: number, text: string) =>
    res
      .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html lang="en"><title>Error</title><h1>${text}</h1></html>`);
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url!, 'http://fake');
    const seen: Seen = {
      method: req.method!,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
    };

    if (req.method === 'GET' && url.pathname === spec.authorizePath) {
      const q = url.searchParams;
      state.authorizations.push(q);
      // Before the client and redirect URI are trusted, the platform shows an error page.
      if (q.get('client_id') !== spec.clientId) return page(res, 400, 'Something went wrong: invalid client_id');
      if (q.get('redirect_uri') !== state.redirectUri)
        return page(res, 400, 'Something went wrong: redirect_uri does not match the registered one');
      const fail = (error: string) => {
        const back = new URL(state.redirectUri);
        back.searchParams.set('error', error);
        if (q.get('state')) back.searchParams.set('state', q.get('state')!);
        state.redirects.push(back.href);
        res.writeHead(302, { location: back.href }).end();
      };
      if (q.get('response_type') !== 'code') return fail('unsupported_response_type');
      if (q.get('scope') !== spec.scope) return fail('invalid_scope');
      if (!q.get('state')) return page(res, 400, 'Something went wrong: state is required');
      const challenge = q.get('code_challenge') ?? undefined;
      if (spec.pkce) {
        if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge) || q.get('code_challenge_method') !== 'S256')
          return page(res, 400, 'Something went wrong: code_challenge (S256) is required');
      } else if (challenge !== undefined || q.has('code_challenge_method')) {
        return page(res, 400, 'Something went wrong: unexpected code_challenge');
      }
      if (state.deny) {
        state.deny = false;
        return fail('access_denied');
      }
      const code = randomBytes(18).toString('base64url');
      state.codes.set(code, { challenge, redirectUri: q.get('redirect_uri')!, used: false });
      const back = new URL(state.redirectUri);
      back.searchParams.set('state', q.get('state')!);
      back.searchParams.set('code', code);
      state.redirects.push(back.href);
      return res.writeHead(302, { location: back.href }).end();
    }

    if (req.method === 'POST' && url.pathname === spec.tokenPath) {
      state.tokenRequests.push(seen);
      const f = seen.form;
      if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
        return json(res, 400, spec.errors.invalidGrant('Content-Type must be application/x-www-form-urlencoded').body);
      if (spec.clientAuth === 'basic') {
        const expected = `Basic ${Buffer.from(`${spec.clientId}:${spec.clientSecret}`).toString('base64')}`;
        if (req.headers.authorization !== expected || f.has('client_secret'))
          return json(res, spec.errors.invalidClient.status, spec.errors.invalidClient.body);
      } else if (f.get('client_id') !== spec.clientId || f.get('client_secret') !== spec.clientSecret || req.headers.authorization) {
        return json(res, spec.errors.invalidClient.status, spec.errors.invalidClient.body);
      }
      if (state.failToken) {
        const e = spec.errors.invalidGrant(state.failToken);
        state.failToken = undefined;
        return json(res, e.status, e.body);
      }
      if (f.get('grant_type') !== 'authorization_code')
        return json(res, 400, spec.errors.invalidGrant('grant_type must be authorization_code').body);
      const c = state.codes.get(f.get('code') ?? '');
      const bad = (m: string) => {
        const e = spec.errors.invalidGrant(m);
        return json(res, e.status, e.body);
      };
      if (!c || c.used) return bad('Value passed for the authorization code was invalid.');
      if (f.get('redirect_uri') !== c.redirectUri) return bad('redirect_uri does not match the authorization request');
      if (spec.pkce) {
        const v = f.get('code_verifier') ?? '';
        if (!v || createHash('sha256').update(v).digest('base64url') !== c.challenge)
          return bad('Value passed for the code_verifier was invalid.');
      } else if (f.has('code_verifier')) return bad('code_verifier is not a parameter of this grant');
      c.used = true;
      const access = `${spec.clientId}-at-${randomBytes(9).toString('base64url')}`;
      const refresh = `${spec.clientId}-rt-${randomBytes(9).toString('base64url')}`;
      state.issued.push({ access, refresh });
      state.tokens.add(access);
      return json(res, 200, spec.tokenBody(access, refresh));
    }

    if (req.method === 'GET' && url.pathname === spec.mePath) {
      state.meRequests++;
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !state.tokens.has(token)) return json(res, spec.errors.unauthorized.status, spec.errors.unauthorized.body);
      return json(res, 200, spec.me(token));
    }
    return json(res, 404, { error: 'not_found', path: url.pathname });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state };
}

export const X_OAUTH_CLIENT = { id: 'x-oauth-client', secret: 'x-oauth-secret' };
export const X_USER = { id: '1458312837891', username: 'brandx', name: 'Brand X' };

/** X: OAuth 2.0 authorization code with PKCE (x.com/i/oauth2/authorize, api.x.com/2/oauth2/token, /2/users/me). */
export const fakeXOAuth = (t: Test) =>
  fakeOAuth(t, {
    authorizePath: '/i/oauth2/authorize',
    tokenPath: '/2/oauth2/token',
    mePath: '/2/users/me',
    clientId: X_OAUTH_CLIENT.id,
    clientSecret: X_OAUTH_CLIENT.secret,
    scope: 'tweet.read tweet.write users.read media.write offline.access',
    pkce: true,
    clientAuth: 'basic',
    tokenBody: (access, refresh) => ({
      token_type: 'bearer',
      expires_in: 7200,
      access_token: access,
      scope: 'tweet.read tweet.write users.read media.write offline.access',
      refresh_token: refresh,
    }),
    me: () => ({ data: X_USER }),
    errors: {
      invalidClient: { status: 401, body: { error: 'unauthorized_client', error_description: 'Missing valid authorization header' } },
      invalidGrant: (m) => ({ status: 400, body: { error: 'invalid_request', error_description: m } }),
      unauthorized: { status: 401, body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } },
    },
  });

export const LINKEDIN_OAUTH_CLIENT = { id: 'li-oauth-client', secret: 'li-oauth-secret' };
export const LINKEDIN_MEMBER = { sub: 'yrZCpj2Z12', name: 'Ana Brand', given_name: 'Ana', family_name: 'Brand' };

/** LinkedIn: authorization code without PKCE (www.linkedin.com/oauth/v2/…, OpenID userinfo on api.linkedin.com). */
export const fakeLinkedInOAuth = (t: Test) =>
  fakeOAuth(t, {
    authorizePath: '/oauth/v2/authorization',
    tokenPath: '/oauth/v2/accessToken',
    mePath: '/v2/userinfo',
    clientId: LINKEDIN_OAUTH_CLIENT.id,
    clientSecret: LINKEDIN_OAUTH_CLIENT.secret,
    scope: 'openid profile w_member_social',
    pkce: false,
    clientAuth: 'form',
    // LinkedIn lists the granted scopes comma-separated; refresh tokens only for approved partners.
    tokenBody: (access) => ({
      access_token: access,
      expires_in: 5183999,
      scope: 'openid,profile,w_member_social',
      token_type: 'Bearer',
      id_token: 'eyJ.fake.jwt',
    }),
    me: () => ({ ...LINKEDIN_MEMBER, locale: { country: 'US', language: 'en' }, picture: 'https://media.licdn.com/dms/image/fake' }),
    errors: {
      invalidClient: { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed' } },
      invalidGrant: (m) => ({ status: 400, body: { error: 'invalid_request', error_description: m } }),
      unauthorized: { status: 401, body: { serviceErrorCode: 65600, message: 'Invalid access token', status: 401 } },
    },
  });

// ------------------------------------------------- the other six platforms: token and profile only

/**
 * Token and profile endpoints of YouTube (Google), TikTok, Pinterest, Instagram, Threads and
 * Facebook, one server each, enforcing each one's documented exchange (client credentials where
 * it wants them, the PKCE verifier for Google, Meta's long-lived token exchanges) and answering
 * with its token and profile bodies. The authorization step is driven by the test (the service's
 * redirect to the authorization URL gives it the state and, for Google, the challenge).
 */
export async function fakeOtherPlatforms(t: Test, client: { id: string; secret: string }) {
  const calls: string[] = [];
  /** The S256 challenge Google was sent (set by the test from the authorization URL). */
  const google = { challenge: '' };
  const codes = new Set(['good-code']);
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const metaError = (res: http.ServerResponse, message: string) =>
    json(res, 400, { error: { message, type: 'OAuthException', code: 100, fbtrace_id: 'AbCdEf' } });
  const serveOne = async (name: string, handler: (r: Seen, res: http.ServerResponse) => void) => {
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const url = new URL(req.url!, 'http://fake');
      calls.push(`${name} ${req.method} ${url.pathname}`);
      handler(
        {
          method: req.method!,
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
        },
        res,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const bearer = (r: Seen) => /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];
  const isForm = (r: Seen) => r.method === 'POST' && /^application\/x-www-form-urlencoded/.test(r.headers['content-type'] ?? '');
  const grant = (r: Seen, redirect: string) =>
    r.form.get('grant_type') === 'authorization_code' && codes.has(r.form.get('code') ?? '') && r.form.get('redirect_uri') === redirect;
  const formClient = (f: URLSearchParams, idParam = 'client_id') =>
    f.get(idParam) === client.id && f.get('client_secret') === client.secret;
  const redirect = { base: '' };
  const cb = (p: string) => `${redirect.base}/social/callback/${p}`;

  const urls = {
    youtube: await serveOne('youtube', (r, res) => {
      if (r.path === '/token') {
        const v = r.form.get('code_verifier') ?? '';
        if (!isForm(r) || !formClient(r.form))
          return json(res, 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
        if (!grant(r, cb('youtube')) || createHash('sha256').update(v).digest('base64url') !== google.challenge)
          return json(res, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
        return json(res, 200, {
          access_token: 'ya29.yt-access',
          expires_in: 3599,
          refresh_token: '1//yt-refresh',
          scope: 'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly',
          token_type: 'Bearer',
        });
      }
      if (r.path === '/youtube/v3/channels' && r.query.get('mine') === 'true' && r.query.get('part')?.includes('snippet')) {
        if (bearer(r) !== 'ya29.yt-access')
          return json(res, 401, {
            error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' },
          });
        return json(res, 200, {
          kind: 'youtube#channelListResponse',
          pageInfo: { totalResults: 1, resultsPerPage: 5 },
          items: [{ kind: 'youtube#channel', id: 'UCbrand123', snippet: { title: 'Brand TV', customUrl: '@brandtv' } }],
        });
      }
      json(res, 404, { error: { code: 404, message: 'Not Found' } });
    }),
    tiktok: await serveOne('tiktok', (r, res) => {
      if (r.path === '/v2/oauth/token/') {
        if (!isForm(r) || !formClient(r.form, 'client_key'))
          return json(res, 200, { error: 'invalid_client', error_description: 'Client key or secret is incorrect.', log_id: 'L1' });
        if (!grant(r, cb('tiktok')))
          return json(res, 200, { error: 'invalid_grant', error_description: 'Authorization code is expired.', log_id: 'L2' });
        return json(res, 200, {
          access_token: 'act.tt-access',
          expires_in: 86400,
          open_id: 'tt-open-1',
          refresh_expires_in: 31536000,
          refresh_token: 'rft.tt-refresh',
          scope: 'user.info.basic,user.info.profile,video.publish,video.upload',
          token_type: 'Bearer',
        });
      }
      if (r.path === '/v2/user/info/') {
        if (bearer(r) !== 'act.tt-access')
          return json(res, 401, {
            data: {},
            error: { code: 'access_token_invalid', message: 'The access token is invalid or not found in the request.', log_id: 'L3' },
          });
        return json(res, 200, {
          data: { user: { open_id: 'tt-open-1', username: 'brandtok', display_name: 'Brand Tok' } },
          error: { code: 'ok', message: '', log_id: 'L4' },
        });
      }
      json(res, 404, { error: { code: 'not_found' } });
    }),
    pinterest: await serveOne('pinterest', (r, res) => {
      if (r.path === '/v5/oauth/token') {
        const expected = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
        if (!isForm(r) || r.headers.authorization !== expected) return json(res, 401, { code: 2, message: 'Authentication failed.' });
        if (!grant(r, cb('pinterest'))) return json(res, 400, { code: 1, message: 'Invalid authorization code' });
        return json(res, 200, {
          access_token: 'pina_access',
          refresh_token: 'pinr_refresh',
          response_type: 'authorization_code',
          token_type: 'bearer',
          expires_in: 2592000,
          refresh_token_expires_in: 31536000,
          scope: 'user_accounts:read,boards:read,boards:write,pins:read,pins:write',
        });
      }
      if (r.path === '/v5/user_account') {
        if (bearer(r) !== 'pina_access') return json(res, 401, { code: 2, message: 'Authentication failed.' });
        return json(res, 200, { account_type: 'BUSINESS', id: '549755885175', username: 'brandpins', business_name: 'Brand Pins' });
      }
      json(res, 404, { code: 404, message: 'Not found' });
    }),
    instagram: await serveOne('instagram', (r, res) => {
      if (r.path === '/oauth/access_token') {
        if (!isForm(r) || !formClient(r.form))
          return json(res, 400, { error_type: 'OAuthException', code: 400, error_message: 'Invalid client_secret' });
        if (!grant(r, cb('instagram')))
          return json(res, 400, { error_type: 'OAuthException', code: 400, error_message: 'Invalid authorization code' });
        return json(res, 200, {
          data: [
            {
              access_token: 'IG-short',
              user_id: '17841400001',
              permissions: 'instagram_business_basic,instagram_business_content_publish',
            },
          ],
        });
      }
      if (r.path === '/access_token') {
        if (
          r.query.get('grant_type') !== 'ig_exchange_token' ||
          r.query.get('client_secret') !== client.secret ||
          r.query.get('access_token') !== 'IG-short'
        )
          return metaError(res, 'Invalid OAuth access token');
        return json(res, 200, { access_token: 'IG-long', token_type: 'bearer', expires_in: 5183944 });
      }
      if (r.path === '/v23.0/me') {
        if (r.query.get('access_token') !== 'IG-long') return metaError(res, 'Invalid OAuth access token');
        return json(res, 200, { user_id: '17841400001', username: 'brandgram', name: 'Brand Gram', id: '9000001' });
      }
      metaError(res, 'Unknown path');
    }),
    threads: await serveOne('threads', (r, res) => {
      if (r.path === '/oauth/access_token') {
        if (!isForm(r) || !formClient(r.form)) return metaError(res, 'Error validating client secret.');
        if (!grant(r, cb('threads'))) return metaError(res, 'Invalid verification code format.');
        return json(res, 200, { access_token: 'TH-short', user_id: '2600001' });
      }
      if (r.path === '/access_token') {
        if (
          r.query.get('grant_type') !== 'th_exchange_token' ||
          r.query.get('client_secret') !== client.secret ||
          r.query.get('access_token') !== 'TH-short'
        )
          return metaError(res, 'Invalid OAuth access token');
        return json(res, 200, { access_token: 'TH-long', token_type: 'bearer', expires_in: 5183944 });
      }
      if (r.path === '/v1.0/me') {
        if (r.query.get('access_token') !== 'TH-long') return metaError(res, 'Invalid OAuth access token');
        return json(res, 200, { id: '2600001', username: 'brandthreads', name: 'Brand Threads' });
      }
      metaError(res, 'Unknown path');
    }),
    facebook: await serveOne('facebook', (r, res) => {
      if (r.method === 'GET' && r.path === '/v23.0/oauth/access_token') {
        const q = r.query;
        if (q.get('client_id') !== client.id || q.get('client_secret') !== client.secret)
          return metaError(res, 'Error validating client secret.');
        if (q.get('grant_type') === 'fb_exchange_token') {
          if (q.get('fb_exchange_token') !== 'FB-short') return metaError(res, 'Invalid OAuth access token');
          return json(res, 200, { access_token: 'FB-long', token_type: 'bearer', expires_in: 5183944 });
        }
        if (!codes.has(q.get('code') ?? '') || q.get('redirect_uri') !== cb('facebook'))
          return metaError(res, 'Error validating verification code.');
        return json(res, 200, { access_token: 'FB-short', token_type: 'bearer', expires_in: 5183944 });
      }
      if (r.path === '/v23.0/me/accounts') {
        if (r.query.get('access_token') !== 'FB-long') return metaError(res, 'Invalid OAuth access token');
        return json(res, 200, {
          data: [
            { id: '101100', name: 'Brand Page', access_token: 'EAA-page-1', category: 'Brand', tasks: ['CREATE_CONTENT'] },
            { id: '101200', name: 'Brand Outlet', access_token: 'EAA-page-2', category: 'Shopping', tasks: ['CREATE_CONTENT'] },
          ],
          paging: { cursors: { before: 'QVFI', after: 'QVFJ' } },
        });
      }
      metaError(res, 'Unknown path');
    }),
  };
  return { urls, calls, google, redirect };
}
