// MCP tasks over raw HTTP, in both wire forms, against a service with workers: a long tool called by
// a client that asks for tasks answers with a task handle; the task is followed to its end through
// tasks/get (2026-07-28: the final result inline; 2025-11-25: through tasks/result), the result
// carrying the media as resource links and the structured result; a client that does not ask gets
// the queued record as before. Tasks are the workspace's: another workspace's task id is unknown.
import { and, desc, eq } from 'drizzle-orm';
import t from 'tap';
import { creditLedger, mcpTasks, organizations, slideshows } from '../../src/db/schema/index.ts';
import { TASK_POLL_INTERVAL_MS } from '../../src/mcp/tasks.ts';
import { slideshowResource } from '../../src/pipelines/slideshow/rows.ts';
import { startMcpApp } from './helpers.ts';

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 500 });
const other = await app.workspace({ credits: 500 });
const TASKS = 'io.modelcontextprotocol/tasks';

type Obj = Record<string, any>;
let nextId = 1;

/**
 * One JSON-RPC request in the form of `version` (2026-07-28: the per-request envelope and routing
 * headers; the task methods declare the tasks extension, as a client that uses them does, unless
 * `tasks` says otherwise).
 */
const rpc = (
  version: '2026-07-28' | '2025-11-25',
  key: string,
  method: string,
  params: Obj,
  opts: { tasks?: boolean; status?: number; mcpName?: string } = {},
) => rpcOn(app, version, key, method, params, opts);

/**
 * POSTs one JSON-RPC request in the form of `version`: under 2026-07-28 with the per-request
 * envelope (`meta` added to its `_meta`, the tasks extension declared when `tasks`) and the routing
 * headers (`Mcp-Name`: the tool, or the task of a task method, unless `mcpName` says otherwise).
 */
