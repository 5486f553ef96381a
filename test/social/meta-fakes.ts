// A local fake of Meta's Graph APIs — graph.facebook.com (Facebook Pages, Facebook Login) and
// graph.threads.net (Threads, under /v1.0) on one server, and on another the hosts of the Instagram
// API with Instagram Login (graph.instagram.com: content publishing, ig_refresh_token, /me; and
// api.instagram.com/oauth/access_token, the code exchange), so SOCIAL_API_BASE_INSTAGRAM must name
// the Instagram server and SOCIAL_API_BASE_FACEBOOK the other — enforcing what the real ones
// require of us: Instagram User tokens (IGAA…) on graph.instagram.com only and Facebook tokens on
// graph.facebook.com only, Page tokens (not user tokens) for posting to a Page, the `access_token`
// parameter, form-encoded POSTs, the node paths, required fields,
// media fetched from the URL we give (its bytes recorded), containers processed asynchronously
// (IN_PROGRESS, then FINISHED; publishing an unfinished or used container refused) — and answering
// with the real status values and Graph error bodies ({"error": {message, type, code,
// error_subcode, fbtrace_id}}; code 190 for an expired token, code 4 for a rate limit).
import type { Test } from 'tap';
import { formOf, serve, type Req, type Res } from './fakes.ts';

type Answer = { status: number; headers?: Record<string, string>; body: unknown };
const graphErr = (code: number, message: string, subcode?: number, extra: Record<string, unknown> = {}): Answer => ({
  status: 400,
  body: {
    error: {
      message,
      type: code === 190 ? 'OAuthException' : code === 100 ? 'OAuthException' : 'GraphMethodException',
      code,
      ...(subcode ? { error_subcode: subcode } : {}),
      ...extra,
      fbtrace_id: 'AbCdEfGhIjK',
    },
  },
});
const EXPIRED = graphErr(190, 'Error validating access token: Session has expired on Monday, 23-Nov-26 01:00:00 PST.', 463);
const NO_TOKEN = graphErr(2500, 'An active access token must be used to query information about the current user.');
const UNPARSABLE = graphErr(190, 'Invalid OAuth access token - Cannot parse access token');
const NOT_PAGE_TOKEN = graphErr(
  200,
  '(#200) If posting to a page, requires both pages_read_engagement and pages_manage_posts as an admin with sufficient administrative permission',
);
/** Instagram User access tokens (Instagram Login) start with IGAA; Facebook Login tokens with EAA. */
const IG_TOKEN = /^IGAA/;
// Meta answers a rate limit with HTTP 400 and the code; X-Business-Use-Case-Usage says in how many minutes access returns.
const RATE_LIMITED = (code: number): Answer => ({
  ...graphErr(
    code,
    code === 4
      ? '(#4) Application request limit reached'
      : code === 32
        ? '(#32) Page request limit reached'
        : '(#613) Calls within one hour have exceeded the rate limit',
    undefined,
    { is_transient: true },
  ),
  headers: {
    'x-business-use-case-usage': JSON.stringify({
      '1234567890': [{ type: 'instagram', call_count: 100, total_cputime: 30, total_time: 40, estimated_time_to_regain_access: 0 }],
    }),
  },
});

export interface Container {
  id: string;
  platform: 'instagram' | 'threads';
  user: string;
  fields: Record<string, string>;
  /** Bytes fetched from image_url / video_url. */
  fetched: { url: string; bytes: number; contentType: string | null } | null;
  status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';
  checks: number;
}

