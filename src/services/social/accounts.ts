// The social accounts a workspace connected: stored with their tokens sealed (token-crypto.ts),
// listed without them. What each platform can publish is the table below.
import { and, asc, eq, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { Db } from '../../db/client.ts';
import { socialAccounts } from '../../db/schema/index.ts';
import { SocialPlatformValues } from '../../../generated/enums.ts';
import type { TokenCipher } from './token-crypto.ts';

/** The platforms, from the contract's SocialPlatform enum (in its order: lists and messages show them so). */
export const SOCIAL_PLATFORMS = SocialPlatformValues;
export type SocialPlatform = (typeof SOCIAL_PLATFORMS)[number];
export const isSocialPlatform = (v: string): v is SocialPlatform => (SOCIAL_PLATFORMS as readonly string[]).includes(v);

/** What a platform can publish: image, video, carousel (several images in one post), text (a post without media). */
export type Capabilities = components['schemas']['SocialCapabilities'];

/**
 * What each platform's API can publish (README "Social publishing" has the same table):
 * | platform  | image | video | carousel | text |
 * | instagram | yes   | yes   | yes      | no   |
 * | facebook  | yes   | yes   | yes      | yes  |
 * | tiktok    | yes   | yes   | yes      | no   |
 * | x         | yes   | yes   | yes (≤4) | yes  |
 * | linkedin  | yes   | yes   | yes      | yes  |
 * | threads   | yes   | yes   | yes      | yes  |
 * | youtube   | no    | yes   | no       | no   |
 * | pinterest | yes   | yes   | yes      | no   |
 */
export const CAPABILITIES: Record<SocialPlatform, Capabilities> = {
  instagram: { image: true, video: true, carousel: true, text: false },
  facebook: { image: true, video: true, carousel: true, text: true },
  tiktok: { image: true, video: true, carousel: true, text: false },
  x: { image: true, video: true, carousel: true, text: true },
  linkedin: { image: true, video: true, carousel: true, text: true },
  threads: { image: true, video: true, carousel: true, text: true },
  youtube: { image: false, video: true, carousel: false, text: false },
  pinterest: { image: true, video: true, carousel: true, text: false },
};

export type SocialAccountRow = typeof socialAccounts.$inferSelect;

/** A connection as operators and clients see it: never its tokens. */
export function describeAccount(row: SocialAccountRow) {
  const platform = row.platform as SocialPlatform;
  return {
    object: 'social_account' as const,
    id: row.id,
    org: row.orgId,
    platform,
    account_id: row.platformAccountId,
    handle: row.handle,
    display_name: row.displayName,
    status: row.status as 'connected' | 'needs_reauth',
    status_reason: row.statusReason,
    expires_at: row.expiresAt ? row.expiresAt.toISOString() : null,
    scopes: row.scopes,
    capabilities: CAPABILITIES[platform],
    created_at: row.createdAt.toISOString(),
  };
}

export interface ConnectInput {
  orgId: string;
  platform: SocialPlatform;
  handle: string;
  displayName?: string | null;
  accessToken: string;
  refreshToken?: string | null;
  expiresInSeconds?: number;
  platformAccountId?: string;
  scopes?: string[];
}

/** Connects an account, or reconnects it (same workspace, platform and platform account id): new tokens, status connected. */
export async function connectAccount(db: Db, cipher: TokenCipher, input: ConnectInput): Promise<SocialAccountRow> {
  const values = {
    orgId: input.orgId,
    platform: input.platform,
    platformAccountId: input.platformAccountId ?? input.handle,
    handle: input.handle,
    displayName: input.displayName ?? null,
    status: 'connected',
    statusReason: null,
    accessTokenEnc: cipher.encrypt(input.accessToken),
    refreshTokenEnc: input.refreshToken ? cipher.encrypt(input.refreshToken) : null,
    expiresAt: input.expiresInSeconds !== undefined ? new Date(Date.now() + input.expiresInSeconds * 1000) : null,
    scopes: input.scopes ?? [],
  };
  const [row] = await db
    .insert(socialAccounts)
    .values(values)
    .onConflictDoUpdate({
      target: [socialAccounts.orgId, socialAccounts.platform, socialAccounts.platformAccountId],
      set: { ...values, updatedAt: sql`now()` },
    })
    .returning();
  return row;
}

export function listAccounts(db: Db, orgId: string, platform?: SocialPlatform): Promise<SocialAccountRow[]> {
  return db
    .select()
    .from(socialAccounts)
    .where(platform ? and(eq(socialAccounts.orgId, orgId), eq(socialAccounts.platform, platform)) : eq(socialAccounts.orgId, orgId))
    .orderBy(asc(socialAccounts.createdAt), asc(socialAccounts.id))
    .limit(200);
}

/** Disconnects (deletes the connection and its tokens). Undefined when there is none. */
export async function disconnectAccount(db: Db, id: string): Promise<SocialAccountRow | undefined> {
  const [row] = await db.delete(socialAccounts).where(eq(socialAccounts.id, id)).returning();
  return row;
}
