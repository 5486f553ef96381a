// Instagram through the Instagram API with Instagram Login on graph.instagram.com (what the browser
// connect flow connects: an Instagram professional account's Instagram User access token, no
// Facebook Page; the connection's platform account id is the IG user id, `user_id` of /me): a media
// container, POST /{ig-user-id}/media with
// image_url (feed), video_url with media_type=REELS (a feed video is a reel shared to the feed),
// media_type=STORIES for a story, or one is_carousel_item container per image and then a
// media_type=CAROUSEL container naming them as children → GET /{container-id}?fields=status_code
// until FINISHED → POST /{ig-user-id}/media_publish {creation_id} → GET /{media-id}?fields=permalink.
// Child and container ids are saved as they come, so a resumed attempt publishes the container it
// made (a container can be published once) instead of making another. The token is the 60-day
// long-lived one, which refreshes itself: GET /refresh_access_token?grant_type=ig_refresh_token.
import type { MediaRow } from '../../services/editor/media.ts';
import { type PublishTask, type SocialAdapter } from './http.ts';
import { GRAPH_VERSION, INSTAGRAM_API, graph, idOf, mediaUrl, permalink, refreshInstagramToken, waitContainer } from './meta.ts';

const base = `${INSTAGRAM_API}/${GRAPH_VERSION}`;

export type InstagramPostType = 'feed' | 'reel' | 'story';
export const instagramPostType = (options: Record<string, unknown>): InstagramPostType =>
  options.post_type === 'reel' || options.post_type === 'story' ? options.post_type : 'feed';

/** Why Instagram cannot take this media as this post type, or undefined (checked before queueing). */
export function instagramOptionProblem(media: { kind: string; durationSeconds: number | null }[], options: Record<string, unknown>): string | undefined {
  const type = instagramPostType(options);
  if (type === 'reel' && (media.length !== 1 || media[0].kind !== 'video')) return 'an Instagram reel is one video';
  if (type === 'story' && media.length !== 1) return 'an Instagram story is one image or one video';
  const d = media[0]?.durationSeconds;
  if (type === 'story' && media[0].kind === 'video' && d != null && d > 60) return `the video lasts ${Math.round(d * 10) / 10} s; an Instagram story takes 3–60 s`;
  return undefined;
}

interface State {
  children?: string[];
  container?: string | null;
  post_id?: string;
  post_url?: string | null;
}

export const instagram: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api } = task;
    const state = task.state as State;
    const user = encodeURIComponent(task.account.platformAccountId);
    const type = instagramPostType(task.options);
    const caption = task.caption || undefined;
    const createMedia = async (fields: Record<string, string | boolean | undefined>) => idOf(await graph(api, 'POST', `${base}/${user}/media`, fields), 'instagram POST /media');
    const single = (m: MediaRow): Record<string, string | boolean | undefined> => {
      const url = mediaUrl(task, m);
      if (type === 'story') return m.kind === 'video' ? { media_type: 'STORIES', video_url: url } : { media_type: 'STORIES', image_url: url };
      if (m.kind === 'video') return { media_type: 'REELS', video_url: url, caption, share_to_feed: type === 'feed' };
      return { image_url: url, caption };
    };
    if (!state.post_id) {
      if (!state.container) {
        let container: string;
        if (task.media.length > 1) {
          const children = [...(state.children ?? [])];
          for (let i = children.length; i < task.media.length; i++) {
            const m = task.media[i];
            const url = mediaUrl(task, m);
            children.push(await createMedia(m.kind === 'video' ? { media_type: 'VIDEO', video_url: url, is_carousel_item: true } : { image_url: url, is_carousel_item: true }));
            await task.save({ children });
          }
          container = await createMedia({ media_type: 'CAROUSEL', children: children.join(','), caption });
        } else {
          container = await createMedia(single(task.media[0]));
        }
        await task.save({ container });
      }
      const container = state.container!;
      const status = await waitContainer(api, 'instagram', `${base}/${encodeURIComponent(container)}`, 'status_code', 'status', task.signal, () =>
        task.save({ container: null, children: [] }),
      );
      // PUBLISHED: an earlier attempt published it and its answer was lost; Instagram does not say
      // which media it became, so the container stands for the post (never published twice).
      const id = status === 'PUBLISHED' ? container : idOf(await graph(api, 'POST', `${base}/${user}/media_publish`, { creation_id: container }), 'instagram POST /media_publish');
      await task.save({ post_id: id });
    }
    if (state.post_url === undefined) await task.save({ post_url: await permalink(api, `${base}/${encodeURIComponent(state.post_id!)}`, 'permalink') });
    return { id: state.post_id!, url: state.post_url ?? null };
  },

  refresh: (api, _client, refreshToken) => refreshInstagramToken(api, refreshToken),
};
