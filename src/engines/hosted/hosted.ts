// What the hosted-provider adapters (./replicate.ts, ./fal.ts, ./openai-images.ts) share:
//   - HostedApi: one JSON (or multipart) exchange with a provider's API at its configured base
//     URL (operator configuration, not a user URL, so plain fetch), with a per-request timeout,
//     rate limits waited out in place (429: Retry-After honoured, capped, a few times, then a
//     retryable failure so the job retries with backoff), 5xx and network failures retryable,
//     other 4xx not, and content-policy refusals turned into `content_rejected` (not retryable:
//     the generation fails and is refunded); the stock engines (../stock/) search through it too,
//     with their own rate-limit headers and, for a key sent in the URL, that key kept out of errors
//     (ApiShape);
//   - pollUntil: the polling loop with the job deadline (PROVIDER_JOB_TIMEOUT_MS);
//   - storeOutput: the output file fetched through the guarded client (src/net/: provider CDNs
//     are hosts we do not control), then checked like any upload: sniffed, decoded by sharp or
//     probed by ffprobe, pixels bounded (MEDIA_MAX_PIXELS, MEDIA_MAX_DIMENSION), converted to the
//     requested image format when the model answered another;
//   - the request fields every adapter maps (`hostedRequest`, then `inputsFor` for Replicate and
//     fal): the prompt with the brand kit's guidance (name, colours by role, fonts), aspect ratio,
//     resolution, duration, reference images (and the kit's logo, for models that take several)
//     and media as data URIs, and a seed derived from the generation id.
// Aborts (the job's signal) reject with the signal's reason and leave the hosted job running: its
// id is stored on the generation and the next delivery resumes it.
import { randomInt } from 'node:crypto';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import type { MediaFile } from '../../media/ffmpeg.ts';
import { sniff } from '../../media/inspect.ts';
import { DEFAULT_PIXEL_LIMITS, type PixelLimits } from '../../media/limits.ts';
import type { GuardedFetcher } from '../../net/guarded-fetch.ts';
import {
  CONTENT_TYPES,
  ProviderError,
  type GenerationJob,
  type ImageFormat,
  type ProviderModel,
  type ProviderResult,
} from '../generation.ts';
import { checkMediaBytes, fetchMediaBytes } from '../../media/fetch-media.ts';

export interface HostedOptions {
  /** REPLICATE_API_BASE, FAL_QUEUE_BASE or OPENAI_API_BASE (no trailing slash). */
  baseUrl: string;
  /** REPLICATE_API_TOKEN, FAL_KEY or OPENAI_API_KEY (none for a self-hosted server without authentication). */
  key?: string;
  /** Downloads of output URLs. */
  fetcher: GuardedFetcher;
  /** PROVIDER_POLL_MS */
  pollMs?: number;
  /** PROVIDER_TIMEOUT_MS: one API request. */
  requestTimeoutMs?: number;
  /** PROVIDER_JOB_TIMEOUT_MS: a hosted job not finished by then is canceled and the generation fails. */
  jobTimeoutMs?: number;
  pixelLimits?: PixelLimits;
  /** 429s waited out in place before the attempt fails (retryable). Default 3. */
  rateLimitWaits?: number;
  /** Longest single Retry-After honoured in place. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Consecutive transient poll failures tolerated. Default 3. */
  maxPollErrors?: number;
}

