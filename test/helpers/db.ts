// A fresh database per test file, cloned from the migrated template scripts/test.ts made.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Test } from 'tap';

export function adminUrl(): string {
  const url = process.env.TEST_PG_ADMIN_URL;
  if (!url) throw new Error('TEST_PG_ADMIN_URL is not set: run the suite with `npm test` (scripts/test.ts)');
  return url;
}

export async function createTestDatabase(t: Test): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name} template ${process.env.TEST_TEMPLATE_DB}`);
  await admin.end();
  t.teardown(async () => {
    const a = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await a.unsafe(`drop database if exists ${name} with (force)`);
    await a.end();
  });
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}
