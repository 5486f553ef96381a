// What every handler and worker may use: configuration, the database and the shared services.
import type { Config } from './config.ts';
import type { Db, Sql } from './db/client.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { GuardedFetcher } from './net/guarded-fetch.ts';
import type { Readiness } from './services/platform/health.ts';
import type { RateLimiter } from './services/billing/rate-limit.ts';
import type { Storage } from './storage/index.ts';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export interface AppContext {
  config: Config;
  db: Db;
  sql: Sql;
  log: Logger;
  storage: Storage;
  queue: JobQueue;
  /** Rate limiters by policy name (the spec's `x-rate-limit`). */
  rateLimiters: Record<string, RateLimiter>;
  /** The one client for user-supplied URLs. */
  fetcher: GuardedFetcher;
  /** Aborted when the service begins to stop (a job cut short by it is released for retry, not failed). */
  stopping: AbortSignal;
  /** What GET /readyz reports: the database answers, migrations are applied, the queue is up. */
  readiness(): Promise<Readiness>;
}
