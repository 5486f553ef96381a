// Generations: queueing a batch (credits, idempotency, jobs in one transaction), reading one,
// and the worker-side state changes (progress, completion, failure with exactly-once refund).
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { components } from '../../generated/openapi.d.ts';
import type { AppContext } from '../context.ts';
import { generations, media, organizations } from '../db/schema/index.ts';
import { ApiError, notFound } from '../errors.ts';
import { generationQueue } from '../jobs/queue.ts';
import { applyCreditChange, type Tx } from './credits.ts';
import { resolveGeneration, type CreateGenerationBody, type GenerationSpec, type ResolvedGeneration } from './generation-requests.ts';
import { claimIdempotent, fingerprint, recordIdempotent, type IdemKey } from './idempotency.ts';

export interface FailureDetail {
  code: string;
  message: string;
  retryable: boolean;
  context: Record<string, unknown>;
}

interface BatchProgress {
  batchId: string;
  generationIds: string[];
  creditsDeducted: number;
}

type GenerationStatus = 'generating' | 'completed' | 'error';

export interface GenerationBatch {
  object: 'generation_batch';
  status: 'queued' | 'partial';
  request_count: number;
  credits_deducted: number;
  remaining_credits: number;
  generations: { id: string; object: 'generation'; status: 'generating' | 'completed' | 'error'; credits_deducted: number }[];
  error: FailureDetail | null;
  idempotent_replay?: boolean;
}

const OPERATION = 'createGeneration';

export async function createGenerationBatch(
  ctx: AppContext,
  orgId: string,
  body: CreateGenerationBody,
  headerKey: string | undefined,
): Promise<GenerationBatch> {
  const resolved = await resolveGeneration({ db: ctx.db, fetcher: ctx.fetcher }, orgId, body);
  const key = headerKey ?? body.idempotency_key;
  const { idempotency_key: _ignored, ...request } = body;
  const idem = key ? { key: { orgId, operation: OPERATION, key }, print: fingerprint(request) } : undefined;
  return queueBatch(ctx, orgId, body.type, resolved, idem);
}

async function balanceOf(tx: Tx, orgId: string): Promise<number> {
  const [row] = await tx.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId));
  return row.credits;
}

/**
 * One transaction: the idempotency claim, each generation row and its pg-boss job in a savepoint
 * of their own (a job the queue refuses leaves the batch partial), one conditional deduction for
 * what was queued, and the idempotency record. Any failure before commit leaves nothing behind.
 */
async function queueBatch(
  ctx: AppContext,
  orgId: string,
  type: CreateGenerationBody['type'],
  r: ResolvedGeneration,
  idem: { key: IdemKey; print: string } | undefined,
): Promise<GenerationBatch> {
  return ctx.db.transaction(async (tx) => {
    let prior: BatchProgress = { batchId: randomUUID(), generationIds: [], creditsDeducted: 0 };
    if (idem) {
      const start = await claimIdempotent(tx, idem.key, idem.print);
      if (start.kind === 'replay') return { ...(start.response as GenerationBatch), idempotent_replay: true };
      if (start.kind === 'resume') prior = start.progress as BatchProgress;
    }
    const toQueue = Math.max(0, r.count - prior.generationIds.length);
    const queued: string[] = [];
    for (let i = 0; i < toQueue; i++) {
      try {
        queued.push(
          await tx.transaction(async (sp) => {
            const id = randomUUID();
            const jobId = randomUUID();
            await sp.insert(generations).values({ id, orgId, batchId: prior.batchId, type, spec: r.spec, credits: r.unitCredits, jobId });
            await ctx.queue.sendInTx(sp, generationQueue(r.spec.output), { generationId: id }, jobId);
            return id;
          }),
        );
      } catch (err) {
        ctx.log.warn({ err: String(err), batch: prior.batchId }, 'a generation could not be queued');
        break;
      }
    }
    // The database's error (its statement and parameters) is logged above, never sent to the client.
    if (toQueue > 0 && queued.length === 0) {
      throw new ApiError('server_error', 'No generation could be queued; retry with the same idempotency key', {});
    }

    const all = [...prior.generationIds, ...queued];
    // Earlier generations of a resumed batch may have moved on; new ones are generating.
    const statuses = new Map(all.map((id) => [id, { status: 'generating' as GenerationStatus, credits: r.unitCredits }]));
    if (prior.generationIds.length) {
      const rows = await tx.select({ id: generations.id, status: generations.status, credits: generations.credits }).from(generations).where(inArray(generations.id, prior.generationIds));
      for (const g of rows) statuses.set(g.id, g);
    }
    // The deduction comes last so the workspace's row lock is held as briefly as possible.
    const cost = r.unitCredits * queued.length;
    let balance: number;
    if (cost > 0) {
      const after = await applyCreditChange(tx, { orgId, delta: -cost, reason: 'generation_charge', reference: `batch:${prior.batchId}` });
      if (after === null) {
        const available = await balanceOf(tx, orgId);
        throw new ApiError('insufficient_credits', `This request needs ${r.unitCredits * toQueue} credits and the workspace has ${available}`, {
          credits_required: r.unitCredits * toQueue,
          credits_available: available,
        });
      }
      balance = after;
    } else balance = await balanceOf(tx, orgId);

    const partial = all.length < r.count;
    const creditsDeducted = prior.creditsDeducted + cost;
    const response: GenerationBatch = {
      object: 'generation_batch',
      status: partial ? 'partial' : 'queued',
      request_count: r.count,
      credits_deducted: creditsDeducted,
      remaining_credits: balance,
      generations: all.map((id) => ({ id, object: 'generation', status: statuses.get(id)!.status, credits_deducted: statuses.get(id)!.credits })),
      error: partial
        ? {
            code: 'queue_unavailable',
            message: `Only ${all.length} of ${r.count} generations could be queued; retry with the same idempotency key to queue the rest`,
            retryable: true,
            context: { queued: all.length, requested: r.count },
          }
        : null,
    };
    if (idem) {
      await recordIdempotent(tx, idem.key, idem.print, {
        state: partial ? 'partial' : 'completed',
        response,
        progress: { batchId: prior.batchId, generationIds: all, creditsDeducted },
      });
    }
    return response;
  });
}

