// Threads through its Graph API (graph.threads.net/v1.0; the connection's platform account id is
// the Threads user id): a container, POST /{threads-user-id}/threads with media_type IMAGE
// (image_url), VIDEO (video_url) or TEXT and the text, or one is_carousel_item container per item
// and then a media_type=CAROUSEL container naming them as children → GET /{container-id}?fields=
// status,error_message until FINISHED → POST /{threads-user-id}/threads_publish {creation_id} →
// GET /{media-id}?fields=permalink (the flow Instagram shares: meta.ts publishContainer).
import type { MediaRow } from '../../editor/media.ts';
import type { PublishTask, SocialAdapter } from './http.ts';
import { THREADS_API, mediaUrl, publishContainer, refreshThreadsToken } from './meta.ts';

const base = `${THREADS_API}/v1.0`;

export const threads: SocialAdapter = {
  publish(task: PublishTask) {
    const text = task.caption || undefined;
    const item = (m: MediaRow) =>
      m.kind === 'video' ? { media_type: 'VIDEO', video_url: mediaUrl(task, m) } : { media_type: 'IMAGE', image_url: mediaUrl(task, m) };
    return publishContainer(task, {
      platform: 'threads',
      base,
      create: 'threads',
      publish: 'threads_publish',
      status: 'status',
      detail: 'error_message',
      item,
      carousel: { text },
      single: () => (task.media.length ? { ...item(task.media[0]), text } : { media_type: 'TEXT', text }),
    });
  },

  refresh: (api, _client, refreshToken) => refreshThreadsToken(api, refreshToken),
};
