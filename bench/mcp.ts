// Benchmark: MCP requests against REST `GET /api/v1/models` on the same service, same run, same
// machine. The MCP side is the real path a client takes on a stateless endpoint: one POST /mcp per
// message with an API key (resolved per request, from the short-lived token cache), the official
// SDK v2 (src/mcp/endpoint.ts: createMcpHandler for 2026-07-28, the stateless JSON transport for
// the 2025 revisions, a per-request SDK Server), the executor, and the JSON-RPC answer serialised
// by the SDK. Rows (--rows, comma-separated):
//   call-2025-06-18, call-2025-11-25, call-2026-07-28: tools/call of list_generation_catalog (the
//     catalog as structuredContent, the same bytes REST answers) on that revision; after the first
//     call, identical calls are answered with the SDK's first answer, their id put back
//     (src/mcp/answer-cache.ts), as REST answers the catalog serialised once;
//   list-2026-07-28: tools/list (every tool, about 64 KiB);
//   ping-2025-06-18: ping, the cost of the MCP path itself with an empty result.
// Each round measures REST once, then every row; each row's ratio is against that round's REST
// figure, and the median ratio per row is reported (target ≥ 0.5 for call-2025-06-18, the
// original row). The server's CPU time per request is printed beside it: on a small machine the
// load generator shares the cores, and the REST side (a cached GET) can be bound by it, so the CPU
// figures tell what each side costs the server.
// --cpu-prof DIR runs the API node with `node --cpu-prof` and leaves its profile in DIR.
// Usage: node bench/mcp.ts [--duration S] [--rounds N] [--connections C] [--rows a,b] [--cpu-prof DIR]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { load, median, startService } from './lib/servers.ts';

const ALL_ROWS = ['call-2025-06-18', 'call-2025-11-25', 'call-2026-07-28', 'list-2026-07-28', 'ping-2025-06-18'];
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    rows: { type: 'string', default: ALL_ROWS.join(',') },
    'cpu-prof': { type: 'string' },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const rowNames = values.rows.split(',').filter(Boolean);
for (const r of rowNames) if (!ALL_ROWS.includes(r)) throw new Error(`unknown row ${r}; rows: ${ALL_ROWS.join(', ')}`);
const say = (s: string) => process.stdout.write(`${s}\n`);
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

say('mcp bench: starting the service …');
const dataDir = process.env.DATABASE_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-mcp-'));
const env: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : {};
const profDir = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined;
const service = await startService({ ...env, ...(profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}) });
const admin = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['src/cli/admin.ts', ...args], { cwd: root, env: { ...process.env, ...env } });
  return JSON.parse(stdout);
};

interface Row {
  name: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  rps: number[];
  ratios: number[];
  cpu: number[];
}

/** One POST /mcp as a client of `revision` sends it (2026-07-28: the _meta envelope and the routing headers). */
function mcpRow(name: string, url: string, key: string): Row {
  const [kind, ...rest] = name.split('-');
  const revision = rest.join('-');
  const method = kind === 'call' ? 'tools/call' : kind === 'list' ? 'tools/list' : 'ping';
  const params: Record<string, unknown> = method === 'tools/call' ? { name: 'list_generation_catalog', arguments: {} } : {};
  const headers: Record<string, string> = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': revision,
  };
  if (revision === '2026-07-28') {
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': revision,
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    headers['mcp-method'] = method;
    if (method === 'tools/call') headers['mcp-name'] = 'list_generation_catalog';
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(method === 'ping' ? {} : { params }) });
  return { name, url, method: 'POST', headers, body, rps: [], ratios: [], cpu: [] };
}

