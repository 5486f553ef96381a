// Saving a reference inspiration (POST /reference-inspirations), through the charged command (a
// replay is the stored response, checked no further): the target, kind and media are checked,
// 30 credits per media item are priced and checked against the balance (no credits, no upload),
// the inline images are stored (sniffed: PNG, JPEG or WebP), the reference and its media rows
// inserted and the analysis job queued, then the charge is deducted, all in one transaction.
// Status processing.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { media, referenceInspirations } from '../../db/schema/index.ts';
import { ApiError, badRequest, type FieldError } from '../../errors.ts';
import { referenceAnalysisJob } from './job.ts';
import { IMAGE_MAX_BYTES, IMAGE_TYPES } from './stages.ts';
import type { ReferenceTemplateTarget } from '../../services/catalog/catalog-data.ts';
import { keyedRequest, runChargedCommand, type Priced } from '../../services/billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import { decodeInlineData, discardStored, ingest, receiveBuffer, type MediaInsert } from '../../services/editor/media.ts';
import {
  CREDITS_PER_MEDIA_ITEM,
  checkCategory,
  type CreateReferenceBody,
  type ReferenceView,
  target,
  views,
} from '../../services/references/references.ts';

/** A media item the analysis job still has to fetch (URL) or has (stored: media row id). */
export type ReferenceInput = { kind: 'image' | 'video'; url: string; field: string } | { kind: 'image'; mediaId: string; field: string };

/** A checked request, priced: one unit (the reference) at 30 credits per media item. */
interface ReferencePlan extends Priced {
  target: ReferenceTemplateTarget;
  /** URL media for the analysis job, in the order given. */
  inputs: ReferenceInput[];
  /** Inline images, decoded; sniffed and stored when the reference is saved. */
  inline: { bytes: Buffer; declared: string | undefined; filename: string; field: string; declaredField: string }[];
  items: number;
}

export async function createReference(
  ctx: AppContext,
  orgId: string,
  body: CreateReferenceBody,
  headerKey: string | undefined,
): Promise<ReferenceView> {
  const stored: string[] = [];
  try {
    return await runChargedCommand(ctx, {
      orgId,
      operation: 'createReferenceInspiration',
      ...keyedRequest(body, headerKey),
      // The reference's id is the request's group id.
      ledger: { reason: 'reference_charge', reference: (id) => `reference:${id}` },
      prepare: async () => checkReference(ctx, body),
      insufficientMessage: (plan, required, available) =>
        `Saving ${plan.items} media item${plan.items === 1 ? '' : 's'} costs ${required} credits and the workspace has ${available}`,
      enqueue: (sp, plan, { groupId: id }) => saveReference(ctx, sp, orgId, body, plan, id, stored),
      respond: async (tx, _plan, o) => {
        const refs = await tx.select().from(referenceInspirations).where(eq(referenceInspirations.id, o.unitIds[0]));
        return (await views(ctx, refs, tx))[0];
      },
    });
  } catch (err) {
    await discardStored(ctx, stored);
    throw err;
  }
}