export type GenerationView = components['schemas']['Generation'];
type OutputContentType = components['schemas']['GenerationOutput']['content_type'];

export async function getGeneration(ctx: AppContext, orgId: string, id: string): Promise<GenerationView> {
  const [row] = await ctx.db
    .select({ g: generations, m: media })
    .from(generations)
    .leftJoin(media, eq(media.id, generations.outputMediaId))
    .where(and(eq(generations.id, id), eq(generations.orgId, orgId)));
  if (!row) throw notFound('Generation', id);
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
      ? { content_type: m.contentType as OutputContentType, width: m.width, height: m.height, duration_seconds: m.durationSeconds, size_bytes: m.sizeBytes }
      : null,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Worker side. Every step is safe to run twice (jobs are delivered at least once).

export interface GenerationRow {
  id: string;
  orgId: string;
  type: string;
  status: string;
  spec: GenerationSpec;
  credits: number;
}

export async function startAttempt(ctx: AppContext, id: string): Promise<GenerationRow | undefined> {
  const [row] = await ctx.db
    .update(generations)
    .set({ attempts: sql`${generations.attempts} + 1`, startedAt: sql`coalesce(${generations.startedAt}, now())`, updatedAt: new Date() })
    .where(and(eq(generations.id, id), eq(generations.status, 'generating')))
    .returning();
  return row ? { ...row, spec: row.spec as GenerationSpec } : undefined;
}

export async function reportProgress(ctx: AppContext, id: string, percent: number): Promise<void> {
  await ctx.db
    .update(generations)
    .set({ progress: Math.max(0, Math.min(99, Math.round(percent))), updatedAt: new Date() })
    .where(and(eq(generations.id, id), eq(generations.status, 'generating')));
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
export async function completeGeneration(ctx: AppContext, g: GenerationRow, out: StoredOutput): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [m] = await tx
      .insert(media)
      .values({
        orgId: g.orgId,
        kind: g.spec.output,
        status: 'completed',
        source: 'generation',
        title: g.spec.title,
        filename: out.storageKey.split('/').pop(),
        contentType: out.contentType,
        sizeBytes: out.bytes,
        storageKey: out.storageKey,
        width: out.width,
        height: out.height,
        durationSeconds: out.durationSeconds ?? null,
        hasAudio: out.hasAudio ?? null,
        indexedText: g.spec.prompt || null,
      })
      .returning({ id: media.id });
    const done = await tx
      .update(generations)
      .set({ status: 'completed', outputMediaId: m.id, progress: 100, completedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(generations.id, g.id), eq(generations.status, 'generating')))
      .returning({ id: generations.id });
    if (!done.length) tx.rollback();
    return true;
  }).catch((err) => {
    if (err instanceof Error && err.name === 'TransactionRollbackError') return false;
    throw err;
  });
}

/** Terminal failure: marks the generation failed and refunds its credits, exactly once. */
export async function failGeneration(ctx: AppContext, id: string, detail: FailureDetail): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [g] = await tx
      .update(generations)
      .set({ status: 'error', error: detail, refundedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(generations.id, id), eq(generations.status, 'generating')))
      .returning({ orgId: generations.orgId, credits: generations.credits });
    if (!g) return false;
    if (g.credits > 0) await applyCreditChange(tx, { orgId: g.orgId, delta: g.credits, reason: 'generation_refund', reference: `generation:${id}` });
    return true;
  });
}
