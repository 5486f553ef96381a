// The real service as a child process (Node 24, `node src/main.ts`) for the fault tests: its
// output, its base URL once it listens, its exit, and the JSON log lines it wrote.
import { spawn, type ChildProcess } from 'node:child_process';
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
export function startService(t: Test, name: string, env: Record<string, string>, opts: { script?: string; ready?: RegExp } = {}): ServiceProcess {
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
export const errorLines = (out: string) => logLines(out).filter((l) => l.level === 'error' || l.level === 'fatal' || l.level === 50 || l.level === 60);

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000, every = 100): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(every)) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}
