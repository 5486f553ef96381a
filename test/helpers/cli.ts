// Runs the admin CLI as a process, as operators do. `npm run -s admin -- …` is what the README says;
// it runs `node src/cli/admin.ts …`, which is what the tests call (an npm process per command costs
// more than the command itself). test/cli/admin.test.ts runs one command through npm as well.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed when the command succeeded and printed JSON. */
  json: any;
}

export async function admin(env: Record<string, string>, args: string[], opts: { viaNpm?: boolean } = {}): Promise<CliResult> {
  const [cmd, argv] = opts.viaNpm ? ['npm', ['run', '-s', 'admin', '--', ...args]] : [process.execPath, ['src/cli/admin.ts', ...args]];
  try {
    const { stdout, stderr } = await run(cmd, argv, { cwd: root, env: { ...process.env, ...env } });
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {}
    return { code: 0, stdout, stderr, json };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, json: undefined };
  }
}
