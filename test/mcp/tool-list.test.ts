// The tool list as an agent receives it: small enough for a context (≤ 64 KiB in all, no tool over
// 16 KiB, measured on the wire), in the portable schema subset, with the edit shapes still listed;
// the trimmed schemas never loosen what the server accepts (the executor validates with the full
// validators); and tool errors name the tool's own arguments while REST keeps `body.…`.
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import {
  COMPACT_LEVELS,
  compactInput,
  MCP_LIST_MAX_BYTES,
  MCP_TOOL_MAX_BYTES,
  portabilityFindings,
  splitTypeArray,
  trimText,
} from '../../scripts/lib/mcp-compact.ts';
import fs from 'node:fs';
import { parse } from 'yaml';
import { buildIndex, buildMcpTools, listedTool, type JsonObject } from '../../scripts/lib/codegen.ts';
import { renderSkillPages, SKILL_INDEX_MAX_BYTES, SKILL_MAX_BYTES } from '../../scripts/lib/skill.ts';
import { MCP_TOOLS, TOOLS_BY_NAME, toolFieldName } from '../../src/mcp/tools.ts';
import { connect, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t);
const ws = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
const client = await connect(app, ws.key);
t.teardown(() => client.close());
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

t.test('tools/list on the wire: at most 64 KiB in all, no tool over 16 KiB', async (t) => {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${ws.key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  t.equal(res.status, 200);
  const { result } = (await res.json()) as { result: { tools: { name: string }[] } };
  const total = Buffer.byteLength(JSON.stringify(result));
  t.equal(MCP_LIST_MAX_BYTES, 65536);
  t.equal(MCP_TOOL_MAX_BYTES, 16384);
  t.ok(total <= MCP_LIST_MAX_BYTES, `tools/list result is ${total} bytes (≤ ${MCP_LIST_MAX_BYTES})`);
  t.equal(result.tools.length, MCP_TOOLS.length);
  for (const tool of result.tools) {
    const size = Buffer.byteLength(JSON.stringify(tool));
    t.ok(size <= MCP_TOOL_MAX_BYTES, `${tool.name}: ${size} bytes (≤ ${MCP_TOOL_MAX_BYTES})`);
  }
  t.comment(`tools/list: ${total} bytes, largest tool ${Math.max(...result.tools.map((x) => Buffer.byteLength(JSON.stringify(x))))} bytes`);
});

t.test('every listed schema is in the portable subset; apply_editor_edits still lists its 19 edit shapes', async (t) => {
  const { tools } = await client.listTools();
  for (const tool of tools) {
    t.same(portabilityFindings(tool.inputSchema as never), [], `${tool.name}: inputSchema`);
    if (tool.outputSchema) t.same(portabilityFindings(tool.outputSchema as never), [], `${tool.name}: outputSchema`);
    t.ok(tool.description!.length <= 700, `${tool.name}: a short description (${tool.description!.length} chars)`);
  }
  const edits = tools.find((x) => x.name === 'apply_editor_edits')!.inputSchema as unknown as {
    properties: { operations: { items: { oneOf: { properties: { type: { const: string } }; required: string[] }[] } } };
  };
  const shapes = edits.properties.operations.items.oneOf;
  t.equal(shapes.length, 19);
  t.ok(
    shapes.every((s) => typeof s.properties.type.const === 'string' && s.required.includes('type')),
    'each shape names its op and its required fields',
  );
  t.ok(shapes.some((s) => s.properties.type.const === 'add_captions'));
  // Descriptions say how to poll with the tools, not only with REST paths.
  t.match(tools.find((x) => x.name === 'create_generation')!.description, /poll get_generation/);
  t.match(tools.find((x) => x.name === 'export_editor_video')!.description, /get_editor_video_export/);
});

t.test('a contract with more fields still fits: larger tools are trimmed further, every skill page within its budget', async (t) => {
  const spec = parse(fs.readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8')) as {
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  };
  for (const name of ['CreateSlideshowRequest', 'CreateGenerationRequest']) {
    const schema = spec.components.schemas[name];
    t.ok(schema?.properties, `${name} is an object schema`);
    for (let i = 0; i < 12; i++) {
      schema.properties[`extra_option_${i}`] = {
        type: ['string', 'null'],
        maxLength: 200,
        description: `An additional option number ${i} that a later change of the contract adds, described at some length so that it weighs what real fields weigh.`,
      };
    }
  }
  const s = spec as unknown as JsonObject;
  const listed = buildMcpTools(s, buildIndex(s)).map(listedTool);
  const total = Buffer.byteLength(JSON.stringify({ tools: listed }));
  t.ok(total <= MCP_LIST_MAX_BYTES, `tools/list ${total} bytes`);
  t.ok(listed.every((x) => Buffer.byteLength(JSON.stringify(x)) <= MCP_TOOL_MAX_BYTES));
  t.ok(
    listed.every((x) => portabilityFindings(x.inputSchema as never).length === 0),
    'still portable',
  );
  const pages = renderSkillPages(s, buildIndex(s));
  t.ok(Buffer.byteLength(pages['skill.md']) <= SKILL_INDEX_MAX_BYTES, 'the skill.md index still fits');
  for (const [name, text] of Object.entries(pages)) t.ok(Buffer.byteLength(text) <= SKILL_MAX_BYTES, `${name} still fits`);
});

t.test('the portability check finds what the Inspector reports', async (t) => {
  t.same(portabilityFindings({ type: 'object', properties: { a: { type: ['string', 'null'] } } }), [
    { path: '.properties.a', rule: 'type-union' },
  ]);
  t.same(
    portabilityFindings({ type: 'object', properties: { a: { $ref: '#/$defs/x' } } }).map((f) => f.rule),
    ['ref'],
  );
  t.same(
    portabilityFindings({ type: 'object', properties: { a: { description: 'anything' }, b: true } }).map((f) => f.rule),
    ['untyped-schema', 'boolean-schema'],
  );
  t.same(portabilityFindings({ type: 'object', additionalProperties: false }), [], 'additionalProperties: false is fine');
});

t.test('a split type array accepts exactly what the type array accepts', async (t) => {
  const ajv = new Ajv2020({ strict: false });
  const cases = [
    { type: ['string', 'null'], maxLength: 3, pattern: '^a' },
    { type: ['integer', 'null'], minimum: 1, maximum: 5, description: 'kept outside' },
    { type: ['string', 'null'], enum: ['a', 'b', null] },
    { type: ['object', 'null'], properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
    { type: ['array', 'string'], items: { type: 'integer' }, maxItems: 2, minLength: 2 },
  ];
  const values = [
    null,
    'a',
    'ab',
    'abcd',
    'b',
    'c',
    0,
    1,
    3,
    5,
    6,
    2.5,
    {},
    { x: 1 },
    { x: 'a' },
    { x: 1, y: 2 },
    [],
    [1],
    [1, 2, 3],
    ['a'],
    true,
  ];
  for (const schema of cases) {
    const split = splitTypeArray(schema as never);
    t.notOk(Array.isArray(split.type), JSON.stringify(split));
    const a = ajv.compile(schema);
    const b = ajv.compile(split);
    for (const v of values) t.equal(b(v), a(v), `${JSON.stringify(schema)} on ${JSON.stringify(v)}`);
  }
});

t.test('compacting makes any schema portable without changing what it accepts (patterns aside)', async (t) => {
  const ajv = new Ajv2020({ strict: false });
  const schema = {
    type: 'object',
    properties: {
      any: { description: 'anything at all' },
      yes: true,
      no: false,
      maybe: { type: ['integer', 'null'], minimum: 2 },
      list: { type: 'array', items: { type: ['string', 'null'], maxLength: 2 } },
    },
    additionalProperties: false,
  };
  const before = JSON.stringify(schema);
  const compact = compactInput(schema as never, COMPACT_LEVELS[0]);
  t.equal(JSON.stringify(schema), before, 'the spec is not changed');
  t.same(portabilityFindings(compact), []);
  const a = ajv.compile(schema);
  const b = ajv.compile(compact as object);
  for (const v of [
    {},
    { any: 1 },
    { any: null },
    { yes: 'x' },
    { no: 1 },
    { maybe: null },
    { maybe: 1 },
    { maybe: 3 },
    { list: ['ab', null] },
    { list: ['abc'] },
    { other: 1 },
  ]) {
    t.equal(b(v), a(v), JSON.stringify(v));
  }
});

t.test('trimmed descriptions start with the first sentence and keep how to poll', async (t) => {
  const text =
    'Queues a render of the video. It has many details that are long and not needed by a caller at all here. Poll get_export until completed.';
  t.equal(trimText(text, 60, /poll/i), 'Queues a render of the video. Poll get_export until completed.');
  t.equal(trimText('Short.', 60), 'Short.');
  t.ok(trimText('One very long first sentence without any end in sight at all', 20).length <= 20);
});

t.test('tool field names: body, path, query, header and MCP-only arguments by their argument names', async (t) => {
  const gen = TOOLS_BY_NAME.get('create_generation')!;
  t.equal(toolFieldName(gen, 'body.prompt'), 'prompt');
  t.equal(toolFieldName(gen, 'header.idempotency-key'), 'idempotency_key');
  t.equal(toolFieldName(gen, 'body'), 'arguments');
  t.equal(toolFieldName(TOOLS_BY_NAME.get('apply_editor_edits')!, 'body.operations[2].item_id'), 'operations[2].item_id');
  t.equal(toolFieldName(TOOLS_BY_NAME.get('get_generation')!, 'path.id'), 'id');
  t.equal(toolFieldName(TOOLS_BY_NAME.get('list_editor_videos')!, 'query.limit'), 'limit');
  t.equal(toolFieldName(TOOLS_BY_NAME.get('recommend_voice')!, 'arguments.script'), 'script');
  t.equal(toolFieldName(gen, 'operation_id'), 'operation_id', 'anything else is left as it is');
});

t.test('the trimmed schema does not loosen validation: the same 400 as REST, fields named as arguments', async (t) => {
  const video = await app.request('POST', '/api/v1/editor/videos', { key: ws.key, body: { title: 'Strict' } });
  t.equal(video.status, 200);
  const id = video.body.id as number;
  // An item id that breaks the spec's pattern (which the listed schema may leave out).
  const operations = [
    { type: 'remove_item', item_id: 'bad id!' },
    { type: 'set_title', title: '' },
  ];
  const rest = await app.request('PATCH', `/api/v1/editor/videos/${id}`, { key: ws.key, body: { operations } });
  t.equal(rest.status, 400);
  const restFields = rest.body.error.context.errors.map((e: { field: string }) => e.field).sort();
  t.same(restFields, ['body.operations[0].item_id', 'body.operations[1].title']);
  const res = await client.callTool({ name: 'apply_editor_edits', arguments: { id, operations } });
  t.equal(res.isError, true);
  const err = (
    res.structuredContent as { error: { code: string; message: string; context: { errors: { field: string; message: string }[] } } }
  ).error;
  t.equal(err.code, 'bad_request');
  t.same(err.context.errors.map((e) => e.field).sort(), ['operations[0].item_id', 'operations[1].title']);
  t.same(
    err.context.errors.map((e) => e.message).sort(),
    rest.body.error.context.errors.map((e: { message: string }) => e.message).sort(),
    'the same checks, the same messages',
  );
  t.match(err.message, /operations\[0\]\.item_id/);
  t.notMatch(err.message, /body\./);
  const unknown = await client.callTool({
    name: 'apply_editor_edits',
    arguments: { id: 999_999, operations: [{ type: 'set_title', title: 'x' }] },
  });
  t.match(unknown.structuredContent, { error: { code: 'not_found', context: { field: 'id' } } }, 'a 404 names the id argument');
});
