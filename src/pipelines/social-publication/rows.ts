// Publications, their rows: the publication's view and status (from its targets), reading and
// listing them, and each target's lifecycle (src/kernel: attempts, state saved between steps,
// completion with the post, failure, rescheduling after a platform's rate limit). Publishing
// (resolving the media, checking the targets, queueing a job per target) is request.ts.
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { media, socialPublications, socialPublicationTargets } from '../../db/schema/index.ts';
import { ApiError, notFound } from '../../errors.ts';
import { isUuid } from '../../services/workspaces/organizations.ts';
import type { QueueRef } from '../../jobs/queue.ts';
import type { Tx } from '../../db/client.ts';
import type { MediaRow } from '../../services/editor/media.ts';
import { cancelQueued, defineResource } from '../../kernel/resource.ts';
import type { TerminalEvent } from '../../services/webhooks/events.ts';
import type { SocialPlatform } from '../../services/social/accounts.ts';

type S = components['schemas'];
export type PublishInput = S['PublishMediaToSocialInput'];
export type PublicationView = S['SocialPublishResult'];
export type TargetRow = typeof socialPublicationTargets.$inferSelect;
export type PublicationRow = typeof socialPublications.$inferSelect;

export const targetsOf = (db: AppContext['db'] | Tx, ids: string[]) =>
  ids.length
    ? db
        .select()
        .from(socialPublicationTargets)
        .where(inArray(socialPublicationTargets.publicationId, ids))
        .orderBy(asc(socialPublicationTargets.position))
    : Promise.resolve([] as TargetRow[]);

/**
 * published (every target), canceled (every target), failed (none published: failed, or failed and
 * canceled), partial (some failed with others published or pending, or some published and the
 * rest canceled), else queued (some still queued or publishing, none failed).
 */
export function publicationStatus(targets: Pick<TargetRow, 'status'>[]): PublicationView['status'] {
  const count = (status: TargetRow['status']) => targets.filter((t) => t.status === status).length;
  const [failed, canceled, published] = [count('failed'), count('canceled'), count('published')];
  if (published === targets.length) return 'published';
  if (canceled === targets.length) return 'canceled';
  if (failed && failed + canceled === targets.length) return 'failed';
  if (failed) return 'partial';
  if (published + canceled === targets.length) return 'partial';
  return 'queued';
}

export function view(pub: PublicationRow, targets: TargetRow[]): PublicationView {
  const mine = targets.filter((t) => t.publicationId === pub.id);
  return {
    object: 'social_publish_result',
    id: pub.id,
    created_at: pub.createdAt.toISOString(),
    status: publicationStatus(mine),
    results: mine.map((t) => ({
      account_id: t.accountId,
      platform: t.platform as SocialPlatform,
      status: t.status,
      post_id: t.platformPostId,
      post_url: t.postUrl,
      error: (t.error as S['FailureDetail'] | null) ?? null,
    })),
  };
}

export async function getPublication(ctx: AppContext, orgId: string, id: string): Promise<PublicationView | undefined> {
  const [pub] = await ctx.db
    .select()
    .from(socialPublications)
    .where(and(eq(socialPublications.orgId, orgId), eq(socialPublications.id, id)));
  return pub && view(pub, await targetsOf(ctx.db, [pub.id]));
}

export async function requirePublication(ctx: AppContext, orgId: string, id: string): Promise<PublicationView> {
  const found = isUuid(id) ? await getPublication(ctx, orgId, id) : undefined;
  if (!found) throw notFound('Publication', id, 'social_publication', 'arguments.id');
  return found;
}

export async function listPublications(ctx: AppContext, orgId: string, limit = 20): Promise<S['SocialPublicationList']> {
  const pubs = await ctx.db
    .select()
    .from(socialPublications)
    .where(eq(socialPublications.orgId, orgId))
    .orderBy(desc(socialPublications.createdAt), desc(socialPublications.id))
    .limit(limit);
  const targets = await targetsOf(
    ctx.db,
    pubs.map((p) => p.id),
  );
  return { object: 'list', data: pubs.map((p) => view(p, targets)) };
}

// ------------------------------------------------------------------------------ worker side

/** The target with its publication, account and media, or undefined when it is gone. */
export async function loadTarget(ctx: AppContext, targetId: string) {
  const [target] = await ctx.db.select().from(socialPublicationTargets).where(eq(socialPublicationTargets.id, targetId));
  if (!target) return undefined;
  const [pub] = await ctx.db.select().from(socialPublications).where(eq(socialPublications.id, target.publicationId));
  const rows = await ctx.db.select().from(media).where(inArray(media.id, pub.mediaIds));
  return { target, publication: pub, media: pub.mediaIds.map((id) => rows.find((r) => r.id === id)).filter((r): r is MediaRow => !!r) };
}

