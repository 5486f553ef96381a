// YouTube through the Data API v3 resumable upload: POST
// /upload/youtube/v3/videos?uploadType=resumable&part=snippet,status with the video's metadata
// (snippet.title/description/categoryId, status.privacyStatus) and X-Upload-Content-Length/Type →
// the session URL in Location → PUT the bytes in chunks (multiples of 256 KiB, each with its
// Content-Range; 308 Resume Incomplete with `Range` until the last) → 200/201 with the video
// resource. The session URL is saved first; a resumed attempt asks it how far it got (PUT with
// `Content-Range: bytes */N`: 308 and its Range, or the finished video) and continues, so a crash
// never uploads a second video. Tokens: refreshed at POST https://oauth2.googleapis.com/token.
import {
  PlatformError,
  refreshGrant,
  readRange,
  type Caller,
  type PlatformResponse,
  type PublishTask,
  type SocialAdapter,
} from './http.ts';

export const YOUTUBE_UPLOAD = 'https://www.googleapis.com';
export const GOOGLE_OAUTH = 'https://oauth2.googleapis.com';
/** Bytes per PUT (a multiple of 256 KiB, as the protocol requires of every chunk but the last). */
export const YOUTUBE_CHUNK_BYTES = 4 * 1024 * 1024;
/** The default category (People & Blogs). */
const CATEGORY_ID = '22';
/** Google's reasons that are worth retrying (with backoff) although their status is 403. */
const RETRY_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'backendError']);

/** The title: the option, else the caption's first line (at most 100 characters). */
export const youtubeTitle = (options: Record<string, unknown>, caption: string) =>
  typeof options.title === 'string' && options.title.trim()
    ? options.title.trim()
    : [...(caption.split('\n')[0] ?? '').trim()].slice(0, 100).join('');

/** Next byte the session wants, from a 308's Range (`bytes=0-N`); 0 when it has none. */
const nextOffset = (res: PlatformResponse) => {
  const m = /bytes=0-(\d+)/.exec(res.headers.get('range') ?? '');
  return m ? Number(m[1]) + 1 : 0;
};

async function call(api: Caller, req: Parameters<Caller['call']>[0]): Promise<PlatformResponse> {
  try {
    return await api.call(req);
  } catch (err) {
    if (err instanceof PlatformError && !err.retryable && err.platformCode && RETRY_REASONS.has(err.platformCode)) {
      throw new PlatformError(err.message, err.status, true, err.retryAfterSeconds, err.platformCode);
    }
    throw err;
  }
}

export const youtube: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api, state } = task;
    const video = task.media[0];
    const size = video.sizeBytes;
    if (!state.video_id) {
      let offset = 0;
      let done: PlatformResponse | undefined;
      if (state.upload_url) {
        // Resuming: how much did the session get?
        const res = await call(api, {
          method: 'PUT',
          url: state.upload_url,
          headers: { 'content-range': `bytes */${size}` },
          body: Buffer.alloc(0),
          accept: [308, 404, 410],
        });
        if (res.status === 308) offset = nextOffset(res);
        else if (res.status === 404 || res.status === 410)
          await task.save({ upload_url: null }); // the session expired before completing: no video was made
        else done = res;
      }
      if (!state.upload_url) {
        const res = await call(api, {
          method: 'POST',
          url: `${YOUTUBE_UPLOAD}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`,
          headers: {
            'content-type': 'application/json; charset=UTF-8',
            'x-upload-content-length': String(size),
            'x-upload-content-type': video.contentType,
          },
          body: JSON.stringify({
            snippet: { title: youtubeTitle(task.options, task.caption), description: task.caption, categoryId: CATEGORY_ID },
            status: {
              privacyStatus: typeof task.options.privacy_status === 'string' ? task.options.privacy_status : 'public',
              selfDeclaredMadeForKids: false,
            },
          }),
        });
        const location = res.headers.get('location');
        if (!location) throw new PlatformError('youtube answered the resumable upload start without a Location', res.status, true);
        await task.save({ upload_url: location });
        offset = 0;
      }
      while (!done) {
        const last = Math.min(offset + YOUTUBE_CHUNK_BYTES, size) - 1;
        const bytes = await readRange(task.storage, video.storageKey, offset, last);
        const res = await call(api, {
          method: 'PUT',
          url: state.upload_url,
          headers: { 'content-type': video.contentType, 'content-range': `bytes ${offset}-${last}/${size}` },
          body: bytes,
          accept: [308],
        });
        if (res.status === 308) {
          const next = nextOffset(res);
          if (next <= offset) throw new PlatformError(`youtube kept no bytes of the chunk at ${offset}`, 308, true);
          offset = next;
        } else done = res;
      }
      const id = done.json?.id;
      if (typeof id !== 'string') throw new PlatformError('youtube answered the upload without the video id', done.status, false);
      await task.save({ video_id: id });
    }
    return { id: state.video_id as string, url: `https://www.youtube.com/watch?v=${state.video_id}` };
  },

  refresh: (api, client, refreshToken) => refreshGrant(api, 'youtube', `${GOOGLE_OAUTH}/token`, refreshToken, client, 'form'),
};
