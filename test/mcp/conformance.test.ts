// The official MCP conformance suite (@modelcontextprotocol/conformance, its `server` mode) as a
// child process against /mcp, for every server scenario that applies to this server.
//
// The suite has no option for request headers (its scenarios build their own SDK clients, fetch
// and undici calls), and /mcp wants a bearer token, so it talks to a pass-through proxy on
// 127.0.0.1 that adds `Authorization: Bearer <API key>` to every request and changes nothing else
// (Host and Origin included, which dns-rebinding-protection sets itself). The proxy's address is
// the service's PUBLIC_BASE_URL, as a reverse proxy's is in production.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { forward, listenLocal } from '../helpers/local-server.ts';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const conformance = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: unknown;
}

/** Where the proxy forwards and the token it adds (set once the service runs). */
const upstream = { url: '', token: '' };

/** The pass-through proxy adding the bearer token; closed in teardown. Returns its base URL. */
async function bearerProxy(): Promise<string> {
  const server = http.createServer((req, res) => forward(req, res, upstream.url, { authorization: `Bearer ${upstream.token}` }));
  return listenLocal(t, server);
}

/** Runs the whole server suite once against /mcp through the proxy: each scenario's checks. */
async function runSuite(url: string): Promise<{ output: string; results: Map<string, Check[]> }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
  try {
    // It exits 1 (the scenarios that do not apply fail); the verdicts are read from its checks.
    const output = await run(process.execPath, [conformance, 'server', '--url', url, '--suite', 'all', '-o', out], {
      cwd: out,
      env: { ...process.env, HOME: out, NO_COLOR: '1' },
      timeout: 150_000,
      maxBuffer: 64 * 1024 * 1024,
    }).then(
      (r) => r.stdout + r.stderr,
      (e) => `${e.stdout ?? ''}${e.stderr ?? e.message}`,
    );
    // One folder per scenario run: server-<scenario>-<ISO time with : and . as ->/checks.json.
    const results = new Map<string, Check[]>();
    for (const dir of fs.readdirSync(out)) {
      const name = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir)?.[1];
      if (name) results.set(name, JSON.parse(fs.readFileSync(path.join(out, dir, 'checks.json'), 'utf8')) as Check[]);
    }
    return { output, results };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

