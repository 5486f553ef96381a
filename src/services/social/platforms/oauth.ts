// How a member connects an account of each platform in the browser (src/oauth/social.ts): the
// platform's authorization URL, scopes (those its adapter needs to publish) and PKCE support, its
// token endpoint with the client authentication it documents, and how the account's id and
// handle are read with the new token. One table for the eight platforms; every URL is on the
// platform's real host and goes through SOCIAL_API_BASE_<PLATFORM> like the adapters' calls.
//
// | platform  | authorize                                          | PKCE | token endpoint (client auth)                              | who connected                      |
// | x         | x.com/i/oauth2/authorize                           | S256 | POST api.x.com/2/oauth2/token (Basic; public: client_id)  | GET api.x.com/2/users/me           |
// | linkedin  | www.linkedin.com/oauth/v2/authorization            | no   | POST www.linkedin.com/oauth/v2/accessToken (form)         | GET api.linkedin.com/v2/userinfo   |
// | tiktok    | www.tiktok.com/v2/auth/authorize/ (client_key)     | no¹  | POST open.tiktokapis.com/v2/oauth/token/ (form)           | GET open.tiktokapis.com/v2/user/info/ |
// | youtube   | accounts.google.com/o/oauth2/v2/auth               | S256 | POST oauth2.googleapis.com/token (form)                   | GET www.googleapis.com/youtube/v3/channels?mine=true |
// | pinterest | www.pinterest.com/oauth/                           | no   | POST api.pinterest.com/v5/oauth/token (Basic)             | GET api.pinterest.com/v5/user_account |
// | instagram | www.instagram.com/oauth/authorize (Instagram Login) | no  | POST api.instagram.com/oauth/access_token (form), then the 60-day token (graph.instagram.com) | GET graph.instagram.com/me |
// | threads   | threads.com/oauth/authorize                        | no   | POST graph.threads.net/oauth/access_token (form), then the 60-day token | GET graph.threads.net/v1.0/me |
// | facebook  | www.facebook.com/v23.0/dialog/oauth                | no   | GET graph.facebook.com/v23.0/oauth/access_token, then the long-lived token | GET /me/accounts: one connection per Page, with its Page token |
// ¹ TikTok's Login Kit takes PKCE from desktop and mobile apps only; a web app (this server) does not send it.
import { createHash, randomBytes } from 'node:crypto';
import type { SocialPlatform } from '../accounts.ts';
import { PlatformError, type Caller } from './http.ts';

export interface OAuthClient {
  id: string;
  secret: string | undefined;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  expiresInSeconds?: number;
  scopes: string[];
}

/** An account the member connected (Facebook: one per Page). */
export interface ConnectedAccount extends TokenSet {
  accountId: string;
  handle: string;
  displayName: string | null;
}

export interface ExchangeInput {
  api: Caller;
  client: OAuthClient;
  code: string;
  redirectUri: string;
  codeVerifier?: string;
}

export interface SocialOAuth {
  authorizeUrl: string;
  scopes: string[];
  /** How the scope parameter joins scopes (most: a space; TikTok, Pinterest and Meta: a comma). */
  scopeSeparator: ' ' | ',';
  /** Sends code_challenge (S256) and, at the token endpoint, code_verifier. */
  pkce: boolean;
  /** The authorization request's name for the client id (TikTok: client_key). */
  clientIdParam?: string;
  /** Further authorization parameters (Google: offline access for a refresh token). */
  extra?: Record<string, string>;
  /** The code for tokens at the platform's token endpoint, as it documents. */
  exchange(input: ExchangeInput): Promise<TokenSet>;
  /** The account(s) the tokens belong to (may swap them for long-lived ones first). */
  identify(api: Caller, tokens: TokenSet, client: OAuthClient): Promise<ConnectedAccount[]>;
}

