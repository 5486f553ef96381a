// Both protocol revisions on one /mcp, stateless across API nodes: two instances of the service on
// one database behind a round-robin proxy (each request goes to the other node than the one
// before), and one conversation per revision spread over both:
//   - 2026-07-28: the official TypeScript SDK v2 client, as a process, pinned to the revision
//     (server/discover, no initialize), lists the tools twice (cacheable: ttlMs and cacheScope, so the
//     second listing comes from its cache) and calls one;
//   - 2025-11-25: the official TypeScript SDK 1.x client, as a process (initialize handshake);
//   - 2025-06-18: initialize, initialized, tools/list and tools/call over raw HTTP.
// Every listing names the tools in the same order, the table's.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { listenLocal } from '../helpers/local-server.ts';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { MCP_TOOLS } from '../../src/mcp/tools.ts';
import { TOOLS_LIST_CACHE } from '../../src/mcp/endpoint.ts';
import { freePort, startTestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const here = path.dirname(new URL(import.meta.url).pathname);

interface Exchange {
  node: number;
  request: string;
  status: number;
  response: string;
}

/** A round-robin reverse proxy over `upstreams` (set once the nodes run), recording every exchange. */
async function roundRobin(upstreams: string[], log: Exchange[]): Promise<string> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const node = next++ % upstreams.length;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = Buffer.concat(chunks);
      const up = http.request(new URL(req.url ?? '/', upstreams[node]), { method: req.method, headers: req.headers }, (answer) => {
        const out: Buffer[] = [];
        answer.on('data', (c: Buffer) => out.push(c));
        answer.on('end', () => {
          const response = Buffer.concat(out);
          log.push({ node, request: request.toString(), status: answer.statusCode ?? 0, response: response.toString() });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(response);
        });
      });
      up.on('error', () => res.destroy());
      up.end(request);
    });
  });
  return listenLocal(t, server);
}

const upstreams: string[] = [];
const log: Exchange[] = [];
const proxy = await roundRobin(upstreams, log);
// Two API nodes on one database; the proxy's address is their PUBLIC_BASE_URL, as a load balancer's is.
const env = async () => ({ PORT: String(await freePort()), PUBLIC_BASE_URL: proxy });
const a = await startTestApp(t, await env());
const b = await startTestApp(t, await env(), { databaseUrl: a.databaseUrl });
upstreams.push(a.url, b.url);
const ws = await a.workspace({ scopes: ['generations:read'] });
const TOOL_NAMES = MCP_TOOLS.map((x) => x.name);

/** A client script of ./clients as a process; its one JSON line. */
async function client(script: string) {
  const { stdout } = await run(process.execPath, [path.join(here, 'clients', script), `${proxy}/mcp`, ws.key, 'get_workspace'], {
    timeout: 60_000,
  });
  return JSON.parse(stdout);
}

/** The JSON-RPC methods the proxy carried since `from`, by node. */
const methodsByNode = (from: number) => {
  const by: [string[], string[]] = [[], []];
  for (const x of log.slice(from)) if (x.request) by[x.node as 0 | 1].push(JSON.parse(x.request).method);
  return by;
};

t.test('2026-07-28: the SDK v2 client, no handshake, over both nodes', async (t) => {
  const from = log.length;
  const out = await client('v2-client.ts');
  t.equal(out.protocolVersion, '2026-07-28');
  t.equal(out.era, 'modern');
  t.same(out.tools, TOOL_NAMES, 'every tool, in the order of the table');
  t.same(out.toolsAgain, TOOL_NAMES, 'listed again: the same');
  t.match(out.result, { structuredContent: { object: 'workspace', organization: { id: ws.orgId } } });
  t.notOk(out.result.isError);
  // A tool error is a result with the REST error envelope, as under 2025.
  t.match(out.missing, { isError: true, structuredContent: { error: { code: 'not_found', retryable: false } } });

  const [onA, onB] = methodsByNode(from);
  t.notOk([...onA, ...onB].includes('initialize'), 'no initialize');
  t.ok([...onA, ...onB].includes('server/discover'), 'server/discover');
  t.ok(onA.length > 0 && onB.length > 0, `both nodes answered: ${JSON.stringify([onA, onB])}`);
  for (const x of log.slice(from)) t.equal(x.status, 200, `${x.request.slice(0, 80)}: 200`);

  // The tools/list result carries the revision's cache fields (shared caches may keep the list),
  // and the client honours them: its second listing is answered from its cache, not sent.
  const lists = log.slice(from).filter((x) => x.request && JSON.parse(x.request).method === 'tools/list');
  t.equal(lists.length, 1, 'one tools/list on the wire for two listings');
  for (const x of lists) {
    const result = JSON.parse(x.response).result;
    t.equal(result.ttlMs, TOOLS_LIST_CACHE.ttlMs, 'ttlMs');
    t.equal(result.cacheScope, 'public', 'cacheScope');
    t.equal(result.tools.length, TOOL_NAMES.length);
  }
});

