// The whole project type-checks against the generated types (tsc --noEmit), with TypeScript 7's native
// compiler (the `typescript7` alias; `typescript` itself stays 5.x for the generators, which use its
// JavaScript API). Its executable is run directly, on one checker thread: the suite runs other files
// beside it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { tsc7 } from '../helpers/tsc.ts';

const cwd = new URL('../..', import.meta.url).pathname;
const r = await promisify(execFile)(await tsc7(), ['-p', 'tsconfig.json', '--singleThreaded'], { cwd, maxBuffer: 16 << 20 }).catch(
  (e) => e,
);
t.equal(r.code ?? 0, 0, `tsc:\n${r.stdout}${r.stderr}`);
