// The OAuth 2.1 authorization server the MCP endpoint trusts (MCP authorization, revision
// 2025-06-18), mounted in the API's Fastify instance (same process, same port), one file per
// route group:
//   ./metadata.ts     GET  /.well-known/oauth-protected-resource[/mcp], /.well-known/oauth-authorization-server
//   ./register.ts     POST /oauth/register                    RFC 7591 dynamic client registration (the fallback
//                                                             of clients without a Client ID Metadata Document,
//                                                             src/services/oauth/client-metadata.ts, which
//                                                             GET /oauth/authorize resolves)
//   ./authorize.ts    GET  /oauth/authorize, GET/POST /oauth/sign-in, /oauth/consent, POST /oauth/sign-out
//   ./connections.ts  GET/POST /oauth/connections             the member's connected apps (disconnect)
//   ./token.ts        POST /oauth/token, /oauth/revoke        grants and RFC 7009 revocation
//   ./social.ts       GET /social/connect|callback/{platform}, GET/POST /social/connections
//                     the member connects the workspace's social accounts (same session)
// with what they share in ./http.ts (answers, forms, cookies), ./session.ts (the member's browser
// session, sign-in) and ./pages.ts (the HTML). The logic is in src/services/oauth/oauth.ts.
// Registered as an encapsulated plugin, so its form-body parser and error handler stay out of the
// REST API and /mcp.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { OAuthError } from '../services/oauth/oauth.ts';
import { registerAuthorize } from './authorize.ts';
import { registerConnections } from './connections.ts';
import { JSON_ENDPOINTS, oauthServer, registerFormParser, sendOAuthError, sendPage } from './http.ts';
import { registerMetadata } from './metadata.ts';
import { errorPage } from './pages.ts';
import { registerRegistration } from './register.ts';
import { registerSocialConnect } from './social.ts';
import { registerToken } from './token.ts';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/outage.ts';

export function registerOAuth(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    // Errors Fastify raises before a handler runs (a body too large or not parsable): RFC 6749
    // JSON at the JSON endpoints, a page everywhere else.
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      // The database is unreachable: 503 (RFC 6749's temporarily_unavailable), retryable.
      if (isDatabaseUnavailable(err)) {
        reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        const message = `The database is unreachable right now; retry in ${DATABASE_RETRY_AFTER_SECONDS} s`;
        if (JSON_ENDPOINTS.has(req.url.split('?')[0]))
          return sendOAuthError(reply, new OAuthError('temporarily_unavailable', message, 503));
        return sendPage(reply, 503, errorPage('Temporarily unavailable', message));
      }
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) ctx.log.error({ err: { message: err.message, stack: err.stack }, url: req.url }, 'unhandled error');
      const path = req.url.split('?')[0];
      if (JSON_ENDPOINTS.has(path)) {
        if (status === 500) return sendOAuthError(reply, new OAuthError('server_error', 'Unexpected server error', 500));
        return sendOAuthError(
          reply,
          new OAuthError(path === '/oauth/register' ? 'invalid_client_metadata' : 'invalid_request', err.message, 400),
        );
      }
      return sendPage(
        reply,
        status,
        errorPage(
          status === 500 ? 'Something went wrong' : 'Request refused',
          status === 500 ? 'Unexpected server error; try again.' : err.message,
        ),
      );
    });
    registerFormParser(scope);

    const server = oauthServer(ctx);
    registerMetadata(scope, server);
    registerRegistration(scope, server);
    registerAuthorize(scope, server);
    registerConnections(scope, server);
    registerToken(scope, server);
    registerSocialConnect(scope, server);
  });
}
