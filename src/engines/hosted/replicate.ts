// Replicate (https://replicate.com/docs/reference/http), predictions API, polled (no webhooks):
//   POST {REPLICATE_API_BASE}/v1/models/{owner}/{name}/predictions   {input}
//     or POST {REPLICATE_API_BASE}/v1/predictions                    {version, input}  (catalog `version`)
//        Authorization: Bearer {REPLICATE_API_TOKEN}
//        → 201 prediction {id, status: starting|processing|succeeded|failed|canceled, output, error, urls, …}
//   GET  /v1/predictions/{id}          polled until a terminal status
//   POST /v1/predictions/{id}/cancel   when we give up on it (job deadline)
//   Errors: {"title", "detail", "status"} (422 invalid input; 429 with Retry-After).
// The prediction's output (a URL or a list of URLs) is fetched through the guarded client. A
// failed prediction flagged by the model's safety checker ("NSFW", "flagged as sensitive",
// E005) is a content-policy refusal.
import { HostedApi, downloadOutput, inputsFor, progressOf, storeOutput, type ErrorReading, type HostedOptions } from './hosted.ts';
import {
  ProviderError,
  type GenerateOptions,
  type GenerationJob,
  type Provider,
  type ProviderJobRef,
  type ProviderResult,
} from '../generation.ts';

interface Prediction {
  id?: string;
  status?: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output?: unknown;
  error?: unknown;
}

const CONTENT_POLICY = /nsfw|flagged as sensitive|\bE005\b|safety (check|filter)|content polic/i;

function readError(_status: number, body: unknown): ErrorReading {
  const b = (body ?? {}) as { detail?: unknown; title?: unknown };
  const detail = typeof b.detail === 'string' ? b.detail : undefined;
  const title = typeof b.title === 'string' ? b.title : undefined;
  const message = [title, detail].filter(Boolean).join(': ') || undefined;
  return { message, contentPolicy: message ? CONTENT_POLICY.test(message) : false };
}

/** The first URL in a prediction's output (a string, or a list of them). */
function firstUrl(output: unknown): string | undefined {
  if (typeof output === 'string' && /^https?:\/\//.test(output)) return output;
  if (Array.isArray(output)) for (const o of output) if (typeof o === 'string' && /^https?:\/\//.test(o)) return o;
  return undefined;
}

export class ReplicateProvider implements Provider {
  readonly name = 'replicate';
  private readonly api: HostedApi;
  private readonly o: HostedOptions;

  constructor(o: HostedOptions) {
    this.o = o;
    this.api = new HostedApi('Replicate', o, `Bearer ${o.key}`, readError);
  }

  async cancel(ref: ProviderJobRef): Promise<void> {
    await this.api.call(`/v1/predictions/${encodeURIComponent(ref.id)}/cancel`, { method: 'POST' }).catch(() => {});
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    const model = job.providerModel;
    if (model?.name !== 'replicate') throw new Error('ReplicateProvider needs a replicate provider model');
    const progress = progressOf(opts.onProgress);
    const { signal } = opts;
    progress(0);
    let id = opts.resume?.provider === 'replicate' ? opts.resume.id : undefined;
    if (!id) {
      const input = await inputsFor(job, model, 'image');
      const created = (await (model.version
        ? this.api.call('/v1/predictions', { method: 'POST', json: { version: model.version, input }, signal })
        : this.api.call(`/v1/models/${model.model}/predictions`, { method: 'POST', json: { input }, signal }))) as Prediction;
      if (typeof created.id !== 'string' || !created.id)
        throw new ProviderError('Replicate created a prediction without an id', { retryable: true, code: 'provider_error' });
      id = created.id;
      await opts.onSubmitted?.({ provider: 'replicate', id });
    }
    progress(0.05);
    const predictionId = id;
    const startedAt = Date.now();
    let polls = 0;
    const done = await this.api.pollUntil(
      async () => {
        const p = (await this.api.call(`/v1/predictions/${encodeURIComponent(predictionId)}`, { method: 'GET', signal })) as Prediction;
        if (p.status === 'succeeded') return p;
        if (p.status === 'failed' || p.status === 'canceled') {
          await opts.onSubmitted?.(null);
          const message =
            typeof p.error === 'string' ? p.error : p.error ? JSON.stringify(p.error).slice(0, 500) : `prediction ${p.status}`;
          if (CONTENT_POLICY.test(message)) {
            throw new ProviderError(`Replicate refused the request under its content policy: ${message}`, {
              retryable: false,
              code: 'content_rejected',
            });
          }
          throw new ProviderError(`Replicate prediction ${predictionId} ${p.status}: ${message}`, {
            retryable: false,
            code: 'provider_error',
          });
        }
        progress(Math.min(0.85, 0.1 + 0.05 * ++polls));
        return undefined;
      },
      { signal, startedAt, id: predictionId, onTimeout: () => this.cancel({ provider: 'replicate', id: predictionId }) },
    );
    const url = firstUrl(done.output);
    if (!url)
      throw new ProviderError(`Replicate prediction ${predictionId} succeeded without an output URL`, {
        retryable: false,
        code: 'provider_invalid_output',
      });
    progress(0.9);
    const bytes = await downloadOutput('Replicate', this.o.fetcher, url, job, signal, this.api.opts.requestTimeoutMs * 5);
    const result = await storeOutput('Replicate', job, bytes, opts.workDir, this.o.pixelLimits);
    progress(1);
    return result;
  }
}
