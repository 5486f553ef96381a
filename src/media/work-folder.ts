// Temporary files under DATA_DIR/tmp, which every process using that DATA_DIR shares (API nodes,
// workers). Two kinds, each marked with the process that uses it (pid and start time, src/liveness.ts):
//   - a job's work folder, `tmp/<job name>/` (named after the job, not random, so an attempt that
//     follows a killed one starts by removing what the killed one left), with an `.owner` file;
//   - a process's own folder, `tmp/proc-<pid>-<start>/`, for loose temporary files (uploads being
//     received).
// The sweep (at every start, and in the maintenance job) removes what belongs to a process that is
// no longer alive, and unmarked leftovers older than a day; it never touches what a live process,
// on this machine, uses.
import { mkdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isAlive, selfIdentity } from '../liveness.ts';

const root = (dataDir: string) => path.join(dataDir, 'tmp');
const OWNER = '.owner';
const PROC_RE = /^proc-(\d+)-(\d+|x)$/;
/** Unmarked entries (older releases, stray files) are removed once untouched this long. */
const UNMARKED_MAX_AGE_MS = 24 * 3600 * 1000;

/** The empty work folder of one job attempt: `DATA_DIR/tmp/<name>`, emptied first if it exists, marked as this process's. */
export async function jobFolder(dataDir: string, name: string): Promise<string> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/.test(name) || PROC_RE.test(name)) throw new Error(`Invalid work folder name "${name}"`);
  const dir = path.join(root(dataDir), name);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, OWNER), JSON.stringify(selfIdentity()));
  return dir;
}

/** This process's folder for loose temporary files (created on first use). */
export function processTempFolder(dataDir: string): string {
  const { pid, start } = selfIdentity();
  const dir = path.join(root(dataDir), `proc-${pid}-${start ?? 'x'}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function ownerAlive(dir: string): Promise<boolean | undefined> {
  try {
    const owner = JSON.parse(await fs.readFile(path.join(dir, OWNER), 'utf8')) as { pid: number; start: string | null };
    return isAlive(owner.pid, owner.start);
  } catch {
    return undefined; // no owner file (yet)
  }
}

/**
 * Removes what processes that are gone left under DATA_DIR/tmp: work folders whose owner is dead,
 * process folders of dead processes, and unmarked entries untouched for `unmarkedMaxAgeMs`.
 * Returns the number of entries removed.
 */
export async function sweepWorkFolders(dataDir: string, unmarkedMaxAgeMs = UNMARKED_MAX_AGE_MS): Promise<number> {
  const entries = await fs.readdir(root(dataDir)).catch(() => [] as string[]);
  let removed = 0;
  for (const name of entries) {
    const p = path.join(root(dataDir), name);
    const st = await fs.stat(p).catch(() => undefined);
    if (!st) continue;
    let remove: boolean;
    const proc = PROC_RE.exec(name);
    if (proc && st.isDirectory()) remove = !isAlive(Number(proc[1]), proc[2] === 'x' ? undefined : proc[2]);
    else {
      const alive = st.isDirectory() ? await ownerAlive(p) : undefined;
      // A folder being created has no owner file for a moment: only an old unmarked one goes.
      remove = alive === undefined ? Date.now() - st.mtimeMs > unmarkedMaxAgeMs : !alive;
    }
    if (remove) {
      await fs.rm(p, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
