// The binder refuses to boot when handlers and the contract disagree, in either direction, for
// operations and MCP-only tools alike (both are entries of the operation index).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { bindHandlers, BindError, HANDLER_MODULES } from '../../src/operations/registry.ts';
import { operationIndex } from '../../src/operations/executor.ts';
import { PENDING_MCP_TOOLS, PENDING_OPERATIONS } from '../../src/operations/pending.ts';

const ops = operationIndex.operations;
const tools = operationIndex.mcpOnlyTools;

t.test('the real handlers bind every operation and every MCP-only tool of the spec', async (t) => {
  const bound = bindHandlers();
  t.same([...bound.keys()].sort(), [...ops, ...tools].map((o) => o.operationId).sort());
  t.ok(
    tools.length >= 6 && tools.every((x) => x.transport === 'mcp' && x.method === null),
    'MCP-only tools are index entries with no method',
  );
});

t.test('an MCP-only tool without a handler refuses boot, naming it', async (t) => {
  const withoutVoices = Object.fromEntries(
    Object.entries(HANDLER_MODULES).map(([k, m]) => [k, Object.fromEntries(Object.entries(m).filter(([id]) => id !== 'recommend_voice'))]),
  );
  let caught: unknown;
  try {
    bindHandlers(withoutVoices as never);
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof BindError, 'a BindError');
  t.throws(() => bindHandlers(withoutVoices as never), /MCP-only tool recommend_voice has no handler/);
  const extra = [...tools, { operationId: 'frobnicate_widgets', aliasOf: null, responses: {} }];
  t.throws(() => bindHandlers(HANDLER_MODULES, ops, PENDING_OPERATIONS, extra), /MCP-only tool frobnicate_widgets has no handler/);
  // A pending tool is bound (to not_implemented) without a handler; one with a handler is refused
  // (a synthetic one: every tool of the spec has its handler now).
  const pendingTools = new Set([...PENDING_MCP_TOOLS, 'frobnicate_widgets']);
  t.ok(bindHandlers(HANDLER_MODULES, ops, PENDING_OPERATIONS, extra, pendingTools).has('frobnicate_widgets'), 'bound to not_implemented');
  const modules = { ...HANDLER_MODULES, stray: { frobnicate_widgets: () => ({}) } } as never;
  t.throws(
    () => bindHandlers(modules, ops, PENDING_OPERATIONS, extra, pendingTools),
    /MCP-only tool frobnicate_widgets has a handler but is still listed as pending/,
  );
});

t.test('an operation without a handler refuses boot, naming it', async (t) => {
  const extra = [...ops, { operationId: 'frobnicateWidgets', aliasOf: null, responses: { '200': {} } }];
  let caught: unknown;
  try {
    bindHandlers(HANDLER_MODULES, extra);
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof BindError, 'a BindError');
  t.throws(() => bindHandlers(HANDLER_MODULES, extra), /operation frobnicateWidgets has no handler/);
});

t.test('a handler without an operation refuses boot, naming it', async (t) => {
  const modules = { ...HANDLER_MODULES, stray: { frobnicateWidgets: () => ({}) } } as never;
  t.throws(() => bindHandlers(modules), /handler frobnicateWidgets has no operation/);
});

t.test('an implemented operation missing from its module refuses boot', async (t) => {
  const { listModels: _gone, ...catalogRest } = HANDLER_MODULES.catalog as Record<string, unknown>;
  t.throws(() => bindHandlers({ ...HANDLER_MODULES, catalog: catalogRest } as never), /operation listModels has no handler/);
});

t.test('the pending list and the spec 501s must agree', async (t) => {
  const pending = new Set([...PENDING_OPERATIONS, 'listModels']);
  t.throws(() => bindHandlers(HANDLER_MODULES, ops, pending), /listModels has a handler but is still listed as pending/);
  t.throws(() => bindHandlers(HANDLER_MODULES, ops, pending), /pending operation listModels does not declare its 501/);
  // An operation whose spec still declares the 501 after its capability landed (no operation is
  // pending today, so one is given a 501 here).
  const with501 = ops.map((o) => (o.operationId === 'getGeneration' ? { ...o, responses: { ...o.responses, '501': {} } } : o));
  t.throws(() => bindHandlers(HANDLER_MODULES, with501, PENDING_OPERATIONS), /getGeneration declares 501 in the spec but is not pending/);
});

/**
 * A copy of the project whose spec `edit` changes, regenerated (generated/ only: the SDK plays no
 * part in the start), then started against a database that does not exist: the generator's result,
 * the index it wrote, and the start's exit status and stderr.
 */
async function startWithEditedSpec(t: Test, edit: (spec: any) => void) {
  const root = new URL('../..', import.meta.url).pathname;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // generated/ is not copied: the generator writes all of it.
  for (const d of ['src', 'spec', 'scripts']) fs.cpSync(path.join(root, d), path.join(dir, d), { recursive: true });
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  // The spec as generated/openapi.json holds it (the freshness test keeps the two equal; JSON reads
  // far faster than YAML), written back as JSON, which is YAML too.
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'generated/openapi.json'), 'utf8'));
  edit(spec);
  fs.writeFileSync(path.join(dir, 'spec/openapi.yaml'), JSON.stringify(spec));
  const gen = spawnSync(process.execPath, ['scripts/generate.ts', '--out', 'generated'], { cwd: dir, encoding: 'utf8' });
  const index = gen.status === 0 ? JSON.parse(fs.readFileSync(path.join(dir, 'generated/operations.json'), 'utf8')) : undefined;
  const start = spawnSync(process.execPath, ['src/main.ts'], {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', PORT: '0' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { gen, index, start };
}

// One edited copy gains both an operation and an MCP-only tool nobody handles (a regeneration and a
// start each cost seconds): the binder lists every disagreement, so the refusal names both; each one
// alone is a BindError in the tests above.
t.test('the server refuses to start when the spec gains an operation or an MCP-only tool nobody handles', async (t) => {
  const { gen, index, start } = await startWithEditedSpec(t, (spec) => {
    spec.paths['/frobnicate'] = {
      get: { ...structuredClone(spec.paths['/models'].get), operationId: 'frobnicateWidgets', 'x-mcp-tools': [] },
    };
    const getWorkspace = spec['x-mcp-only-tools'].find((x: { name: string }) => x.name === 'get_workspace');
    spec['x-mcp-only-tools'].push({
      ...structuredClone(getWorkspace),
      name: 'frobnicate_widgets',
      description: 'A tool added to the spec in a test, with no handler.',
    });
  });
  t.equal(gen.status, 0, gen.stderr);
  t.ok(
    index.operations.some((x: { operationId: string }) => x.operationId === 'frobnicateWidgets'),
    'the operation is an entry of the index',
  );
  t.ok(
    index.mcpOnlyTools.some((x: { operationId: string }) => x.operationId === 'frobnicate_widgets'),
    'the tool is an entry of the index',
  );
  t.equal(start.status, 78, 'exit code 78 (configuration error), before touching the database');
  t.match(start.stderr, /Refusing to start: the handlers and the contract disagree/);
  t.match(start.stderr, /operation frobnicateWidgets has no handler/);
  t.match(start.stderr, /MCP-only tool frobnicate_widgets has no handler/);
});
