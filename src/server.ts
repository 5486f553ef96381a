// Composition root: database, context, HTTP app and (unless API_ONLY) the job workers, and the
// one ordered stop: HTTP closed (in-flight requests finish), jobs drained up to the grace period
// then released for another worker, pg-boss and the LISTEN connection stopped, pools closed, the
// embedded PostgreSQL stopped last.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { checkImageModels } from './boot/image-models.ts';
import { loadConfig, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import { ShutdownRequested } from './lifecycle.ts';
import { createLogger, type AppLogger } from './logger.ts';
import { readiness } from './services/platform/health.ts';
import { connect, openDatabase, type Database } from './db/client.ts';
import { buildApp } from './http/app.ts';
import { buildMetricsOnlyApp } from './http/metrics.ts';
import { bindHandlers } from './operations/registry.ts';
import { startBoss, startWorkers } from './jobs/boss.ts';
import { JOBS } from './pipelines/index.ts';
import { jobQueue } from './jobs/queue.ts';
import { configureMediaLimits } from './media/ffmpeg.ts';
import { stopOcr } from './media/ocr.ts';
import { sweepWorkFolders } from './media/work-folder.ts';
import { createGuardedFetcher } from './net/guarded-fetch.ts';
import { createRateLimiter } from './services/billing/rate-limit.ts';
import { oauthRateLimiters } from './services/oauth/oauth-limits.ts';
import { sharedSecret } from './services/platform/secrets.ts';
import { createStorage, type Storage } from './storage/index.ts';

export interface Service {
  app: FastifyInstance | undefined;
  ctx: AppContext;
  database: Database;
  boss: PgBoss | undefined;
  /** True when this process runs the job workers (false for API_ONLY=1 nodes). */
  workers: boolean;
  /** The address the API listens on, e.g. http://127.0.0.1:3000 (workers only: their /metrics, when METRICS_TOKEN is set; else undefined). */
  address: string | undefined;
  stop(): Promise<void>;
}

export interface StartOptions {
  config?: Config;
  api?: boolean;
  workers?: boolean;
  /** The process's logger (src/logger.ts); one is made from LOG_LEVEL when omitted. */
  log?: AppLogger;
  /** Aborted by a signal during start-up: what was started is stopped and ShutdownRequested is thrown. */
  signal?: AbortSignal;
}

/** At the end of the grace period, how long requests received whole may still take to answer. */
const FINISH_AFTER_GRACE_MS = 1000;

/** Resolves with `work`, or after `ms` with 'late' (work keeps running). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, ms))));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a started service holds until it stops (stop() closes it in order). */
interface Running {
  config: Config;
  log: AppLogger;
  database: Database;
  app: FastifyInstance | undefined;
  /** Requests not answered yet, for the end of the grace period. */
  pending: Set<IncomingMessage>;
  boss: PgBoss | undefined;
  rateLimit: ReturnType<typeof connect> | undefined;
  storage: Storage | undefined;
  /** Aborted when stop() begins. */
  stopping: AbortController;
}

export async function startService(opts: StartOptions = {}): Promise<Service> {
  const config = opts.config ?? loadConfig();
  const log = opts.log ?? createLogger(config.logLevel);
  const checkSignal = () => {
    if (opts.signal?.aborted) throw opts.signal.reason instanceof ShutdownRequested ? opts.signal.reason : new ShutdownRequested('signal');
  };
  configureMediaLimits({ maxMemoryMb: config.ffmpegMaxMemoryMb, maxPixels: config.mediaMaxPixels });
  const api = opts.api ?? true;
  const workers = opts.workers ?? !config.apiOnly;
  // The image models the pipelines are configured with are the catalog's, or boot is refused.
  checkImageModels(config);
  // Bind first: a contract/handler mismatch refuses boot before anything is started.
  const handlers = api ? bindHandlers() : undefined;
  checkSignal();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: config.logLevel === 'debug' ? (l) => log.info({ pg: l }) : undefined,
    events: log,
  });
  // r.stopping is aborted when stop() begins: /readyz answers 503 from then on, and jobs cut short by the end
  // of the grace period are released for retry rather than failed.
  const r: Running = {
    config,
    log,
    database,
    app: undefined,
    pending: new Set(),
    boss: undefined,
    rateLimit: undefined,
    storage: undefined,
    stopping: new AbortController(),
  };
  let queueUp = false;
  let address: string | undefined;
  let ctx: AppContext;
  try {
    checkSignal();
    const boss = await startBoss(database.url, config, log, JOBS, { supervise: workers });
    r.boss = boss;
    queueUp = true;
    boss.on('stopped', () => (queueUp = false));
    checkSignal();
    // Rate-limit counters need no durability (a lost increment after a crash is harmless), so their
    // connections commit without waiting for the WAL flush: the hot counter row stays cheap.
    r.rateLimit = connect(database.url, 4, { synchronous_commit: 'off' });
    r.storage = await openStorage(config, database);
    ctx = appContext(r, boss, r.storage, r.rateLimit.db, () => queueUp);
    // Temporary files and work folders processes that are gone left in DATA_DIR/tmp (a killed worker or upload).
    const swept = await sweepWorkFolders(config.dataDir);
    if (swept) log.info({ swept }, 'removed temporary files of processes that are gone');
    checkSignal();
    // A worker process with METRICS_TOKEN listens too, for GET /metrics alone (src/http/metrics.ts).
    r.app = api ? buildApp({ ctx, handlers, logger: log }).app : config.metricsToken ? buildMetricsOnlyApp(ctx, log) : undefined;
    if (r.app) address = await listen(r.app, config, r.pending);
    checkSignal();
    if (workers) await startWorkers(boss, ctx, JOBS);
    checkSignal();
  } catch (err) {
    await abortStart(r);
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    app: r.app,
    ctx,
    database,
    boss: r.boss,
    workers,
    address,
    stop() {
      stopped ??= stopService(r);
      return stopped;
    },
  };
}

