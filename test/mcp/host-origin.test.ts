// DNS-rebinding protection of /mcp (MCP transports, Security warning; the conformance suite's
// dns-rebinding-protection scenario): the Host must name this server (PUBLIC_BASE_URL's host, an
// MCP_ALLOWED_HOSTS entry, or the address the connection came to, with `localhost` for a loopback
// one), and an Origin, when sent, must be PUBLIC_BASE_URL's origin or an MCP_ALLOWED_ORIGINS entry.
// Anything else is 403 with a JSON-RPC error, before the bearer token is looked at, for every
// method of /mcp. Requests go out over node:http, which sends the Host header it is given.
import http from 'node:http';
import net from 'node:net';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import type { TestApp } from '../helpers/app.ts';
import { connect, startMcpApp } from './helpers.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'dns-rebinding-test', version: '1' } },
});
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });

interface Answer {
  status: number;
  type: string | undefined;
  body: any;
}

/** One request to `app`'s /mcp over node:http, with exactly these headers (Host included). */
function send(app: TestApp, headers: Record<string, string>, body = LIST, method = 'POST'): Promise<Answer> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: '/mcp', method, headers: { ...MCP_HEADERS, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: res.headers['content-type'], body: text ? JSON.parse(text) : undefined }),
      );
    });
    req.on('error', reject);
    req.end(method === 'POST' ? body : undefined);
  });
}

const refused = (message: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });

