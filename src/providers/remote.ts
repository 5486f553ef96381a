// Adapter to a remote image/video generation service (GENERATION_PROVIDER=remote).
//
// The remote API this adapter speaks (JSON over HTTP(S); {base} = REMOTE_PROVIDER_URL):
//
//   POST {base}/v1/jobs
//     Authorization: Bearer {REMOTE_PROVIDER_API_KEY}
//     Idempotency-Key: {generationId}      a re-submitted generation (worker retry) maps to the same job
//     {
//       "client_reference": "<generation uuid>",
//       "kind": "image" | "video",
//       "generation_type": "static_ad" | "video_ad" | "ugc_ad" | "ai_model",
//       "prompt": "...", "title": "...",
//       "template": slug | null, "model": slug | null, "variant": id | null, "preset": id | null,
//       "quality_tier": "high" | "low" | null,
//       "aspect_ratio": "9:16", "width": 720, "height": 1280,
//       "duration_seconds": 5 | null,               (videos)
//       "format": "png" | "jpeg" | "webp" | "mp4",
//       "generate_audio": true,
//       "brand": {"name": "...", "colors": ["#RRGGBB"]} | null,
//       "avatar_name": "..." | null,
//       "reference_images": [{"content_type": "image/png", "data": "<base64>"}],
//       "source_video" | "motion_video" | "audio": {"content_type": "...", "data": "<base64>"} | null
//     }
//     → 200/201/202 {"id": "<job id>", "status": "queued"}
//
//   GET {base}/v1/jobs/{id}                 (same Authorization)
//     → 200 {"id", "status": "queued" | "running" | "succeeded" | "failed",
//            "progress": 0..1 | null,
//            "output_url": "<absolute URL, or a path relative to {base}>" | null   (when succeeded),
//            "error": {"code": "...", "message": "...", "retryable": bool?} | null  (when failed)}
//
//   DELETE {base}/v1/jobs/{id}              best-effort cancel, sent when our side aborts or gives up
//
//   GET {output_url}                        the file; the Bearer key is sent only when output_url has
//                                           the same origin as {base} (never to a third-party CDN)
//
//   Errors: any non-2xx, body optionally {"error": {"code", "message"}}. 429 and 5xx are transient
//   (ProviderError.retryable = true, Retry-After honoured into retryAfterMs), other 4xx are not
//   (401/403: a wrong key). Network failures and timeouts are transient too.
//
// Only {base} and the output_url it returns are ever fetched; no user-supplied URL reaches this
// module (reference media arrive as bytes). The downloaded file is checked (sharp / ffprobe) and
// described from its real content; an image in another format than requested is converted.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp, { type Metadata } from 'sharp';
import { probe, type MediaFile } from '../media/ffmpeg.ts';
import { DEFAULT_PIXEL_LIMITS, pixelProblem, type PixelLimits } from '../media/limits.ts';
import { CONTENT_TYPES, ProviderError, type GenerateOptions, type GenerationJob, type ImageFormat, type Provider, type ProviderResult } from './types.ts';

export interface RemoteProviderOptions {
  /** REMOTE_PROVIDER_URL: http(s) base of the remote API (a path prefix is kept). */
  baseUrl: string;
  /** REMOTE_PROVIDER_API_KEY */
  apiKey: string;
  /** REMOTE_PROVIDER_POLL_MS: interval between status polls. Default 1000. */
  pollMs?: number;
  /** Timeout of one API request (submit, poll, cancel). Default 30 s. */
  requestTimeoutMs?: number;
  /** Timeout of the output download. Default 10 min. */
  downloadTimeoutMs?: number;
  /** Give up on a job that has not finished after this long. Default 30 min. */
  jobTimeoutMs?: number;
  /** Consecutive transient poll failures tolerated before giving up. Default 3. */
  maxPollErrors?: number;
  /** Largest output accepted. Default 2 GiB. */
  maxOutputBytes?: number;
  /** Largest image or video frame accepted (MEDIA_MAX_PIXELS, MEDIA_MAX_DIMENSION). */
  pixelLimits?: PixelLimits;
}

type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';
interface RemoteJob {
  id?: string;
  status?: JobStatus;
  progress?: number | null;
  output_url?: string | null;
  error?: { code?: string; message?: string; retryable?: boolean } | null;
}

