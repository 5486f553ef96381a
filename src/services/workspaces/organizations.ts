// Workspaces (organizations): plan and credit balance. Used by the admin CLI, the first-run demo
// and the MCP tool get_workspace.
import { count, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { Db } from '../../db/client.ts';
import { organizations } from '../../db/schema/index.ts';
import { ApiError } from '../../errors.ts';
import { SCOPES, type AuthContext, type Scope } from './api-keys.ts';
import { applyCreditChange } from '../billing/credits.ts';
import type { LedgerReason } from '../billing/ledger.ts';

export type Plan = 'paid' | 'none';

export interface Organization {
  object: 'organization';
  id: string;
  name: string;
  plan: Plan;
  credits: number;
}

const view = (r: { id: string; name: string; plan: Plan; credits: number }): Organization => ({
  object: 'organization',
  id: r.id,
  name: r.name,
  plan: r.plan,
  credits: r.credits,
});

export async function createOrganization(db: Db, opts: { name: string; plan?: Plan; credits?: number }): Promise<Organization> {
  const name = opts.name.trim();
  if (name.length < 1 || name.length > 200) throw new Error('Organization name must be 1 to 200 characters');
  const credits = opts.credits ?? 0;
  if (!Number.isInteger(credits) || credits < 0) throw new Error('Initial credits must be a non-negative integer');
  return db.transaction(async (tx) => {
    const [org] = await tx
      .insert(organizations)
      .values({ name, plan: opts.plan ?? 'paid' })
      .returning();
    const balance = credits > 0 ? await applyCreditChange(tx, { orgId: org.id, delta: credits, reason: 'initial_grant' }) : 0;
    return view({ ...org, credits: balance ?? 0 });
  });
}

export async function getOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, id));
  return org ? view(org) : undefined;
}

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** The caller's workspace as get_workspace answers it: organization, plan, credits and the caller's scopes. */
export async function getWorkspace(db: Db, auth: AuthContext): Promise<components['schemas']['Workspace']> {
  const org = await getOrganization(db, auth.orgId);
  if (!org)
    throw new ApiError('not_found', 'The workspace of this token no longer exists', {
      resource: 'workspace',
      field: 'header.authorization',
    });
  return {
    object: 'workspace',
    organization: { id: org.id, name: org.name },
    plan: org.plan,
    credits: org.credits,
    scopes: auth.scopes.filter(isScope),
  };
}

export async function setPlan(db: Db, id: string, plan: Plan): Promise<Organization | undefined> {
  const [org] = await db.update(organizations).set({ plan, updatedAt: new Date() }).where(eq(organizations.id, id)).returning();
  return org ? view(org) : undefined;
}

export async function grantCredits(
  db: Db,
  orgId: string,
  amount: number,
  reason: LedgerReason = 'admin_grant',
): Promise<number | undefined> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error('Amount must be a positive integer');
  const org = await getOrganization(db, orgId);
  if (!org) return undefined;
  const balance = await applyCreditChange(db, { orgId, delta: amount, reason });
  return balance ?? undefined;
}

export async function organizationCount(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(organizations);
  return row.n;
}

export const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
