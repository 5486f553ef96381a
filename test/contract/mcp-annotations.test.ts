// MCP tool annotations are declared in the spec (x-mcp-annotations on every operation with tools
// and on every MCP-only tool), checked by the spec lint, and used by the generator as written.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { buildIndex, buildMcpTools, declaredAnnotations, type JsonObject } from '../../scripts/lib/codegen.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const specText = fs.readFileSync(path.join(root, 'spec/openapi.yaml'), 'utf8');
const KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];

type Finding = { code: string; message: string; path: string[] };

/** Spectral with our ruleset over a changed copy of the spec; the findings of the annotation rule. */
async function lintCopy(t: Test, change: (spec: any) => void): Promise<{ code: number; findings: Finding[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-annotations-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const spec = parse(specText);
  change(spec);
  // openapi.yaml by name: the ruleset's overrides name that file.
  fs.writeFileSync(path.join(dir, 'openapi.yaml'), JSON.stringify(spec));
  const r = await run(
    process.execPath,
    [
      path.join(root, 'node_modules/.bin/spectral'),
      'lint',
      '--fail-severity',
      'error',
      '-r',
      path.join(root, 'spec/spectral.mjs'),
      '-f',
      'json',
      path.join(dir, 'openapi.yaml'),
    ],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  ).catch((e) => e);
  const all = JSON.parse(r.stdout) as Finding[];
  return { code: r.code ?? 0, findings: all.filter((f) => f.code === 'media-api:mcp-annotations') };
}

t.test('the spec lint refuses a tool without annotations, an unknown key and a missing one', async (t) => {
  const { code, findings } = await lintCopy(t, (spec) => {
    delete spec.paths['/models'].get['x-mcp-annotations'];
    spec.paths['/generations'].post['x-mcp-annotations'].safeHint = true;
    const only = spec['x-mcp-only-tools'].find((x: { name: string }) => x.name === 'get_workspace');
    delete only['x-mcp-annotations'].openWorldHint;
    const publish = spec['x-mcp-only-tools'].find((x: { name: string }) => x.name === 'publish_media_to_social');
    delete publish['x-mcp-annotations'];
  });
  t.not(code, 0, 'the lint fails');
  const at = findings.map((f) => `${f.path.join('.')}: ${f.message}`).sort();
  t.equal(findings.length, 4, at.join('\n'));
  t.match(
    at.find((x) => x.startsWith('paths./models.get:')),
    /must declare x-mcp-annotations/,
  );
  t.match(
    at.find((x) => x.startsWith('paths./generations.post.x-mcp-annotations.safeHint')),
    /unknown MCP annotation "safeHint"/,
  );
  t.match(
    at.find((x) => /^x-mcp-only-tools\.\d+\.x-mcp-annotations:/.test(x)),
    /openWorldHint must be declared/,
  );
  t.match(
    at.find((x) => /^x-mcp-only-tools\.\d+:/.test(x)),
    /must declare x-mcp-annotations/,
  );
});

t.test('the spec as committed: every tool declares exactly the four annotations', async (t) => {
  const { findings } = await lintCopy(t, () => {});
  t.same(findings, []);
});

t.test('the generator refuses what the lint refuses, and uses the declaration, not the HTTP method', async (t) => {
  t.throws(() => declaredAnnotations('listModels', undefined), /listModels must declare x-mcp-annotations/);
  t.throws(
    () => declaredAnnotations('x', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false, more: true }),
    /unknown key\(s\) in x-mcp-annotations: more/,
  );
  t.throws(() => declaredAnnotations('x', { readOnlyHint: true, destructiveHint: false, idempotentHint: true }), /openWorldHint must be/);
  const spec = parse(specText) as JsonObject;
  const rows = buildMcpTools(spec, buildIndex(spec));
  const declared = new Map<string, unknown>();
  for (const item of Object.values(spec.paths as Record<string, Record<string, any>>))
    for (const op of Object.values(item)) for (const tool of op?.['x-mcp-tools'] ?? []) declared.set(tool.name, op['x-mcp-annotations']);
  for (const tool of spec['x-mcp-only-tools'] as any[]) declared.set(tool.name, tool['x-mcp-annotations']);
  for (const row of rows) {
    t.same(Object.keys(row.annotations), KEYS, `${row.name}: the four hints`);
    t.same(row.annotations, declared.get(row.name), `${row.name}: as declared`);
  }
  const by = new Map(rows.map((r) => [r.name, r.annotations]));
  // Where a method guess was wrong: a GET that fetches the URLs it is given, a POST that
  // overwrites, a DELETE of an export and a POST that reaches a hosted model.
  t.match(by.get('suggest_reference_template_targets'), { readOnlyHint: true, openWorldHint: true });
  t.match(by.get('rotate_webhook_endpoint_secret'), { readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  t.match(by.get('create_generation'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
  t.match(by.get('create_editor_video'), { openWorldHint: false });
  t.match(by.get('delete_workspace_asset'), { destructiveHint: true, idempotentHint: true });
});
