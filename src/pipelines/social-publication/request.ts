// Publications: publish_media_to_social resolves the media (a media-library item, a generation,
// an editor export, a slideshow's slides, or a URL fetched through the guard into the library),
// checks every target against its platform's limits, then writes the publication, one target per
// distinct account and one `social-publish` job per target in one transaction. Nothing is queued
// when any target is refused. Free (no credits), but through the charged command
// (services/billing/charged-command.ts) at 0 credits for its idempotency: an `idempotency_key`
// with the same arguments replays the stored answer, with other arguments (or while the first
// call is still at work) it is a 409; keys expire after 24 hours.
import { createHash } from 'node:crypto';
import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import {
  editorExports,
  generations,
  media,
  slideshows,
  slideshowSlides,
  socialAccounts,
  socialPublications,
  socialPublicationTargets,
} from '../../db/schema/index.ts';
import { badRequest, notFound } from '../../errors.ts';
import { socialPublishJob } from './job.ts';
import { keyedRequest, runChargedCommand, settledReplay } from '../../services/billing/charged-command.ts';
import { IDEMPOTENCY_TTL_MS, usedConflict } from '../../services/billing/idempotency.ts';
import { ingest, insertMedia, receiveBuffer, type MediaRow } from '../../services/editor/media.ts';
import { fetchMedia, urlFilename } from '../../services/editor/resources.ts';
import { CAPABILITIES, type SocialPlatform } from '../../services/social/accounts.ts';
import { checkTarget } from '../../services/social/limits.ts';
import { checkOptions } from '../../services/social/options.ts';
import { type PublicationView, type PublishInput, targetsOf, view } from './rows.ts';

const SOURCES = ['media_id', 'generation_id', 'export_id', 'slideshow_id', 'url'] as const;

/** The media rows a publication posts, in order. */
async function resolveMedia(ctx: AppContext, orgId: string, input: PublishInput, signal?: AbortSignal): Promise<MediaRow[]> {
  const given = SOURCES.filter((k) => input[k] !== undefined);
  if (!given.length && input.caption?.trim()) return []; // a text-only post
  if (given.length !== 1) {
    throw badRequest(
      `Invalid request: give exactly one of ${SOURCES.join(', ')}`,
      (given.length ? given : SOURCES).map((k) => ({
        field: `arguments.${k}`,
        message: given.length ? 'only one media source may be given' : 'one media source (or a caption for a text-only post) is required',
      })),
    );
  }
  const byIds = async (ids: string[]) => {
    const rows = await ctx.db
      .select()
      .from(media)
      .where(and(eq(media.orgId, orgId), inArray(media.id, ids)));
    return ids.map((id) => rows.find((r) => r.id === id)!).filter(Boolean);
  };
  const completed = (row: MediaRow | undefined, what: string, id: string, resource: string, field: string) => {
    if (!row) throw notFound(what, id, resource, field);
    if (row.status !== 'completed') throw badRequest(`Invalid request: ${what} ${id} is not ready`, [{ field, message: 'is not ready' }]);
    return row;
  };
  if (input.media_id) {
    const [row] = await byIds([input.media_id]);
    return [completed(row, 'Editor media', input.media_id, 'editor_media', 'arguments.media_id')];
  }
  if (input.generation_id) {
    const [g] = await ctx.db
      .select()
      .from(generations)
      .where(and(eq(generations.orgId, orgId), eq(generations.id, input.generation_id)));
    if (!g) throw notFound('Generation', input.generation_id, 'generation', 'arguments.generation_id');
    if (g.status !== 'completed' || !g.outputMediaId)
      throw badRequest(`Invalid request: generation ${g.id} is not completed`, [
        { field: 'arguments.generation_id', message: 'is not completed' },
      ]);
    const [row] = await byIds([g.outputMediaId]);
    return [completed(row, 'Generation', g.id, 'generation', 'arguments.generation_id')];
  }
  if (input.export_id) {
    const [e] = await ctx.db
      .select()
      .from(editorExports)
      .where(and(eq(editorExports.orgId, orgId), eq(editorExports.id, input.export_id)));
    if (!e) throw notFound('Editor export', input.export_id, 'editor_export', 'arguments.export_id');
    if (e.status !== 'completed' || !e.outputMediaId)
      throw badRequest(`Invalid request: export ${e.id} is not completed`, [{ field: 'arguments.export_id', message: 'is not completed' }]);
    const [row] = await byIds([e.outputMediaId]);
    return [completed(row, 'Editor export', e.id, 'editor_export', 'arguments.export_id')];
  }
  if (input.slideshow_id) {
    const [s] = await ctx.db
      .select()
      .from(slideshows)
      .where(and(eq(slideshows.orgId, orgId), eq(slideshows.id, input.slideshow_id)));
    if (!s) throw notFound('Slideshow', input.slideshow_id, 'slideshow', 'arguments.slideshow_id');
    if (s.status !== 'completed')
      throw badRequest(`Invalid request: slideshow ${s.id} is not completed`, [
        { field: 'arguments.slideshow_id', message: 'is not completed' },
      ]);
    const slides = await ctx.db
      .select()
      .from(slideshowSlides)
      .where(eq(slideshowSlides.slideshowId, s.id))
      .orderBy(asc(slideshowSlides.index));
    const rows = await byIds(slides.map((x) => x.mediaId));
    if (!rows.length)
      throw badRequest(`Invalid request: slideshow ${s.id} has no slides`, [{ field: 'arguments.slideshow_id', message: 'has no slides' }]);
    return rows;
  }
  // A URL: fetched through the guard, checked and stored in the media library like upload_editor_media_from_url.
  const bytes = await fetchMedia(ctx, input.url!, 'arguments.url', signal);
  const { row } = await ingest(ctx, await receiveBuffer(ctx, bytes), {
    orgId,
    filename: urlFilename(input.url!),
    source: 'url',
    field: 'arguments.url',
  });
  const [inserted] = await ctx.db.transaction((tx) => insertMedia(tx, [row]));
  return [inserted];
}

