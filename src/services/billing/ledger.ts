// The credit ledger as the API shows it (GET /credits, GET /credits/transactions): what each
// ledger reason means (its transaction type and the resource its reference names), the balance
// and the ledger's pages. Every reason written to credit_ledger is declared here; applyCreditChange
// refuses any other (and the type of its `reason` is this table's keys), so a new reason cannot
// reach the ledger without saying what it is.
import { and, desc, eq, gt, inArray, lt, notInArray, sql, type SQL } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { creditLedger, generations, organizations } from '../../db/schema/index.ts';
import { decodeCursor, encodeCursor } from '../editor/media.ts';

type S = components['schemas'];
export type CreditTransactionType = S['CreditTransactionType'];
type ResourceObject = S['CreditTransactionResource']['object'];

interface ReasonMeaning {
  type: CreditTransactionType;
  /** The reference's prefix (`prefix:id`) and the resource it names; none for grants. */
  resource?: { prefix: string; object: ResourceObject };
}

/** Every ledger reason, by what writes it. */
export const LEDGER_REASONS = {
  // Workspaces (services/workspaces/organizations.ts): credits at creation, admin top-ups.
  initial_grant: { type: 'grant' },
  admin_grant: { type: 'grant' },
  // Charged commands (ChargedCommand.ledger): the charge of an accepted paid request.
  generation_charge: { type: 'charge', resource: { prefix: 'batch', object: 'generation_batch' } },
  slideshow_charge: { type: 'charge', resource: { prefix: 'slideshow', object: 'slideshow' } },
  faceless_video_charge: { type: 'charge', resource: { prefix: 'faceless-video', object: 'video' } },
  reference_charge: { type: 'charge', resource: { prefix: 'reference', object: 'reference_inspiration' } },
  publication_charge: { type: 'charge', resource: { prefix: 'publication', object: 'social_publication' } },
  // Resource declarations (src/kernel refund): failed or canceled work refunded once.
  generation_refund: { type: 'refund', resource: { prefix: 'generation', object: 'generation' } },
  slideshow_refund: { type: 'refund', resource: { prefix: 'slideshow', object: 'slideshow' } },
  faceless_video_refund: { type: 'refund', resource: { prefix: 'faceless-video', object: 'video' } },
  reference_refund: { type: 'refund', resource: { prefix: 'reference', object: 'reference_inspiration' } },
} as const satisfies Record<string, ReasonMeaning>;

export type LedgerReason = keyof typeof LEDGER_REASONS;

export const isLedgerReason = (reason: string): reason is LedgerReason => Object.hasOwn(LEDGER_REASONS, reason);

/** The reasons of one transaction type (the `type` filter). */
export const reasonsOf = (type: CreditTransactionType): LedgerReason[] =>
  (Object.keys(LEDGER_REASONS) as LedgerReason[]).filter((r) => LEDGER_REASONS[r].type === type);

type Row = typeof creditLedger.$inferSelect;
type Resource = S['CreditTransactionResource'];

/**
 * The resource a row's reference names, when its reason has one and the reference has the
 * reason's prefix (rows written before charges named their resource, `faceless:<request>` and
 * `slideshow_request:<request>`, name none that the API knows).
 */
export function resourceOf(reason: string, reference: string | null): Resource | null {
  const meaning: ReasonMeaning | undefined = isLedgerReason(reason) ? LEDGER_REASONS[reason] : undefined;
  if (!meaning?.resource || !reference?.startsWith(`${meaning.resource.prefix}:`)) return null;
  const id = reference.slice(meaning.resource.prefix.length + 1);
  return /^[0-9a-f-]{1,36}$/.test(id) ? { object: meaning.resource.object, id } : null;
}

/**
 * A row's type. Writes are restricted to LEDGER_REASONS; a row with another reason was written
 * outside the API (by the operator, in the database), which is what `adjustment` means.
 */
export const typeOf = (reason: string): CreditTransactionType => (isLedgerReason(reason) ? LEDGER_REASONS[reason].type : 'adjustment');