/** A verifier and its S256 challenge (RFC 7636): 43 characters of base64url each. */
export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const basic = (c: OAuthClient) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret ?? '')}`).toString('base64')}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The token response of RFC 6749 §5.1 (and the platforms' variants of it). */
function tokenSet(platform: string, json: any, requested: string[], separator: RegExp = /[ ,]+/): TokenSet {
  const body = Array.isArray(json?.data) ? json.data[0] : json; // Instagram's older { data: [ … ] }
  if (!body || typeof body.access_token !== 'string' || !body.access_token) {
    const why = body?.error_description ?? body?.error?.message ?? body?.message ?? body?.error ?? 'no access_token';
    throw new PlatformError(
      `${platform} did not issue a token: ${String(why).slice(0, 300)}`,
      400,
      false,
      undefined,
      typeof body?.error === 'string' ? body.error : undefined,
    );
  }
  const expires = Number(body.expires_in);
  const granted =
    typeof body.scope === 'string'
      ? body.scope.split(separator).filter(Boolean)
      : Array.isArray(body.permissions)
        ? body.permissions.map(String)
        : typeof body.permissions === 'string'
          ? body.permissions.split(',')
          : requested;
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : undefined,
    expiresInSeconds: Number.isFinite(expires) && expires > 0 ? Math.floor(expires) : undefined,
    scopes: granted,
  };
}

/** POST of the authorization_code grant as a form: client credentials in HTTP Basic or in the form. */
function postExchange(platform: string, url: string, opts: { auth: 'basic' | 'form'; clientIdParam?: string; scopes: () => string[] }) {
  return async ({ api, client, code, redirectUri, codeVerifier }: ExchangeInput): Promise<TokenSet> => {
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    if (codeVerifier) form.set('code_verifier', codeVerifier);
    const headers: Record<string, string> = { ...FORM };
    if (opts.auth === 'basic' && client.secret) headers.authorization = basic(client);
    else {
      form.set(opts.clientIdParam ?? 'client_id', client.id);
      if (client.secret) form.set('client_secret', client.secret);
    }
    const res = await api.call({ method: 'POST', url, headers, body: form.toString(), auth: false });
    return tokenSet(platform, res.json, opts.scopes());
  };
}

const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const need = (platform: string, v: unknown, what: string): string => {
  const s = typeof v === 'number' ? String(v) : text(v);
  if (!s) throw new PlatformError(`${platform} did not say ${what}`, 502, false);
  return s;
};

/**
 * Meta's 60-day token for a short-lived one (Instagram: ig_exchange_token, Threads: th_exchange_token).
 * It refreshes itself (ig_refresh_token / th_refresh_token with the token as access_token), so it is
 * stored as the refresh token too: that is what the adapters' refresh sends.
 */
async function longLived(
  platform: string,
  api: Caller,
  url: string,
  grant: string,
  tokens: TokenSet,
  client: OAuthClient,
): Promise<TokenSet> {
  if (!client.secret) return tokens;
  const q = new URLSearchParams({ grant_type: grant, client_secret: client.secret, access_token: tokens.accessToken });
  const res = await api.call({ method: 'GET', url: `${url}?${q}`, auth: false });
  const long = tokenSet(platform, res.json, tokens.scopes);
  return { ...long, refreshToken: long.refreshToken ?? long.accessToken, scopes: tokens.scopes };
}

const X_SCOPES = ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'];
const LINKEDIN_SCOPES = ['openid', 'profile', 'w_member_social'];
const TIKTOK_SCOPES = ['user.info.basic', 'user.info.profile', 'video.publish', 'video.upload'];
const YOUTUBE_SCOPES = ['https://www.googleapis.com/auth/youtube.upload', 'https://www.googleapis.com/auth/youtube.readonly'];
const PINTEREST_SCOPES = ['user_accounts:read', 'boards:read', 'boards:write', 'pins:read', 'pins:write'];
const INSTAGRAM_SCOPES = ['instagram_business_basic', 'instagram_business_content_publish'];
const THREADS_SCOPES = ['threads_basic', 'threads_content_publish'];
const FACEBOOK_SCOPES = ['pages_show_list', 'pages_read_engagement', 'pages_manage_posts'];
const GRAPH_FACEBOOK = 'https://graph.facebook.com/v23.0';

export const SOCIAL_OAUTH: Record<SocialPlatform, SocialOAuth> = {
  x: {
    authorizeUrl: 'https://x.com/i/oauth2/authorize',
    scopes: X_SCOPES,
    scopeSeparator: ' ',
    pkce: true,
    exchange: postExchange('x', 'https://api.x.com/2/oauth2/token', { auth: 'basic', scopes: () => X_SCOPES }),
    async identify(api, tokens) {
      const res = await api.call({ method: 'GET', url: 'https://api.x.com/2/users/me', headers: bearer(tokens.accessToken), auth: false });
      const u = res.json?.data;
      return [
        {
          ...tokens,
          accountId: need('x', u?.id, 'the user id'),
          handle: need('x', u?.username, 'the username'),
          displayName: text(u?.name) ?? null,
        },
      ];
    },
  },
  linkedin: {
    authorizeUrl: 'https://www.linkedin.com/oauth/v2/authorization',
    scopes: LINKEDIN_SCOPES,
    scopeSeparator: ' ',
    pkce: false,
    exchange: postExchange('linkedin', 'https://www.linkedin.com/oauth/v2/accessToken', { auth: 'form', scopes: () => LINKEDIN_SCOPES }),
    async identify(api, tokens) {
      // OpenID Connect userinfo: `sub` is the member id of urn:li:person:{sub}; LinkedIn has no public handle.
      const res = await api.call({
        method: 'GET',
        url: 'https://api.linkedin.com/v2/userinfo',
        headers: bearer(tokens.accessToken),
        auth: false,
      });
      const u = res.json;
      const name = text(u?.name) ?? ([text(u?.given_name), text(u?.family_name)].filter(Boolean).join(' ') || undefined);
      return [
        {
          ...tokens,
          accountId: need('linkedin', u?.sub, 'the member id (sub)'),
          handle: name ?? need('linkedin', u?.sub, 'the member id'),
          displayName: name ?? null,
        },
      ];
    },
  },
  tiktok: {
    authorizeUrl: 'https://www.tiktok.com/v2/auth/authorize/',
    scopes: TIKTOK_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    clientIdParam: 'client_key',
    exchange: postExchange('tiktok', 'https://open.tiktokapis.com/v2/oauth/token/', {
      auth: 'form',
      clientIdParam: 'client_key',
      scopes: () => TIKTOK_SCOPES,
    }),
    async identify(api, tokens) {
      const res = await api.call({
        method: 'GET',
        url: 'https://open.tiktokapis.com/v2/user/info/?fields=open_id,username,display_name',
        headers: bearer(tokens.accessToken),
        auth: false,
      });
      const u = res.json?.data?.user;
      const id = need('tiktok', u?.open_id, 'the open_id');
      return [
        { ...tokens, accountId: id, handle: text(u?.username) ?? text(u?.display_name) ?? id, displayName: text(u?.display_name) ?? null },
      ];
    },
  },
  youtube: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    scopes: YOUTUBE_SCOPES,
    scopeSeparator: ' ',
    pkce: true,
    // A refresh token is issued only for offline access; prompt=consent issues one on every connection.
    extra: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
    exchange: postExchange('youtube', 'https://oauth2.googleapis.com/token', { auth: 'form', scopes: () => YOUTUBE_SCOPES }),
    async identify(api, tokens) {
      const res = await api.call({
        method: 'GET',
        url: 'https://www.googleapis.com/youtube/v3/channels?part=snippet&mine=true',
        headers: bearer(tokens.accessToken),
        auth: false,
      });
      const c = res.json?.items?.[0];
      if (!c) throw new PlatformError('youtube: this Google account has no YouTube channel; create one, then connect again', 400, false);
      const title = text(c.snippet?.title) ?? null;
      return [
        {
          ...tokens,
          accountId: need('youtube', c.id, 'the channel id'),
          handle: text(c.snippet?.customUrl) ?? title ?? c.id,
          displayName: title,
        },
      ];
    },
  },
  pinterest: {
    authorizeUrl: 'https://www.pinterest.com/oauth/',
    scopes: PINTEREST_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    exchange: postExchange('pinterest', 'https://api.pinterest.com/v5/oauth/token', { auth: 'basic', scopes: () => PINTEREST_SCOPES }),
    async identify(api, tokens) {
      const res = await api.call({
        method: 'GET',
        url: 'https://api.pinterest.com/v5/user_account',
        headers: bearer(tokens.accessToken),
        auth: false,
      });
      const u = res.json;
      const username = need('pinterest', u?.username, 'the username');
      return [{ ...tokens, accountId: text(u?.id) ?? username, handle: username, displayName: text(u?.business_name) ?? null }];
    },
  },
  instagram: {
    // Instagram API with Instagram Login (professional accounts): no Facebook Page needed.
    authorizeUrl: 'https://www.instagram.com/oauth/authorize',
    scopes: INSTAGRAM_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    exchange: postExchange('instagram', 'https://api.instagram.com/oauth/access_token', { auth: 'form', scopes: () => INSTAGRAM_SCOPES }),
    async identify(api, short, client) {
      const tokens = await longLived('instagram', api, 'https://graph.instagram.com/access_token', 'ig_exchange_token', short, client);
      const q = new URLSearchParams({ fields: 'user_id,username,name', access_token: tokens.accessToken });
      const res = await api.call({ method: 'GET', url: `https://graph.instagram.com/v23.0/me?${q}`, auth: false });
      const u = res.json;
      return [
        {
          ...tokens,
          accountId: need('instagram', u?.user_id ?? u?.id, 'the user id'),
          handle: need('instagram', u?.username, 'the username'),
          displayName: text(u?.name) ?? null,
        },
      ];
    },
  },
  threads: {
    authorizeUrl: 'https://threads.com/oauth/authorize',
    scopes: THREADS_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    exchange: postExchange('threads', 'https://graph.threads.net/oauth/access_token', { auth: 'form', scopes: () => THREADS_SCOPES }),
    async identify(api, short, client) {
      const tokens = await longLived('threads', api, 'https://graph.threads.net/access_token', 'th_exchange_token', short, client);
      const q = new URLSearchParams({ fields: 'id,username,name', access_token: tokens.accessToken });
      const res = await api.call({ method: 'GET', url: `https://graph.threads.net/v1.0/me?${q}`, auth: false });
      const u = res.json;
      return [
        {
          ...tokens,
          accountId: need('threads', u?.id, 'the user id'),
          handle: need('threads', u?.username, 'the username'),
          displayName: text(u?.name) ?? null,
        },
      ];
    },
  },
  facebook: {
    authorizeUrl: 'https://www.facebook.com/v23.0/dialog/oauth',
    scopes: FACEBOOK_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    async exchange({ api, client, code, redirectUri }) {
      const q = new URLSearchParams({ client_id: client.id, redirect_uri: redirectUri, code });
      if (client.secret) q.set('client_secret', client.secret);
      const res = await api.call({ method: 'GET', url: `${GRAPH_FACEBOOK}/oauth/access_token?${q}`, auth: false });
      return tokenSet('facebook', res.json, FACEBOOK_SCOPES);
    },
    async identify(api, short, client) {
      // Page tokens got with a long-lived user token do not expire: each Page is one connection, with
      // its Page token to publish and the long-lived user token as its refresh token (the Facebook
      // adapter's refresh exchanges it and reads the Page token again).
      let user = short;
      let longLivedUser: string | undefined;
      if (client.secret) {
        const q = new URLSearchParams({
          grant_type: 'fb_exchange_token',
          client_id: client.id,
          client_secret: client.secret,
          fb_exchange_token: short.accessToken,
        });
        const res = await api.call({ method: 'GET', url: `${GRAPH_FACEBOOK}/oauth/access_token?${q}`, auth: false });
        user = { ...tokenSet('facebook', res.json, short.scopes), scopes: short.scopes };
        longLivedUser = user.accessToken;
      }
      const q = new URLSearchParams({ fields: 'id,name,username,access_token', limit: '50', access_token: user.accessToken });
      const res = await api.call({ method: 'GET', url: `${GRAPH_FACEBOOK}/me/accounts?${q}`, auth: false });
      const pages: any[] = Array.isArray(res.json?.data) ? res.json.data : [];
      const out = pages
        .filter((p) => text(p?.id) && text(p?.access_token))
        .map((p) => ({
          accessToken: p.access_token as string,
          refreshToken: longLivedUser,
          scopes: user.scopes,
          accountId: p.id as string,
          handle: text(p.username) ?? text(p.name) ?? p.id,
          displayName: text(p.name) ?? null,
        }));
      if (!out.length)
        throw new PlatformError('facebook: no Page was shared with this app; choose at least one Page when connecting', 400, false);
      return out;
    },
  },
};

/** The platform's authorization URL for this connection attempt. */
export function authorizationUrl(
  platform: SocialPlatform,
  o: { clientId: string; redirectUri: string; state: string; codeChallenge?: string },
): string {
  const spec = SOCIAL_OAUTH[platform];
  const u = new URL(spec.authorizeUrl);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set(spec.clientIdParam ?? 'client_id', o.clientId);
  u.searchParams.set('redirect_uri', o.redirectUri);
  u.searchParams.set('scope', spec.scopes.join(spec.scopeSeparator));
  u.searchParams.set('state', o.state);
  if (spec.pkce && o.codeChallenge) {
    u.searchParams.set('code_challenge', o.codeChallenge);
    u.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [k, v] of Object.entries(spec.extra ?? {})) u.searchParams.set(k, v);
  return u.toString();
}