/** What an adapter makes of a provider's error body. */
export interface ErrorReading {
  message?: string;
  /** The provider refused the content (safety / moderation). */
  contentPolicy?: boolean;
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export function retryAfterMs(headers: Headers): number | undefined {
  const h = headers.get('retry-after');
  if (!h) return undefined;
  const secs = Number(h);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

export async function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(Math.max(0, ms), undefined, { signal }).catch(() => {
    throw abortReason(signal as AbortSignal);
  });
}

/** How an API differs from the hosted-generation defaults (the stock engines, ../stock/). */
export interface ApiShape {
  /** The wait a rate-limited answer asks for when it has no Retry-After (X-RateLimit-Reset and the like). */
  retryAfter?: (headers: Headers) => number | undefined;
  /** A secret sent in the URL (a `key` query parameter): replaced by *** in every error message. */
  urlSecret?: string;
}

/** What an HTTP error status of a provider means: the ProviderError code, and whether trying again may succeed. */
export function statusFailure(status: number): { code: string; retryable: boolean } {
  const retryable = status === 429 || status >= 500 || status === 408;
  const code =
    status === 429
      ? 'provider_rate_limited'
      : status >= 500
        ? 'provider_unavailable'
        : status === 401 || status === 403
          ? 'provider_unauthorized'
          : 'provider_rejected';
  return { code, retryable };
}

export interface CallInit {
  method: string;
  json?: unknown;
  form?: FormData;
  signal?: AbortSignal;
  /** A 2xx answer is all that is wanted (its body may be empty): the call resolves to {}. */
  noContent?: boolean;
}

export class HostedApi {
  readonly label: string;
  readonly base: string;
  readonly opts: Required<Omit<HostedOptions, 'baseUrl' | 'key' | 'fetcher' | 'pixelLimits'>>;
  /** The Authorization header; none when empty or undefined (a key sent in the URL; a self-hosted server on the operator's network). */
  private readonly auth: string | undefined;
  private readonly readError: (status: number, body: unknown) => ErrorReading;
  private readonly shape: ApiShape;

  constructor(
    label: string,
    o: Omit<HostedOptions, 'fetcher' | 'pixelLimits'>,
    auth: string | undefined,
    readError: (status: number, body: unknown) => ErrorReading,
    shape: ApiShape = {},
  ) {
    if (auth !== undefined && !o.key) throw new Error(`${label} needs an API key`);
    this.label = label;
    this.base = o.baseUrl.replace(/\/+$/, '');
    this.auth = auth;
    this.readError = readError;
    this.shape = shape;
    this.opts = {
      pollMs: o.pollMs ?? 2000,
      requestTimeoutMs: o.requestTimeoutMs ?? 60_000,
      jobTimeoutMs: o.jobTimeoutMs ?? 30 * 60_000,
      rateLimitWaits: o.rateLimitWaits ?? 3,
      maxRetryAfterMs: o.maxRetryAfterMs ?? 60_000,
      maxPollErrors: o.maxPollErrors ?? 3,
    };
  }

  /** One exchange (rate limits waited out in place); the parsed JSON body of a 2xx answer. */
  async call(pathOrUrl: string, init: CallInit): Promise<unknown> {
    const secret = this.shape.urlSecret;
    if (!secret) return this.exchange(pathOrUrl, init);
    return this.exchange(pathOrUrl, init).catch((err: unknown) => {
      // The message is rebuilt and the cause dropped: the request's URL holds the secret.
      if (err instanceof ProviderError) {
        const { retryable, code, status, retryAfterMs } = err;
        throw new ProviderError(err.message.replaceAll(secret, '***'), { retryable, code, status, retryAfterMs });
      }
      throw err;
    });
  }

