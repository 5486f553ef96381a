// Workspace members: the people who sign in on the OAuth pages of the MCP endpoint and approve
// access for their workspace. Passwords are stored as argon2id hashes (memory-hard; the library's
// defaults follow the OWASP minimum: 19 MiB, 2 passes, 1 lane).
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { members, organizations } from '../../db/schema/index.ts';

const ARGON2ID = 2 as Algorithm;
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

export interface Member {
  object: 'member';
  id: string;
  org: string;
  email: string;
  created_at: string;
}

export interface SignedInMember {
  id: string;
  orgId: string;
  email: string;
  orgName: string;
  plan: 'paid' | 'none';
}

export class MemberError extends Error {
  override name = 'MemberError';
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function checkEmail(email: string): string {
  const e = normalizeEmail(email);
  if (e.length > 254 || !EMAIL_RE.test(e)) throw new MemberError(`"${email}" is not an email address`);
  return e;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new MemberError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new MemberError(`the password must be at most ${MAX_PASSWORD_LENGTH} characters`);
}

export const hashPassword = (password: string) => hash(password, { algorithm: ARGON2ID });

export async function createMember(db: Db, opts: { orgId: string; email: string; password: string }): Promise<Member> {
  const email = checkEmail(opts.email);
  checkPassword(opts.password);
  const [org] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, opts.orgId));
  if (!org) throw new MemberError(`organization ${opts.orgId} not found`);
  const [existing] = await db.select({ id: members.id }).from(members).where(eq(members.email, email));
  if (existing) throw new MemberError(`a member with email ${email} already exists`);
  const passwordHash = await hashPassword(opts.password);
  const [row] = await db
    .insert(members)
    .values({ orgId: org.id, email, passwordHash })
    .returning()
    .catch((err: unknown) => {
      const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
      throw code === '23505' ? new MemberError(`a member with email ${email} already exists`) : err;
    });
  return { object: 'member', id: row.id, org: row.orgId, email: row.email, created_at: row.createdAt.toISOString() };
}

// Verified against when the email is unknown, so that a wrong email and a wrong password take
// the same time (no account enumeration by timing).
let dummyHash: Promise<string> | undefined;

/** The member with this email and password, or undefined. */
export async function verifyMemberPassword(db: Db, email: string, password: string): Promise<SignedInMember | undefined> {
  const e = normalizeEmail(email);
  const [row] =
    e && password.length <= MAX_PASSWORD_LENGTH
      ? await db
          .select({
            id: members.id,
            orgId: members.orgId,
            email: members.email,
            passwordHash: members.passwordHash,
            orgName: organizations.name,
            plan: organizations.plan,
          })
          .from(members)
          .innerJoin(organizations, eq(organizations.id, members.orgId))
          .where(eq(members.email, e))
          .limit(1)
      : [];
  if (!row) {
    dummyHash ??= hashPassword('not a real password, only for constant-time misses');
    await verify(await dummyHash, password.slice(0, MAX_PASSWORD_LENGTH)).catch(() => false);
    return undefined;
  }
  const ok = await verify(row.passwordHash, password).catch(() => false);
  return ok ? { id: row.id, orgId: row.orgId, email: row.email, orgName: row.orgName, plan: row.plan } : undefined;
}

export async function getSignedInMember(db: Db, memberId: string): Promise<SignedInMember | undefined> {
  const [row] = await db
    .select({ id: members.id, orgId: members.orgId, email: members.email, orgName: organizations.name, plan: organizations.plan })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.orgId))
    .where(eq(members.id, memberId))
    .limit(1);
  return row;
}
