// What the three Meta adapters (instagram.ts, facebook.ts, threads.ts) share. Their Graph APIs
// (graph.instagram.com for Instagram with Instagram Login, graph.facebook.com for Facebook Pages,
// graph.threads.net for Threads)
// take the token as the `access_token` parameter and fields as form parameters, fetch the media
// themselves from a URL (ours: a signed /media/ URL on PUBLIC_BASE_URL), and make posts in two
// steps — a container, processed asynchronously and polled until FINISHED, then a publish call
// naming it — so a resumed attempt that finds its container id publishes that container instead
// of making another. Graph error bodies (rate limits, code 190 for an expired token) are read by
// http.ts.
import type { MediaRow } from '../../editor/media.ts';
import { RefreshRefused, type RefreshedTokens } from '../connection.ts';
import { PlatformError, sleep, type Caller, type PlatformRequest, type PublishTask } from './http.ts';

export const GRAPH_API = 'https://graph.facebook.com';
/** Instagram API with Instagram Login: the host of its content publishing and token refresh. */
export const INSTAGRAM_API = 'https://graph.instagram.com';
/** The Graph API version called (graph.facebook.com for Facebook Pages, graph.instagram.com for Instagram). */
export const GRAPH_VERSION = 'v23.0';
export const THREADS_API = 'https://graph.threads.net';
/** How long the media URL given to a platform stays valid: its container must have fetched the media by then. */
const MEDIA_URL_TTL_SECONDS = 6 * 3600;
/** Longest wait for a container to be processed. */
const PROCESSING_TIMEOUT_MS = 10 * 60_000;

/** A Graph call with the connection's token as access_token and `fields` as a form body (POST) or query (GET). */
export function graph(
  api: Caller,
  method: 'GET' | 'POST',
  url: string,
  fields: Record<string, string | number | boolean | undefined> = {},
) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) params.set(k, String(v));
  const req: PlatformRequest = { method, url, tokenParam: 'access_token' };
  if (method === 'GET') {
    const u = new URL(url);
    for (const [k, v] of params) u.searchParams.set(k, v);
    req.url = u.href;
  } else {
    req.headers = { 'content-type': 'application/x-www-form-urlencoded' };
    req.body = params.toString();
  }
  return api.call(req);
}

/** The id in a Graph answer ({"id": "…"}), or a retryable error naming the call. */
export function idOf(res: { json: any; status: number }, what: string): string {
  const id = res.json?.id;
  if (typeof id !== 'string' && typeof id !== 'number') throw new PlatformError(`${what} answered without an id`, res.status, true);
  return String(id);
}

/** A signed URL of ours the platform fetches the media from. */
export const mediaUrl = (task: PublishTask, m: MediaRow) => task.storage.signedUrl(m.storageKey, MEDIA_URL_TTL_SECONDS);

export type ContainerStatus = 'FINISHED' | 'PUBLISHED';

/**
 * Polls a container (`GET /{id}?fields=<field>,…`) until it is FINISHED (or already PUBLISHED, by an
 * attempt whose answer was lost). ERROR fails the target; EXPIRED (not published within 24 hours) is
 * retryable after `onExpired` forgets the container so the next attempt makes a new one.
 */
export async function waitContainer(
  api: Caller,
  platform: string,
  url: string,
  field: 'status_code' | 'status',
  detail: string,
  signal: AbortSignal,
  onExpired: () => Promise<void>,
): Promise<ContainerStatus> {
  const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
  for (let wait = 1000; ; wait = Math.min(wait * 2, 30_000)) {
    const res = await graph(api, 'GET', url, { fields: `${field},${detail}` });
    const status = res.json?.[field];
    if (status === 'FINISHED' || status === 'PUBLISHED') return status;
    const why = res.json?.[detail];
    if (status === 'ERROR')
      throw new PlatformError(`${platform} could not process the media: ${why ?? 'ERROR'}`, 400, false, undefined, 'ERROR');
    if (status === 'EXPIRED') {
      await onExpired();
      throw new PlatformError(`${platform} let the container expire before it was published; it is made again`, 0, true);
    }
    if (Date.now() > deadline) throw new PlatformError(`${platform} did not finish processing the media in time`, 0, true);
    await sleep(wait, signal);
  }
}

