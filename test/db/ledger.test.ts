import t from 'tap';
import { eq } from 'drizzle-orm';
import { connect, type Db } from '../../src/db/client.ts';
import { creditLedger, organizations } from '../../src/db/schema/index.ts';
import { applyCreditChange, ledgerSum } from '../../src/services/billing/credits.ts';
import type { LedgerReason } from '../../src/services/billing/ledger.ts';
import { createOrganization, grantCredits } from '../../src/services/workspaces/organizations.ts';
import { createTestDatabase } from '../helpers/db.ts';

const url = await createTestDatabase(t);
const { db, sql } = connect(url, 30);
t.teardown(() => sql.end());

const balance = async (db: Db, id: string) => (await db.select().from(organizations).where(eq(organizations.id, id)))[0].credits;

t.test('every balance change writes a ledger row; balance equals the ledger sum', async (t) => {
  const org = await createOrganization(db, { name: 'Ledger', credits: 100 });
  t.equal(org.credits, 100);
  t.equal(await grantCredits(db, org.id, 50), 150);
  t.equal(await applyCreditChange(db, { orgId: org.id, delta: -30, reason: 'generation_charge', reference: 'batch:r1' }), 120);
  const rows = await db.select().from(creditLedger).where(eq(creditLedger.orgId, org.id)).orderBy(creditLedger.id);
  t.same(
    rows.map((r) => [r.delta, r.balanceAfter, r.reason]),
    [
      [100, 100, 'initial_grant'],
      [50, 150, 'admin_grant'],
      [-30, 120, 'generation_charge'],
    ],
  );
  t.equal(await ledgerSum(db, org.id), await balance(db, org.id));
});

t.test('a deduction larger than the balance writes nothing', async (t) => {
  const org = await createOrganization(db, { name: 'Poor', credits: 10 });
  t.equal(await applyCreditChange(db, { orgId: org.id, delta: -11, reason: 'generation_charge' }), null);
  t.equal(await balance(db, org.id), 10);
  t.equal(await ledgerSum(db, org.id), 10);
});

t.test('concurrent deductions never overdraw and agree with the ledger', async (t) => {
  const org = await createOrganization(db, { name: 'Race', credits: 70 });
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      applyCreditChange(db, { orgId: org.id, delta: -10, reason: 'generation_charge', reference: `batch:${i}` }),
    ),
  );
  t.equal(results.filter((r) => r !== null).length, 7, 'exactly 7 deductions of 10 fit in 70');
  t.equal(await balance(db, org.id), 0);
  t.equal(await ledgerSum(db, org.id), 0);
});

t.test('the database refuses a negative balance and edits of the ledger', async (t) => {
  const org = await createOrganization(db, { name: 'Guarded', credits: 5 });
  await t.rejects(sql`update organizations set credits = -1 where id = ${org.id}`, /organizations_credits_non_negative/);
  await t.rejects(sql`update credit_ledger set delta = 999 where org_id = ${org.id}`, /append-only/);
  await t.rejects(sql`delete from credit_ledger where org_id = ${org.id}`, /append-only/);
  t.equal(await ledgerSum(db, org.id), 5);
});

t.test('a reason LEDGER_REASONS does not declare is refused, and nothing is written', async (t) => {
  const org = await createOrganization(db, { name: 'Undeclared', credits: 20 });
  const reason = 'mystery_charge' as LedgerReason;
  await t.rejects(applyCreditChange(db, { orgId: org.id, delta: -5, reason }), /Unknown ledger reason mystery_charge/);
  t.equal(await balance(db, org.id), 20);
  t.equal((await db.select().from(creditLedger).where(eq(creditLedger.orgId, org.id))).length, 1, 'only the initial grant');
});
