// The binder: one handler per entry of the operation index (every operationId and every
// MCP-only tool), checked in both directions at boot.
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { operationIndex } from './executor.ts';
import { PENDING_MCP_TOOLS, PENDING_OPERATIONS } from './pending.ts';
import type { AnyHandler, HandlerMap } from '../handlers.ts';
import { PIPELINE_HANDLERS } from '../pipelines/index.ts';
import { handlers as assets } from './assets.ts';
import { handlers as catalog } from './catalog.ts';
import { handlers as editor } from './editor.ts';
import { handlers as health } from './health.ts';
import { handlers as meta } from './meta.ts';
import { handlers as references } from './references.ts';
import { handlers as social } from './social.ts';
import { handlers as webhooks } from './webhooks.ts';
import { handlers as workspace } from './workspace.ts';

/**
 * Every handler module (operations and MCP-only tools alike): one per domain without a pipeline
 * (src/operations/), and each pipeline's (src/pipelines/index.ts).
 */
export const HANDLER_MODULES: Record<string, HandlerMap> = {
  assets,
  catalog,
  editor,
  health,
  meta,
  references,
  social,
  webhooks,
  workspace,
  ...PIPELINE_HANDLERS,
};

interface EntryLike {
  operationId: string;
  /** 'mcp' for an MCP-only tool; operations may leave it out. */
  transport?: 'http' | 'mcp';
  aliasOf: string | null;
  responses: Record<string, unknown>;
}

export class BindError extends Error {
  override name = 'BindError';
}

/**
 * Binds handlers to the spec's operations and MCP-only tools. Refuses (throws BindError naming
 * them) when an operation or MCP-only tool has no handler, a handler has no entry, a handler is
 * bound twice, or a pending list and the spec disagree (a pending operation declares its 501).
 * Pending entries are bound to a handler answering 501 `not_implemented`.
 */
export function bindHandlers(
  modules: Record<string, HandlerMap> = HANDLER_MODULES,
  operations: EntryLike[] = operationIndex.operations,
  pending: ReadonlySet<string> = PENDING_OPERATIONS,
  tools: EntryLike[] = operationIndex.mcpOnlyTools,
  pendingTools: ReadonlySet<string> = PENDING_MCP_TOOLS,
): Map<string, AnyHandler> {
  const problems: string[] = [];
  const provided = new Map<string, AnyHandler>();
  for (const [module, map] of Object.entries(modules)) {
    for (const [id, fn] of Object.entries(map)) {
      if (provided.has(id)) problems.push(`handler ${id} is exported by more than one module (again in ${module})`);
      provided.set(id, fn as AnyHandler);
    }
  }
  const entries = [...operations, ...tools.map((t) => ({ ...t, transport: 'mcp' as const }))];
  const opIds = new Set(operations.map((o) => o.operationId));
  const toolIds = new Set(tools.map((o) => o.operationId));
  const bound = new Map<string, AnyHandler>();
  for (const op of entries) {
    const tool = op.transport === 'mcp';
    const what = tool ? `MCP-only tool ${op.operationId}` : `operation ${op.operationId}`;
    const declares501 = !tool && '501' in op.responses;
    if ((tool ? pendingTools : pending).has(op.operationId)) {
      if (provided.has(op.operationId)) problems.push(`${what} has a handler but is still listed as pending`);
      if (!tool && !declares501) problems.push(`pending operation ${op.operationId} does not declare its 501 response in the spec`);
      bound.set(op.operationId, notImplemented(op.operationId, tool));
      continue;
    }
    if (declares501) problems.push(`operation ${op.operationId} declares 501 in the spec but is not pending`);
    const target = op.aliasOf ?? op.operationId;
    const fn = provided.get(target);
    if (!fn) problems.push(`${what} has no handler${op.aliasOf ? ` (alias of ${op.aliasOf})` : ''}`);
    else bound.set(op.operationId, fn);
  }
  for (const id of provided.keys())
    if (!opIds.has(id) && !toolIds.has(id)) problems.push(`handler ${id} has no operation or MCP-only tool in spec/openapi.yaml`);
  for (const id of pending) if (!opIds.has(id)) problems.push(`pending operation ${id} is not in spec/openapi.yaml`);
  for (const id of pendingTools)
    if (!toolIds.has(id)) problems.push(`pending MCP-only tool ${id} is not in spec/openapi.yaml (x-mcp-only-tools)`);
  if (problems.length) {
    throw new BindError(`Refusing to start: the handlers and the contract disagree:\n  - ${problems.join('\n  - ')}`);
  }
  return bound;
}

/** The handler of an entry whose capability lands later: it authenticates and validates, then answers 501. */
function notImplemented(id: string, tool: boolean): AnyHandler {
  return () => {
    throw new ApiError(
      'not_implemented',
      `${id} is part of the contract but not available on this server yet`,
      tool ? { tool: id } : { operation_id: id },
    );
  };
}

export type { AppContext };