// The scenarios that apply, each passing as the suite counts a pass (no FAILURE check; warnings
// allowed): the checks each must show, and the warnings accepted with the reason.
const STATELESS = 'a stateless endpoint (any API node answers any request) hands out no Mcp-Session-Id';
const APPLIES: Record<string, { checks: string[]; warnings?: Record<string, string> }> = {
  'server-initialize': { checks: ['server-initialize'] },
  ping: { checks: ['ping'] },
  'tools-list': { checks: ['tools-list'] },
  // The resources capability holds the MCP Apps preview (src/mcp/apps.ts): listed with uri and name.
  'resources-list': { checks: ['resources-list'] },
  'dns-rebinding-protection': { checks: ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'] },
  // SEP-1699 polling: its tools/call (Accept: SSE and JSON) is answered with JSON, for which the
  // suite itself reports the priming-event, retry and resume checks as not applicable (INFO).
  'server-sse-polling': { checks: ['server-sse-content-type'], warnings: { 'server-sse-polling-session': STATELESS } },
  // Runs its concurrent streams only within a session; without one it ends at this warning.
  'server-sse-multiple-streams': { checks: [], warnings: { 'server-sse-multiple-streams-session': STATELESS } },
};

// The scenarios that do not apply, why, and the failure that shows it (every FAILURE check of the
// scenario must match): the reference server's fixture tools, prompts, resources, completions and
// logging, which this server does not offer (it declares the tools capability and the resources
// capability for its one ui:// preview, without subscriptions or templates).
const FIXTURE_TOOL = /^Failed: MCP error -32602: Unknown tool: test_[a-z0-9_]+$/;
const NO_METHOD = /^Failed: MCP error -32601: Method not found$/;
const fixture = (tool: string) => ({ why: `calls the reference server's fixture tool ${tool}`, failure: FIXTURE_TOOL });
const fixtureResource = (uri: string) => ({
  why: `reads the reference server's fixture resource ${uri} (this server's only resource is its ui:// preview)`,
  // A miss is -32602 with data.uri on every revision (the SDK v2's ResourceNotFoundError, as 2026-07-28 requires).
  failure: new RegExp(`^Failed: MCP error -32602: Resource not found: ${uri.replace(/[/.]/g, '\\$&')}$`),
});
const DOES_NOT_APPLY: Record<string, { why: string; failure: RegExp }> = {
  'logging-set-level': { why: 'no logging capability (the server sends no log messages)', failure: NO_METHOD },
  'completion-complete': { why: 'no completions capability (no prompts or resource templates to complete)', failure: NO_METHOD },
  'tools-call-simple-text': fixture('test_simple_text'),
  'tools-call-image': fixture('test_image_content'),
  'tools-call-audio': fixture('test_audio_content'),
  'tools-call-embedded-resource': fixture('test_embedded_resource'),
  'tools-call-mixed-content': fixture('test_multiple_content_types'),
  'tools-call-with-logging': { why: 'no logging capability (it sets the log level first, then calls a fixture tool)', failure: NO_METHOD },
  'tools-call-error': fixture('test_error_handling'),
  'tools-call-with-progress': fixture('test_tool_with_progress'),
  'tools-call-sampling': fixture('test_sampling'),
  'tools-call-elicitation': fixture('test_elicitation'),
  'elicitation-sep1034-defaults': fixture('test_elicitation_sep1034_defaults'),
  'elicitation-sep1330-enums': fixture('test_elicitation_sep1330_enums'),
  'json-schema-2020-12': {
    why: "looks for the reference server's fixture tool json_schema_2020_12_tool (a fixed $defs/address schema)",
    failure: /^Tool 'json_schema_2020_12_tool' not found\./,
  },
  'resources-read-text': fixtureResource('test://static-text'),
  'resources-read-binary': fixtureResource('test://static-binary'),
  'resources-templates-read': fixtureResource('test://template/123/data'),
  ...Object.fromEntries(
    ['resources-subscribe', 'resources-unsubscribe'].map((s) => [
      s,
      { why: 'no resource subscriptions (the one resource, the preview page, changes only with a release)', failure: NO_METHOD },
    ]),
  ),
  ...Object.fromEntries(
    ['prompts-list', 'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image'].map((s) => [
      s,
      { why: 'no prompts capability', failure: NO_METHOD },
    ]),
  ),
};

const front = await bearerProxy();
const app = await startTestApp(t, { PUBLIC_BASE_URL: front });
const ws = await app.workspace({ credits: 10 });
Object.assign(upstream, { url: app.url, token: ws.key });
const suite = await runSuite(`${front}/mcp`);
const line = (c: Check) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`;

t.test('the suite ran every server scenario, each of them classified here', async (t) => {
  t.ok(suite.results.size > 0, suite.output.slice(-4000));
  t.same([...suite.results.keys()].sort(), [...Object.keys(APPLIES), ...Object.keys(DOES_NOT_APPLY)].sort());
});

for (const [name, expected] of Object.entries(APPLIES)) {
  t.test(`${name}: passed`, async (t) => {
    const checks = suite.results.get(name) ?? [];
    const shown = checks
      .filter((c) => c.status !== 'INFO')
      .map(line)
      .join('\n');
    t.ok(checks.length > 0, 'the scenario ran');
    t.same(checks.filter((c) => c.status === 'FAILURE').map(line), [], 'no failed check');
    for (const id of expected.checks)
      t.ok(
        checks.some((c) => c.id === id && c.status !== 'FAILURE'),
        `check ${id}\n${shown}`,
      );
    const warned = checks.filter((c) => c.status === 'WARNING').map((c) => c.id);
    t.same(warned.sort(), Object.keys(expected.warnings ?? {}).sort(), `only the warnings explained here\n${shown}`);
  });
}

t.test('the scenarios that do not apply fail only for that reason', async (t) => {
  for (const [name, { why, failure }] of Object.entries(DOES_NOT_APPLY)) {
    const failed = (suite.results.get(name) ?? []).filter((c) => c.status === 'FAILURE');
    t.ok(failed.length > 0, `${name} fails (${why}); it applies now if it passes: move it to APPLIES`);
    for (const c of failed) t.match(c.errorMessage ?? '', failure, `${name}: ${why}`);
  }
});
