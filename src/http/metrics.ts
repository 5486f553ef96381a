// GET /metrics: this process's metrics (src/metrics.ts) in the Prometheus text format, and the
// hook that times every HTTP request.
//
// Protected by a bearer token: without METRICS_TOKEN the route does not exist (404 like any
// unknown path); with it, a scrape must send `Authorization: Bearer <METRICS_TOKEN>`, anything
// else is 401 in the envelope. Queue depth is read from pg-boss's queue table (the counts its
// monitor keeps every JOB_SUPERVISE_SECONDS, one small query) at most once per half of that
// interval, and a scrape waits at most QUEUE_DEPTH_WAIT_MS for it: scraping never loads the
// database, and a database outage leaves the last values in place rather than failing the scrape.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { collectProcessMetrics, httpRequestDuration, queueDepth, registry } from '../metrics.ts';

export const METRICS_PATH = '/metrics';
/** Queue counts are reused for half of pg-boss's counting interval (5 s by default). */
const queueDepthCacheMs = (ctx: AppContext) => (ctx.config.jobSuperviseSeconds * 1000) / 2;
/** Longest a scrape waits for fresh queue counts before it answers with the previous ones. */
export const QUEUE_DEPTH_WAIT_MS = 1000;

const digest = (s: string) => createHash('sha256').update(s).digest();

function sendError(reply: FastifyReply, err: ApiError) {
  return reply
    .code(err.status)
    .headers(err.headers)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(err.toJSON()));
}

/** The route's label: the operationId, else the route's pattern, else "(no route)". */
function operationOf(req: FastifyRequest): string {
  return req.routeOptions.config?.operationId ?? req.routeOptions.url ?? '(no route)';
}

function queueDepthReader(ctx: AppContext) {
  const cacheMs = queueDepthCacheMs(ctx);
  let readAt = 0;
  let reading: Promise<void> | undefined;
  const read = async () => {
    const queues = await ctx.queue.boss.getQueues();
    for (const q of queues) {
      queueDepth.set({ queue: q.name, state: 'queued' }, q.queuedCount ?? 0);
      queueDepth.set({ queue: q.name, state: 'active' }, q.activeCount ?? 0);
    }
  };
  return async () => {
    if (!reading && Date.now() - readAt >= cacheMs) {
      readAt = Date.now();
      reading = read()
        .catch((err: unknown) =>
          ctx.log.warn({ err: { message: (err as Error)?.message } }, 'metrics: queue depth could not be read; the previous values stand'),
        )
        .finally(() => (reading = undefined));
    }
    if (reading) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([reading, new Promise<void>((r) => (timer = setTimeout(r, QUEUE_DEPTH_WAIT_MS)))]);
      clearTimeout(timer);
    }
  };
}

export function registerMetrics(app: FastifyInstance, ctx: AppContext): void {
  // Every request, when its answer has been written (404s and 405s included).
  app.addHook('onResponse', async (req, reply) => {
    httpRequestDuration.observe(
      { operation: operationOf(req), method: req.method, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  const token = ctx.config.metricsToken;
  if (!token) return;
  collectProcessMetrics();
  const expected = digest(token);
  const refreshQueueDepth = queueDepthReader(ctx);
  app.get(METRICS_PATH, async (req, reply) => {
    const m = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]), expected)) {
      return sendError(
        reply,
        new ApiError(
          'unauthorized',
          'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
          {},
          { 'www-authenticate': 'Bearer realm="metrics"' },
        ),
      );
    }
    await refreshQueueDepth();
    const body = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(body);
  });
}

class Quiet extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
}

/**
 * A worker process (`npm run worker`) has no API; with METRICS_TOKEN set it listens on PORT/HOST
 * with this app: GET /metrics and nothing else (every other path is 404 in the envelope).
 */
export function buildMetricsOnlyApp(ctx: AppContext, logger?: FastifyBaseLogger): FastifyInstance {
  // No line per scrape: scrapes come every few seconds and say nothing new.
  const app = Fastify({ ...(logger ? { loggerInstance: logger } : { logger: false }), logController: new Quiet() });
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      new ApiError('not_found', 'This worker process serves only GET /metrics', {
        resource: 'route',
        field: 'path',
        method: req.method,
        path: req.url.split('?')[0],
      }),
    ),
  );
  registerMetrics(app, ctx);
  return app;
}
