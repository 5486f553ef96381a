// MCP tasks: the six tools that start long or paid work (TASK_TOOLS) answer a client that supports
// tasks with a task handle instead of the queued record, and the client follows the task until it
// ends. One task model serves both wire forms (./task-wire.ts): the `io.modelcontextprotocol/tasks`
// extension of revision 2026-07-28 and the core tasks of 2025-11-25.
//
// A task is a row (mcp_tasks: its workspace, its tool and the call's structured result as it was
// answered) over the records that call queued. Its status, status message and final result are
// read from those records each time, through the same read tools an agent would call (get_generation,
// get_slideshow, …), so any node answers for any task and nothing is kept in memory. Cancelling a
// task cancels its records' queued or running work (the pipelines' cancel functions, refunded by
// their rule: in full unless a paid provider call completed; a publication's queued targets only).
import type { CallToolResult, ResourceLink } from '@modelcontextprotocol/server';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { cancelExport } from '../pipelines/editor-export/rows.ts';
import { cancelFacelessVideo } from '../pipelines/faceless-video/rows.ts';
import { cancelGeneration } from '../pipelines/generation/rows.ts';
import { cancelReferenceInspiration } from '../pipelines/reference-analysis/rows.ts';
import { cancelSlideshow } from '../pipelines/slideshow/rows.ts';
import { cancelPublication } from '../pipelines/social-publication/rows.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { createTask, findTask, type TaskRow } from '../services/workspaces/mcp-tasks.ts';
import { TASK_TOOLS, type TaskPhase, type TaskTool } from './task-tools.ts';

export { createTask, findTask, TASK_TOOLS, type TaskPhase, type TaskRow };
import { errorResult, mediaLinks, runTool, summarize, TOOLS_BY_NAME, type McpToolRow, type ToolDeps } from './tools.ts';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x);
const str = (x: unknown) => (typeof x === 'string' ? x : undefined);

/** How often a client should poll a working task: the pipelines report progress about this often. */
export const TASK_POLL_INTERVAL_MS = 2000;

/** A task as both wire forms describe it, and its final result once it ended. */
export interface TaskState {
  taskId: string;
  phase: TaskPhase;
  /** How far the work is: 100 once ended, else the least advanced working record's percent (0 where a record reports none). */
  percent: number;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** The final tool result (completed and failed tasks). */
  result?: CallToolResult;
}

/** The phase of several records: working while any works; cancelled or failed when all are; else completed. */
function phaseOf(phases: TaskPhase[]): TaskPhase {
  if (phases.includes('working')) return 'working';
  for (const all of ['cancelled', 'failed'] as const) if (phases.every((p) => p === all)) return all;
  return 'completed';
}

/** "generating, stage scenes, 45 %" for one record; "2 of 3 done; …" for a batch. */
function statusMessageOf(kind: string, views: Obj[], phases: TaskPhase[], phase: TaskPhase): string {
  const describe = (v: Obj) => {
    const parts = [`${str(v.object) ?? kind} ${String(v.id ?? '')} ${str(v.status) ?? ''}`.replace(/\s+/g, ' ').trim()];
    if (str(v.stage)) parts.push(`stage ${v.stage}`);
    if (typeof v.progress === 'number' && phase === 'working') parts.push(`${v.progress} %`);
    return parts.join(', ');
  };
  if (views.length === 1) return describe(views[0]);
  const done = phases.filter((p) => p !== 'working').length;
  const working = views.filter((_, i) => phases[i] === 'working').map(describe);
  return [`${done} of ${views.length} done`, ...working.slice(0, 3)].join('; ');
}

/** The failure of a failed task: the records' own failure detail (the first), or a generic one. */
function failureOf(views: Obj[]): Obj {
  for (const v of views) {
    if (isObj(v.error)) return v.error;
    const posts = Array.isArray(v.results) ? v.results.filter(isObj) : [];
    const post = posts.find((p) => isObj(p.error));
    if (post) return post.error as Obj;
  }
  return { code: 'job_failed', message: 'The work failed', retryable: true, context: {} };
}

/** The final tool result: a summary, the media as resource links and the structured result. */
function finalResult(
  tool: McpToolRow,
  spec: TaskTool,
  mediaTool: McpToolRow,
  created: Obj,
  views: Obj[],
  phase: TaskPhase,
): CallToolResult {
  const links: ResourceLink[] = views.flatMap((v) => mediaLinks(mediaTool, v));
  const structured = spec.final(created, views);
  if (phase === 'failed') {
    const error = failureOf(views);
    const text = `Error ${String(error.code)}${error.retryable ? ' (retryable)' : ''}: ${String(error.message)}`;
    return { isError: true, content: [{ type: 'text', text }, ...links], structuredContent: { ...structured, error } };
  }
  return { content: [{ type: 'text', text: summarize(tool.name, structured) }, ...links], structuredContent: structured };
}

