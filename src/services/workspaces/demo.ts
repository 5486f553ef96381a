// First run with an empty database: a demo workspace and a key to try the API with.
import type { Db } from '../../db/client.ts';
import { createApiKey } from './api-keys.ts';
import { createOrganization, organizationCount, type Organization } from './organizations.ts';

const DEMO_LOCK = 727_002;

export async function ensureDemoWorkspace(db: Db): Promise<{ org: Organization; key: string } | undefined> {
  return db.transaction(async (tx) => {
    // Serialise first runs of several processes on one database.
    await tx.execute(`select pg_advisory_xact_lock(${DEMO_LOCK})`);
    if ((await organizationCount(tx as unknown as Db)) > 0) return undefined;
    const org = await createOrganization(tx as unknown as Db, { name: 'Demo workspace', plan: 'paid', credits: 1000 });
    const key = await createApiKey(tx as unknown as Db, { orgId: org.id, scopes: ['generations:read', 'generations:write'], name: 'demo' });
    return { org, key: key.key };
  });
}
