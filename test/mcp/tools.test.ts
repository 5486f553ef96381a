// /mcp with the SDK's Client and StreamableHTTPClientTransport, authenticated with API keys:
// the tool list derived from the spec, tool calls through the same executor as REST (compared
// with their REST twins), errors as isError results, and the 401/403 challenges.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import http from 'node:http';
import t from 'tap';
import { operationIndex } from '../../src/operations/executor.ts';
import { colorVideo } from '../editor/helpers.ts';
import { connect, startMcpApp } from './helpers.ts';

// The tool names of the seed (section 4.12).
const SEED_TOOLS = [
  'get_workspace',
  'list_generation_catalog',
  'list_workspace_assets',
  'create_generation',
  'get_generation',
  'create_slideshow',
  'get_slideshow',
  'create_faceless_video',
  'get_video',
  'suggest_reference_template_targets',
  'create_reference_inspiration',
  'list_reference_inspirations',
  'recommend_reference_inspirations',
  'create_editor_video',
  'list_editor_videos',
  'get_editor_video',
  'list_editor_media',
  'upload_editor_media',
  'upload_editor_media_from_url',
  'add_editor_media',
  'apply_editor_edits',
  'list_social_accounts',
  'publish_media_to_social',
  'recommend_voice',
  'list_editor_sound_effects',
];

const rpc = (method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

// Media for the target suggestions, which fetch and analyse what they are given.
const clip = colorVideo('mcp-unboxing', 'gray', 1, { width: 160, height: 284 });
const media = http.createServer((req, res) =>
  req.url === '/unboxing.mp4' ? res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip) : res.writeHead(404).end(),
);
await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
t.teardown(() => media.close());
const mediaBase = `http://127.0.0.1:${(media.address() as { port: number }).port}`;
const app = await startMcpApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1' });
const ws = await app.workspace({ credits: 1000, scopes: ['generations:read', 'generations:write'] });
const client = await connect(app, ws.key);
t.teardown(() => client.close());

