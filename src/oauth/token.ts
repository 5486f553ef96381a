// The client's back-channel endpoints, form bodies, client authentication by HTTP Basic
// (client_secret_basic), form fields (client_secret_post) or client_id alone (public clients):
//   POST /oauth/token   authorization_code and refresh_token grants
//   POST /oauth/revoke  RFC 7009
// Errors are JSON {error, error_description}: 400, or 401 for invalid_client (with a Basic
// challenge when Basic credentials were tried).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authenticateClient,
  checkScopes,
  exchangeCode,
  OAuthError,
  parseScope,
  refreshTokens,
  revokeToken,
} from '../services/oauth/oauth.ts';
import { FORM_LIMIT, opt, parseBasic, readForm, sendOAuthError, type OAuthServer } from './http.ts';

type Basic = { id: string; secret: string } | undefined;

/** Basic credentials of the request, if any; any other Authorization scheme is invalid_client. */
function basicCredentials(req: FastifyRequest): Basic {
  const basic = parseBasic(req.headers.authorization);
  if (req.headers.authorization && !basic) throw new OAuthError('invalid_client', 'Unsupported client authentication scheme', 401);
  return basic;
}

/** An OAuthError as its JSON answer; anything else is rethrown (the scope's error handler). */
function refuse(req: FastifyRequest, reply: FastifyReply, err: unknown, basic: Basic) {
  if (err instanceof OAuthError) return sendOAuthError(reply, err, basic !== undefined || /^Basic/i.test(req.headers.authorization ?? ''));
  throw err;
}

export function registerToken(app: FastifyInstance, { ctx, cfg }: OAuthServer): void {
  app.post('/oauth/token', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    let basic: Basic;
    try {
      const form = readForm(req, ['resource']);
      if (form.getAll('resource').length > 1) throw new OAuthError('invalid_target', 'One resource per token request');
      basic = basicCredentials(req);
      const grantType = opt(form, 'grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
      const client = await authenticateClient(ctx.db, {
        basic,
        clientId: opt(form, 'client_id'),
        clientSecret: opt(form, 'client_secret'),
      });
      let tokens: Awaited<ReturnType<typeof exchangeCode>>;
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
      return reply
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(tokens));
    } catch (err) {
      return refuse(req, reply, err, basic);
    }
  });

  app.post('/oauth/revoke', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    let basic: Basic;
    try {
      const form = readForm(req);
      basic = basicCredentials(req);
      const client = await authenticateClient(ctx.db, {
        basic,
        clientId: opt(form, 'client_id'),
        clientSecret: opt(form, 'client_secret'),
      });
      const token = opt(form, 'token');
      if (!token) throw new OAuthError('invalid_request', 'token is required');
      await revokeToken(ctx.db, client, token);
      return reply.code(200).header('cache-control', 'no-store').send();
    } catch (err) {
      return refuse(req, reply, err, basic);
    }
  });
}
