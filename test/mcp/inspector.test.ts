// A second client that is not ours: the MCP Inspector's CLI mode against /mcp, with an API key.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { MCP_TOOLS } from '../../src/mcp/tools.ts';
import { startMcpApp } from './helpers.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const inspector = path.join(root, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

const app = await startMcpApp(t);
const ws = await app.workspace({ credits: 10 });
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-inspector-'));
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));

const cli = (...args: string[]) =>
  run(
    process.execPath,
    [inspector, '--cli', `${app.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${ws.key}`, ...args],
    {
      cwd: home,
      env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), NO_COLOR: '1' },
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: String(e.stdout ?? ''), stderr: String(e.stderr ?? e.message) }),
  );

t.test('inspector --cli --transport http --method tools/list', async (t) => {
  const r = await cli('--method', 'tools/list');
  t.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { tools: { name: string; inputSchema: { type: string } }[] };
  t.same(out.tools.map((x) => x.name).sort(), MCP_TOOLS.map((x) => x.name).sort(), 'all the tools');
  t.ok(out.tools.every((x) => x.inputSchema.type === 'object'));
  t.ok(out.tools.some((x) => x.name === 'create_generation'));
});

// The Inspector lints every tool schema for portability (type arrays such as ["string","null"],
// remote $refs, bare boolean and untyped subschemas) and, with --strict, prints each finding on
// stderr ("Warning: tool …" / "Error: tool …", then a count) and exits 6 on error-severity ones.
// The table must give it nothing to say: 0 errors and 0 warnings.
t.test('inspector tools/list --strict: 0 portability findings (errors or warnings)', async (t) => {
  const r = await cli('--method', 'tools/list', '--strict');
  t.equal(r.code, 0, `exit ${r.code}: ${r.stderr.slice(0, 4000)}`);
  t.notMatch(r.stderr, /^(Warning|Error): tool /m, r.stderr.slice(0, 4000));
  t.notMatch(r.stderr, /Schema portability|\d+ warnings?\b/, 'no count of findings either');
  const json = await cli('--method', 'tools/list', '--strict', '--format', 'json');
  t.equal(json.code, 0, json.stderr.slice(0, 4000));
  const envelope = JSON.parse(json.stdout) as { result: { tools: unknown[] }; schemaFindings?: unknown[] };
  t.equal(envelope.result.tools.length, MCP_TOOLS.length, 'the whole list was linted');
  t.notOk('schemaFindings' in envelope, `no findings: ${JSON.stringify(envelope.schemaFindings)?.slice(0, 2000)}`);
});

t.test('inspector tools/call get_workspace', async (t) => {
  const r = await cli('--method', 'tools/call', '--tool-name', 'get_workspace');
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { structuredContent: { object: 'workspace', organization: { id: ws.orgId } } });
});
