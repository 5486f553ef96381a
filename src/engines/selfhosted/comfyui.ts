// A self-hosted ComfyUI server (https://github.com/comfyanonymous/ComfyUI, server.py and
// execution.py) making image and video AI-model variants for people with their own GPU. Its HTTP
// API, polled (the websocket's progress messages are not used: /history is the source of truth):
//   POST {COMFYUI_URL}/upload/image   multipart image, overwrite → {name, subfolder, type}
//                                     (a video's start image, for the workflow's LoadImage node)
//   POST {COMFYUI_URL}/prompt         {prompt: <workflow in API format>, client_id}
//        → {prompt_id, number, node_errors}; 400 {error: {type, message, details, extra_info},
//          node_errors: {<node id>: {errors: [{type, message, details}], class_type}}}
//   GET  /history/{prompt_id}         {} while queued or running, then {<prompt_id>: {outputs:
//                                     {<node id>: {images|gifs|videos: [{filename, subfolder, type}]}},
//                                     status: {status_str, completed, messages}}}
//   GET  /queue                       {queue_running: [[number, prompt_id, …]], queue_pending: […]}
//   GET  /view?filename=&subfolder=&type=   the saved file's bytes
//   POST /interrupt {prompt_id}, POST /queue {delete: [prompt_id]}   cancel (running, pending)
// The workflows are JSON files (COMFYUI_TEXT_TO_IMAGE_WORKFLOW, COMFYUI_IMAGE_TO_VIDEO_WORKFLOW;
// the bundled ones are ./workflows/) whose node inputs our job fills are named by COMFYUI_INPUTS
// (read and checked in src/config.ts). The prompt id is stored (onSubmitted) before polling and a
// later attempt polls it again (resume) instead of queueing the work twice. The server is the
// operator's own (configuration, often on loopback), so its files are read with plain fetch under a
// deadline, then checked like an upload and made the job's file (./comfyui-output.ts).
import type { ComfyuiConfig, ComfyuiGraph, ComfyuiInput, Config } from '../../config.ts';
import type { PixelLimits } from '../../media/limits.ts';
import { sniff } from '../../media/inspect.ts';
import {
  ProviderError,
  type GenerateOptions,
  type GenerationJob,
  type Provider,
  type ProviderJobRef,
  type ProviderResult,
} from '../generation.ts';
import { HostedApi, abortReason, hostedRequest, progressOf, seedOf, type ErrorReading } from '../hosted/hosted.ts';
import { COMFYUI_MAX_OUTPUT_BYTES, storeComfyOutput } from './comfyui-output.ts';

/** Whether the configured ComfyUI server makes the catalog model `modelName` for an `output`. */
export function comfyuiMakes(config: Pick<Config, 'comfyui'>, modelName: string, output: 'image' | 'video'): boolean {
  const c = config.comfyui;
  if (!c.url || !c.workflows || (output !== 'image' && output !== 'video')) return false;
  return c.models === '*' || c.models.includes(modelName);
}

export interface ComfyuiOptions {
  config: ComfyuiConfig;
  /** PROVIDER_POLL_MS, PROVIDER_TIMEOUT_MS, PROVIDER_JOB_TIMEOUT_MS. */
  pollMs?: number;
  requestTimeoutMs?: number;
  jobTimeoutMs?: number;
  pixelLimits?: PixelLimits;
}

interface SavedFile {
  filename?: string;
  subfolder?: string;
  type?: string;
}
interface HistoryEntry {
  outputs?: Record<string, { images?: SavedFile[]; gifs?: SavedFile[]; videos?: SavedFile[]; animated?: boolean[] }>;
  status?: { status_str?: string; completed?: boolean; messages?: [string, Record<string, unknown>][] } | null;
}
type QueueItem = [number, string, ...unknown[]];