/** The target, kind and media checked (URLs prechecked, inline images decoded and size-checked). */
function checkReference(ctx: AppContext, body: CreateReferenceBody): ReferencePlan {
  const t = target(body.template_slug, 'body.template_slug');
  checkCategory(t, body.template_category, 'body.template_category');
  const kind = body.media_kind;
  if (!t.accepts_media_kinds.includes(kind)) {
    throw badRequest(`Invalid request: ${t.template_slug} accepts ${t.accepts_media_kinds.join(' or ')} references, not ${kind}`, [
      { field: 'body.media_kind', message: `is not accepted by ${t.template_slug} (accepts ${t.accepts_media_kinds.join(', ')})` },
    ]);
  }
  const errors: FieldError[] = [];
  const imageUrls = body.image_urls ?? [];
  const images = body.images ?? [];
  if (kind === 'video') {
    if (!body.video_url) errors.push({ field: 'body.video_url', message: 'is required when media_kind is video' });
    if (imageUrls.length) errors.push({ field: 'body.image_urls', message: 'must be absent when media_kind is video' });
    if (images.length) errors.push({ field: 'body.images', message: 'must be absent when media_kind is video' });
  } else {
    if (body.video_url) errors.push({ field: 'body.video_url', message: `must be absent when media_kind is ${kind}` });
    const n = imageUrls.length + images.length;
    if (n === 0) errors.push({ field: 'body.image_urls', message: 'give 1 to 10 images in image_urls and/or images' });
    if (n > 10) errors.push({ field: 'body.images', message: `image_urls and images hold ${n} images together; at most 10` });
  }
  const inputs: ReferenceInput[] = [];
  imageUrls.forEach((url, i) => {
    inputs.push({ kind: 'image', url, field: `body.image_urls[${i}]` });
  });
  if (body.video_url) inputs.push({ kind: 'video', url: body.video_url, field: 'body.video_url' });
  for (const input of inputs) {
    const problem = 'url' in input ? ctx.fetcher.precheck(input.url) : undefined;
    if (problem) errors.push({ field: input.field, message: problem });
  }
  // Inline images: decoded and size-checked now; sniffed and stored when the reference is saved.
  const inline: ReferencePlan['inline'] = [];
  images.forEach((img, i) => {
    const field = `body.images[${i}].data`;
    try {
      const { bytes, dataUrlType } = decodeInlineData(img.data, field, IMAGE_MAX_BYTES);
      const declared = img.content_type ?? dataUrlType;
      if (declared && !IMAGE_TYPES.has(declared))
        errors.push({
          field: img.content_type ? `body.images[${i}].content_type` : field,
          message: `is ${declared}; PNG, JPEG or WebP only`,
        });
      inline.push({
        bytes,
        declared,
        filename: img.filename,
        field,
        declaredField: img.content_type ? `body.images[${i}].content_type` : field,
      });
    } catch (err) {
      if (err instanceof ApiError) errors.push(...((err.context.errors as FieldError[]) ?? [{ field, message: err.message }]));
      else throw err;
    }
  });
  if (errors.length) throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);
  const items = inputs.length + inline.length;
  return { units: 1, unitCredits: CREDITS_PER_MEDIA_ITEM * items, target: t, inputs, inline, items };
}

/** Stores the inline images (`stored` collects their keys), inserts the reference and its media rows, and queues the analysis. */
async function saveReference(
  ctx: AppContext,
  tx: Tx,
  orgId: string,
  body: CreateReferenceBody,
  plan: ReferencePlan,
  id: string,
  stored: string[],
): Promise<string> {
  const rows: MediaInsert[] = [];
  for (const d of plan.inline) {
    const done = await ingest(ctx, await receiveBuffer(ctx, d.bytes), {
      orgId,
      filename: d.filename,
      declaredType: d.declared,
      declaredField: d.declaredField,
      source: 'upload',
      title: body.label,
      field: d.field,
    });
    stored.push(done.row.storageKey);
    if (!IMAGE_TYPES.has(done.inspected.contentType)) {
      throw badRequest(`Invalid request: ${d.field} is ${done.inspected.contentType}; PNG, JPEG or WebP only`, [
        { field: d.field, message: `is ${done.inspected.contentType}; PNG, JPEG or WebP only` },
      ]);
    }
    rows.push(done.row);
  }
  if (rows.length) await tx.insert(media).values(rows);
  // The order given: image_urls (or video_url) first, then the inline images.
  const pending: ReferenceInput[] = [...plan.inputs];
  rows.forEach((r, i) => {
    pending.push({ kind: 'image', mediaId: r.id!, field: plan.inline[i].field });
  });
  const jobId = randomUUID();
  const visibility = body.visibility ?? 'private';
  await tx.insert(referenceInspirations).values({
    id,
    orgId,
    status: 'processing',
    templateSlug: plan.target.template_slug,
    templateCategory: plan.target.template_category,
    mediaKind: body.media_kind,
    visibility,
    reviewStatus: visibility === 'public' ? 'pending' : 'not_required',
    label: body.label ?? null,
    mediaIds: rows.map((r) => r.id!),
    inputs: pending,
    jobId,
    creditsDeducted: plan.unitCredits,
  });
  await ctx.queue.sendInTx(tx, referenceAnalysisJob, { referenceId: id }, jobId);
  return id;
}
