// fal (https://docs.fal.ai/model-apis/model-endpoints/queue), queue API, polled:
//   POST {FAL_QUEUE_BASE}/{endpoint id}            the model input as the JSON body
//        Authorization: Key {FAL_KEY}
//        → {request_id, status_url, response_url, cancel_url, queue_position}
//   GET  {FAL_QUEUE_BASE}/{app}/requests/{id}/status   → {status: IN_QUEUE|IN_PROGRESS|COMPLETED, …}
//   GET  {FAL_QUEUE_BASE}/{app}/requests/{id}          → the model's output ({images: [{url}]}, {video: {url}})
//                                                         or the model's error ({"detail": …})
//   PUT  {FAL_QUEUE_BASE}/{app}/requests/{id}/cancel   when we give up on it (job deadline)
// {app} is the endpoint id's first two segments ("fal-ai/veo3/fast" → "fal-ai/veo3"), as
// @fal-ai/client builds these paths. Errors: {"detail": "…"} or {"detail": [{loc, msg, type}]};
// type "content_policy_violation" (or an output flagged has_nsfw_concepts) is a content-policy
// refusal. Output URLs (fal.media) are fetched through the guarded client.
import { HostedApi, downloadOutput, inputsFor, progressOf, storeOutput, type ErrorReading, type HostedOptions } from './hosted.ts';
import {
  ProviderError,
  type GenerateOptions,
  type GenerationJob,
  type Provider,
  type ProviderJobRef,
  type ProviderResult,
} from '../generation.ts';

interface QueueStatus {
  request_id?: string;
  status?: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  queue_position?: number;
  error?: unknown;
  error_type?: unknown;
}

interface FalOutput {
  images?: Array<{ url?: string }>;
  image?: { url?: string };
  video?: { url?: string };
  has_nsfw_concepts?: boolean[];
}

/** fal's error bodies: {"detail": "…"} or {"detail": [{loc, msg, type}]}; type content_policy_violation is a content-policy refusal. */
function readError(_status: number, body: unknown): ErrorReading {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return { message: detail, contentPolicy: /content[_ ]policy/i.test(detail) };
  if (Array.isArray(detail)) {
    const items = detail as Array<{ msg?: unknown; type?: unknown; loc?: unknown }>;
    const message = items
      .map((d) => `${Array.isArray(d.loc) ? `${d.loc.join('.')}: ` : ''}${typeof d.msg === 'string' ? d.msg : JSON.stringify(d)}`)
      .join('; ');
    return { message, contentPolicy: items.some((d) => d.type === 'content_policy_violation') };
  }
  return {};
}

/** "owner/alias" of an endpoint id, the root its /requests/{id} paths live under. */
export function falApp(endpointId: string): string {
  return endpointId.split('/').slice(0, 2).join('/');
}

/** The queue API at FAL_QUEUE_BASE with the `Authorization: Key …` header and fal's error bodies read (the speech engine's too). */
export function falQueueApi(o: Omit<HostedOptions, 'fetcher' | 'pixelLimits'>): HostedApi {
  return new HostedApi('fal', o, `Key ${o.key}`, readError);
}

const requestRoot = (ref: ProviderJobRef) => `/${ref.app}/requests/${encodeURIComponent(ref.id)}`;

/** Submits `input` to the endpoint's queue: the request's reference (its id under the endpoint's app). */
export async function falSubmit(api: HostedApi, endpointId: string, input: unknown, signal?: AbortSignal): Promise<ProviderJobRef> {
  const submitted = (await api.call(`/${endpointId}`, { method: 'POST', json: input, signal })) as QueueStatus;
  if (typeof submitted.request_id !== 'string' || !submitted.request_id)
    throw new ProviderError('fal queued the request without a request_id', { retryable: true, code: 'provider_error' });
  return { provider: 'fal', id: submitted.request_id, app: falApp(endpointId) };
}

/** Best effort: PUT …/cancel. */
export async function falCancel(api: HostedApi, ref: ProviderJobRef): Promise<void> {
  if (!ref.app) return;
  await api.call(`${requestRoot(ref)}/cancel`, { method: 'PUT' }).catch(() => {});
}

/** Polls the request's status until COMPLETED (each other status to `onStatus`); past the job deadline it is canceled and a `timeout` thrown. */
export async function falCompleted(
  api: HostedApi,
  ref: ProviderJobRef,
  opts: { signal?: AbortSignal; onStatus?: (status: QueueStatus['status']) => void },
): Promise<void> {
  const { signal } = opts;
  await api.pollUntil(
    async () => {
      const s = (await api.call(`${requestRoot(ref)}/status`, { method: 'GET', signal })) as QueueStatus;
      if (s.status === 'COMPLETED') return true;
      opts.onStatus?.(s.status);
      return undefined;
    },
    { signal, startedAt: Date.now(), id: ref.id, onTimeout: () => falCancel(api, ref) },
  );
}

/** A completed request's result: the model's output, or the model's error as a ProviderError. */
export async function falOutput(api: HostedApi, ref: ProviderJobRef, signal?: AbortSignal): Promise<unknown> {
  return api.call(requestRoot(ref), { method: 'GET', signal });
}

export class FalProvider implements Provider {
  readonly name = 'fal';
  private readonly api: HostedApi;
  private readonly o: HostedOptions;

  constructor(o: HostedOptions) {
    this.o = o;
    this.api = falQueueApi(o);
  }

  async cancel(ref: ProviderJobRef): Promise<void> {
    await falCancel(this.api, ref);
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    const model = job.providerModel;
    if (model?.name !== 'fal') throw new Error('FalProvider needs a fal provider model');
    const progress = progressOf(opts.onProgress);
    const { signal } = opts;
    progress(0);
    let ref = opts.resume?.provider === 'fal' && opts.resume.app ? opts.resume : undefined;
    if (!ref) {
      ref = await falSubmit(this.api, model.model, await inputsFor(job, model, 'image_url'), signal);
      await opts.onSubmitted?.(ref);
    }
    progress(0.05);
    let polls = 0;
    await falCompleted(this.api, ref, {
      signal,
      onStatus: (status) => progress(Math.min(0.85, (status === 'IN_PROGRESS' ? 0.3 : 0.1) + 0.03 * ++polls)),
    });
    let out: FalOutput;
    try {
      out = (await falOutput(this.api, ref, signal)) as FalOutput;
    } catch (err) {
      // The model failed the request: a new attempt must submit again, not read the same error.
      if (err instanceof ProviderError && !err.retryable) await opts.onSubmitted?.(null);
      throw err;
    }
    if (out.has_nsfw_concepts?.some(Boolean)) {
      throw new ProviderError('fal refused the request under its content policy: the output was flagged by the safety checker', {
        retryable: false,
        code: 'content_rejected',
      });
    }
    const url = out.images?.[0]?.url ?? out.image?.url ?? out.video?.url;
    if (typeof url !== 'string')
      throw new ProviderError(`fal request ${ref.id} completed without an output URL`, {
        retryable: false,
        code: 'provider_invalid_output',
      });
    progress(0.9);
    const bytes = await downloadOutput('fal', this.o.fetcher, url, job, signal, this.api.opts.requestTimeoutMs * 5);
    const result = await storeOutput('fal', job, bytes, opts.workDir, this.o.pixelLimits);
    progress(1);
    return result;
  }
}
