// The import rules of docs/ARCHITECTURE.md hold: dependency-cruiser (.dependency-cruiser.cjs) finds no
// import from a layer of src/ into one above it (type-only imports included), no cycle of value
// imports, and scripts/ using only the pure modules of src/ (`npm run lint:imports`).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';

const cwd = new URL('../..', import.meta.url).pathname;
const cli = new URL('../../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url).pathname;
const r = await promisify(execFile)(
  process.execPath,
  [cli, '--config', '.dependency-cruiser.cjs', '--output-type', 'err', 'src', 'scripts', 'generated'],
  {
    cwd,
    maxBuffer: 16 << 20,
  },
).catch((e) => e);
t.equal(r.code ?? 0, 0, `dependency-cruiser:\n${r.stdout}${r.stderr}`);
t.match(r.stdout, /no dependency violations found \((\d{3,}) modules/, 'it read the whole tree');
