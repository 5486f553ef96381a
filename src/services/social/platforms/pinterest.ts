// Pinterest through its v5 API: an image pin is POST /v5/pins with media_source image_url (or
// multiple_image_urls for 2–5 images), signed URLs of ours on PUBLIC_BASE_URL that Pinterest
// fetches. A video: POST /v5/media {media_type: video} → a multipart POST of the returned
// upload_parameters and the file to upload_url (S3, no bearer token) → GET /v5/media/{media_id}
// until `succeeded` → POST /v5/pins with media_source video_id. The media id, the upload and the
// pin id are saved as they come, so a resumed attempt never uploads or pins twice. Tokens:
// refreshed at POST /v5/oauth/token (HTTP Basic with the app's id and secret).
import { PlatformError, refreshGrant, readRange, sleep, type Caller, type PublishTask, type SocialAdapter } from './http.ts';

export const PINTEREST_API = 'https://api.pinterest.com';
const PROCESSING_TIMEOUT_MS = 15 * 60_000;
/** How long Pinterest may take to fetch our images (the signed URLs' lifetime). */
const FETCH_URL_TTL_SECONDS = 24 * 3600;
const JSON_HEADERS = { 'content-type': 'application/json' };

async function waitSucceeded(api: Caller, mediaId: string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    const res = await api.call({ method: 'GET', url: `${PINTEREST_API}/v5/media/${encodeURIComponent(mediaId)}` });
    const status = res.json?.status;
    if (status === 'succeeded') return;
    if (status === 'failed') throw new PlatformError(`pinterest could not process video ${mediaId}`, 400, false, undefined, 'failed');
    if (Date.now() > deadline)
      throw new PlatformError(`pinterest did not finish processing video ${mediaId} in time (status ${status})`, 0, true);
    await sleep(delay, signal);
  }
}

export const pinterest: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api, state } = task;
    const o = task.options;
    if (!state.pin_id) {
      const video = task.media.find((m) => m.kind === 'video');
      let mediaSource: Record<string, unknown>;
      if (video) {
        for (let tries = 0; !state.uploaded; tries++) {
          if (!state.media_id) {
            const res = await api.call({
              method: 'POST',
              url: `${PINTEREST_API}/v5/media`,
              headers: JSON_HEADERS,
              body: JSON.stringify({ media_type: 'video' }),
            });
            const d = res.json;
            if (typeof d?.media_id !== 'string' || typeof d?.upload_url !== 'string' || typeof d?.upload_parameters !== 'object') {
              throw new PlatformError(
                'pinterest answered POST /v5/media without media_id, upload_url and upload_parameters',
                res.status,
                true,
              );
            }
            await task.save({ media_id: d.media_id, upload_url: d.upload_url, upload_parameters: d.upload_parameters });
          }
          const form = new FormData();
          for (const [k, v] of Object.entries(state.upload_parameters as Record<string, string>)) form.set(k, String(v));
          const bytes = await readRange(task.storage, video.storageKey, 0, video.sizeBytes - 1);
          form.set('file', new Blob([bytes], { type: video.contentType }), 'video.mp4'); // S3: the file is the last field
          try {
            await api.call({ method: 'POST', url: state.upload_url, body: form, auth: false });
          } catch (err) {
            // S3 refuses a signed policy that expired (a job resumed long after registering the
            // media): register a new upload once; nothing was pinned with the old one.
            if (!(err instanceof PlatformError) || err.status !== 403 || tries > 0) throw err;
            await task.save({ media_id: null, upload_url: null, upload_parameters: null });
            continue;
          }
          await task.save({ uploaded: true });
        }
        await waitSucceeded(api, state.media_id, task.signal);
        mediaSource = { source_type: 'video_id', media_id: state.media_id, cover_image_key_frame_time: 0 };
      } else {
        const urls = task.media.map((m) => task.storage.signedUrl(m.storageKey, FETCH_URL_TTL_SECONDS));
        mediaSource =
          urls.length > 1
            ? { source_type: 'multiple_image_urls', items: urls.map((url) => ({ url })), index: 0 }
            : { source_type: 'image_url', url: urls[0] };
      }
      const res = await api.call({
        method: 'POST',
        url: `${PINTEREST_API}/v5/pins`,
        headers: JSON_HEADERS,
        body: JSON.stringify({
          board_id: o.board_id,
          ...(typeof o.title === 'string' && o.title ? { title: o.title } : {}),
          description: task.caption,
          ...(typeof o.link === 'string' && o.link ? { link: o.link } : {}),
          media_source: mediaSource,
        }),
      });
      const id = res.json?.id;
      if (typeof id !== 'string') throw new PlatformError('pinterest answered POST /v5/pins without an id', res.status, false);
      await task.save({ pin_id: id });
    }
    return { id: state.pin_id as string, url: `https://www.pinterest.com/pin/${state.pin_id}/` };
  },

  refresh: (api, client, refreshToken) => refreshGrant(api, 'pinterest', `${PINTEREST_API}/v5/oauth/token`, refreshToken, client, 'basic'),
};
