// How long a client may take to take its answer. A client that stops reading would otherwise hold
// its connection, the answer's file or S3 stream and Node's buffers for ever, and a pipelining
// one would have every request it sent answered into memory. Three rules:
//   - no bytes taken: a connection whose answer is being written is reset when the client takes
//     no byte of it for CONNECTION_TIMEOUT_SECONDS (Node's socket timeout does this too, but
//     counts the client's own bytes as traffic: one that trickles its next request never times
//     out, so it is watched here as well);
//   - too slow: an answer that, after RESPONSE_DRAIN_TIMEOUT_SECONDS of waiting on the client, has
//     been taken at less than RESPONSE_MIN_BYTES_PER_SECOND on average is cut. Time during which
//     the server itself has nothing to send (storage is the slow side) is not counted, so a large
//     download on a slow but live connection goes through, however long it takes;
//   - pipelining: the requests of one connection are handled one at a time, each once the answer
//     before it has been handed to the socket; a client that does not read gets no more work done
//     than what it takes.
// Such connections are reset (RST), not closed: a polite close (FIN) queues behind the unsent
// answer in the kernel, which keeps the connection, and its buffers, for minutes while the client
// does not read. One timer for all answers being written, as for request bodies (./timeouts.ts).
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { TimeoutConfig } from '../config.ts';

/** Node's own fields of a server socket read here (stable since Node 0.x, not in its types). */
type ServerSocket = Socket & {
  /** The answer being written on the connection. */
  _httpMessage?: ServerResponse | null;
  /** Bytes handed to libuv (bytesWritten without what still waits in the stream's buffer). */
  _bytesDispatched?: number;
  _handle?: { writeQueueSize?: number } | null;
};

/** Bytes of its answers the kernel has taken from this connection (a client that does not read stops it). */
function bytesTaken(socket: ServerSocket): number {
  return (socket._bytesDispatched ?? 0) - (socket._handle?.writeQueueSize ?? 0);
}

/** True while an answer is being written on the connection: started and unfinished, or bytes not yet taken. */
function answering(socket: ServerSocket): boolean {
  const res = socket._httpMessage;
  return socket.writableLength > 0 || (!!res && res.headersSent && !res.writableFinished);
}

/**
 * Closes a connection: reset when an answer is being written (the kernel drops what the client
 * did not take, and the client learns at once), else closed normally.
 */
export function dropConnection(socket: Socket): void {
  if (socket.destroyed) return;
  if (answering(socket)) {
    try {
      socket.resetAndDestroy();
      return;
    } catch {
      // not a TCP socket: closed below
    }
  }
  socket.destroy();
}

interface Draining {
  res: ServerResponse;
  socket: ServerSocket;
  last: number;
  /** bytesTaken() when watching started and at the last change. */
  taken0: number;
  taken: number;
  /** Time the answer waited on the client: since it last took a byte, and in all. */
  stalledMs: number;
  clientMs: number;
}

/** A connection's requests: whether one is being answered, and those waiting for it. */
interface Connection {
  busy: boolean;
  waiting: (() => void)[];
}

/** One timer for all answers being written: those whose client takes no byte, or too few, are cut. */
function drainWatcher(t: TimeoutConfig) {
  const stallMs = t.connectionSeconds * 1000;
  const drainMs = t.responseDrainSeconds * 1000;
  const minRate = t.responseMinBytesPerSecond;
  const tickMs = Math.max(100, Math.min(1000, Math.floor(Math.min(drainMs, stallMs || drainMs) / 4)));
  const watched = new Set<Draining>();
  let timer: NodeJS.Timeout | undefined;

  /** False when the answer must be cut. */
  function check(w: Draining, now: number): boolean {
    const dt = now - w.last;
    w.last = now;
    // The client is the slow side when Node holds bytes it has not taken.
    const waiting = w.socket.writableLength > 0;
    const taken = bytesTaken(w.socket);
    if (taken !== w.taken) {
      w.taken = taken;
      w.stalledMs = 0;
    } else if (waiting) w.stalledMs += dt;
    if (waiting) w.clientMs += dt;
    if (stallMs > 0 && w.stalledMs >= stallMs) return false;
    return !(minRate > 0 && w.clientMs >= drainMs && ((taken - w.taken0) * 1000) / w.clientMs < minRate);
  }

  function tick() {
    const now = performance.now();
    for (const w of watched) {
      if (w.res.writableFinished || w.socket.destroyed) watched.delete(w);
      else if (!check(w, now)) {
        watched.delete(w);
        dropConnection(w.socket);
      }
    }
    if (watched.size === 0) stop();
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = undefined;
    watched.clear();
  }

  return {
    watch(res: ServerResponse, socket: ServerSocket) {
      const taken = bytesTaken(socket);
      watched.add({ res, socket, last: performance.now(), taken0: taken, taken, stalledMs: 0, clientMs: 0 });
      if (!timer) {
        timer = setInterval(tick, tickMs);
        timer.unref();
      }
    },
    stop,
  };
}

/**
 * The requests of one connection one at a time: `go` runs at once, or once the answer before has
 * been handed to the socket (or the connection closed: then `go` finds the socket destroyed).
 */
function oneAtATime() {
  const connections = new WeakMap<Socket, Connection>();
  function connectionOf(socket: Socket): Connection {
    let conn = connections.get(socket);
    if (!conn) {
      const c: Connection = (conn = { busy: false, waiting: [] });
      connections.set(socket, c);
      socket.once('close', () =>
        c.waiting.splice(0).forEach((go) => {
          go();
        }),
      );
    }
    return conn;
  }
  return (socket: Socket, res: ServerResponse, go: () => void) => {
    const conn = connectionOf(socket);
    const start = () => {
      if (socket.destroyed) return go();
      conn.busy = true;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        conn.busy = false;
        const next = conn.waiting.shift();
        if (next) queueMicrotask(next); // after Node has moved the connection on to the next answer
      };
      res.once('finish', release);
      res.once('close', release);
      go();
    };
    if (conn.busy) conn.waiting.push(start);
    else start();
  };
}

/** Watches answers being written and handles pipelined requests one at a time. Register before any other onRequest hook. */
export function registerResponseDrain(app: FastifyInstance, t: TimeoutConfig): void {
  const watcher = drainWatcher(t);
  const inTurn = oneAtATime();
  app.addHook('onRequest', (req, reply, done) => {
    const socket = req.raw.socket as ServerSocket;
    inTurn(socket, reply.raw, () => {
      // The connection went while this request waited: it is dropped unanswered.
      if (socket.destroyed) return void reply.hijack();
      watcher.watch(reply.raw, socket);
      done();
    });
  });
  // Node's socket timeout (CONNECTION_TIMEOUT_SECONDS, and keep-alive's): with a listener here Node
  // leaves the closing to it, so a connection whose answer is being written is reset.
  app.server.on('timeout', (socket: Socket) => dropConnection(socket));
  app.addHook('onClose', (_instance, done) => {
    watcher.stop();
    done();
  });
}