/** ComfyUI's 400: `error` (a string, or {type, message, details}) and per-node errors. */
function readError(_status: number, body: unknown): ErrorReading {
  const b = (body ?? {}) as { error?: unknown; node_errors?: unknown };
  const e = b.error as { type?: unknown; message?: unknown; details?: unknown } | string | undefined;
  const head =
    typeof e === 'string' ? e : e ? [e.message, e.details].filter((v) => typeof v === 'string' && v).join(': ') || undefined : undefined;
  const nodes = b.node_errors && typeof b.node_errors === 'object' ? Object.entries(b.node_errors as Record<string, unknown>) : [];
  const perNode = nodes.slice(0, 5).map(([id, n]) => {
    const { class_type, errors } = (n ?? {}) as { class_type?: unknown; errors?: { message?: unknown; details?: unknown }[] };
    const what = (errors ?? []).map((x) => [x.message, x.details].filter(Boolean).join(': ')).join('; ');
    return `node ${id} (${String(class_type)}): ${what}`;
  });
  const message = [head, ...perNode].filter(Boolean).join('; ') || undefined;
  return { message, contentPolicy: false };
}

/** "node 5 (KSampler): RuntimeError: out of memory" from a failed prompt's status messages. */
function failureOf(entry: HistoryEntry): { interrupted: boolean; message: string } {
  const messages = entry.status?.messages ?? [];
  const interrupted = messages.find(([kind]) => kind === 'execution_interrupted');
  if (interrupted) return { interrupted: true, message: 'it was interrupted' };
  const error = messages.find(([kind]) => kind === 'execution_error')?.[1] ?? {};
  const where = error.node_id ? `node ${String(error.node_id)} (${String(error.node_type)}): ` : '';
  const what = [error.exception_type, error.exception_message].filter(Boolean).map(String).join(': ');
  return { interrupted: false, message: `${where}${what || 'execution failed'}`.slice(0, 800) };
}

/** The file the workflow saved for `output`: a still for an image, an animation or video for a video. */
function savedFile(entry: HistoryEntry, output: 'image' | 'video'): SavedFile | undefined {
  const files: SavedFile[] = [];
  for (const node of Object.values(entry.outputs ?? {})) {
    const animated = Boolean(node.animated?.some(Boolean));
    if (output === 'video') files.push(...(node.videos ?? []), ...(node.gifs ?? []), ...(animated ? (node.images ?? []) : []));
    else if (!animated) files.push(...(node.images ?? []));
  }
  // Saved files first (a preview node's are temporary).
  return files.find((f) => f.filename && f.type === 'output') ?? files.find((f) => f.filename);
}

/** Integer sizes latent models take: multiples of 16, at least 16. */
const latentSide = (v: number) => Math.max(16, Math.round(v / 16) * 16);

export class ComfyuiProvider implements Provider {
  readonly name = 'comfyui';
  private readonly api: HostedApi;
  private readonly config: ComfyuiConfig & { workflows: NonNullable<ComfyuiConfig['workflows']> };
  private readonly pixelLimits: PixelLimits | undefined;

  constructor(o: ComfyuiOptions) {
    if (!o.config.url || !o.config.workflows) throw new Error('ComfyuiProvider needs COMFYUI_URL and its workflows');
    this.config = o.config as ComfyuiProvider['config'];
    this.pixelLimits = o.pixelLimits;
    const { pollMs, requestTimeoutMs, jobTimeoutMs } = o;
    this.api = new HostedApi('ComfyUI', { baseUrl: o.config.url, pollMs, requestTimeoutMs, jobTimeoutMs }, undefined, readError);
  }

