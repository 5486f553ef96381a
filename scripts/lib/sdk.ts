// The TypeScript SDK in sdk/src/: @hey-api/openapi-ts run over the bundled contract (the same
// JSON as generated/openapi.json), with its fetch client bundled into the output (sdk/src/client/
// and sdk/src/core/), so the SDK needs nothing outside the repository at run time. Imports carry
// `.ts` extensions so Node runs the sources as they are (type stripping) and `tsc` checks them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@hey-api/openapi-ts';

/** Where the generated SDK sources live, relative to the repository root. */
export const SDK_SOURCE_DIR = 'sdk/src';

/** Generates the SDK from the bundled contract into a new temporary folder and returns its files (relative path → content). */
export async function buildSdk(bundled: object): Promise<Record<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-'));
  try {
    await createClient({
      // A copy: the generator annotates the document it is given.
      input: structuredClone(bundled) as Record<string, unknown>,
      output: { path: dir, module: { extension: '.ts' }, tsConfigPath: null, clean: true },
      logs: { level: 'silent', file: false },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    });
    return readTree(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every file under `dir` (relative path → content), in a stable order. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const file = path.join(dir, rel);
    if (fs.statSync(file).isFile()) out[rel.split(path.sep).join('/')] = fs.readFileSync(file, 'utf8');
  }
  return out;
}

/** Replaces `dir` with exactly `files`. */
export function writeTree(dir: string, files: Record<string, string>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

/** The relative paths where `dir` differs from `files` (stale, missing or not generated). */
export function staleFiles(dir: string, files: Record<string, string>): string[] {
  const have = readTree(dir);
  const stale = Object.entries(files)
    .filter(([rel, content]) => have[rel] !== content)
    .map(([rel]) => rel);
  for (const rel of Object.keys(have)) if (!(rel in files)) stale.push(`${rel} (not generated)`);
  return stale;
}