export async function getCreditBalance(ctx: AppContext, orgId: string): Promise<S['CreditBalance']> {
  // One statement: the balance and the newest ledger row of the same snapshot.
  const [row] = (await ctx.db.execute(sql`
    select o.credits, o.plan, (select max(l.id) from ${creditLedger} l where l.org_id = o.id) as last
      from ${organizations} o where o.id = ${orgId}`)) as unknown as { credits: number; plan: 'paid' | 'none'; last: string | null }[];
  return {
    object: 'credit_balance',
    available: row.credits,
    plan: row.plan,
    last_transaction_id: row.last === null ? null : Number(row.last),
  };
}

interface LedgerCursor {
  i: number;
}
const isLedgerCursor = (v: unknown): v is LedgerCursor =>
  typeof v === 'object' && v !== null && Number.isSafeInteger((v as LedgerCursor).i) && (v as LedgerCursor).i > 0;

export interface TransactionQuery {
  limit?: number;
  cursor?: string;
  type?: CreditTransactionType;
  created_after?: string;
  created_before?: string;
}

function filters(orgId: string, q: TransactionQuery): SQL[] {
  const where: SQL[] = [eq(creditLedger.orgId, orgId)];
  const cursor = decodeCursor(q.cursor, isLedgerCursor);
  if (cursor) where.push(lt(creditLedger.id, cursor.i));
  if (q.type === 'adjustment') where.push(notInArray(creditLedger.reason, Object.keys(LEDGER_REASONS)));
  else if (q.type) where.push(inArray(creditLedger.reason, reasonsOf(q.type)));
  // At the millisecond precision created_at is shown with, so that a row's own created_at excludes it.
  const shown = sql`date_trunc('milliseconds', ${creditLedger.createdAt})`;
  const instant = (at: string) => sql`${new Date(at).toISOString()}::timestamptz`;
  if (q.created_after) where.push(gt(shown, instant(q.created_after)));
  if (q.created_before) where.push(lt(shown, instant(q.created_before)));
  return where;
}

/** The generations of each generation batch on the page, oldest first, then by id (a request's units share one created_at). */
async function batchGenerations(ctx: AppContext, orgId: string, resources: (Resource | null)[]): Promise<Map<string, string[]>> {
  const batchIds = resources.filter((r) => r?.object === 'generation_batch').map((r) => r!.id);
  if (!batchIds.length) return new Map();
  const rows = await ctx.db
    .select({ batchId: generations.batchId, id: generations.id })
    .from(generations)
    .where(and(eq(generations.orgId, orgId), inArray(generations.batchId, batchIds)))
    .orderBy(generations.createdAt, generations.id);
  const byBatch = new Map<string, string[]>();
  for (const g of rows) byBatch.set(g.batchId, [...(byBatch.get(g.batchId) ?? []), g.id]);
  return byBatch;
}

export async function listCreditTransactions(ctx: AppContext, orgId: string, q: TransactionQuery): Promise<S['CreditTransactionList']> {
  const limit = q.limit ?? 30;
  const rows: Row[] = await ctx.db
    .select()
    .from(creditLedger)
    .where(and(...filters(orgId, q)))
    .orderBy(desc(creditLedger.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const resources = page.map((r) => resourceOf(r.reason, r.reference));
  const batches = await batchGenerations(ctx, orgId, resources);
  const last = page[page.length - 1];
  return {
    object: 'list',
    data: page.map((r, i) => {
      const resource = resources[i];
      const ids = resource?.object === 'generation_batch' ? batches.get(resource.id) : undefined;
      return {
        object: 'credit_transaction',
        id: r.id,
        type: typeOf(r.reason),
        amount: r.delta,
        balance_after: r.balanceAfter,
        resource: resource && ids ? { ...resource, generation_ids: ids } : resource,
        created_at: r.createdAt.toISOString(),
      };
    }),
    next_cursor: rows.length > limit && last ? encodeCursor({ i: last.id } as never) : null,
  };
}
