// The credit ledger. A balance changes only here, in the same transaction as its ledger row,
// so organizations.credits always equals the sum of the org's ledger deltas.
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { creditLedger, organizations } from '../db/schema/index.ts';

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
type Executor = Db | Tx;

export interface CreditChange {
  orgId: string;
  delta: number;
  reason: string;
  reference?: string | null;
}

/**
 * Applies a credit change. Positive deltas always succeed; a negative delta succeeds only
 * when the balance covers it (conditional UPDATE, so concurrent deductions cannot overdraw).
 * Returns the new balance, or null when the balance was insufficient (nothing written).
 */
export async function applyCreditChange(db: Executor, change: CreditChange): Promise<number | null> {
  if (!Number.isInteger(change.delta) || change.delta === 0) throw new Error(`Invalid credit delta ${change.delta}`);
  const run = async (tx: Executor) => {
    const cond =
      change.delta < 0
        ? and(eq(organizations.id, change.orgId), gte(organizations.credits, -change.delta))
        : eq(organizations.id, change.orgId);
    const [row] = await tx
      .update(organizations)
      .set({ credits: sql`${organizations.credits} + ${change.delta}`, updatedAt: new Date() })
      .where(cond)
      .returning({ credits: organizations.credits });
    if (!row) return null;
    await tx.insert(creditLedger).values({
      orgId: change.orgId,
      delta: change.delta,
      balanceAfter: row.credits,
      reason: change.reason,
      reference: change.reference ?? null,
    });
    return row.credits;
  };
  // Inside a caller's transaction use it; otherwise open one so balance and ledger move together.
  return 'rollback' in db ? run(db) : (db as Db).transaction(run);
}

export async function ledgerSum(db: Executor, orgId: string): Promise<number> {
  const [row] = await db
    .select({ sum: sql<string>`coalesce(sum(${creditLedger.delta}), 0)` })
    .from(creditLedger)
    .where(eq(creditLedger.orgId, orgId));
  return Number(row.sum);
}
