// The binder: one handler per operationId, checked in both directions at boot.
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { operationIndex } from './executor.ts';
import { MCP_ONLY_HANDLERS, MCP_ONLY_TOOLS, type McpToolHandler } from './mcp-tools.ts';
import { PENDING_MCP_TOOLS, PENDING_OPERATIONS } from './pending.ts';
import type { Handler, HandlerMap, OperationId } from './types.ts';
import { handlers as assets } from './assets.ts';
import { handlers as catalog } from './catalog.ts';
import { handlers as editor } from './editor.ts';
import { handlers as generations } from './generations.ts';
import { handlers as health } from './health.ts';
import { handlers as meta } from './meta.ts';
import { handlers as references } from './references.ts';

/** Every handler module, one per spec tag. */
export const HANDLER_MODULES: Record<string, HandlerMap> = { assets, catalog, editor, generations, health, meta, references };

interface OperationLike {
  operationId: string;
  aliasOf: string | null;
  responses: Record<string, unknown>;
}

export class BindError extends Error {
  override name = 'BindError';
}

/**
 * Binds handlers to the spec's operations. Refuses (throws BindError naming them) when an
 * operation has no handler, a handler has no operation, a handler is bound twice, or the
 * pending list and the spec's 501 responses disagree.
 */
export function bindHandlers(
  modules: Record<string, HandlerMap> = HANDLER_MODULES,
  operations: OperationLike[] = operationIndex.operations,
  pending: ReadonlySet<string> = PENDING_OPERATIONS,
): Map<string, Handler<OperationId>> {
  const problems: string[] = [];
  const provided = new Map<string, Handler<OperationId>>();
  for (const [module, map] of Object.entries(modules)) {
    for (const [id, fn] of Object.entries(map)) {
      if (provided.has(id)) problems.push(`handler ${id} is exported by more than one module (again in ${module})`);
      provided.set(id, fn as Handler<OperationId>);
    }
  }
  const ids = new Set(operations.map((o) => o.operationId));
  const bound = new Map<string, Handler<OperationId>>();
  const notImplemented = (id: string): Handler<OperationId> => () => {
    throw new ApiError('not_implemented', `${id} is part of the contract but not available on this server yet`, { operation_id: id });
  };
  for (const op of operations) {
    const target = op.aliasOf ?? op.operationId;
    const declares501 = '501' in op.responses;
    if (pending.has(op.operationId)) {
      if (provided.has(op.operationId)) problems.push(`operation ${op.operationId} has a handler but is still listed as pending`);
      if (!declares501) problems.push(`pending operation ${op.operationId} does not declare its 501 response in the spec`);
      bound.set(op.operationId, notImplemented(op.operationId));
      continue;
    }
    if (declares501) problems.push(`operation ${op.operationId} declares 501 in the spec but is not pending`);
    const fn = provided.get(target);
    if (!fn) problems.push(`operation ${op.operationId} has no handler${op.aliasOf ? ` (alias of ${op.aliasOf})` : ''}`);
    else bound.set(op.operationId, fn);
  }
  for (const id of provided.keys()) if (!ids.has(id)) problems.push(`handler ${id} has no operation in spec/openapi.yaml`);
  for (const id of pending) if (!ids.has(id)) problems.push(`pending operation ${id} is not in spec/openapi.yaml`);
  problems.push(...checkMcpOnlyTools().problems);
  if (problems.length) {
    throw new BindError(`Refusing to start: the handlers and the contract disagree:\n  - ${problems.join('\n  - ')}`);
  }
  return bound;
}

type McpOnlyHandler = McpToolHandler<never, object>;

/** The MCP-only tools of the spec against their handlers and the pending list, both ways. */
export function checkMcpOnlyTools(
  handlers: Record<string, McpOnlyHandler> = MCP_ONLY_HANDLERS,
  tools: readonly string[] = MCP_ONLY_TOOLS.map((t) => t.name),
  pending: ReadonlySet<string> = PENDING_MCP_TOOLS,
): { problems: string[]; bound: Map<string, McpOnlyHandler> } {
  const problems: string[] = [];
  const bound = new Map<string, McpOnlyHandler>();
  const declared = new Set(tools);
  for (const name of tools) {
    if (pending.has(name)) {
      if (name in handlers) problems.push(`MCP-only tool ${name} has a handler but is still listed as pending`);
      bound.set(name, () => {
        throw new ApiError('not_implemented', `${name} is part of the contract but not available on this server yet`, { tool: name });
      });
    } else if (name in handlers) bound.set(name, handlers[name]);
    else problems.push(`MCP-only tool ${name} has no handler`);
  }
  for (const name of Object.keys(handlers)) if (!declared.has(name)) problems.push(`MCP tool handler ${name} has no tool in spec/openapi.yaml (x-mcp-only-tools)`);
  for (const name of pending) if (!declared.has(name)) problems.push(`pending MCP-only tool ${name} is not in spec/openapi.yaml (x-mcp-only-tools)`);
  return { problems, bound };
}

/** Binds the MCP-only tools (checked at boot by bindHandlers too); throws BindError on disagreement. */
export function bindMcpOnlyTools(...args: Parameters<typeof checkMcpOnlyTools>): Map<string, McpOnlyHandler> {
  const { problems, bound } = checkMcpOnlyTools(...args);
  if (problems.length) throw new BindError(`Refusing to start: the MCP-only tools and the contract disagree:\n  - ${problems.join('\n  - ')}`);
  return bound;
}

export type { AppContext };
