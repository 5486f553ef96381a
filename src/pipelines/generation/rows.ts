// The generation's rows: reading one (its view), and its lifecycle (src/kernel: progress,
// completion, failure with exactly-once refund).
import type { MediaManifest } from '../../media/quality/manifest.ts';
import { and, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { generations, media } from '../../db/schema/index.ts';
import { notFound } from '../../errors.ts';
import { isUuid } from '../../services/workspaces/organizations.ts';
import { cancelWork, defineResource } from '../../kernel/resource.ts';
import { keyFilename } from '../../storage/keys.ts';
import type { Tx } from '../../db/client.ts';
import type { GenerationSpec } from './request.ts';

export type FailureDetail = components['schemas']['FailureDetail'];

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
  return generationView(ctx, row.g, row.m);
}

/** A generation row (and its output media, once completed) as GET /generations/{id} and GET /generations show it. */
export function generationView(ctx: AppContext, g: typeof generations.$inferSelect, m: typeof media.$inferSelect | null): GenerationView {
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
    engine: (g.spec as GenerationSpec).engine ?? null,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

/**
 * The generation jobs' queues (job.ts declares the jobs on them): named here, where the resource
 * is declared, because cancelling a queued generation cancels its job (and job.ts imports this module).
 */
export const GENERATION_QUEUES = { image: 'generation', video: 'generation-video' } as const;

/**
 * The generation's lifecycle (src/kernel/resource.ts): generating → completed | error | canceled; a
 * failure refunds its credits once and each terminal state writes its webhook event. It can be
 * canceled queued or running (cancelGeneration): refunded in full unless a paid provider call of
 * it has completed (then not at all), its queued job cancelled or its worker stopped (run.ts).
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
    state: 'state',
  },
  statuses: { running: 'generating', completed: 'completed', failed: 'error', canceled: 'canceled' },
  refund: { reason: 'generation_refund', reference: (id: string) => `generation:${id}` },
  events: { completed: 'generation.completed', failed: 'generation.failed', canceled: 'generation.canceled' },
  view: (ctx, tx, row) => getGeneration(ctx, row.orgId, row.id, tx),
  cancel: cancelWork('Generation', 'generation', (row) =>
    (row.spec as GenerationSpec).output === 'video' ? GENERATION_QUEUES.video : GENERATION_QUEUES.image,
  ),
});

/**
 * Cancels a generation (POST /generations/{id}/cancel, MCP tasks/cancel): canceled, refunded by the
 * rule (in full unless a paid provider call of it has completed), its queued job cancelled or its
 * running worker stopped within about a second; the generation as GET /generations/{id} returns
 * it. Canceling a canceled one answers it again (no second refund); a finished one is 409
 * conflict; another workspace's is 404 as for GET.
 */
export async function cancelGeneration(ctx: AppContext, orgId: string, id: string): Promise<GenerationView> {
  if (!isUuid(id) || !(await generationResource.cancel(ctx, orgId, id))) throw notFound('Generation', id, 'generation');
  return getGeneration(ctx, orgId, id);
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

/** One engine call of a stage, for reconciling provider bills: who made it, the provider's job id, how long it took. */
export interface EngineCall {
  /** The engine (local, replicate, fal, openai, comfyui). */
  engine: string;
  /** The provider's model id, the catalog model for ComfyUI; null for the local renderer. */
  model: string | null;
  /** The provider's job (prediction, request, prompt) id; null for a synchronous call. */
  providerJobId: string | null;
  seconds: number;
}

/** The provider job id stored on the generation (saveProviderJob), if any. */
export async function providerJobIdOf(ctx: AppContext, id: string): Promise<string | null> {
  const [row] = await ctx.db.select({ job: generations.providerJob }).from(generations).where(eq(generations.id, id));
  return (row?.job as { id?: string } | null)?.id ?? null;
}

export interface StoredOutput {
  /** The engine call that made it (absent on outputs stored before calls were recorded, and on composited templates: see their generating stage). */
  call?: EngineCall;
  storageKey: string;
  contentType: string;
  bytes: number;
  width: number;
  height: number;
  durationSeconds?: number;
  hasAudio?: boolean;
  /** What the local renderer placed (texts, their boxes and times), for the media quality checker; never served. */
  manifest?: MediaManifest;
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
