// Local fakes of X and LinkedIn (node:http on 127.0.0.1) that enforce what the real APIs require
// of us — paths, bearer tokens, versioned headers, required fields, the upload protocol (X: the
// chunked INIT/APPEND/FINALIZE/STATUS with contiguous segments of at most 5 MB; LinkedIn: the
// initializeUpload instructions, one PUT per part with its exact byte range, ETags at finalize) —
// and answer with the real status values and error bodies. Each records what it saw.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface Req {
  method: string;
  path: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
export type Res = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang';

export async function serve(t: Test, handler: (r: Req) => Res | Promise<Res>) {
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url!, 'http://fake');
    let out: Res;
    try {
      out = await handler({ method: req.method!, path: url.pathname, url, headers: req.headers, body: Buffer.concat(chunks) });
    } catch (err) {
      out = { status: 500, body: { error: String(err) } };
    }
    if (out === 'hang') return void hanging.add(res);
    const body = out.body === undefined ? '' : typeof out.body === 'string' ? out.body : JSON.stringify(out.body);
    res.writeHead(out.status, { ...(out.body !== undefined ? { 'content-type': 'application/json' } : {}), ...out.headers });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const r of hanging) r.destroy();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export const formOf = (r: Req) => new URLSearchParams(r.body.toString('utf8'));
export const jsonOf = (r: Req): any => {
  try {
    return JSON.parse(r.body.toString('utf8'));
  } catch {
    return undefined;
  }
};

// ------------------------------------------------------------------------------------------- X

const X_PROBLEM_INVALID = (message: string) => ({
  status: 400,
  body: {
    errors: [{ message }],
    title: 'Invalid Request',
    detail: 'One or more parameters to your request was invalid.',
    type: 'https://api.twitter.com/2/problems/invalid-request',
  },
});
const X_UNAUTHORIZED = { status: 401, body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } };

export interface XUpload {
  id: string;
  mediaType: string;
  totalBytes: number;
  category: string;
  segments: { index: number; bytes: number }[];
  finalized: boolean;
  statusChecks: number;
}

