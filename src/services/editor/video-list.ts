// GET /videos (MCP list_videos): the workspace's videos of the shared integer id space, faceless
// and editor (slideshows' projects included), newest first, each as GET /videos/{id} shows it;
// keyset pages with a signed cursor (services/platform/keyset.ts). An id GET /videos/{id} would
// answer 404 for (a faceless id without its row, an editor id without its project) is not listed.
import { and, desc, eq, isNotNull, or, type SQL } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { editorVideos, facelessVideos, media, videos } from '../../db/schema/index.ts';
import { cursorAt, type ListQuery, openKeyset } from '../platform/keyset.ts';
import { facelessView } from './faceless-status.ts';
import { editorVideoStatus } from './projects.ts';

type S = components['schemas'];
type Query = ListQuery & { status?: S['Video']['status']; kind?: S['Video']['kind'] };

/** The conditions of the kind and status filters (editor videos are always ready). */
function filtersOf(q: Query): SQL[] {
  const out: SQL[] = [];
  if (q.kind) out.push(eq(videos.kind, q.kind));
  if (q.status === 'ready') out.push(eq(videos.kind, 'editor'));
  else if (q.status) out.push(eq(videos.kind, 'faceless'), eq(facelessVideos.status, q.status));
  return out;
}

export async function listVideos(ctx: AppContext, orgId: string, q: Query): Promise<S['VideoList']> {
  const keys = await openKeyset(ctx, { list: 'videos', orgId, filters: { status: q.status, kind: q.kind } }, q);
  const viewable = or(
    and(eq(videos.kind, 'faceless'), isNotNull(facelessVideos.videoId)),
    and(eq(videos.kind, 'editor'), isNotNull(editorVideos.videoId)),
  )!;
  const rows = await ctx.db
    .select({
      v: videos,
      f: facelessVideos,
      m: media,
      title: editorVideos.title,
      updatedAt: editorVideos.updatedAt,
      cursorAt: cursorAt(videos.createdAt),
    })
    .from(videos)
    .leftJoin(facelessVideos, eq(facelessVideos.videoId, videos.id))
    .leftJoin(media, eq(media.id, facelessVideos.outputMediaId))
    .leftJoin(editorVideos, eq(editorVideos.videoId, videos.id))
    .where(and(eq(videos.orgId, orgId), viewable, ...filtersOf(q), ...keys.where(videos.createdAt, videos.id)))
    .orderBy(desc(videos.createdAt), desc(videos.id))
    .limit(keys.limit + 1);
  const page = await keys.page(rows, (r) => r.v.id);
  return {
    object: 'list',
    data: page.rows.map((r) =>
      r.v.kind === 'faceless' && r.f ? facelessView(ctx, r.f, r.m) : editorVideoStatus(r.v.id, r.title ?? '', r.v.createdAt, r.updatedAt),
    ),
    next_cursor: page.next_cursor,
  };
}
