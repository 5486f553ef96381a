// A lost database: which errors mean "PostgreSQL is unreachable right now" (answered 503
// service_unavailable, retryable, instead of 500), and a guard against a postgres.js bug that
// throws a TypeError outside any handler when connections drop under load.
import { ApiError } from '../errors.ts';
import { recyclePools } from './client.ts';

/** Seconds a client should wait before retrying a request refused because the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Socket-level codes of a refused, reset or timed-out connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

/** postgres.js's own connection error codes (its src/errors.js). */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);

/**
 * PostgreSQL SQLSTATEs of a server going away: 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up or in recovery), and class 08 (connection exception).
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03']);

function unavailableCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  return SOCKET_CODES.has(code) || DRIVER_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/**
 * True when `err` (or what it wraps: drizzle's DrizzleQueryError keeps the driver's error as
 * `cause`; a connection to several addresses fails with an AggregateError) says the database
 * cannot be reached, as opposed to a query the database refused.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (unavailableCode(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/** The 503 answered while the database is unreachable. */
export function databaseUnavailable(headers: Record<string, string> = {}): ApiError {
  return new ApiError(
    'service_unavailable',
    `The database is unreachable right now; retry in ${DATABASE_RETRY_AFTER_SECONDS} s (with the same idempotency key for writes)`,
    { retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS },
    { ...headers, 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * postgres.js 3.4.9 can throw a TypeError from its socket event handlers (src/connection.js)
 * when PostgreSQL drops connections while queries are in flight (upstream issues #1154 and
 * #1208, fixes unreleased). Thrown from an event listener, it reaches no caller: it is an
 * uncaught exception, which ends the process. This recognises exactly that error: a TypeError
 * whose innermost frame is in postgres.js's connection.js.
 */
export function isPostgresDriverCrash(err: unknown): boolean {
  if (!(err instanceof TypeError) || typeof err.stack !== 'string') return false;
  const frame = err.stack.split('\n').find((line) => /^\s+at /.test(line));
  return frame !== undefined && DRIVER_CONNECTION.test(frame);
}

const DRIVER_CONNECTION = /[\\/]node_modules[\\/]postgres[\\/](src|cjs[\\/]src|cf[\\/]src)[\\/]connection\.js/;

/**
 * The same bug's other face: when PostgreSQL drops a connection mid-transaction, the driver also
 * rejects a promise of its own that nobody awaits (the ROLLBACK it sends on the dead connection),
 * with the drop's own error (57P01 `terminating connection due to administrator command`,
 * CONNECTION_CLOSED …). Recognised as an unhandled rejection whose reason is a lost-connection
 * error raised inside postgres.js's connection.js; the request it belonged to was already answered 503.
 */
export function isPostgresDriverOrphanRejection(err: unknown, origin: string): boolean {
  if (origin !== 'unhandledRejection' || !isDatabaseUnavailable(err) || typeof (err as Error).stack !== 'string') return false;
  const stack = (err as Error).stack!;
  return DRIVER_CONNECTION.test(stack) || isBareSocketError(err as Error & { code?: unknown; syscall?: unknown });
}

/**
 * The same orphan when the drop reaches the driver as the socket's own error (`read ECONNRESET`,
 * `write EPIPE`): postgres.js rejects its pending promises with Node's error object as it is, so
 * the stack holds only Node's own frames (`at TCP.onStreamRead (node:internal/…)`, `node:net`) and no
 * frame of any code that could have awaited it.
 */
function isBareSocketError(err: Error & { code?: unknown; syscall?: unknown }): boolean {
  if (typeof err.code !== 'string' || !SOCKET_CODES.has(err.code) || typeof err.syscall !== 'string') return false;
  const frames = err.stack!.split('\n').filter((line) => /^\s+at /.test(line));
  return frames.length > 0 && frames.every((line) => /\(?node:[a-z_/]+:\d+:\d+\)?$/.test(line.trim()));
}

let guardInstalled = false;
let recycleScheduled = false;

/**
 * Keeps the process alive through the postgres.js TypeError and orphan rejection above (logged as errors), and
 * replaces the pools (src/db/client.ts `recyclePools`: the connection it came from is stuck for
 * good otherwise). The transaction it came from was already rejected (CONNECTION_CLOSED: 503).
 * Any other uncaught exception still ends the process as Node would (printed, exit code 1).
 */
export function guardPostgresDriverCrash(log: { error(obj: object, msg: string): void }): void {
  if (guardInstalled) return;
  guardInstalled = true;
  process.on('uncaughtException', (err, origin) => {
    if (isPostgresDriverCrash(err) || isPostgresDriverOrphanRejection(err, origin)) {
      log.error(
        { err: { message: err.message, stack: err.stack } },
        'postgres.js threw outside any handler while the database connection dropped (known driver bug): the pools are replaced',
      );
      // One replacement for a burst of them (every transaction cut at once throws its own).
      if (!recycleScheduled) {
        recycleScheduled = true;
        setTimeout(() => {
          recycleScheduled = false;
          recyclePools();
        }, 100).unref();
      }
      return;
    }
    // Not ours to keep: behave as Node does without a listener.
    process.removeAllListeners('uncaughtException');
    process.stderr.write(
      `${origin === 'unhandledRejection' ? 'Unhandled rejection' : 'Uncaught exception'}: ${(err as Error)?.stack ?? String(err)}\n`,
    );
    process.exit(1);
  });
}
