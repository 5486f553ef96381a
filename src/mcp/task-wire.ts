// The two wire forms of MCP tasks (./tasks.ts has the model), on the SDK v2 Server:
//   - revision 2026-07-28, the `io.modelcontextprotocol/tasks` extension: a client that lists the
//     extension in its request's capabilities gets `{resultType: "task", taskId, status, …}` from
//     tools/call; `tasks/get` answers the task with its final result inline, `tasks/cancel` and
//     `tasks/update` acknowledge (cancellation is cooperative; this server never asks for input);
//     the task methods answer only requests that declare the extension (-32021 otherwise);
//   - revision 2025-11-25, core tasks: a tools/call with `params.task` (the six tools list
//     `execution.taskSupport: "optional"`) gets `{task: {…}}`; `tasks/get` answers the task,
//     `tasks/result` its final result (waiting for it a bounded time), `tasks/cancel` the cancelled
//     task, queued or running (a task that cannot be cancelled any more, one that ended or a
//     publication already publishing, is refused with -32602, as the revision says).
// The SDK validates every tools/call result as a CallToolResult; TaskServer lets a task answer,
// and nothing else, past that check (the Server's documented `_wrapHandler` hook).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server';
import type { AppContext } from '../context.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { cancelTask, createTask, findTask, readTask, TASK_POLL_INTERVAL_MS, TASK_TOOLS, type TaskRow, type TaskState } from './tasks.ts';
import type { ToolDeps } from './tools.ts';

/** The extension's identifier (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The `_meta` key that ties a 2025-11-25 result to its task. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Which form a Server speaks: its revision's era. */
export type Era = 'modern' | 'legacy';

/** What the server declares: the extension (2026-07-28; the SDK drops `tasks` there) and core tasks (2025-11-25). */
export const TASK_CAPABILITIES = {
  extensions: { [TASKS_EXTENSION]: {} },
  tasks: { cancel: {}, requests: { tools: { call: {} } } },
};

/** How long a 2025-11-25 `tasks/result` waits for a working task before answering that it still works. */
export const TASK_RESULT_WAIT_MS = 25_000;
const RESULT_POLL_MS = 500;

const TASK_ANSWER = Symbol('task answer');
type TaskAnswer = Result & { [TASK_ANSWER]: true };

/** An SDK Server whose tools/call may answer with a task (never checked as a CallToolResult). */
export class TaskServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    // The SDK's wrapper checks the request, calls the handler, then checks its result: a task
    // answer leaves it by a throw, caught below, so only the result check is skipped.
    const escaping = async (request: JSONRPCRequest, ctx: ServerContext) => {
      const result = await handler(request, ctx);
      if ((result as Partial<TaskAnswer>)[TASK_ANSWER]) throw new TaskAnswerThrow(result as TaskAnswer);
      return result;
    };
    const wrapped = super._wrapHandler(method, escaping);
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (err) {
        if (err instanceof TaskAnswerThrow) return err.answer;
        throw err;
      }
    };
  }
}

class TaskAnswerThrow extends Error {
  readonly answer: TaskAnswer;
  constructor(answer: TaskAnswer) {
    super('task answer');
    this.answer = answer;
  }
}

const answer = (result: Obj): TaskAnswer => Object.defineProperty(result, TASK_ANSWER, { value: true }) as TaskAnswer;

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Whether a 2026-07-28 request's client capabilities (its `_meta` envelope) list the tasks extension. */
function declaresTasks(ctx: ServerContext): boolean {
  const caps = (ctx.mcpReq.envelope as Obj | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  return isObj(caps) && isObj(caps.extensions) && isObj(caps.extensions[TASKS_EXTENSION]);
}

/** Whether the call should be answered with a task: a task tool, and a client that asked for tasks in its form. */
export function wantsTask(era: Era, toolName: string, params: Obj, ctx: ServerContext): boolean {
  if (!TASK_TOOLS.has(toolName)) return false;
  return era === 'legacy' ? isObj(params.task) : declaresTasks(ctx);
}

/**
 * 2026-07-28: the task methods belong to the extension, so a request whose client capabilities do
 * not list it is refused with -32021 (Missing Required Client Capability, HTTP 400), naming the
 * extension in `data.requiredCapabilities`, as the extension and SEP-2575 require.
 */
function requireTasksExtension(era: Era, ctx: ServerContext): void {
  if (era === 'modern' && !declaresTasks(ctx))
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `The task methods belong to the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities`,
    );
}

/** The task fields both forms share, under each form's names. */
function taskFields(era: Era, state: Pick<TaskState, 'taskId' | 'statusMessage' | 'createdAt' | 'lastUpdatedAt'>, status: string): Obj {
  const common = {
    taskId: state.taskId,
    status,
    statusMessage: state.statusMessage,
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
  };
  // Tasks last as long as their records: no time to live.
  return era === 'modern'
    ? { ...common, ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS }
    : { ...common, ttl: null, pollInterval: TASK_POLL_INTERVAL_MS };
}