export async function fakeX(t: Test) {
  const state = {
    tokens: new Map<string, string>(), // access token → refresh token it pairs with
    refreshTokens: new Set<string>(),
    uploads: new Map<string, XUpload>(),
    tweets: [] as { id: string; text: string | undefined; mediaIds: string[] }[],
    tweetAttempts: 0,
    /** When each POST /2/tweets arrived (ms epoch). */
    tweetAt: [] as number[],
    refreshes: 0,
    /** Answer the next N tweet posts with 429 (x-rate-limit-reset one second ahead). */
    rateLimitTweets: 0,
    /** Revoke the access token in use once this many APPEND calls succeeded (a token expiring mid-job). */
    expireTokenAfterAppends: -1,
    /** The next tweet post hangs (never answers). */
    hangNextTweet: false,
    seen: [] as string[],
  };
  let seq = 1_800_000_000_000_000_000n;
  const nextId = () => String(++seq);
  let appends = 0;
  const url = await serve(t, (r): Res | Promise<Res> => {
    state.seen.push(`${r.method} ${r.path}`);
    if (r.method === 'POST' && r.path === '/2/oauth2/token') {
      const f = formOf(r);
      if (!/application\/x-www-form-urlencoded/.test(r.headers['content-type'] ?? ''))
        return { status: 400, body: { error: 'invalid_request', error_description: 'Missing required parameter [grant_type].' } };
      if (f.get('grant_type') !== 'refresh_token' || !state.refreshTokens.has(f.get('refresh_token') ?? '')) {
        return { status: 400, body: { error: 'invalid_request', error_description: 'Value passed for the token was invalid.' } };
      }
      state.refreshes++;
      state.refreshTokens.delete(f.get('refresh_token')!); // X rotates refresh tokens
      const access = `x-at-${nextId()}`;
      const refresh = `x-rt-${nextId()}`;
      state.tokens.set(access, refresh);
      state.refreshTokens.add(refresh);
      return {
        status: 200,
        body: {
          token_type: 'bearer',
          expires_in: 7200,
          access_token: access,
          scope: 'tweet.read tweet.write users.read offline.access media.write',
          refresh_token: refresh,
        },
      };
    }
    const auth = /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];
    if (!auth || !state.tokens.has(auth)) return X_UNAUTHORIZED;
    if (r.method === 'POST' && r.path === '/2/media/upload/initialize') {
      const b = jsonOf(r);
      if (!/application\/json/.test(r.headers['content-type'] ?? '') || !b) return X_PROBLEM_INVALID('The request body must be JSON');
      if (typeof b.media_type !== 'string' || !/^(image|video)\//.test(b.media_type)) return X_PROBLEM_INVALID('media_type is required');
      if (!Number.isInteger(b.total_bytes) || b.total_bytes < 1) return X_PROBLEM_INVALID('total_bytes is required');
      if (!['tweet_image', 'tweet_video', 'tweet_gif'].includes(b.media_category)) return X_PROBLEM_INVALID('media_category is invalid');
      const id = nextId();
      state.uploads.set(id, {
        id,
        mediaType: b.media_type,
        totalBytes: b.total_bytes,
        category: b.media_category,
        segments: [],
        finalized: false,
        statusChecks: 0,
      });
      return { status: 200, body: { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } } };
    }
    const append = /^\/2\/media\/upload\/(\d+)\/append$/.exec(r.path);
    if (r.method === 'POST' && append) {
      const u = state.uploads.get(append[1]);
      if (!u) return X_PROBLEM_INVALID('media_id not found');
      if (u.finalized) return X_PROBLEM_INVALID('the upload is finalized');
      if (!/^multipart\/form-data; boundary=/.test(r.headers['content-type'] ?? ''))
        return X_PROBLEM_INVALID('multipart/form-data is required');
      return (async (): Promise<Res> => {
        const form = await new Request('http://fake/', {
          method: 'POST',
          headers: { 'content-type': r.headers['content-type']! },
          body: r.body,
        }).formData();
        const index = Number(form.get('segment_index'));
        const media = form.get('media');
        if (!(media instanceof Blob)) return X_PROBLEM_INVALID('media is required');
        const expected = u.segments.length;
        // Segments in order (a repeat of the last one is allowed: X overwrites a segment sent again).
        if (!Number.isInteger(index) || !(index === expected || index === expected - 1))
          return X_PROBLEM_INVALID(`segment_index ${index} out of order (expected ${expected})`);
        if (media.size > 5 * 1024 * 1024) return X_PROBLEM_INVALID('segment larger than 5 MB');
        if (index === expected - 1) u.segments[index] = { index, bytes: media.size };
        else u.segments.push({ index, bytes: media.size });
        appends++;
        if (appends === state.expireTokenAfterAppends) state.tokens.delete(auth);
        return { status: 200, body: { data: { expires_at: Math.floor(Date.now() / 1000) + 86400 } } };
      })();
    }
    const finalize = /^\/2\/media\/upload\/(\d+)\/finalize$/.exec(r.path);
    if (r.method === 'POST' && finalize) {
      const u = state.uploads.get(finalize[1]);
      if (!u) return X_PROBLEM_INVALID('media_id not found');
      const sum = u.segments.reduce((a, s) => a + s.bytes, 0);
      if (sum !== u.totalBytes) return X_PROBLEM_INVALID(`File size mismatch: got ${sum} of ${u.totalBytes} bytes`);
      u.finalized = true;
      const video = u.category === 'tweet_video';
      return {
        status: 200,
        body: {
          data: {
            id: u.id,
            media_key: `7_${u.id}`,
            size: u.totalBytes,
            expires_after_secs: 86400,
            ...(video ? { processing_info: { state: 'pending', check_after_secs: 1 } } : {}),
          },
        },
      };
    }
    if (r.method === 'GET' && r.path === '/2/media/upload') {
      if (r.url.searchParams.get('command') !== 'STATUS') return X_PROBLEM_INVALID('command must be STATUS');
      const u = state.uploads.get(r.url.searchParams.get('media_id') ?? '');
      if (!u?.finalized) return X_PROBLEM_INVALID('media_id not found');
      u.statusChecks++;
      const info =
        u.statusChecks < 2
          ? { state: 'in_progress', check_after_secs: 1, progress_percent: 50 }
          : { state: 'succeeded', progress_percent: 100 };
      return { status: 200, body: { data: { id: u.id, media_key: `7_${u.id}`, processing_info: info } } };
    }
    if (r.method === 'POST' && r.path === '/2/tweets') {
      state.tweetAttempts++;
      state.tweetAt.push(Date.now());
      if (state.hangNextTweet) {
        state.hangNextTweet = false;
        return 'hang';
      }
      if (state.rateLimitTweets > 0) {
        state.rateLimitTweets--;
        return {
          status: 429,
          headers: {
            'x-rate-limit-limit': '100',
            'x-rate-limit-remaining': '0',
            'x-rate-limit-reset': String(Math.ceil(Date.now() / 1000) + 1),
          },
          body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
        };
      }
      const b = jsonOf(r);
      if (!b) return X_PROBLEM_INVALID('The request body must be JSON');
      const ids: string[] = b.media?.media_ids ?? [];
      if (typeof b.text !== 'string' && !ids.length) return X_PROBLEM_INVALID('text or media is required');
      if (typeof b.text === 'string' && [...b.text].length > 280)
        return {
          status: 403,
          body: {
            detail: 'You are not allowed to create a Tweet with more than 280 characters',
            type: 'about:blank',
            title: 'Forbidden',
            status: 403,
          },
        };
      if (ids.length > 4) return X_PROBLEM_INVALID('at most 4 media_ids');
      for (const id of ids) {
        const u = state.uploads.get(id);
        if (!u?.finalized || (u.category === 'tweet_video' && u.statusChecks < 2))
          return X_PROBLEM_INVALID(`Your media IDs are invalid: ${id}`);
      }
      const id = nextId();
      state.tweets.push({ id, text: b.text, mediaIds: ids });
      return { status: 201, body: { data: { id, text: b.text ?? '', edit_history_tweet_ids: [id] } } };
    }
    return {
      status: 404,
      body: {
        title: 'Not Found Error',
        detail: `no route ${r.method} ${r.path}`,
        type: 'https://api.twitter.com/2/problems/resource-not-found',
        status: 404,
      },
    };
  });
  const grant = () => {
    const access = `x-at-${nextId()}`;
    const refresh = `x-rt-${nextId()}`;
    state.tokens.set(access, refresh);
    state.refreshTokens.add(refresh);
    return { access, refresh };
  };
  return { url, state, grant };
}

