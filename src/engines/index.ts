// Entry point of the providers: the interface, the dimension helper, and the provider a job is
// made by. The local renderer makes everything unless the catalog names a hosted model for an
// AI model variant (spec/catalog.yaml `provider`) AND that provider's key is configured
// (REPLICATE_API_TOKEN, FAL_KEY, OPENAI_API_KEY; see ProviderConfig in src/config.ts and the
// README): then its adapter (./replicate.ts, ./fal.ts, ./openai-images.ts) makes it. Without a
// key the variant renders locally, so a deployment with no configuration works end to end.
import type { ProviderConfig } from '../config.ts';
import type { PixelLimits } from '../media/limits.ts';
import type { GuardedFetcher } from '../net/guarded-fetch.ts';
import { FalProvider } from './hosted/fal.ts';
import type { HostedOptions } from './hosted/hosted.ts';
import { LocalProvider } from './local/ads.ts';
import { OpenAiImagesProvider } from './hosted/openai-images.ts';
import { ReplicateProvider } from './hosted/replicate.ts';
import type { GenerateOptions, GenerationJob, Provider, ProviderJobRef, ProviderModel, ProviderResult } from './generation.ts';

export { LocalProvider } from './local/ads.ts';
export { ReplicateProvider } from './hosted/replicate.ts';
export { FalProvider } from './hosted/fal.ts';
export { OpenAiImagesProvider } from './hosted/openai-images.ts';
export * from './generation.ts';

/**
 * The hosted provider that makes a variant whose catalog entry names `model`, under this
 * configuration: its provider when that provider's key is set, else none (the local renderer).
 * The one rule both the worker (ProviderRouter) and request validation (POST /generations, which
 * refuses inputs a hosted model cannot use before charging) apply.
 */
export function hostedProviderOf(cfg: ProviderConfig, model: ProviderModel | undefined): ProviderModel['name'] | undefined {
  return model && cfg[model.name]?.key ? model.name : undefined;
}

/** Picks, per job, the hosted adapter its catalog entry names (when keyed) or the local renderer. */
export class ProviderRouter implements Provider {
  readonly name = 'router';
  readonly local: Provider = new LocalProvider();
  readonly hosted: Partial<Record<'replicate' | 'fal' | 'openai', Provider>> = {};
  private readonly cfg: ProviderConfig;

  constructor(cfg: ProviderConfig, fetcher: GuardedFetcher | undefined, limits?: PixelLimits) {
    this.cfg = cfg;
    if (!fetcher) return; // no way to fetch outputs: local only
    const opts = (e: ProviderConfig['replicate']): HostedOptions => ({
      baseUrl: e.baseUrl,
      key: e.key!,
      fetcher,
      pollMs: cfg.pollMs,
      requestTimeoutMs: cfg.requestTimeoutMs,
      jobTimeoutMs: cfg.jobTimeoutMs,
      pixelLimits: limits,
    });
    if (cfg.replicate.key) this.hosted.replicate = new ReplicateProvider(opts(cfg.replicate));
    if (cfg.fal.key) this.hosted.fal = new FalProvider(opts(cfg.fal));
    if (cfg.openai.key) this.hosted.openai = new OpenAiImagesProvider(opts(cfg.openai));
  }

  /** The provider that makes this job. */
  for(job: GenerationJob): Provider {
    const name = hostedProviderOf(this.cfg, job.providerModel);
    return (name && this.hosted[name]) || this.local;
  }

  generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    return this.for(job).generate(job, opts);
  }

  async cancel(ref: ProviderJobRef): Promise<void> {
    await this.hosted[ref.provider]?.cancel?.(ref);
  }
}

/** The providers of a process (see ProviderRouter); `fetcher` downloads hosted outputs. */
export function createProvider(cfg: ProviderConfig, limits?: PixelLimits, fetcher?: GuardedFetcher): ProviderRouter {
  return new ProviderRouter(cfg, fetcher, limits);
}
