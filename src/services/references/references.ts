// Reference inspirations (seed 2.5, 4.7, 4.8), the read side: media a workspace saves to a
// template target and later passes as custom_reference_inspiration_id. Saving one (charged) and
// its analysis job are the reference-analysis pipeline's (src/pipelines/reference-analysis/).
//   Views: a reference as the API shows it; the target and category checks both sides use.
//   GET:   the list (newest first) with the template targets; recommendations among ready ones;
//          target suggestions for new media. Free.
//   Review: the admin CLI's queue of public references pending review.
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { generations, media, referenceInspirations } from '../../db/schema/index.ts';
import { badRequest, type FieldError } from '../../errors.ts';
import { findTemplate, referenceTemplateTargets, type ReferenceTemplateTarget } from '../catalog/catalog-data.ts';
import type { Tx } from '../../db/client.ts';
import type { MediaRow } from '../editor/media.ts';
import { isUuid } from '../workspaces/organizations.ts';
import { analyseUrlMedia, combined, previewAnalysis, similarity, textWords, UrlMediaRefused, type MediaAnalysis } from './analysis.ts';

export type CreateReferenceBody = components['schemas']['CreateReferenceInspirationRequest'];
export type ReferenceView = components['schemas']['ReferenceInspiration'];
export type ReferenceRow = typeof referenceInspirations.$inferSelect;
type MediaKind = ReferenceView['media_kind'];
type Category = ReferenceView['template_category'];

export const CREDITS_PER_MEDIA_ITEM = 30;
const LIST_MAX = 20;
const SUGGEST_MAX = 12;

// ------------------------------------------------------------------------------------- views

