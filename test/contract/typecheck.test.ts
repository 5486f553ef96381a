// The whole project type-checks against the generated types (tsc --noEmit).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';

const cwd = new URL('../..', import.meta.url).pathname;
const r = await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { cwd, maxBuffer: 16 << 20 }).catch((e) => e);
t.equal(r.code ?? 0, 0, `tsc:\n${r.stdout}`);