// ------------------------------------------------------------------------------------ LinkedIn

export async function fakeLinkedIn(t: Test) {
  const state = {
    tokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    images: new Map<string, { owner: string; bytes: number; uploaded: boolean }>(),
    videos: new Map<
      string,
      {
        owner: string;
        size: number;
        parts: { first: number; last: number; etag: string; done: boolean }[];
        finalized: boolean;
        checks: number;
      }
    >(),
    posts: [] as { urn: string; body: any }[],
    postAttempts: 0,
    /** When each POST /rest/posts arrived (ms epoch). */
    postAt: [] as number[],
    refreshes: 0,
    /** Answer the next N post creations with 429 and Retry-After: 1. */
    rateLimitPosts: 0,
    seen: [] as string[],
  };
  let n = 1000;
  const PART = 4 * 1024 * 1024;
  const err = (status: number, code: string, message: string, serviceErrorCode?: number) => ({
    status,
    body: { status, ...(serviceErrorCode ? { serviceErrorCode } : {}), code, message },
  });
  const url = await serve(t, (r): Res => {
    state.seen.push(`${r.method} ${r.path}${r.url.search}`);
    if (r.method === 'POST' && r.path === '/oauth/v2/accessToken') {
      const f = formOf(r);
      if (
        f.get('grant_type') !== 'refresh_token' ||
        !state.refreshTokens.has(f.get('refresh_token') ?? '') ||
        f.get('client_id') !== 'li-client' ||
        f.get('client_secret') !== 'li-secret'
      ) {
        return {
          status: 400,
          body: {
            error: 'invalid_grant',
            error_description: 'The provided authorization grant or refresh token is invalid, expired or revoked',
          },
        };
      }
      state.refreshes++;
      const access = `li-at-${++n}`;
      state.tokens.add(access);
      return {
        status: 200,
        body: {
          access_token: access,
          expires_in: 5183999,
          refresh_token: f.get('refresh_token'),
          refresh_token_expires_in: 31535999,
          scope: 'w_member_social',
        },
      };
    }
    const auth = /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];
    if (!auth || !state.tokens.has(auth)) return err(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', 65601);
    if (r.path.startsWith('/dms-uploads/')) {
      if (r.method !== 'PUT') return err(405, 'METHOD_NOT_ALLOWED', 'PUT only');
      const image = [...state.images.entries()].find(([urn]) => r.path === `/dms-uploads/image/${encodeURIComponent(urn)}`);
      if (image) {
        if (r.body.length !== image[1].bytes && image[1].bytes !== -1) return err(400, 'BAD_REQUEST', 'size mismatch');
        image[1].bytes = r.body.length;
        image[1].uploaded = true;
        return { status: 201 };
      }
      const m = /^\/dms-uploads\/video\/([^/]+)\/part\/(\d+)$/.exec(r.path);
      const v = m && state.videos.get(decodeURIComponent(m[1]));
      const part = v?.parts[Number(m![2])];
      if (!part) return err(404, 'NOT_FOUND', 'no such upload');
      if (r.body.length !== part.last - part.first + 1)
        return err(400, 'BAD_REQUEST', `part ${m![2]} must be ${part.last - part.first + 1} bytes, got ${r.body.length}`);
      part.done = true;
      return { status: 200, headers: { etag: part.etag } };
    }
    if (!r.path.startsWith('/rest/')) return err(404, 'NOT_FOUND', `no route ${r.path}`);
    const version = r.headers['linkedin-version'];
    if (!version)
      return err(400, 'VERSION_MISSING', 'A version must be present. Please specify a version by adding the LinkedIn-Version header.');
    if (!/^20\d{4}$/.test(String(version))) return err(426, 'NONEXISTENT_VERSION', `Requested version ${version} is not active`);
    if (r.headers['x-restli-protocol-version'] !== '2.0.0') return err(400, 'BAD_REQUEST', 'X-Restli-Protocol-Version 2.0.0 is required');
    const b = jsonOf(r);
    if (r.method === 'POST' && r.path === '/rest/images' && r.url.searchParams.get('action') === 'initializeUpload') {
      const owner = b?.initializeUploadRequest?.owner;
      if (!/^urn:li:(person|organization):/.test(owner ?? ''))
        return err(422, 'UNPROCESSABLE_ENTITY', '/initializeUploadRequest/owner :: field is required');
      const urn = `urn:li:image:C4E10AQ${++n}`;
      state.images.set(urn, { owner, bytes: -1, uploaded: false });
      return {
        status: 200,
        body: {
          value: {
            uploadUrlExpiresAt: Date.now() + 86400_000,
            uploadUrl: `https://www.linkedin.com/dms-uploads/image/${encodeURIComponent(urn)}`,
            image: urn,
          },
        },
      };
    }
    if (r.method === 'POST' && r.path === '/rest/videos' && r.url.searchParams.get('action') === 'initializeUpload') {
      const q = b?.initializeUploadRequest;
      if (!/^urn:li:(person|organization):/.test(q?.owner ?? '') || !Number.isInteger(q?.fileSizeBytes))
        return err(422, 'UNPROCESSABLE_ENTITY', '/initializeUploadRequest :: owner and fileSizeBytes are required');
      const urn = `urn:li:video:D4E10AQ${++n}`;
      const parts = [];
      for (let first = 0, i = 0; first < q.fileSizeBytes; first += PART, i++)
        parts.push({ first, last: Math.min(first + PART, q.fileSizeBytes) - 1, etag: `/ambry-video/signedId/${urn}/${i}`, done: false });
      state.videos.set(urn, { owner: q.owner, size: q.fileSizeBytes, parts, finalized: false, checks: 0 });
      return {
        status: 200,
        body: {
          value: {
            uploadUrlsExpireAt: Date.now() + 86400_000,
            video: urn,
            uploadInstructions: parts.map((p, i) => ({
              uploadUrl: `https://www.linkedin.com/dms-uploads/video/${encodeURIComponent(urn)}/part/${i}`,
              firstByte: p.first,
              lastByte: p.last,
            })),
            uploadToken: '',
          },
        },
      };
    }
    if (r.method === 'POST' && r.path === '/rest/videos' && r.url.searchParams.get('action') === 'finalizeUpload') {
      const q = b?.finalizeUploadRequest;
      const v = state.videos.get(q?.video ?? '');
      if (!v) return err(404, 'NOT_FOUND', 'video not found');
      if (JSON.stringify(q.uploadedPartIds) !== JSON.stringify(v.parts.map((p) => p.etag)) || v.parts.some((p) => !p.done))
        return err(400, 'BAD_REQUEST', 'uploadedPartIds do not match the uploaded parts');
      v.finalized = true;
      return { status: 200 };
    }
    const getVideo = /^\/rest\/videos\/(.+)$/.exec(r.path);
    if (r.method === 'GET' && getVideo) {
      const v = state.videos.get(decodeURIComponent(getVideo[1]));
      if (!v) return err(404, 'NOT_FOUND', 'video not found');
      v.checks++;
      return {
        status: 200,
        body: {
          id: decodeURIComponent(getVideo[1]),
          owner: v.owner,
          status: !v.finalized ? 'WAITING_UPLOAD' : v.checks < 2 ? 'PROCESSING' : 'AVAILABLE',
        },
      };
    }
    if (r.method === 'POST' && r.path === '/rest/posts') {
      state.postAttempts++;
      state.postAt.push(Date.now());
      if (state.rateLimitPosts > 0) {
        state.rateLimitPosts--;
        return {
          status: 429,
          headers: { 'retry-after': '1' },
          body: { status: 429, message: 'Resource level throttle limit for calls to this resource is reached.' },
        };
      }
      for (const f of ['author', 'commentary', 'visibility', 'distribution', 'lifecycleState'])
        if (b?.[f] === undefined) return err(422, 'UNPROCESSABLE_ENTITY', `/${f} :: field is required`);
      if (b.distribution.feedDistribution !== 'MAIN_FEED')
        return err(422, 'UNPROCESSABLE_ENTITY', '/distribution/feedDistribution :: invalid');
      const ids: string[] = b.content?.media
        ? [b.content.media.id]
        : (b.content?.multiImage?.images ?? []).map((i: { id: string }) => i.id);
      for (const id of ids) {
        const ok = id.startsWith('urn:li:image:') ? state.images.get(id)?.uploaded : state.videos.get(id)?.finalized;
        if (!ok) return err(400, 'BAD_REQUEST', `Media ${id} is not ready`);
      }
      const urn = `urn:li:share:7${++n}`;
      state.posts.push({ urn, body: b });
      return { status: 201, headers: { 'x-restli-id': urn } };
    }
    return err(404, 'NOT_FOUND', `no route ${r.method} ${r.path}`);
  });
  const grant = () => {
    const access = `li-at-${++n}`;
    const refresh = `li-rt-${++n}`;
    state.tokens.add(access);
    state.refreshTokens.add(refresh);
    return { access, refresh };
  };
  return { url, state, grant };
}