function view(ctx: AppContext, r: ReferenceRow, rows: Map<string, MediaRow>): ReferenceView {
  return {
    object: 'reference_inspiration',
    id: r.id,
    status: r.status,
    template_slug: r.templateSlug,
    template_category: r.templateCategory,
    media_kind: r.mediaKind,
    visibility: r.visibility,
    review_status: r.reviewStatus,
    label: r.label,
    media: r.mediaIds
      .map((id, i) => ({ m: rows.get(id), analysis: (((r.analysis as MediaAnalysis[] | null) ?? [])[i] ?? null) as MediaAnalysis | null }))
      .filter((x): x is { m: MediaRow; analysis: MediaAnalysis | null } => Boolean(x.m))
      .map(({ m, analysis }) => ({
        type: m.kind === 'video' ? ('video' as const) : ('image' as const),
        url: ctx.storage.signedUrl(m.storageKey),
        analysis,
      })),
    error: (r.error as ReferenceView['error']) ?? null,
    credits_deducted: r.creditsDeducted,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export async function views(ctx: AppContext, refs: ReferenceRow[], db: AppContext['db'] | Tx = ctx.db): Promise<ReferenceView[]> {
  const ids = [...new Set(refs.flatMap((r) => r.mediaIds))];
  const rows = ids.length ? await db.select().from(media).where(inArray(media.id, ids)) : [];
  const byId = new Map(rows.map((m) => [m.id, m]));
  return refs.map((r) => view(ctx, r, byId));
}

/** The workspace's reference inspiration `id` as the API shows it; undefined when it has none of that id. */
export async function getReference(ctx: AppContext, orgId: string, id: string): Promise<ReferenceView | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await ctx.db
    .select()
    .from(referenceInspirations)
    .where(and(eq(referenceInspirations.id, id), eq(referenceInspirations.orgId, orgId)));
  return row ? (await views(ctx, [row]))[0] : undefined;
}

// ------------------------------------------------------------------------------------- checks

export function target(slug: string, field: string): ReferenceTemplateTarget {
  const t = referenceTemplateTargets().find((x) => x.template_slug === slug);
  if (!t) {
    throw badRequest(
      `Invalid request: ${field} "${slug}" is not a reference template target; see reference_template_targets of GET /assets`,
      [{ field, message: 'is not a reference template target (GET /assets reference_template_targets)' }],
    );
  }
  return t;
}

export function checkCategory(t: ReferenceTemplateTarget, category: Category | undefined, field: string) {
  if (category !== undefined && category !== t.template_category) {
    throw badRequest(`Invalid request: ${t.template_slug} is a ${t.template_category} target, not ${category}`, [
      { field, message: `is ${category} but ${t.template_slug} is ${t.template_category}` },
    ]);
  }
}

// ---------------------------------------------------------------------------------------- GET

export type ListReferencesQuery = {
  recommend?: boolean;
  suggest_targets?: boolean;
  template_slug?: string;
  template_category?: Category;
  media_kind?: MediaKind;
  description?: string;
  image_url?: string[];
  video_url?: string;
  limit?: number;
};
type ReferencesResponse = components['schemas']['ReferenceInspirationsResponse'];

export async function listReferences(ctx: AppContext, orgId: string, q: ListReferencesQuery): Promise<ReferencesResponse> {
  const errors: FieldError[] = [];
  if (q.recommend && q.suggest_targets)
    errors.push({ field: 'query.recommend', message: 'recommend and suggest_targets cannot both be true' });
  if (!q.suggest_targets) {
    for (const k of ['description', 'image_url', 'video_url'] as const) {
      if (q[k] !== undefined) errors.push({ field: `query.${k}`, message: 'is used only with suggest_targets=true' });
    }
  }
  if (errors.length) throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);
  const t = q.template_slug !== undefined ? target(q.template_slug, 'query.template_slug') : undefined;
  if (t) checkCategory(t, q.template_category, 'query.template_category');
  if (q.suggest_targets) return suggestTargets(ctx, q);
  if (q.recommend) return recommend(ctx, orgId, q, t);

  const limit = Math.min(q.limit ?? LIST_MAX, LIST_MAX);
  const where = [eq(referenceInspirations.orgId, orgId)];
  if (q.template_slug) where.push(eq(referenceInspirations.templateSlug, q.template_slug));
  if (q.template_category) where.push(eq(referenceInspirations.templateCategory, q.template_category));
  if (q.media_kind) where.push(eq(referenceInspirations.mediaKind, q.media_kind));
  const refs = await ctx.db
    .select()
    .from(referenceInspirations)
    .where(and(...where))
    .orderBy(desc(referenceInspirations.createdAt), desc(referenceInspirations.id))
    .limit(limit);
  return {
    object: 'reference_inspiration_list',
    data: await views(ctx, refs),
    template_targets: referenceTemplateTargets()
      .filter(
        (x) =>
          (!q.template_slug || x.template_slug === q.template_slug) &&
          (!q.template_category || x.template_category === q.template_category),
      )
      .filter((x) => !q.media_kind || x.accepts_media_kinds.includes(q.media_kind))
      .map((x) => ({ ...x, accepts_media_kinds: [...x.accepts_media_kinds] })),
  };
}

/**
 * Ready references ranked by how alike they are (palette, perceptual hash, OCR text, layout;
 * ./analysis.ts similarity) to the anchors: the requested template's catalog preview, and this
 * workspace's references that led to completed generations (of that template when one is asked
 * for). The best anchor counts 0.65; saved for the template itself 0.15, the category 0.05, the
 * kind asked 0.05, having led to a completed generation 0.05, recency up to 0.05.
 */
