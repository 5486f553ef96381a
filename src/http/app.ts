// The REST adapter: one Fastify route per spec operation, every error in the envelope.
// Fastify does no validation here (routes carry no schemas, and the validator compiler
// refuses to be used): the executor validates with the AJV validators compiled from the spec.
// buildApp is the ordered list of what the HTTP server is made of, each part a plugin of its own file.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { isRetryableStatus } from '../errors.ts';
import { createExecutor, type Executor } from '../operations/executor.ts';
import { bindHandlers } from '../operations/registry.ts';
import { registerMcp } from '../mcp/index.ts';
import { registerOAuth } from '../oauth/index.ts';
import type { AnyHandler } from '../handlers.ts';
import { API_PREFIX, registerContractRoutes } from './contract-routes.ts';
import { registerCors } from './cors.ts';
import { fromFrameworkError, MAX_PARAM_LENGTH, registerErrorHandlers, sendError } from './error-envelope.ts';
import { registerJsonParser } from './json-body.ts';
import { indexRoutes } from './routes-index.ts';
import { registerMultipart } from './multipart.ts';
import { clientErrorHandler, registerBodyTimeouts, serverTimeoutOptions } from './timeouts.ts';
import { registerResponseDrain } from './drain.ts';
import { registerDownloads } from './downloads.ts';
import { registerDocs } from './docs.ts';
import { registerMetrics } from './metrics.ts';

export { API_PREFIX };

export interface BuildOptions {
  ctx: AppContext;
  /** Handlers already bound by bindHandlers(); bound here when omitted. */
  handlers?: Map<string, AnyHandler>;
  /** The process's pino logger (src/logger.ts); none: Fastify logs nothing. */
  logger?: FastifyBaseLogger;
}

/**
 * One log line per request, when its answer is written (Fastify's default is two: `incoming
 * request` and `request completed`): request id (`reqId`, bound by Fastify), method, path (no
 * query string: media signatures and OAuth codes stay out of the logs), operationId, status and
 * response time in milliseconds.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      url: request.url.split('?')[0],
      operationId: request.routeOptions.config?.operationId,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** The Fastify server's options: logging, body limit, proxies, routing, slow-client timeouts. */
function serverOptions(ctx: AppContext, logger: FastifyBaseLogger | undefined) {
  return {
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    logController: new OneLinePerRequest(),
    // While the server closes (SIGTERM), a request already arriving on an open keep-alive connection
    // is answered normally, with `Connection: close`, rather than with Fastify's bare 503 outside the
    // envelope: the shutdown's grace period bounds it (src/server.ts).
    return503OnClosing: false,
    bodyLimit: ctx.config.bodyLimitBytes,
    // A hop count as the function Fastify builds for it (its types omit the number form).
    trustProxy: typeof ctx.config.trustProxy === 'number' ? trustHops(ctx.config.trustProxy) : ctx.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Slow clients are cut (src/http/timeouts.ts).
    ...serverTimeoutOptions(ctx.config.timeouts),
    clientErrorHandler,
  };
}

export function buildApp({ ctx, handlers = bindHandlers(), logger }: BuildOptions): { app: FastifyInstance; executor: Executor } {
  const executor = createExecutor(ctx, handlers);
  const app = Fastify({
    ...serverOptions(ctx, logger),
    // The router's own refusals (a path parameter too long, a URL that does not decode) in the envelope.
    frameworkErrors: (err, _req, reply) => sendError(reply, fromFrameworkError(err)),
  });
  const routes = indexRoutes(app); // for the 405 of a known path with a wrong method
  // Clients that stop reading their answer are cut, and pipelined requests handled one at a time (first hook).
  registerResponseDrain(app, ctx.config.timeouts);
  registerBodyTimeouts(app, ctx.config.timeouts, sendError);
  registerJsonParser(app);
  registerMetrics(app, ctx); // request timing for every route, and GET /metrics (src/http/metrics.ts)
  app.setValidatorCompiler(() => {
    throw new Error('Route schemas are not used: requests are validated by the executor with the generated AJV validators');
  });
  // Multipart bodies are streamed by the handlers that accept them (src/http/multipart.ts): the
  // parser only marks the request; the parts are read after authentication and validation.
  registerMultipart(app, ctx.config.editorUploadMaxBytes);
  registerErrorHandlers(app, ctx, routes); // every error in the envelope (src/http/error-envelope.ts)
  registerCors(app);
  // Previews, catalog samples and signed stored media, with a cap per client address (src/http/downloads.ts).
  registerDownloads(app, ctx, sendError);
  registerContractRoutes(app, ctx, executor); // one route per spec operation (src/http/contract-routes.ts)
  registerOAuth(app, ctx); // the OAuth authorization server /mcp trusts (src/oauth/)
  registerMcp(app, ctx, executor); // /mcp (src/mcp/)
  registerDocs(app, ctx, `${API_PREFIX}/openapi.json`); // /docs: the API reference page (src/http/docs.ts)
  return { app, executor };
}

export { isRetryableStatus };
