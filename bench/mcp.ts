// Benchmark: MCP `tools/call` of list_generation_catalog against REST `GET /api/v1/models` on
// the same service, same run, same machine. The MCP side is the real path a client takes on a
// stateless endpoint: one POST /mcp per call with an API key (resolved per request, from the
// short-lived token cache), the official SDK v2's stateless transport and a per-request SDK Server
// (src/mcp/endpoint.ts), the executor, and the JSON-RPC result with structuredContent (the catalog,
// serialised by the SDK for each answer).
// Rounds alternate between the two; the median ratio is reported (target ≥ 0.5). The server's CPU
// time per request is printed beside it: on a small machine the load generator shares the cores,
// and the REST side (a cached GET) can be bound by it, so the CPU figures tell what each side
// costs the server.
// Usage: node bench/mcp.ts [--duration S] [--rounds N] [--connections C]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { load, median, startService } from './lib/servers.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const say = (s: string) => process.stdout.write(`${s}\n`);
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

say('mcp bench: starting the service …');
const dataDir = process.env.DATABASE_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-mcp-'));
const env: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : {};
const service = await startService(env);
const admin = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['src/cli/admin.ts', ...args], { cwd: root, env: { ...process.env, ...env } });
  return JSON.parse(stdout);
};

const rest = { url: `${service.url}/api/v1/models` };
let mcp: { url: string; method: string; headers: Record<string, string>; body: string };
const ours: number[] = [];
const base: number[] = [];
const ratios: number[] = [];
const cpuRest: number[] = [];
const cpuMcp: number[] = [];
/** Runs a load and measures the server's CPU µs per request over it (NaN when unknown). */
async function measured(run: () => ReturnType<typeof load>) {
  const before = service.cpuMicros?.();
  const r = await run();
  const after = service.cpuMicros?.();
  return { ...r, cpu: before === undefined || after === undefined || r.total === 0 ? NaN : (after - before) / r.total };
}
const cpuText = (us: number) => (Number.isNaN(us) ? 'n/a' : `${us.toFixed(0)} µs`);
try {
  const org = await admin('org', 'create', '--name', 'Bench', '--plan', 'paid');
  const key = await admin('key', 'create', '--org', org.id, '--scopes', 'generations:read');
  mcp = {
    url: `${service.url}/mcp`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${key.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_generation_catalog', arguments: {} } }),
  };
  // One checked call of each: the tool answers the catalog the REST operation answers.
  const restBody = await (await fetch(rest.url)).json();
  const res = await fetch(mcp.url, { method: 'POST', headers: mcp.headers, body: mcp.body });
  const rpc = (await res.json()) as { result?: { isError?: boolean; structuredContent?: unknown } };
  if (res.status !== 200 || rpc.result?.isError || JSON.stringify(rpc.result?.structuredContent) !== JSON.stringify(restBody)) {
    throw new Error(`tools/call did not answer the catalog: ${res.status} ${JSON.stringify(rpc).slice(0, 300)}`);
  }
  say(`mcp bench: ${rounds} rounds × ${duration}s per side, ${connections} connections`);
  // Warm both up (JIT of the SDK, zod and the query paths; connection pools).
  await load(rest.url, { duration: 2, connections });
  await load(mcp.url, { duration: 3, connections, method: 'POST', headers: mcp.headers, body: mcp.body });
  for (let i = 0; i < rounds; i++) {
    const r = await measured(() => load(rest.url, { duration, connections }));
    const m = await measured(() => load(mcp.url, { duration, connections, method: 'POST', headers: mcp.headers, body: mcp.body }));
    if (m.non2xx || m.errors || r.non2xx || r.errors)
      throw new Error(`non-2xx or errors: REST ${r.non2xx}/${r.errors}, MCP ${m.non2xx}/${m.errors}`);
    base.push(r.rps);
    ours.push(m.rps);
    ratios.push(m.rps / r.rps);
    cpuRest.push(r.cpu);
    cpuMcp.push(m.cpu);
    say(
      `  round ${i + 1}: REST GET /models ${r.rps.toFixed(0)} req/s (p99 ${r.p99} ms, server CPU ${cpuText(r.cpu)}/req) | ` +
        `MCP tools/call ${m.rps.toFixed(0)} req/s (p99 ${m.p99} ms, server CPU ${cpuText(m.cpu)}/req) | ratio ${(m.rps / r.rps).toFixed(3)}`,
    );
  }
} finally {
  await service.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
const ratio = median(ratios);
say(`mcp bench: REST median ${median(base).toFixed(0)} req/s, MCP median ${median(ours).toFixed(0)} req/s`);
say(`mcp bench: server CPU per request, median: REST ${cpuText(median(cpuRest))}, MCP ${cpuText(median(cpuMcp))}`);
say(`mcp bench: RATIO ${ratio.toFixed(3)} (target ≥ 0.5) ${ratio >= 0.5 ? 'MET' : 'NOT MET'}`);
