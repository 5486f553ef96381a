// The Streamable HTTP transport /mcp owns (src/mcp/transport.ts) instead of the SDK's
// StreamableHTTPServerTransport: (1) the same raw HTTP exchanges answered side by side by the SDK
// transport and by ours, each in a bare Fastify app with the same SDK Server: same status, same
// bytes (but for an empty batch, which the SDK transport answered 202 and JSON-RPC 2.0 calls an
// Invalid Request: 400 here); (2) the rules over raw HTTP on the real endpoint (406, 415, 202,
// MCP-Protocol-Version, parse errors, batches, CORS); (3) the pre-serialised catalog spliced into the JSON-RPC answer
// byte-exactly, and never when the result no longer holds that content; (4) the fast path for
// plain requests accepts exactly what JSONRPCMessageSchema accepts; (5) the parsed catalog is
// reused only while its bytes are the same.
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import Fastify, { type FastifyInstance } from 'fastify';
import t from 'tap';
import { runTool, TOOLS_BY_NAME, type ToolDeps } from '../../src/mcp/tools.ts';
import { answerPost, checkPost, isRefusal, StatelessJsonTransport } from '../../src/mcp/transport.ts';
import { Reply } from '../../src/handlers.ts';
import { startMcpApp } from './helpers.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const req = (id: unknown, method: string, params: unknown = {}) => ({ jsonrpc: '2.0', id, method, params });
const note = (method: string, params?: unknown) => ({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
const init = (version = '2025-06-18') =>
  req(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });

/** A small SDK Server: two tools, one of which answers structured content. */
function makeServer(): Server {
  const server = new Server({ name: 'transport-test', version: '1.0.0' }, { capabilities: { tools: {} }, instructions: 'test' });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'echo', description: 'echo', inputSchema: { type: 'object' } },
      { name: 'fail', description: 'fail', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (r) => {
    if (r.params.name === 'fail') throw new McpError(-32602, 'no such thing');
    return { content: [{ type: 'text', text: 'echo: …' }], structuredContent: { args: r.params.arguments ?? {}, n: 1 } };
  });
  return server;
}