function post(
  on: typeof app,
  version: '2026-07-28' | '2025-11-25',
  key: string,
  method: string,
  params: Obj,
  opts: { tasks?: boolean; mcpName?: string; meta?: Obj } = {},
) {
  const modern = version === '2026-07-28';
  const name = opts.mcpName ?? (method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined);
  const envelope = modern
    ? {
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': opts.tasks ? { extensions: { [TASKS]: {} } } : {},
      }
    : {};
  const meta = { ...envelope, ...opts.meta };
  return fetch(`${on.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
      'mcp-protocol-version': version,
      ...(modern ? { 'mcp-method': method, ...(name ? { 'mcp-name': String(name) } : {}) } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: { ...params, ...(Object.keys(meta).length ? { _meta: meta } : {}) },
    }),
  });
}

async function rpcOn(
  on: typeof app,
  version: '2026-07-28' | '2025-11-25',
  key: string,
  method: string,
  params: Obj,
  opts: { tasks?: boolean; status?: number; mcpName?: string } = {},
) {
  const tasks = opts.tasks ?? method.startsWith('tasks/');
  const res = await post(on, version, key, method, params, { tasks, mcpName: opts.mcpName });
  const text = await res.text();
  t.equal(res.status, opts.status ?? 200, `${method}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { result?: Obj; error?: { code: number; message: string; data?: Obj } };
}

const credits = async (orgId: string, on = app) =>
  (await on.service.ctx.db.select({ c: organizations.credits }).from(organizations).where(eq(organizations.id, orgId)))[0].c;

const staticAd = (key: string) => ({
  name: 'create_generation',
  arguments: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Cold-pressed olive oil', idempotency_key: key },
});

/** Polls tasks/get until the task leaves `working`, honouring pollIntervalMs (bounded). */
async function untilEnded(version: '2026-07-28' | '2025-11-25', taskId: string) {
  for (let i = 0; i < 240; i++) {
    const got = await rpc(version, ws.key, 'tasks/get', { taskId });
    if (got.error) return got;
    if (got.result!.status !== 'working') return got;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`task ${taskId} still working`);
}

t.test('tools/list: the six long tools may run as tasks (2025-11-25 execution; the extension lists nothing)', async (t) => {
  const legacy = (await rpc('2025-11-25', ws.key, 'tools/list', {})).result!.tools as Obj[];
  const taskTools = legacy.filter((x) => x.execution?.taskSupport === 'optional').map((x) => x.name);
  t.same(taskTools.sort(), [
    'create_faceless_video',
    'create_generation',
    'create_reference_inspiration',
    'create_slideshow',
    'export_editor_video',
    'publish_media_to_social',
  ]);
  const slideshow = legacy.find((x) => x.name === 'create_slideshow')!;
  t.match(
    slideshow.outputSchema.properties.status.enum,
    ['queued', 'generating', 'completed', 'error'],
    "the final result's status is the slideshow's",
  );
  const modern = (await rpc('2026-07-28', ws.key, 'tools/list', {})).result!.tools as Obj[];
  t.notOk(
    modern.some((x) => 'execution' in x),
    'no execution field under 2026-07-28',
  );
});

t.test('2026-07-28: create_generation as a task, followed to a completed result with its media', async (t) => {
  const before = await credits(ws.orgId);
  const created = await rpc('2026-07-28', ws.key, 'tools/call', staticAd('task-modern-1'), { tasks: true });
  const task = created.result!;
  t.match(task, { resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS });
  t.match(task.taskId, /^[0-9a-f-]{36}$/);
  t.ok(Date.parse(task.createdAt) > 0 && task.lastUpdatedAt === task.createdAt);
  t.ok((await credits(ws.orgId)) < before, 'charged when queued, as without tasks');
  const [row] = await app.service.ctx.db.select().from(mcpTasks).where(eq(mcpTasks.id, task.taskId));
  t.match(
    row,
    { orgId: ws.orgId, tool: 'create_generation', created: { object: 'generation_batch' } },
    'durably recorded before the answer',
  );

  const ended = (await untilEnded('2026-07-28', task.taskId)).result!;
  t.match(ended, { resultType: 'complete', taskId: task.taskId, status: 'completed', ttlMs: null });
  t.ok(ended.lastUpdatedAt >= ended.createdAt, 'updated no earlier than created');
  const result = ended.result;
  t.equal(result.resultType, 'complete', "the inline result is a complete tools/call result (the extension's schema)");
  t.notOk(result.isError, JSON.stringify(result).slice(0, 400));
  t.match(result.structuredContent, { object: 'generation_batch', generations: [{ status: 'completed' }] });
  const url = result.structuredContent.generations[0].url;
  const link = result.content.find((c: Obj) => c.type === 'resource_link');
  t.match(link, { uri: url, mimeType: /^image\// }, 'the media as a resource link with its MIME type');
  const image = await fetch(url);
  t.equal(image.status, 200);
  t.match(image.headers.get('content-type'), /^image\//);
});

t.test('2026-07-28: without the extension in the request, the queued batch as before', async (t) => {
  const res = (await rpc('2026-07-28', ws.key, 'tools/call', staticAd('task-modern-2'))).result!;
  t.match(res, { resultType: 'complete', structuredContent: { object: 'generation_batch', status: 'queued' } });
  t.notOk('taskId' in res);
});

t.test('2025-11-25: params.task gets a task; tasks/get then tasks/result give the final result', async (t) => {
  const created = await rpc('2025-11-25', ws.key, 'tools/call', { ...staticAd('task-legacy-1'), task: { ttl: 60_000 } });
  const task = created.result!.task;
  t.match(task, { status: 'working', ttl: null, pollInterval: TASK_POLL_INTERVAL_MS });
  const ended = (await untilEnded('2025-11-25', task.taskId)).result!;
  t.match(ended, { taskId: task.taskId, status: 'completed' });
  t.notOk('result' in ended, 'the 2025-11-25 task carries no result');
  const result = (await rpc('2025-11-25', ws.key, 'tasks/result', { taskId: task.taskId })).result!;
  t.match(result, {
    structuredContent: { generations: [{ status: 'completed' }] },
    _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
  });
  t.ok(result.content.some((c: Obj) => c.type === 'resource_link'));
  const cancel = await rpc('2025-11-25', ws.key, 'tasks/cancel', { taskId: task.taskId });
  t.match(cancel.error, { code: -32602, message: /already completed/ }, 'an ended task cannot be cancelled');
  const notTask = await rpc('2025-11-25', ws.key, 'tools/call', { name: 'get_workspace', arguments: {}, task: {} });
  t.match(
    notTask.error,
    { code: -32601, message: /get_workspace does not run as a task/ },
    'a task of a tool without task support: -32601',
  );
  const plain = (await rpc('2025-11-25', ws.key, 'tools/call', staticAd('task-legacy-2'))).result!;
  t.match(plain, { structuredContent: { object: 'generation_batch', status: 'queued' } }, 'no params.task: the queued batch');
});

t.test("a task is its workspace's: another one's id, or no such id, is unknown", async (t) => {
  const mine = (await rpc('2026-07-28', ws.key, 'tools/call', staticAd('task-own-1'), { tasks: true })).result!;
  for (const version of ['2026-07-28', '2025-11-25'] as const) {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const theirs = await rpc(version, other.key, method, { taskId: mine.taskId });
      t.match(theirs.error, { code: -32602, message: /Task not found/ }, `${version} ${method}: another workspace's`);
    }
    const none = await rpc(version, ws.key, 'tasks/get', { taskId: 'no-such-task' });
    t.match(none.error, { code: -32602, message: /Task not found/ });
  }
  const bad = await rpc('2026-07-28', ws.key, 'tasks/get', {});
  t.match(bad.error, { code: -32602 }, 'no taskId: invalid params');
  t.equal(await credits(other.orgId), 500, 'nothing charged to the other workspace');
  await untilEnded('2026-07-28', mine.taskId);
});

t.test('2026-07-28: the task methods answer only a request that declares the tasks extension (-32021, HTTP 400)', async (t) => {
  const mine = (await rpc('2026-07-28', ws.key, 'tools/call', staticAd('task-undeclared-1'), { tasks: true })).result!;
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    for (const taskId of [mine.taskId, 'no-such-task']) {
      const refused = await rpc('2026-07-28', ws.key, method, { taskId }, { tasks: false, status: 400 });
      t.match(
        refused.error,
        { code: -32021, message: new RegExp(TASKS), data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } },
        `${method} of ${taskId === 'no-such-task' ? 'an unknown' : 'its'} task without the extension`,
      );
    }
  }
  t.match((await rpc('2026-07-28', ws.key, 'tasks/get', { taskId: mine.taskId })).result, { taskId: mine.taskId }, 'declared: answered');
  // SEP-2243 (the conformance suite checks it only on its fixture's task): Mcp-Name must name the task.
  for (const method of ['tasks/get', 'tasks/cancel']) {
    const mismatched = await rpc('2026-07-28', ws.key, method, { taskId: mine.taskId }, { mcpName: 'another-task', status: 400 });
    t.match(mismatched.error, { code: -32020, message: /Mcp-Name header names "another-task"/ }, `${method}: Mcp-Name of another task`);
  }
  t.equal((await untilEnded('2026-07-28', mine.taskId)).result!.status, 'completed', 'the refused cancel left the work alone');
});

t.test('a call that fails before queueing is a plain error result, not a task', async (t) => {
  const res = (
    await rpc(
      '2026-07-28',
      ws.key,
      'tools/call',
      { name: 'create_generation', arguments: { type: 'static_ad', template_slug: 'nope', prompt: 'x' } },
      { tasks: true },
    )
  ).result!;
  t.match(res, { resultType: 'complete', isError: true, structuredContent: { error: { code: 'bad_request', message: /template_slug/ } } });
});

// ----------------------------------------------------------------------------- without tasks

/** One request answered as an event stream: its messages in order. */
async function streamed(app_: typeof app, version: '2026-07-28' | '2025-11-25', key: string, params: Obj) {
  const started = Date.now();
  const res = await post(app_, version, key, 'tools/call', params, { meta: { progressToken: 'p-1' } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/, 'an event stream');
  const messages: { at: number; msg: Obj }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (data) messages.push({ at: Date.now() - started, msg: JSON.parse(data) });
    }
  }
  return messages;
}

