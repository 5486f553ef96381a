// The rows of MCP tasks (src/mcp/tasks.ts): a long tool call answered with a task handle, kept as
// its workspace, its tool and the call's structured result as it was answered. Every lookup is the
// workspace's: another workspace's task id reads as none.
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { mcpTasks } from '../../db/schema/index.ts';
import type { AuthContext } from './api-keys.ts';
import { isUuid } from './organizations.ts';

type Obj = Record<string, unknown>;

export interface TaskRow {
  id: string;
  tool: string;
  created: Obj;
  createdAt: Date;
}

/** Records a task for a queued call; answered only once committed (the spec's "durably created"). */
export async function createTask(ctx: AppContext, auth: Pick<AuthContext, 'orgId'>, tool: string, created: Obj): Promise<TaskRow> {
  const [row] = await ctx.db.insert(mcpTasks).values({ orgId: auth.orgId, tool, created }).returning();
  return { id: row.id, tool: row.tool, created: row.created as Obj, createdAt: row.createdAt };
}

/** The workspace's task `taskId`; undefined when there is none (another workspace's reads the same). */
export async function findTask(ctx: AppContext, auth: Pick<AuthContext, 'orgId'>, taskId: string): Promise<TaskRow | undefined> {
  if (!isUuid(taskId)) return undefined;
  const [row] = await ctx.db
    .select()
    .from(mcpTasks)
    .where(and(eq(mcpTasks.id, taskId), eq(mcpTasks.orgId, auth.orgId)));
  return row ? { id: row.id, tool: row.tool, created: row.created as Obj, createdAt: row.createdAt } : undefined;
}