export async function publish(ctx: AppContext, orgId: string, input: PublishInput, signal?: AbortSignal): Promise<PublicationView> {
  const accountIds = [...new Set(input.account_ids.map((id) => id.toLowerCase()))];
  // The same call: the same arguments but the key, its accounts as a set (in any order, repeated or not).
  const keyed = {
    orgId,
    operation: 'publish_media_to_social',
    ...keyedRequest({ ...input, account_ids: accountIds.toSorted() }, undefined),
  };
  // A replay, or a key used with other arguments, is answered before anything is checked or fetched.
  const replay = (await settledReplay<PublicationView>(ctx, keyed)) ?? (await legacyReplay(ctx, orgId, input, accountIds));
  if (replay) return replay;
  const accounts = await ctx.db
    .select()
    .from(socialAccounts)
    .where(and(eq(socialAccounts.orgId, orgId), inArray(socialAccounts.id, accountIds)));
  for (const id of accountIds) {
    if (!accounts.some((a) => a.id === id))
      throw notFound(
        'Social account',
        id,
        'social_account',
        `arguments.account_ids.${input.account_ids.findIndex((x) => x.toLowerCase() === id)}`,
      );
  }
  const ordered = accountIds.map((id) => accounts.find((a) => a.id === id)!);
  // Platforms not available yet are refused before any media is fetched.
  const caption = input.caption ?? '';
  const refuse = (a: (typeof ordered)[number], problem: string) =>
    badRequest(
      `Invalid request: account ${a.id} (${a.platform} @${a.handle}) cannot take this post: ${problem}`,
      [{ field: `arguments.account_ids.${input.account_ids.findIndex((x) => x.toLowerCase() === a.id)}`, message: problem }],
      { account_id: a.id, platform: a.platform },
    );
  for (const a of ordered) {
    const early = checkTarget(a.platform as SocialPlatform, [], caption);
    if (early) throw refuse(a, early);
    if (a.status !== 'connected')
      throw refuse(a, `the connection needs to be reauthorized (${a.statusReason ?? 'its tokens no longer work'})`);
    const opt = checkOptions(a.platform as SocialPlatform, input.platform_options as Record<string, unknown> | undefined, caption);
    if (opt) {
      const field = opt.option === 'caption' ? 'arguments.caption' : `arguments.platform_options.${a.platform}.${opt.option}`;
      throw badRequest(
        `Invalid request: account ${a.id} (${a.platform} @${a.handle}) cannot take this post: ${opt.problem}`,
        [{ field, message: opt.problem }],
        { account_id: a.id, platform: a.platform },
      );
    }
  }
  const rows = await resolveMedia(ctx, orgId, input, signal);
  for (const a of ordered) {
    if (!rows.length && !CAPABILITIES[a.platform as SocialPlatform].text)
      throw refuse(a, `${a.platform} does not take text-only posts: give an image or a video`);
    const options = (input.platform_options as Record<string, Record<string, unknown> | undefined> | undefined)?.[a.platform];
    const problem = checkTarget(a.platform as SocialPlatform, rows, caption, options);
    if (problem) throw refuse(a, problem);
  }
  const source = Object.fromEntries(SOURCES.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]));
  return runChargedCommand(ctx, {
    ...keyed,
    // Free: 0 credits, so no deduction and no ledger row is ever written.
    ledger: { reason: 'publication_charge', reference: (id) => `publication:${id}` },
    prepare: async () => ({ units: 1, unitCredits: 0 }),
    enqueue: async (tx) => {
      const [pub] = await tx
        .insert(socialPublications)
        .values({ orgId, mediaIds: rows.map((r) => r.id), source, caption, options: input.platform_options ?? {} })
        .returning();
      const targets = await tx
        .insert(socialPublicationTargets)
        .values(ordered.map((a, position) => ({ publicationId: pub.id, orgId, accountId: a.id, platform: a.platform, position })))
        .returning();
      for (const t of targets) await ctx.queue.sendInTx(tx, socialPublishJob, { targetId: t.id }, t.id);
      return pub.id;
    },
    respond: async (tx, _plan, outcome) => {
      const [pub] = await tx.select().from(socialPublications).where(eq(socialPublications.id, outcome.unitIds[0]));
      return view(pub, await targetsOf(tx, [pub.id]));
    },
  });
}