  /**
   * Stops the prompt: deleted from the queue (nothing happens when it is not waiting), then
   * interrupted if it is running, in that order so a prompt that starts in between is caught too.
   */
  async cancel(ref: ProviderJobRef): Promise<void> {
    await this.api.call('/queue', { method: 'POST', json: { delete: [ref.id] }, noContent: true }).catch(() => {});
    const queue = (await this.api.call('/queue', { method: 'GET' }).catch(() => undefined)) as { queue_running?: QueueItem[] } | undefined;
    if (queue?.queue_running?.some((q) => q[1] === ref.id))
      await this.api.call('/interrupt', { method: 'POST', json: { prompt_id: ref.id }, noContent: true }).catch(() => {});
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    if (job.output !== 'image' && job.output !== 'video') throw new Error(`ComfyUI makes images and videos, not ${job.output}`);
    const progress = progressOf(opts.onProgress);
    const { signal } = opts;
    progress(0);
    let id = opts.resume?.provider === 'comfyui' ? opts.resume.id : undefined;
    if (!id) {
      const prompt = await this.workflowFor(job, signal);
      const queued = (await this.api.call('/prompt', {
        method: 'POST',
        json: { prompt, client_id: `media-api-${job.generationId}` },
        signal,
      })) as { prompt_id?: unknown };
      if (typeof queued.prompt_id !== 'string' || !queued.prompt_id)
        throw new ProviderError('ComfyUI queued a prompt without a prompt_id', { retryable: true, code: 'provider_error' });
      id = queued.prompt_id;
      await opts.onSubmitted?.({ provider: 'comfyui', id });
    }
    progress(0.05);
    const promptId = id;
    let runningPolls = 0;
    const running = () => progress(Math.min(0.85, 0.1 + 0.05 * runningPolls++));
    const entry = await this.api.pollUntil(() => this.poll(promptId, running, opts), {
      signal,
      startedAt: Date.now(),
      id: promptId,
      onTimeout: () => this.cancel({ provider: 'comfyui', id: promptId }),
    });
    const file = savedFile(entry, job.output);
    if (!file)
      throw new ProviderError(`ComfyUI prompt ${promptId} finished without saving ${job.output === 'image' ? 'an image' : 'a video'}`, {
        retryable: false,
        code: 'provider_invalid_output',
      });
    progress(0.9);
    const bytes = await this.view(file, job.output, signal);
    const result = await storeComfyOutput(job, bytes, opts.workDir, this.pixelLimits, signal);
    progress(1);
    return result;
  }

  /** One look at the prompt: its history entry once finished, undefined while queued or running. */
  private async poll(id: string, running: () => void, opts: GenerateOptions): Promise<HistoryEntry | undefined> {
    const history = async () =>
      ((await this.api.call(`/history/${encodeURIComponent(id)}`, { method: 'GET', signal: opts.signal })) as Record<string, HistoryEntry>)[
        id
      ];
    let entry = await history();
    if (!entry) {
      const queue = (await this.api.call('/queue', { method: 'GET', signal: opts.signal })) as {
        queue_running?: QueueItem[];
        queue_pending?: QueueItem[];
      };
      if (queue.queue_running?.some((q) => q[1] === id)) return void running();
      if (queue.queue_pending?.some((q) => q[1] === id)) return undefined;
      entry = await history(); // finished between the two looks?
      if (!entry) {
        await opts.onSubmitted?.(null);
        throw new ProviderError(`ComfyUI no longer has prompt ${id}: it was deleted from its queue or the server restarted`, {
          retryable: true,
          code: 'provider_error',
        });
      }
    }
    if (entry.status && (entry.status.status_str === 'error' || entry.status.completed === false)) {
      await opts.onSubmitted?.(null);
      const { interrupted, message } = failureOf(entry);
      // An interrupted prompt (another user, a restart) may run again; a failing workflow will fail again.
      throw new ProviderError(`ComfyUI prompt ${id} failed: ${message}`, { retryable: interrupted, code: 'provider_error' });
    }
    return entry;
  }

