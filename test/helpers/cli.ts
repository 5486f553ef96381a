// Runs the admin CLI as a process, as operators do. `npm run -s admin -- …` is what the README says;
// it runs `node src/cli/admin.ts …`, which is what the tests call (an npm process per command costs
// more than the command itself). test/cli/admin.test.ts runs one command through npm as well.
// `adminInProcess` runs the same command (src/cli/admin-commands.ts's runAdmin: same parsing, same
// output, same exit code) in the test's own process, for tests about a command's behaviour rather
// than the process: a CLI process costs about 1 s of CPU to load its modules. Each command family
// keeps at least one real-process run (`admin`) proving the process prints it and exits with its code.
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

export async function adminInProcess(env: Record<string, string>, args: string[]): Promise<CliResult> {
  const { runAdmin } = await import('../../src/cli/admin-commands.ts');
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, { ...process.env, ...env }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  let json: unknown;
  if (code === 0) {
    try {
      json = JSON.parse(stdout);
    } catch {}
  }
  return { code, stdout, stderr, json };
}
