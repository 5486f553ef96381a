// Every error of the REST adapter in the envelope: the executor's ApiErrors, Fastify's own errors
// (body parsing, limits, content types) and the router's refusals in the seed's vocabulary, a lost
// database as 503, anything else as a logged 500, and unknown routes as 404 (405 for a known path).
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/outage.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import { noRouteError, type RoutesIndex } from './routes-index.ts';

/** Longest path parameter (an id); longer ones are 400 before any route runs. */
export const MAX_PARAM_LENGTH = 200;

export function sendError(reply: FastifyReply, err: ApiError) {
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

/** The router's refusals (frameworkErrors): a path parameter too long, a URL that does not decode. */
export function fromFrameworkError(err: FastifyError): ApiError {
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

/** The error handler and the not-found handler (`routes`: the index for the 405 of a known path with a wrong method). */
export function registerErrorHandlers(app: FastifyInstance, ctx: AppContext, routes: RoutesIndex): void {
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
}