  private async exchange(pathOrUrl: string, init: CallInit): Promise<unknown> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.base}${pathOrUrl}`;
    const what = `${init.method} ${new URL(url).pathname}`;
    for (let waited = 0; ; waited++) {
      if (init.signal?.aborted) throw abortReason(init.signal);
      const timeout = AbortSignal.timeout(this.opts.requestTimeoutMs);
      const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
      const headers: Record<string, string> = { ...(this.auth ? { authorization: this.auth } : {}), accept: 'application/json' };
      let body: string | FormData | undefined;
      if (init.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(init.json);
      } else if (init.form) body = init.form; // fetch sets the multipart boundary
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, { method: init.method, headers, body, signal, redirect: 'manual' });
        text = await res.text();
      } catch (err) {
        if (init.signal?.aborted) throw abortReason(init.signal);
        if (timeout.aborted) {
          throw new ProviderError(`${this.label} did not answer ${what} within ${this.opts.requestTimeoutMs} ms`, {
            retryable: true,
            code: 'timeout',
            cause: err,
          });
        }
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw new ProviderError(`${this.label} unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`, {
          retryable: true,
          code: 'provider_unavailable',
          cause: err,
        });
      }
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (res.ok) {
        if (init.noContent) return {};
        if (parsed === undefined || typeof parsed !== 'object') {
          throw new ProviderError(`${this.label} answered ${what} with no JSON object`, {
            retryable: true,
            code: 'provider_error',
            status: res.status,
          });
        }
        return parsed;
      }
      const after = retryAfterMs(res.headers) ?? (res.status === 429 ? this.shape.retryAfter?.(res.headers) : undefined);
      if (res.status === 429 && waited < this.opts.rateLimitWaits && (after ?? 0) <= this.opts.maxRetryAfterMs) {
        // Rate limited: wait as told (or back off 1, 2, 4 s), then the same request again.
        await wait(after ?? 1000 * 2 ** waited, init.signal);
        continue;
      }
      throw this.statusError(res.status, parsed, text, what, after);
    }
  }

  private statusError(status: number, parsed: unknown, text: string, what: string, after: number | undefined): ProviderError {
    const read = this.readError(status, parsed);
    const message = (read.message ?? text.slice(0, 300)).slice(0, 1000);
    if (read.contentPolicy) {
      return new ProviderError(`${this.label} refused the request under its content policy: ${message}`, {
        retryable: false,
        code: 'content_rejected',
        status,
      });
    }
    const { retryable, code } = statusFailure(status);
    return new ProviderError(`${this.label} answered ${status} to ${what}${message ? `: ${message}` : ''}`, {
      retryable,
      code,
      status,
      retryAfterMs: after,
    });
  }

  /**
   * Calls `poll` every PROVIDER_POLL_MS until it returns a value; tolerates a few transient
   * failures in a row. Past the job deadline: `onTimeout` (the provider's cancel), then a
   * non-retryable `timeout` (resubmitting would pay for the same slow job again).
   */
  async pollUntil<T>(
    poll: () => Promise<T | undefined>,
    opts: { signal?: AbortSignal; startedAt: number; onTimeout: () => Promise<void>; id: string },
  ): Promise<T> {
    let errors = 0;
    for (;;) {
      try {
        const done = await poll();
        errors = 0;
        if (done !== undefined) return done;
      } catch (err) {
        if (!(err instanceof ProviderError && err.retryable && ++errors <= this.opts.maxPollErrors)) throw err;
      }
      const left = opts.startedAt + this.opts.jobTimeoutMs - Date.now();
      if (left <= 0) {
        await opts.onTimeout().catch(() => {});
        throw new ProviderError(`${this.label} job ${opts.id} did not finish within ${this.opts.jobTimeoutMs} ms; it was canceled`, {
          retryable: false,
          code: 'timeout',
        });
      }
      await wait(Math.min(this.opts.pollMs, left), opts.signal);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** A stable seed per generation (a retry asks for the same picture). */
export function seedOf(generationId: string): number {
  const hex = generationId.replace(/-/g, '').slice(0, 8);
  const n = Number.parseInt(hex, 16);
  return Number.isFinite(n) ? n % 2_147_483_647 : randomInt(2_147_483_647);
}

export async function dataUri(bytes: Buffer): Promise<string> {
  const sniffed = await sniff(bytes).catch(() => undefined);
  return `data:${sniffed?.mime ?? 'application/octet-stream'};base64,${bytes.toString('base64')}`;
}

async function fileUri(file: MediaFile): Promise<string> {
  return `data:${file.type};base64,${(await readFile(file.path)).toString('base64')}`;
}

/** What every hosted model is sent from the request besides its shape (size, duration, seed). */
export interface HostedRequest {
  /** The caller's prompt, then the brand kit's guidance when a kit was given. */
  prompt: string;
  /** The reference images (the first alone for a model that takes one), then the kit's logo for a model that takes several. */
  images: Buffer[];
}

/**
 * The prompt and input images a hosted model gets for a job (all three adapters). A brand kit
 * becomes explicit guidance appended to the prompt ("Brand: Acme. Brand colours: primary
 * #FF5500, secondary #112233. Brand fonts: DejaVu Serif."); its logo joins the reference images
 * when the model takes several and the request has reference images (an edit: the logo is one
 * more input, named in the prompt), and is left out otherwise (a text-to-X request stays one, at
 * its price; a one-image model keeps the caller's image).
 */
export function hostedRequest(job: GenerationJob, opts: { multipleImages: boolean }): HostedRequest {
  const images = opts.multipleImages ? [...job.referenceImages] : job.referenceImages.slice(0, 1);
  const guidance: string[] = [];
  if (job.brandName) guidance.push(`Brand: ${job.brandName}.`);
  const roles = job.brandColorRoles ?? [];
  const labelled = new Set(roles.map((c) => c.hex.toUpperCase()));
  const colours = [
    ...roles.map((c) => `${c.role} ${c.hex.toUpperCase()}`),
    ...(job.brandColors ?? []).filter((h) => !labelled.has(h.toUpperCase())),
  ];
  if (colours.length) guidance.push(`Brand colours: ${colours.join(', ')}.`);
  if (job.fonts?.length) guidance.push(`Brand fonts: ${job.fonts.join(', ')}.`);
  if (job.logo && opts.multipleImages && images.length) {
    images.push(job.logo);
    guidance.push('The last input image is the brand logo: show it unaltered.');
  }
  const prompt = guidance.length ? [job.prompt.trim(), guidance.join(' ')].filter(Boolean).join('\n\n') : job.prompt;
  return { prompt, images };
}

/** A duration as the model takes it (`provider.duration_format`): 8, "8", "8s", or a frame count. */
function durationInput(seconds: number, model: ProviderModel): number | string {
  switch (model.duration_format ?? 'integer') {
    case 'string':
      return String(seconds);
    case 'seconds':
      return `${seconds}s`;
    case 'frames':
      // A first frame, then frame_rate frames per second (checked at load to be given).
      return seconds * (model.frame_rate as number) + 1;
    default:
      return seconds;
  }
}

/**
 * The model input for a Replicate or fal model: our request fields under the names the catalog
 * gives (`provider.input_names`, defaults in spec/catalog-data.schema.yaml), then the fixed
 * `provider.input`.
 */
/** `aspect` when the model makes it (or makes any), else the nearest frame it makes (by the log of the ratios). */
export function nearestAspect(aspect: string, makes: readonly string[] | undefined): string {
  if (!makes?.length || makes.includes(aspect)) return aspect;
  const ratio = (a: string) => {
    const [w, h] = a.split(':').map(Number);
    return Math.log(w / h);
  };
  return makes.reduce((best, a) => (Math.abs(ratio(a) - ratio(aspect)) < Math.abs(ratio(best) - ratio(aspect)) ? a : best));
}

export async function inputsFor(job: GenerationJob, model: ProviderModel, defaultImageName: string): Promise<Record<string, unknown>> {
  const names = model.input_names ?? {};
  const video = job.output === 'video';
  const name = (key: keyof NonNullable<ProviderModel['input_names']>, fallback: string | null): string | null =>
    names[key] === undefined ? fallback : (names[key] as string | null);
  const input: Record<string, unknown> = {};
  const set = (key: string | null, value: unknown) => {
    if (key && value !== undefined && value !== null) input[key] = value;
  };
  const { prompt, images } = hostedRequest(job, { multipleImages: Boolean(model.image_list) });
  set(name('prompt', 'prompt'), prompt);
  set(name('aspect_ratio', 'aspect_ratio'), nearestAspect(job.aspectRatio, model.aspect_ratios));
  if (video) {
    const d = job.durationSeconds;
    set(name('duration', 'duration'), d === undefined ? undefined : durationInput(d, model));
    set(name('resolution', 'resolution'), `${Math.min(job.width, job.height)}p`);
    set(name('generate_audio', null), job.generateAudio);
  }
  set(name('seed', 'seed'), seedOf(job.generationId));
  const imageKey = name('image', defaultImageName);
  if (imageKey && images.length) {
    const uris = await Promise.all(images.map(dataUri));
    set(imageKey, model.image_list ? uris : uris[0]);
  }
  const videoIn = job.sourceVideo ?? job.motionVideo;
  const videoKey = name('video', null);
  if (videoKey && videoIn) set(videoKey, await fileUri(videoIn));
  const audioKey = name('audio', null);
  if (audioKey && job.audio) set(audioKey, await fileUri(job.audio));
  return { ...input, ...(model.input ?? {}) };
}

// ---------------------------------------------------------------------------------------------
// Outputs

const EXT: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };
/** Output size caps: an image is far smaller; a video may be long. */
const MAX_OUTPUT_BYTES = { image: 50 * 1024 * 1024, video: 500 * 1024 * 1024 };
/** Longest video output accepted: our durations are at most 30 s; a model may pad, not make minutes. */
const MAX_OUTPUT_SECONDS = 120;

/** Fetches an output URL through the guarded client (provider CDNs are not our hosts). */
export async function downloadOutput(
  label: string,
  fetcher: GuardedFetcher,
  url: string,
  job: GenerationJob,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Buffer> {
  return fetchMediaBytes(fetcher, url, {
    maxBytes: MAX_OUTPUT_BYTES[job.output],
    timeoutMs,
    signal,
    refuse: ({ error }) =>
      signal?.aborted
        ? abortReason(signal)
        : new ProviderError(`${label} output ${url} ${error.message}`, {
            retryable: error.retryable || error.reason === 'network',
            code: 'provider_error',
            cause: error,
          }),
  });
}

/**
 * Checks the output bytes against the job as an upload is checked (sniffed; inspected with the
 * sniffed demuxer forced, pixels bounded, a video read all the way through as its format) and
 * writes the final file into workDir, converting an image the model made in another format.
 */
export async function storeOutput(
  label: string,
  job: GenerationJob,
  bytes: Buffer,
  workDir: string,
  limits: PixelLimits = DEFAULT_PIXEL_LIMITS,
): Promise<ProviderResult> {
  const invalid = (why: string, cause?: unknown) =>
    new ProviderError(`${label} output is not a valid ${job.output}: ${why}`.slice(0, 1900), {
      retryable: false,
      code: 'provider_invalid_output',
      cause,
    });
  if (bytes.length > MAX_OUTPUT_BYTES[job.output]) throw invalid(`it is over ${MAX_OUTPUT_BYTES[job.output]} bytes`);
  const wanted = job.output === 'video' ? ['video/mp4'] : ['image/png', 'image/jpeg', 'image/webp'];
  const { sniffed, inspected } = await checkMediaBytes(bytes, {
    types: wanted,
    // An output of another kind (an mp4 with sound only) has no dimensions.
    inspect: {
      file: (s) => path.join(workDir, `.${job.generationId}.download.${s.ext}`),
      limits,
      kinds: [job.output],
      maxSeconds: MAX_OUTPUT_SECONDS,
    },
    refuse: (r) =>
      r.reason === 'type'
        ? invalid(`it is ${r.mime ?? 'not a recognised file'} (expected ${wanted.join(', ')})`)
        : r.reason === 'kind'
          ? invalid('no dimensions')
          : invalid(`it ${r.message}`, r.reason === 'rejected' ? r.error : undefined),
  });
  const { file: tmp, facts: info } = inspected;
  try {
    if (!info.width || !info.height) throw invalid('no dimensions');
    if (job.output === 'video') {
      const out = path.join(workDir, `${job.generationId}.mp4`);
      await rename(tmp, out);
      // Whether it has sound is what the model made, not what was asked (Kling makes none).
      return {
        path: out,
        contentType: CONTENT_TYPES.mp4,
        width: info.width,
        height: info.height,
        durationSeconds: info.durationSeconds ?? undefined,
        hasAudio: Boolean(info.hasAudio),
        bytes: (await stat(out)).size,
      };
    }
    const want = job.imageFormat ?? 'png';
    const out = path.join(workDir, `${job.generationId}.${EXT[want]}`);
    if (sniffed.mime === CONTENT_TYPES[want]) await rename(tmp, out);
    else {
      const img = sharp(tmp, { limitInputPixels: limits.maxPixels }).rotate();
      await (want === 'jpeg'
        ? img.flatten({ background: '#ffffff' }).jpeg({ quality: 92 })
        : want === 'webp'
          ? img.webp({ quality: 90 })
          : img.png()
      ).toFile(out);
    }
    return { path: out, contentType: CONTENT_TYPES[want], width: info.width, height: info.height, bytes: (await stat(out)).size };
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Progress reporting that only moves forward and never throws. */
export function progressOf(onProgress: ((f: number) => void) | undefined): (f: number) => void {
  let last = -1;
  return (f) => {
    const v = Math.max(0, Math.min(1, f));
    if (v <= last) return;
    last = v;
    try {
      onProgress?.(v);
    } catch {
      // ignore
    }
  };
}
