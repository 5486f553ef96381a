// Per-job work folders under DATA_DIR/tmp. A job's folder is named after the job (not random), so
// an attempt that follows a killed one starts by removing what the killed one left; the sweep at
// worker start removes folders no attempt has touched for a day (jobs that were never retried here).
import fs from 'node:fs/promises';
import path from 'node:path';

const root = (dataDir: string) => path.join(dataDir, 'tmp');

/** The empty work folder of one job attempt: `DATA_DIR/tmp/<name>`, emptied first if it exists. */
export async function jobFolder(dataDir: string, name: string): Promise<string> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/.test(name)) throw new Error(`Invalid work folder name "${name}"`);
  const dir = path.join(root(dataDir), name);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

/** Removes work folders (and stray files) under DATA_DIR/tmp not modified for `olderThanMs`. */
export async function sweepWorkFolders(dataDir: string, olderThanMs = 24 * 3600 * 1000): Promise<number> {
  const entries = await fs.readdir(root(dataDir)).catch(() => [] as string[]);
  let removed = 0;
  for (const name of entries) {
    const p = path.join(root(dataDir), name);
    const st = await fs.stat(p).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > olderThanMs) {
      await fs.rm(p, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
