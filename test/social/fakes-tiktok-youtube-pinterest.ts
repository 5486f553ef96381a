// Local fakes of TikTok's Content Posting API, YouTube's resumable upload and Pinterest v5 that
// enforce what the real APIs require of us — paths, bearer tokens (none on the upload hosts that
// carry their own credentials), required fields, the upload protocols (TikTok: chunk_size within
// 5–64 MB, total_chunk_count = floor(size / chunk_size), each chunk PUT in order with its exact
// Content-Range; YouTube: chunks of 256 KiB multiples at the offset the session holds, `bytes */N`
// status queries answered 308 + Range; Pinterest: the S3 form with every upload parameter and the
// file last) — and answer with their real status values and error bodies, 429s included. Each
// records what it saw.
import type { Test } from 'tap';
import { formOf, jsonOf, serve, type Req, type Res } from './fakes.ts';

const MB = 1024 * 1024;
const bearer = (r: Req) => /^Bearer (.+)$/.exec(r.headers.authorization ?? '')?.[1];
const runes = (s: string) => [...s].length;

/** Reads a multipart body in the order its fields came. */
async function formEntries(r: Req): Promise<[string, string | File][]> {
  const form = await new Request('http://fake/', {
    method: 'POST',
    headers: { 'content-type': r.headers['content-type'] ?? '' },
    body: r.body,
  }).formData();
  return [...form.entries()];
}

/** Fetches what a platform pulls from our signed URLs. */
async function pull(url: string): Promise<{ ok: boolean; type: string; bytes: number }> {
  try {
    const res = await fetch(url);
    const buf = Buffer.from(await res.arrayBuffer());
    return { ok: res.ok, type: res.headers.get('content-type') ?? '', bytes: buf.length };
  } catch {
    return { ok: false, type: '', bytes: 0 };
  }
}

// -------------------------------------------------------------------------------------- TikTok

interface TikTokPublish {
  id: string;
  kind: 'video' | 'photo';
  postInfo: any;
  size: number;
  chunkSize: number;
  chunkCount: number;
  /** Chunks received: [first, last] byte of each, in order. */
  chunks: [number, number][];
  uploadId: string;
  /** Photos: what was pulled from our URLs. */
  pulled?: Promise<{ ok: boolean; type: string; bytes: number }[]>;
  checks: number;
  postId?: string;
}

