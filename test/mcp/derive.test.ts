// Tools are derived from the spec: adding an operation with x-mcp-tools to the spec adds its
// tool (schema merged from its parameters, routed back to the operation) with no other change;
// the generator refuses tool tables popular clients would reject; the binder checks the
// MCP-only tools both ways.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildIndex, buildMcpTools, toToolSchema, type JsonObject } from '../../scripts/lib/codegen.ts';
import { connect as connectDb } from '../../src/db/client.ts';
import { operationIndex } from '../../src/operations/executor.ts';
import { bindHandlers, HANDLER_MODULES } from '../../src/operations/registry.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../helpers/app.ts';

const root = new URL('../..', import.meta.url).pathname;
// spec/openapi.yaml as generated/openapi.json holds it (kept equal by the freshness test; JSON reads far faster).
const realSpec = JSON.parse(fs.readFileSync(path.join(root, 'generated/openapi.json'), 'utf8')) as JsonObject;

t.test('a new operation in the spec becomes a tool of the running server, with no other change', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-mcp-derive-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // generated/ is not copied: the generator writes all of it.
  for (const d of ['src', 'spec', 'scripts']) fs.cpSync(path.join(root, d), path.join(dir, d), { recursive: true });
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  // The copy's spec is written as JSON (which is YAML too).
  const spec = structuredClone(realSpec) as any;
  // An alias of GET /assets (so it binds to an existing handler) with a query parameter of its own.
  const op = structuredClone(spec.paths['/assets'].get);
  op.operationId = 'listAssetsAgain';
  op['x-alias-of'] = 'listAssets';
  op.summary = 'List workspace assets again';
  op['x-mcp-tools'] = [
    { name: 'list_workspace_assets_again', description: 'The workspace assets, from a path added to the spec in a test.' },
  ];
  op.parameters = [
    {
      name: 'limit',
      in: 'query',
      required: false,
      description: 'A limit.',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 10 },
    },
  ];
  spec.paths['/assets-again'] = { get: op };
  fs.writeFileSync(path.join(dir, 'spec/openapi.yaml'), JSON.stringify(spec));
  const gen = spawnSync(process.execPath, ['scripts/generate.ts', '--out', 'generated'], { cwd: dir, encoding: 'utf8' });
  t.equal(gen.status, 0, gen.stderr);

  const { tools } = JSON.parse(fs.readFileSync(path.join(dir, 'generated/mcp-tools.json'), 'utf8'));
  const row = tools.find((x: { name: string }) => x.name === 'list_workspace_assets_again');
  t.match(row, {
    operationId: 'listAssetsAgain',
    title: 'List workspace assets again',
    description: 'The workspace assets, from a path added to the spec in a test.',
    inputSchema: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 10, description: 'A limit.' } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false },
    scopes: ['generations:read', 'generations:write'],
    routes: { limit: 'query' },
  });
  t.notOk('format' in row.inputSchema.properties.limit, 'OpenAPI-only format int32 is dropped');

  // The server of the copy serves it.
  const databaseUrl = await createTestDatabase(t);
  const { db, sql } = connectDb(databaseUrl, 2);
  t.teardown(() => sql.end());
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: dir,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      API_ONLY: '1',
      DEMO_WORKSPACE: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const on = (d: Buffer) => {
      out += d;
      if (/API listening on/.test(out)) resolve();
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  const org = await createOrganization(db, { name: 'Derived' });
  const key = await createApiKey(db, { orgId: org.id, scopes: ['generations:read'] });
  const client = new Client({ name: 'derive-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key.key}` } },
    }),
  );
  t.teardown(() => client.close());
  const listed = (await client.listTools()).tools.find((x) => x.name === 'list_workspace_assets_again');
  t.ok(listed, 'listed');
  const ok = await client.callTool({ name: 'list_workspace_assets_again', arguments: { limit: 3 } });
  t.notOk(ok.isError);
  t.match(ok.structuredContent, { object: 'workspace_assets' });
  const bad = await client.callTool({ name: 'list_workspace_assets_again', arguments: { limit: 99 } });
  t.match(
    bad.structuredContent,
    { error: { code: 'bad_request', context: { errors: [{ field: 'limit' }] } } },
    'validated by the new operation’s validators, named as the argument',
  );
});

