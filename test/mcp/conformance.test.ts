// The official MCP conformance suite (@modelcontextprotocol/conformance, its `server` mode) as a
// child process against /mcp, for every server scenario that applies to this server, run twice:
//   - 0.1.16 (the package's latest tag; the 2025 revisions, with the initialize handshake), every
//     scenario (`--suite all`);
//   - 0.2.0-alpha.12 (devDependency alias @modelcontextprotocol/conformance-next) with
//     `--requirements 2026-07-28`: what conforming to revision 2026-07-28 requires, at its
//     stateless wire, plus what that revision runs unscored: the io.modelcontextprotocol/tasks
//     extension's scenarios and the ones still pending against the suite's own reference server.
// Each scenario either applies and passes, or is classified here with the reason it does not apply
// and the failure that shows it (the test fails if it starts passing: then it applies). A scenario
// that applies may hold checks that need the reference server's fixtures: those are classified
// one by one the same way, and every other check of it must pass.
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
import t, { type Test } from 'tap';
import { startTestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
/** The suite's two releases: 0.1.16 (2025 revisions) and 0.2.0-alpha.12 (2026-07-28 and the tasks extension). */
const SUITE_2025 = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SUITE_2026 = path.join(root, 'node_modules/@modelcontextprotocol/conformance-next/dist/index.js');

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

/** Runs a server suite once against /mcp through the proxy (`args` choose the scenarios): each scenario's checks. */
async function runSuite(suiteJs: string, url: string, args: string[]): Promise<{ output: string; results: Map<string, Check[]> }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
  try {
    // It exits 1 (the scenarios that do not apply fail); the verdicts are read from its checks.
    const output = await run(process.execPath, [suiteJs, 'server', '--url', url, ...args, '-o', out], {
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

/** A scenario that applies: the checks it must pass, and the warnings and suite-skipped checks accepted, with the reason. */
interface Applies {
  checks: string[];
  warnings?: Record<string, string>;
  skipped?: Record<string, string>;
  /** Its checks that need the reference server's fixtures: why, and what shows it (they must not pass). */
  fixtureChecks?: Record<string, NotApplying>;
}
/**
 * Why a scenario (or a check) does not apply, and what shows it: each of its checks of the statuses
 * `as` (FAILURE unless said) must exist and match `shows` in its error message or details.
 */
interface NotApplying {
  why: string;
  shows: RegExp;
  as?: Check['status'][];
}

/** The suite's synthetic check that every message this server sent fits the revision's JSON schema (0.2.0 on). */
const WIRE_SCHEMA = 'wire-schema-valid';

// ------------------------------------------------------------------------------------- 2025 (0.1.16)

// The scenarios that apply, each passing as the suite counts a pass (no FAILURE check; warnings
// allowed): the checks each must show, and the warnings accepted with the reason.
const STATELESS = 'a stateless endpoint (any API node answers any request) hands out no Mcp-Session-Id';
const APPLIES_2025: Record<string, Applies> = {
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
const fixture = (tool: string, shows = FIXTURE_TOOL): NotApplying => ({ why: `calls the reference server's fixture tool ${tool}`, shows });
const fixtureResource = (uri: string, prefix = 'MCP error -32602: '): NotApplying => ({
  why: `reads the reference server's fixture resource ${uri} (this server's only resource is its ui:// preview)`,
  // A miss is -32602 with data.uri on every revision (the SDK v2's ResourceNotFoundError, as 2026-07-28 requires).
  shows: new RegExp(`^Failed: ${prefix}Resource not found: ${uri.replace(/[/.]/g, '\\$&')}$`),
});
const noPrompts = (shows = NO_METHOD): NotApplying => ({ why: 'no prompts capability', shows });
const PROMPTS = ['prompts-list', 'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image'];
const DOES_NOT_APPLY_2025: Record<string, NotApplying> = {
  'logging-set-level': { why: 'no logging capability (the server sends no log messages)', shows: NO_METHOD },
  'completion-complete': { why: 'no completions capability (no prompts or resource templates to complete)', shows: NO_METHOD },
  'tools-call-simple-text': fixture('test_simple_text'),
  'tools-call-image': fixture('test_image_content'),
  'tools-call-audio': fixture('test_audio_content'),
  'tools-call-embedded-resource': fixture('test_embedded_resource'),
  'tools-call-mixed-content': fixture('test_multiple_content_types'),
  'tools-call-with-logging': { why: 'no logging capability (it sets the log level first, then calls a fixture tool)', shows: NO_METHOD },
  'tools-call-error': fixture('test_error_handling'),
  'tools-call-with-progress': fixture('test_tool_with_progress'),
  'tools-call-sampling': fixture('test_sampling'),
  'tools-call-elicitation': fixture('test_elicitation'),
  'elicitation-sep1034-defaults': fixture('test_elicitation_sep1034_defaults'),
  'elicitation-sep1330-enums': fixture('test_elicitation_sep1330_enums'),
  'json-schema-2020-12': {
    why: "looks for the reference server's fixture tool json_schema_2020_12_tool (a fixed $defs/address schema)",
    shows: /^Tool 'json_schema_2020_12_tool' not found\./,
  },
  'resources-read-text': fixtureResource('test://static-text'),
  'resources-read-binary': fixtureResource('test://static-binary'),
  'resources-templates-read': fixtureResource('test://template/123/data'),
  ...Object.fromEntries(
    ['resources-subscribe', 'resources-unsubscribe'].map((s) => [
      s,
      { why: 'no resource subscriptions (the one resource, the preview page, changes only with a release)', shows: NO_METHOD },
    ]),
  ),
  ...Object.fromEntries(PROMPTS.map((s) => [s, noPrompts()])),
};

// ------------------------------------------------------------------------ 2026-07-28 (0.2.0-alpha.12)

// The 2026 suite's clients report a JSON-RPC error without the SDK's "MCP error" prefix.
const FIXTURE_TOOL_2026 = /^Failed: Unknown tool: test_[a-z0-9_]+$/;
const NO_METHOD_2026 = /^Failed: Method not found$/;
const tasksFixture = (tools: string) => ({
  why: `calls the tasks extension's reference fixture ${tools}; this server's task tools start paid work and are checked by test/mcp/tasks.test.ts`,
  shows:
    /^(Unknown tool: (greet|slow_compute|failing_job|protocol_error_job|confirm_delete|multi_input|test_tool_with_task)|Not testable: no task was created by the preceding step.*|routing-task fixture from Check 2 unavailable.*)$/,
});
const diagnosticTool = (tool: string): NotApplying => ({
  why: `needs the reference server's diagnostic tool ${tool}; this server never asks the client for input (no elicitation, sampling or roots) and sends no log messages`,
  shows: new RegExp(`^Not testable: server does not list the diagnostic tool '${tool}' in tools/list`),
});
// SEP-2322 (multi round-trip requests): the reference server's tools and prompt that ask the client
// for input. This server never asks a client for input, so there is nothing to exercise.
const MRTR = 'calls the reference fixture {x} that asks the client for input (SEP-2322); this server never does';
const mrtr = (x: string, shows: RegExp, as?: Check['status'][]): NotApplying => ({ why: MRTR.replace('{x}', x), shows, as });
const mrtrUnknown = (tool: string) => mrtr(tool, new RegExp(`^JSON-RPC error: Unknown tool: ${tool}$`));

const APPLIES_2026: Record<string, Applies> = {
  // SEP-2575: the per-request _meta envelope, server/discover, version and header errors, the
  // 2025 methods gone (404), subscriptions/listen.
  'server-stateless': {
    checks: [
      'sep-2575-request-meta-invalid-missing-meta',
      'sep-2575-request-meta-invalid-missing-protocol-version',
      'sep-2575-request-meta-invalid-missing-client-capabilities',
      'sep-2575-http-server-meta-invalid-400',
      'sep-2575-request-meta-client-info-optional',
      'sep-2575-server-implements-discover',
      'sep-2575-server-identifies-in-result-meta',
      'sep-2575-server-declares-prompts-in-discover',
      'sep-2575-discover-capabilities-match-handlers',
      'sep-2575-server-unsupported-version-error',
      'sep-2575-http-server-unsupported-version-400',
      'sep-2575-http-server-header-mismatch-400',
      'sep-2575-http-server-method-not-found-404-initialize',
      'sep-2575-http-server-method-not-found-404-ping',
      'sep-2575-http-server-method-not-found-404-logging-setlevel',
      'sep-2575-http-server-method-not-found-404-resources-subscribe',
      'sep-2575-http-server-method-not-found-404-resources-unsubscribe',
      'sep-2575-http-server-method-not-found-404',
      'sep-2575-server-sends-subscription-ack',
      'sep-2575-server-tags-subscription-id',
      'sep-2575-server-honors-notification-filter',
      'sep-2575-http-server-error-jsonrpc-id',
    ],
    skipped: {
      'sep-2575-server-sends-prompts-list-changed-on-subscription': 'no prompts, so no prompts.listChanged',
      'sep-2575-server-sends-tools-list-changed-on-subscription': 'tools.listChanged is false: the list changes only with a deployment',
    },
    fixtureChecks: {
      'sep-2575-server-rejects-undeclared-capability': diagnosticTool('test_missing_capability'),
      'sep-2575-missing-capability-http-400': diagnosticTool('test_missing_capability'),
      'sep-2575-http-server-no-independent-requests-on-stream': diagnosticTool('test_streaming_elicitation'),
      'sep-2575-server-no-log-without-loglevel': diagnosticTool('test_logging_tool'),
    },
  },
  'tools-list': { checks: ['tools-list', 'tools-name-format', 'tools-list-deterministic-order'] },
  'resources-list': { checks: ['resources-list'] },
  // SEP-2164: a resource that does not exist is -32602 with data.uri, never empty contents.
  'sep-2164-resource-not-found': { checks: ['sep-2164-no-empty-contents', 'sep-2164-error-code', 'sep-2164-data-uri'] },
  'dns-rebinding-protection': { checks: ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'] },
  // Concurrent POST streams, each answered (JSON here: the suite reports SSE as optional, INFO).
  'server-sse-multiple-streams': { checks: ['server-accepts-multiple-post-streams'] },
  // SEP-2549: ttlMs and cacheScope on every cacheable result this server has.
  caching: {
    checks: [
      'sep-2549-tools-list-caching-hints',
      'sep-2549-resources-list-caching-hints',
      'sep-2549-resources-templates-list-caching-hints',
      'sep-2549-resources-read-caching-hints',
      'sep-2549-ttl-non-negative',
      'sep-2549-cache-scope-valid',
    ],
    fixtureChecks: {
      'sep-2549-prompts-list-caching-hints': noPrompts(/^prompts\/list returned JSON-RPC error -32601: Method not found$/),
    },
  },
  // SEP-2243: the Mcp-Method / Mcp-Name routing headers checked against the body (-32020, HTTP 400).
  'http-header-validation': {
    checks: [
      'sep-2243-server-reject-invalid-headers',
      'sep-2243-server-reject-error-code',
      'sep-2243-server-accepts-whitespace-header-value',
      'sep-2243-header-name-case-insensitive',
    ],
  },
  // tools/list (and the missing prompts/list) never answer input_required.
  'input-required-result-unsupported-methods': { checks: ['sep-2322-not-on-unsupported-requests'] },
  // The tasks extension (SEP-2663): advertised under capabilities.extensions (not the 2025 slot),
  // its methods refused with -32021 to a request that does not declare it.
  'tasks-capability-negotiation': {
    checks: ['tasks-extension-advertised', 'sep-2663-tasks-methods-non-declaring'],
    fixtureChecks: {
      'sep-2663-server-rejects-undeclared-client': tasksFixture('slow_compute'),
      'tasks-per-request-meta-opt-in': tasksFixture('slow_compute'),
    },
  },
  // tasks/result and tasks/list are gone in 2026-07-28 (-32601); an unknown task id is -32602.
  'tasks-dispatch-and-envelope': {
    checks: ['sep-2663-tasks-result-removed-method-not-found', 'tasks-removed-tasks-list', 'sep-2663-tasks-get-invalid-task-id-32602'],
    fixtureChecks: Object.fromEntries(
      [
        'tasks-server-directed-creation-no-hint',
        'sep-2663-legacy-task-param-ignored',
        'tasks-immediate-result-shortcut',
        'tasks-result-type-complete-on-non-task-responses',
        'sep-2663-durable-create-strong-consistency',
      ].map((id) => [id, tasksFixture('greet, slow_compute and failing_job')]),
    ),
  },
  // A tools/call whose Mcp-Method header names another method is refused with -32020. (A
  // mismatched Mcp-Name on tasks/get needs the fixture's task: test/mcp/tasks.test.ts checks it.)
  'tasks-request-headers': {
    checks: ['tasks-headers-reject-mismatched-method'],
    fixtureChecks: Object.fromEntries(
      [
        'tasks-headers-tolerate-mcp-method-on-tools-call',
        'sep-2663-routing-headers-accepted-on-tasks-get',
        'sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get',
      ].map((id) => [id, tasksFixture('greet and slow_compute')]),
    ),
  },
};

const DOES_NOT_APPLY_2026: Record<string, NotApplying> = {
  'completion-complete': { why: 'no completions capability (no prompts or resource templates to complete)', shows: NO_METHOD_2026 },
  'tools-call-simple-text': fixture('test_simple_text', FIXTURE_TOOL_2026),
  'tools-call-image': fixture('test_image_content', FIXTURE_TOOL_2026),
  'tools-call-audio': fixture('test_audio_content', FIXTURE_TOOL_2026),
  'tools-call-embedded-resource': fixture('test_embedded_resource', FIXTURE_TOOL_2026),
  'tools-call-mixed-content': fixture('test_multiple_content_types', FIXTURE_TOOL_2026),
  'tools-call-error': fixture('test_error_handling', FIXTURE_TOOL_2026),
  'tools-call-with-progress': fixture('test_tool_with_progress', FIXTURE_TOOL_2026),
  'json-schema-2020-12': DOES_NOT_APPLY_2025['json-schema-2020-12'],
  'resources-read-text': fixtureResource('test://static-text', ''),
  'resources-read-binary': fixtureResource('test://static-binary', ''),
  'resources-templates-read': fixtureResource('test://template/123/data', ''),
  ...Object.fromEntries(PROMPTS.map((s) => [s, noPrompts(NO_METHOD_2026)])),
  'http-custom-header-server-validation': {
    why: 'no tool of this server declares x-mcp-header parameters (mirrored into Mcp-Param-* headers), so there is nothing to validate',
    shows: /^Not testable: server exposes no tool with x-mcp-header annotations/,
  },
  'input-required-result-basic-elicitation': mrtrUnknown('test_input_required_result_elicitation'),
  'input-required-result-basic-sampling': mrtrUnknown('test_input_required_result_sampling'),
  'input-required-result-basic-list-roots': mrtrUnknown('test_input_required_result_list_roots'),
  'input-required-result-request-state': mrtrUnknown('test_input_required_result_request_state'),
  'input-required-result-multiple-input-requests': mrtrUnknown('test_input_required_result_multiple_inputs'),
  'input-required-result-result-type': mrtrUnknown('test_input_required_result_elicitation'),
  'input-required-result-capability-check': mrtrUnknown('test_input_required_result_capabilities'),
  'input-required-result-multi-round': mrtr(
    'test_input_required_result_multi_round',
    /^Expected InputRequiredResult with inputRequests and requestState$/,
  ),
  'input-required-result-tampered-state': mrtr(
    'test_input_required_result_tampered_state',
    /^Prerequisite failed: could not get initial InputRequiredResult with requestState$/,
  ),
  'input-required-result-non-tool-request': mrtr(
    'prompt test_input_required_result_prompt (and this server has no prompts)',
    /^JSON-RPC error: Method not found$/,
  ),
  // These two only warn (SHOULDs), about the fixture tool's absence.
  'input-required-result-missing-input-response': mrtr(
    'test_input_required_result_elicitation',
    /^Server returned JSON-RPC error instead of re-requesting via InputRequiredResult/,
    ['WARNING'],
  ),
  'input-required-result-ignore-extra-params': mrtr(
    'test_input_required_result_elicitation',
    /^Server returned JSON-RPC error when extra params were included: Unknown tool: test_input_required_result_elicitation\./,
    ['WARNING'],
  ),
  // Passes without exercising anything: the fixture tool is refused as unknown, which is all it looks at.
  'input-required-result-validate-input': mrtr(
    'test_input_required_result_elicitation',
    /"message":"Unknown tool: test_input_required_result_elicitation"/,
    ['SUCCESS'],
  ),
  'tasks-lifecycle': tasksFixture('greet, slow_compute, failing_job and protocol_error_job'),
  'tasks-wire-fields': tasksFixture('slow_compute'),
  'tasks-request-state-removal': {
    why: "calls the tasks extension's reference fixture slow_compute (this server keeps no request state)",
    shows: /^Unknown tool: slow_compute$/,
  },
  'tasks-mrtr-input': tasksFixture('confirm_delete and multi_input (tasks that ask the client for input; this server never does)'),
  'tasks-mrtr-composition': tasksFixture('test_tool_with_task (a task that asks the client for input; this server never does)'),
  'tasks-required-task-error': {
    why: 'calls the fixture failing_job registered with task support `required`; every task tool of this server also runs without tasks (queued record or progress), so none answers -32021',
    shows: /^tools\/call for failing_job returned error code -32602; spec requires -32021\.$/,
  },
  'tasks-status-notifications': {
    why: 'the suite skips it itself (its harness awaits a rewrite for the subscriptions/listen stream)',
    shows: /^Skipped: SEP-2663 delivers notifications\/tasks via the SEP-2575 subscriptions\/listen stream/,
    as: ['SKIPPED'],
  },
};

// ----------------------------------------------------------------------------------------- the runs

const front = await bearerProxy();
const app = await startTestApp(t, { PUBLIC_BASE_URL: front });
const ws = await app.workspace({ credits: 10 });
Object.assign(upstream, { url: app.url, token: ws.key });
const line = (c: Check) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`;
/** What a check shows: its error message, else its details. */
const evidence = (c: Check) => c.errorMessage ?? JSON.stringify(c.details ?? {});

/** The checks of `checks` that `why` covers, each showing its reason (none of them may pass instead). */
function notApplying(t: Test, label: string, checks: Check[], why: NotApplying) {
  const statuses = why.as ?? ['FAILURE'];
  const shown = checks.filter((c) => c.id !== WIRE_SCHEMA && statuses.includes(c.status));
  t.ok(shown.length > 0, `${label} ${statuses.join('/')} (${why.why}); it applies now if not: move it to the checks that apply`);
  for (const c of shown) t.match(evidence(c), why.shows, `${label}: ${why.why}`);
}

function expectApplies(t: Test, checks: Check[], expected: Applies) {
  const shown = checks
    .filter((c) => c.status !== 'INFO')
    .map(line)
    .join('\n');
  t.ok(checks.length > 0, 'the scenario ran');
  const fixtureIds = Object.keys(expected.fixtureChecks ?? {});
  t.same(checks.filter((c) => c.status === 'FAILURE' && !fixtureIds.includes(c.id)).map(line), [], 'no failed check');
  for (const [id, why] of Object.entries(expected.fixtureChecks ?? {}))
    notApplying(
      t,
      id,
      checks.filter((c) => c.id === id),
      why,
    );
  // A check the suite reports as INFO (informational, e.g. an optional SSE stream not used) counts as passed.
  const passed = (c: Check) => c.status === 'SUCCESS' || c.status === 'INFO';
  for (const id of expected.checks)
    t.ok(checks.some((c) => c.id === id) && checks.filter((c) => c.id === id).every(passed), `check ${id} passed\n${shown}`);
  const ids = (status: Check['status']) => [...new Set(checks.filter((c) => c.status === status).map((c) => c.id))].sort();
  t.same(ids('WARNING'), Object.keys(expected.warnings ?? {}).sort(), `only the warnings explained here\n${shown}`);
  t.same(
    ids('SKIPPED'),
    Object.keys(expected.skipped ?? {}).sort(),
    `only the checks the suite skips for a reason explained here\n${shown}`,
  );
}

/** One run's verdicts: every scenario classified, those that apply passing, the others failing only for their reason. */
async function verdicts(
  t: Test,
  suite: Awaited<ReturnType<typeof runSuite>>,
  applies: Record<string, Applies>,
  doesNot: Record<string, NotApplying>,
  schemaChecked: boolean,
) {
  t.test('the suite ran every server scenario, each of them classified here', async (t) => {
    t.ok(suite.results.size > 0, suite.output.slice(-4000));
    t.same([...suite.results.keys()].sort(), [...Object.keys(applies), ...Object.keys(doesNot)].sort());
  });
  for (const [name, expected] of Object.entries(applies))
    t.test(`${name}: passed`, async (t) => expectApplies(t, suite.results.get(name) ?? [], expected));
  t.test('the scenarios that do not apply fail only for that reason', async (t) => {
    for (const [name, why] of Object.entries(doesNot)) notApplying(t, name, suite.results.get(name) ?? [], why);
  });
  // 0.1.16 has no such check; 0.2.0 validates every message of every scenario.
  if (schemaChecked)
    t.test("every message this server sent fits the revision's JSON schema", async (t) => {
      const schemaChecks = [...suite.results.values()].flat().filter((c) => c.id === WIRE_SCHEMA);
      t.ok(schemaChecks.length > 0, 'the suite checked the messages');
      t.same(
        schemaChecks.filter((c) => c.status === 'FAILURE').map((c) => JSON.stringify(c.details).slice(0, 2000)),
        [],
      );
    });
}

const suite2025 = await runSuite(SUITE_2025, `${front}/mcp`, ['--suite', 'all']);
const suite2026 = await runSuite(SUITE_2026, `${front}/mcp`, ['--requirements', '2026-07-28']);

t.test('2025 revisions (conformance 0.1.16, --suite all)', async (t) => verdicts(t, suite2025, APPLIES_2025, DOES_NOT_APPLY_2025, false));
t.test('2026-07-28 with the tasks extension (conformance 0.2.0-alpha.12, --requirements 2026-07-28)', async (t) => {
  t.ok(suite2026.output.includes('Not scored for 2026-07-28'), 'the requirement set ran, with the unscored extension scenarios');
  await verdicts(t, suite2026, APPLIES_2026, DOES_NOT_APPLY_2026, true);
});