/** One checked request of the row: 200 and the answer the row expects (the catalog REST answers, every tool, an empty result). */
async function check(row: Row, restBody: unknown) {
  const res = await fetch(row.url, { method: 'POST', headers: row.headers, body: row.body });
  const rpc = (await res.json()) as { result?: { isError?: boolean; structuredContent?: unknown; tools?: unknown[] } };
  const ok =
    res.status === 200 &&
    (row.name.startsWith('call')
      ? !rpc.result?.isError && JSON.stringify(rpc.result?.structuredContent) === JSON.stringify(restBody)
      : row.name.startsWith('list')
        ? Array.isArray(rpc.result?.tools) && rpc.result.tools.length > 0
        : rpc.result !== undefined);
  if (!ok) throw new Error(`${row.name} did not answer as expected: ${res.status} ${JSON.stringify(rpc).slice(0, 300)}`);
}

const rest = { url: `${service.url}/api/v1/models` };
const base: number[] = [];
const cpuRest: number[] = [];
let rows: Row[] = [];
/** Runs a load and measures the server's CPU µs per request over it (NaN when unknown). */
async function measured(run: () => ReturnType<typeof load>) {
  const before = service.cpuMicros?.();
  const r = await run();
  const after = service.cpuMicros?.();
  return { ...r, cpu: before === undefined || after === undefined || r.total === 0 ? NaN : (after - before) / r.total };
}
const cpuText = (us: number) => (Number.isNaN(us) ? 'n/a' : `${us.toFixed(0)} µs`);
const loadRow = (row: Row, seconds: number) =>
  load(row.url, { duration: seconds, connections, method: row.method, headers: row.headers, body: row.body });
try {
  const org = await admin('org', 'create', '--name', 'Bench', '--plan', 'paid');
  const key = await admin('key', 'create', '--org', org.id, '--scopes', 'generations:read');
  rows = rowNames.map((name) => mcpRow(name, `${service.url}/mcp`, key.key));
  const restBody = await (await fetch(rest.url)).json();
  for (const row of rows) await check(row, restBody);
  say(`mcp bench: ${rounds} rounds × ${duration}s per side, ${connections} connections, rows ${rowNames.join(', ')}`);
  // Warm up (JIT of the SDK, zod and the query paths; connection pools).
  await load(rest.url, { duration: 2, connections });
  for (const row of rows) await loadRow(row, 2);
  for (let i = 0; i < rounds; i++) {
    const r = await measured(() => load(rest.url, { duration, connections }));
    if (r.non2xx || r.errors) throw new Error(`REST: non-2xx ${r.non2xx}, errors ${r.errors}`);
    base.push(r.rps);
    cpuRest.push(r.cpu);
    const parts = [`REST GET /models ${r.rps.toFixed(0)} req/s (CPU ${cpuText(r.cpu)})`];
    for (const row of rows) {
      const m = await measured(() => loadRow(row, duration));
      if (m.non2xx || m.errors) throw new Error(`${row.name}: non-2xx ${m.non2xx}, errors ${m.errors}`);
      row.rps.push(m.rps);
      row.ratios.push(m.rps / r.rps);
      row.cpu.push(m.cpu);
      parts.push(`${row.name} ${m.rps.toFixed(0)} req/s (CPU ${cpuText(m.cpu)}) ${(m.rps / r.rps).toFixed(3)}`);
    }
    say(`  round ${i + 1}: ${parts.join(' | ')}`);
  }
} finally {
  await service.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
say(`mcp bench: REST GET /models median ${median(base).toFixed(0)} req/s, server CPU ${cpuText(median(cpuRest))}/req`);
for (const row of rows) {
  const ratio = median(row.ratios);
  say(
    `mcp bench: ${row.name.padEnd(16)} median ${median(row.rps).toFixed(0).padStart(6)} req/s, server CPU ${cpuText(median(row.cpu)).padStart(7)}/req, RATIO ${ratio.toFixed(3)}` +
      (row.name === 'call-2025-06-18' ? ` (target ≥ 0.5) ${ratio >= 0.5 ? 'MET' : 'NOT MET'}` : ''),
  );
}
if (profDir) say(`mcp bench: CPU profile of the API node in ${profDir}`);