type Fields = Record<string, string | boolean | undefined>;

/** What differs between Instagram's and Threads' container flows. */
export interface ContainerFlow {
  platform: 'instagram' | 'threads';
  /** The versioned API root (`https://graph.instagram.com/v23.0`). */
  base: string;
  /** The container and publish edges under the user (`media`/`media_publish`, `threads`/`threads_publish`). */
  create: string;
  publish: string;
  /** The container's status field and its detail field. */
  status: 'status_code' | 'status';
  detail: string;
  /** The fields of one carousel item (is_carousel_item is added). */
  item(m: MediaRow): Fields;
  /** The carousel container's fields besides its media_type and children (the caption). */
  carousel: Fields;
  /** The container of a post that is not a carousel: one media item, or a text post. */
  single(): Fields;
}

interface ContainerState {
  children?: string[];
  container?: string | null;
  post_id?: string;
  post_url?: string | null;
}

/**
 * Instagram's and Threads' publishing: one container per carousel item then a CAROUSEL container
 * naming them (or one container), polled until FINISHED, published, then its permalink read. Ids
 * are saved as they come, so a resumed attempt publishes the container it made (a container can be
 * published once) instead of making another.
 */
export async function publishContainer(task: PublishTask, flow: ContainerFlow): Promise<{ id: string; url: string | null }> {
  const { api } = task;
  const state = task.state as ContainerState;
  const user = encodeURIComponent(task.account.platformAccountId);
  const create = async (fields: Fields) =>
    idOf(await graph(api, 'POST', `${flow.base}/${user}/${flow.create}`, fields), `${flow.platform} POST /${flow.create}`);
  if (!state.post_id) {
    if (!state.container) {
      let container: string;
      if (task.media.length > 1) {
        const children = [...(state.children ?? [])];
        for (let i = children.length; i < task.media.length; i++) {
          children.push(await create({ ...flow.item(task.media[i]), is_carousel_item: true }));
          await task.save({ children });
        }
        container = await create({ media_type: 'CAROUSEL', children: children.join(','), ...flow.carousel });
      } else {
        container = await create(flow.single());
      }
      await task.save({ container });
    }
    const container = state.container!;
    const status = await waitContainer(
      api,
      flow.platform,
      `${flow.base}/${encodeURIComponent(container)}`,
      flow.status,
      flow.detail,
      task.signal,
      () => task.save({ container: null, children: [] }),
    );
    // PUBLISHED: an earlier attempt published it and its answer was lost; the platform does not say
    // which post it became, so the container stands for the post (never published twice).
    const id =
      status === 'PUBLISHED'
        ? container
        : idOf(
            await graph(api, 'POST', `${flow.base}/${user}/${flow.publish}`, { creation_id: container }),
            `${flow.platform} POST /${flow.publish}`,
          );
    await task.save({ post_id: id });
  }
  if (state.post_url === undefined)
    await task.save({ post_url: await permalink(api, `${flow.base}/${encodeURIComponent(state.post_id!)}`, 'permalink') });
  return { id: state.post_id!, url: state.post_url ?? null };
}

/** A permalink field read after publishing; null when the platform does not give one (the post is made either way). */
export async function permalink(api: Caller, url: string, field: 'permalink' | 'permalink_url'): Promise<string | null> {
  try {
    const res = await graph(api, 'GET', url, { fields: field });
    const link = res.json?.[field];
    if (typeof link !== 'string' || !link) return null;
    return link.startsWith('/') ? `https://www.facebook.com${link}` : link;
  } catch (err) {
    if (err instanceof PlatformError && !err.retryable) return null;
    throw err;
  }
}

