// Idempotency records in PostgreSQL, per (org, operation, key), following seed 4.1 rules 2–3:
// same key + same body after completion → the stored response, replayed; same key + different
// body → 409; same key while the first request is in flight → 409; a `partial` batch is resumed
// by a retry with the same key. Records expire 24 hours after creation.
//
// Everything happens inside the request's own transaction: a transaction-scoped advisory lock on
// the key marks it in flight (a concurrent request that cannot take it gets 409 at once, unless
// the request it repeats is completed: replays never wait for one another), and
// the record is written in the same transaction as the work, so a failure leaves no trace and
// the key can simply be used again.
import { createHash } from 'node:crypto';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.ts';
import { idempotencyKeys } from '../../db/schema/index.ts';
import { ApiError } from '../../errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface IdemKey {
  orgId: string;
  operation: string;
  key: string;
}

export type IdemStart = { kind: 'new' } | { kind: 'resume'; progress: unknown } | { kind: 'replay'; response: unknown };

/** Canonical JSON (keys sorted at every level), so equal requests hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export const fingerprint = (request: unknown) => createHash('sha256').update(canonicalJson(request)).digest('hex');

const where = (k: IdemKey) =>
  and(eq(idempotencyKeys.orgId, k.orgId), eq(idempotencyKeys.operation, k.operation), eq(idempotencyKeys.key, k.key));

function conflict(k: IdemKey, message: string): ApiError {
  return new ApiError('idempotency_conflict', message, { field: 'header.idempotency-key', idempotency_key: k.key });
}

/** 409: the key was used with another request. */
export const usedConflict = (k: IdemKey) =>
  conflict(k, 'This idempotency key was already used with a different request; use a new key for a different request');

/**
 * The stored response of a completed request with this key and fingerprint that has not expired,
 * or undefined (no such record, another body, or still partial): one read by the primary key,
 * taking no lock. A replay is answered from it before the request is counted or checked again.
 */
export async function completedResponse(db: Db | Tx, k: IdemKey, print: string): Promise<{ response: unknown } | undefined> {
  const [done] = await db
    .select({ response: idempotencyKeys.response })
    .from(idempotencyKeys)
    .where(
      and(
        where(k),
        eq(idempotencyKeys.state, 'completed'),
        eq(idempotencyKeys.fingerprint, print),
        gt(idempotencyKeys.expiresAt, new Date()),
      ),
    );
  return done;
}

/**
 * What an earlier request with this key settled, read without a lock (one read by the primary
 * key): the stored response when it completed with the same fingerprint; a 409 when the key was
 * used with another request; undefined when the key is free, in flight or expired. For a command
 * that does slow work before it claims the key (claimIdempotent still decides, under the lock).
 */
export async function settledResponse(db: Db | Tx, k: IdemKey, print: string): Promise<{ response: unknown } | undefined> {
  const [row] = await db
    .select({ fingerprint: idempotencyKeys.fingerprint, state: idempotencyKeys.state, response: idempotencyKeys.response })
    .from(idempotencyKeys)
    .where(and(where(k), gt(idempotencyKeys.expiresAt, new Date())));
  if (!row) return undefined;
  if (row.fingerprint !== print) throw usedConflict(k);
  return row.state === 'completed' ? { response: row.response } : undefined;
}

/**
 * Claims the key for the rest of `tx`, or says what to do instead. Throws 409 when another
 * request holds the key right now or when the key was used with a different request.
 */
export async function claimIdempotent(tx: Tx, k: IdemKey, print: string): Promise<IdemStart> {
  const lockKey = `${k.orgId}|${k.operation}|${k.key}`;
  const [{ locked }] = (await tx.execute(
    sql`select pg_try_advisory_xact_lock(hashtextextended(${lockKey}, 727)) as locked`,
  )) as unknown as {
    locked: boolean;
  }[];
  if (!locked) {
    // Another transaction holds the key: a replay of a completed request (the record is committed
    // and no longer changes) is answered all the same; otherwise the key is in flight.
    const [done] = await tx
      .select({ fingerprint: idempotencyKeys.fingerprint, response: idempotencyKeys.response })
      .from(idempotencyKeys)
      .where(and(where(k), eq(idempotencyKeys.state, 'completed'), gt(idempotencyKeys.expiresAt, new Date())));
    if (done?.fingerprint === print) return { kind: 'replay', response: done.response };
    if (done) throw usedConflict(k);
    throw conflict(k, 'A request with this idempotency key is still being processed; retry after it finishes');
  }
  const [row] = await tx
    .select()
    .from(idempotencyKeys)
    .where(and(where(k), gt(idempotencyKeys.expiresAt, new Date())));
  if (!row) return { kind: 'new' };
  if (row.fingerprint !== print) throw usedConflict(k);
  if (row.state === 'completed') return { kind: 'replay', response: row.response };
  return { kind: 'resume', progress: row.progress };
}

/** Records the outcome in the same transaction as the work (an expired record is replaced). */
export async function recordIdempotent(
  tx: Tx,
  k: IdemKey,
  print: string,
  outcome: { state: 'completed' | 'partial'; response: unknown; progress: unknown },
): Promise<void> {
  const now = new Date();
  const fresh = { fingerprint: print, state: outcome.state, response: outcome.response, progress: outcome.progress };
  await tx
    .insert(idempotencyKeys)
    .values({ ...k, ...fresh, createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) })
    .onConflictDoUpdate({
      target: [idempotencyKeys.orgId, idempotencyKeys.operation, idempotencyKeys.key],
      set: {
        ...fresh,
        // A resumed batch keeps its original window; an expired record starts a new one.
        createdAt: sql`case when ${idempotencyKeys.expiresAt} <= now() then now() else ${idempotencyKeys.createdAt} end`,
        expiresAt: sql`case when ${idempotencyKeys.expiresAt} <= now() then now() + interval '24 hours' else ${idempotencyKeys.expiresAt} end`,
      },
    });
}

/** Drops expired records (run periodically by the workers' maintenance job). */
export async function purgeExpiredIdempotency(db: Db): Promise<number> {
  const rows = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, new Date())).returning({ key: idempotencyKeys.key });
  return rows.length;
}