async function recommend(
  ctx: AppContext,
  orgId: string,
  q: ListReferencesQuery,
  t: ReferenceTemplateTarget | undefined,
): Promise<ReferencesResponse> {
  const limit = Math.min(q.limit ?? LIST_MAX, LIST_MAX);
  const category = q.template_category ?? t?.template_category;
  const refs = await ctx.db
    .select()
    .from(referenceInspirations)
    .where(and(eq(referenceInspirations.orgId, orgId), eq(referenceInspirations.status, 'ready')))
    .orderBy(desc(referenceInspirations.createdAt), desc(referenceInspirations.id))
    .limit(500);
  // References that led to completed generations (of the template asked for, when one is).
  const provenRows = await ctx.db
    .selectDistinct({ id: sql<string>`${generations.spec}->>'customReferenceInspirationId'` })
    .from(generations)
    .where(
      and(
        eq(generations.orgId, orgId),
        eq(generations.status, 'completed'),
        sql`${generations.spec} ? 'customReferenceInspirationId'`,
        ...(t ? [sql`${generations.spec}->>'templateSlug' = ${t.template_slug}`] : []),
      ),
    )
    .limit(50);
  const proven = new Set(provenRows.map((p) => p.id));
  const analysisOf = (r: ReferenceRow) => combined(((r.analysis as MediaAnalysis[] | null) ?? []).filter(Boolean));
  const anchors: { id?: string; label: string; analysis: MediaAnalysis }[] = [];
  const preview = t ? await previewAnalysis(ctx, t.template_slug) : undefined;
  if (t && preview) anchors.push({ label: `the ${t.label} preview`, analysis: preview });
  for (const r of refs) {
    const a = proven.has(r.id) ? analysisOf(r) : undefined;
    if (a) anchors.push({ id: r.id, label: `“${r.label ?? r.templateSlug}”, which led to a completed generation`, analysis: a });
  }
  const now = Date.now();
  const scored = refs
    .map((r) => {
      const same = t !== undefined && r.templateSlug === t.template_slug;
      const sameCategory = category !== undefined && r.templateCategory === category;
      const sameKind = q.media_kind !== undefined && r.mediaKind === q.media_kind;
      // A reference saved for another category fits only when asked for nothing in particular.
      if (category !== undefined && !sameCategory) return undefined;
      if (q.media_kind !== undefined && !sameKind && !(t?.accepts_media_kinds.includes(r.mediaKind) ?? false)) return undefined;
      const mine = analysisOf(r);
      let best: { anchor: (typeof anchors)[number]; sim: ReturnType<typeof similarity> } | undefined;
      for (const anchor of anchors) {
        if (!mine || anchor.id === r.id) continue;
        const sim = similarity(mine, anchor.analysis);
        if (!best || sim.score > best.sim.score) best = { anchor, sim };
      }
      const ageDays = (now - r.createdAt.getTime()) / 86_400_000;
      const recency = 0.05 / (1 + ageDays / 30);
      const score = Math.min(
        1,
        0.65 * (best?.sim.score ?? 0) +
          (same ? 0.15 : 0) +
          (sameCategory ? 0.05 : 0) +
          (sameKind ? 0.05 : 0) +
          (proven.has(r.id) ? 0.05 : 0) +
          recency,
      );
      const reasons = [
        best?.sim.why.length ? `${best.sim.why.join('; ')} to ${best.anchor.label}` : undefined,
        best && !best.sim.why.length ? `little like ${best.anchor.label} (similarity ${best.sim.score.toFixed(2)})` : undefined,
        !mine ? 'not analysed' : undefined,
        same ? `saved for ${t!.label} itself` : sameCategory ? `saved for another ${category} template (${r.templateSlug})` : undefined,
        proven.has(r.id) ? 'it led to a completed generation' : undefined,
        sameKind ? `${r.mediaKind} media as asked` : undefined,
      ].filter(Boolean);
      const reason = reasons.length ? `${cap(reasons.join('; '))}.` : 'A ready reference of this workspace.';
      return { r, score: Math.round(score * 1000) / 1000, reason: reason.length > 500 ? `${reason.slice(0, 497)}...` : reason };
    })
    .filter((x): x is NonNullable<typeof x> => Boolean(x))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
  const shown = await views(
    ctx,
    scored.map((s) => s.r),
  );
  return {
    object: 'reference_inspiration_recommendations',
    data: scored.map((s, i) => ({ reference_inspiration: shown[i], score: s.score, reason: s.reason })),
  };
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Words a target answers to: its label and slug, and for templates their presets' names. */
function targetWords(x: ReferenceTemplateTarget): Set<string> {
  const tpl = findTemplate(x.template_slug);
  const extra = tpl ? tpl.presets.flatMap((p) => [p.id, p.label]) : [];
  return new Set([...textWords(x.label), ...textWords(x.template_slug), ...extra.flatMap(textWords)]);
}

/**
 * Where new media fits, best first. The media given by URL is fetched (guarded), checked and
 * analysed like a reference's; each target is scored on how alike the media is to its catalog
 * preview (0.3 × similarity: palette, perceptual hash, text, layout), on the words of the
 * description and of the text read in the media matching the target's (0.45 at two words or
 * more), on kind fit (0.2, every target listed accepts the kind) and the category the kind
 * suggests (0.1).
 */
async function suggestTargets(ctx: AppContext, q: ListReferencesQuery): Promise<ReferencesResponse> {
  const imageCount = q.image_url?.length ?? 0;
  const hasVideo = q.video_url !== undefined;
  const kind: MediaKind = q.media_kind ?? (hasVideo ? 'video' : imageCount >= 3 ? 'slideshow' : 'image');
  const preferred: Category = kind === 'video' ? 'video-templates' : kind === 'slideshow' ? 'slideshow-carousel' : 'static-ads';
  const given = [
    ...(q.image_url ?? []).map((url, i) => ({ url, kind: 'image' as const, field: `query.image_url[${i}]` })),
    ...(q.video_url !== undefined ? [{ url: q.video_url, kind: 'video' as const, field: 'query.video_url' }] : []),
  ];
  const problems = given.flatMap((g) => {
    const problem = ctx.fetcher.precheck(g.url);
    return problem ? [{ field: g.field, message: problem }] : [];
  });
  if (problems.length) throw badRequest(`Invalid request: ${problems.map((e) => `${e.field} ${e.message}`).join('; ')}`, problems);
  let analyses: MediaAnalysis[] = [];
  try {
    analyses = await analyseUrlMedia(ctx, given);
  } catch (err) {
    if (err instanceof UrlMediaRefused)
      throw badRequest(`Invalid request: ${err.field} ${err.message}`, [{ field: err.field, message: err.message }]);
    throw err;
  }
  const seen = combined(analyses);
  const read = new Set(textWords(analyses.map((a) => `${a.text} ${a.kind === 'video' ? (a.transcript ?? '') : ''}`).join(' ')));
  const asked = new Set(textWords(q.description ?? ''));
  const limit = Math.min(q.limit ?? SUGGEST_MAX, SUGGEST_MAX);
  const targets = referenceTemplateTargets()
    .filter((x) => x.accepts_media_kinds.includes(kind))
    .filter(
      (x) =>
        (!q.template_category || x.template_category === q.template_category) && (!q.template_slug || x.template_slug === q.template_slug),
    );
  const previews = seen ? await Promise.all(targets.map((x) => previewAnalysis(ctx, x.template_slug))) : [];
  const scored = targets
    .map((x, order) => {
      const own = targetWords(x);
      const matched = [...own].filter((w) => asked.has(w));
      const inMedia = [...own].filter((w) => read.has(w) && !asked.has(w));
      const sim = seen && previews[order] ? similarity(seen, previews[order]!) : undefined;
      const wordFit = Math.min(1, (matched.length + inMedia.length) / 2);
      const score = 0.2 + (x.template_category === preferred ? 0.1 : 0) + 0.45 * wordFit + 0.3 * (sim?.score ?? 0);
      const reason = [
        `Accepts ${kind} references`,
        x.template_category === preferred
          ? `${preferred} suits ${kind === 'image' ? 'single images' : kind === 'slideshow' ? 'image sets' : 'video'}`
          : undefined,
        matched.length
          ? `matches ${matched
              .slice(0, 4)
              .map((w) => `“${w}”`)
              .join(', ')}`
          : undefined,
        inMedia.length
          ? `the text in the media says ${inMedia
              .slice(0, 4)
              .map((w) => `“${w}”`)
              .join(', ')}`
          : undefined,
        sim?.why.length
          ? `like its preview: ${sim.why.join(', ')}`
          : sim
            ? `little like its preview (similarity ${sim.score.toFixed(2)})`
            : undefined,
      ]
        .filter(Boolean)
        .join('; ');
      return { x, order, score: Math.round(Math.min(1, score) * 1000) / 1000, reason: `${reason}.`.slice(0, 500) };
    })
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit);
  return {
    object: 'reference_template_target_suggestions',
    media_kind: kind,
    image_count: imageCount,
    has_video: hasVideo,
    suggestions: scored.map((s) => ({
      template_slug: s.x.template_slug,
      template_category: s.x.template_category,
      label: s.x.label,
      accepts_media_kinds: [...s.x.accepts_media_kinds],
      score: s.score,
      reason: s.reason,
    })),
    next_step: scored.length
      ? `Ask the user which target fits (best first), then call create_reference_inspiration (POST /reference-inspirations) with its template_slug and template_category, media_kind ${kind}, and the media (${hasVideo ? 'video_url' : 'image_urls or inline images'}); it costs ${CREDITS_PER_MEDIA_ITEM} credits per media item. Poll list_reference_inspirations until the reference is ready, then pass its id as custom_reference_inspiration_id.`
      : `No template target accepts ${kind} media${q.template_category ? ` in ${q.template_category}` : ''}; try another media_kind or template_category.`,
  };
}

