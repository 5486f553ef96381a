// The one charged command: every paid operation (generations, reference inspirations, slideshows,
// faceless videos) runs through `runChargedCommand`, and so does free work that takes an
// idempotency key (social publications, at 0 credits: no balance check, no deduction, no ledger
// row). A command brings its checks and price (`prepare`), its rows and job (`enqueue`) and its
// response (`respond`); everything about money and retries is here, in ONE transaction, in this order:
//
//   1. Idempotency claim, when a key is given (seed 4.1 rules 2–3; the key is per workspace and
//      operation): a completed request with the same body is answered from its STORED response,
//      marked `idempotent_replay: true`, before anything is checked again (a brand kit, media or
//      reference deleted since, another process's configuration, an empty balance change nothing);
//      the key in flight in another request, or used with a different body → 409
//      idempotency_conflict.
//   2. prepare: the request checked against the catalog and the workspace (400/404 naming the
//      field), priced server-side: `units` × `unitCredits`. The workspace assets the work will
//      read when it runs are read with useAsset (services/assets/asset-use.ts): locked in this
//      transaction, so that a delete cannot pass between this check and the commit.
//   3. A balance check: 402 insufficient_credits before any work when the balance cannot cover
//      the units still to queue (no upload, no row without the credits).
//   4. Each unit's rows and job in a savepoint of its own (JobQueue.sendInTx in the same
//      transaction). An ApiError from a unit fails the whole request; any other error (the queue
//      refused the job) stops there and leaves the request `partial`: only the queued units are
//      charged, and a retry with the same key queues the rest (`respond` says so).
//   5. The conditional deduction for what was queued, with its ledger row (never below zero:
//      402 with credits_required/credits_available otherwise, and nothing is kept). It comes
//      last so that the workspace's row lock is held as briefly as possible.
//   6. The response, stored with the key: `completed`, or `partial` with the progress to resume.
//
// Any error rolls everything back (the key is free again). Work outside the database (stored
// bytes) is the command's to clean up when the call throws.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { organizations } from '../../db/schema/index.ts';
import { ApiError } from '../../errors.ts';
import { creditsCharged } from '../../metrics.ts';
import type { Tx } from '../../db/client.ts';
import { applyCreditChange } from './credits.ts';
import type { LedgerReason } from './ledger.ts';
import { claimIdempotent, completedResponse, fingerprint, recordIdempotent, settledResponse, type IdemKey } from './idempotency.ts';

/** What `prepare` returns at least: the server-side price. */
export interface Priced {
  /** Units the request asks for: the N generations of a batch; 1 for most commands. */
  units: number;
  /** Credits per unit (from the catalog, never from the request). */
  unitCredits: number;
}

/** What the units of one request share; `groupId` stays the same when a partial request resumes. */
export interface UnitSlot {
  groupId: string;
  /** 0-based position of the unit in the request. */
  index: number;
}

export interface ChargedOutcome {
  groupId: string;
  /** Every unit queued under this key so far, earlier calls first. */
  unitIds: string[];
  /** The units queued by earlier calls (a resumed partial request), to read their current state. */
  earlierUnitIds: string[];
  /** Fewer units than asked could be queued (a retry with the same key queues the rest). */
  partial: boolean;
  /** Credits deducted under this key, earlier calls included. */
  creditsDeducted: number;
  /** The workspace's balance after the deduction. */
  remainingCredits: number;
}

export interface ChargedCommand<P extends Priced, R extends { idempotent_replay?: boolean }> {
  orgId: string;
  /** The operationId: idempotency keys are scoped to workspace + operation. */
  operation: string;
  /** The `Idempotency-Key` header, else the body's `idempotency_key`; none: no replay, no resume. */
  idempotencyKey: string | undefined;
  /** What "the same request" means: the validated body without its idempotency key. */
  request: unknown;
  /** The ledger row of the charge: its reason and the reference of the resource it is about (from the group id or the units this call queued). */
  ledger: { reason: LedgerReason; reference: (groupId: string, queued: string[]) => string };
  /** The request checked and priced; runs only when the key is not a replay. 400/404 here cost nothing. */
  prepare(tx: Tx): Promise<P>;
  /** Writes one unit's rows and sends its job, all through `sp` (a savepoint); returns the unit's id. */
  enqueue(sp: Tx, plan: P, slot: UnitSlot): Promise<string>;
  /** The response; stored with the key, it is what a replay returns. */
  respond(tx: Tx, plan: P, outcome: ChargedOutcome): Promise<R>;
  /** The 402 message; the default names the two numbers. */
  insufficientMessage?(plan: P, required: number, available: number): string;
}

/**
 * The idempotency key of a paid request and what "the same request" is: the `Idempotency-Key`
 * header, else the body's `idempotency_key`; the validated body without that field.
 */
export function keyedRequest<B extends { idempotency_key?: string }>(body: B, headerKey: string | undefined) {
  const { idempotency_key: bodyKey, ...request } = body;
  return { idempotencyKey: headerKey ?? bodyKey, request };
}

/** A stored response as a replay answers it. */
const asReplay = <R>(response: unknown): R => ({ ...(response as R), idempotent_replay: true });

/**
 * The replay of a completed request of `operation` with the same key and body (see
 * keyedRequest), or undefined: a single read by primary key, before the request is counted
 * against its rate limit (the executor asks; the charged command still decides all else).
 */
export async function storedReplay(
  ctx: AppContext,
  orgId: string,
  operation: string,
  body: { idempotency_key?: string },
  headerKey: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  const { idempotencyKey, request } = keyedRequest(body, headerKey);
  if (!idempotencyKey) return undefined;
  const stored = await completedResponse(ctx.db, { orgId, operation, key: idempotencyKey }, fingerprint(request));
  return stored && asReplay(stored.response);
}

