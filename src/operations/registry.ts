// The binder: one handler per operationId, checked in both directions at boot.
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { operationIndex } from './executor.ts';
import { PENDING_OPERATIONS } from './pending.ts';
import type { Handler, HandlerMap, OperationId } from './types.ts';
import { handlers as assets } from './assets.ts';
import { handlers as catalog } from './catalog.ts';
import { handlers as meta } from './meta.ts';

/** Every handler module, one per spec tag. */
export const HANDLER_MODULES: Record<string, HandlerMap> = { assets, catalog, meta };

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
  if (problems.length) {
    throw new BindError(`Refusing to start: the handlers and the contract disagree:\n  - ${problems.join('\n  - ')}`);
  }
  return bound;
}

export type { AppContext };
