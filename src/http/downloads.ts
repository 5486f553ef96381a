// Downloads in progress per client address: stored media, the catalog's samples and the static
// previews are streamed from storage or disk, each holding a file or an S3 stream and its buffers
// while the client takes it. One address (the client IP, TRUST_PROXY-aware) may have at most
// MAX_CONCURRENT_DOWNLOADS_PER_ADDRESS in progress; past it, 429 rate_limited with Retry-After.
// HEAD requests stream nothing and are not counted. How long a download may take is bounded by
// the response drain limits (./drain.ts).
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { PREVIEWS_DIR_URL } from '../services/catalog/catalog-data.ts';
import { PREVIEW_PREFIX } from '../services/catalog/catalog.ts';
import { registerCatalogSamples, registerStoredMedia } from './media.ts';

/** When a refused download may be tried again: downloads in progress end within seconds, or are cut. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 5;

type SendError = (reply: FastifyReply, err: ApiError) => FastifyReply;

/** An onRequest hook counting the downloads of the routes it is added to (one count across all of them); max 0: no cap. */
export function downloadLimit(max: number, sendError: SendError) {
  const active = new Map<string, number>();
  const release = (ip: string) => {
    const n = (active.get(ip) ?? 1) - 1;
    if (n > 0) active.set(ip, n);
    else active.delete(ip);
  };
  return async function limitDownloads(req: FastifyRequest, reply: FastifyReply) {
    if (max <= 0 || req.method !== 'GET') return;
    const ip = req.ip;
    const n = active.get(ip) ?? 0;
    if (n >= max) {
      const retry = DOWNLOAD_RETRY_AFTER_SECONDS;
      return sendError(
        reply,
        new ApiError(
          'rate_limited',
          `Too many downloads in progress from this address (at most ${max} at once); retry when one has finished`,
          { retry_after_seconds: retry },
          { 'retry-after': String(retry) },
        ),
      );
    }
    active.set(ip, n + 1);
    reply.raw.once('close', () => release(ip));
  };
}

/**
 * The download routes, each under one count per address: catalog preview images (static assets
 * outside the API contract, as a CDN would serve them), the catalog's voice samples and avatar
 * videos kept in storage (./media.ts), and stored media at signed, expiring URLs, streamed from
 * storage whatever its backend.
 */
export function registerDownloads(app: FastifyInstance, ctx: AppContext, sendError: SendError): void {
  const limitDownloads = downloadLimit(ctx.config.maxConcurrentDownloadsPerAddress, sendError);
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
  app.register(async (scope) => {
    scope.addHook('onRequest', limitDownloads);
    registerCatalogSamples(scope, ctx, sendError);
  });
  app.register(async (scope) => {
    scope.addHook('onRequest', limitDownloads);
    registerStoredMedia(scope, ctx, sendError);
  });
}
