// A resource declared for the kernel's tests on the faceless_videos table (it has every column the
// kernel knows: attempts, stage, progress, a jsonb state, credits, refunded_at, an output media
// row), with a ledger reason and view of its own.
import { eq } from 'drizzle-orm';
import { facelessVideos, videos, webhookEndpoints } from '../../src/db/schema/index.ts';
import { defineResource } from '../../src/kernel/resource.ts';
import type { TestApp } from '../helpers/app.ts';

export const STAGES = ['one', 'two', 'three', 'four'] as const;

export const thing = defineResource({
  name: 'thing',
  table: facelessVideos,
  columns: {
    id: 'videoId',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    progress: 'progress',
    stage: 'stage',
    state: 'artifacts',
    completedAt: 'completedAt',
    credits: 'credits',
    refundedAt: 'refundedAt',
    output: 'outputMediaId',
  },
  statuses: { pending: 'queued', running: 'generating', completed: 'completed', failed: 'error' },
  stages: STAGES,
  refund: { reason: 'faceless_video_refund', reference: (id: number) => `faceless-video:${id}` },
  events: { completed: 'faceless_video.completed', failed: 'faceless_video.failed' },
  view: async (_ctx, tx, row) => {
    const [now] = await tx.select().from(facelessVideos).where(eq(facelessVideos.videoId, row.videoId));
    return { object: 'thing', id: now.videoId, status: now.status, stage: now.stage };
  },
});

/** A workspace with `credits`, an endpoint subscribed to both events, and a queued thing charged 30. */
export async function newThing(app: TestApp, credits = 100): Promise<{ orgId: string; id: number }> {
  const db = app.service.ctx.db;
  const ws = await app.workspace({ credits });
  await db.insert(webhookEndpoints).values({
    orgId: ws.orgId,
    url: 'https://127.0.0.1:9/hook',
    eventTypes: ['faceless_video.completed', 'faceless_video.failed'],
    secret: 'whsec_dGVzdA==',
  });
  const [v] = await db.insert(videos).values({ orgId: ws.orgId, kind: 'faceless' }).returning({ id: videos.id });
  await db.insert(facelessVideos).values({ videoId: v.id, orgId: ws.orgId, title: 'A thing', spec: {}, credits: 30 });
  return { orgId: ws.orgId, id: v.id };
}
