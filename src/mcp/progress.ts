// Long work for clients without tasks. A call of a task tool (./task-tools.ts) whose client did not
// ask for a task but sent a progress token waits for its work, up to MCP_TOOL_WAIT_SECONDS, and
// meanwhile sends `notifications/progress`: at once, within about half a second of each change of
// stage, percent or record status, and at least every 15 s while nothing changes (the MCP progress
// rule that progress grows is kept by a small step). Work that ends in time is answered with its
// final result (the same as a task's); otherwise, or when the service begins to stop, the queued
// record as before, with the id to poll. A call without a progress token is answered at once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { AppContext } from '../context.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { readTask } from './tasks.ts';
import type { ToolDeps } from './tools.ts';

/** How often the records of a waiting call are read. */
export const PROGRESS_POLL_MS = 500;
/** The longest a waiting call goes without a progress notification. */
export const PROGRESS_HEARTBEAT_MS = 15_000;

type Obj = Record<string, unknown>;

export interface ProgressWait {
  ctx: AppContext;
  deps: ToolDeps;
  auth: AuthContext;
  tool: string;
  /** The call's queued result. */
  queued: CallToolResult;
  progressToken: string | number;
  notify(notification: { method: 'notifications/progress'; params: Obj }): Promise<void>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  waitMs: number;
}

/**
 * Waits for the call's work with progress notifications; its final result, or undefined when the
 * wait ended first (the caller answers the queued record).
 */
export async function waitWithProgress(w: ProgressWait): Promise<CallToolResult | undefined> {
  const task = { id: '', tool: w.tool, created: (w.queued.structuredContent ?? {}) as Obj, createdAt: new Date() };
  const stop = AbortSignal.any([w.signal, w.ctx.stopping, AbortSignal.timeout(w.waitMs)]);
  let progress = -1;
  let message = '';
  let sentAt = 0;
  while (!stop.aborted) {
    const state = await readTask(w.ctx, w.deps, w.auth, task);
    if (state.phase !== 'working') {
      await send(100, state.statusMessage);
      return state.result;
    }
    const { percent } = state;
    if (percent > progress || state.statusMessage !== message || Date.now() - sentAt >= PROGRESS_HEARTBEAT_MS) {
      // Progress must grow with every notification: an unchanged percent takes a small step.
      await send(Math.max(percent, progress + 0.01), state.statusMessage);
    }
    // Until the next read, or sooner when the wait ends (the client went away, the service stops, time is up).
    await sleep(Math.min(PROGRESS_POLL_MS, PROGRESS_HEARTBEAT_MS - (Date.now() - sentAt)), undefined, { signal: stop }).catch(() => {});
  }
  return undefined;

  async function send(value: number, text: string) {
    progress = Math.round(value * 100) / 100;
    message = text;
    sentAt = Date.now();
    await w
      .notify({ method: 'notifications/progress', params: { progressToken: w.progressToken, progress, total: 100, message: text } })
      .catch(() => {});
  }
}
