// MCP-only tools are entries of the operation index and run through the one executor, like the
// operations: the executor authenticates them (API key or the adapter's resolved caller), checks
// their scope and plan, counts their rate limit and validates their arguments; over /mcp the
// answers are the ones operations give (403 insufficient_scope challenge, payment_required,
// rate_limited with retry_after_seconds).
import t from 'tap';
import { ApiError } from '../../src/errors.ts';
import { createExecutor, entriesById, type Executor, type OperationCall } from '../../src/operations/executor.ts';
import { bindHandlers } from '../../src/operations/registry.ts';
import { Reply } from '../../src/handlers.ts';
import { connect, startMcpApp } from './helpers.ts';

const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const rpc = (name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

const IMPORT_LIMIT = 3;
const app = await startMcpApp(t, { RATE_LIMIT_MEDIA_IMPORTS: String(IMPORT_LIMIT) });
// The executor of the running service, built again from the same context and handlers (its rate
// limiters count in the same PostgreSQL table as the service's own executor).
const executor: Executor = createExecutor(app.service.ctx, bindHandlers());

/** A call of an MCP-only tool as the MCP adapter makes it, authenticated with an API key. */
const toolCall = (name: string, key: string, args: Record<string, unknown> = {}): OperationCall => ({
  operationId: name,
  authorization: `Bearer ${key}`,
  path: {},
  query: {},
  headers: {},
  body: args,
  contentType: 'application/json',
});

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    (v) => v,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError))
    throw new Error(`expected an ApiError, got ${err instanceof Reply ? `a ${err.status} reply` : String(err)}`);
  return err;
}

async function mcpPost(key: string, name: string, args: unknown) {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
    body: rpc(name, args),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

t.test('MCP-only tools are executor entries: the same fields as operations, no method or path', async (t) => {
  for (const name of [
    'get_workspace',
    'recommend_voice',
    'list_editor_sound_effects',
    'upload_editor_media_from_url',
    'list_social_accounts',
    'publish_media_to_social',
  ]) {
    t.match(
      entriesById.get(name),
      { operationId: name, transport: 'mcp', method: null, path: null, scopes: Array, requiresPaidPlan: Boolean },
      name,
    );
  }
  t.equal(
    entriesById.get('upload_editor_media_from_url')!.rateLimit,
    'media_imports',
    'a tool declares its rate-limit policy as operations do',
  );
  t.equal(entriesById.get('get_workspace')!.requiresPaidPlan, false);
});

t.test('scope: an MCP-only tool refuses a key without its scope as operations do', async (t) => {
  const reader = await app.workspace({ scopes: ['generations:read'] });

  // The executor itself refuses it (API key authentication, then the scope).
  const err = await refusal(
    executor.execute(toolCall('upload_editor_media_from_url', reader.key, { url: 'https://cdn.example.com/a.png', media_type: 'image' })),
  );
  const opErr = await refusal(
    executor.execute({ ...toolCall('createGeneration', reader.key, { type: 'static_ad' }), operationId: 'createGeneration' }),
  );
  t.equal(err.status, 403);
  t.match(err.toJSON(), {
    error: {
      code: 'forbidden',
      retryable: false,
      context: { scope: 'generations:write', required_scopes: ['generations:write'], granted_scopes: ['generations:read'] },
    },
  });
  t.same(
    Object.keys(err.toJSON().error.context).sort(),
    Object.keys(opErr.toJSON().error.context).sort(),
    'the same context as an operation refused for its scope',
  );
  const bad = await refusal(executor.execute(toolCall('get_workspace', 'mapi_not-a-real-key')));
  t.equal(bad.status, 401, 'an unknown key is refused before anything else');

  // Over /mcp: the same 403 challenge as the operation's tool.
  const tool = await mcpPost(reader.key, 'upload_editor_media_from_url', { url: 'https://cdn.example.com/a.png', media_type: 'image' });
  const op = await mcpPost(reader.key, 'create_generation', { type: 'static_ad' });
  t.equal(tool.status, 403);
  t.equal(op.status, 403);
  const challenge = (h: Headers) => h.get('www-authenticate')!.replace(/, error_description="[^"]*"/, '');
  t.match(
    tool.headers.get('www-authenticate'),
    /^Bearer error="insufficient_scope", scope="generations:read generations:write", resource_metadata="[^"]+"/,
  );
  t.equal(challenge(tool.headers), challenge(op.headers), 'the same challenge, scope and resource metadata');
  t.match(tool.body, {
    error: {
      code: 'forbidden',
      context: { required_scopes: ['generations:write'], granted_scopes: ['generations:read'], tool: 'upload_editor_media_from_url' },
    },
  });
});

t.test('plan: a workspace without a paid plan gets payment_required from MCP-only tools, as from operations', async (t) => {
  const unpaid = await app.workspace({ plan: 'none' });
  for (const [name, args] of [
    ['recommend_voice', { script: 'Hello there' }],
    ['list_editor_sound_effects', {}],
    ['upload_editor_media_from_url', { url: 'https://cdn.example.com/a.png', media_type: 'image' }],
  ] as const) {
    const err = await refusal(executor.execute(toolCall(name, unpaid.key, { ...args })));
    t.equal(err.status, 402, name);
    t.equal(err.code, 'payment_required', name);
  }
  // Over MCP, the envelope the REST twin of an operation answers.
  const c = await connect(app, unpaid.key);
  t.teardown(() => c.close());
  const rest = await app.request('GET', '/api/v1/assets', { key: unpaid.key });
  t.equal(rest.status, 402);
  const res = await c.callTool({ name: 'recommend_voice', arguments: { script: 'Hello there' } });
  t.equal(res.isError, true);
  t.same(res.structuredContent, rest.body, 'the same envelope as REST answers for an operation');
  // A tool the spec declares free of the plan still answers.
  const ws = await executor.execute(toolCall('get_workspace', unpaid.key));
  t.match(ws.body, { object: 'workspace', plan: 'none', organization: { id: unpaid.orgId } });
  t.match((await c.callTool({ name: 'get_workspace', arguments: {} })).structuredContent, { plan: 'none' });
});