async function listen(app: FastifyInstance): Promise<string> {
  // Any content type reaches the handler, as in the service's /mcp scope (which parses forms).
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/mcp`;
}

// The SDK transport, as /mcp used it before (a new Server and transport per request, hijacked reply).
const sdkApp = Fastify();
sdkApp.post('/mcp', async (request, reply) => {
  reply.hijack();
  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.raw.on('close', () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
});
const ourApp = Fastify();
ourApp.post('/mcp', (request, reply) =>
  answerPost(
    request,
    reply,
    () => makeServer(),
    () => {},
  ),
);
const sdkUrl = await listen(sdkApp);
const ourUrl = await listen(ourApp);
t.teardown(() => Promise.all([sdkApp.close(), ourApp.close()]));

interface Case {
  name: string;
  body: string;
  headers?: Record<string, string | undefined>;
}
const cases: Case[] = [
  { name: 'ping', body: JSON.stringify(req(1, 'ping')) },
  { name: 'string id', body: JSON.stringify(req('abc', 'ping')) },
  { name: 'no params', body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }) },
  { name: 'tools/list', body: JSON.stringify(req(2, 'tools/list')) },
  { name: 'tools/call', body: JSON.stringify(req(7, 'tools/call', { name: 'echo', arguments: { a: [1, 'x'] } })) },
  {
    name: 'tools/call with _meta',
    body: JSON.stringify(req(7, 'tools/call', { name: 'echo', arguments: {}, _meta: { progressToken: 5 } })),
  },
  { name: 'tools/call error', body: JSON.stringify(req(8, 'tools/call', { name: 'fail', arguments: {} })) },
  { name: 'tools/call without name', body: JSON.stringify(req(9, 'tools/call', { arguments: {} })) },
  { name: 'unknown method', body: JSON.stringify(req(1, 'resources/list')) },
  { name: 'initialize', body: JSON.stringify(init()) },
  { name: 'initialize, old version', body: JSON.stringify(init('2024-11-05')) },
  { name: 'initialize, unknown version', body: JSON.stringify(init('2099-01-01')) },
  { name: 'initialize, bad params', body: JSON.stringify(req(1, 'initialize', { foo: 1 })) },
  { name: 'initialize, unsupported header', body: JSON.stringify(init()), headers: { 'mcp-protocol-version': '1999-01-01' } },
  { name: 'notification', body: JSON.stringify(note('notifications/initialized')) },
  { name: 'unknown notification', body: JSON.stringify(note('notifications/whatever', { a: 1 })) },
  { name: 'cancel notification', body: JSON.stringify(note('notifications/cancelled', { requestId: 1 })) },
  { name: 'response only', body: JSON.stringify({ jsonrpc: '2.0', id: 5, result: {} }) },
  { name: 'error response only', body: JSON.stringify({ jsonrpc: '2.0', id: 5, error: { code: 1, message: 'x' } }) },
  {
    name: 'batch of requests',
    body: JSON.stringify([req(1, 'ping'), req(2, 'tools/call', { name: 'echo', arguments: {} }), req('z', 'tools/list')]),
  },
  { name: 'batch: request and notification', body: JSON.stringify([req(1, 'ping'), note('notifications/initialized')]) },
  { name: 'batch of notifications', body: JSON.stringify([note('notifications/initialized'), note('notifications/initialized')]) },
  { name: 'batch with a repeated id', body: JSON.stringify([req(1, 'ping'), req(1, 'tools/list')]) },
  { name: 'batch of 100', body: JSON.stringify(Array.from({ length: 100 }, (_, i) => req(i, 'ping'))) },
  { name: 'batch of 101', body: JSON.stringify(Array.from({ length: 101 }, (_, i) => req(i, 'ping'))) },
  { name: 'batch with an invalid message', body: JSON.stringify([req(1, 'ping'), { foo: 1 }]) },
  { name: 'batch with initialize', body: JSON.stringify([init(), req(2, 'ping')]) },
  { name: 'not JSON-RPC', body: JSON.stringify({ foo: 1 }) },
  { name: 'null', body: 'null' },
  { name: 'a number', body: '42' },
  { name: 'jsonrpc 1.0', body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' }) },
  { name: 'id null', body: JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }) },
  { name: 'fractional id', body: JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'ping' }) },
  { name: 'extra member', body: JSON.stringify({ ...req(1, 'ping'), extra: 1 }) },
  { name: 'params not an object', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }) },
  { name: 'bad _meta', body: JSON.stringify(req(1, 'ping', { _meta: { progressToken: {} } })) },
  { name: 'unsupported protocol version', body: JSON.stringify(req(1, 'ping')), headers: { 'mcp-protocol-version': '1999-01-01' } },
  {
    name: 'unsupported protocol version, notification',
    body: JSON.stringify(note('notifications/initialized')),
    headers: { 'mcp-protocol-version': 'x' },
  },
  { name: 'empty protocol version', body: JSON.stringify(req(1, 'ping')), headers: { 'mcp-protocol-version': '' } },
  { name: 'no protocol version', body: JSON.stringify(req(1, 'ping')), headers: { 'mcp-protocol-version': undefined } },
  { name: 'Accept: application/json only', body: JSON.stringify(req(1, 'ping')), headers: { accept: 'application/json' } },
  { name: 'Accept: text/event-stream only', body: JSON.stringify(req(1, 'ping')), headers: { accept: 'text/event-stream' } },
  { name: 'Accept: */*', body: JSON.stringify(req(1, 'ping')), headers: { accept: '*/*' } },
  { name: 'no Accept', body: JSON.stringify(req(1, 'ping')), headers: { accept: undefined } },
  {
    name: 'Accept with q values, other order',
    body: JSON.stringify(req(1, 'ping')),
    headers: { accept: 'text/event-stream;q=0.5, application/json' },
  },
  {
    name: 'Content-Type with charset',
    body: JSON.stringify(req(1, 'ping')),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  },
  { name: 'Content-Type upper case', body: JSON.stringify(req(1, 'ping')), headers: { 'content-type': 'Application/JSON' } },
  { name: 'Content-Type text/plain', body: JSON.stringify(req(1, 'ping')), headers: { 'content-type': 'text/plain' } },
  { name: 'Content-Type form', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  {
    name: 'Content-Type with a JSON parameter',
    body: JSON.stringify(req(1, 'ping')),
    headers: { 'content-type': 'text/plain; a=application/json' },
  },
];

async function exchange(url: string, c: Case) {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...HEADERS, ...c.headers })) if (v !== undefined) headers[k] = v;
  const res = await fetch(url, { method: 'POST', headers, body: c.body });
  return { status: res.status, type: res.headers.get('content-type'), session: res.headers.get('mcp-session-id'), text: await res.text() };
}

t.test('the same answers as the SDK transport, byte for byte', async (t) => {
  for (const c of cases) {
    const [sdk, ours] = [await exchange(sdkUrl, c), await exchange(ourUrl, c)];
    t.equal(ours.status, sdk.status, `${c.name}: status ${sdk.status}`);
    t.equal(ours.text, sdk.text, `${c.name}: same body`);
    t.equal(ours.session, null, `${c.name}: no session id`);
    if (sdk.text) t.equal(ours.type, 'application/json', `${c.name}: application/json`);
  }
  // A Content-Type sent twice is ambiguous: the SDK (Fetch headers) refused it; so do we.
  const twice = (url: string) =>
    new Promise<[string, string]>((resolve, reject) => {
      const { port } = new URL(url);
      const body = JSON.stringify(req(1, 'ping'));
      const head = [
        'POST /mcp HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'Content-Type: application/json',
        'Content-Type: application/json',
        `Accept: ${HEADERS.accept}`,
      ];
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write(`${[...head, `Content-Length: ${body.length}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`),
      );
      let raw = '';
      socket.on('data', (d) => (raw += d));
      socket.on('error', reject);
      socket.on('close', () => resolve([raw.split('\r\n')[0], raw.slice(raw.indexOf('\r\n\r\n') + 4)]));
    });
  const [status, text] = await twice(ourUrl);
  t.equal(status, 'HTTP/1.1 415 Unsupported Media Type', 'repeated Content-Type: 415');
  t.same([status, text], await twice(sdkUrl), 'repeated Content-Type: as the SDK');
});

