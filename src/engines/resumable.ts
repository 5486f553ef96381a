// A paid provider job run so that it is paid once: the job an earlier attempt submitted is
// resumed (polled) instead of submitted again; a new one's id is stored before the first poll
// (the engine awaits onSubmitted); and a job no attempt will use (the last attempt failed, or a
// failure no retry follows) is canceled at its provider rather than paid for. A stopping worker
// (aborted signal) leaves it running for the next attempt to resume. Where the id is kept is the
// caller's: a generation's provider_job column, an item's record in a resource's state
// (src/kernel/item-state.ts).
import type { GenerateOptions, GenerationJob, Provider, ProviderJobRef, ProviderResult } from './generation.ts';
import { cancelHostedJob, type EngineSetup } from './index.ts';

/** Where a job's provider job is kept. */
export interface JobStore {
  /** What an earlier attempt stored, if anything. */
  stored: ProviderJobRef | undefined;
  /** Stores (or with null forgets) the provider job. */
  save(ref: ProviderJobRef | null): Promise<void>;
  /** Whether no attempt will use the job after `err`: it is then canceled at its provider. */
  abandon(err: unknown): boolean;
}

/** Runs `engine` for `request`, resuming the stored provider job and storing a new one before polling. */
export async function runProviderJob(
  setup: EngineSetup,
  engine: { generate: Provider['generate'] },
  request: GenerationJob,
  opts: Omit<GenerateOptions, 'resume' | 'onSubmitted'> & { signal: AbortSignal; jobs: JobStore },
): Promise<ProviderResult> {
  const { jobs, ...rest } = opts;
  let submitted = jobs.stored;
  return engine
    .generate(request, {
      ...rest,
      resume: jobs.stored,
      onSubmitted: async (ref) => {
        submitted = ref ?? undefined;
        await jobs.save(ref);
      },
    })
    .catch(async (err: unknown) => {
      if (submitted && !opts.signal.aborted && jobs.abandon(err)) await cancelHostedJob(setup, submitted).catch(() => {});
      throw err;
    });
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
