// npm run contract:diff: the breaking-change gate. Compares spec/openapi.yaml with the newest
// released contract in spec/released/ (openapi-<version>.json) and exits 1 when it has a breaking
// change (removed operation or field, new required input, narrowed enum or type, changed or
// removed status, …) while info.version keeps the released major. Rules: scripts/lib/contract-diff.ts.
// Usage: node scripts/contract-diff.ts [--spec FILE] [--against FILE] [--release]
//   --spec FILE     check this contract (YAML or JSON) instead of spec/openapi.yaml
//   --against FILE  compare with this released contract instead of the newest one
//   --release       record the current contract as spec/released/openapi-<info.version>.json
//                   (refused when that file exists: a released contract is never rewritten)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { contractDiff, formatResult } from './lib/contract-diff.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const releasedDir = path.join(root, 'spec/released');
const args = process.argv.slice(2);
const specFile = args.includes('--spec') ? path.resolve(args[args.indexOf('--spec') + 1]) : path.join(root, 'spec/openapi.yaml');
const specText = fs.readFileSync(specFile, 'utf8');
// A .json contract is read as JSON: the same document (JSON is YAML), parsed many times faster.
const current = specFile.endsWith('.json') ? JSON.parse(specText) : parseYaml(specText);

if (args.includes('--release')) {
  const file = path.join(releasedDir, `openapi-${current.info.version}.json`);
  if (fs.existsSync(file)) {
    console.error(`${path.relative(root, file)} exists; a released contract is never rewritten (raise info.version first)`);
    process.exit(1);
  }
  fs.mkdirSync(releasedDir, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
  console.error(`recorded ${path.relative(root, file)}`);
  process.exit(0);
}

/** The released contracts, newest version first. */
function releasedFiles(): string[] {
  const semver = (f: string) => (/openapi-(\d+)\.(\d+)\.(\d+)\.json$/.exec(f) ?? []).slice(1).map(Number);
  return (fs.existsSync(releasedDir) ? fs.readdirSync(releasedDir) : [])
    .filter((f) => semver(f).length === 3)
    .sort((a, b) => {
      const [x, y] = [semver(a), semver(b)];
      return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
    })
    .map((f) => path.join(releasedDir, f));
}

const against = args.includes('--against') ? path.resolve(args[args.indexOf('--against') + 1]) : releasedFiles()[0];
if (!against) {
  console.error('no released contract in spec/released/ (record one with --release)');
  process.exit(1);
}
const released = JSON.parse(fs.readFileSync(against, 'utf8'));
const result = contractDiff(released, current);
console.log(`${path.relative(root, against)}\n${formatResult(result)}`);
process.exit(result.ok ? 0 : 1);