for (const version of ['2025-11-25', '2026-07-28'] as const) {
  t.test(`${version}: no task but a progress token: progress notifications, then the finished result`, async (t) => {
    const messages = await streamed(app, version, ws.key, staticAd(`progress-${version}`));
    const progress = messages.filter((m) => m.msg.method === 'notifications/progress').map((m) => m.msg.params);
    t.ok(progress.length >= 2, `${progress.length} notifications`);
    t.ok(progress.every((p) => p.progressToken === 'p-1' && p.total === 100 && typeof p.message === 'string'));
    t.ok(
      progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
      'progress grows with every notification',
    );
    t.equal(progress.at(-1).progress, 100);
    const last = messages.at(-1)!.msg;
    t.notOk(last.result.isError);
    t.match(last.result.structuredContent, { object: 'generation_batch', generations: [{ status: 'completed' }] }, 'the finished batch');
    t.ok(
      last.result.content.some((c: Obj) => c.type === 'resource_link'),
      'its media as a resource link',
    );
  });
}

// A service without workers: queued work stays queued.
const idle = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000', MCP_TOOL_WAIT_SECONDS: '17' }, { workers: false });

t.test('no workers: the wait is bounded, with a notification at least every 15 s, then the queued record', async (t) => {
  const w = await idle.workspace({ credits: 100 });
  const messages = await streamed(idle, '2025-11-25', w.key, staticAd('progress-idle'));
  const progress = messages.filter((m) => m.msg.method === 'notifications/progress');
  t.ok(progress[0].at < 1000, `the first notification at once (${progress[0].at} ms)`);
  const gaps = progress.slice(1).map((m, i) => m.at - progress[i].at);
  t.ok(
    progress.length >= 2 && gaps.every((g) => g <= 15_500),
    `a notification at least every 15 s: ${JSON.stringify(progress.map((m) => m.at))}`,
  );
  const last = messages.at(-1)!;
  t.ok(last.at >= 16_500 && last.at < 25_000, `answered when the wait ended (${last.at} ms)`);
  t.match(last.msg.result.structuredContent, { object: 'generation_batch', status: 'queued' }, 'the queued batch, to poll');
  const plain = await fetch(`${idle.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${w.key}`,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: staticAd('progress-idle-2') }),
  });
  t.match(plain.headers.get('content-type'), /^application\/json/, 'no progress token: one JSON answer at once');
});

