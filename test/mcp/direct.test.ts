// The direct path of POST /mcp (src/mcp/direct.ts): (1) which messages it takes — exactly one
// plain tools/call of a listed tool or one plain tools/list — and which it leaves to the SDK
// Server; (2) on the real endpoint, every kind of answer it gives compared with the SDK Server's
// answer to the same request sent as a batch of one (which the SDK Server handles; like the SDK
// transport, the answer to a batch of one is the response alone): the same
// JSON-RPC response, and results that pass the SDK's CallToolResultSchema; (3) the shared result
// of the catalog stays frozen and the pre-serialised bytes are written as they are.
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { eq } from 'drizzle-orm';
import t from 'tap';
import { organizations } from '../../src/db/schema/index.ts';
import { directRequest } from '../../src/mcp/direct.ts';
import { LISTED_TOOLS, TOOLS_BY_NAME } from '../../src/mcp/tools.ts';
import { startMcpApp } from './helpers.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const req = (id: unknown, method: string, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const call = (id: unknown, name: string, args?: unknown) =>
  req(id, 'tools/call', args === undefined ? { name } : { name, arguments: args });

t.test('directRequest: one plain tools/call of a listed tool or one plain tools/list, nothing else', async (t) => {
  const catalog = TOOLS_BY_NAME.get('list_generation_catalog');
  t.match(directRequest(call(1, 'list_generation_catalog', {})), { method: 'tools/call', id: 1, tool: catalog, args: {} });
  t.match(directRequest(call('a', 'get_generation', { id: 'x' })), { method: 'tools/call', id: 'a', args: { id: 'x' } });
  t.same(
    directRequest(call(2, 'get_workspace'))?.method === 'tools/call' && directRequest(call(2, 'get_workspace')),
    {
      method: 'tools/call',
      id: 2,
      tool: TOOLS_BY_NAME.get('get_workspace'),
      args: {},
    },
    'no arguments: {}',
  );
  t.same(directRequest(req(3, 'tools/list')), { method: 'tools/list', id: 3 });
  t.same(directRequest(req(3, 'tools/list', {})), { method: 'tools/list', id: 3 });
  t.same(directRequest(req(3, 'tools/list', { cursor: 'c' })), { method: 'tools/list', id: 3 });

  const left: [string, unknown][] = [
    ['a batch', [call(1, 'get_workspace', {})]],
    ['an unknown tool', call(1, 'no_such_tool', {})],
    ['a name that is not a string', call(1, 5 as unknown as string, {})],
    ['no params', req(1, 'tools/call')],
    ['params not an object', req(1, 'tools/call', [1])],
    ['arguments an array', call(1, 'get_workspace', [])],
    ['arguments null', call(1, 'get_workspace', null)],
    ['arguments a string', call(1, 'get_workspace', 'x')],
    ['params._meta (progress token)', req(1, 'tools/call', { name: 'get_workspace', arguments: {}, _meta: { progressToken: 1 } })],
    ['params.task', req(1, 'tools/call', { name: 'get_workspace', arguments: {}, task: { ttl: 1000 } })],
    ['another params member', req(1, 'tools/call', { name: 'get_workspace', other: 1 })],
    ['tools/list with a cursor that is not a string', req(1, 'tools/list', { cursor: 5 })],
    ['tools/list with _meta', req(1, 'tools/list', { _meta: {} })],
    ['ping', req(1, 'ping')],
    ['initialize', req(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } })],
    ['a notification', { jsonrpc: '2.0', method: 'tools/call', params: { name: 'get_workspace' } }],
    ['id null', call(null, 'get_workspace', {})],
    ['a fractional id', call(1.5, 'get_workspace', {})],
    ['an unsafe integer id', call(2 ** 60, 'get_workspace', {})],
    ['jsonrpc 1.0', { ...call(1, 'get_workspace', {}), jsonrpc: '1.0' }],
    ['an extra member', { ...call(1, 'get_workspace', {}), extra: true }],
    ['a response', { jsonrpc: '2.0', id: 1, result: {} }],
  ];
  for (const [name, body] of left) t.equal(directRequest(body), undefined, `${name}: left to the SDK Server`);
});