t.test('tools/list: every seed tool, each with a self-contained object schema and a valid name', async (t) => {
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  for (const name of SEED_TOOLS) t.ok(names.includes(name), `${name} is listed`);
  t.equal(names.length, new Set(names).size, 'names are unique');
  for (const tool of tools) {
    t.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/, `${tool.name}: name pattern`);
    t.equal(tool.inputSchema?.type, 'object', `${tool.name}: inputSchema is an object schema`);
    const text = JSON.stringify([tool.inputSchema, tool.outputSchema ?? {}]);
    t.notOk(text.includes('"$ref"'), `${tool.name}: no $ref`);
    t.notOk(text.includes('"$schema"'), `${tool.name}: no $schema`);
    t.ok(tool.description && tool.description.length > 20, `${tool.name}: has a description`);
    if (tool.outputSchema) t.equal(tool.outputSchema.type, 'object', `${tool.name}: output schema is an object schema`);
    t.type(tool.annotations?.readOnlyHint, 'boolean', `${tool.name}: annotations`);
  }
  const byName = new Map(tools.map((x) => [x.name, x]));
  t.equal(byName.get('get_generation')!.title, "Get a generation's status", 'the title, once (not repeated in annotations)');
  t.match(
    byName.get('get_generation')!.outputSchema,
    { type: 'object', properties: { status: { enum: ['generating', 'completed', 'error'] } } },
    'a polled result: its status values',
  );
  t.match(
    byName.get('get_generation')!.annotations,
    { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    'declared in the spec: read-only, idempotent',
  );
  t.match(
    byName.get('create_generation')!.annotations,
    { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    'declared: not read-only, reaches hosted models',
  );
  t.match(byName.get('apply_editor_edits')!.annotations, { readOnlyHint: false, destructiveHint: true }, 'declared: destructive');
  t.match(byName.get('publish_media_to_social')!.annotations, { readOnlyHint: false, openWorldHint: true }, 'declared: open world');
  // Merged input: path + query + body, the idempotency header as an argument, fixed flags removed.
  const gen = byName.get('create_generation')!.inputSchema as { properties: Record<string, unknown>; required: string[] };
  t.ok(gen.properties.prompt && gen.properties.type && gen.properties.idempotency_key, 'body fields and idempotency_key');
  t.same(gen.required, ['type']);
  t.ok((byName.get('get_generation')!.inputSchema as { properties: Record<string, unknown> }).properties.id, 'path parameter');
  const rec = byName.get('recommend_reference_inspirations')!.inputSchema as { properties: Record<string, unknown> };
  t.notOk('recommend' in rec.properties, 'fixed argument recommend is not an input');
  t.ok('template_slug' in rec.properties, 'query parameters are inputs');
});

t.test('the tool list is the operation index: every x-mcp-tools name and every MCP-only tool, nothing else', async (t) => {
  const { tools } = await client.listTools();
  const expected = [...operationIndex.operations, ...operationIndex.mcpOnlyTools].flatMap((o) => o.mcpTools.map((x) => x.name));
  t.same(tools.map((x) => x.name).sort(), expected.sort());
});

t.test('list_generation_catalog answers what GET /models answers', async (t) => {
  const res = await client.callTool({ name: 'list_generation_catalog', arguments: {} });
  const rest = await app.request('GET', '/api/v1/models');
  t.notOk(res.isError);
  t.same(res.structuredContent, rest.body);
  t.match((res.content as { text: string }[])[0].text, /^list_generation_catalog: catalog; \d+ static_ads/);
});

t.test('list_workspace_assets answers what GET /assets answers for the same key', async (t) => {
  const res = await client.callTool({ name: 'list_workspace_assets', arguments: {} });
  const rest = await app.request('GET', '/api/v1/assets', { key: ws.key });
  t.equal(rest.status, 200);
  t.same(res.structuredContent, rest.body);
});

t.test('get_workspace: organization, plan, credits and the caller scopes', async (t) => {
  const res = await client.callTool({ name: 'get_workspace', arguments: {} });
  t.notOk(res.isError);
  t.match(res.structuredContent, {
    object: 'workspace',
    organization: { id: ws.orgId, name: 'Test workspace' },
    plan: 'paid',
    scopes: ['generations:read', 'generations:write'],
  });
  t.type((res.structuredContent as { credits: number }).credits, 'number');
  const bad = await client.callTool({ name: 'get_workspace', arguments: { surprise: 1 } });
  t.ok(bad.isError, 'unknown arguments are refused');
  t.match(bad.structuredContent, {
    error: { code: 'bad_request', context: { errors: [{ field: 'surprise', message: 'is not a known field' }] } },
  });
});

t.test('create_generation and get_generation run the REST operations (same outcome as the REST twin)', async (t) => {
  const body = { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'A bottle of olive oil on marble' };
  const rest = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'rest-twin-1' } });
  const res = await client.callTool({ name: 'create_generation', arguments: { ...body, idempotency_key: 'mcp-call-1' } });
  if (rest.status >= 400) {
    t.ok(res.isError, `REST answered ${rest.status}, so the tool errs`);
    t.equal((res.structuredContent as { error: { code: string } }).error.code, rest.body.error.code, 'same error code');
    return;
  }
  t.notOk(res.isError, 'REST succeeded, so does the tool');
  const batch = res.structuredContent as { object: string; generations: { id: string }[]; credits_deducted: number };
  t.equal(batch.object, rest.body.object);
  t.equal(batch.credits_deducted, rest.body.credits_deducted, 'same price');
  t.equal(batch.generations.length, rest.body.generations.length);

  // idempotency_key is the Idempotency-Key header: a repeat is a replay, charged once.
  const before = (await client.callTool({ name: 'get_workspace', arguments: {} })).structuredContent as { credits: number };
  const again = await client.callTool({ name: 'create_generation', arguments: { ...body, idempotency_key: 'mcp-call-1' } });
  const after = (await client.callTool({ name: 'get_workspace', arguments: {} })).structuredContent as { credits: number };
  t.notOk(again.isError);
  t.match(again.structuredContent, { idempotent_replay: true });
  t.same(
    (again.structuredContent as typeof batch).generations.map((g) => g.id),
    batch.generations.map((g) => g.id),
    'the same generations',
  );
  t.equal(after.credits, before.credits, 'no second charge');
  const conflict = await client.callTool({
    name: 'create_generation',
    arguments: { ...body, prompt: 'Something else', idempotency_key: 'mcp-call-1' },
  });
  t.match(conflict.structuredContent, { error: { code: 'idempotency_conflict' } }, 'same key, different body');

  const id = batch.generations[0].id;
  const got = await client.callTool({ name: 'get_generation', arguments: { id } });
  const restGot = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.equal(restGot.status, 200);
  t.notOk(got.isError);
  t.match(got.structuredContent, { id, object: restGot.body.object });
});

