// A paid provider job run so that it is paid once: the job an earlier attempt submitted is
// resumed (polled) instead of submitted again; a new one's id is stored before the first poll
// (the engine awaits onSubmitted); and a job no attempt will use (the last attempt failed, or a
// failure no retry follows) is canceled at its provider rather than paid for. A stopping worker
// (aborted signal) leaves it running for the next attempt to resume; work its owner canceled (the
// signal aborted with a WorkCanceled) has its provider job canceled too. A provider job whose
// result came back is a paid call completed: the store's `paid` records it (the cancel refund
// rule, src/kernel/resource.ts). Where the id is kept is the
// caller's: a generation's provider_job column, an item's record in a resource's state
// (src/kernel/item-state.ts).
import type { GenerateOptions, GenerationJob, Provider, ProviderJobRef, ProviderResult } from './generation.ts';
import { cancelHostedJob, type EngineSetup } from './index.ts';

/**
 * The abort reason of work its owner canceled (POST …/cancel, MCP tasks/cancel): unlike a stopping
 * worker's abort, no attempt will follow, so its provider job is canceled at the provider.
 */
export class WorkCanceled extends Error {
  constructor(what: string) {
    super(`The ${what} was canceled`);
    this.name = 'WorkCanceled';
  }
}

/** Whether `signal` was aborted because the work was canceled (WorkCanceled). */
export const canceledBy = (signal: AbortSignal): boolean => signal.aborted && signal.reason instanceof WorkCanceled;

/** Where a job's provider job is kept. */
export interface JobStore {
  /** What an earlier attempt stored, if anything. */
  stored: ProviderJobRef | undefined;
  /** Stores (or with null forgets) the provider job. */
  save(ref: ProviderJobRef | null): Promise<void>;
  /** Whether no attempt will use the job after `err`: it is then canceled at its provider. */
  abandon(err: unknown): boolean;
  /** Records that a paid provider's job (Replicate, fal) delivered its result: a paid call completed. */
  paid?(ref: ProviderJobRef): Promise<void>;
}

/** The providers whose jobs are paid for (ComfyUI is the operator's own server). */
const PAID_PROVIDERS = new Set<ProviderJobRef['provider']>(['replicate', 'fal']);

/** Runs `engine` for `request`, resuming the stored provider job and storing a new one before polling. */
export async function runProviderJob(
  setup: EngineSetup,
  engine: { generate: Provider['generate'] },
  request: GenerationJob,
  opts: Omit<GenerateOptions, 'resume' | 'onSubmitted'> & { signal: AbortSignal; jobs: JobStore },
): Promise<ProviderResult> {
  const { jobs, ...rest } = opts;
  let submitted = jobs.stored;
  const result = await engine
    .generate(request, {
      ...rest,
      resume: jobs.stored,
      onSubmitted: async (ref) => {
        submitted = ref ?? undefined;
        await jobs.save(ref);
      },
    })
    .catch(async (err: unknown) => {
      const abandoned = canceledBy(opts.signal) || (!opts.signal.aborted && jobs.abandon(err));
      if (submitted && abandoned) await cancelHostedJob(setup, submitted).catch(() => {});
      throw err;
    });
  if (submitted && PAID_PROVIDERS.has(submitted.provider)) await jobs.paid?.(submitted);
  return result;
}

/** runProviderJob, and the id of the provider job that made the result (the one resumed or the one submitted) for the item's record. */
export async function runRecordedJob(
  setup: EngineSetup,
  engine: { generate: Provider['generate'] },
  request: GenerationJob,
  opts: Omit<GenerateOptions, 'resume' | 'onSubmitted'> & { signal: AbortSignal; jobs: JobStore },
): Promise<{ result: ProviderResult; jobId: string | null }> {
  const { jobs } = opts;
  let submitted = jobs.stored;
  const result = await runProviderJob(setup, engine, request, {
    ...opts,
    jobs: {
      ...jobs,
      save: async (ref) => {
        if (ref) submitted = ref;
        await jobs.save(ref);
      },
    },
  });
  return { result, jobId: submitted?.id ?? null };
}

/** A stored provider job read back, or undefined when it is not one (nothing stored, or a row written by other code). */
export function readJobRef(value: unknown): ProviderJobRef | undefined {
  const r = value as Partial<ProviderJobRef> | null | undefined;
  return r && (r.provider === 'replicate' || r.provider === 'fal' || r.provider === 'comfyui') && typeof r.id === 'string'
    ? (r as ProviderJobRef)
    : undefined;
}
