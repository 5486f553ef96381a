// Secrets the service makes once and every node shares, kept in the database.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { serviceSecrets } from '../../db/schema/index.ts';

export async function sharedSecret(db: Db, name: string): Promise<Buffer> {
  await db
    .insert(serviceSecrets)
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflictDoNothing();
  const [row] = await db.select().from(serviceSecrets).where(eq(serviceSecrets.name, name));
  return Buffer.from(row.value, 'base64url');
}
