// The house style is checked: Biome's formatter and linter (biome.jsonc) over src/, scripts/, test/
// and bench/ report nothing to change and no error (`biome ci`: read only, warnings allowed).
// `npm run lint:fix` writes the formatting and the safe fixes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';

const cwd = new URL('../..', import.meta.url).pathname;
const biome = new URL('../../node_modules/@biomejs/biome/bin/biome', import.meta.url).pathname;
const r = await promisify(execFile)(process.execPath, [biome, 'ci', '--colors=off', '--max-diagnostics=50'], {
  cwd,
  maxBuffer: 16 << 20,
}).catch((e) => e);
t.equal(r.code ?? 0, 0, `biome ci:\n${r.stdout}${r.stderr}`);
