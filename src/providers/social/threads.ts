// Threads through its Graph API (graph.threads.net/v1.0; the connection's platform account id is
// the Threads user id): a container, POST /{threads-user-id}/threads with media_type IMAGE
// (image_url), VIDEO (video_url) or TEXT and the text, or one is_carousel_item container per item
// and then a media_type=CAROUSEL container naming them as children → GET /{container-id}?fields=
// status,error_message until FINISHED → POST /{threads-user-id}/threads_publish {creation_id} →
// GET /{media-id}?fields=permalink. Ids are saved as they come, so a resumed attempt publishes the
// container it made instead of making another.
import { type PublishTask, type SocialAdapter } from './http.ts';
import { THREADS_API, graph, idOf, mediaUrl, permalink, refreshThreadsToken, waitContainer } from './meta.ts';

const base = `${THREADS_API}/v1.0`;

interface State {
  children?: string[];
  container?: string | null;
  post_id?: string;
  post_url?: string | null;
}

export const threads: SocialAdapter = {
  async publish(task: PublishTask) {
    const { api } = task;
    const state = task.state as State;
    const user = encodeURIComponent(task.account.platformAccountId);
    const text = task.caption || undefined;
    const create = async (fields: Record<string, string | boolean | undefined>) => idOf(await graph(api, 'POST', `${base}/${user}/threads`, fields), 'threads POST /threads');
    const item = (i: number) => {
      const m = task.media[i];
      return m.kind === 'video' ? { media_type: 'VIDEO', video_url: mediaUrl(task, m) } : { media_type: 'IMAGE', image_url: mediaUrl(task, m) };
    };
    if (!state.post_id) {
      if (!state.container) {
        let container: string;
        if (task.media.length > 1) {
          const children = [...(state.children ?? [])];
          for (let i = children.length; i < task.media.length; i++) {
            children.push(await create({ ...item(i), is_carousel_item: true }));
            await task.save({ children });
          }
          container = await create({ media_type: 'CAROUSEL', children: children.join(','), text });
        } else {
          container = await create(task.media.length ? { ...item(0), text } : { media_type: 'TEXT', text });
        }
        await task.save({ container });
      }
      const container = state.container!;
      const status = await waitContainer(api, 'threads', `${base}/${encodeURIComponent(container)}`, 'status', 'error_message', task.signal, () =>
        task.save({ container: null, children: [] }),
      );
      // PUBLISHED: published by an attempt whose answer was lost; the container stands for the post.
      const id = status === 'PUBLISHED' ? container : idOf(await graph(api, 'POST', `${base}/${user}/threads_publish`, { creation_id: container }), 'threads POST /threads_publish');
      await task.save({ post_id: id });
    }
    if (state.post_url === undefined) await task.save({ post_url: await permalink(api, `${base}/${encodeURIComponent(state.post_id!)}`, 'permalink') });
    return { id: state.post_id!, url: state.post_url ?? null };
  },

  refresh: (api, _client, refreshToken) => refreshThreadsToken(api, refreshToken),
};