const tokens = (j: any, platform: string): RefreshedTokens => {
  if (typeof j?.access_token !== 'string') throw new RefreshRefused(`${platform} answered the refresh without an access_token`);
  // The new long-lived token is also what the next refresh exchanges.
  return {
    accessToken: j.access_token,
    refreshToken: j.access_token,
    expiresInSeconds: typeof j.expires_in === 'number' ? j.expires_in : undefined,
  };
};

const refused = (err: unknown) => (err instanceof PlatformError && !err.retryable ? new RefreshRefused(err.message) : err);

/**
 * Facebook Pages: the stored refresh token is the member's long-lived Facebook Login user token (what
 * the connect flow got before reading the Pages). It is exchanged for a new one at GET
 * /oauth/access_token?grant_type=fb_exchange_token with the app's id and secret, and the Page's own
 * token read with it (GET /{page-id}?fields=access_token): the connection keeps publishing with a
 * Page token, never the user token. An expired or revoked one is refused (code 190): the
 * connection needs reauthorization.
 */
export async function refreshFacebookPageToken(
  api: Caller,
  client: { id: string; secret: string | undefined } | undefined,
  refreshToken: string,
  pageId: string | undefined,
): Promise<RefreshedTokens> {
  if (!client?.secret) throw new RefreshRefused('refreshing a facebook token needs SOCIAL_FACEBOOK_CLIENT_ID and _CLIENT_SECRET');
  if (!pageId) throw new RefreshRefused('the facebook connection names no Page');
  const u = new URL(`${GRAPH_API}/${GRAPH_VERSION}/oauth/access_token`);
  u.search = new URLSearchParams({
    grant_type: 'fb_exchange_token',
    client_id: client.id,
    client_secret: client.secret,
    fb_exchange_token: refreshToken,
  }).toString();
  try {
    const user = tokens((await api.call({ method: 'GET', url: u.href, auth: false })).json, 'facebook');
    const p = new URL(`${GRAPH_API}/${GRAPH_VERSION}/${encodeURIComponent(pageId)}`);
    p.search = new URLSearchParams({ fields: 'access_token', access_token: user.accessToken }).toString();
    const page = (await api.call({ method: 'GET', url: p.href, auth: false })).json;
    if (typeof page?.access_token !== 'string' || !page.access_token)
      throw new RefreshRefused(`facebook gave no Page token for Page ${pageId}; the member may no longer manage it`);
    // A Page token read with a long-lived user token does not expire.
    return { accessToken: page.access_token, refreshToken: user.accessToken };
  } catch (err) {
    throw refused(err);
  }
}

/**
 * A self-refreshing long-lived token (Instagram with Instagram Login: ig_refresh_token at
 * graph.instagram.com; Threads: th_refresh_token at graph.threads.net): GET /refresh_access_token
 * with the long-lived token itself, which the connect flow stores as the refresh token too. Meta
 * refuses one that has expired (or is under 24 hours old): the connection needs reauthorization.
 */
async function refreshLongLived(
  api: Caller,
  platform: string,
  host: string,
  grant: string,
  refreshToken: string,
): Promise<RefreshedTokens> {
  const u = new URL(`${host}/refresh_access_token`);
  u.search = new URLSearchParams({ grant_type: grant, access_token: refreshToken }).toString();
  try {
    return tokens((await api.call({ method: 'GET', url: u.href, auth: false })).json, platform);
  } catch (err) {
    throw refused(err);
  }
}

export const refreshInstagramToken = (api: Caller, refreshToken: string) =>
  refreshLongLived(api, 'instagram', INSTAGRAM_API, 'ig_refresh_token', refreshToken);
export const refreshThreadsToken = (api: Caller, refreshToken: string) =>
  refreshLongLived(api, 'threads', THREADS_API, 'th_refresh_token', refreshToken);
