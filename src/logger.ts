// The one logger of every process: pino, one JSON object per line on stdout, level from LOG_LEVEL.
// The API hands the same instance to Fastify (its request logs, `req.log`), so handlers, workers
// and the HTTP layer write the same format; workers-only processes and the admin CLI use it alone.
import { pino, type Logger as PinoLogger } from 'pino';

export type AppLogger = PinoLogger;

export function createLogger(level: string, bindings: Record<string, unknown> = {}): AppLogger {
  return pino({
    level,
    base: { pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names rather than pino's numbers: `{"level":"info",…}` reads the same in a terminal and a log store.
    formatters: { level: (label) => ({ level: label }) },
  });
}