/**
 * Publications made before their idempotency moved to the charged command's records kept the key on
 * the publication itself (social_publications.idempotency_key and request_hash, written then and
 * no longer). For one key lifetime after that change a retry with such a key is answered from that
 * publication as it was then (the same arguments replay, others conflict), so a retry across the
 * deploy never posts twice. Once no such row is younger than IDEMPOTENCY_TTL_MS this and the two
 * columns can go, in a migration.
 */
async function legacyReplay(
  ctx: AppContext,
  orgId: string,
  input: PublishInput,
  accountIds: string[],
): Promise<PublicationView | undefined> {
  const key = input.idempotency_key;
  if (!key) return undefined;
  const [prior] = await ctx.db
    .select()
    .from(socialPublications)
    .where(
      and(
        eq(socialPublications.orgId, orgId),
        eq(socialPublications.idempotencyKey, key),
        gt(socialPublications.createdAt, new Date(Date.now() - IDEMPOTENCY_TTL_MS)),
      ),
    );
  if (!prior) return undefined;
  // The hash those rows were written with: the arguments but the key, with the accounts sorted.
  const { idempotency_key: _k, account_ids: _a, ...rest } = input;
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...rest, account_ids: accountIds.toSorted() }))
    .digest('hex');
  if (prior.requestHash !== hash) throw usedConflict({ orgId, operation: 'publish_media_to_social', key });
  return { ...view(prior, await targetsOf(ctx.db, [prior.id])), idempotent_replay: true };
}
