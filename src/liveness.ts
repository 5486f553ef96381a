// Is a process still alive? For the files processes sharing one DATA_DIR leave for each other
// (the embedded PostgreSQL's peers, the owners of work folders under DATA_DIR/tmp): a pid plus
// its start time, so a pid reused by another process after a crash does not count as alive.
import { readFileSync } from 'node:fs';

/** State and start time (clock ticks since boot) of a process, from /proc (Linux); undefined elsewhere or when gone. */
export function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid … starttime(22nd field) …": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}

/** This process's identity as recorded in such files. */
export function selfIdentity(): { pid: number; start: string | null } {
  return { pid: process.pid, start: procStat(process.pid)?.start ?? null };
}

/** True when `pid` is a live process (not a zombie), and the same one as recorded when `start` is given. */
export function isAlive(pid: number, start?: string | null): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  const stat = procStat(pid);
  if (!stat) return false;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return start === undefined || start === null || stat.start === start;
}
