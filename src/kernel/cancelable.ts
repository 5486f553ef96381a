// Running work that its owner can cancel (POST /generations/{id}/cancel, …, MCP tasks/cancel):
// the cancel writes `canceled` at once (resource.ts), and the worker notices within about a second
// by polling the resource's status. The attempt's signal is then aborted with a WorkCanceled, so
// the engines stop: ffmpeg is killed, a hosted provider's job is canceled at the provider
// (src/engines/resumable.ts). Whatever the work throws after that is the cancel's doing and ends
// the delivery quietly (no retry, no failure, no second refund); every write of the stage runner is
// conditional on the resource running, so nothing is written after the cancel. The caller's
// `finally` removes the work folder.
import type { AppContext } from '../context.ts';
import { WorkCanceled } from '../engines/resumable.ts';
import type { JobTools } from '../jobs/define-job.ts';
import type { Resource } from './resource.ts';

/** How often running work checks whether it was canceled. */
export const CANCEL_POLL_MS = 500;

/**
 * Runs `work` with tools whose signal is also aborted when resource `id` is canceled; true when it
 * was (whatever `work` threw then is swallowed), false when `work` finished.
 */
export async function runCancelable<Id extends string | number>(
  ctx: AppContext,
  resource: Resource<any, Id>,
  id: Id,
  tools: JobTools,
  work: (tools: JobTools) => Promise<void>,
): Promise<boolean> {
  const { name, statuses } = resource.declaration;
  const cancel = new AbortController();
  const watch = setInterval(() => {
    resource
      .statusOf(ctx, id)
      .then((status) => {
        if (status === statuses.canceled && !cancel.signal.aborted) cancel.abort(new WorkCanceled(name));
      })
      .catch(() => {});
  }, CANCEL_POLL_MS);
  try {
    await work({ ...tools, signal: AbortSignal.any([tools.signal, cancel.signal]) });
    return false;
  } catch (err) {
    if (!cancel.signal.aborted) throw err;
    ctx.log.info({ [name]: id }, `${name} canceled; its work stopped`);
    return true;
  } finally {
    clearInterval(watch);
  }
}

/**
 * After a completion that wrote nothing (`complete` false): removes the stored outputs `keys` when
 * the resource was canceled meanwhile (they belong to nothing). Not when another delivery of the
 * job completed it: that one's outputs have these same keys.
 */
export async function discardIfCanceled<Id extends string | number>(
  ctx: AppContext,
  resource: Resource<any, Id>,
  id: Id,
  keys: (string | undefined)[],
): Promise<void> {
  if ((await resource.statusOf(ctx, id)) !== resource.declaration.statuses.canceled) return;
  for (const key of keys) if (key) await ctx.storage.delete(key).catch(() => {});
}