/** The social-publish job's queue (job.ts declares the job on it; a canceled target's job is cancelled on it). */
export const SOCIAL_PUBLISH_QUEUE = 'social-publish';

/**
 * A target's lifecycle (src/kernel/resource.ts): queued → publishing → published | failed, the
 * adapter's resume point in `state`; free, so nothing is refunded. A queued target can be canceled
 * (cancelPublication), its job cancelled: the first job of a target has the target's id. The
 * publication's webhook event is written with the transition (or cancellation) of its last target.
 */
export const publicationTargetResource = defineResource({
  name: 'publication_target',
  table: socialPublicationTargets,
  columns: {
    id: 'id',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    state: 'state',
    jobId: 'id',
  },
  statuses: { pending: 'queued', running: 'publishing', completed: 'published', failed: 'failed', canceled: 'canceled' },
  events: publicationSettled,
  cancel: { ...cancelQueued('Publication target', 'social_publication', SOCIAL_PUBLISH_QUEUE, 'arguments.id'), event: publicationSettled },
});

/**
 * Cancels every still-queued target of a publication (MCP tasks/cancel); free work, so nothing is
 * refunded. Answers the publication after. Canceling again (nothing queued, some canceled) answers
 * it again; with no target queued or canceled it is 409 conflict (publishing: already running;
 * else finished); another workspace's publication is 404 as for get_social_publication.
 */
export async function cancelPublication(ctx: AppContext, orgId: string, id: string): Promise<PublicationView> {
  await requirePublication(ctx, orgId, id);
  let canceled = 0;
  for (const target of await targetsOf(ctx.db, [id])) {
    if (target.status !== 'queued') continue;
    // A target a worker starts meanwhile answers its conflict: it is publishing, and stays so.
    const done = await publicationTargetResource.cancel(ctx, orgId, target.id).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === 'conflict') return undefined;
      throw err;
    });
    if (done) canceled++;
  }
  const after = await requirePublication(ctx, orgId, id);
  if (canceled || after.results.some((r) => r.status === 'canceled')) return after;
  const running = after.results.some((r) => r.status === 'publishing');
  throw new ApiError(
    'conflict',
    running
      ? `Publication ${id} is already publishing and can no longer be canceled; only queued work can be canceled`
      : `Publication ${id} is already ${after.status}; only queued work can be canceled`,
    { resource: 'social_publication', field: 'arguments.id', status: after.status },
  );
}

/** The publication is terminal when its last target is: then it is completed and its webhook event written, once (none when every target was canceled). */
async function publicationSettled(_ctx: AppContext, tx: Tx, target: TargetRow): Promise<TerminalEvent | undefined> {
  const [pub] = await tx.select().from(socialPublications).where(eq(socialPublications.id, target.publicationId)).for('update');
  const targets = await targetsOf(tx, [pub.id]);
  if (targets.some((t) => t.status === 'queued' || t.status === 'publishing') || pub.completedAt) return undefined;
  const [done] = await tx.update(socialPublications).set({ completedAt: sql`now()` }).where(eq(socialPublications.id, pub.id)).returning();
  const v = view(done, targets);
  const type = v.status === 'canceled' ? 'publication.canceled' : v.status === 'failed' ? 'publication.failed' : 'publication.completed';
  return {
    orgId: pub.orgId,
    type,
    data: v as PublicationView & { id: string },
  };
}

/** queued → publishing (counting the attempt); undefined when already terminal. */
export const startTarget = (ctx: AppContext, targetId: string): Promise<TargetRow | undefined> =>
  publicationTargetResource.start(ctx, targetId);

/** Merges the adapter's resume point into the target's state (after each platform step). */
export const saveTargetState = (ctx: AppContext, targetId: string, patch: Record<string, unknown>): Promise<void> =>
  publicationTargetResource.saveState(ctx, targetId, patch);

export const completeTarget = (ctx: AppContext, targetId: string, post: { id: string; url: string | null }) =>
  publicationTargetResource.complete(ctx, targetId, { set: { platformPostId: post.id, postUrl: post.url, error: null } });

export const failTarget = (ctx: AppContext, targetId: string, error: S['FailureDetail']) =>
  publicationTargetResource.fail(ctx, targetId, error);

/**
 * Sends the target's job again after `seconds` (the platform's Retry-After), in one transaction with
 * the state; `queue` is the social-publish job (job.ts) that asks.
 */
export async function rescheduleTarget(ctx: AppContext, targetId: string, seconds: number, queue: QueueRef): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await tx
      .update(socialPublicationTargets)
      .set({ status: 'queued', updatedAt: sql`now()` })
      .where(eq(socialPublicationTargets.id, targetId));
    await ctx.queue.sendInTx(tx, queue, { targetId, startAfter: seconds }, undefined, {
      startAfter: Math.max(1, Math.ceil(seconds)),
    });
  });
}
