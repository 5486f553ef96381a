// The catalog tool's kept answers (src/mcp/answer-cache.ts): an identical request is answered with
// the bytes the SDK answered the first time, its own id put back, in both revisions; a request that
// differs in what the SDK reads (its headers, its params) is answered by the SDK; the caller is
// still authenticated first; and nothing but a whole 200 JSON answer of the catalog is kept.
import t from 'tap';
import { mcpAnswerCacheHits } from '../../src/metrics.ts';
import { startMcpApp } from './helpers.ts';

const app = await startMcpApp(t);
const ws = await app.workspace();
type Obj = Record<string, any>;

const hits = async () => (await mcpAnswerCacheHits.get()).values[0]?.value ?? 0;

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'cache-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function call(
  version: '2025-11-25' | '2026-07-28',
  id: string | number,
  opts: { accept?: string; key?: string | null; args?: Obj } = {},
) {
  const modern = version === '2026-07-28';
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: opts.accept ?? 'application/json, text/event-stream',
      ...(opts.key === null ? {} : { authorization: `Bearer ${opts.key ?? ws.key}` }),
      'mcp-protocol-version': version,
      ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'list_generation_catalog' } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'list_generation_catalog', arguments: opts.args ?? {}, ...(modern ? { _meta: MODERN_META } : {}) },
    }),
  });
  const text = await res.text();
  return { status: res.status, text, length: Number(res.headers.get('content-length')), type: res.headers.get('content-type') };
}

for (const version of ['2025-11-25', '2026-07-28'] as const) {
  t.test(`${version}: the second identical call is the first answer with its own id`, async (t) => {
    const before = await hits();
    const first = await call(version, 1);
    t.equal(first.status, 200);
    t.equal(await hits(), before, 'the first is answered by the SDK');
    const second = await call(version, 'a-longer-string-id');
    t.equal(second.status, 200);
    t.equal(await hits(), before + 1, 'the second from the kept answer');
    t.equal(second.length, Buffer.byteLength(second.text), 'its own length');
    const [a, b] = [JSON.parse(first.text), JSON.parse(second.text)];
    t.equal(b.id, 'a-longer-string-id');
    t.same({ ...b, id: 1 }, a, 'the same answer otherwise');
    t.match(b.result.structuredContent, { object: 'catalog' });
    t.match(second.type, /^application\/json/);
  });
}

t.test('what the SDK reads differs: answered by the SDK', async (t) => {
  const before = await hits();
  const refused = await call('2025-11-25', 3, { accept: 'application/json' });
  t.equal(refused.status, 406, 'an Accept without event streams is refused, as the SDK refuses it');
  const args = await call('2025-11-25', 4, { args: { unknown_field: 1 } });
  t.match(JSON.parse(args.text), { result: { isError: true } }, 'other arguments: their own (error) answer');
  const again = await call('2025-11-25', 5, { args: { unknown_field: 1 } });
  t.match(JSON.parse(again.text), { result: { isError: true } });
  t.equal(await hits(), before, 'neither a refusal nor an error result is kept');
});

t.test('the caller is authenticated before the kept answer is used', async (t) => {
  await call('2025-11-25', 6);
  const anonymous = await call('2025-11-25', 7, { key: null });
  t.equal(anonymous.status, 401);
  const wrong = await call('2025-11-25', 8, { key: 'mapi_not-a-key' });
  t.equal(wrong.status, 401);
});
