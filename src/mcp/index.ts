// The MCP adapter, mounted in the REST app's Fastify instance (same process, same port): /mcp
// (Streamable HTTP, stateless). The OAuth 2.1 authorization server it trusts is src/oauth/,
// registered beside it. Registered as an encapsulated plugin, so its body parser and error
// handler stay out of the REST API.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Executor } from '../operations/executor.ts';
import { listenForAuthChanges } from './auth.ts';
import { registerMcpEndpoint, sendNotAllowed } from './endpoint.ts';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/outage.ts';

/** Largest form body /mcp reads before refusing it (413), as the OAuth server's forms. */
const FORM_LIMIT = 64 * 1024;

export function registerMcp(app: FastifyInstance, ctx: AppContext, executor: Executor): void {
  app.register(async (scope) => {
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      // The bearer check found the database unreachable: 503, retryable, not a server fault.
      if (isDatabaseUnavailable(err)) {
        const message = `The database is unreachable right now; retry in ${DATABASE_RETRY_AFTER_SECONDS} s`;
        return reply
          .code(503)
          .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
          .header('content-type', 'application/json; charset=utf-8')
          .send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message }, id: null }));
      }
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) ctx.log.error({ err: { message: err.message, stack: err.stack }, url: req.url }, 'unhandled error');
      // Every route of this scope is /mcp (or /mcp/, the router ignoring a trailing slash).
      if (req.method !== 'POST') return sendNotAllowed(reply); // a body sent with GET/DELETE failed to parse
      const parse =
        err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError;
      const code = status === 500 ? -32603 : parse ? -32700 : -32600;
      const message = status === 500 ? 'Internal server error' : parse ? `Parse error: ${err.message}` : err.message;
      return reply
        .code(status)
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
    });
    // A form body is no MCP message, but it reaches the endpoint (bearer check, then the
    // transport's 415 as the SDK transport answers it) rather than Fastify's own refusal.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    registerMcpEndpoint(scope, ctx, { executor, log: ctx.log });
    // Resolved bearer tokens are forgotten as soon as any node commits a revocation (src/mcp/auth.ts).
    if (ctx.config.oauth.mcpAuthCacheSeconds > 0) {
      const unlisten = await listenForAuthChanges(ctx.sql);
      scope.addHook('onClose', async () => unlisten().catch(() => {}));
    }
  });
}