/** An empty result (the server's identity, which 2026-07-28 stamps on every result, aside). */
const ack = (answer: { result?: Obj }) => {
  const { _meta, ...rest } = answer.result ?? {};
  return rest;
};

t.test('tasks/cancel of queued work: canceled and refunded in full, once, in both forms', async (t) => {
  const w = await idle.workspace({ credits: 300 });
  const call = (version: '2026-07-28' | '2025-11-25', method: string, params: Obj, tasks?: boolean) =>
    rpcOn(idle, version, w.key, method, params, { tasks });
  const slideshow = {
    name: 'create_slideshow',
    arguments: { prompt: 'Three reasons to drink cold brew', slide_count: 3, idempotency_key: 'cancel-s1' },
  };

  const modern = (await call('2026-07-28', 'tools/call', slideshow, true)).result!;
  t.equal(modern.resultType, 'task');
  const charged = await credits(w.orgId, idle);
  t.ok(charged < 300, `charged ${300 - charged} credits`);
  t.same(ack(await call('2026-07-28', 'tasks/cancel', { taskId: modern.taskId })), { resultType: 'complete' }, 'acknowledged');
  const got = (await call('2026-07-28', 'tasks/get', { taskId: modern.taskId })).result!;
  t.match(got, { status: 'cancelled', taskId: modern.taskId });
  t.notOk('result' in got, 'a cancelled task has no result');
  t.equal(await credits(w.orgId, idle), 300, 'refunded in full');
  t.same(ack(await call('2026-07-28', 'tasks/cancel', { taskId: modern.taskId })), { resultType: 'complete' }, 'again: acknowledged');
  t.equal(await credits(w.orgId, idle), 300, 'refunded once');

  const legacy = (
    await call('2025-11-25', 'tools/call', { ...slideshow, arguments: { ...slideshow.arguments, idempotency_key: 'cancel-s2' }, task: {} })
  ).result!.task;
  t.ok((await credits(w.orgId, idle)) < 300);
  const cancelled = (await call('2025-11-25', 'tasks/cancel', { taskId: legacy.taskId })).result!;
  t.match(cancelled, { taskId: legacy.taskId, status: 'cancelled', ttl: null });
  t.equal(await credits(w.orgId, idle), 300, 'refunded in full');
  const again = await call('2025-11-25', 'tasks/cancel', { taskId: legacy.taskId });
  t.match(again.error, { code: -32602, message: /already cancelled/ }, 'a cancelled task cannot be cancelled again');
  const result = await call('2025-11-25', 'tasks/result', { taskId: legacy.taskId });
  t.match(result.error, { code: -32602, message: /cancelled; it has no result/ });
  t.equal(await credits(w.orgId, idle), 300, 'refunded once');
  const refunds = await idle.service.ctx.db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.orgId, w.orgId), eq(creditLedger.reason, 'slideshow_refund')));
  t.equal(refunds.length, 2, 'one refund row per canceled slideshow');
});