t.test('get_generation of an unknown id: the REST twin error as an isError result, the field named as the argument', async (t) => {
  const id = '00000000-0000-4000-8000-000000000000';
  const rest = await app.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  const res = await client.callTool({ name: 'get_generation', arguments: { id } });
  t.ok(res.isError);
  t.equal(rest.body.error.context.field, 'path.id', 'REST names the location');
  t.same(
    res.structuredContent,
    { error: { ...rest.body.error, context: { ...rest.body.error.context, field: 'id' } } },
    'the same envelope, with the argument name',
  );
});

t.test('a tool error is a result with isError and the envelope, never a protocol error; fields are the tool arguments', async (t) => {
  const body = { template_slug: 'product-spotlight', prompt: 'x'.repeat(9000), surprise: true };
  const rest = await app.request('POST', '/api/v1/generations', { key: ws.key, body, headers: { 'idempotency-key': 'bad key' } });
  t.equal(rest.status, 400);
  const res = await client.callTool({ name: 'create_generation', arguments: { ...body, idempotency_key: 'bad key' } });
  t.equal(res.isError, true);
  const restErr = rest.body.error;
  const err = (res.structuredContent as { error: typeof restErr }).error;
  t.match(err, { code: 'bad_request', retryable: false });
  const restFields = restErr.context.errors.map((e: { field: string }) => e.field).sort();
  const fields = err.context.errors.map((e: { field: string }) => e.field).sort();
  t.same(restFields, ['body.prompt', 'body.surprise', 'body.type', 'header.idempotency-key'], 'REST keeps <location>.<path>');
  t.same(fields, ['idempotency_key', 'prompt', 'surprise', 'type'], 'MCP names the tool arguments');
  t.same(
    err.context.errors.map((e: { message: string }) => e.message).sort(),
    restErr.context.errors.map((e: { message: string }) => e.message).sort(),
    'the same messages per field',
  );
  t.notMatch(err.message, /body\.|header\./, 'the message names the arguments too');
  t.match(err.message, /\bprompt\b/);
  t.match((res.content as { text: string }[])[0].text, /^Error bad_request: /);

  const id = await client.callTool({ name: 'get_generation', arguments: { id: 'not-a-uuid' } });
  const idRest = await app.request('GET', '/api/v1/generations/not-a-uuid', { key: ws.key });
  t.match(idRest.body, { error: { code: 'bad_request', context: { errors: [{ field: 'path.id' }] } } });
  t.match(id.structuredContent, { error: { code: 'bad_request', context: { errors: [{ field: 'id' }] } } });
  t.notMatch((id.structuredContent as { error: { message: string } }).error.message, /path\.id/);

  const list = await client.callTool({ name: 'list_editor_videos', arguments: { limit: 0 } });
  t.match(
    list.structuredContent,
    { error: { code: 'bad_request', context: { errors: [{ field: 'limit' }] } } },
    'a query parameter by its argument name',
  );
});

