// npm run -s admin -- member create: one JSON object, the password stored as argon2id only.
// The successful create runs as a real process; the refusals run the same command code in this
// process (a CLI process costs ~1 s of CPU).
import { eq } from 'drizzle-orm';
import t from 'tap';
import { connect } from '../../src/db/client.ts';
import { members } from '../../src/db/schema/index.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import { verifyMemberPassword } from '../../src/services/oauth/members.ts';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';

const databaseUrl = await createTestDatabase(t);
const { db, sql } = connect(databaseUrl, 2);
t.teardown(() => sql.end());
const admin = (...args: string[]) => adminInProcess({ DATABASE_URL: databaseUrl }, args);
const adminProcess = (...args: string[]) => runAdmin({ DATABASE_URL: databaseUrl }, args);

const org = await createOrganization(db, { name: 'Members Inc' });

t.test('member create prints the member and stores an argon2id hash', async (t) => {
  const r = await adminProcess(
    'member',
    'create',
    '--org',
    org.id,
    '--email',
    'Ana.Lopez@Example.test',
    '--password',
    'correct horse battery',
  );
  t.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.match(out, { object: 'member', id: /^[0-9a-f-]{36}$/, org: org.id, email: 'ana.lopez@example.test', created_at: String });
  t.equal(r.stdout.trim().split('\n').length, 1, 'one JSON object');
  const [row] = await db.select().from(members).where(eq(members.id, out.id));
  t.match(row.passwordHash, /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/, 'argon2id, memory-hard');
  t.notOk(row.passwordHash.includes('correct horse'), 'not the password');
  t.ok(await verifyMemberPassword(db, 'ANA.LOPEZ@example.test', 'correct horse battery'), 'signs in (email case-insensitive)');
  t.notOk(await verifyMemberPassword(db, 'ana.lopez@example.test', 'wrong'), 'a wrong password does not');
});

t.test('member create refuses bad input', async (t) => {
  const dup = await admin('member', 'create', '--org', org.id, '--email', 'ana.lopez@example.test', '--password', 'another password');
  t.equal(dup.code, 1);
  t.match(dup.stderr, /already exists/);
  const short = await admin('member', 'create', '--org', org.id, '--email', 'b@example.test', '--password', 'short');
  t.equal(short.code, 2);
  t.match(short.stderr, /at least 8 characters/);
  const email = await admin('member', 'create', '--org', org.id, '--email', 'not-an-email', '--password', 'long enough pw');
  t.equal(email.code, 2);
  const missing = await admin('member', 'create', '--org', org.id, '--email', 'c@example.test');
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--password is required/);
  const noOrg = await admin(
    'member',
    'create',
    '--org',
    '7a0e4c8e-1c1f-4b8f-9f0e-000000000000',
    '--email',
    'd@example.test',
    '--password',
    'long enough pw',
  );
  t.equal(noOrg.code, 1);
  t.match(noOrg.stderr, /organization .* not found/);
});