t.test('PUBLIC_BASE_URL is where the server listens: another Host or Origin is refused, even with a valid key', async (t) => {
  const app = await startMcpApp(t);
  const ws = await app.workspace({ scopes: ['generations:read'] });
  const auth = { authorization: `Bearer ${ws.key}` };
  const self = new URL(app.url).host; // 127.0.0.1:<port>
  const port = new URL(app.url).port;

  // What the probe sent: a rebound name as Host and Origin, with a valid key.
  let res = await send(app, { ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' });
  t.equal(res.status, 403, 'rebound Host and Origin with a valid key: 403');
  t.match(res.type, /^application\/json/);
  t.same(res.body, refused('Invalid Host header: evil.example.com'));
  res = await send(app, { ...auth, host: `evil.example.com:${port}` });
  t.equal(res.status, 403, 'the right port does not make a foreign name right');
  t.same(res.body, refused(`Invalid Host header: evil.example.com:${port}`));
  // The conformance scenario: an initialize without a token, so the Host is checked before the bearer (not 401).
  res = await send(app, { host: 'evil.example.com' }, INIT);
  t.equal(res.status, 403, 'checked before the bearer token');
  res = await send(app, { host: 'evil.example.com' }, '', 'GET');
  t.equal(res.status, 403, 'GET too (before its 405)');
  res = await send(app, { host: 'evil.example.com' }, '', 'DELETE');
  t.equal(res.status, 403, 'DELETE too');
  // node:http fills an empty Host in: this one goes out over a raw socket.
  const empty = await new Promise<string>((resolve, reject) => {
    const { hostname, port: p } = new URL(app.url);
    const socket = net.connect(Number(p), hostname, () =>
      socket.end(
        `POST /mcp HTTP/1.1\r\nHost: \r\nAuthorization: Bearer ${ws.key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${LIST.length}\r\nConnection: close\r\n\r\n${LIST}`,
      ),
    );
    let raw = '';
    socket.on('data', (d) => (raw += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(raw));
  });
  t.match(empty, /^HTTP\/1\.1 403 .*\r\n[\s\S]*"Missing Host header"/, 'an empty Host');

  for (const host of [self, `localhost:${port}`, 'LOCALHOST', '127.0.0.1']) {
    res = await send(app, { ...auth, host });
    t.equal(res.status, 200, `Host ${host}: answered`);
  }
  res = await send(app, { host: self }, INIT);
  t.equal(res.status, 401, 'a valid Host without a token: the bearer challenge, not 403');

  res = await send(app, { ...auth, host: self, origin: 'http://evil.example.com' });
  t.equal(res.status, 403, 'a valid Host with a foreign Origin: 403');
  t.same(res.body, refused('Invalid Origin header: http://evil.example.com'));
  for (const origin of ['null', `http://localhost:${port}`, `https://${self}`, `http://127.0.0.1:${Number(port) + 1}`]) {
    res = await send(app, { ...auth, host: self, origin });
    t.equal(res.status, 403, `Origin ${origin}: 403`);
  }
  res = await send(app, { ...auth, host: self, origin: `http://${self}` });
  t.equal(res.status, 200, 'the public origin is allowed');

  // The SDK client (Host from the URL, no Origin) works as before.
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  t.ok((await client.listTools()).tools.length > 0, 'an SDK client lists the tools');
});

t.test('behind a public name: its host, MCP_ALLOWED_HOSTS, the listening address; its origin and MCP_ALLOWED_ORIGINS', async (t) => {
  const app = await startMcpApp(t, {
    PUBLIC_BASE_URL: 'https://mcp.example.test',
    MCP_ALLOWED_HOSTS: 'alt.example.test, [::1]',
    MCP_ALLOWED_ORIGINS: 'https://app.example.test,http://localhost:6274/',
  });
  const ws = await app.workspace({ scopes: ['generations:read'] });
  const auth = { authorization: `Bearer ${ws.key}` };
  const self = new URL(app.url).host;
  for (const host of [
    'mcp.example.test',
    'mcp.example.test:443',
    'MCP.example.test.',
    'alt.example.test',
    'alt.example.test:8443',
    '[::1]:9',
    self,
    'localhost:8080',
  ]) {
    const res = await send(app, { ...auth, host });
    t.equal(res.status, 200, `Host ${host}: answered`);
  }
  for (const host of ['example.test', 'evil.mcp.example.test', 'mcp.example.test.evil.example', '127.0.0.2', '[::2]']) {
    const res = await send(app, { ...auth, host });
    t.equal(res.status, 403, `Host ${host}: 403`);
  }
  for (const origin of ['https://mcp.example.test', 'https://app.example.test', 'http://localhost:6274']) {
    const res = await send(app, { ...auth, host: 'mcp.example.test', origin });
    t.equal(res.status, 200, `Origin ${origin}: answered`);
  }
  for (const origin of ['http://mcp.example.test', 'https://app.example.test:444', 'https://evil.example', 'http://localhost:6275']) {
    const res = await send(app, { ...auth, host: 'mcp.example.test', origin });
    t.equal(res.status, 403, `Origin ${origin}: 403`);
    t.same(res.body, refused(`Invalid Origin header: ${origin}`));
  }
});

t.test('MCP_ALLOWED_HOSTS and MCP_ALLOWED_ORIGINS are checked when the configuration is read', async (t) => {
  const load = (env: Record<string, string>) => () => loadConfig({ PORT: '3000', ...env });
  t.same(load({ MCP_ALLOWED_HOSTS: 'A.example.test, b.example.test.' })().mcpAllowedHosts, ['a.example.test', 'b.example.test']);
  t.same(load({ MCP_ALLOWED_ORIGINS: 'https://App.example.test/, http://localhost:6274' })().mcpAllowedOrigins, [
    'https://app.example.test',
    'http://localhost:6274',
  ]);
  t.same(load({})().mcpAllowedOrigins, []);
  t.throws(load({ MCP_ALLOWED_HOSTS: 'a.example.test:8443' }), /MCP_ALLOWED_HOSTS/, 'a port');
  t.throws(load({ MCP_ALLOWED_HOSTS: 'https://a.example.test' }), /MCP_ALLOWED_HOSTS/, 'a URL');
  t.throws(load({ MCP_ALLOWED_HOSTS: 'a.example.test/x' }), /MCP_ALLOWED_HOSTS/, 'a path');
  t.throws(load({ MCP_ALLOWED_ORIGINS: 'app.example.test' }), /MCP_ALLOWED_ORIGINS/, 'no scheme');
  t.throws(load({ MCP_ALLOWED_ORIGINS: 'https://app.example.test/path' }), /MCP_ALLOWED_ORIGINS/, 'a path');
  t.throws(load({ MCP_ALLOWED_ORIGINS: 'null' }), /MCP_ALLOWED_ORIGINS/, 'the opaque origin');
  t.throws(load({ MCP_ALLOWED_ORIGINS: 'ftp://app.example.test' }), /MCP_ALLOWED_ORIGINS/, 'not http(s)');
});
