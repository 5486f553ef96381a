// TikTok through its Content Posting API (open.tiktokapis.com/v2, direct post):
// POST /v2/post/publish/creator_info/query/ (the creator's privacy_level_options, comment setting,
// longest video) → videos: POST /v2/post/publish/video/init/ with post_info and source_info
// FILE_UPLOAD (video_size, chunk_size, total_chunk_count) → PUT each chunk, in order, to the
// returned upload_url with its Content-Range (TikTok's rules: chunks of 5–64 MB, the last one
// taking the remainder, a file under 5 MB in one chunk) → POST /v2/post/publish/status/fetch/
// until PUBLISH_COMPLETE (or FAILED). Photos: POST /v2/post/publish/content/init/ with
// PULL_FROM_URL (signed URLs of ours on PUBLIC_BASE_URL), then the same status polling. TikTok
// posts when the upload completes, so the publish id, upload URL and next chunk are saved as they
// come and a resumed attempt continues the same upload (never a second init). Tokens: refreshed at
// POST /v2/oauth/token/ (client_key/client_secret in the form).
import { PlatformError, refreshGrant, readRange, sleep, type Caller, type PublishTask, type SocialAdapter } from './http.ts';

export const TIKTOK_API = 'https://open.tiktokapis.com';
const MB = 1024 * 1024;
/** TikTok's chunk bounds: every chunk but a lone one is at least 5 MB; at most 64 MB (the last up to 128 MB). */
export const TIKTOK_MIN_CHUNK = 5 * MB;
const MAX_CHUNK = 32 * MB;
/** Most chunks TikTok takes for one video. */
const MAX_CHUNKS = 1000;
const PROCESSING_TIMEOUT_MS = 15 * 60_000;
/** How long TikTok may take to pull our photos (the signed URLs' lifetime). */
const PULL_URL_TTL_SECONDS = 24 * 3600;
const JSON_HEADERS = { 'content-type': 'application/json; charset=UTF-8' };

/** Our privacy_level option → TikTok's privacy_level. */
export const TIKTOK_PRIVACY: Record<string, string> = {
  public: 'PUBLIC_TO_EVERYONE',
  friends: 'MUTUAL_FOLLOW_FRIENDS',
  followers: 'FOLLOWER_OF_CREATOR',
  private: 'SELF_ONLY',
};
const ourPrivacy = (level: string) => Object.entries(TIKTOK_PRIVACY).find(([, v]) => v === level)?.[0] ?? level;

/** The chunking TikTok accepts for a file of `size` bytes: chunk_size and total_chunk_count (the last chunk takes the remainder). */
export function tiktokChunks(size: number): { chunkSize: number; count: number } {
  if (size < TIKTOK_MIN_CHUNK) return { chunkSize: size, count: 1 };
  const chunkSize = Math.min(MAX_CHUNK, Math.max(TIKTOK_MIN_CHUNK, Math.ceil(size / 50)));
  return { chunkSize, count: Math.min(MAX_CHUNKS, Math.floor(size / chunkSize)) };
}

/** The creator's first public post id from a status answer (int64s read from the text: JSON numbers would lose digits). */
function publicPostId(text: string): string | undefined {
  return /"publicaly_available_post_id"\s*:\s*\[\s*"?(\d+)/.exec(text)?.[1];
}

async function waitPublished(api: Caller, publishId: string, signal: AbortSignal): Promise<string | undefined> {
  const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    const res = await api.call({
      method: 'POST',
      url: `${TIKTOK_API}/v2/post/publish/status/fetch/`,
      headers: JSON_HEADERS,
      body: JSON.stringify({ publish_id: publishId }),
    });
    const status = res.json?.data?.status;
    if (status === 'PUBLISH_COMPLETE' || status === 'SEND_TO_USER_INBOX') return publicPostId(res.text);
    if (status === 'FAILED') {
      const reason = String(res.json?.data?.fail_reason || 'FAILED');
      throw new PlatformError(`tiktok could not publish ${publishId}: ${reason}`, 400, false, undefined, reason);
    }
    if (Date.now() > deadline) throw new PlatformError(`tiktok did not finish processing ${publishId} in time (status ${status})`, 0, true);
    await sleep(delay, signal);
  }
}

type Media = PublishTask['media'][number];

/** The creator's settings TikTok wants honoured in each post, checked against the task's options. */
interface CreatorPost {
  /** creator_info's data (its duet and stitch settings are copied into a video post). */
  info: { duet_disabled?: unknown; stitch_disabled?: unknown } | undefined;
  /** TikTok's privacy_level. */
  privacy: string;
  disableComment: boolean;
}

export const tiktok: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api, state } = task;
    const video = task.media.find((m) => m.kind === 'video');
    if (!state.post_id) {
      if (!state.publish_id) {
        const post = await creatorPost(task, video);
        if (video) await initVideo(task, video, post);
        else await initPhotos(task, post);
      }
      if (video && !state.uploaded) await uploadChunks(task, video);
      const postId = await waitPublished(api, state.publish_id, task.signal);
      await task.save({ post_id: postId ?? state.publish_id, public: !!postId });
    }
    const kind = video ? 'video' : 'photo';
    return {
      id: state.post_id as string,
      url: state.public ? `https://www.tiktok.com/@${encodeURIComponent(task.account.handle)}/${kind}/${state.post_id}` : null,
    };
  },

  refresh: (api, client, refreshToken) =>
    refreshGrant(api, 'tiktok', `${TIKTOK_API}/v2/oauth/token/`, refreshToken, client, 'form', 'client_key'),
};