t.test('2026-07-28: the bearer token and its scopes are checked before the SDK answers', async (t) => {
  // A tools/call exactly as the v2 client sent it (envelope and routing headers), replayed.
  const sent = log.map((x) => x.request && JSON.parse(x.request)).find((m) => m?.method === 'tools/call');
  t.ok(sent, 'the v2 client sent a tools/call');
  const replay = (name: string, authorization?: string) =>
    fetch(`${proxy}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({ ...sent, params: { ...sent.params, name } }),
    });
  let res = await replay('get_workspace', `Bearer ${ws.key}`);
  t.equal(res.status, 200, 'the replay itself is answered');
  t.match(await res.json(), { result: { structuredContent: { object: 'workspace' } } });
  res = await replay('get_workspace');
  t.equal(res.status, 401, 'no token: 401');
  t.match(res.headers.get('www-authenticate'), /^Bearer resource_metadata="/);
  res = await replay('create_generation', `Bearer ${ws.key}`);
  t.equal(res.status, 403, "a tool outside the key's scopes: 403");
  t.match(res.headers.get('www-authenticate'), /error="insufficient_scope", scope="[^"]*generations:write/);
});

t.test('2025-11-25: the SDK 1.x client, initialize handshake, over both nodes', async (t) => {
  const from = log.length;
  const out = await client('v1-client.ts');
  t.equal(out.protocolVersion, '2025-11-25');
  t.same(out.tools, TOOL_NAMES, 'every tool, in the order of the table');
  t.match(out.result, { structuredContent: { object: 'workspace', organization: { id: ws.orgId } } });
  const [onA, onB] = methodsByNode(from);
  t.ok([...onA, ...onB].includes('initialize'), 'initialize');
  t.ok(onA.length > 0 && onB.length > 0, `both nodes answered: ${JSON.stringify([onA, onB])}`);
  for (const x of log.slice(from).filter((x) => x.request && JSON.parse(x.request).method === 'tools/list')) {
    t.notOk('ttlMs' in JSON.parse(x.response).result, 'no 2026 cache fields on a 2025 answer');
  }
});

t.test('2025-06-18: initialize and calls over raw HTTP, over both nodes', async (t) => {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${ws.key}`,
  };
  const post = async (body: object, version?: string) => {
    const res = await fetch(`${proxy}/mcp`, {
      method: 'POST',
      headers: version ? { ...headers, 'mcp-protocol-version': version } : headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const from = log.length;
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  t.equal(init.status, 200);
  t.equal(init.type, 'application/json', 'a JSON answer, no event stream');
  t.match(JSON.parse(init.text), {
    id: 1,
    result: { protocolVersion: '2025-06-18', serverInfo: { name: 'media-api' }, capabilities: { tools: {} } },
  });
  t.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, '2025-06-18')).status, 202);
  const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, '2025-06-18');
  t.equal(list.status, 200);
  t.same(
    JSON.parse(list.text).result.tools.map((x: { name: string }) => x.name),
    TOOL_NAMES,
    'every tool, in the order of the table',
  );
  const call = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_workspace', arguments: {} } }, '2025-06-18');
  t.equal(call.status, 200);
  t.match(JSON.parse(call.text), { id: 3, result: { structuredContent: { object: 'workspace', organization: { id: ws.orgId } } } });
  const nodes = log.slice(from).map((x) => x.node);
  t.equal(nodes.length, 4);
  t.ok(
    nodes.every((n, i) => i === 0 || n !== nodes[i - 1]),
    `each message on the other node than the one before: ${nodes}`,
  );
});
