// GET /generations (MCP list_generations): the workspace's generations, newest first, each as
// GET /generations/{id} shows it; keyset pages with a signed cursor (services/platform/keyset.ts).
import { and, desc, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { generations, media } from '../../db/schema/index.ts';
import { cursorAt, type ListQuery, openKeyset } from '../../services/platform/keyset.ts';
import { generationView } from './rows.ts';

type Query = ListQuery & { status?: (typeof generations.$inferSelect)['status']; type?: (typeof generations.$inferSelect)['type'] };

export async function listGenerations(ctx: AppContext, orgId: string, q: Query): Promise<components['schemas']['GenerationList']> {
  const keys = await openKeyset(ctx, { list: 'generations', orgId, filters: { status: q.status, type: q.type } }, q);
  const where = [eq(generations.orgId, orgId), ...keys.where(generations.createdAt, generations.id)];
  if (q.status) where.push(eq(generations.status, q.status));
  if (q.type) where.push(eq(generations.type, q.type));
  const rows = await ctx.db
    .select({ g: generations, m: media, cursorAt: cursorAt(generations.createdAt) })
    .from(generations)
    .leftJoin(media, eq(media.id, generations.outputMediaId))
    .where(and(...where))
    .orderBy(desc(generations.createdAt), desc(generations.id))
    .limit(keys.limit + 1);
  const page = await keys.page(rows, (r) => r.g.id);
  return { object: 'list', data: page.rows.map((r) => generationView(ctx, r.g, r.m)), next_cursor: page.next_cursor };
}
