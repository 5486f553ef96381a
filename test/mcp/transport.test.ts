// The Streamable HTTP rules of /mcp over raw HTTP on the real endpoint, now served by the official
// SDK v2 (src/mcp/endpoint.ts): 406, 415, 202, MCP-Protocol-Version, parse errors, batches, CORS,
// the answers as application/json, and the catalog as the REST body returns it.
import t from 'tap';
import { startMcpApp } from './helpers.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const req = (id: unknown, method: string, params: unknown = {}) => ({ jsonrpc: '2.0', id, method, params });
const note = (method: string, params?: unknown) => ({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
const init = (version = '2025-06-18') =>
  req(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });

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

  // Text that is no JSON is a Parse error (-32700); JSON that is no JSON-RPC message is an Invalid
  // Request (-32600, JSON-RPC 2.0 §5.1), as the SDK v2 transport answers it (the 1.x one said -32700).
  for (const [body, code, message] of [
    ['{oops', -32700, /^Parse error/],
    ['', -32700, /^Parse error/],
    [JSON.stringify({ foo: 1 }), -32600, /not a valid JSON-RPC message/],
    [JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }), -32600, /not a valid JSON-RPC message/],
  ] as const) {
    res = await post(body);
    t.equal(res.status, 400, `${body || '(empty)'}: 400`);
    t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code, message } });
  }
  res = await post('[]');
  t.equal(res.status, 400, 'an empty batch is 400');
  t.equal(res.headers.get('content-type'), 'application/json');
  t.same(await res.json(), {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Bad Request: empty JSON-RPC batch' },
  });
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

t.test('the catalog: the REST body as structured content', async (t) => {
  const app = await startMcpApp(t);
  const ws = await app.workspace({ scopes: ['generations:read'] });
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${ws.key}` },
    body: JSON.stringify(req(42, 'tools/call', { name: 'list_generation_catalog', arguments: {} })),
  });
  const text = await res.text();
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  // One buffer with its length, not the SDK's web stream relayed chunk by chunk.
  t.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)), 'sent with its length');
  t.equal(res.headers.get('transfer-encoding'), null, 'not chunked');
  const message = JSON.parse(text);
  t.same(Object.keys(message.result), ['content', 'structuredContent']);
  const rest = await fetch(`${app.url}/api/v1/models`);
  t.same(message.result.structuredContent, await rest.json(), 'the REST body');
  t.match(message.result.content[0].text, /^list_generation_catalog: catalog; \d+ static_ads \(.*, …\)/);
});
