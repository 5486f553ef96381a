// generated/ is exactly what `npm run generate` makes from the spec, and the spec lints clean.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const cwd = new URL('../..', import.meta.url).pathname;

t.test('generated/ is fresh', async (t) => {
  const r = await run(process.execPath, ['scripts/generate.ts', '--check'], { cwd }).catch((e) => e);
  t.equal(r.code ?? 0, 0, `generate --check: ${r.stderr}`);
  t.match(r.stderr, /generated\/ is up to date/);
});

// The commands of `npm run lint:spec`, each run straight from node_modules/.bin with this Node
// (no npm and shell processes around them), both at once.
t.test('the spec lints with zero errors (Redocly recommended, Spectral oas + OWASP)', async (t) => {
  const script: string = JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8')).scripts['lint:spec'];
  const commands = script.split(' && ').map((c) => c.trim().split(/\s+/));
  t.same(
    commands.map(([bin]) => bin),
    ['redocly', 'spectral'],
    `lint:spec runs Redocly then Spectral: ${script}`,
  );
  const results = await Promise.all(
    commands.map(([bin, ...args]) =>
      run(process.execPath, [path.join('node_modules/.bin', bin), ...args], { cwd, maxBuffer: 16 * 1024 * 1024 }).catch((e) => e),
    ),
  );
  for (const [i, r] of results.entries()) t.equal(r.code ?? 0, 0, `${commands[i].join(' ')} output:\n${r.stdout}\n${r.stderr}`);
});

t.test('the generated validators contain no require of anything but ajv runtime pieces', async (t) => {
  for (const f of [
    'request-validators.cjs',
    'param-validators.cjs',
    'response-validators.cjs',
    'response-header-validators.cjs',
    'catalog-validators.cjs',
  ]) {
    const code = fs.readFileSync(new URL(`../../generated/${f}`, import.meta.url), 'utf8');
    const requires = [...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    for (const r of requires) t.match(r, /^(ajv|ajv-formats)\//, `${f} requires ${r}`);
  }
});