/** The storage backend, checked: a missing bucket or refused credentials stop start-up here (StorageUnavailable). */
async function openStorage(config: Config, database: Database): Promise<Storage> {
  const secret = config.mediaSigningSecret ? Buffer.from(config.mediaSigningSecret) : await sharedSecret(database.db, 'media_url_signing');
  const storage = await createStorage(config, secret);
  await storage.check();
  return storage;
}

/** The context every handler and job gets. */
function appContext(
  r: Running,
  boss: PgBoss,
  storage: Storage,
  rateLimitDb: ReturnType<typeof connect>['db'],
  queueUp: () => boolean,
): AppContext {
  const { config, database } = r;
  return {
    config,
    db: database.db,
    sql: database.sql,
    log: r.log,
    storage,
    queue: jobQueue(boss),
    rateLimiters: {
      generations: createRateLimiter(rateLimitDb, 'generations', config.rateLimitGenerations, config.rateLimitWindowSeconds),
      media_imports: createRateLimiter(rateLimitDb, 'media_imports', config.rateLimitMediaImports, config.rateLimitWindowSeconds),
      ...oauthRateLimiters(rateLimitDb, config),
    },
    stopping: r.stopping.signal,
    readiness: () => readiness(database.sql, { queueUp, stopping: () => r.stopping.signal.aborted }),
    fetcher: createGuardedFetcher({
      allowIps: config.outboundAllowIps,
      timeoutMs: config.outboundFetchTimeoutMs,
      maxBytes: config.outboundFetchMaxBytes,
    }),
  };
}

/** Listens on PORT/HOST, tracking requests not answered yet in `pending`; returns the address listened on. */
async function listen(app: FastifyInstance, config: Config, pending: Set<IncomingMessage>): Promise<string | undefined> {
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    pending.add(req);
    res.once('close', () => pending.delete(req));
  });
  await app.listen({ port: config.port, host: config.host });
  const addr = app.server.address();
  return typeof addr === 'object' && addr
    ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`
    : undefined;
}

/** Start-up failed or was interrupted: what was started is stopped at once (no grace period). */
async function abortStart(r: Running): Promise<void> {
  r.stopping.abort();
  await r.app?.close();
  await r.boss?.stop({ graceful: false }).catch(() => {});
  await stopOcr();
  await r.rateLimit?.sql.end();
  r.storage?.close();
  await r.database.close();
}

/** The one ordered stop (see the top of this file). */
async function stopService(r: Running): Promise<void> {
  const graceMs = r.config.shutdownGraceSeconds * 1000;
  const deadline = Date.now() + graceMs;
  r.stopping.abort();
  // 1. No new requests; those in flight finish (up to the grace period, then their connections are cut).
  if (r.app) await closeHttp(r.app, r.pending, r.config, r.log);
  // 2. Running jobs finish within what is left of the grace period; pg-boss then fails (releases)
  //    the rest, so they are retried by another worker or after a restart, and closes its pool
  //    and its LISTEN connection.
  await r.boss?.stop({ graceful: true, timeout: Math.max(1000, deadline - Date.now()), close: true });
  // The OCR worker thread of reference analysis, if one was started.
  await stopOcr();
  // 3. The pools (the auth_changed LISTEN connection is ctx.sql's), then the embedded PostgreSQL, last.
  await r.rateLimit?.sql.end({ timeout: 5 });
  r.storage?.close();
  await r.database.close();
}

/** Closes the HTTP server: in-flight requests finish within the grace period, then their connections are cut. */
async function closeHttp(app: FastifyInstance, pending: Set<IncomingMessage>, config: Config, log: AppLogger): Promise<void> {
  const graceMs = config.shutdownGraceSeconds * 1000;
  const server = app.server;
  const closing = app.close();
  if ((await within(closing, graceMs)) !== 'late') return;
  // Requests whose body is still arriving (slow uploads) are cut first; those received
  // whole get a moment to answer, so what they stored is acknowledged, not left unanswered.
  let cut = 0;
  for (const req of pending) {
    if (req.complete) continue;
    req.socket.destroy();
    cut++;
  }
  if (cut)
    log.warn(
      { grace_seconds: config.shutdownGraceSeconds, requests: cut },
      'requests still arriving at the end of the grace period: connections closed',
    );
  if ((await within(closing, FINISH_AFTER_GRACE_MS)) === 'late') {
    log.warn({ grace_seconds: config.shutdownGraceSeconds }, 'requests still running at the end of the grace period: connections closed');
    server.closeAllConnections();
  }
}