t.test('on the endpoint: each direct answer is the SDK Server answer to the same request', async (t) => {
  const app = await startMcpApp(t);
  const ws = await app.workspace({ credits: 1000, scopes: ['generations:read', 'generations:write', 'social:read'] });
  const post = async (body: unknown) => {
    const res = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { ...HEADERS, authorization: `Bearer ${ws.key}` },
      body: JSON.stringify(body),
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/json');
    const text = await res.text();
    t.equal(Number(res.headers.get('content-length')), Buffer.byteLength(text), 'content-length');
    return { text, json: JSON.parse(text) };
  };

  const calls: [string, unknown][] = [
    ['the catalog (pre-serialised)', call(11, 'list_generation_catalog', {})],
    ['the catalog, string id', call('cat-1', 'list_generation_catalog')],
    ['get_workspace (MCP-only)', call(12, 'get_workspace', {})],
    ['list_workspace_assets', call(13, 'list_workspace_assets', {})],
    ['list_editor_sound_effects', call(14, 'list_editor_sound_effects', {})],
    ['get_generation, unknown id (404 as isError)', call(15, 'get_generation', { id: '00000000-0000-4000-8000-000000000000' })],
    ['get_generation, bad id (400 as isError)', call(16, 'get_generation', { id: 'nope' })],
    ['create_generation, invalid (400 as isError)', call(17, 'create_generation', { template_slug: 'product-spotlight', surprise: 1 })],
    ['an unknown argument', call(18, 'list_generation_catalog', { surprise: true })],
    ['list_social_accounts (MCP-only)', call(19, 'list_social_accounts', {})],
  ];
  for (const [name, body] of calls) {
    const direct = await post(body);
    const viaSdk = await post([body]);
    t.same(direct.json, viaSdk.json, `${name}: the same response as the SDK Server's`);
    t.same(Object.keys(direct.json), ['result', 'jsonrpc', 'id'], `${name}: the SDK's member order`);
    t.equal(direct.json.id, (body as { id: unknown }).id);
    const parsed = CallToolResultSchema.safeParse(direct.json.result);
    t.ok(parsed.success, `${name}: a valid CallToolResult`);
    t.equal(direct.text, JSON.stringify(direct.json), `${name}: compact JSON`);
  }
  const catalog = await post(call(20, 'list_generation_catalog', {}));
  const rest = await (await fetch(`${app.url}/api/v1/models`)).text();
  t.ok(catalog.text.includes(`"structuredContent":${rest}}`), 'the REST bytes, as they are');

  // A paid call: the direct answer equals what the SDK path answers for the replay of its key.
  const paid = call(21, 'create_generation', {
    type: 'static_ad',
    template_slug: 'product-spotlight',
    prompt: 'Olive oil',
    idempotency_key: 'direct-1',
  });
  const first = await post(paid);
  t.notOk(first.json.result.isError, 'charged and queued');
  const replayDirect = await post(paid);
  const replaySdk = await post([paid]);
  t.same(replayDirect.json, replaySdk.json, 'the replays agree');
  t.match(replayDirect.json.result.structuredContent, {
    idempotent_replay: true,
    credits_deducted: first.json.result.structuredContent.credits_deducted,
  });
  const [org] = await app.service.ctx.db.select().from(organizations).where(eq(organizations.id, ws.orgId));
  t.equal(org.credits, 1000 - first.json.result.structuredContent.credits_deducted, 'charged once across three calls');

  // tools/list: the list serialised once, the same as the SDK Server's.
  for (const params of [undefined, {}, { cursor: 'x' }]) {
    const direct = await post(req(30, 'tools/list', params));
    const viaSdk = await post([req(30, 'tools/list', params)]);
    t.same(direct.json, viaSdk.json, `tools/list ${JSON.stringify(params)}: the SDK Server's answer`);
    t.ok(ListToolsResultSchema.safeParse(direct.json.result).success);
    t.equal(direct.json.result.tools.length, LISTED_TOOLS.length);
  }
});