export async function fakeMeta(t: Test) {
  const state = {
    tokens: new Set<string>(),
    /** Long-lived tokens accepted by fb_exchange_token / th_refresh_token / ig_refresh_token. */
    longLived: new Set<string>(),
    /** Facebook user tokens (from fb_exchange_token): they read Page tokens, they cannot post to a Page. */
    userTokens: new Set<string>(),
    /** Instagram Login: authorization codes the code exchange accepts, and the IG user each belongs to. */
    igCodes: new Map<string, { user: string; username: string; redirectUri: string }>(),
    igUsers: new Set<string>(),
    pages: new Set<string>(),
    threadsUsers: new Set<string>(),
    containers: new Map<string, Container>(),
    /** Published media / posts, by id. */
    posts: new Map<
      string,
      {
        platform: 'instagram' | 'facebook' | 'threads';
        owner: string;
        container?: string;
        fields: Record<string, string>;
        photos?: string[];
      }
    >(),
    photos: new Map<string, { page: string; published: boolean; bytes: number }>(),
    publishAttempts: 0,
    /** Each publish attempt: the node it published on and when it arrived (ms epoch). */
    publishAt: [] as { node: string; at: number }[],
    refreshes: 0,
    /** Answer the next N publish calls (media_publish, threads_publish, /feed, /videos) with a rate-limit error. */
    rateLimitPublishes: 0,
    /** Revoke the token in use once a container has been created (a token expiring mid-job). */
    expireTokenAfterContainer: false,
    /** The next media_publish / threads_publish hangs without publishing. */
    hangNextPublish: false,
    /** The next media_publish / threads_publish publishes, then hangs (the answer lost). */
    loseNextPublishAnswer: false,
    /** The next video container ends in ERROR with this error_message (Threads) / status (Instagram). */
    failNextVideo: '',
    seen: [] as string[],
  };
  let n = 17_900_000_000_000_000n;
  const nextId = () => String(++n);

  const fetchMedia = async (url: string | null) => {
    if (!url || !/^https?:\/\//.test(url)) return undefined;
    const res = await fetch(url).catch(() => undefined);
    if (!res?.ok) return undefined;
    return { url, bytes: (await res.arrayBuffer()).byteLength, contentType: res.headers.get('content-type') };
  };

  /** Instagram with Instagram Login: the code exchange, the 60-day token, /me and its refresh (graph.instagram.com, api.instagram.com). */
  const instagramLogin = (r: Req): Res | undefined => {
    const q = r.url.searchParams;
    if (r.method === 'POST' && r.path === '/oauth/access_token') {
      const f = formOf(r);
      if (!/^application\/x-www-form-urlencoded/.test(r.headers['content-type'] ?? ''))
        return { status: 400, body: { error_type: 'OAuthException', code: 400, error_message: 'Missing required parameter client_id' } };
      if (f.get('client_id') !== 'ig-app' || f.get('client_secret') !== 'ig-secret')
        return { status: 400, body: { error_type: 'OAuthException', code: 400, error_message: 'Invalid platform app' } };
      const c = state.igCodes.get(f.get('code') ?? '');
      if (f.get('grant_type') !== 'authorization_code' || !c || c.redirectUri !== f.get('redirect_uri'))
        return {
          status: 400,
          body: {
            error_type: 'OAuthException',
            code: 400,
            error_message:
              'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
          },
        };
      state.igCodes.delete(f.get('code')!);
      const short = `IGAAshort-${nextId()}`;
      state.tokens.add(short);
      shortOf.set(short, c);
      return {
        status: 200,
        body: {
          data: [{ access_token: short, user_id: c.user, permissions: 'instagram_business_basic,instagram_business_content_publish' }],
        },
      };
    }
    if (r.method === 'GET' && r.path === '/access_token') {
      const c = shortOf.get(q.get('access_token') ?? '');
      if (q.get('grant_type') !== 'ig_exchange_token' || q.get('client_secret') !== 'ig-secret' || !c)
        return graphErr(190, 'Invalid OAuth access token');
      const long = `IGAA-${nextId()}`;
      state.tokens.add(long);
      state.longLived.add(long);
      longOf.set(long, c);
      return { status: 200, body: { access_token: long, token_type: 'bearer', expires_in: 5183944 } };
    }
    if (r.method === 'GET' && /^\/v2\d\.0\/me$/.test(r.path)) {
      const c = longOf.get(q.get('access_token') ?? '') ?? shortOf.get(q.get('access_token') ?? '');
      if (!c) return graphErr(190, 'Invalid OAuth access token');
      return { status: 200, body: { user_id: c.user, username: c.username, name: 'Brand Gram', id: `app-scoped-${c.user}` } };
    }
    if (r.method === 'GET' && r.path === '/refresh_access_token') {
      if (q.get('grant_type') !== 'ig_refresh_token') return graphErr(100, 'Invalid grant_type');
      const old = q.get('access_token') ?? '';
      if (!state.longLived.has(old) || !IG_TOKEN.test(old)) return EXPIRED;
      state.refreshes++;
      const token = `IGAA-${nextId()}`;
      state.tokens.add(token);
      state.longLived.add(token);
      if (longOf.has(old)) longOf.set(token, longOf.get(old)!);
      return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: 5183944 } };
    }
    return undefined;
  };
  const shortOf = new Map<string, { user: string; username: string }>();
  const longOf = new Map<string, { user: string; username: string }>();

  const handler =
    (host: 'facebook' | 'instagram') =>
    async (r: Req): Promise<Res> => {
      state.seen.push(`${host} ${r.method} ${r.path}`);
      if (host === 'instagram') {
        const login = instagramLogin(r);
        if (login) return login;
      }
      const threadsHost = host === 'facebook' && (r.path.startsWith('/v1.0/') || r.path === '/refresh_access_token');
      // Token exchange / refresh (no token of the connection; the app's credentials or the long-lived token).
      if (host === 'facebook' && r.method === 'GET' && /^\/v\d+\.\d+\/oauth\/access_token$/.test(r.path)) {
        const q = r.url.searchParams;
        if (q.get('grant_type') !== 'fb_exchange_token' || q.get('client_id') !== 'meta-app' || q.get('client_secret') !== 'meta-secret')
          return graphErr(101, 'Error validating application. Invalid application ID.');
        if (!state.longLived.has(q.get('fb_exchange_token') ?? '')) return EXPIRED;
        state.refreshes++;
        const token = `EAAG-${nextId()}`;
        state.tokens.add(token);
        state.longLived.add(token);
        state.userTokens.add(token);
        return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: 5183944 } };
      }
      if (threadsHost && r.method === 'GET' && r.path === '/refresh_access_token') {
        const q = r.url.searchParams;
        if (q.get('grant_type') !== 'th_refresh_token') return graphErr(100, 'Invalid grant_type');
        if (!state.longLived.has(q.get('access_token') ?? '')) return EXPIRED;
        state.refreshes++;
        const token = `THQW-${nextId()}`;
        state.tokens.add(token);
        state.longLived.add(token);
        return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: 5183944 } };
      }
      const form = r.method === 'POST' ? formOf(r) : new URLSearchParams();
      if (r.method === 'POST' && !/^application\/x-www-form-urlencoded/.test(r.headers['content-type'] ?? ''))
        return graphErr(100, '(#100) The request body must be form-encoded');
      const token = r.url.searchParams.get('access_token') ?? form.get('access_token');
      if (!token) return NO_TOKEN;
      // graph.instagram.com takes Instagram User tokens only; graph.facebook.com and graph.threads.net never do.
      if ((host === 'instagram') !== IG_TOKEN.test(token)) return UNPARSABLE;
      if (!state.tokens.has(token)) return EXPIRED;
      const m = /^\/(v\d+\.\d+)\/([^/]+)(?:\/([a-z_]+))?$/.exec(r.path);
      if (!m || (threadsHost && m[1] !== 'v1.0') || (!threadsHost && !/^v2\d\.0$/.test(m[1])))
        return graphErr(100, `Unknown path components: ${r.path}`);
      const [, , node, edge] = m;
      const f = Object.fromEntries(form);
      const created = (id: string): Res => {
        if (state.expireTokenAfterContainer) {
          state.expireTokenAfterContainer = false;
          state.tokens.delete(token);
        }
        return { status: 200, body: { id } };
      };
      const publishGate = (): Res | 'hang' | undefined => {
        state.publishAttempts++;
        state.publishAt.push({ node, at: Date.now() });
        if (state.rateLimitPublishes > 0) {
          state.rateLimitPublishes--;
          return RATE_LIMITED(threadsHost ? 613 : state.pages.has(node) ? 32 : 4);
        }
        if (state.hangNextPublish) {
          state.hangNextPublish = false;
          return 'hang';
        }
        return undefined;
      };

      // ------------------------------------------------------------- containers (Instagram, Threads)
      if (r.method === 'POST' && edge === (threadsHost ? 'threads' : 'media') && (threadsHost || host === 'instagram')) {
        const platform = threadsHost ? 'threads' : 'instagram';
        if (!(threadsHost ? state.threadsUsers : state.igUsers).has(node))
          return graphErr(100, `Unsupported post request. Object with ID '${node}' does not exist`, 33);
        const type = f.media_type ?? (threadsHost ? undefined : f.image_url ? 'IMAGE' : undefined);
        const item = f.is_carousel_item === 'true';
        let fetched: Container['fetched'] = null;
        if (threadsHost && !['IMAGE', 'VIDEO', 'TEXT', 'CAROUSEL'].includes(type ?? ''))
          return graphErr(100, 'The parameter media_type is required.');
        if (!threadsHost && !['IMAGE', 'VIDEO', 'REELS', 'STORIES', 'CAROUSEL'].includes(type ?? ''))
          return graphErr(100, 'The parameter image_url is required.');
        if (!threadsHost && type === 'VIDEO' && !item)
          return graphErr(100, 'The VIDEO media_type is no longer supported. Please use the REELS media_type to publish videos.', 2207067);
        const caption = threadsHost ? f.text : f.caption;
        if (caption && [...caption].length > (threadsHost ? 500 : 2200)) return graphErr(100, 'The caption is too long', 2207010);
        if (item && caption) return graphErr(100, 'Carousel items cannot have a caption');
        if (type === 'TEXT' && !f.text) return graphErr(100, 'The parameter text is required.');
        if (type === 'CAROUSEL') {
          const kids = (f.children ?? '').split(',').filter(Boolean);
          if (kids.length < 2 || kids.length > (threadsHost ? 20 : 10))
            return graphErr(100, `The parameter children must have 2 to ${threadsHost ? 20 : 10} items`);
          for (const k of kids) {
            const c = state.containers.get(k);
            if (!c || c.user !== node || c.fields.is_carousel_item !== 'true') return graphErr(100, `Invalid children: ${k}`);
            if (c.status !== 'FINISHED') return graphErr(9007, 'Media ID is not available', 2207027);
          }
        } else if (type !== 'TEXT') {
          const video = type === 'VIDEO' || type === 'REELS' || (type === 'STORIES' && !!f.video_url);
          const url = video ? f.video_url : f.image_url;
          if (!url) return graphErr(100, `The parameter ${video ? 'video_url' : 'image_url'} is required.`);
          fetched = (await fetchMedia(url)) ?? null;
          if (!fetched) return graphErr(9004, "Media download has failed. The media URI doesn't meet our requirements.", 2207052);
          if (!video && !threadsHost && fetched.contentType !== 'image/jpeg')
            return graphErr(9004, 'Only photo or video can be accepted as media type.', 2207026);
        }
        const id = nextId();
        const isVideo = type === 'VIDEO' || type === 'REELS' || (type === 'STORIES' && !!f.video_url);
        state.containers.set(id, { id, platform, user: node, fields: f, fetched, status: isVideo ? 'IN_PROGRESS' : 'FINISHED', checks: 0 });
        return created(id);
      }
      const container = state.containers.get(node);
      if (r.method === 'GET' && container && !edge && (container.platform === 'instagram') === (host === 'instagram')) {
        const field = threadsHost ? 'status' : 'status_code';
        if (!(r.url.searchParams.get('fields') ?? '').split(',').includes(field)) return { status: 200, body: { id: node } };
        container.checks++;
        if (container.status === 'IN_PROGRESS' && container.checks >= 2) {
          container.status = state.failNextVideo ? 'ERROR' : 'FINISHED';
          if (state.failNextVideo) container.fields.__error = state.failNextVideo;
          state.failNextVideo = '';
        }
        const err = container.status === 'ERROR' ? container.fields.__error : undefined;
        return {
          status: 200,
          body: threadsHost
            ? { status: container.status, id: node, ...(err ? { error_message: err } : {}) }
            : { status_code: container.status, id: node, ...(err ? { status: `Error: ${err}` } : {}) },
        };
      }
      if (r.method === 'POST' && edge === (threadsHost ? 'threads_publish' : 'media_publish') && (threadsHost || host === 'instagram')) {
        const c = state.containers.get(f.creation_id ?? '');
        if (!f.creation_id) return graphErr(100, 'The parameter creation_id is required.');
        if (!c || c.user !== node || c.fields.is_carousel_item === 'true')
          return graphErr(100, `Invalid parameter creation_id ${f.creation_id}`, 2207001);
        if (c.status === 'PUBLISHED') return graphErr(100, 'The media has already been published', 2207008);
        if (c.status !== 'FINISHED')
          return graphErr(9007, 'Media ID is not available', 2207027, {
            error_user_title: 'Media not ready for publishing',
            error_user_msg: 'The media is not ready for publishing, please wait for a moment',
          });
        const gate = publishGate();
        if (gate) return gate;
        c.status = 'PUBLISHED';
        const id = nextId();
        state.posts.set(id, { platform: c.platform, owner: node, container: c.id, fields: c.fields });
        if (state.loseNextPublishAnswer) {
          state.loseNextPublishAnswer = false;
          return 'hang';
        }
        return { status: 200, body: { id } };
      }

      // ------------------------------------------------------------------------ Facebook Pages
      if (
        host === 'facebook' &&
        !threadsHost &&
        r.method === 'GET' &&
        !edge &&
        state.pages.has(node) &&
        r.url.searchParams.get('fields') === 'access_token'
      ) {
        // A Page's token, read with a user token of someone who manages it.
        if (!state.userTokens.has(token))
          return graphErr(100, '(#100) Tried accessing nonexisting field (access_token) on node type (Page)');
        const pageToken = `EAAGpage-${nextId()}`;
        state.tokens.add(pageToken);
        return { status: 200, body: { access_token: pageToken, id: node } };
      }
      if (host === 'facebook' && !threadsHost && r.method === 'POST' && edge && ['photos', 'videos', 'feed'].includes(edge)) {
        if (!state.pages.has(node)) return graphErr(100, `Unsupported post request. Object with ID '${node}' does not exist`, 33);
        if (state.userTokens.has(token)) return NOT_PAGE_TOKEN;
        if (edge === 'photos') {
          if (!f.url) return graphErr(324, '(#324) Requires upload file');
          const got = await fetchMedia(f.url);
          if (!got) return graphErr(324, '(#324) Missing or invalid image file');
          const id = nextId();
          const published = f.published !== 'false';
          state.photos.set(id, { page: node, published, bytes: got.bytes });
          if (published) {
            state.posts.set(`${node}_${id}`, { platform: 'facebook', owner: node, fields: f, photos: [id] });
            return { status: 200, body: { id, post_id: `${node}_${id}` } };
          }
          return { status: 200, body: { id } };
        }
        const gate = publishGate();
        if (gate) return gate;
        if (edge === 'videos') {
          if (!f.file_url) return graphErr(100, '(#100) Invalid parameter: file_url or source is required');
          const got = await fetchMedia(f.file_url);
          if (!got) return graphErr(389, 'Unable to fetch video file from URL.');
          const id = nextId();
          state.posts.set(id, { platform: 'facebook', owner: node, fields: { ...f, bytes: String(got.bytes) } });
          return { status: 200, body: { id } };
        }
        const photos: string[] = [];
        for (let i = 0; form.has(`attached_media[${i}]`); i++) {
          let fbid: string | undefined;
          try {
            fbid = JSON.parse(form.get(`attached_media[${i}]`)!).media_fbid;
          } catch {}
          const p = state.photos.get(fbid ?? '');
          if (!p || p.page !== node || p.published) return graphErr(100, `(#100) attached_media[${i}] is not a valid unpublished photo`);
          photos.push(fbid!);
        }
        if (!f.message && !photos.length) return graphErr(100, '(#100) The post is empty');
        for (const id of photos) state.photos.get(id)!.published = true;
        const id = `${node}_${nextId()}`;
        state.posts.set(id, { platform: 'facebook', owner: node, fields: f, photos });
        return { status: 200, body: { id } };
      }

      // ----------------------------------------------------------------------------- permalinks
      const post = state.posts.get(node);
      if (r.method === 'GET' && post && !edge && (post.platform === 'instagram') === (host === 'instagram')) {
        const fields = r.url.searchParams.get('fields') ?? '';
        if (post.platform === 'facebook') {
          if (fields !== 'permalink_url') return { status: 200, body: { id: node } };
          return {
            status: 200,
            body: {
              permalink_url: node.includes('_')
                ? `https://www.facebook.com/${post.owner}/posts/${node.split('_')[1]}`
                : `/${post.owner}/videos/${node}/`,
              id: node,
            },
          };
        }
        if (fields !== 'permalink') return { status: 200, body: { id: node } };
        return {
          status: 200,
          body: {
            permalink:
              post.platform === 'threads'
                ? `https://www.threads.net/@brand/post/T${node.slice(-8)}`
                : `https://www.instagram.com/p/C${node.slice(-8)}/`,
            id: node,
          },
        };
      }
      return graphErr(
        100,
        `Unsupported ${r.method.toLowerCase()} request. Object with ID '${node}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        33,
      );
    };
  const url = await serve(t, handler('facebook'));
  const igUrl = await serve(t, handler('instagram'));
  /** A connection's tokens: the access token and the long-lived token its refresh exchanges. */
  const grant = (prefix = 'EAAG') => {
    const access = `${prefix}-${nextId()}`;
    const refresh = `${prefix}-LL-${nextId()}`;
    state.tokens.add(access);
    state.longLived.add(refresh);
    return { access, refresh };
  };
  /** An Instagram Login authorization code for this IG user, as the authorize page would send back to redirectUri. */
  const igCode = (user: string, username: string, redirectUri: string) => {
    const code = `AQD${nextId()}`;
    state.igCodes.set(code, { user, username, redirectUri });
    return code;
  };
  return { url, igUrl, state, grant, nextId, igCode };
}
