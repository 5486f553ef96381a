// The real service as a child process (Node 24, `node src/main.ts`) for the fault tests: its
// output, its base URL once it listens, its exit, and the JSON log lines it wrote; and the
// processes below a pid, read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';

const root = path.resolve(import.meta.dirname, '../..');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Resolves once the API listens (or the worker runs). */
  ready: Promise<void>;
  output(): string;
  base(): string;
  /** Exit code (or 128 + signal number), and when. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  alive(): boolean;
}

/** Starts `script` (default: the API) with `env` on top of the test environment; killed in teardown. */
export function startService(
  t: Test,
  name: string,
  env: Record<string, string>,
  opts: { script?: string; ready?: RegExp } = {},
): ServiceProcess {
  const child = spawn(process.execPath, [opts.script ?? 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DEMO_WORKSPACE: '0', JOB_HEARTBEAT_SECONDS: '10', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const ready = opts.ready ?? /API listening on \S+/;
  const waitReady = (async () => {
    for (const deadline = Date.now() + 60_000; !ready.test(out); await sleep(50)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not become ready:\n${out}`);
    }
  })();
  waitReady.catch(() => {});
  return {
    name,
    child,
    pid: child.pid!,
    ready: waitReady,
    output: () => out,
    base: () => /API listening on (\S+)\/api\/v1/.exec(out)![1],
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/** Every JSON log line of a process's output (the banner lines are plain text). */
export function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** The error- and fatal-level log lines of a process. */
export const errorLines = (out: string) =>
  logLines(out).filter((l) => l.level === 'error' || l.level === 'fatal' || l.level === 50 || l.level === 60);

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000, every = 100): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(every)) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

/** Pid → parent pid, state letter and arguments of every process, from /proc. */
function processTable(): Map<number, { ppid: number; state: string; argv: string[] }> {
  const out = new Map<number, { ppid: number; state: string; argv: string[] }>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(name), { ppid: Number(ppid), state, argv: fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').slice(0, -1) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The live (not zombie) descendants of `pid`, with their arguments (`argv[0]` the program). */
export function descendants(pid: number): { pid: number; argv: string[] }[] {
  const all = processTable();
  const found: { pid: number; argv: string[] }[] = [];
  const walk = (parent: number) => {
    for (const [p, info] of all) {
      if (info.ppid !== parent) continue;
      if (info.state !== 'Z') found.push({ pid: p, argv: info.argv });
      walk(p);
    }
  };
  walk(pid);
  return found;
}

/** Whether `pid` is a process that has not exited (a zombie has). */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Milliseconds until none of `pids` is alive (-1: not within `ms`), polling /proc every 5 ms
 * WITHOUT returning to the event loop: a child of this process that was killed stays a zombie,
 * unreaped, while this waits (as under a busy supervisor), so what is measured cannot depend on
 * when the dead process is reaped.
 */
export function goneWithin(pids: number[], ms: number): number {
  const started = Date.now();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() - started <= ms) {
    if (!pids.some(alive)) return Date.now() - started;
    Atomics.wait(pause, 0, 0, 5);
  }
  return -1;
}
