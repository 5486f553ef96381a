// npm run generate: compiles spec/openapi.yaml into generated/.
//   openapi.json            the contract as JSON (served at GET /api/v1/openapi.json)
//   openapi.d.ts            openapi-typescript types (paths, operations, components)
//   operations.json         the operation index: method, path, scopes, params, statuses, MCP tools;
//                           the MCP-only tools as entries of the same shape (no method or path)
//   mcp-only-tools.d.ts     the input and output types of the MCP-only tools, by tool name
//   enums.ts                the values of every string enum of components/schemas (`<Schema>Values`)
//   request-validators.cjs  AJV standalone validators for JSON request bodies (no coercion)
//   param-validators.cjs    AJV standalone validators for path/query/header parameters
//   *-validators-fast.cjs   the request-side validators again, stopping at the first error
//   response-validators.cjs AJV standalone validators for every declared response
//   response-header-validators.cjs  the same for declared response headers (used by the tests only)
//   skill.md                agent instructions derived from the spec (and the catalog's prices), ≤ 40 KiB;
//                           when the contract needs more, an index (≤ 24 KiB) linking skill-<area>.md pages (each ≤ 40 KiB)
//   mcp-tools.json          the MCP tool table: names, compact portable schemas, annotations, routing
//                           (tools/list ≤ 64 KiB, each tool ≤ 16 KiB)
// and from spec/catalog-data.schema.yaml (the JSON Schema of the catalog data files):
//   catalog-validators.cjs  AJV standalone validators for spec/catalog.yaml, voices.yaml, avatars.yaml
//   catalog-data.d.ts       the types of those documents
//   catalog-data.json       those documents, as the service reads them
// and from the bundled contract, with @hey-api/openapi-ts (scripts/lib/sdk.ts):
//   ../sdk/src/             the TypeScript SDK (types, one function per operation, the bundled fetch client)
// Generation fails when a catalog data file breaks the schema or the cross-checks of
// src/services/catalog/catalog-checks.ts (every problem named by file and JSON path).
// Usage: node scripts/generate.ts [--out DIR] [--check]
//   --check regenerates into a temporary folder and exits 1 when generated/ or sdk/src/ differs.
//   --out DIR writes generated/ there and leaves sdk/src/ alone (the SDK is not built).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { buildArtifacts, buildCatalogArtifacts } from './lib/codegen.ts';
import { buildSdk, SDK_SOURCE_DIR, staleFiles, writeTree } from './lib/sdk.ts';
import { CATALOG_FILES, CatalogDataError, crossCheckProblems } from '../src/services/catalog/catalog-checks.ts';
import type { CatalogSources } from '../src/services/catalog/catalog-data.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const outArg = args.indexOf('--out');
const outDir = check
  ? fs.mkdtempSync(path.join(os.tmpdir(), 'generated-'))
  : path.resolve(outArg >= 0 ? args[outArg + 1] : path.join(root, 'generated'));

const specPath = path.join(root, 'spec/openapi.yaml');
const spec = parseYaml(fs.readFileSync(specPath, 'utf8'));
const started = Date.now();
// The catalog's prices go into skill.md (the files themselves are checked below).
const readYaml = (file: string) => parseYaml(fs.readFileSync(path.join(root, file), 'utf8'));
const skillCatalog = { catalog: readYaml(CATALOG_FILES.catalog.file), voices: readYaml(CATALOG_FILES.voices.file)?.voices };
const files = await buildArtifacts(spec, (msg) => process.stderr.write(`generate: ${msg}\n`), skillCatalog);

// The catalog data files: schema validators and types, then the files checked with them.
try {
  const read = (file: string) => parseYaml(fs.readFileSync(path.join(root, file), 'utf8'));
  const docs = Object.fromEntries(Object.entries(CATALOG_FILES).map(([key, f]) => [key, { ...f, data: read(f.file) }]));
  const schema = read('spec/catalog-data.schema.yaml');
  Object.assign(files, await buildCatalogArtifacts(schema, Object.values(docs), (msg) => process.stderr.write(`generate: ${msg}\n`)));
  // The documents as JSON, which the service reads at start-up (parsing the YAML cost every process
  // about 0.2 s of CPU).
  files['catalog-data.json'] = `${JSON.stringify(Object.fromEntries(Object.entries(docs).map(([key, d]) => [key, d.data])))}\n`;
  const problems = crossCheckProblems({
    catalog: docs.catalog.data,
    voices: docs.voices.data.voices,
    avatars: docs.avatars.data.avatars,
  } as CatalogSources);
  if (problems.length) throw new CatalogDataError(problems);
} catch (err) {
  if (!(err instanceof CatalogDataError)) throw err;
  console.error(`generate: ${err.message}`);
  if (check) fs.rmSync(outDir, { recursive: true, force: true });
  process.exit(1);
}

// With --out the SDK would not be written, so it is not built either (a fifth of the run).
const sdk = outArg >= 0 && !check ? {} : await buildSdk(JSON.parse(files['openapi.json']));

fs.mkdirSync(outDir, { recursive: true });
const wanted = new Set(Object.keys(files));
for (const old of fs.readdirSync(outDir)) if (!wanted.has(old)) fs.rmSync(path.join(outDir, old), { recursive: true });
for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(outDir, name), content);

if (check) {
  const real = path.join(root, 'generated');
  const stale: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(real, name);
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== content) stale.push(name);
  }
  for (const extra of fs.existsSync(real) ? fs.readdirSync(real) : []) if (!wanted.has(extra)) stale.push(`${extra} (not generated)`);
  stale.push(...staleFiles(path.join(root, SDK_SOURCE_DIR), sdk).map((rel) => `${SDK_SOURCE_DIR}/${rel}`));
  fs.rmSync(outDir, { recursive: true });
  if (stale.length) {
    console.error(`generated/ is stale; run \`npm run generate\` and commit: ${stale.join(', ')}`);
    process.exit(1);
  }
  console.error(`generated/ is up to date (and ${SDK_SOURCE_DIR}/)`);
} else {
  if (outArg < 0) writeTree(path.join(root, SDK_SOURCE_DIR), sdk);
  process.stderr.write(
    `generate: wrote ${wanted.size} files to ${path.relative(root, outDir) || outDir}${outArg < 0 ? ` and ${Object.keys(sdk).length} to ${SDK_SOURCE_DIR}` : ''} in ${Date.now() - started} ms\n`,
  );
}