export async function fakeTikTok(t: Test) {
  const state = {
    tokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    privacyOptions: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'],
    publishes: new Map<string, TikTokPublish>(),
    /** Posts that reached PUBLISH_COMPLETE. */
    posts: [] as TikTokPublish[],
    inits: 0,
    /** When each video init arrived (ms epoch). */
    initAt: [] as number[],
    refreshes: 0,
    /** Answer the next N video inits with 429 rate_limit_exceeded. */
    rateLimitInits: 0,
    /** Revoke the access token in use when the first status fetch comes (a token expiring mid-job). */
    expireTokenAtStatus: false,
    /** The PUT of this chunk index hangs once (a worker dying mid-upload). */
    hangChunk: -1,
    chunkPuts: 0,
    seen: [] as string[],
  };
  let n = 1000;
  const logId = () => `2026112307${++n}ABCDEF`;
  const err = (status: number, code: string, message: string, headers?: Record<string, string>): Res => ({
    status,
    headers,
    body: { error: { code, message, log_id: logId() } },
  });
  const ok = (data: unknown): Res => ({ status: 200, body: { data, error: { code: 'ok', message: '', log_id: logId() } } });
  const url = await serve(t, async (r): Promise<Res> => {
    state.seen.push(`${r.method} ${r.path}`);
    if (r.method === 'POST' && r.path === '/v2/oauth/token/') {
      const f = formOf(r);
      if (!/application\/x-www-form-urlencoded/.test(r.headers['content-type'] ?? ''))
        return {
          status: 400,
          body: { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded', log_id: logId() },
        };
      if (f.get('client_key') !== 'tt-client' || f.get('client_secret') !== 'tt-secret')
        return { status: 400, body: { error: 'invalid_client', error_description: 'Client key or secret is incorrect.', log_id: logId() } };
      if (f.get('grant_type') !== 'refresh_token' || !state.refreshTokens.has(f.get('refresh_token') ?? '')) {
        return {
          status: 400,
          body: { error: 'invalid_grant', error_description: 'Refresh token is invalid or expired.', log_id: logId() },
        };
      }
      state.refreshes++;
      state.refreshTokens.delete(f.get('refresh_token')!);
      const access = `act.tt${++n}`;
      const refresh = `rft.tt${++n}`;
      state.tokens.add(access);
      state.refreshTokens.add(refresh);
      return {
        status: 200,
        body: {
          access_token: access,
          expires_in: 86400,
          open_id: '_000tt',
          refresh_expires_in: 31536000,
          refresh_token: refresh,
          scope: 'user.info.basic,video.publish',
          token_type: 'Bearer',
        },
      };
    }
    // The upload host: the upload_url's own token, no bearer.
    if (r.method === 'PUT' && r.path === '/video/') {
      const p = [...state.publishes.values()].find((x) => x.uploadId === r.url.searchParams.get('upload_id'));
      if (!p || r.url.searchParams.get('upload_token') !== `tok-${p.uploadId}`) return err(404, 'invalid_params', 'upload_id not found');
      if (!/^video\/(mp4|quicktime|webm)$/.test(r.headers['content-type'] ?? ''))
        return err(400, 'invalid_params', 'Content-Type must be video/mp4, video/quicktime or video/webm');
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(r.headers['content-range'] ?? '');
      if (!m) return err(400, 'invalid_params', 'Content-Range is required');
      const [first, last, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
      const index = first / p.chunkSize;
      const expected = p.chunks.length;
      if (total !== p.size) return err(400, 'invalid_params', `Content-Range total ${total} is not video_size ${p.size}`);
      if (!Number.isInteger(index) || !(index === expected || index === expected - 1))
        return err(400, 'invalid_params', `chunk starting at ${first} out of order (expected chunk ${expected})`);
      const wantLast = index === p.chunkCount - 1 ? p.size - 1 : first + p.chunkSize - 1;
      if (last !== wantLast || r.body.length !== last - first + 1)
        return err(
          400,
          'invalid_params',
          `chunk ${index} must be bytes ${first}-${wantLast}, got ${first}-${last} with ${r.body.length} bytes`,
        );
      state.chunkPuts++;
      if (index === state.hangChunk) {
        state.hangChunk = -1;
        return 'hang';
      }
      p.chunks[index] = [first, last];
      return p.chunks.length === p.chunkCount ? { status: 201 } : { status: 206 };
    }
    if (!r.path.startsWith('/v2/post/publish/')) return err(404, 'invalid_params', `no route ${r.method} ${r.path}`);
    const auth = bearer(r);
    if (!auth || !state.tokens.has(auth))
      return err(401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
    if (r.method !== 'POST' || !/^application\/json/.test(r.headers['content-type'] ?? ''))
      return err(400, 'invalid_params', 'POST with Content-Type application/json is required');
    const b = jsonOf(r) ?? {};
    if (r.path === '/v2/post/publish/creator_info/query/') {
      return ok({
        creator_avatar_url: 'https://p16.tiktokcdn.com/a.jpeg',
        creator_username: 'brand',
        creator_nickname: 'Brand',
        privacy_level_options: state.privacyOptions,
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: true,
        max_video_post_duration_sec: 600,
      });
    }
    const checkPostInfo = (pi: any, photo: boolean): Res | undefined => {
      if (!pi || !state.privacyOptions.includes(pi.privacy_level))
        return err(400, 'privacy_level_option_mismatch', 'privacy_level is not one of the creator\u2019s privacy_level_options');
      if (photo ? runes(pi.title ?? '') > 90 || runes(pi.description ?? '') > 4000 : runes(pi.title ?? '') > 2200)
        return err(400, 'invalid_params', 'title or description too long');
      return undefined;
    };
    if (r.path === '/v2/post/publish/video/init/') {
      state.inits++;
      state.initAt.push(Date.now());
      if (state.rateLimitInits > 0) {
        state.rateLimitInits--;
        return err(429, 'rate_limit_exceeded', 'API rate limit was exceeded, please try again later.', { 'retry-after': '1' });
      }
      const bad = checkPostInfo(b.post_info, false);
      if (bad) return bad;
      const s = b.source_info ?? {};
      if (s.source !== 'FILE_UPLOAD') return err(400, 'invalid_params', 'source_info.source must be FILE_UPLOAD or PULL_FROM_URL');
      const { video_size: size, chunk_size: chunk, total_chunk_count: count } = s;
      if (![size, chunk, count].every((v) => Number.isInteger(v) && v > 0))
        return err(400, 'invalid_params', 'video_size, chunk_size and total_chunk_count are required');
      if (
        size < 5 * MB
          ? chunk !== size || count !== 1
          : chunk < 5 * MB || chunk > 64 * MB || count !== Math.floor(size / chunk) || size - (count - 1) * chunk > 128 * MB
      ) {
        return err(400, 'invalid_params', 'The chunk_size or total_chunk_count is invalid');
      }
      const id = `v_pub_file~v2-1.${++n}`;
      const uploadId = String(++n);
      state.publishes.set(id, {
        id,
        kind: 'video',
        postInfo: b.post_info,
        size,
        chunkSize: chunk,
        chunkCount: count,
        chunks: [],
        uploadId,
        checks: 0,
      });
      return ok({
        publish_id: id,
        upload_url: `https://open-upload.tiktokapis.com/video/?upload_id=${uploadId}&upload_token=tok-${uploadId}`,
      });
    }
    if (r.path === '/v2/post/publish/content/init/') {
      state.inits++;
      if (b.post_mode !== 'DIRECT_POST' || b.media_type !== 'PHOTO')
        return err(400, 'invalid_params', 'post_mode and media_type are required');
      const bad = checkPostInfo(b.post_info, true);
      if (bad) return bad;
      const s = b.source_info ?? {};
      const images: string[] = s.photo_images;
      if (s.source !== 'PULL_FROM_URL' || !Array.isArray(images) || images.length < 1 || images.length > 35)
        return err(400, 'invalid_params', 'source_info.photo_images: 1 to 35 URLs from a verified domain');
      if (!Number.isInteger(s.photo_cover_index) || s.photo_cover_index < 0 || s.photo_cover_index >= images.length)
        return err(400, 'invalid_params', 'photo_cover_index is invalid');
      const id = `p_pub_url~v2.${++n}`;
      state.publishes.set(id, {
        id,
        kind: 'photo',
        postInfo: b.post_info,
        size: 0,
        chunkSize: 0,
        chunkCount: 0,
        chunks: [],
        uploadId: '',
        checks: 0,
        pulled: Promise.all(images.map(pull)),
      });
      return ok({ publish_id: id });
    }
    if (r.path === '/v2/post/publish/status/fetch/') {
      if (state.expireTokenAtStatus) {
        state.expireTokenAtStatus = false;
        state.tokens.delete(auth);
        return err(401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
      }
      const p = state.publishes.get(b.publish_id ?? '');
      if (!p) return err(400, 'invalid_params', 'publish_id is invalid');
      p.checks++;
      let status: string;
      let fail = '';
      if (p.kind === 'video') {
        const uploaded = p.chunks.length === p.chunkCount;
        status = !uploaded || p.checks < 2 ? 'PROCESSING_UPLOAD' : 'PUBLISH_COMPLETE';
      } else {
        const got = await p.pulled!;
        const bad = got.find((g) => !g.ok || !/^image\/(jpeg|webp)$/.test(g.type));
        status = p.checks < 2 ? 'PROCESSING_DOWNLOAD' : bad ? 'FAILED' : 'PUBLISH_COMPLETE';
        if (bad) fail = 'file_format_check_failed';
      }
      if (status === 'PUBLISH_COMPLETE' && !p.postId) {
        p.postId = `7${String(++n).padStart(18, '0')}`;
        state.posts.push(p);
      }
      const publicIds = status === 'PUBLISH_COMPLETE' && p.postInfo.privacy_level === 'PUBLIC_TO_EVERYONE' ? `[${p.postId}]` : '[]';
      // publicaly_available_post_id: TikTok's spelling, int64 numbers (not strings).
      const uploadedBytes = p.chunks.reduce((a, [f, l]) => a + l - f + 1, 0);
      return {
        status: 200,
        body: `{"data":{"status":"${status}","fail_reason":"${fail}","publicaly_available_post_id":${publicIds},"uploaded_bytes":${uploadedBytes}},"error":{"code":"ok","message":"","log_id":"${logId()}"}}`,
      };
    }
    return err(404, 'invalid_params', `no route ${r.method} ${r.path}`);
  });
  const grant = () => {
    const access = `act.tt${++n}`;
    const refresh = `rft.tt${++n}`;
    state.tokens.add(access);
    state.refreshTokens.add(refresh);
    return { access, refresh };
  };
  return { url, state, grant };
}

// ------------------------------------------------------------------------------------- YouTube

interface YouTubeSession {
  id: string;
  length: number;
  type: string;
  meta: any;
  received: number;
  chunks: [number, number][];
  videoId?: string;
}

export async function fakeYouTube(t: Test) {
  const state = {
    tokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    sessions: new Map<string, YouTubeSession>(),
    videos: [] as { id: string; meta: any; bytes: number }[],
    refreshes: 0,
    /** Answer the next N upload starts with 429 rateLimitExceeded (Retry-After: 1). */
    rateLimitStarts: 0,
    /** Revoke the access token in use once this many chunk PUTs were taken (a token expiring mid-upload). */
    expireTokenAfterChunks: -1,
    /** The chunk PUT at this offset hangs once (a worker dying mid-upload). */
    hangAtOffset: -1,
    statusQueries: 0,
    seen: [] as string[],
  };
  let n = 1000;
  let chunkPuts = 0;
  const gErr = (status: number, reason: string, message: string, headers?: Record<string, string>): Res => ({
    status,
    headers,
    body: {
      error: {
        code: status,
        message,
        errors: [{ message, domain: status === 401 ? 'global' : 'youtube.video', reason }],
        ...(status === 401 ? { status: 'UNAUTHENTICATED' } : {}),
      },
    },
  });
  const videoResource = (s: YouTubeSession) => ({
    kind: 'youtube#video',
    etag: `etag${s.videoId}`,
    id: s.videoId,
    snippet: { ...s.meta.snippet, channelId: 'UCbrand' },
    status: { uploadStatus: 'uploaded', privacyStatus: s.meta.status.privacyStatus },
  });
  const url = await serve(t, (r): Res => {
    state.seen.push(`${r.method} ${r.path}`);
    if (r.method === 'POST' && r.path === '/token') {
      const f = formOf(r);
      if (f.get('client_id') !== 'yt-client' || f.get('client_secret') !== 'yt-secret')
        return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
      if (f.get('grant_type') !== 'refresh_token' || !state.refreshTokens.has(f.get('refresh_token') ?? ''))
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
      state.refreshes++;
      const access = `ya29.${++n}`;
      state.tokens.add(access);
      return {
        status: 200,
        body: { access_token: access, expires_in: 3599, scope: 'https://www.googleapis.com/auth/youtube.upload', token_type: 'Bearer' },
      };
    }
    if (r.path !== '/upload/youtube/v3/videos') return gErr(404, 'notFound', `no route ${r.method} ${r.path}`);
    const auth = bearer(r);
    if (!auth || !state.tokens.has(auth))
      return gErr(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    if (r.url.searchParams.get('uploadType') !== 'resumable') return gErr(400, 'badRequest', 'uploadType=resumable is required');
    if (r.method === 'POST') {
      const parts = (r.url.searchParams.get('part') ?? '').split(',');
      if (!parts.includes('snippet') || !parts.includes('status')) return gErr(400, 'unexpectedPart', 'part must name snippet and status');
      if (state.rateLimitStarts > 0) {
        state.rateLimitStarts--;
        return gErr(429, 'rateLimitExceeded', 'The request cannot be completed because you have exceeded your quota.', {
          'retry-after': '1',
        });
      }
      const length = Number(r.headers['x-upload-content-length']);
      const type = String(r.headers['x-upload-content-type'] ?? '');
      if (!Number.isInteger(length) || length < 1 || !type.startsWith('video/'))
        return gErr(400, 'badContent', 'X-Upload-Content-Length and X-Upload-Content-Type (video/*) are required');
      if (!/^application\/json/.test(r.headers['content-type'] ?? '')) return gErr(400, 'parseError', 'The metadata must be JSON');
      const b = jsonOf(r);
      const title = b?.snippet?.title;
      if (typeof title !== 'string' || !title.trim())
        return gErr(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.');
      if (runes(title) > 100 || /[<>]/.test(title))
        return gErr(400, 'invalidTitle', 'The request metadata specifies an invalid video title.');
      if (
        typeof b.snippet.description === 'string' &&
        (Buffer.byteLength(b.snippet.description) > 5000 || /[<>]/.test(b.snippet.description))
      )
        return gErr(400, 'invalidDescription', 'The request metadata specifies an invalid video description.');
      if (!['public', 'unlisted', 'private'].includes(b.status?.privacyStatus))
        return gErr(400, 'invalidVideoMetadata', 'status.privacyStatus is invalid');
      const id = `AEnB2U${++n}`;
      state.sessions.set(id, { id, length, type, meta: b, received: 0, chunks: [] });
      return {
        status: 200,
        headers: {
          location: `https://www.googleapis.com/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status&upload_id=${id}`,
        },
      };
    }
    if (r.method !== 'PUT') return gErr(405, 'methodNotAllowed', 'POST or PUT');
    const s = state.sessions.get(r.url.searchParams.get('upload_id') ?? '');
    if (!s) return gErr(404, 'notFound', 'The upload session was not found.');
    const range = r.headers['content-range'] ?? '';
    const query = /^bytes \*\/(\d+)$/.exec(range);
    if (query) {
      state.statusQueries++;
      if (r.body.length) return gErr(400, 'badRequest', 'a status query has no body');
      if (s.videoId) return { status: 200, body: videoResource(s) };
      return { status: 308, headers: s.received ? { range: `bytes=0-${s.received - 1}` } : {} };
    }
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    if (!m) return gErr(400, 'badRequest', 'Content-Range is required');
    const [first, last, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (total !== s.length) return gErr(400, 'badRequest', `Content-Range total ${total} is not X-Upload-Content-Length ${s.length}`);
    if (first !== s.received) return gErr(400, 'badRequest', `the chunk starts at ${first}; the session holds ${s.received} bytes`);
    if (r.body.length !== last - first + 1) return gErr(400, 'badRequest', 'the body does not match Content-Range');
    if (last + 1 < total && r.body.length % (256 * 1024) !== 0)
      return gErr(400, 'badRequest', 'chunks but the last must be multiples of 256 KiB');
    if (s.type !== r.headers['content-type']) return gErr(400, 'badContent', 'Content-Type differs from X-Upload-Content-Type');
    if (first === state.hangAtOffset) {
      state.hangAtOffset = -1;
      return 'hang';
    }
    s.received = last + 1;
    s.chunks.push([first, last]);
    if (++chunkPuts === state.expireTokenAfterChunks) state.tokens.delete(auth);
    if (s.received < total) return { status: 308, headers: { range: `bytes=0-${last}` } };
    s.videoId = `yt${String(++n).padStart(9, '0')}`;
    state.videos.push({ id: s.videoId, meta: s.meta, bytes: s.received });
    return { status: 201, body: videoResource(s) };
  });
  const grant = () => {
    const access = `ya29.${++n}`;
    const refresh = `1//rt${++n}`;
    state.tokens.add(access);
    state.refreshTokens.add(refresh);
    return { access, refresh };
  };
  return { url, state, grant };
}

// ----------------------------------------------------------------------------------- Pinterest

export async function fakePinterest(t: Test) {
  const state = {
    tokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    boards: new Set(['1234567890']),
    media: new Map<string, { params: Record<string, string>; uploaded: number; checks: number }>(),
    pins: [] as { id: string; body: any; pulled: { ok: boolean; type: string; bytes: number }[] }[],
    pinAttempts: 0,
    refreshes: 0,
    /** Answer the next N pin creations with 429 (Retry-After: 1). */
    rateLimitPins: 0,
    /** Revoke the access token in use at the first media status check. */
    expireTokenAtMediaCheck: false,
    /** The next pin creation hangs (never answers). */
    hangNextPin: false,
    /** S3 refuses the next upload: its signed policy expired. */
    expireNextUpload: false,
    seen: [] as string[],
  };
  let n = 1000;
  const err = (status: number, code: number, message: string, headers?: Record<string, string>): Res => ({
    status,
    headers,
    body: { code, message },
  });
  const url = await serve(t, async (r): Promise<Res> => {
    state.seen.push(`${r.method} ${r.path}`);
    if (r.method === 'POST' && r.path === '/v5/oauth/token') {
      if (r.headers.authorization !== `Basic ${Buffer.from('pin-client:pin-secret').toString('base64')}`)
        return err(401, 2, 'Authentication failed.');
      const f = formOf(r);
      if (f.get('grant_type') !== 'refresh_token' || !state.refreshTokens.has(f.get('refresh_token') ?? ''))
        return err(400, 1, 'Invalid refresh token.');
      state.refreshes++;
      state.refreshTokens.delete(f.get('refresh_token')!);
      const access = `pina_${++n}`;
      const refresh = `pinr_${++n}`;
      state.tokens.add(access);
      state.refreshTokens.add(refresh);
      return {
        status: 200,
        body: {
          access_token: access,
          token_type: 'bearer',
          expires_in: 2592000,
          scope: 'boards:read pins:read pins:write',
          refresh_token: refresh,
          refresh_token_expires_in: 5184000,
        },
      };
    }
    // The S3 upload host: a POST policy form, never a bearer token.
    if (r.method === 'POST' && r.path === '/') {
      if (r.headers.authorization)
        return { status: 400, body: '<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>' };
      const entries = await formEntries(r).catch(() => [] as [string, string | File][]);
      const fields = Object.fromEntries(entries.filter(([, v]) => typeof v === 'string')) as Record<string, string>;
      const m = [...state.media.entries()].find(([, x]) => x.params.key === fields.key);
      if (!m) return { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Invalid according to Policy</Message></Error>' };
      for (const [k, v] of Object.entries(m[1].params))
        if (fields[k] !== v)
          return {
            status: 403,
            body: `<Error><Code>AccessDenied</Code><Message>Invalid according to Policy: missing ${k}</Message></Error>`,
          };
      if (state.expireNextUpload) {
        state.expireNextUpload = false;
        return {
          status: 403,
          body: '<Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy expired.</Message></Error>',
        };
      }
      const last = entries.at(-1);
      if (last?.[0] !== 'file' || !(last[1] instanceof Blob) || !last[1].size)
        return { status: 400, body: '<Error><Code>InvalidArgument</Code><Message>the file must be the last field</Message></Error>' };
      m[1].uploaded = last[1].size;
      return { status: 204 };
    }
    if (!r.path.startsWith('/v5/')) return err(404, 404, `no route ${r.method} ${r.path}`);
    const auth = bearer(r);
    if (!auth || !state.tokens.has(auth)) return err(401, 2, 'Authentication failed.');
    const b = jsonOf(r);
    if (r.method === 'POST' && r.path === '/v5/media') {
      if (b?.media_type !== 'video') return err(400, 1, 'media_type must be video');
      const id = String(++n);
      const params = {
        'x-amz-date': '20261123T000000Z',
        'x-amz-signature': `sig${id}`,
        'x-amz-security-token': `tok${id}`,
        'x-amz-algorithm': 'AWS4-HMAC-SHA256',
        key: `uploads/11/22/33/${id}`,
        policy: Buffer.from(`{"expiration":"2026-11-24T00:00:00Z"}`).toString('base64'),
        'x-amz-credential': 'ASIA/20261123/us-east-1/s3/aws4_request',
        'Content-Type': 'multipart/form-data',
      };
      state.media.set(id, { params, uploaded: 0, checks: 0 });
      return {
        status: 201,
        body: {
          media_id: id,
          media_type: 'video',
          upload_url: 'https://pinterest-media-upload.s3-accelerate.amazonaws.com/',
          upload_parameters: params,
        },
      };
    }
    const media = /^\/v5\/media\/(\d+)$/.exec(r.path);
    if (r.method === 'GET' && media) {
      if (state.expireTokenAtMediaCheck) {
        state.expireTokenAtMediaCheck = false;
        state.tokens.delete(auth);
        return err(401, 2, 'Authentication failed.');
      }
      const m = state.media.get(media[1]);
      if (!m) return err(404, 3, 'Media not found.');
      if (m.uploaded) m.checks++;
      return {
        status: 200,
        body: { media_id: media[1], media_type: 'video', status: !m.uploaded ? 'registered' : m.checks < 2 ? 'processing' : 'succeeded' },
      };
    }
    if (r.method === 'POST' && r.path === '/v5/pins') {
      state.pinAttempts++;
      if (state.hangNextPin) {
        state.hangNextPin = false;
        return 'hang';
      }
      if (state.rateLimitPins > 0) {
        state.rateLimitPins--;
        return err(429, 8, 'You have exceeded your rate limit. Try again later.', { 'retry-after': '1' });
      }
      if (!b || !/^\d+$/.test(b.board_id ?? '')) return err(400, 1, 'Invalid parameters. board_id is required');
      if (!state.boards.has(b.board_id)) return err(404, 40, 'Board not found.');
      if ((b.title && runes(b.title) > 100) || (b.description && runes(b.description) > 800) || (b.link && b.link.length > 2048))
        return err(400, 1, 'Invalid parameters.');
      const s = b.media_source ?? {};
      let pulled: { ok: boolean; type: string; bytes: number }[] = [];
      if (s.source_type === 'image_url' && typeof s.url === 'string') pulled = [await pull(s.url)];
      else if (s.source_type === 'multiple_image_urls' && Array.isArray(s.items) && s.items.length >= 2 && s.items.length <= 5)
        pulled = await Promise.all(s.items.map((i: { url: string }) => pull(i.url)));
      else if (s.source_type === 'video_id') {
        const m = state.media.get(s.media_id ?? '');
        if (!m || m.checks < 2) return err(400, 1, `Media ${s.media_id} is not ready.`);
        if (s.cover_image_url === undefined && s.cover_image_key_frame_time === undefined)
          return err(400, 1, 'Invalid parameters. A cover image is required for video pins');
      } else return err(400, 1, 'Invalid parameters. media_source is invalid');
      if (pulled.some((p) => !p.ok || !p.type.startsWith('image/'))) return err(400, 1, 'Sorry! We could not fetch the image.');
      const id = `81${++n}`;
      state.pins.push({ id, body: b, pulled });
      return {
        status: 201,
        body: {
          id,
          created_at: new Date().toISOString(),
          board_id: b.board_id,
          title: b.title ?? null,
          description: b.description ?? null,
          link: b.link ?? null,
          media: { media_type: s.source_type === 'video_id' ? 'video' : s.source_type === 'image_url' ? 'image' : 'multiple_images' },
        },
      };
    }
    return err(404, 404, `no route ${r.method} ${r.path}`);
  });
  const grant = () => {
    const access = `pina_${++n}`;
    const refresh = `pinr_${++n}`;
    state.tokens.add(access);
    state.refreshTokens.add(refresh);
    return { access, refresh };
  };
  return { url, state, grant };
}
