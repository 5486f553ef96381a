// Database connection: postgres.js + drizzle. `openDatabase` resolves DATABASE_URL or the
// embedded cluster, applies committed migrations under an advisory lock (several processes
// may start at once) and returns the handles every service uses.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema/index.ts';
import { startEmbedded, type EmbeddedDatabase, type EmbeddedEvents } from './embedded.ts';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction of `Db` (what `db.transaction` hands its callback). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Sql = postgres.Sql;

export interface Database {
  db: Db;
  sql: Sql;
  url: string;
  embedded: EmbeddedDatabase | undefined;
  close(): Promise<void>;
}

const MIGRATIONS = fileURLToPath(new URL('./drizzle', import.meta.url));
const MIGRATION_LOCK = 727_001; // pg_advisory_lock key for schema migrations

export async function runMigrations(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    await sql.end();
  }
}

/** `when` of the newest committed migration (drizzle's journal); 0 when there is none. */
function newestMigration(): number {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as { entries: { when: number }[] };
  return Math.max(0, ...journal.entries.map((e) => e.when));
}

/** True when the database has every committed migration (drizzle records each one's `when` as created_at). */
export async function migrationsApplied(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ newest: string | null }[]>`
    select max(created_at)::text as newest from drizzle.__drizzle_migrations`;
  return Number(row?.newest ?? 0) >= newestMigration();
}

/**
 * How the pools behave when PostgreSQL goes away and comes back. postgres.js reconnects by
 * itself, but by default waits `backoff(retries)` seconds before a closed connection connects
 * again, with `retries` counted for the whole pool and growing as 3^n / 100 s up to 20 s:
 * after an outage of a few seconds the first request after PostgreSQL is back waited 4-9 s
 * (it was measured so). Here the wait is at most half a second, so a request during an outage
 * fails fast (503) and the first one after it connects at once. A connection attempt to an
 * address that does not answer (no refusal) gives up after DB_CONNECT_TIMEOUT_SECONDS instead
 * of postgres.js's 30 s.
 */
export const DB_CONNECT_TIMEOUT_SECONDS = 5;
export const DB_RECONNECT_BACKOFF_MAX_SECONDS = 0.5;
export const reconnectBackoff = (retries: number): number =>
  Math.min(DB_RECONNECT_BACKOFF_MAX_SECONDS, 0.05 * 2 ** Math.max(0, retries - 1));

/** Every pool made by `connect` and not ended yet (see `recyclePools`). */
const pools = new Set<{ recycle(): void }>();

/**
 * Replaces every open pool with a fresh one. For the postgres.js 3.4.9 bug that src/db/outage.ts
 * catches: when PostgreSQL drops a connection in the middle of a transaction, postgres.js sends
 * the ROLLBACK on the closed connection and throws a TypeError outside any handler, and that
 * connection object stays stuck for good (its next start-up message is never sent: every query
 * given to it waits for the connect timeout and fails). Only a new pool gets rid of it. Queries
 * and transactions already running finish on the old pool, which is then ended (stuck
 * connections cut after 5 s); LISTENs are moved to the new pool.
 */
export function recyclePools(): number {
  for (const p of pools) p.recycle();
  return pools.size;
}

type Listener = { channel: string; fn: (payload: string) => void; onlisten?: () => void; unlisten?: () => Promise<void> };

export function connect(url: string, max = 20, settings: Record<string, string> = {}): { db: Db; sql: Sql } {
  const make = (): Sql => {
    const pool = postgres(url, {
      max,
      onnotice: () => {},
      connect_timeout: DB_CONNECT_TIMEOUT_SECONDS,
      backoff: reconnectBackoff,
      // Session settings sent at connection start (e.g. synchronous_commit for non-durable counters).
      connection: settings,
    });
    drizzle(pool, { schema }); // drizzle sets its type parsers on the client it is given
    return pool;
  };
  let current = make();
  let ended = false;
  const listeners = new Set<Listener>();
  const listen = async (channel: string, fn: (payload: string) => void, onlisten?: () => void) => {
    const entry: Listener = { channel, fn, onlisten };
    const { state, unlisten } = await current.listen(channel, fn, onlisten);
    entry.unlisten = unlisten;
    listeners.add(entry);
    return {
      state,
      unlisten: async () => {
        listeners.delete(entry);
        await entry.unlisten?.();
      },
    };
  };
  // LISTEN again on a replacement pool; while the database is still going away the first try can
  // fail, so it is retried (every 500 ms) until it holds, the pool is replaced again, or the end.
  const relisten = (l: Listener, pool: Sql): void => {
    pool.listen(l.channel, l.fn, l.onlisten).then(
      (r) => (l.unlisten = r.unlisten),
      () => {
        if (!ended && pool === current && listeners.has(l)) setTimeout(() => relisten(l, pool), 500).unref();
      },
    );
  };
  const end = async (options?: { timeout?: number }) => {
    ended = true;
    pools.delete(handle);
    await current.end(options);
  };
  // One stable handle for the whole process (services keep it), forwarding to the current pool.
  const sql = new Proxy(function pool() {} as unknown as Sql, {
    apply: (_target, thisArg, args) => Reflect.apply(current as unknown as (...a: unknown[]) => unknown, thisArg, args),
    get: (_target, prop) => {
      if (prop === 'listen') return listen;
      if (prop === 'end') return end;
      const value = Reflect.get(current, prop, current) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
  const handle = {
    recycle() {
      if (ended) return;
      const old = current;
      current = make();
      for (const l of listeners) {
        const oldUnlisten = l.unlisten;
        relisten(l, current);
        void oldUnlisten?.().catch(() => {});
      }
      void old.end({ timeout: 5 }).catch(() => {});
    },
  };
  pools.add(handle);
  return { sql, db: drizzle(sql, { schema }) };
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize?: number;
  log?: (line: string) => void;
  /** Embedded PostgreSQL: what its supervision reports (a restart after a crash …). */
  events?: EmbeddedEvents;
  /** Embedded PostgreSQL: watch the postmaster and restart it when it dies (default true). */
  supervise?: boolean;
}

export async function openDatabase({ databaseUrl, dataDir, poolSize, log, events, supervise = true }: OpenOptions): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = databaseUrl;
  if (!url) {
    embedded = await startEmbedded({ dataDir, log, events, supervise });
    url = embedded.url;
  }
  try {
    await runMigrations(url);
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  const { db, sql } = connect(url, poolSize);
  return {
    db,
    sql,
    url,
    embedded,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}