/** The creator's current settings, as TikTok requires right before each post: the privacy level and video length allowed. */
async function creatorPost(task: PublishTask, video: Media | undefined): Promise<CreatorPost> {
  const info = (await task.api.call({ method: 'POST', url: `${TIKTOK_API}/v2/post/publish/creator_info/query/`, headers: JSON_HEADERS }))
    .json?.data;
  const options: string[] = Array.isArray(info?.privacy_level_options) ? info.privacy_level_options : [];
  const wanted = String(task.options.privacy_level ?? '');
  const privacy = TIKTOK_PRIVACY[wanted] ?? wanted;
  if (!options.includes(privacy)) {
    throw new PlatformError(
      `tiktok: this creator cannot post with privacy_level ${wanted}; allowed: ${options.map(ourPrivacy).join(', ') || 'none'}`,
      400,
      false,
      undefined,
      'privacy_level_option_mismatch',
    );
  }
  const maxSeconds = Number(info?.max_video_post_duration_sec);
  if (video && maxSeconds > 0 && (video.durationSeconds ?? 0) > maxSeconds) {
    throw new PlatformError(
      `tiktok: this creator can post videos of at most ${maxSeconds} s; the video lasts ${Math.round(video.durationSeconds! * 10) / 10} s`,
      400,
      false,
      undefined,
      'duration_exceeded',
    );
  }
  return { info, privacy, disableComment: info?.comment_disabled === true || task.options.allow_comments === false };
}

/** Starts a FILE_UPLOAD video post; saves the publish id, upload URL and chunking (no chunk sent yet). */
async function initVideo(task: PublishTask, video: Media, { info, privacy, disableComment }: CreatorPost): Promise<void> {
  const { chunkSize, count } = tiktokChunks(video.sizeBytes);
  const res = await task.api.call({
    method: 'POST',
    url: `${TIKTOK_API}/v2/post/publish/video/init/`,
    headers: JSON_HEADERS,
    body: JSON.stringify({
      post_info: {
        title: task.caption,
        privacy_level: privacy,
        disable_comment: disableComment,
        disable_duet: info?.duet_disabled === true,
        disable_stitch: info?.stitch_disabled === true,
      },
      source_info: { source: 'FILE_UPLOAD', video_size: video.sizeBytes, chunk_size: chunkSize, total_chunk_count: count },
    }),
  });
  const d = res.json?.data;
  if (typeof d?.publish_id !== 'string' || typeof d?.upload_url !== 'string')
    throw new PlatformError('tiktok answered video init without data.publish_id and data.upload_url', res.status, true);
  await task.save({ publish_id: d.publish_id, upload_url: d.upload_url, chunk_size: chunkSize, chunk_count: count, next_chunk: 0 });
}

/** Starts a photo post TikTok pulls from our signed URLs; saves the publish id (nothing to upload). */
async function initPhotos(task: PublishTask, { privacy, disableComment }: CreatorPost): Promise<void> {
  const res = await task.api.call({
    method: 'POST',
    url: `${TIKTOK_API}/v2/post/publish/content/init/`,
    headers: JSON_HEADERS,
    body: JSON.stringify({
      post_info: {
        title: (task.caption.split('\n')[0] ?? '').slice(0, 90),
        description: task.caption,
        privacy_level: privacy,
        disable_comment: disableComment,
        auto_add_music: true,
      },
      source_info: {
        source: 'PULL_FROM_URL',
        photo_cover_index: 0,
        photo_images: task.media.map((m) => task.storage.signedUrl(m.storageKey, PULL_URL_TTL_SECONDS)),
      },
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    }),
  });
  const id = res.json?.data?.publish_id;
  if (typeof id !== 'string') throw new PlatformError('tiktok answered content init without data.publish_id', res.status, true);
  await task.save({ publish_id: id, uploaded: true });
}

/** PUTs the video's chunks in order from the saved next chunk (after a resume, from what TikTok says it holds). */
async function uploadChunks(task: PublishTask, video: Media): Promise<void> {
  const { state } = task;
  const size = video.sizeBytes;
  const chunkSize = Number(state.chunk_size);
  const count = Number(state.chunk_count);
  let start = Number(state.next_chunk ?? 0);
  if (start > 0) start = await resumeChunk(task, size, chunkSize, count, start);
  for (let i = start; i < count; i++) {
    const first = i * chunkSize;
    const last = i === count - 1 ? size - 1 : first + chunkSize - 1;
    const bytes = await readRange(task.storage, video.storageKey, first, last);
    await task.api.call({
      method: 'PUT',
      url: state.upload_url,
      headers: { 'content-type': video.contentType, 'content-range': `bytes ${first}-${last}/${size}` },
      body: bytes,
      auth: false, // the upload URL carries its own token
    });
    await task.save({ next_chunk: i + 1 });
  }
  await task.save({ uploaded: true });
}

/**
 * Resuming: TikTok's uploaded_bytes says which chunks it holds (a chunk sent before a crash may not
 * have been saved as done, or not received). The chunk to send next; `saved` when TikTok does not say.
 */
async function resumeChunk(task: PublishTask, size: number, chunkSize: number, count: number, saved: number): Promise<number> {
  const { state } = task;
  const res = await task.api.call({
    method: 'POST',
    url: `${TIKTOK_API}/v2/post/publish/status/fetch/`,
    headers: JSON_HEADERS,
    body: JSON.stringify({ publish_id: state.publish_id }),
  });
  const held = res.json?.data?.uploaded_bytes;
  if (res.json?.data?.status === 'FAILED')
    throw new PlatformError(
      `tiktok could not publish ${state.publish_id}: ${res.json.data.fail_reason || 'FAILED'}`,
      400,
      false,
      undefined,
      res.json.data.fail_reason || 'FAILED',
    );
  if (typeof held === 'number') return held >= size ? count : Math.min(count, Math.floor(held / chunkSize));
  return saved;
}
