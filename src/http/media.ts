// Stored media served through the API, whatever the storage backend: the signed, expiring
// /media/<key> URLs (storage.signedUrl) and the catalog's voice samples and avatar videos. Bytes
// are streamed from storage (a file, or an S3 GET) with the headers a player needs: Content-Type,
// Content-Length, Accept-Ranges, single byte ranges (206, 416), ETag/Last-Modified and 304, HEAD.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { engineFor } from '../engines/index.ts';
import { ApiError } from '../errors.ts';
import { sampleFor, sampleStore } from '../services/catalog/samples.ts';
import { PREVIEW_PREFIX } from '../services/catalog/catalog.ts';
import { MEDIA_PREFIX, StorageUnavailable, type ByteRange, type Storage } from '../storage/index.ts';

type SendError = (reply: FastifyReply, err: ApiError) => FastifyReply;

/**
 * The one byte range a Range header asks of `size` bytes; undefined to send the whole object
 * (no header, another unit, several ranges, or a malformed one: RFC 9110 lets a server ignore
 * them); 'unsatisfiable' when it starts past the end.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Number(m[2]);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return { start, end: Math.min(end, size - 1) };
}

const storageDown = () =>
  new ApiError('service_unavailable', 'Media storage cannot be reached just now; retry shortly', {}, { 'retry-after': '5' });

/** Streams the stored object `key` as the answer to `req` (404 in the envelope when it is gone). */
async function sendStored(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  sendError: SendError,
  key: string,
  cacheControl: string,
) {
  const storage: Storage = ctx.storage;
  let info: Awaited<ReturnType<typeof storage.stat>>;
  try {
    info = await storage.stat(key);
  } catch (err) {
    req.log.error({ err, key }, 'media storage failed');
    return sendError(reply, storageDown());
  }
  if (!info) return sendError(reply, new ApiError('not_found', 'This media no longer exists', { resource: 'media', field: 'path' }));
  reply.header('cache-control', cacheControl);
  reply.header('accept-ranges', 'bytes');
  reply.header('etag', info.etag);
  reply.header('last-modified', info.lastModified.toUTCString());
  reply.header('x-content-type-options', 'nosniff');
  const inm = req.headers['if-none-match'];
  if (inm?.split(',').some((t) => t.trim() === info.etag || t.trim() === `W/${info.etag}` || t.trim() === '*'))
    return reply.code(304).send();
  // If-Range: the range only applies to the object it was asked of.
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== info.etag ? undefined : parseRange(req.headers.range, info.bytes);
  if (range === 'unsatisfiable') {
    const err = new ApiError('bad_request', `Range not satisfiable: this media is ${info.bytes} bytes`, {
      field: 'range',
      size_bytes: info.bytes,
    });
    return reply
      .code(416)
      .header('content-range', `bytes */${info.bytes}`)
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(err.toJSON()));
  }
  reply.type(info.contentType);
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${info.bytes}`)
      .header('content-length', range.end - range.start + 1);
  } else {
    reply.header('content-length', info.bytes);
  }
  if (req.method === 'HEAD') return reply.send();
  return reply.send(storage.read(key, range));
}

/** Stored media at signed, expiring URLs (storage.signedUrl), outside the API contract like a CDN. */
export function registerStoredMedia(app: FastifyInstance, ctx: AppContext, sendError: SendError): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: `${MEDIA_PREFIX}*`,
    handler: async (req, reply) => {
      let key: string;
      try {
        key = decodeURIComponent((req.params as { '*': string })['*']);
      } catch {
        key = ''; // not a key any URL was signed for: refused below
      }
      const q = req.query as { expires?: string; signature?: string };
      const verdict = ctx.storage.verify(key, q.expires, q.signature);
      if (verdict !== 'ok') {
        return sendError(
          reply,
          new ApiError(
            'forbidden',
            verdict === 'expired' ? 'This media URL has expired; fetch the resource again for a fresh URL' : 'Invalid media URL signature',
          ),
        );
      }
      return sendStored(req, reply, ctx, sendError, key, 'private, max-age=300');
    },
  });
}

/**
 * The catalog's voice samples and avatar videos, made on first request (src/services/catalog/samples.ts),
 * kept in storage, at the preview URLs the catalog gives; more specific than the static previews' wildcard.
 */
export function registerCatalogSamples(app: FastifyInstance, ctx: AppContext, sendError: SendError): void {
  const store = sampleStore(ctx.storage, ctx.config.dataDir, engineFor('speech', ctx));
  const serve = (dir: string, ext: string) => async (req: FastifyRequest, reply: FastifyReply) => {
    const rel = `${dir}/${(req.params as { id: string }).id}.${ext}`;
    const sample = sampleFor(rel);
    if (!sample)
      return sendError(
        reply,
        new ApiError('not_found', `No catalog preview at ${PREVIEW_PREFIX}${rel}`, { resource: 'media', field: 'path' }),
      );
    let key: string;
    try {
      key = await store.ensure(sample);
    } catch (err) {
      if (err instanceof StorageUnavailable) {
        req.log.error({ err: { message: err.message }, sample: rel }, 'media storage failed');
        return sendError(reply, storageDown());
      }
      ctx.log.error(
        { err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, sample: rel },
        'catalog sample could not be made',
      );
      return sendError(reply, new ApiError('server_error', 'This preview could not be made just now; retry shortly'));
    }
    return sendStored(req, reply, ctx, sendError, key, 'public, max-age=86400');
  };
  app.route({ method: ['GET', 'HEAD'], url: `${PREVIEW_PREFIX}voices/:id.wav`, handler: serve('voices', 'wav') });
  app.route({ method: ['GET', 'HEAD'], url: `${PREVIEW_PREFIX}avatars/:id.mp4`, handler: serve('avatars', 'mp4') });
}
