// How long a client may take to send its request. Slow clients (headers or bodies trickled a byte
// at a time) would otherwise hold connections and memory for ever. Four limits:
//   - headers: Node's headersTimeout (HEADERS_TIMEOUT_SECONDS);
//   - every request, uploads included: Node's requestTimeout (REQUEST_TIMEOUT_SECONDS), the cap;
//     these two are checked by Node every CHECK_INTERVAL_MS and answered by clientErrorHandler;
//   - a body that is not multipart: whole within BODY_TIMEOUT_SECONDS after the headers;
//   - a multipart upload (up to EDITOR_UPLOAD_MAX_BYTES, which no fixed deadline fits): cut when
//     no byte arrives for UPLOAD_IDLE_TIMEOUT_SECONDS, or when, after BODY_TIMEOUT_SECONDS, it
//     averages less than UPLOAD_MIN_BYTES_PER_SECOND. Time during which the server itself is
//     not reading (its buffer is full: the disk or the handler is the slow side) is not counted.
// The last two are watched here: one timer for all requests whose body is still arriving. A cut
// request gets 408 request_timeout in the envelope with `Connection: close` when nothing was
// answered yet, and its connection is closed in any case. Idle connections between requests are
// closed by keep-alive (Fastify's keepAliveTimeout) and the socket timeout (CONNECTION_TIMEOUT_SECONDS);
// clients slow to take their answer are cut by ./drain.ts.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TimeoutConfig } from '../config.ts';
import { ApiError } from '../errors.ts';

/** How often Node checks headersTimeout and requestTimeout (its default is 30 s). */
export const CHECK_INTERVAL_MS = 1000;

/** Fastify/Node server options of the limits Node enforces. */
export function serverTimeoutOptions(t: TimeoutConfig) {
  return {
    requestTimeout: t.requestSeconds * 1000,
    connectionTimeout: t.connectionSeconds * 1000,
    http: { headersTimeout: t.headersSeconds * 1000, connectionsCheckingInterval: CHECK_INTERVAL_MS },
  };
}

const envelope = (err: ApiError) => JSON.stringify(err.toJSON());

/**
 * Fastify's clientErrorHandler: Node's own refusals (headers or request too slow, unparsable
 * HTTP) in the envelope, written on the socket when no response has started on it, then closed.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const apiError =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request did not arrive in time (headers or body too slow); the connection is closed')
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? new ApiError('bad_request', 'Request headers are larger than this server accepts')
          : new ApiError('bad_request', 'Malformed HTTP request');
    const body = envelope(apiError);
    socket.write(
      `HTTP/1.1 ${apiError.status} ${apiError.status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

interface Watched {
  req: FastifyRequest;
  reply: FastifyReply;
  socket: Socket;
  multipart: boolean;
  start: number;
  last: number;
  /** socket.bytesRead when watching started and at the last tick. */
  bytes0: number;
  bytes: number;
  /** Time the upload was waiting on the client: idle since the last byte, and in all. */
  idleMs: number;
  clientMs: number;
}

export interface BodyTimeouts {
  /** How many requests are being watched (for tests). */
  readonly watching: number;
}

/**
 * Watches request bodies (onRequest hook) and cuts those too slow; `send` answers the 408.
 * Register before the routes.
 */
export function registerBodyTimeouts(
  app: FastifyInstance,
  t: TimeoutConfig,
  send: (reply: FastifyReply, err: ApiError) => unknown,
): BodyTimeouts {
  const bodyMs = t.bodySeconds * 1000;
  const idleMs = t.uploadIdleSeconds * 1000;
  const minRate = t.uploadMinBytesPerSecond;
  const tickMs = Math.max(100, Math.min(1000, Math.floor(Math.min(bodyMs, idleMs) / 4)));
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;

  function cut(w: Watched, why: string) {
    watched.delete(w);
    const { reply, socket } = w;
    if (reply.raw.headersSent || reply.sent) {
      socket.destroy();
      return;
    }
    reply.header('connection', 'close');
    send(reply, new ApiError('request_timeout', `The request body did not arrive in time: ${why}; the connection is closed`));
    // Node closes the connection once the answer is written (Connection: close); a client that
    // does not even read it is dropped.
    setTimeout(() => socket.destroy(), 2000).unref();
  }

  function tick() {
    const now = performance.now();
    for (const w of watched) {
      const raw = w.req.raw;
      if (raw.complete || w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      const dt = now - w.last;
      w.last = now;
      if (!w.multipart) {
        if (now - w.start > bodyMs) cut(w, `a body must arrive whole within ${t.bodySeconds} s`);
        continue;
      }
      // The server is the slow side when it stopped reading: its buffer is full.
      const serverBusy = raw.readableLength >= raw.readableHighWaterMark;
      const bytes = w.socket.bytesRead;
      if (bytes !== w.bytes) {
        w.bytes = bytes;
        w.idleMs = 0;
      } else if (!serverBusy) w.idleMs += dt;
      if (!serverBusy) w.clientMs += dt;
      if (w.idleMs >= idleMs) cut(w, `no bytes for ${t.uploadIdleSeconds} s`);
      else if (minRate > 0 && w.clientMs >= bodyMs && ((bytes - w.bytes0) * 1000) / w.clientMs < minRate) {
        cut(w, `an upload must average at least ${minRate} bytes/s`);
      }
    }
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    const socket = raw.socket;
    const headers = req.headers;
    const hasBody =
      headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    if (hasBody && !raw.complete && socket && !socket.destroyed) {
      const now = performance.now();
      const multipart = /^multipart\//i.test(headers['content-type'] ?? '');
      const bytes = socket.bytesRead;
      watched.add({ req, reply, socket, multipart, start: now, last: now, bytes0: bytes, bytes, idleMs: 0, clientMs: 0 });
      if (!timer) {
        timer = setInterval(tick, tickMs);
        timer.unref();
      }
    }
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    if (timer) clearInterval(timer);
    timer = undefined;
    watched.clear();
    done();
  });

  return {
    get watching() {
      return watched.size;
    },
  };
}