t.test('schemas are self-contained JSON Schema', async (t) => {
  const spec: JsonObject = {
    components: {
      schemas: {
        Id: { type: 'string', format: 'uuid', description: 'An id', example: 'x' },
        Count: { type: 'integer', format: 'int64', minimum: 0, 'x-internal': true },
        Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } },
      },
    },
  };
  t.same(toToolSchema(spec, { $ref: '#/components/schemas/Id', description: 'Overridden' }), {
    type: 'string',
    format: 'uuid',
    description: 'Overridden',
  });
  t.same(toToolSchema(spec, { $ref: '#/components/schemas/Count', maximum: 9 }), { allOf: [{ type: 'integer', minimum: 0 }], maximum: 9 });
  t.throws(() => toToolSchema(spec, { $ref: '#/components/schemas/Loop' }), /circular \$ref/);
});

t.test('the generator refuses tool tables clients would reject', async (t) => {
  const withTool = (tools: unknown[]) => {
    const spec = structuredClone(realSpec) as { paths: Record<string, { get: JsonObject }> };
    spec.paths['/models'].get['x-mcp-tools'] = tools as never;
    return spec as unknown as JsonObject;
  };
  const build = (s: JsonObject) => buildMcpTools(s, buildIndex(s));
  t.throws(() => build(withTool([{ name: 'list generation catalog' }])), /must match/);
  t.throws(() => build(withTool([{ name: 'x'.repeat(65) }])), /must match/);
  t.throws(() => build(withTool([{ name: 'get_workspace' }])), /declared twice/);
  t.throws(() => build(withTool([{ name: 'list_models', fixed: { nope: true } }])), /fixed argument "nope" is not a parameter/);
  t.ok(build(realSpec).length >= 25);
});

t.test('the binder checks the MCP-only tools both ways, with the operations', async (t) => {
  const h = () => ({});
  const entry = (name: string) => ({ operationId: name, aliasOf: null, responses: {} });
  const tools = ['get_workspace', 'recommend_voice', 'list_social_accounts'].map(entry);
  const pending = new Set(['list_social_accounts']);
  const bind =
    (handlers: Record<string, unknown>, pendingTools: ReadonlySet<string> = pending) =>
    () =>
      bindHandlers({ tools: handlers } as never, [], new Set(), tools, pendingTools);
  t.same([...bind({ get_workspace: h, recommend_voice: h })().keys()], ['get_workspace', 'recommend_voice', 'list_social_accounts']);
  t.throws(bind({ get_workspace: h }), /MCP-only tool recommend_voice has no handler/);
  t.throws(bind({ get_workspace: h, recommend_voice: h, frobnicate: h }), /handler frobnicate has no operation or MCP-only tool/);
  t.throws(
    bind({ get_workspace: h, recommend_voice: h, list_social_accounts: h }),
    /MCP-only tool list_social_accounts has a handler but is still listed as pending/,
  );
  t.throws(bind({ get_workspace: h, recommend_voice: h }, new Set([...pending, 'gone'])), /pending MCP-only tool gone is not in spec/);
  const bound = bindHandlers();
  t.same(
    [...bound.keys()].sort(),
    [...operationIndex.operations, ...operationIndex.mcpOnlyTools].map((o) => o.operationId).sort(),
    'the real handlers, pending lists and spec agree',
  );
  t.ok(
    Object.values(HANDLER_MODULES).some((m) => 'get_workspace' in m),
    'MCP-only tools are handled by the per-domain handler modules',
  );
});