t.test('MCP-only tools: recommend_voice ranks voices; list_social_accounts answers', async (t) => {
  const res = await client.callTool({
    name: 'recommend_voice',
    arguments: { script: 'Der neue Laufschuh ist da und die Preise sind jetzt unschlagbar', style: 'energetic and upbeat', limit: 3 },
  });
  t.notOk(res.isError);
  const data = (res.structuredContent as { data: { voice: { id: string; locale: string[] }; score: number; reason: string }[] }).data;
  t.equal(data.length, 3);
  t.match(data[0].voice.locale, ['de-DE'], 'German detected from the script');
  t.ok(data[0].score >= data[1].score && data[1].score >= data[2].score, 'best first');
  t.match(data[0].reason, /de-DE/);
  const british = await client.callTool({
    name: 'recommend_voice',
    arguments: { script: 'Once upon a time', language: 'British English', style: 'calm documentary narrator' },
  });
  const top = (
    british.structuredContent as typeof res.structuredContent & { data: { voice: { locale: string[]; style_tags: string[] } }[] }
  ).data[0];
  t.match(top.voice.locale, ['en-GB']);
  const bad = await client.callTool({ name: 'recommend_voice', arguments: { language: 'en' } });
  t.match(bad.structuredContent, { error: { code: 'bad_request', context: { errors: [{ field: 'script', message: 'is required' }] } } });

  const social = await connect(app, (await app.workspace({ scopes: ['social:read', 'social:write', 'generations:read'] })).key);
  t.teardown(() => social.close());
  const accounts = await social.callTool({ name: 'list_social_accounts', arguments: {} });
  t.notOk(accounts.isError);
  t.match(accounts.structuredContent, { object: 'list', data: [] });
});

t.test('the three tools of GET /reference-inspirations: each its mode, by the fixed flag', async (t) => {
  const listed = await client.callTool({ name: 'list_reference_inspirations', arguments: { template_category: 'slideshow-carousel' } });
  t.notOk(listed.isError);
  t.match(listed.structuredContent, { object: 'reference_inspiration_list', data: [] });
  const rest = await app.request('GET', '/api/v1/reference-inspirations?template_category=slideshow-carousel', { key: ws.key });
  t.same(listed.structuredContent, rest.body, 'what the REST twin answers');
  const recommended = await client.callTool({
    name: 'recommend_reference_inspirations',
    arguments: { template_slug: 'product-spotlight' },
  });
  t.match(recommended.structuredContent, { object: 'reference_inspiration_recommendations', data: [] });
  const suggested = await client.callTool({
    name: 'suggest_reference_template_targets',
    arguments: { description: 'unboxing our new headphones', video_url: `${mediaBase}/unboxing.mp4` },
  });
  t.notOk(suggested.isError);
  t.match(suggested.structuredContent, { object: 'reference_template_target_suggestions', media_kind: 'video', has_video: true });
  t.equal((suggested.structuredContent as { suggestions: { template_slug: string }[] }).suggestions[0].template_slug, 'unboxing-ugc');
  const both = await client.callTool({ name: 'suggest_reference_template_targets', arguments: { recommend: true } });
  t.match(both.structuredContent, { error: { code: 'bad_request' } }, 'the fixed flag cannot be combined with the other mode');
});

t.test('an unknown tool is a JSON-RPC error (InvalidParams)', async (t) => {
  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), McpError);
});

t.test('no paid plan: payment_required as the REST twin says; get_workspace still answers', async (t) => {
  const unpaid = await app.workspace({ plan: 'none' });
  const c = await connect(app, unpaid.key);
  t.teardown(() => c.close());
  const ws2 = await c.callTool({ name: 'get_workspace', arguments: {} });
  t.match(ws2.structuredContent, { plan: 'none' });
  const res = await c.callTool({ name: 'list_workspace_assets', arguments: {} });
  const rest = await app.request('GET', '/api/v1/assets', { key: unpaid.key });
  t.equal(rest.status, 402);
  t.same(res.structuredContent, rest.body);
});