/** A task's status in a form: 2026-07-28 reports failed work as a completed task whose result is an error. */
const statusIn = (era: Era, state: TaskState) => (era === 'modern' && state.phase === 'failed' ? 'completed' : state.phase);

/** Answers a queued call with its new task. */
export async function taskCreated(era: Era, ctx: AppContext, auth: AuthContext, tool: string, result: CallToolResult): Promise<TaskAnswer> {
  const task = await createTask(ctx, auth, tool, (result.structuredContent ?? {}) as Obj);
  const at = task.createdAt.toISOString();
  const fields = taskFields(
    era,
    { taskId: task.id, statusMessage: result.content.find((c) => c.type === 'text')?.text ?? 'queued', createdAt: at, lastUpdatedAt: at },
    'working',
  );
  return answer(era === 'modern' ? { resultType: 'task', ...fields } : { task: fields });
}

/** `{taskId}` params, as a Standard Schema (what the SDK asks of a method it does not know). */
const TaskIdParams: StandardSchemaV1<unknown, { taskId: string }> = {
  '~standard': {
    version: 1,
    vendor: 'media-api',
    validate: (value: unknown) =>
      isObj(value) && typeof value.taskId === 'string' && value.taskId.length > 0 && value.taskId.length <= 200
        ? { value: { taskId: value.taskId } }
        : { issues: [{ message: 'params.taskId must be a task id string' }] },
  },
};

const notCancellable = (taskId: string, why: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task ${taskId}: ${why}`);
const unknownTask = (taskId: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 200)}`);

export interface TaskMethodDeps {
  ctx: AppContext;
  deps: ToolDeps;
  auth: AuthContext;
}

/** Registers the task methods of `era` on a per-request Server. */
export function registerTaskMethods(server: Server, era: Era, m: TaskMethodDeps): void {
  const task = async (taskId: string, ctx: ServerContext): Promise<TaskRow> => {
    requireTasksExtension(era, ctx);
    const row = await findTask(m.ctx, m.auth, taskId);
    if (!row || !TASK_TOOLS.has(row.tool)) throw unknownTask(taskId);
    return row;
  };
  const detailed = (state: TaskState): Obj => {
    const status = statusIn(era, state);
    const fields = taskFields(era, state, status);
    if (era === 'legacy' || !state.result) return fields;
    // The inline result is a complete tools/call result of the revision: it carries its resultType
    // (the SDK stamps only the outer result, the task).
    return { ...fields, result: { resultType: 'complete', ...state.result } };
  };

  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }, ctx) =>
    detailed(await readTask(m.ctx, m.deps, m.auth, await task(taskId, ctx))),
  );

  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    const row = await task(taskId, ctx);
    const before = await readTask(m.ctx, m.deps, m.auth, row);
    if (before.phase === 'working') await cancelTask(m.ctx, m.auth, row);
    // 2026-07-28: an acknowledgement, whatever became of the work (cooperative cancellation).
    if (era === 'modern') return {};
    // 2025-11-25: the cancelled task, or -32602 when it had ended (cancelled included) or runs already.
    if (before.phase !== 'working') throw notCancellable(taskId, `it is already ${before.phase}`);
    const after = await readTask(m.ctx, m.deps, m.auth, row);
    if (after.phase === 'cancelled') return detailed(after);
    throw notCancellable(
      taskId,
      after.phase === 'working' ? 'its work has started and can no longer be canceled' : `it is already ${after.phase}`,
    );
  });

  if (era === 'modern') {
    // This server never asks for input: known tasks acknowledge (responses to no request are ignored).
    server.setRequestHandler('tasks/update', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      await task(taskId, ctx);
      return {};
    });
    return;
  }

  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    const row = await task(taskId, ctx);
    const deadline = Date.now() + TASK_RESULT_WAIT_MS;
    let state = await readTask(m.ctx, m.deps, m.auth, row);
    while (state.phase === 'working' && Date.now() < deadline && !ctx.mcpReq.signal.aborted) {
      await sleep(RESULT_POLL_MS, undefined, { signal: ctx.mcpReq.signal }).catch(() => {});
      state = await readTask(m.ctx, m.deps, m.auth, row);
    }
    if (state.phase === 'cancelled')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} was cancelled; it has no result`);
    if (!state.result)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Task ${taskId} is still working (${state.statusMessage}); poll tasks/get and ask again`,
      );
    return { ...state.result, _meta: { ...state.result._meta, [RELATED_TASK]: { taskId } } };
  });
}