t.test('the real endpoint over raw HTTP', async (t) => {
  // Sent as a browser client's page would: its origin must be allowed (src/mcp/rebinding.ts).
  const app = await startMcpApp(t, { MCP_ALLOWED_ORIGINS: 'https://client.example' });
  const ws = await app.workspace({ scopes: ['generations:read'] });
  const post = (body: string, headers: Record<string, string | undefined> = {}) => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...HEADERS, authorization: `Bearer ${ws.key}`, origin: 'https://client.example', ...headers }))
      if (v !== undefined) h[k] = v;
    return fetch(`${app.url}/mcp`, { method: 'POST', headers: h, body });
  };
  const rpcError = { jsonrpc: '2.0', id: null, error: { code: Number, message: String } };

  for (const accept of [undefined, 'application/json', 'text/event-stream', '*/*']) {
    const res = await post(JSON.stringify(req(1, 'ping')), { accept });
    t.equal(res.status, 406, `Accept ${accept}: 406`);
    t.match(await res.json(), {
      ...rpcError,
      error: { code: -32000, message: /^Not Acceptable: Client must accept both application\/json and text\/event-stream/ },
    });
  }
  for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded']) {
    const res = await post(type === 'application/x-www-form-urlencoded' ? 'a=1' : JSON.stringify(req(1, 'ping')), { 'content-type': type });
    t.equal(res.status, 415, `Content-Type ${type}: 415`);
    t.match(await res.json(), { error: { code: -32000, message: /^Unsupported Media Type/ } });
  }

  for (const body of [
    note('notifications/initialized'),
    { jsonrpc: '2.0', id: 4, result: {} },
    [note('notifications/initialized'), note('notifications/cancelled', { requestId: 9 })],
  ]) {
    const res = await post(JSON.stringify(body));
    t.equal(res.status, 202, `${JSON.stringify(body).slice(0, 60)}: 202`);
    t.equal(await res.text(), '', 'no body');
  }

  let res = await post(JSON.stringify(req(1, 'ping')), { 'mcp-protocol-version': '1999-01-01' });
  t.equal(res.status, 400, 'unsupported MCP-Protocol-Version: 400');
  t.match(await res.json(), {
    error: { code: -32000, message: /Unsupported protocol version: 1999-01-01 \(supported versions: .*2025-06-18/ },
  });
  res = await post(JSON.stringify(req(1, 'ping')), { 'mcp-protocol-version': undefined });
  t.equal(res.status, 200, 'no MCP-Protocol-Version: accepted');
  res = await post(JSON.stringify(init()), { 'mcp-protocol-version': '1999-01-01' });
  t.equal(res.status, 200, 'initialize negotiates, whatever the header');
  t.match(await res.json(), { id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'media-api' } } });

  for (const [body, code] of [
    ['{oops', -32700],
    ['', -32700],
    [JSON.stringify({ foo: 1 }), -32700],
    [JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }), -32700],
  ] as const) {
    res = await post(body);
    t.equal(res.status, 400, `${body || '(empty)'}: 400`);
    t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code, message: /^Parse error/ } });
  }
  // JSON-RPC 2.0 §6: an empty array is an Invalid Request (the SDK transport answered it 202, the
  // one place where /mcp answers otherwise, also for the bare transport: checkPost).
  for (const url of [`${app.url}/mcp`, ourUrl]) {
    res = url === ourUrl ? await fetch(url, { method: 'POST', headers: HEADERS, body: '[]' }) : await post('[]');
    t.equal(res.status, 400, `${url}: an empty batch is 400`);
    t.equal(res.headers.get('content-type'), 'application/json');
    t.same(await res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: a batch must hold at least one message' },
    });
  }
  res = await post(JSON.stringify(Array.from({ length: 101 }, (_, i) => req(i, 'ping'))));
  t.equal(res.status, 400);
  t.match(await res.json(), { error: { code: -32600, message: 'Invalid Request: Batch must not exceed 100 messages' } });
  res = await post(JSON.stringify([init(), req(2, 'ping')]));
  t.equal(res.status, 400);
  t.match(await res.json(), { error: { code: -32600, message: 'Invalid Request: Only one initialization request is allowed' } });

  // An unknown tool: -32602 with the message the specification shows ("Unknown tool: …"), not the
  // SDK McpError's text ("MCP error -32602: …"), which SDK clients prefix once more.
  res = await post(JSON.stringify(req(7, 'tools/call', { name: 'no_such_tool', arguments: {} })));
  t.equal(res.status, 200);
  t.same(await res.json(), { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Unknown tool: no_such_tool' } });
  res = await post(
    JSON.stringify([req('b', 'tools/call', { name: 'get_workspace', arguments: {} }), note('notifications/initialized'), req('a', 'ping')]),
  );
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(res.headers.get('access-control-allow-origin'), '*', 'CORS headers of the app on the JSON answer');
  t.notOk(res.headers.get('mcp-session-id'));
  const batch = (await res.json()) as { id: string; result: { structuredContent?: { object: string } } }[];
  t.same(
    batch.map((m) => m.id),
    ['b', 'a'],
    'the responses of a batch, in request order',
  );
  t.equal(batch[0].result.structuredContent?.object, 'workspace');
  t.same(batch[1].result, {});
});

