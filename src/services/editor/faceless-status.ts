// The status view of a faceless video, as GET /videos/{id} shows it (the editor's video id space
// serves faceless ids too) and as its webhook events carry it (the faceless-video pipeline's
// resource view).
import { and, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { facelessVideos, media } from '../../db/schema/index.ts';

type S = components['schemas'];

/** GET /videos/{id} of a faceless video (undefined when the id is not one of this workspace's). */
export async function facelessStatus(
  ctx: AppContext,
  orgId: string,
  id: number,
  db: AppContext['db'] | Tx = ctx.db,
): Promise<S['Video'] | undefined> {
  const [row] = await db
    .select({ f: facelessVideos, m: media })
    .from(facelessVideos)
    .leftJoin(media, eq(media.id, facelessVideos.outputMediaId))
    .where(and(eq(facelessVideos.videoId, id), eq(facelessVideos.orgId, orgId)));
  if (!row) return undefined;
  const { f, m } = row;
  const done = f.status === 'completed' && m;
  return {
    object: 'video',
    id,
    kind: 'faceless',
    status: f.status,
    title: f.title,
    url: done ? ctx.storage.signedUrl(m.storageKey) : null,
    error: (f.error as S['FailureDetail'] | null) ?? null,
    stage: f.status === 'generating' || f.status === 'error' ? ((f.stage as S['Video']['stage']) ?? null) : null,
    progress: f.status === 'completed' ? 100 : f.progress,
    duration_seconds: done ? m.durationSeconds : null,
    size_bytes: done ? m.sizeBytes : null,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
  };
}
