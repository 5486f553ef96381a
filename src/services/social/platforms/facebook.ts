// Facebook Pages through the Graph API, with the Page access token (the connection's platform
// account id is the Page id): images by POST /{page-id}/photos {url, published=false} each (saved as
// they come), then one POST /{page-id}/feed {message, attached_media[i]={"media_fbid":…}} — the post
// is made by that one call, so a resumed attempt re-uses the uploaded photos and never posts twice;
// a video by POST /{page-id}/videos {file_url, description} (Facebook fetches and posts it); the post
// URL from GET /{id}?fields=permalink_url.
import type { PublishTask, SocialAdapter } from './http.ts';
import { GRAPH_API, GRAPH_VERSION, refreshFacebookPageToken, graph, idOf, mediaUrl, permalink } from './meta.ts';

const base = `${GRAPH_API}/${GRAPH_VERSION}`;

interface State {
  photos?: string[];
  post_id?: string;
  post_url?: string | null;
}

export const facebook: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api } = task;
    const state = task.state as State;
    const page = encodeURIComponent(task.account.platformAccountId);
    const message = task.caption || undefined;
    if (!state.post_id) {
      let id: string;
      if (task.media[0]?.kind === 'video') {
        const res = await graph(api, 'POST', `${base}/${page}/videos`, { file_url: mediaUrl(task, task.media[0]), description: message });
        id = idOf(res, 'facebook POST /videos');
      } else {
        const photos = [...(state.photos ?? [])];
        for (let i = photos.length; i < task.media.length; i++) {
          const res = await graph(api, 'POST', `${base}/${page}/photos`, { url: mediaUrl(task, task.media[i]), published: false });
          photos.push(idOf(res, 'facebook POST /photos'));
          await task.save({ photos });
        }
        const fields: Record<string, string | undefined> = { message };
        photos.forEach((fbid, i) => {
          fields[`attached_media[${i}]`] = JSON.stringify({ media_fbid: fbid });
        });
        id = idOf(await graph(api, 'POST', `${base}/${page}/feed`, fields), 'facebook POST /feed');
      }
      await task.save({ post_id: id });
    }
    if (state.post_url === undefined)
      await task.save({ post_url: await permalink(api, `${base}/${encodeURIComponent(state.post_id!)}`, 'permalink_url') });
    return { id: state.post_id!, url: state.post_url ?? null };
  },

  refresh: (api, client, refreshToken, account) => refreshFacebookPageToken(api, client, refreshToken, account?.platformAccountId),
};
