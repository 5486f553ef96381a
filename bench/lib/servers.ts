// Helpers for benchmarks: start the real service or a bare Fastify baseline in child
// processes (so the load generator in this process does not share their event loop).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

const root = path.resolve(import.meta.dirname, '../..');

export interface Running {
  url: string;
  stop(): Promise<void>;
  /** CPU time (user + system) the server process has used so far, in µs; undefined off Linux. */
  cpuMicros?(): number | undefined;
}

// Clock ticks per second of /proc/<pid>/stat (USER_HZ): 100 on every Linux build that matters.
const USER_HZ = 100;

/** utime + stime of a process from /proc, in µs (undefined where /proc is missing). */
function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ;
  } catch {
    return undefined;
  }
}

function waitFor(child: ChildProcess, re: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = re.exec(out);
      if (m) resolve(m);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${out}`)));
  });
}

const stopper = (child: ChildProcess, cleanup?: () => void) => async () => {
  if (child.exitCode === null) {
    const done = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await done;
  }
  cleanup?.();
};

/** The service as `npm start` runs it (API only), on embedded PostgreSQL unless DATABASE_URL is set. */
export async function startService(env: Record<string, string> = {}): Promise<Running> {
  const dataDir = process.env.DATABASE_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-'));
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      API_ONLY: '1',
      LOG_LEVEL: 'warn',
      DEMO_WORKSPACE: '0',
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const m = await waitFor(child, /API listening on (\S+)\/api\/v1/, 'service');
  return {
    url: m[1],
    stop: stopper(child, () => dataDir && fs.rmSync(dataDir, { recursive: true, force: true })),
    cpuMicros: () => processCpuMicros(child.pid),
  };
}

/** A bare Fastify server answering one route with fixed bytes: the ceiling for a static GET. */
export async function startBare(route: string, body: Buffer, contentType: string): Promise<Running> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bare-')), 'body');
  fs.writeFileSync(file, body);
  const child = spawn(process.execPath, [path.join(root, 'bench/lib/bare-server.ts'), route, file, contentType], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const m = await waitFor(child, /listening on (\S+)/, 'bare server');
  return { url: m[1], stop: stopper(child, () => fs.rmSync(path.dirname(file), { recursive: true, force: true })) };
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Requests completed in the run. */
  total: number;
}

export async function load(
  url: string,
  opts: {
    duration?: number;
    connections?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    idReplacement?: boolean;
  } = {},
): Promise<LoadResult> {
  const r = await autocannon({
    url,
    duration: opts.duration ?? 5,
    connections: opts.connections ?? 32,
    method: (opts.method ?? 'GET') as 'GET',
    headers: opts.headers,
    body: opts.body,
    // `[<id>]` in headers/body becomes a fresh id per request (e.g. unique idempotency keys).
    idReplacement: opts.idReplacement ?? false,
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx, total: r.requests.total };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
