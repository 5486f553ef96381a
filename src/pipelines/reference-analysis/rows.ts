// The reference's rows on the worker side: its lifecycle (src/kernel: processing → ready |
// failed, a failure refunded once), the media of a processing reference in the order given, and
// completion with the media and their analyses.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { media, referenceInspirations } from '../../db/schema/index.ts';
import { notFound } from '../../errors.ts';
import { cancelWork, defineResource } from '../../kernel/resource.ts';
import { isUuid } from '../../services/workspaces/organizations.ts';
import { discardStored, type MediaInsert } from '../../services/editor/media.ts';
import type { MediaAnalysis } from '../../services/references/analysis.ts';
import { views, type ReferenceRow, type ReferenceView } from '../../services/references/references.ts';
import type { ReferenceInput } from './request.ts';

type FailureDetail = components['schemas']['FailureDetail'];

/** The analysis job's queue (job.ts declares the job on it; a canceled reference's job is cancelled on it). */
export const REFERENCE_QUEUE = 'reference-analysis';

/**
 * The reference's lifecycle (src/kernel/resource.ts): processing → ready | failed; a failure
 * refunds its credits once. No progress and no webhook event; `state` holds the stage runner's
 * outputs and record (stages.ts). Processing from its creation, it can be canceled queued or
 * while analysed: refunded in full unless a paid provider call of it has completed (then not at all).
 */
export const referenceResource = defineResource({
  name: 'reference',
  table: referenceInspirations,
  columns: {
    id: 'id',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    credits: 'creditsDeducted',
    refundedAt: 'refundedAt',
    jobId: 'jobId',
    state: 'state',
  },
  statuses: { running: 'processing', completed: 'ready', failed: 'failed', canceled: 'canceled' },
  refund: { reason: 'reference_refund', reference: (id: string) => `reference:${id}` },
  cancel: cancelWork('Reference inspiration', 'reference_inspiration', REFERENCE_QUEUE),
});

/**
 * Cancels a reference inspiration being analysed or waiting to be (MCP tasks/cancel): canceled,
 * refunded by the rule (in full unless a paid provider call of it has completed), its queued job
 * cancelled or its worker stopped; the reference as GET /reference-inspirations lists it.
 * Canceling a canceled one answers it again (no second refund); a finished one is 409 conflict;
 * another workspace's is 404.
 */
export async function cancelReferenceInspiration(ctx: AppContext, orgId: string, id: string): Promise<ReferenceView> {
  const done = isUuid(id) ? await referenceResource.cancel(ctx, orgId, id) : undefined;
  if (!done) throw notFound('Reference inspiration', id, 'reference_inspiration');
  const [view] = await views(ctx, [done.row]);
  return view;
}

/** The reference a job analyses, while it is processing. */
export const startAnalysis = (ctx: AppContext, id: string): Promise<ReferenceRow | undefined> => referenceResource.start(ctx, id);

/** The media of a processing reference in the order given: the URL ones just fetched, the inline ones stored on upload. */
export async function orderedMedia(
  ctx: AppContext,
  row: ReferenceRow,
  fetched: MediaInsert[],
): Promise<{ storageKey: string; contentType: string }[]> {
  const inline = (row.inputs as ReferenceInput[]).flatMap((input) => ('mediaId' in input ? [input.mediaId] : []));
  const stored = inline.length
    ? await ctx.db
        .select()
        .from(media)
        .where(and(eq(media.orgId, row.orgId), inArray(media.id, inline)))
    : [];
  const byId = new Map(stored.map((m) => [m.id, m]));
  let next = 0;
  return (row.inputs as ReferenceInput[]).map((input) => {
    const m = 'url' in input ? fetched[next++] : byId.get(input.mediaId);
    if (!m) throw new Error(`the stored media of ${input.field} is missing`);
    return { storageKey: m.storageKey, contentType: m.contentType };
  });
}

/** Attaches the fetched media and their analyses (in the order given) and makes the reference ready, once (false: it was not processing). */
export async function completeAnalysis(
  ctx: AppContext,
  row: ReferenceRow,
  fetched: MediaInsert[],
  analyses: MediaAnalysis[],
): Promise<boolean> {
  // The order given: each input's media, URL ones from this analysis, inline ones from the upload.
  const fetchedIds = fetched.map((m) => m.id!);
  let next = 0;
  const ordered = (row.inputs as ReferenceInput[]).map((input) => ('url' in input ? fetchedIds[next++] : input.mediaId));
  const ok = await referenceResource.complete(ctx, row.id, {
    // The stages' outputs now live in media rows and the analysis column: the state keeps only the
    // runner's record (runs, timings).
    set: { mediaIds: ordered, inputs: [], analysis: analyses, state: sql`${referenceInspirations.state} - 'fetch' - 'analyse'` },
    extra: async (tx) => {
      if (fetched.length) await tx.insert(media).values(fetched);
    },
  });
  if (!ok)
    await discardStored(
      ctx,
      fetched.map((m) => m.storageKey),
    );
  return ok;
}

/**
 * Fails a processing reference and refunds its credits, exactly once, and removes the URL media its
 * fetch stage stored (kept in the state for a later attempt; no row will hold them now).
 */
export async function failAnalysis(ctx: AppContext, id: string, detail: FailureDetail): Promise<boolean> {
  const failed = await referenceResource.fail(ctx, id, detail);
  if (failed) {
    // Read after the failure: a reference no longer processing keeps its state as it is.
    const [row] = await ctx.db
      .select({ state: referenceInspirations.state })
      .from(referenceInspirations)
      .where(eq(referenceInspirations.id, id));
    const fetched = ((row?.state as { fetch?: MediaInsert[] } | undefined)?.fetch ?? []).map((m) => m.storageKey);
    if (fetched.length) await discardStored(ctx, fetched);
  }
  return failed;
}