t.test('tasks/cancel of running work: canceled and refunded (no paid call completed); 2025-11-25 answers the cancelled task', async (t) => {
  const w = await idle.workspace({ credits: 300 });
  const call = (version: '2026-07-28' | '2025-11-25', method: string, params: Obj, tasks?: boolean) =>
    rpcOn(idle, version, w.key, method, params, { tasks });
  const slideshow = (key: string) => ({
    name: 'create_slideshow',
    arguments: { prompt: 'Three reasons to drink cold brew', slide_count: 3, idempotency_key: key },
  });
  /** The workspace's slideshow, started as a worker starts it (no workers run on this service). */
  const startLatest = async () => {
    const [row] = await idle.service.ctx.db
      .select()
      .from(slideshows)
      .where(eq(slideshows.orgId, w.orgId))
      .orderBy(desc(slideshows.createdAt))
      .limit(1);
    t.ok(await slideshowResource.start(idle.service.ctx, row.id), 'a worker starts it');
  };

  const modern = (await call('2026-07-28', 'tools/call', slideshow('run-s1'), true)).result!;
  await startLatest();
  t.same(ack(await call('2026-07-28', 'tasks/cancel', { taskId: modern.taskId })), { resultType: 'complete' }, 'acknowledged');
  t.match((await call('2026-07-28', 'tasks/get', { taskId: modern.taskId })).result, { status: 'cancelled' }, 'running work cancelled');
  t.equal(await credits(w.orgId, idle), 300, 'refunded in full');

  const legacy = (await call('2025-11-25', 'tools/call', { ...slideshow('run-s2'), task: {} })).result!.task;
  await startLatest();
  const cancelled = await call('2025-11-25', 'tasks/cancel', { taskId: legacy.taskId });
  t.match(cancelled.result, { taskId: legacy.taskId, status: 'cancelled' }, 'the cancelled task, not -32602');
  t.equal(await credits(w.orgId, idle), 300, 'refunded in full, once each');
});