// ----------------------------------------------------------------------------------- review

/** A reference as the admin CLI shows it to a reviewer. */
export interface ReviewItem {
  object: 'reference_inspiration';
  id: string;
  org: string;
  status: ReferenceRow['status'];
  review_status: ReferenceRow['reviewStatus'];
  template_slug: string;
  media_kind: MediaKind;
  label: string | null;
  media_count: number;
  created_at: string;
}

const reviewItem = (r: ReferenceRow): ReviewItem => ({
  object: 'reference_inspiration',
  id: r.id,
  org: r.orgId,
  status: r.status,
  review_status: r.reviewStatus,
  template_slug: r.templateSlug,
  media_kind: r.mediaKind,
  label: r.label,
  media_count: r.mediaIds.length,
  created_at: r.createdAt.toISOString(),
});

/** Ready public references waiting for review, oldest first. */
export async function pendingReviews(db: AppContext['db']): Promise<ReviewItem[]> {
  const rows = await db
    .select()
    .from(referenceInspirations)
    .where(
      and(
        eq(referenceInspirations.visibility, 'public'),
        eq(referenceInspirations.reviewStatus, 'pending'),
        eq(referenceInspirations.status, 'ready'),
      ),
    )
    .orderBy(referenceInspirations.createdAt)
    .limit(100);
  return rows.map(reviewItem);
}

/**
 * A reviewer's decision on a ready public reference: approved, or rejected (status rejected, no
 * longer usable, the reason as its error; not refunded: the analysis was done). Undefined when no
 * such reference waits for review.
 */
export async function reviewReference(
  db: AppContext['db'],
  id: string,
  decision: 'approve' | 'reject',
  reason?: string,
): Promise<ReviewItem | undefined> {
  const [row] = await db
    .update(referenceInspirations)
    .set(
      decision === 'approve'
        ? { reviewStatus: 'approved', updatedAt: new Date() }
        : {
            reviewStatus: 'rejected',
            status: 'rejected',
            error: {
              code: 'review_rejected',
              message: (reason ?? 'The reference was rejected in review').slice(0, 1900),
              retryable: false,
              context: {},
            },
            updatedAt: new Date(),
          },
    )
    .where(
      and(eq(referenceInspirations.id, id), eq(referenceInspirations.reviewStatus, 'pending'), eq(referenceInspirations.status, 'ready')),
    )
    .returning();
  return row ? reviewItem(row) : undefined;
}