const EXT: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function retryAfterMs(res: Response): number | undefined {
  const h = res.headers.get('retry-after');
  if (!h) return undefined;
  const secs = Number(h);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function sniffContentType(buf: Buffer): string {
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'image/jpeg';
  if (buf.subarray(0, 4).toString('latin1') === 'RIFF' && buf.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (buf.subarray(0, 4).toString('latin1') === '%PDF') return 'application/pdf';
  return 'application/octet-stream';
}

export class RemoteProvider implements Provider {
  readonly name = 'remote';
  private readonly base: URL;
  private readonly apiKey: string;
  private readonly pollMs: number;
  private readonly requestTimeoutMs: number;
  private readonly downloadTimeoutMs: number;
  private readonly jobTimeoutMs: number;
  private readonly maxPollErrors: number;
  private readonly maxOutputBytes: number;
  private readonly pixelLimits: PixelLimits;

  constructor(opts: RemoteProviderOptions) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      throw new Error(`remote provider URL must be an absolute http(s) URL, got "${opts.baseUrl}"`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new Error(`remote provider URL must be an absolute http(s) URL, got "${opts.baseUrl}"`);
    }
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    base.search = '';
    base.hash = '';
    if (!opts.apiKey) throw new Error('remote provider needs an API key (REMOTE_PROVIDER_API_KEY)');
    this.base = base;
    this.apiKey = opts.apiKey;
    this.pollMs = opts.pollMs ?? 1000;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.downloadTimeoutMs = opts.downloadTimeoutMs ?? 10 * 60_000;
    this.jobTimeoutMs = opts.jobTimeoutMs ?? 30 * 60_000;
    this.maxPollErrors = opts.maxPollErrors ?? 3;
    this.maxOutputBytes = opts.maxOutputBytes ?? 2 * 1024 ** 3;
    this.pixelLimits = opts.pixelLimits ?? DEFAULT_PIXEL_LIMITS;
  }

  private api(p: string): URL {
    return new URL(p.replace(/^\/+/, ''), this.base);
  }

  /** One HTTP exchange with a timeout; maps failures to ProviderError, aborts to the signal's reason. */
  private async request(
    url: URL,
    init: { method: string; body?: string; headers?: Record<string, string>; auth: boolean },
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ res: Response; timeout: AbortSignal }> {
    if (signal?.aborted) throw abortReason(signal);
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (init.auth) headers.authorization = `Bearer ${this.apiKey}`;
    let res: Response;
    try {
      res = await fetch(url, { method: init.method, body: init.body, headers, signal: combined, redirect: 'manual' });
    } catch (err) {
      throw this.transportError(err, url, timeoutMs, timeout, signal);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => {});
      throw new ProviderError(`remote provider answered a redirect (${res.status}) for ${init.method} ${url.pathname}`, {
        retryable: false,
        code: 'remote_protocol',
        status: res.status,
      });
    }
    if (!res.ok) throw await this.statusError(res, `${init.method} ${url.pathname}`);
    return { res, timeout };
  }

  private transportError(err: unknown, url: URL, timeoutMs: number, timeout: AbortSignal, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return abortReason(signal);
    if (timeout.aborted) {
      return new ProviderError(`remote provider did not answer ${url.pathname} within ${timeoutMs} ms`, { retryable: true, code: 'remote_timeout', cause: err });
    }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err as Error).message;
    return new ProviderError(`remote provider unreachable (${url.origin}): ${detail}`, { retryable: true, code: 'remote_unreachable', cause: err });
  }

  private async statusError(res: Response, what: string): Promise<ProviderError> {
    let code: string | undefined;
    let message: string | undefined;
    try {
      const text = (await res.text()).slice(0, 4000);
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } | string; message?: unknown };
      if (body && typeof body.error === 'object' && body.error) {
        if (typeof body.error.code === 'string') code = body.error.code;
        if (typeof body.error.message === 'string') message = body.error.message;
      } else if (typeof body?.error === 'string') message = body.error;
      else if (typeof body?.message === 'string') message = body.message;
    } catch {
      // not JSON: keep the status alone
    }
    const s = res.status;
    const retryable = s === 429 || s >= 500;
    const mapped = s === 401 || s === 403 ? 'remote_unauthorized' : s === 429 ? 'remote_rate_limited' : s >= 500 ? 'remote_unavailable' : 'remote_rejected';
    return new ProviderError(`remote provider answered ${s} to ${what}${message ? `: ${message}` : ''}${code ? ` (${code})` : ''}`, {
      retryable,
      code: mapped,
      status: s,
      retryAfterMs: retryAfterMs(res),
    });
  }

  private async json(url: URL, init: { method: string; body?: string; headers?: Record<string, string> }, signal?: AbortSignal): Promise<RemoteJob> {
    const { res, timeout } = await this.request(url, { ...init, auth: true }, this.requestTimeoutMs, signal);
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw this.transportError(err, url, this.requestTimeoutMs, timeout, signal);
    }
    try {
      const body = JSON.parse(text) as unknown;
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
      return body as RemoteJob;
    } catch {
      throw new ProviderError(`remote provider sent invalid JSON for ${init.method} ${url.pathname}`, { retryable: true, code: 'remote_protocol', status: res.status });
    }
  }

  private async cancel(id: string): Promise<void> {
    try {
      await this.request(this.api(`v1/jobs/${encodeURIComponent(id)}`), { method: 'DELETE', auth: true }, Math.min(this.requestTimeoutMs, 5000), undefined);
    } catch {
      // best effort
    }
  }

  private async requestBody(job: GenerationJob): Promise<string> {
    const media = async (file: MediaFile | undefined) => (file ? { content_type: file.type, data: (await readFile(file.path)).toString('base64') } : null);
    const format = job.output === 'video' ? 'mp4' : (job.imageFormat ?? 'png');
    return JSON.stringify({
      client_reference: job.generationId,
      kind: job.output,
      generation_type: job.type,
      prompt: job.prompt,
      title: job.title,
      template: job.templateSlug ?? null,
      model: job.modelSlug ?? null,
      variant: job.variantId ?? null,
      preset: job.presetId ?? null,
      quality_tier: job.qualityTier ?? null,
      aspect_ratio: job.aspectRatio,
      width: job.width,
      height: job.height,
      duration_seconds: job.output === 'video' ? (job.durationSeconds ?? null) : null,
      format,
      generate_audio: job.generateAudio,
      brand: job.brandName || job.brandColors?.length ? { name: job.brandName ?? null, colors: job.brandColors ?? [] } : null,
      avatar_name: job.avatarName ?? null,
      reference_images: job.referenceImages.map((b) => ({ content_type: sniffContentType(b), data: b.toString('base64') })),
      source_video: await media(job.sourceVideo),
      motion_video: await media(job.motionVideo),
      audio: await media(job.audio),
    });
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    const { signal } = opts;
    if (signal?.aborted) throw abortReason(signal);
    let last = -1;
    const progress = (f: number) => {
      const v = Math.max(0, Math.min(1, f));
      if (v > last) {
        last = v;
        try {
          opts.onProgress?.(v);
        } catch {
          // ignore
        }
      }
    };
    progress(0);

    const submitted = await this.json(
      this.api('v1/jobs'),
      { method: 'POST', body: await this.requestBody(job), headers: { 'content-type': 'application/json', 'idempotency-key': job.generationId } },
      signal,
    );
    const id = typeof submitted.id === 'string' && submitted.id ? submitted.id : null;
    if (!id) throw new ProviderError('remote provider accepted the job without an id', { retryable: true, code: 'remote_protocol' });
    progress(0.02);

    const deadline = Date.now() + this.jobTimeoutMs;
    let state: RemoteJob = submitted;
    let errors = 0;
    try {
      while (state.status !== 'succeeded') {
        if (state.status === 'failed') {
          const e = state.error ?? {};
          throw new ProviderError(`remote job ${id} failed: ${e.message ?? 'no reason given'}`, {
            retryable: e.retryable === true,
            code: e.code ? `remote_${e.code}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64) : 'remote_job_failed',
          });
        }
        if (Date.now() >= deadline) {
          throw new ProviderError(`remote job ${id} did not finish within ${this.jobTimeoutMs} ms`, { retryable: true, code: 'remote_timeout' });
        }
        await sleep(Math.max(0, Math.min(this.pollMs, deadline - Date.now())), undefined, { signal }).catch(() => {
          throw abortReason(signal as AbortSignal);
        });
        try {
          state = await this.json(this.api(`v1/jobs/${encodeURIComponent(id)}`), { method: 'GET' }, signal);
          errors = 0;
        } catch (err) {
          if (err instanceof ProviderError && err.retryable && ++errors <= this.maxPollErrors) continue;
          throw err;
        }
        if (typeof state.progress === 'number' && Number.isFinite(state.progress)) progress(0.02 + 0.88 * state.progress);
      }
    } catch (err) {
      // Aborted, timed out or lost: tell the remote to stop working on it (bounded, best effort).
      if (state.status !== 'failed') await this.cancel(id);
      throw err;
    }

    if (typeof state.output_url !== 'string' || !state.output_url) {
      throw new ProviderError(`remote job ${id} succeeded without an output_url`, { retryable: true, code: 'remote_protocol' });
    }
    let outputUrl: URL;
    try {
      outputUrl = new URL(state.output_url, this.base);
    } catch {
      throw new ProviderError(`remote job ${id} has an invalid output_url`, { retryable: false, code: 'remote_protocol' });
    }
    if (outputUrl.protocol !== 'http:' && outputUrl.protocol !== 'https:') {
      throw new ProviderError(`remote job ${id} has a non-http output_url`, { retryable: false, code: 'remote_protocol' });
    }
    progress(0.9);
    const result = await this.download(job, outputUrl, opts);
    progress(1);
    return result;
  }

  private async download(job: GenerationJob, url: URL, opts: GenerateOptions): Promise<ProviderResult> {
    await mkdir(opts.workDir, { recursive: true });
    const tmp = path.join(opts.workDir, `.${job.generationId}.download`);
    const sameOrigin = url.origin === this.base.origin;
    const { res, timeout } = await this.request(url, { method: 'GET', auth: sameOrigin, headers: { accept: '*/*' } }, this.downloadTimeoutMs, opts.signal);
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > this.maxOutputBytes) {
      await res.body?.cancel().catch(() => {});
      throw new ProviderError(`remote output is ${declared} bytes, over the ${this.maxOutputBytes} limit`, { retryable: false, code: 'remote_output_too_large' });
    }
    if (!res.body) throw new ProviderError('remote output has no body', { retryable: true, code: 'remote_protocol' });
    let bytes = 0;
    const max = this.maxOutputBytes;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        if (bytes > max) cb(new ProviderError(`remote output is over the ${max} byte limit`, { retryable: false, code: 'remote_output_too_large' }));
        else cb(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), counter, createWriteStream(tmp));
      return await this.describe(job, tmp, opts.workDir);
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw this.transportError(err, url, this.downloadTimeoutMs, timeout, opts.signal);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Checks the downloaded file against the job and moves it to its final name. */
  private async describe(job: GenerationJob, tmp: string, workDir: string): Promise<ProviderResult> {
    const invalid = (why: string, cause?: unknown) =>
      new ProviderError(`remote output is not a valid ${job.output}: ${why}`, { retryable: false, code: 'remote_invalid_output', cause });
    if (job.output === 'video') {
      const info = await probe(tmp).catch((err: Error) => {
        throw invalid(err.message, err);
      });
      if (!info.has_video || !info.width || !info.height) throw invalid('no video stream');
      const tooBig = pixelProblem(info.width, info.height, this.pixelLimits);
      if (tooBig) throw invalid(`its frames ${tooBig.replace(/^is /, 'are ')}`);
      if (!info.format.split(',').includes('mp4')) throw invalid(`container ${info.format}`);
      const out = path.join(workDir, `${job.generationId}.mp4`);
      await rename(tmp, out);
      const { size } = await stat(out);
      return { path: out, contentType: CONTENT_TYPES.mp4, width: info.width, height: info.height, durationSeconds: info.duration_seconds ?? undefined, bytes: size };
    }
    const want = job.imageFormat ?? 'png';
    let meta: Metadata;
    try {
      meta = await sharp(tmp, { limitInputPixels: this.pixelLimits.maxPixels }).metadata();
    } catch (err) {
      if (/exceeds pixel limit/i.test((err as Error).message)) throw invalid(`it has more than ${this.pixelLimits.maxPixels} pixels (width × height), the most accepted`, err);
      throw invalid((err as Error).message, err);
    }
    if (!meta.width || !meta.height) throw invalid('no dimensions');
    const tooBig = pixelProblem(meta.width, meta.height, this.pixelLimits);
    if (tooBig) throw invalid(`it ${tooBig}`);
    const out = path.join(workDir, `${job.generationId}.${EXT[want]}`);
    if (meta.format === want) {
      await rename(tmp, out);
    } else {
      const img = sharp(tmp, { limitInputPixels: this.pixelLimits.maxPixels }).rotate();
      await (want === 'jpeg' ? img.flatten({ background: '#ffffff' }).jpeg({ quality: 92 }) : want === 'webp' ? img.webp({ quality: 90 }) : img.png()).toFile(out);
    }
    const { size } = await stat(out);
    return { path: out, contentType: CONTENT_TYPES[want], width: meta.width, height: meta.height, bytes: size };
  }
}
