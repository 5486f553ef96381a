// The REST adapter: one Fastify route per spec operation, every error in the envelope.
// Fastify does no validation here (routes carry no schemas, and the validator compiler
// refuses to be used): the executor validates with the AJV validators compiled from the spec.
import { fileURLToPath } from 'node:url';
import fastifyCors from '@fastify/cors';
import fastifyStatic from '@fastify/static';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError, isRetryableStatus, type ErrorCode } from '../errors.ts';
import { createExecutor, operationIndex, type Executor } from '../operations/executor.ts';
import { bindHandlers } from '../operations/registry.ts';
import { registerMcp } from '../mcp/index.ts';
import { registerOAuth } from '../oauth/index.ts';
import type { AnyHandler, Reply } from '../handlers.ts';
import { PREVIEWS_DIR_URL } from '../services/catalog/catalog-data.ts';
import { PREVIEW_PREFIX } from '../services/catalog/catalog.ts';
import { registerJsonParser } from './json-body.ts';
import { registerCatalogSamples, registerStoredMedia } from './media.ts';
import { indexRoutes, noRouteError } from './routes-index.ts';
import { drainRequest, multipartBody, registerMultipart } from './multipart.ts';
import { clientErrorHandler, registerBodyTimeouts, serverTimeoutOptions } from './timeouts.ts';
import { registerResponseDrain } from './drain.ts';
import { downloadLimit } from './downloads.ts';
import { registerDocs } from './docs.ts';
import { registerMetrics } from './metrics.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/outage.ts';

export const API_PREFIX = '/api/v1';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec operation a route serves (in its request log line). */
    operationId?: string;
  }
}

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

function send(reply: FastifyReply, out: Reply) {
  reply.code(out.status);
  for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
  reply.header('content-type', out.contentType);
  return reply.send(out.raw ? out.body : JSON.stringify(out.body));
}

function sendError(reply: FastifyReply, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  reply.code(err.status).header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(err.toJSON()));
}

/** Fastify's own errors (body parsing, limits, content types) in the seed's vocabulary. */
function fromFastifyError(err: FastifyError): ApiError | undefined {
  const status = err.statusCode ?? 500;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'Request body is larger than this server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Unsupported Content-Type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('bad_request', 'Content-Type is application/json but the body is empty', {
        errors: [{ field: 'body', message: 'is empty' }],
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('bad_request', `Malformed JSON body: ${err.message}`, {
        errors: [{ field: 'body', message: 'is not valid JSON' }],
      });
  }
  if (err instanceof SyntaxError || (status === 400 && /JSON/i.test(err.message))) {
    return new ApiError('bad_request', `Malformed JSON body: ${err.message}`, {
      errors: [{ field: 'body', message: 'is not valid JSON' }],
    });
  }
  if (status >= 400 && status < 500) {
    const code: ErrorCode = status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'bad_request';
    return new ApiError(code, err.message);
  }
  return undefined;
}

/** Longest path parameter (an id); longer ones are 400 before any route runs. */
const MAX_PARAM_LENGTH = 200;

/** The router's refusals (frameworkErrors): a path parameter too long, a URL that does not decode. */
function fromFrameworkError(err: FastifyError): ApiError {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new ApiError('bad_request', `Invalid request: a path parameter is longer than ${MAX_PARAM_LENGTH} characters`, {
      errors: [{ field: 'path', message: `has a parameter longer than ${MAX_PARAM_LENGTH} characters` }],
    });
  }
  if (err.code === 'FST_ERR_BAD_URL') {
    return new ApiError('bad_request', 'Invalid request: the URL path is not valid percent-encoded UTF-8', {
      errors: [{ field: 'path', message: 'is not a valid URL component' }],
    });
  }
  return new ApiError('bad_request', 'Invalid request: the request could not be routed');
}

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

