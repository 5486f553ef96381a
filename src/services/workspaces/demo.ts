// First run with an empty database: a demo workspace to try the API with, an API key, and a
// member who can sign in on the OAuth pages (so an MCP client connecting over OAuth completes
// without `admin member create`). The key and the password are returned to be shown once.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { createMember } from '../oauth/members.ts';
import { createApiKey } from './api-keys.ts';
import { createOrganization, organizationCount, type Organization } from './organizations.ts';

const DEMO_LOCK = 727_002;

/** The demo member's email (example.com: a reserved domain, never someone's address). */
export const DEMO_MEMBER_EMAIL = 'demo@example.com';

export interface DemoWorkspace {
  org: Organization;
  key: string;
  member: { email: string; password: string };
}

export async function ensureDemoWorkspace(db: Db): Promise<DemoWorkspace | undefined> {
  return db.transaction(async (tx) => {
    // Serialise first runs of several processes on one database.
    await tx.execute(`select pg_advisory_xact_lock(${DEMO_LOCK})`);
    const t = tx as unknown as Db;
    if ((await organizationCount(t)) > 0) return undefined;
    const org = await createOrganization(t, { name: 'Demo workspace', plan: 'paid', credits: 1000 });
    const key = await createApiKey(t, { orgId: org.id, scopes: ['generations:read', 'generations:write'], name: 'demo' });
    const password = randomBytes(12).toString('base64url');
    await createMember(t, { orgId: org.id, email: DEMO_MEMBER_EMAIL, password });
    return { org, key: key.key, member: { email: DEMO_MEMBER_EMAIL, password } };
  });
}
