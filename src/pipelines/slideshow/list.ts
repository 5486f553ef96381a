// GET /slideshows (MCP list_slideshows): the workspace's slideshows, newest first, each as
// GET /slideshows/{id} shows it; keyset pages with a signed cursor (services/platform/keyset.ts).
import { and, desc, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { media, slideshows } from '../../db/schema/index.ts';
import { cursorAt, type ListQuery, openKeyset } from '../../services/platform/keyset.ts';
import { slideshowView, slidesOf } from './rows.ts';

type Query = ListQuery & { status?: (typeof slideshows.$inferSelect)['status'] };

export async function listSlideshows(ctx: AppContext, orgId: string, q: Query): Promise<components['schemas']['SlideshowList']> {
  const keys = await openKeyset(ctx, { list: 'slideshows', orgId, filters: { status: q.status } }, q);
  const where = [eq(slideshows.orgId, orgId), ...keys.where(slideshows.createdAt, slideshows.id)];
  if (q.status) where.push(eq(slideshows.status, q.status));
  const rows = await ctx.db
    .select({ s: slideshows, videoKey: media.storageKey, cursorAt: cursorAt(slideshows.createdAt) })
    .from(slideshows)
    .leftJoin(media, eq(media.id, slideshows.videoMediaId))
    .where(and(...where))
    .orderBy(desc(slideshows.createdAt), desc(slideshows.id))
    .limit(keys.limit + 1);
  const page = await keys.page(rows, (r) => r.s.id);
  const slides = await slidesOf(
    ctx.db,
    page.rows.map((r) => r.s.id),
  );
  return {
    object: 'list',
    data: page.rows.map((r) => slideshowView(ctx, r.s, r.videoKey, slides.get(r.s.id) ?? [])),
    next_cursor: page.next_cursor,
  };
}
