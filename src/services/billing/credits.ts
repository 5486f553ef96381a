// The credit ledger. A balance changes only here, in the same transaction as its ledger row,
// so organizations.credits always equals the sum of the org's ledger deltas.
import { eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.ts';
import { creditLedger, organizations } from '../../db/schema/index.ts';
import { creditsRefunded } from '../../metrics.ts';
import { isLedgerReason, type LedgerReason } from './ledger.ts';

type Executor = Db | Tx;

export interface CreditChange {
  orgId: string;
  delta: number;
  /** What the change is (services/billing/ledger.ts LEDGER_REASONS says its type and resource). */
  reason: LedgerReason;
  reference?: string | null;
}

/**
 * Applies a credit change. Positive deltas always succeed; a negative delta succeeds only
 * when the balance covers it (conditional UPDATE, so concurrent deductions cannot overdraw).
 * Returns the new balance, or null when the balance was insufficient (nothing written).
 * The caller's transaction, if any, is used; a single statement is atomic on its own.
 * A reason LEDGER_REASONS does not declare is refused: the ledger's readers could not say what it is.
 */
export async function applyCreditChange(db: Executor, change: CreditChange): Promise<number | null> {
  if (!Number.isInteger(change.delta) || change.delta === 0) throw new Error(`Invalid credit delta ${change.delta}`);
  if (!isLedgerReason(change.reason)) throw new Error(`Unknown ledger reason ${change.reason}: declare it in LEDGER_REASONS`);
  // One statement: the conditional balance update and its ledger row together (one round trip
  // while the workspace's row is locked).
  const cond = change.delta < 0 ? sql`and ${organizations.credits} >= ${-change.delta}` : sql``;
  const rows = (await db.execute(sql`
    with changed as (
      update ${organizations}
         set credits = ${organizations.credits} + ${change.delta}, updated_at = now()
       where ${organizations.id} = ${change.orgId} ${cond}
   returning ${organizations.credits} as credits
    )
    insert into ${creditLedger} (org_id, delta, balance_after, reason, reference)
    select ${change.orgId}, ${change.delta}, credits, ${change.reason}, ${change.reference ?? null} from changed
    returning balance_after`)) as unknown as { balance_after: number }[];
  // Refunds are counted when their ledger row is written (the last statement of the failing
  // work's transaction); charges are counted by the charged command once committed.
  if (rows.length && change.delta > 0 && change.reason.endsWith('_refund')) creditsRefunded.inc({ reason: change.reason }, change.delta);
  return rows.length ? Number(rows[0].balance_after) : null;
}

export async function ledgerSum(db: Executor, orgId: string): Promise<number> {
  const [row] = await db
    .select({ sum: sql<string>`coalesce(sum(${creditLedger.delta}), 0)` })
    .from(creditLedger)
    .where(eq(creditLedger.orgId, orgId));
  return Number(row.sum);
}
