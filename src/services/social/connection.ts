// A connection's tokens as a publishing job uses them: the access token (refreshed first when it
// expires within a minute), one forced refresh after a 401, and `needs_reauth` when refreshing fails.
// Refreshes are serialised per account (row lock): a job that waited finds the token another job
// just refreshed and uses it instead of spending the (rotating) refresh token again.
import { eq, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { socialAccounts } from '../../db/schema/index.ts';
import type { SocialAccountRow } from './accounts.ts';
import { loadTokenKey, tokenCipher, type TokenCipher } from './token-crypto.ts';

export interface RefreshedTokens {
  accessToken: string;
  /** Platforms that rotate refresh tokens send a new one. */
  refreshToken?: string;
  expiresInSeconds?: number;
}

/** A platform refused the refresh (invalid_grant, revoked app …): the connection needs reauthorization. */
export class RefreshRefused extends Error {
  override name = 'RefreshRefused';
}

/** What an adapter calls to refresh at its platform's token endpoint. */
export type RefreshFn = (refreshToken: string, signal: AbortSignal, account: SocialAccountRow) => Promise<RefreshedTokens>;

const EARLY_SECONDS = 60;

export async function cipherOf(ctx: AppContext): Promise<TokenCipher> {
  return tokenCipher(await loadTokenKey(ctx.config));
}

export interface Credentials {
  account: SocialAccountRow;
  /** The access token to send (refreshed first when about to expire). */
  accessToken(): Promise<string>;
  /** After a 401: refresh once (later calls return the same token). Throws RefreshRefused when the platform refuses. */
  refreshAfter401(rejected: string): Promise<string>;
}

export async function credentials(
  ctx: AppContext,
  accountId: string,
  refresh: RefreshFn,
  signal: AbortSignal,
): Promise<Credentials | undefined> {
  const cipher = await cipherOf(ctx);
  const [first] = await ctx.db.select().from(socialAccounts).where(eq(socialAccounts.id, accountId));
  if (!first) return undefined;
  let account = first;
  let current = cipher.decrypt(account.accessTokenEnc);
  let refreshedOnce = false;

  /** Refreshes under the account's row lock unless the stored token already differs from `stale`. */
  const doRefresh = async (stale: string, reason: string): Promise<string> => {
    const out = await ctx.db.transaction(async (tx): Promise<string | { refused: string }> => {
      const [row] = await tx.select().from(socialAccounts).where(eq(socialAccounts.id, accountId)).for('update');
      if (!row) throw new RefreshRefused('the social account was disconnected');
      const stored = cipher.decrypt(row.accessTokenEnc);
      const fresh = !row.expiresAt || row.expiresAt.getTime() - Date.now() > EARLY_SECONDS * 1000;
      if (stored !== stale && fresh) {
        account = row;
        return stored; // another job refreshed it meanwhile
      }
      const fail = (message: string) => ({ refused: message });
      if (!row.refreshTokenEnc) return fail(`the access token ${reason} and the connection has no refresh token; reconnect the account`);
      let got: RefreshedTokens;
      try {
        got = await refresh(cipher.decrypt(row.refreshTokenEnc), signal, row);
      } catch (err) {
        if (err instanceof RefreshRefused) return fail(`refreshing the access token failed: ${err.message}; reconnect the account`);
        throw err; // a network error or 5xx: retried with the job
      }
      const [updated] = await tx
        .update(socialAccounts)
        .set({
          accessTokenEnc: cipher.encrypt(got.accessToken),
          ...(got.refreshToken ? { refreshTokenEnc: cipher.encrypt(got.refreshToken) } : {}),
          expiresAt: got.expiresInSeconds !== undefined ? new Date(Date.now() + got.expiresInSeconds * 1000) : null,
          status: 'connected',
          statusReason: null,
          updatedAt: sql`now()`,
        })
        .where(eq(socialAccounts.id, accountId))
        .returning();
      account = updated;
      return got.accessToken;
    });
    if (typeof out === 'string') return out;
    // Outside the transaction above (whose lock is released): the refusal is recorded for good.
    await ctx.db
      .update(socialAccounts)
      .set({ status: 'needs_reauth', statusReason: out.refused.slice(0, 500), updatedAt: sql`now()` })
      .where(eq(socialAccounts.id, accountId));
    throw new RefreshRefused(out.refused);
  };

  return {
    get account() {
      return account;
    },
    async accessToken() {
      if (account.expiresAt && account.expiresAt.getTime() - Date.now() <= EARLY_SECONDS * 1000)
        current = await doRefresh(current, 'expired');
      return current;
    },
    async refreshAfter401(rejected) {
      if (refreshedOnce) throw new RefreshRefused(`${account.platform} refused the refreshed access token too; reconnect the account`);
      refreshedOnce = true;
      if (rejected !== current) return current;
      current = await doRefresh(rejected, 'was refused (401)');
      return current;
    },
  };
}
