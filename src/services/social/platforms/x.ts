// X (formerly Twitter) through its v2 API: media by the chunked upload
// (POST /2/media/upload/initialize → POST /2/media/upload/{id}/append, one multipart segment of
// at most CHUNK_BYTES each, segment_index 0, 1, … in order → POST /2/media/upload/{id}/finalize →
// GET /2/media/upload?command=STATUS&media_id=… while processing_info says pending/in_progress),
// then POST /2/tweets with media.media_ids. Every id is saved as it comes (media id, next
// segment, finalized, the tweet id), so a retried or resumed attempt continues where it stopped
// and never tweets twice. Tokens: OAuth 2.0 user context; refreshed at POST /2/oauth2/token.
import { PlatformError, refreshGrant, readRange, sleep, type Caller, type PublishTask, type SocialAdapter } from './http.ts';

export const X_API = 'https://api.x.com';
/** Bytes per APPEND segment (X accepts up to 5 MB per segment). */
export const X_CHUNK_BYTES = 4 * 1024 * 1024;
/** Longest wait for X to process an uploaded video. */
const PROCESSING_TIMEOUT_MS = 10 * 60_000;

interface MediaState {
  id?: string;
  next_segment?: number;
  finalized?: boolean;
  ready?: boolean;
}

const category = (contentType: string, kind: string) =>
  kind === 'video' ? 'tweet_video' : contentType === 'image/gif' ? 'tweet_gif' : 'tweet_image';

async function waitProcessed(api: Caller, id: string, info: any, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
  while (info && (info.state === 'pending' || info.state === 'in_progress')) {
    if (Date.now() > deadline) throw new PlatformError(`x did not finish processing media ${id} in time`, 0, true);
    await sleep(Math.min(Math.max(Number(info.check_after_secs) || 1, 1), 30) * 1000, signal);
    const res = await api.call({ method: 'GET', url: `${X_API}/2/media/upload?command=STATUS&media_id=${encodeURIComponent(id)}` });
    info = res.json?.data?.processing_info;
  }
  if (info?.state === 'failed') {
    throw new PlatformError(
      `x could not process media ${id}: ${info.error?.message ?? info.error?.name ?? 'processing failed'}`,
      400,
      false,
      undefined,
      info.error?.name,
    );
  }
}

export const x: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api, state } = task;
    const media: MediaState[] = Array.isArray(state.media) ? state.media : [];
    const saveMedia = (i: number, patch: MediaState) => {
      media[i] = { ...media[i], ...patch };
      return task.save({ media });
    };
    if (!state.post_id) {
      for (const [i, m] of task.media.entries()) {
        let s = media[i] ?? {};
        if (s.ready) continue;
        if (!s.id) {
          const res = await api.call({
            method: 'POST',
            url: `${X_API}/2/media/upload/initialize`,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ media_type: m.contentType, total_bytes: m.sizeBytes, media_category: category(m.contentType, m.kind) }),
          });
          const id = res.json?.data?.id;
          if (typeof id !== 'string') throw new PlatformError('x answered initialize without data.id', res.status, true);
          await saveMedia(i, { id, next_segment: 0 });
          s = media[i];
        }
        const segments = Math.ceil(m.sizeBytes / X_CHUNK_BYTES);
        for (let seg = s.next_segment ?? 0; seg < segments; seg++) {
          const start = seg * X_CHUNK_BYTES;
          const bytes = await readRange(task.storage, m.storageKey, start, Math.min(start + X_CHUNK_BYTES, m.sizeBytes) - 1);
          const form = new FormData();
          form.set('segment_index', String(seg));
          form.set('media', new Blob([bytes], { type: 'application/octet-stream' }), 'blob');
          await api.call({ method: 'POST', url: `${X_API}/2/media/upload/${encodeURIComponent(s.id!)}/append`, body: form });
          await saveMedia(i, { next_segment: seg + 1 });
        }
        let info: any;
        if (!s.finalized) {
          const res = await api.call({ method: 'POST', url: `${X_API}/2/media/upload/${encodeURIComponent(s.id!)}/finalize` });
          info = res.json?.data?.processing_info;
          await saveMedia(i, { finalized: true });
        } else {
          const res = await api.call({
            method: 'GET',
            url: `${X_API}/2/media/upload?command=STATUS&media_id=${encodeURIComponent(s.id!)}`,
          });
          info = res.json?.data?.processing_info;
        }
        await waitProcessed(api, s.id!, info, task.signal);
        await saveMedia(i, { ready: true });
      }
      const res = await api.call({
        method: 'POST',
        url: `${X_API}/2/tweets`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...(task.caption ? { text: task.caption } : {}),
          ...(media.length ? { media: { media_ids: media.map((s) => s.id) } } : {}),
        }),
      });
      const id = res.json?.data?.id;
      if (typeof id !== 'string') throw new PlatformError('x answered POST /2/tweets without data.id', res.status, false);
      await task.save({ post_id: id });
      state.post_id = id;
    }
    return { id: state.post_id as string, url: `https://x.com/${encodeURIComponent(task.account.handle)}/status/${state.post_id}` };
  },

  refresh: (api, client, refreshToken) => refreshGrant(api, 'x', `${X_API}/2/oauth2/token`, refreshToken, client, 'basic'),
};