export function buildApp({ ctx, handlers = bindHandlers(), logger }: BuildOptions): { app: FastifyInstance; executor: Executor } {
  const executor = createExecutor(ctx, handlers);
  const app = Fastify({
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
    // Slow clients are cut (src/http/timeouts.ts); the router's own refusals are in the envelope.
    ...serverTimeoutOptions(ctx.config.timeouts),
    clientErrorHandler,
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

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const apiError = err instanceof ApiError ? err : fromFastifyError(err);
    if (apiError) {
      if (apiError.code === 'payload_too_large') apiError.context.limit_bytes = req.routeOptions?.bodyLimit ?? ctx.config.bodyLimitBytes;
      return sendError(reply, apiError);
    }
    // Authentication and rate limiting run before the executor's own catch: a lost database there too is 503.
    if (isDatabaseUnavailable(err)) return sendError(reply, databaseUnavailable());
    req.log.error({ err, url: req.url.split('?')[0] }, 'unhandled error');
    return sendError(reply, new ApiError('server_error', 'Unexpected server error; retry with backoff and the same idempotency key'));
  });

  app.setNotFoundHandler((req, reply) => sendError(reply, noRouteError(routes, req.method, req.url)));

  // CORS: bearer keys only, never cookies, so any origin may call the API (the spec declares `*`).
  app.register(fastifyCors, {
    origin: '*',
    credentials: false,
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposedHeaders: [
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
      'WWW-Authenticate',
      'Mcp-Session-Id',
    ],
    maxAge: 600,
  });

  // Downloads (previews, samples, stored media) one client address may have in progress at once.
  const limitDownloads = downloadLimit(ctx.config.maxConcurrentDownloadsPerAddress, sendError);

  // Catalog preview images: static assets outside the API contract, as a CDN would serve them.
  app.register(async (scope) => {
    scope.addHook('onRequest', limitDownloads);
    await scope.register(fastifyStatic, {
      root: fileURLToPath(PREVIEWS_DIR_URL),
      prefix: PREVIEW_PREFIX,
      decorateReply: false,
      index: false,
      maxAge: '1d',
      immutable: false,
    });
  });

  // The catalog's voice samples and avatar videos, kept in storage (src/http/media.ts), and
  // stored media at signed, expiring URLs, streamed from storage whatever its backend.
  app.register(async (scope) => {
    scope.addHook('onRequest', limitDownloads);
    registerCatalogSamples(scope, ctx, sendError);
  });
  app.register(async (scope) => {
    scope.addHook('onRequest', limitDownloads);
    registerStoredMedia(scope, ctx, sendError);
  });

  for (const op of operationIndex.operations) {
    app.route({
      method: op.method as 'GET',
      // Under /api/v1, or under the operation's own server (the health probes, at the root).
      url: `${op.server === undefined ? API_PREFIX : op.server.replace(/\/$/, '')}${op.routePath}`,
      config: { operationId: op.operationId },
      // Each operation's body limit is the contract's (`x-body-limit-bytes` on its request body),
      // BODY_LIMIT_BYTES where it declares none: a 300 KB body cannot reach an operation built for 16 KB.
      bodyLimit: op.requestBody?.limitBytes ?? ctx.config.bodyLimitBytes,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const ct = req.headers['content-type'];
        const multipart = req.isMultipart();
        // Aborted when the client hangs up before its answer was written: outbound fetches stop.
        const hangUp = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished) hangUp.abort();
        };
        reply.raw.once('close', onClose);
        try {
          const out = await executor.execute({
            operationId: op.operationId,
            authorization: req.headers.authorization,
            path: { ...(req.params as Record<string, unknown>) },
            query: { ...(req.query as Record<string, unknown>) },
            headers: req.headers as Record<string, unknown>,
            body: multipart ? multipartBody(req) : req.body,
            contentType: ct ? ct.split(';')[0].trim().toLowerCase() : undefined,
            signal: hangUp.signal,
          });
          return send(reply, out);
        } finally {
          reply.raw.off('close', onClose);
          if (multipart) drainRequest(req);
        }
      },
    });
  }

  registerOAuth(app, ctx); // the OAuth authorization server /mcp trusts (src/oauth/)
  registerMcp(app, ctx, executor); // /mcp (src/mcp/)
  registerDocs(app, ctx, `${API_PREFIX}/openapi.json`); // /docs: the API reference page (src/http/docs.ts)

  return { app, executor };
}

export { isRetryableStatus };