t.test('rate limit: upload_editor_media_from_url is counted per workspace by its policy, with the headers', async (t) => {
  const ws = await app.workspace();
  const other = await app.workspace();
  const c = await connect(app, ws.key);
  t.teardown(() => c.close());
  // Calls are counted before validation and before any fetch (a private address is refused by
  // the guarded client without a connection): three calls use the window up.
  const first = await refusal(
    executor.execute(toolCall('upload_editor_media_from_url', ws.key, { url: 'https://10.1.2.3/a.png', media_type: 'image' })),
  );
  t.equal(first.code, 'bad_request', 'the call itself fails (a private address)');
  t.equal(first.headers['X-RateLimit-Limit'], String(IMPORT_LIMIT), 'errors carry the quota');
  t.equal(first.headers['X-RateLimit-Remaining'], String(IMPORT_LIMIT - 1));
  t.equal(first.headers['RateLimit-Policy'], `"media_imports";q=${IMPORT_LIMIT};w=60`);
  t.match(first.headers.RateLimit, /^"media_imports";r=2;t=\d+$/);
  const second = await c.callTool({ name: 'upload_editor_media_from_url', arguments: { url: 'https://10.1.2.3/b.png', surprise: true } });
  t.match(
    second.structuredContent,
    { error: { code: 'bad_request', context: { errors: [{ field: 'surprise', message: 'is not a known field' }] } } },
    'counted over MCP too, then validated (the field named as the argument)',
  );
  const third = await c.callTool({
    name: 'upload_editor_media_from_url',
    arguments: { url: 'https://10.1.2.3/c.png', media_type: 'image' },
  });
  t.match(third.structuredContent, { error: { code: 'bad_request' } });

  // The fourth: rate_limited, over MCP and in the executor, with the headers.
  const limited = await c.callTool({
    name: 'upload_editor_media_from_url',
    arguments: { url: 'https://10.1.2.3/d.png', media_type: 'image' },
  });
  t.equal(limited.isError, true);
  t.match(limited.structuredContent, { error: { code: 'rate_limited', retryable: true, context: { retry_after_seconds: Number } } });
  t.notMatch(
    (limited.structuredContent as { error: { message: string } }).error.message,
    /idempotency key/,
    'a tool without an idempotency key is not told to reuse one',
  );
  const err = await refusal(
    executor.execute(toolCall('upload_editor_media_from_url', ws.key, { url: 'https://10.1.2.3/e.png', media_type: 'image' })),
  );
  t.equal(err.status, 429);
  t.equal(err.code, 'rate_limited');
  const retryAfter = Number(err.headers['Retry-After']);
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter} s within the window`);
  t.equal(err.headers['X-RateLimit-Remaining'], '0');
  const reset = Number(err.headers['X-RateLimit-Reset']);
  t.ok(reset > Date.now() && reset <= Date.now() + 61_000, 'X-RateLimit-Reset is a Unix time in ms within the window');

  // Per workspace and per policy: another workspace imports, and the limited one still lists sound effects.
  const fresh = await refusal(
    executor.execute(toolCall('upload_editor_media_from_url', other.key, { url: 'https://10.1.2.3/f.png', media_type: 'image' })),
  );
  t.equal(fresh.code, 'bad_request', 'another workspace has its own window');
  const sfx = await c.callTool({ name: 'list_editor_sound_effects', arguments: { limit: 1 } });
  t.notOk(sfx.isError, 'tools without a policy are not limited');
  const assets = await executor.execute({
    ...toolCall('listAssets', ws.key),
    operationId: 'listAssets',
    body: undefined,
    contentType: undefined,
  });
  t.equal(assets.status, 200, 'nor are operations without one');
});

t.test('MCP-only social tools run the same path: scope first, then arguments, then the handler', async (t) => {
  const gen = await app.workspace({ scopes: ['generations:read', 'generations:write'] });
  const social = await app.workspace({ scopes: ['social:read', 'social:write'] });
  t.equal((await refusal(executor.execute(toolCall('list_social_accounts', gen.key)))).code, 'forbidden', 'scope first');
  const bad = await refusal(executor.execute(toolCall('publish_media_to_social', social.key, { surprise: 1 })));
  t.equal(bad.code, 'bad_request', 'arguments validated first');
  const fields = (bad.context.errors as { field: string; message: string }[]).map((e) => `${e.field} ${e.message}`);
  t.ok(fields.includes('arguments.surprise is not a known field'), fields.join('; '));
  const missing = await refusal(
    executor.execute(
      toolCall('publish_media_to_social', social.key, {
        account_ids: ['00000000-0000-4000-8000-000000000000'],
        media_id: '00000000-0000-4000-8000-000000000001',
      }),
    ),
  );
  t.equal(missing.status, 404);
  t.match(missing.toJSON(), { error: { code: 'not_found', context: { resource: 'social_account' } } });
});
