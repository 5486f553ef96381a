// Database connection: postgres.js + drizzle. `openDatabase` resolves DATABASE_URL or the
// embedded cluster, applies committed migrations under an advisory lock (several processes
// may start at once) and returns the handles every service uses.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema/index.ts';
import { startEmbedded, type EmbeddedDatabase } from './embedded.ts';

export type Db = PostgresJsDatabase<typeof schema>;
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

export function connect(url: string, max = 20, settings: Record<string, string> = {}): { db: Db; sql: Sql } {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    // Session settings sent at connection start (e.g. synchronous_commit for non-durable counters).
    connection: settings,
  });
  return { sql, db: drizzle(sql, { schema }) };
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize?: number;
  log?: (line: string) => void;
}

export async function openDatabase({ databaseUrl, dataDir, poolSize, log }: OpenOptions): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = databaseUrl;
  if (!url) {
    embedded = await startEmbedded({ dataDir, log });
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
