// Instagram through the Instagram API with Instagram Login on graph.instagram.com (what the browser
// connect flow connects: an Instagram professional account's Instagram User access token, no
// Facebook Page; the connection's platform account id is the IG user id, `user_id` of /me): a media
// container, POST /{ig-user-id}/media with
// image_url (feed), video_url with media_type=REELS (a feed video is a reel shared to the feed),
// media_type=STORIES for a story, or one is_carousel_item container per image and then a
// media_type=CAROUSEL container naming them as children → GET /{container-id}?fields=status_code
// until FINISHED → POST /{ig-user-id}/media_publish {creation_id} → GET /{media-id}?fields=permalink
// (the flow Threads shares: meta.ts publishContainer). The token is the 60-day
// long-lived one, which refreshes itself: GET /refresh_access_token?grant_type=ig_refresh_token.
import type { PublishTask, SocialAdapter } from './http.ts';
import { GRAPH_VERSION, INSTAGRAM_API, mediaUrl, publishContainer, refreshInstagramToken } from './meta.ts';

const base = `${INSTAGRAM_API}/${GRAPH_VERSION}`;

export type InstagramPostType = 'feed' | 'reel' | 'story';
export const instagramPostType = (options: Record<string, unknown>): InstagramPostType =>
  options.post_type === 'reel' || options.post_type === 'story' ? options.post_type : 'feed';

/** Why Instagram cannot take this media as this post type, or undefined (checked before queueing). */
export function instagramOptionProblem(
  media: { kind: string; durationSeconds: number | null }[],
  options: Record<string, unknown>,
): string | undefined {
  const type = instagramPostType(options);
  if (type === 'reel' && (media.length !== 1 || media[0].kind !== 'video')) return 'an Instagram reel is one video';
  if (type === 'story' && media.length !== 1) return 'an Instagram story is one image or one video';
  const d = media[0]?.durationSeconds;
  if (type === 'story' && media[0].kind === 'video' && d != null && d > 60)
    return `the video lasts ${Math.round(d * 10) / 10} s; an Instagram story takes 3–60 s`;
  return undefined;
}

export const instagram: SocialAdapter = {
  publish(task: PublishTask) {
    const type = instagramPostType(task.options);
    const caption = task.caption || undefined;
    return publishContainer(task, {
      platform: 'instagram',
      base,
      create: 'media',
      publish: 'media_publish',
      status: 'status_code',
      detail: 'status',
      item: (m) => (m.kind === 'video' ? { media_type: 'VIDEO', video_url: mediaUrl(task, m) } : { image_url: mediaUrl(task, m) }),
      carousel: { caption },
      single: () => {
        const m = task.media[0];
        const url = mediaUrl(task, m);
        if (type === 'story')
          return m.kind === 'video' ? { media_type: 'STORIES', video_url: url } : { media_type: 'STORIES', image_url: url };
        if (m.kind === 'video') return { media_type: 'REELS', video_url: url, caption, share_to_feed: type === 'feed' };
        return { image_url: url, caption };
      },
    });
  },

  refresh: (api, _client, refreshToken) => refreshInstagramToken(api, refreshToken),
};