  /** The configured workflow of the job's output with our inputs at the configured node inputs. */
  private async workflowFor(job: GenerationJob, signal: AbortSignal | undefined): Promise<ComfyuiGraph> {
    const graph = structuredClone(this.config.workflows[job.output]);
    const { prompt, images } = hostedRequest(job, { multipleImages: false });
    const values: Partial<Record<ComfyuiInput, unknown>> = {
      prompt,
      width: latentSide(job.width),
      height: latentSide(job.height),
      seed: seedOf(job.generationId),
    };
    if (job.output === 'video') {
      const fps = this.config.videoFps;
      values.fps = fps;
      // Wan-style lengths: 4n + 1 frames.
      values.frames = 4 * Math.max(1, Math.round(((job.durationSeconds ?? 5) * fps) / 4)) + 1;
      if (!images.length)
        throw new ProviderError('The ComfyUI image-to-video workflow needs a start image: give the request a reference image', {
          retryable: false,
          code: 'provider_rejected',
        });
      values.image = await this.upload(job, images[0], signal);
    }
    for (const [key, value] of Object.entries(values) as [ComfyuiInput, unknown][]) {
      for (const target of this.config.inputs[job.output][key] ?? []) {
        const [node, input] = target.split('.');
        graph[node].inputs[input] = value;
      }
    }
    return graph;
  }

  /** Uploads the start image into ComfyUI's input folder; the LoadImage value naming it. */
  private async upload(job: GenerationJob, image: Buffer, signal: AbortSignal | undefined): Promise<string> {
    const sniffed = await sniff(image).catch(() => undefined);
    const form = new FormData();
    // One name per generation, overwritten: a retried attempt does not pile up copies.
    form.append(
      'image',
      new Blob([new Uint8Array(image)], { type: sniffed?.mime }),
      `media-api-${job.generationId}.${sniffed?.ext ?? 'png'}`,
    );
    form.append('overwrite', 'true');
    const saved = (await this.api.call('/upload/image', { method: 'POST', form, signal })) as SavedFile & { name?: unknown };
    if (typeof saved.name !== 'string' || !saved.name)
      throw new ProviderError('ComfyUI answered the image upload without a name', { retryable: true, code: 'provider_error' });
    return saved.subfolder ? `${saved.subfolder}/${saved.name}` : saved.name;
  }

  /** The saved file's bytes (GET /view), within the request deadline and the output size cap. */
  private async view(file: SavedFile, output: 'image' | 'video', signal: AbortSignal | undefined): Promise<Buffer> {
    const query = new URLSearchParams({ filename: file.filename ?? '', subfolder: file.subfolder ?? '', type: file.type ?? 'output' });
    const url = `${this.api.base}/view?${query}`;
    const timeout = AbortSignal.timeout(this.api.opts.requestTimeoutMs * 5);
    const fail = (message: string, retryable: boolean, status?: number, cause?: unknown) =>
      new ProviderError(`ComfyUI output ${file.filename}: ${message}`, { retryable, code: 'provider_error', status, cause });
    try {
      const res = await fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, redirect: 'error' });
      if (!res.ok) {
        await res.body?.cancel();
        throw fail(`GET /view answered ${res.status}`, res.status >= 500 || res.status === 429, res.status);
      }
      return await readCapped(res, COMFYUI_MAX_OUTPUT_BYTES[output], () =>
        fail(`it is over ${COMFYUI_MAX_OUTPUT_BYTES[output]} bytes`, false),
      );
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      if (err instanceof ProviderError) throw err;
      throw fail(
        timeout.aborted ? 'the download did not finish in time' : `the download failed: ${(err as Error).message}`,
        true,
        undefined,
        err,
      );
    }
  }
}

/** A response body read whole, refused past `max` bytes. */
async function readCapped(res: Response, max: number, tooBig: () => Error): Promise<Buffer> {
  if (Number(res.headers.get('content-length') ?? 0) > max) {
    await res.body?.cancel();
    throw tooBig();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body ?? []) {
    total += chunk.length;
    if (total > max) throw tooBig();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
