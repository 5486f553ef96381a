// Connecting a social account in the browser (the pages are src/oauth/social.ts): a connection
// attempt is a random `state` stored (as its hash) with the member's browser session, the PKCE
// verifier where the platform takes one, and an expiry; the platform's callback consumes it once,
// the code is exchanged at the platform's token endpoint, the account is read with the new token
// and the connection stored (upserted by platform account id in the member's workspace).
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { socialConnectStates } from '../../db/schema/index.ts';
import { caller, PlatformError, rebase } from './platforms/http.ts';
import { authorizationUrl, pkcePair, SOCIAL_OAUTH } from './platforms/oauth.ts';
import { connectAccount, type SocialAccountRow, type SocialPlatform } from './accounts.ts';
import { cipherOf } from './connection.ts';

/** How long a connection attempt waits for the platform's callback. */
export const CONNECT_STATE_TTL_SECONDS = 600;
/** Longest the callback waits for the platform's token and profile answers. */
const CALLBACK_TIMEOUT_MS = 30_000;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export const callbackPath = (platform: SocialPlatform) => `/social/callback/${platform}`;
/** The redirect URI registered at the platform: PUBLIC_BASE_URL + the callback path. */
export const redirectUriOf = (ctx: AppContext, platform: SocialPlatform) => `${ctx.config.publicBaseUrl}${callbackPath(platform)}`;

/** The service's OAuth app at the platform, when configured (SOCIAL_<P>_CLIENT_ID). */
export const oauthClientOf = (ctx: AppContext, platform: SocialPlatform) => ctx.config.social.clients[platform];

/** The origin of the platform's authorization page (a sign-in form that goes on to it names it in its CSP form-action). */
export const authorizeOrigin = (ctx: AppContext, platform: SocialPlatform) =>
  new URL(rebase(SOCIAL_OAUTH[platform].authorizeUrl, ctx.config.social.apiBase[platform])).origin;

/** A callback that cannot complete: the message is shown to the member. */
export class ConnectRefused extends Error {
  override name = 'ConnectRefused';
}

/** Starts a connection: the platform's authorization URL to send the browser to. */
export async function beginConnect(
  ctx: AppContext,
  o: { sessionId: string; memberId: string; orgId: string; platform: SocialPlatform },
): Promise<string> {
  const client = oauthClientOf(ctx, o.platform);
  if (!client) throw new ConnectRefused(`Connecting ${o.platform} accounts is not configured on this server.`);
  const spec = SOCIAL_OAUTH[o.platform];
  const state = randomBytes(32).toString('base64url');
  const pkce = spec.pkce ? pkcePair() : undefined;
  // Opportunistic clean-up of attempts nobody finished.
  await ctx.db.delete(socialConnectStates).where(lt(socialConnectStates.expiresAt, new Date()));
  await ctx.db.insert(socialConnectStates).values({
    stateHash: sha256(state),
    sessionId: o.sessionId,
    memberId: o.memberId,
    orgId: o.orgId,
    platform: o.platform,
    codeVerifier: pkce?.verifier ?? null,
    expiresAt: new Date(Date.now() + CONNECT_STATE_TTL_SECONDS * 1000),
  });
  const url = authorizationUrl(o.platform, {
    clientId: client.id,
    redirectUri: redirectUriOf(ctx, o.platform),
    state,
    codeChallenge: pkce?.challenge,
  });
  return rebase(url, ctx.config.social.apiBase[o.platform]);
}

/**
 * Consumes the attempt `state` names, if it belongs to this browser session and platform and has
 * not expired (single use: it is deleted whatever the outcome).
 */
export async function consumeConnectState(ctx: AppContext, o: { sessionId: string; platform: SocialPlatform; state: string | undefined }) {
  if (!o.state) return undefined;
  const [row] = await ctx.db
    .delete(socialConnectStates)
    .where(and(eq(socialConnectStates.stateHash, sha256(o.state)), eq(socialConnectStates.sessionId, o.sessionId)))
    .returning();
  if (!row || row.platform !== o.platform || row.expiresAt.getTime() <= Date.now()) return undefined;
  return row;
}

/** Finishes a connection: the code for tokens, the account(s) read with them, stored sealed. */
export async function finishConnect(
  ctx: AppContext,
  attempt: NonNullable<Awaited<ReturnType<typeof consumeConnectState>>>,
  code: string,
): Promise<SocialAccountRow[]> {
  const platform = attempt.platform as SocialPlatform;
  const client = oauthClientOf(ctx, platform);
  if (!client) throw new ConnectRefused(`Connecting ${platform} accounts is not configured on this server.`);
  const spec = SOCIAL_OAUTH[platform];
  const api = caller(platform, ctx.config.social.apiBase[platform], undefined, AbortSignal.timeout(CALLBACK_TIMEOUT_MS));
  let accounts: Awaited<ReturnType<typeof spec.identify>>;
  try {
    const tokens = await spec.exchange({
      api,
      client,
      code,
      redirectUri: redirectUriOf(ctx, platform),
      codeVerifier: attempt.codeVerifier ?? undefined,
    });
    accounts = await spec.identify(api, tokens, client);
  } catch (err) {
    if (err instanceof PlatformError) throw new ConnectRefused(err.message);
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
      throw new ConnectRefused(`${platform} did not answer in time; try again.`);
    throw err;
  }
  const cipher = await cipherOf(ctx);
  const rows: SocialAccountRow[] = [];
  for (const a of accounts) {
    rows.push(
      await connectAccount(ctx.db, cipher, {
        orgId: attempt.orgId,
        platform,
        handle: a.handle.replace(/^@/, '').slice(0, 200),
        displayName: a.displayName?.slice(0, 200) ?? null,
        accessToken: a.accessToken,
        refreshToken: a.refreshToken ?? null,
        expiresInSeconds: a.expiresInSeconds,
        platformAccountId: a.accountId,
        scopes: a.scopes,
      }),
    );
  }
  return rows;
}