t.test('the catalog bytes are spliced into the answer: byte-exact, and the REST body', async (t) => {
  const app = await startMcpApp(t);
  const ws = await app.workspace({ scopes: ['generations:read'] });
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${ws.key}` },
    body: JSON.stringify(req(42, 'tools/call', { name: 'list_generation_catalog', arguments: {} })),
  });
  const text = await res.text();
  t.equal(res.status, 200);
  t.equal(Number(res.headers.get('content-length')), Buffer.byteLength(text), 'content-length');
  const message = JSON.parse(text);
  t.equal(text, JSON.stringify(message), 'exactly the text JSON.stringify writes for the response (key order included)');
  t.same(Object.keys(message), ['result', 'jsonrpc', 'id']);
  t.same(Object.keys(message.result), ['content', 'structuredContent']);
  const rest = await fetch(`${app.url}/api/v1/models`);
  const restText = await rest.text();
  t.ok(text.includes(`"structuredContent":${restText}`), 'the REST bytes themselves');
  t.match(message.result.content[0].text, /^list_generation_catalog: catalog; \d+ static_ads \(.*, …\)/);
});

t.test('encode: spliced only when the result still holds the pre-serialised content', async (t) => {
  const value = Object.freeze({ object: 'thing', items: Object.freeze([Object.freeze({ id: 'a' })]), n: 2 });
  const bytes = Buffer.from(JSON.stringify(value));
  const text = (parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();
  const response = (structuredContent: unknown, id: string | number = 1, extra: Record<string, unknown> = {}) =>
    ({
      result: { content: [{ type: 'text', text: 'thing: 1 items (a) — “quoted” \u2026' }], structuredContent, ...extra },
      jsonrpc: '2.0',
      id,
    }) as unknown as JSONRPCMessage;

  const tr = new StatelessJsonTransport();
  tr.preserialized(1, value, bytes);
  // The Server validates results into shallow copies: same keys, the same values.
  let m = response({ ...value });
  let parts = tr.encode([m]);
  t.equal(parts.length, 3, 'spliced');
  t.equal(parts[1], bytes, 'the very bytes');
  t.equal(text(parts), JSON.stringify(m));
  m = response({ ...value }, 1, { isError: false, _meta: { x: 1 } });
  t.equal(text(tr.encode([m])), JSON.stringify(m), 'members after structuredContent kept in order');
  const batch = [response({ ...value }), { jsonrpc: '2.0', id: 2, result: {} } as JSONRPCMessage];
  t.equal(text(tr.encode(batch)), JSON.stringify(batch), 'in a batch');

  for (const [name, changed] of [
    ['another value', { ...value, n: 3 }],
    ['a missing member', { object: 'thing', items: value.items }],
    ['an extra member', { ...value, more: true }],
    ['a copied (not identical) nested value', { ...value, items: [{ id: 'a' }] }],
    ['not an object', 'thing'],
  ] as const) {
    m = response(changed);
    parts = tr.encode([m]);
    t.equal(parts.length, 1, `${name}: not spliced`);
    t.equal(text(parts), JSON.stringify(m), `${name}: stringified`);
  }
  m = response({ ...value }, 2);
  t.equal(tr.encode([m]).length, 1, 'another request id: not spliced');
  // Text that looks like the placeholder elsewhere in the message: stringified whole.
  m = response({ ...value }, 1, { _meta: { structuredContent: '\u0000' } });
  parts = tr.encode([m]);
  t.equal(parts.length, 1, 'placeholder text twice: not spliced');
  t.equal(text(parts), JSON.stringify(m));
});

t.test('the transport: one use, responses in request order, close rejects what waits', async (t) => {
  const tr = new StatelessJsonTransport();
  const server = makeServer();
  await server.connect(tr);
  await t.rejects(server.connect(new StatelessJsonTransport()), /Already connected/);
  const out = await tr.deliver([req(2, 'tools/list'), note('notifications/initialized'), req(1, 'ping')] as JSONRPCMessage[], {});
  t.same(
    out.map((m) => (m as { id: number }).id),
    [2, 1],
  );
  t.throws(() => tr.deliver([req(3, 'ping')] as JSONRPCMessage[], {}), /cannot be reused/);
  await t.rejects(tr.send({ jsonrpc: '2.0', id: 9, result: {} }), /No connection established for request ID: 9/);

  const slow = new StatelessJsonTransport();
  const s2 = new Server({ name: 'x', version: '1' }, { capabilities: { tools: {} } });
  s2.setRequestHandler(CallToolRequestSchema, () => new Promise(() => {}));
  await s2.connect(slow);
  const pending = slow.deliver([req(1, 'tools/call', { name: 'x' })] as JSONRPCMessage[], {});
  await s2.close();
  await t.rejects(pending, /closed/);
});

t.test('plain requests skip the schema parse only where JSONRPCMessageSchema accepts them', async (t) => {
  const fake = {
    headers: { accept: HEADERS.accept, 'content-type': 'application/json' },
    rawHeaders: ['Content-Type', 'application/json'],
  } as unknown as IncomingMessage;
  const candidates: unknown[] = [
    req(1, 'ping'),
    req('x', 'tools/call', { name: 'a', arguments: { b: 1 } }),
    req(0, ''),
    req(-5, 'ping'),
    req(Number.MAX_SAFE_INTEGER, 'ping'),
    req(Number.MAX_SAFE_INTEGER + 1, 'ping'),
    req(1e21, 'ping'),
    req(1.5, 'ping'),
    req(null, 'ping'),
    req(true, 'ping'),
    req({}, 'ping'),
    { ...req(1, 'x'), method: 5 },
    req(1, 'ping', null),
    req(1, 'ping', []),
    req(1, 'ping', 'x'),
    req(1, 'ping', { _meta: { progressToken: 'p' } }),
    req(1, 'ping', { _meta: { progressToken: {} } }),
    req(1, 'ping', { _meta: null }),
    req(1, 'ping', { task: { ttl: 5 } }),
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'ping' },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: {}, x: 1 },
    { jsonrpc: '2.0', id: 1, method: 'ping', result: {} },
    { jsonrpc: 2, id: 1, method: 'ping' },
    { id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' } },
    { jsonrpc: '2.0', error: { code: 1, message: 'm' } },
    note('notifications/x', { a: 1 }),
    'ping',
    7,
  ];
  for (const c of candidates) {
    const zod = JSONRPCMessageSchema.safeParse(c);
    const ours = checkPost(fake, c);
    t.equal(!isRefusal(ours), zod.success, `${JSON.stringify(c)}: ${zod.success ? 'accepted' : 'refused'}`);
    if (zod.success && !isRefusal(ours)) t.same(ours.messages[0], zod.data, 'the same message');
  }
});

t.test('pre-serialised replies: parsed once per content, never answered from an older content', async (t) => {
  let body: Buffer | string = Buffer.from(JSON.stringify({ object: 'catalog', static_ads: [{ slug: 'aaa' }] }));
  const deps = {
    executor: { execute: async () => new Reply({ body, raw: true }) },
    log: { info() {}, warn() {}, error() {}, debug() {} },
  } as unknown as ToolDeps;
  const tool = TOOLS_BY_NAME.get('list_generation_catalog')!;
  const call = async () => {
    let json: [object, Buffer] | undefined;
    const result = await runTool(deps, tool, {}, {} as never, (value, bytes) => (json = [value, bytes]));
    return { result, json };
  };
  const first = await call();
  t.same(first.result.structuredContent, { object: 'catalog', static_ads: [{ slug: 'aaa' }] });
  t.ok(
    Object.isFrozen(first.result.structuredContent) &&
      Object.isFrozen((first.result.structuredContent as { static_ads: object[] }).static_ads[0]),
    'deep-frozen',
  );
  t.equal(first.json?.[0], first.result.structuredContent);
  t.equal(first.json?.[1].toString(), (body as Buffer).toString(), 'the bytes');
  t.not(first.json?.[1], body, 'a private copy of them');
  t.equal((await call()).result.structuredContent, first.result.structuredContent, 'the same content: parsed once');

  (body as Buffer).write('bbb', (body as Buffer).indexOf('aaa')); // the same buffer, changed in place
  const second = await call();
  t.same(second.result.structuredContent, { object: 'catalog', static_ads: [{ slug: 'bbb' }] }, 'changed content: parsed again');
  t.match(second.json?.[1].toString(), /"bbb"/);
  t.match((second.result.content as { text: string }[])[0].text, /\(bbb\)/);

  body = JSON.stringify({ object: 'catalog', n: 1 });
  t.same((await call()).result.structuredContent, { object: 'catalog', n: 1 }, 'a string body');
  body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"\xff"}: not UTF-8
  const invalid = await call();
  t.same(invalid.result.structuredContent, { a: '\ufffd' });
  t.equal(invalid.json, undefined, 'bytes that are not UTF-8 are never spliced');
});
