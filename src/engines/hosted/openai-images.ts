// OpenAI Images (https://platform.openai.com/docs/api-reference/images), synchronous:
//   POST {OPENAI_API_BASE}/images/generations   JSON {model, prompt, n: 1, size, output_format}
//   POST {OPENAI_API_BASE}/images/edits         multipart: model, prompt, n, size, output_format,
//                                               image[] (the reference images, then the brand
//                                               kit's logo, up to 16)
// The prompt and images come from hostedRequest (./hosted.ts): the brand kit's guidance appended.
//        Authorization: Bearer {OPENAI_API_KEY}
//        → {created, data: [{b64_json} | {url}]}
//   Errors: {"error": {"message", "type", "param", "code"}}; code content_policy_violation or
//   moderation_blocked is a content-policy refusal; 429 carries Retry-After.
// Size: the model's sizes nearest our aspect ratio (gpt-image-*: 1024x1024, 1536x1024, 1024x1536;
// dall-e-3: 1024x1024, 1792x1024, 1024x1792); the stored output keeps the model's real size.
// No seed (the API has none) and nothing to resume: a retried attempt asks again.
import { HostedApi, downloadOutput, hostedRequest, progressOf, storeOutput, type ErrorReading, type HostedOptions } from './hosted.ts';
import { ProviderError, type GenerateOptions, type GenerationJob, type Provider, type ProviderResult } from '../generation.ts';
import { sniff } from '../../media/inspect.ts';

interface ImagesResponse {
  data?: Array<{ b64_json?: string; url?: string }>;
}

function readError(_status: number, body: unknown): ErrorReading {
  const e = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } } | undefined)?.error;
  if (!e || typeof e !== 'object') return {};
  const message = typeof e.message === 'string' ? e.message : undefined;
  return { message, contentPolicy: e.code === 'content_policy_violation' || e.code === 'moderation_blocked' };
}

const MAX_REFERENCES = 16;

function sizeFor(model: string, width: number, height: number): string {
  const r = width / height;
  const wide = model.startsWith('dall-e-3') ? '1792x1024' : '1536x1024';
  const tall = model.startsWith('dall-e-3') ? '1024x1792' : '1024x1536';
  return r > 1.15 ? wide : r < 0.87 ? tall : '1024x1024';
}

export class OpenAiImagesProvider implements Provider {
  readonly name = 'openai';
  private readonly api: HostedApi;
  private readonly o: HostedOptions;

  constructor(o: HostedOptions) {
    this.o = o;
    // One synchronous request makes the image (up to a couple of minutes): it gets the longer budget.
    const requestTimeoutMs = Math.min(o.jobTimeoutMs ?? 30 * 60_000, Math.max(o.requestTimeoutMs ?? 60_000, 180_000));
    this.api = new HostedApi('OpenAI', { ...o, requestTimeoutMs }, `Bearer ${o.key}`, readError);
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    const model = job.providerModel;
    if (model?.name !== 'openai') throw new Error('OpenAiImagesProvider needs an openai provider model');
    if (job.output !== 'image') throw new ProviderError('OpenAI Images makes images only', { retryable: false, code: 'provider_rejected' });
    const progress = progressOf(opts.onProgress);
    progress(0);
    const gptImage = model.model.startsWith('gpt-image');
    const { prompt, images } = hostedRequest(job, { multipleImages: true });
    const fields: Record<string, string | number> = {
      model: model.model,
      prompt,
      n: 1,
      size: sizeFor(model.model, job.width, job.height),
      ...(gptImage ? { output_format: job.imageFormat ?? 'png' } : { response_format: 'b64_json' }),
      ...((model.input ?? {}) as Record<string, string | number>),
    };
    if (gptImage && job.qualityTier) fields.quality = job.qualityTier;
    let res: ImagesResponse;
    if (images.length) {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, String(v));
      for (const [i, img] of images.slice(0, MAX_REFERENCES).entries()) {
        const s = await sniff(img).catch(() => undefined);
        form.append('image[]', new Blob([new Uint8Array(img)], { type: s?.mime ?? 'image/png' }), `reference-${i + 1}.${s?.ext ?? 'png'}`);
      }
      res = (await this.api.call('/images/edits', { method: 'POST', form, signal: opts.signal })) as ImagesResponse;
    } else {
      res = (await this.api.call('/images/generations', { method: 'POST', json: fields, signal: opts.signal })) as ImagesResponse;
    }
    progress(0.8);
    const first = res.data?.[0];
    let bytes: Buffer;
    if (typeof first?.b64_json === 'string') bytes = Buffer.from(first.b64_json, 'base64');
    else if (typeof first?.url === 'string')
      bytes = await downloadOutput('OpenAI', this.o.fetcher, first.url, job, opts.signal, this.api.opts.requestTimeoutMs);
    else throw new ProviderError('OpenAI answered without an image', { retryable: false, code: 'provider_invalid_output' });
    const result = await storeOutput('OpenAI', job, bytes, opts.workDir, this.o.pixelLimits);
    progress(1);
    return result;
  }
}