/** One record's view through the task tool's read tool (as the caller), or its own reader. */
async function readRecord(ctx: AppContext, deps: ToolDeps, auth: AuthContext, spec: TaskTool, args: Obj): Promise<Obj | CallToolResult> {
  if (spec.get) {
    const read = await runTool(deps, TOOLS_BY_NAME.get(spec.get)!, args, auth);
    return read.isError ? read : (read.structuredContent as Obj);
  }
  const view = await spec.read!(ctx, auth.orgId, args);
  if (view) return view;
  return errorResult(new ApiError('not_found', `The task's record ${String(args.id)} is gone from this workspace`));
}

const isToolResult = (x: Obj | CallToolResult): x is CallToolResult => Array.isArray((x as CallToolResult).content);

/**
 * The task's state now, from its records. A record that cannot be read any more (deleted) ends
 * the task as failed, with the read's error as its result.
 */
export async function readTask(ctx: AppContext, deps: ToolDeps, auth: AuthContext, task: TaskRow): Promise<TaskState> {
  const spec = TASK_TOOLS.get(task.tool)!;
  const tool = TOOLS_BY_NAME.get(task.tool)!;
  const reads = await Promise.all(spec.records(task.created).map((args) => readRecord(ctx, deps, auth, spec, args)));
  const base = { taskId: task.id, createdAt: task.createdAt.toISOString() };
  const unreadable = reads.find(isToolResult);
  if (unreadable || reads.length === 0) {
    const result = unreadable ?? errorResult(new ApiError('not_found', 'The task follows no record'));
    const message = str((result.structuredContent as { error?: Obj } | undefined)?.error?.message) ?? 'The task failed';
    return { ...base, phase: 'failed', percent: 100, statusMessage: message, lastUpdatedAt: new Date().toISOString(), result };
  }
  const views = reads as Obj[];
  const phases = views.map((v) => spec.phase(v));
  const phase = phaseOf(phases);
  const updated = views.map((v) => str(v.updated_at) ?? str(v.created_at)).filter((x): x is string => !!x);
  // Not before the task itself (its records may have been written a moment before it).
  const lastUpdatedAt = [...updated, base.createdAt].sort().at(-1)!;
  const statusMessage = statusMessageOf(task.tool, views, phases, phase);
  const working = views.filter((_, i) => phases[i] === 'working').map((v) => (typeof v.progress === 'number' ? v.progress : 0));
  const percent = working.length ? Math.min(...working) : 100;
  const ended = phase === 'completed' || phase === 'failed';
  const mediaTool = TOOLS_BY_NAME.get(spec.get ?? task.tool)!;
  return {
    ...base,
    phase,
    percent,
    statusMessage,
    lastUpdatedAt,
    ...(ended ? { result: finalResult(tool, spec, mediaTool, task.created, views, phase) } : {}),
  };
}

/** A cancel function of a pipeline: cancels one record's queued or running work (refunded by its rule). */
export type CancelRecord = (ctx: AppContext, orgId: string, args: Obj) => Promise<unknown>;

/** The pipelines' cancel functions, by task tool (arguments: the record's read-tool arguments). */
export const TASK_CANCELERS: ReadonlyMap<string, CancelRecord> = new Map<string, CancelRecord>([
  ['create_generation', (ctx, orgId, a) => cancelGeneration(ctx, orgId, String(a.id))],
  ['create_slideshow', (ctx, orgId, a) => cancelSlideshow(ctx, orgId, String(a.id))],
  ['create_faceless_video', (ctx, orgId, a) => cancelFacelessVideo(ctx, orgId, Number(a.id))],
  ['create_reference_inspiration', (ctx, orgId, a) => cancelReferenceInspiration(ctx, orgId, String(a.id))],
  ['export_editor_video', (ctx, orgId, a) => cancelExport(ctx, orgId, Number(a.id), String(a.export_id))],
  ['publish_media_to_social', (ctx, orgId, a) => cancelPublication(ctx, orgId, String(a.id))],
]);

/**
 * Cancels the task's work: every record of it that is queued or running is canceled (its worker
 * stops within about a second) and refunded by the cancel rule (in full unless a paid provider
 * call of it completed). Records that ended, and a publication's targets already publishing, are
 * left as they are (the answer says how many were canceled).
 */
export async function cancelTask(ctx: AppContext, auth: AuthContext, task: TaskRow): Promise<{ canceled: number; refused: ApiError[] }> {
  const spec = TASK_TOOLS.get(task.tool)!;
  const cancel = TASK_CANCELERS.get(task.tool);
  if (!cancel) return { canceled: 0, refused: [] };
  let canceled = 0;
  const refused: ApiError[] = [];
  for (const args of spec.records(task.created)) {
    try {
      await cancel(ctx, auth.orgId, args);
      canceled++;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      refused.push(err);
    }
  }
  return { canceled, refused };
}