t.test('a tool needing a scope the key lacks: HTTP 403 with an insufficient_scope challenge', async (t) => {
  const reader = await app.workspace({ scopes: ['generations:read'] });
  const c = await connect(app, reader.key);
  t.teardown(() => c.close());
  t.notOk((await c.callTool({ name: 'list_workspace_assets', arguments: {} })).isError, 'read tools work');
  const err = await c.callTool({ name: 'create_generation', arguments: { type: 'static_ad' } }).catch((e: unknown) => e);
  t.ok(err instanceof StreamableHTTPError, 'the SDK client sees an HTTP error');
  t.equal((err as StreamableHTTPError).code, 403);

  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${reader.key}` },
    body: rpc('tools/call', { name: 'create_generation', arguments: { type: 'static_ad' } }),
  });
  t.equal(res.status, 403);
  const challenge = res.headers.get('www-authenticate')!;
  t.match(challenge, /^Bearer error="insufficient_scope"/);
  t.match(challenge, /scope="generations:read generations:write"/, 'names the needed scope (kept with the granted ones)');
  t.match(challenge, new RegExp(`resource_metadata="${app.url}/.well-known/oauth-protected-resource"`));
  t.match(await res.json(), {
    error: { code: 'forbidden', context: { required_scopes: ['generations:write'], granted_scopes: ['generations:read'] } },
  });

  const social = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${reader.key}` },
    body: rpc('tools/call', { name: 'publish_media_to_social', arguments: { account_ids: [] } }),
  });
  t.equal(social.status, 403);
  t.match(social.headers.get('www-authenticate'), /scope="generations:read social:write"/);
});

t.test('401 challenges point at the protected-resource metadata', async (t) => {
  const none = await fetch(`${app.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: rpc('tools/list') });
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource"`);
  t.match(await none.json(), { error: { code: 'unauthorized', retryable: false } });
  for (const token of ['mapi_not-a-real-key', 'mat_unknownunknownunknownunknownunknownunknow', 'garbage']) {
    const bad = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: rpc('tools/list'),
    });
    t.equal(bad.status, 401, token);
    t.match(bad.headers.get('www-authenticate'), /^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="[^"]+"$/);
    t.match(await bad.json(), { error: { code: 'invalid_api_key' } });
  }
  const noAuth = new Client({ name: 'anon', version: '1' });
  const err = await noAuth.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`))).catch((e: unknown) => e);
  t.ok(err instanceof Error, 'the SDK client cannot connect without a token');
});

t.test('stateless: GET and DELETE are 405; any request stands alone (no session, no initialize needed)', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(`${app.url}/mcp`, { method, headers: { ...MCP_HEADERS, authorization: `Bearer ${ws.key}` } });
    t.equal(res.status, 405, method);
    t.equal(res.headers.get('allow'), 'POST');
  }
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${ws.key}` },
    body: rpc('tools/call', { name: 'get_workspace', arguments: {} }),
  });
  t.equal(res.status, 200);
  t.notOk(res.headers.get('mcp-session-id'), 'no session id');
  t.match(await res.json(), { jsonrpc: '2.0', id: 1, result: { structuredContent: { object: 'workspace' } } });
  const init = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${ws.key}` },
    body: rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }),
  });
  const body = (await init.json()) as { result: { serverInfo: { name: string }; capabilities: { tools: unknown }; instructions: string } };
  t.equal(body.result.serverInfo.name, 'media-api');
  t.ok(body.result.capabilities.tools);
  t.match(body.result.instructions, /get_workspace/);
  const parse = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${ws.key}` },
    body: '{oops',
  });
  t.equal(parse.status, 400);
  t.match(await parse.json(), { jsonrpc: '2.0', error: { code: -32700 } });
});
