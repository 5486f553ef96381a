// The guard every render child process runs under (ffmpeg and ffprobe, the speech synthesizer):
// a /bin/sh leading a process group of its own, which limits the program's address space
// (ulimit -v), runs it, and beside it a watchdog that kills the whole group the moment the Node
// process that spawned the shell is gone, so no render outlives its worker (kill -9 included).
//
// Node has no PR_SET_PDEATHSIG. The watchdog blocks reading a pipe (fd 3 of the shell) whose other
// end only that Node process holds (libuv opens it close-on-exec, so no other child inherits it):
// the kernel closes it as the process exits, before the process is even reaped, and the read
// returns at once. It used to poll the parent's pid once a second, which took up to a second plus
// the poll's own process starts, and longer while the dead worker was a zombie not yet reaped
// (kill -0 still found it). The program does not get fd 3 (3<&-); an abort kills the group.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

const GUARD = [
  'limit=$1; shift',
  // The watchdog: end of file on fd 3 means the Node process is gone; kill -9 0 is the whole group.
  '( read -r _ <&3; kill -9 0 ) </dev/null >/dev/null 2>&1 &',
  'watchdog=$!',
  '[ "$limit" -gt 0 ] && ulimit -v "$limit" 2>/dev/null',
  '"$@" 3<&-',
  'code=$?',
  'kill "$watchdog" 2>/dev/null',
  'exit "$code"',
].join('\n');

export interface GuardOptions {
  cwd?: string;
  /** The program's stdin: nothing (default), or a pipe the caller writes. */
  stdin?: 'ignore' | 'pipe';
  /** Address-space limit of the program in MiB (0 or unset: none; V8 programs need none). */
  maxMemoryMb?: number;
}

/** Spawns `program` under the guard; stdout and stderr are pipes. */
export function spawnGuarded(program: string, args: string[], opts: GuardOptions = {}): ChildProcess {
  const stdin = opts.stdin ?? 'ignore';
  if (process.platform === 'win32') return spawn(program, args, { stdio: [stdin, 'pipe', 'pipe'], cwd: opts.cwd });
  const limitKb = Math.max(0, Math.floor((opts.maxMemoryMb ?? 0) * 1024));
  const child = spawn('/bin/sh', ['-c', GUARD, 'media-guard', String(limitKb), program, ...args], {
    stdio: [stdin, 'pipe', 'pipe', 'pipe'],
    cwd: opts.cwd,
    detached: true,
  });
  // The watchdog's pipe: nothing is ever written on it; it ends when the guard exits.
  (child.stdio[3] as Readable | null)?.on('error', () => {});
  return child;
}

/** Kills a guarded run: its whole process group (the shell, the program, the watchdog). */
export function killGuarded(child: ChildProcess): void {
  try {
    if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
