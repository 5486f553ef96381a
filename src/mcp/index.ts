// The MCP adapter, mounted in the REST app's Fastify instance (same process, same port):
// /mcp (Streamable HTTP, stateless) and the OAuth 2.1 authorization server it trusts. Registered
// as an encapsulated plugin, so its form-body parser and error handler stay out of the REST API.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Executor } from '../operations/executor.ts';
import { OAuthError } from '../services/oauth.ts';
import { listenForAuthChanges, MCP_PATH } from './auth.ts';
import { registerMcpEndpoint, sendNotAllowed } from './endpoint.ts';
import { JSON_ENDPOINTS, registerOAuth, sendOAuthError, sendPage } from '../oauth/index.ts';
import { errorPage } from '../oauth/pages.ts';

export function registerMcp(app: FastifyInstance, ctx: AppContext, executor: Executor): void {
  app.register(async (scope) => {
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) ctx.log.error({ err: { message: err.message, stack: err.stack }, url: req.url }, 'unhandled error');
      const path = req.url.split('?')[0];
      if (path === MCP_PATH) {
        if (req.method !== 'POST') return sendNotAllowed(reply); // a body sent with GET/DELETE failed to parse
        const parse = err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError;
        const code = status === 500 ? -32603 : parse ? -32700 : -32600;
        const message = status === 500 ? 'Internal server error' : parse ? `Parse error: ${err.message}` : err.message;
        return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
      }
      if (JSON_ENDPOINTS.has(path)) {
        if (status === 500) return sendOAuthError(reply, new OAuthError('server_error', 'Unexpected server error', 500));
        return sendOAuthError(reply, new OAuthError(path === '/oauth/register' ? 'invalid_client_metadata' : 'invalid_request', err.message, 400));
      }
      return sendPage(reply, status, errorPage(status === 500 ? 'Something went wrong' : 'Request refused', status === 500 ? 'Unexpected server error; try again.' : err.message));
    });
    registerOAuth(scope, ctx);
    registerMcpEndpoint(scope, ctx, { executor, log: ctx.log });
    // Resolved bearer tokens are forgotten as soon as any node commits a revocation (src/mcp/auth.ts).
    if (ctx.config.oauth.mcpAuthCacheSeconds > 0) {
      const unlisten = await listenForAuthChanges(ctx.sql);
      scope.addHook('onClose', async () => unlisten().catch(() => {}));
    }
  });
}