/**
 * For a command with slow work to do before runChargedCommand (media fetched from a URL): the
 * replay of a completed request with the same key and request, or the 409 of a key used with
 * another request, answered before that work; undefined otherwise (a free key, or one in flight:
 * runChargedCommand's claim then decides, under the lock).
 */
export async function settledReplay<R>(
  ctx: AppContext,
  cmd: Pick<ChargedCommand<Priced, never>, 'orgId' | 'operation' | 'idempotencyKey' | 'request'>,
): Promise<R | undefined> {
  if (!cmd.idempotencyKey) return undefined;
  const settled = await settledResponse(
    ctx.db,
    { orgId: cmd.orgId, operation: cmd.operation, key: cmd.idempotencyKey },
    fingerprint(cmd.request),
  );
  return settled && asReplay<R>(settled.response);
}

/** What an idempotency record keeps to resume a partial request. */
interface Progress {
  groupId: string;
  unitIds: string[];
  creditsDeducted: number;
}

/** Progress as stored; generation batches recorded before the charged command used other names. */
function readProgress(stored: unknown): Progress {
  const p = (stored ?? {}) as Partial<Progress> & { batchId?: string; generationIds?: string[] };
  return {
    groupId: p.groupId ?? p.batchId ?? randomUUID(),
    unitIds: p.unitIds ?? p.generationIds ?? [],
    creditsDeducted: p.creditsDeducted ?? 0,
  };
}

async function balanceOf(tx: Tx, orgId: string): Promise<number> {
  const [row] = await tx.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId));
  return row.credits;
}

export async function runChargedCommand<P extends Priced, R extends { idempotent_replay?: boolean }>(
  ctx: AppContext,
  cmd: ChargedCommand<P, R>,
): Promise<R> {
  const idem: { key: IdemKey; print: string } | undefined = cmd.idempotencyKey
    ? { key: { orgId: cmd.orgId, operation: cmd.operation, key: cmd.idempotencyKey }, print: fingerprint(cmd.request) }
    : undefined;
  // Credits deducted by this call, counted once its transaction has committed (src/metrics.ts).
  let charged = 0;
  const response = await ctx.db.transaction(async (tx) => {
    // 1. The key first: a replay is answered from what was stored, nothing is looked at again.
    let prior: Progress = { groupId: randomUUID(), unitIds: [], creditsDeducted: 0 };
    if (idem) {
      const start = await claimIdempotent(tx, idem.key, idem.print);
      if (start.kind === 'replay') return asReplay<R>(start.response);
      if (start.kind === 'resume') prior = readProgress(start.progress);
    }

    // 2. Checks and price.
    const plan = await cmd.prepare(tx);
    const toQueue = Math.max(0, plan.units - prior.unitIds.length);
    const required = plan.unitCredits * toQueue;
    const refuse = (available: number) =>
      new ApiError(
        'insufficient_credits',
        cmd.insufficientMessage?.(plan, required, available) ?? `This request needs ${required} credits and the workspace has ${available}`,
        { credits_required: required, credits_available: available },
      );

    // 3. No work without the credits (the deduction below is what actually guarantees it).
    if (required > 0) {
      const available = await balanceOf(tx, cmd.orgId);
      if (available < required) throw refuse(available);
    }

    // 4. Each unit's rows and job in a savepoint: a job the queue refuses leaves the request partial.
    const queued: string[] = [];
    for (let i = 0; i < toQueue; i++) {
      try {
        const slot = { groupId: prior.groupId, index: prior.unitIds.length + i };
        queued.push(await tx.transaction((sp) => cmd.enqueue(sp, plan, slot)));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // The database's error (its statement and parameters) is logged, never sent to the client.
        ctx.log.warn({ err: String(err), operation: cmd.operation, group: prior.groupId }, 'a unit of a paid request could not be queued');
        break;
      }
    }
    if (toQueue > 0 && queued.length === 0) {
      throw new ApiError('server_error', 'Nothing could be queued; retry with the same idempotency key', {});
    }

    // 5. The charge for what was queued, with its ledger row.
    const cost = plan.unitCredits * queued.length;
    let remainingCredits: number;
    if (cost > 0) {
      const after = await applyCreditChange(tx, {
        orgId: cmd.orgId,
        delta: -cost,
        reason: cmd.ledger.reason,
        reference: cmd.ledger.reference(prior.groupId, queued),
      });
      if (after === null) throw refuse(await balanceOf(tx, cmd.orgId));
      remainingCredits = after;
      charged = cost;
    } else remainingCredits = await balanceOf(tx, cmd.orgId);

    // 6. The response, stored with the key.
    const unitIds = [...prior.unitIds, ...queued];
    const outcome: ChargedOutcome = {
      groupId: prior.groupId,
      unitIds,
      earlierUnitIds: prior.unitIds,
      partial: unitIds.length < plan.units,
      creditsDeducted: prior.creditsDeducted + cost,
      remainingCredits,
    };
    const response = await cmd.respond(tx, plan, outcome);
    if (idem) {
      await recordIdempotent(tx, idem.key, idem.print, {
        state: outcome.partial ? 'partial' : 'completed',
        response,
        progress: { groupId: outcome.groupId, unitIds, creditsDeducted: outcome.creditsDeducted } satisfies Progress,
      });
    }
    return response;
  });
  if (charged > 0) creditsCharged.inc({ operation: cmd.operation }, charged);
  return response;
}
