// Composition root: database, context, HTTP app and (unless API_ONLY) the job workers.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { loadConfig, type Config } from './config.ts';
import type { AppContext, Logger } from './context.ts';
import { connect, openDatabase, type Database } from './db/client.ts';
import { buildApp } from './http/app.ts';
import { bindHandlers } from './operations/registry.ts';
import { startBoss, startWorkers } from './jobs/boss.ts';
import { jobQueue } from './jobs/queue.ts';
import { configureMediaLimits } from './media/ffmpeg.ts';
import { createGuardedFetcher } from './net/guarded-fetch.ts';
import { createRateLimiter } from './services/rate-limit.ts';
import { oauthRateLimiters } from './services/oauth-limits.ts';
import { sharedSecret } from './services/secrets.ts';
import { localStorage } from './storage/index.ts';

export interface Service {
  app: FastifyInstance | undefined;
  ctx: AppContext;
  database: Database;
  boss: PgBoss | undefined;
  /** The address the API listens on, e.g. http://127.0.0.1:3000 (undefined for workers only). */
  address: string | undefined;
  stop(): Promise<void>;
}

export const consoleLogger = (level: string): Logger => {
  const quiet = level === 'silent';
  const line = (kind: string) => (obj: unknown, msg?: string) => {
    if (quiet) return;
    process.stderr.write(`${JSON.stringify({ level: kind, time: new Date().toISOString(), msg, ...(typeof obj === 'object' ? obj : { detail: obj }) })}\n`);
  };
  return { info: level === 'info' || level === 'debug' ? line('info') : () => {}, warn: line('warn'), error: line('error') };
};

export interface StartOptions {
  config?: Config;
  api?: boolean;
  workers?: boolean;
  log?: Logger;
}

export async function startService(opts: StartOptions = {}): Promise<Service> {
  const config = opts.config ?? loadConfig();
  const log = opts.log ?? consoleLogger(config.logLevel);
  configureMediaLimits({ maxMemoryMb: config.ffmpegMaxMemoryMb, maxPixels: config.mediaMaxPixels });
  const api = opts.api ?? true;
  const workers = opts.workers ?? !config.apiOnly;
  // Bind first: a contract/handler mismatch refuses boot before anything is started.
  const handlers = api ? bindHandlers() : undefined;
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: config.logLevel === 'debug' ? (l) => log.info({ pg: l }) : undefined,
  });
  let app: FastifyInstance | undefined;
  let boss: PgBoss | undefined;
  let address: string | undefined;
  let ctx: AppContext;
  let rateLimit: ReturnType<typeof connect> | undefined;
  try {
    boss = await startBoss(database.url, config, log, { supervise: workers });
    // Rate-limit counters need no durability (a lost increment after a crash is harmless), so their
    // connections commit without waiting for the WAL flush: the hot counter row stays cheap.
    rateLimit = connect(database.url, 4, { synchronous_commit: 'off' });
    const rateLimitDb = rateLimit.db;
    const secret = config.mediaSigningSecret ? Buffer.from(config.mediaSigningSecret) : await sharedSecret(database.db, 'media_url_signing');
    ctx = {
      config,
      db: database.db,
      sql: database.sql,
      log,
      storage: localStorage({
        root: path.join(config.dataDir, 'media'),
        publicBaseUrl: config.publicBaseUrl,
        secret,
        defaultTtlSeconds: config.mediaUrlTtlSeconds,
      }),
      queue: jobQueue(boss),
      rateLimiters: {
        generations: createRateLimiter(rateLimitDb, 'generations', config.rateLimitGenerations, config.rateLimitWindowSeconds),
        media_imports: createRateLimiter(rateLimitDb, 'media_imports', config.rateLimitMediaImports, config.rateLimitWindowSeconds),
        ...oauthRateLimiters(rateLimitDb, config),
      },
      fetcher: createGuardedFetcher({
        allowIps: config.outboundAllowIps,
        timeoutMs: config.outboundFetchTimeoutMs,
        maxBytes: config.outboundFetchMaxBytes,
      }),
    };
    if (api) {
      app = buildApp({ ctx, handlers }).app;
      await app.listen({ port: config.port, host: config.host });
      const addr = app.server.address();
      address = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : undefined;
    }
    if (workers) await startWorkers(boss, ctx);
  } catch (err) {
    await app?.close();
    await boss?.stop({ graceful: false }).catch(() => {});
    await rateLimit?.sql.end();
    await database.close();
    throw err;
  }
  return {
    app,
    ctx,
    database,
    boss,
    address,
    async stop() {
      await app?.close();
      await boss?.stop({ graceful: true, timeout: 10_000 });
      await rateLimit?.sql.end({ timeout: 5 });
      await database.close();
    },
  };
}
