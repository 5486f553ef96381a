// Generations: queueing a batch through the charged command (checks and price, one row and job
// per generation, partial batches resumed by key), reading one, and the generation's lifecycle
// (src/kernel: progress, completion, failure with exactly-once refund).
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { generations, media } from '../../db/schema/index.ts';
import { notFound } from '../../errors.ts';
import { generationQueue } from '../../jobs/queue.ts';
import { defineResource } from '../../kernel/resource.ts';
import { keyFilename } from '../../storage/keys.ts';
import { keyedRequest, runChargedCommand, type ChargedOutcome } from '../billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import { resolveGeneration, type CreateGenerationBody, type GenerationSpec, type ResolvedGeneration } from './generation-requests.ts';

export type FailureDetail = components['schemas']['FailureDetail'];
export type GenerationBatch = components['schemas']['GenerationBatch'];
type GenerationBatchItem = components['schemas']['GenerationBatchItem'];

/** POST /generations: `request_count` generations of one resolved spec, charged per generation. */
export function createGenerationBatch(
  ctx: AppContext,
  orgId: string,
  body: CreateGenerationBody,
  headerKey: string | undefined,
): Promise<GenerationBatch> {
  return runChargedCommand(ctx, {
    orgId,
    operation: 'createGeneration',
    ...keyedRequest(body, headerKey),
    ledger: { reason: 'generation_charge', reference: (batchId) => `batch:${batchId}` },
    prepare: (tx) => resolveGeneration({ db: tx, fetcher: ctx.fetcher, providers: ctx.config.provider }, orgId, body),
    enqueue: async (sp, r, { groupId: batchId }) => {
      const id = randomUUID();
      const jobId = randomUUID();
      await sp.insert(generations).values({ id, orgId, batchId, type: body.type, spec: r.spec, credits: r.unitCredits, jobId });
      await ctx.queue.sendInTx(sp, generationQueue(r.spec.output), { generationId: id }, jobId);
      return id;
    },
    respond: batchResponse,
  });
}

async function batchResponse(tx: Tx, r: ResolvedGeneration, o: ChargedOutcome): Promise<GenerationBatch> {
  // Earlier generations of a resumed batch may have moved on; new ones are generating.
  const items = new Map<string, GenerationBatchItem>(
    o.unitIds.map((id) => [id, { id, object: 'generation', status: 'generating', credits_deducted: r.unitCredits }]),
  );
  if (o.earlierUnitIds.length) {
    const rows = await tx
      .select({ id: generations.id, status: generations.status, credits: generations.credits })
      .from(generations)
      .where(inArray(generations.id, o.earlierUnitIds));
    for (const g of rows) items.set(g.id, { id: g.id, object: 'generation', status: g.status, credits_deducted: g.credits });
  }
  return {
    object: 'generation_batch',
    status: o.partial ? 'partial' : 'queued',
    request_count: r.units,
    credits_deducted: o.creditsDeducted,
    remaining_credits: o.remainingCredits,
    generations: o.unitIds.map((id) => items.get(id)!),
    error: o.partial
      ? {
          code: 'queue_unavailable',
          message: `Only ${o.unitIds.length} of ${r.units} generations could be queued; retry with the same idempotency key to queue the rest`,
          retryable: true,
          context: { queued: o.unitIds.length, requested: r.units },
        }
      : null,
  };
}

export type GenerationView = components['schemas']['Generation'];
type OutputContentType = components['schemas']['GenerationOutput']['content_type'];

/** GET /generations/{id}; `db` is a transaction when its terminal state is being written (the webhook event's data). */
export async function getGeneration(
  ctx: AppContext,
  orgId: string,
  id: string,
  db: AppContext['db'] | Tx = ctx.db,
): Promise<GenerationView> {
  const [row] = await db
    .select({ g: generations, m: media })
    .from(generations)
    .leftJoin(media, eq(media.id, generations.outputMediaId))
    .where(and(eq(generations.id, id), eq(generations.orgId, orgId)));
  if (!row) throw notFound('Generation', id, 'generation');
  const { g, m } = row;
  const done = g.status === 'completed' && m;
  return {
    id: g.id,
    object: 'generation',
    type: g.type,
    status: g.status,
    url: done ? ctx.storage.signedUrl(m.storageKey) : null,
    error: (g.error as FailureDetail | null) ?? null,
    progress: g.progress,
    output: done
      ? {
          content_type: m.contentType as OutputContentType,
          width: m.width,
          height: m.height,
          duration_seconds: m.durationSeconds,
          size_bytes: m.sizeBytes,
        }
      : null,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

/**
 * The generation's lifecycle (src/kernel/resource.ts): generating → completed | error; a failure
 * refunds its credits once and each terminal state writes its webhook event.
 */
export const generationResource = defineResource({
  name: 'generation',
  table: generations,
  columns: {
    id: 'id',
    org: 'orgId',
    status: 'status',
    error: 'error',
    updatedAt: 'updatedAt',
    attempts: 'attempts',
    startedAt: 'startedAt',
    progress: 'progress',
    completedAt: 'completedAt',
    credits: 'credits',
    refundedAt: 'refundedAt',
    output: 'outputMediaId',
    jobId: 'jobId',
  },
  statuses: { running: 'generating', completed: 'completed', failed: 'error' },
  refund: { reason: 'generation_refund', reference: (id: string) => `generation:${id}` },
  events: { completed: 'generation.completed', failed: 'generation.failed' },
  view: (ctx, tx, row) => getGeneration(ctx, row.orgId, row.id, tx),
});

// ---------------------------------------------------------------------------------------------
// Worker side. Every step is safe to run twice (jobs are delivered at least once).

export interface GenerationRow {
  id: string;
  orgId: string;
  type: string;
  status: string;
  spec: GenerationSpec;
  credits: number;
  /** The hosted provider's job an earlier attempt submitted (see saveProviderJob). */
  providerJob?: unknown;
}

export async function startAttempt(ctx: AppContext, id: string): Promise<GenerationRow | undefined> {
  const row = await generationResource.start(ctx, id);
  return row ? { ...row, spec: row.spec as GenerationSpec } : undefined;
}

/**
 * Records (or with null forgets) the hosted provider's job of a generation still generating,
 * before the worker polls it: a retry after a crash resumes it instead of submitting again.
 */
export async function saveProviderJob(ctx: AppContext, id: string, ref: object | null): Promise<void> {
  await generationResource.record(ctx, id, { providerJob: ref });
}

export interface StoredOutput {
  storageKey: string;
  contentType: string;
  bytes: number;
  width: number;
  height: number;
  durationSeconds?: number;
  hasAudio?: boolean;
}

/** Records the output and marks the generation completed, unless it already finished. */
export function completeGeneration(ctx: AppContext, g: GenerationRow, out: StoredOutput): Promise<boolean> {
  return generationResource.complete(ctx, g.id, {
    media: {
      orgId: g.orgId,
      kind: g.spec.output,
      status: 'completed',
      source: 'generation',
      title: g.spec.title,
      filename: keyFilename(out.storageKey),
      contentType: out.contentType,
      sizeBytes: out.bytes,
      storageKey: out.storageKey,
      width: out.width,
      height: out.height,
      durationSeconds: out.durationSeconds ?? null,
      hasAudio: out.hasAudio ?? null,
      indexedText: g.spec.prompt || null,
    },
  });
}

/** Terminal failure: marks the generation failed and refunds its credits, exactly once. */
export const failGeneration = (ctx: AppContext, id: string, detail: FailureDetail): Promise<boolean> =>
  generationResource.fail(ctx, id, detail);
