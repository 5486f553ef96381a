// The default provider: renders real media on this machine, no network.
//   images (static ads, image AI-model outputs): sharp composition (./ad-image.ts) encoded as
//     PNG, JPEG or WebP at exactly width × height;
//   videos (video ads, UGC ads, video AI-model outputs): the composed still (or an overlay over
//     the source/motion video) animated and encoded by ONE ffmpeg run (./ad-video.ts) into an
//     H.264/AAC MP4 of exactly width × height and the requested duration.
// Output: `${workDir}/${generationId}.{png,jpg,webp,mp4}`; scratch files live in a per-job
// folder inside workDir that is removed before generate() settles.
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FfmpegError, probe, runFfmpeg } from '../../media/ffmpeg.ts';
import { renderAd } from './ad-image.ts';
import { DEFAULT_VIDEO_SETTINGS, prepareVideo, type VideoSettings } from './ad-video.ts';
import {
  CONTENT_TYPES,
  ProviderError,
  type GenerateOptions,
  type GenerationJob,
  type Provider,
  type ProviderResult,
} from '../generation.ts';

const EXT = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function safeName(id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(id)) {
    throw new ProviderError(`generationId "${id}" is not a safe file name`, { retryable: false, code: 'invalid_job' });
  }
  return id;
}

export class LocalProvider implements Provider {
  readonly name = 'local';
  readonly videoSettings: VideoSettings;

  constructor(opts: { video?: Partial<VideoSettings> } = {}) {
    this.videoSettings = { ...DEFAULT_VIDEO_SETTINGS, ...opts.video };
  }

  async generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult> {
    const id = safeName(job.generationId);
    throwIfAborted(opts.signal);
    if (
      !Number.isInteger(job.width) ||
      !Number.isInteger(job.height) ||
      job.width < 16 ||
      job.height < 16 ||
      job.width > 8192 ||
      job.height > 8192
    ) {
      throw new ProviderError(`dimensions must be integers between 16 and 8192, got ${job.width}×${job.height}`, {
        retryable: false,
        code: 'invalid_dimensions',
      });
    }
    await mkdir(opts.workDir, { recursive: true });
    let last = -1;
    const progress = (f: number) => {
      if (f > last) {
        last = f;
        try {
          opts.onProgress?.(f);
        } catch {
          // a failing progress callback must not break the render
        }
      }
    };
    progress(0);
    return job.output === 'video' ? this.renderVideo(job, id, opts, progress) : this.renderImage(job, id, opts, progress);
  }

  private async renderImage(job: GenerationJob, id: string, opts: GenerateOptions, progress: (f: number) => void): Promise<ProviderResult> {
    const format = job.imageFormat ?? 'png';
    if (!(format in EXT)) throw new ProviderError(`unknown image format "${format}"`, { retryable: false, code: 'invalid_format' });
    const { buffer: buf, manifest } = await renderAd(job, format);
    throwIfAborted(opts.signal);
    const out = path.join(opts.workDir, `${id}.${EXT[format]}`);
    await writeFile(out, buf);
    progress(1);
    return { path: out, contentType: CONTENT_TYPES[format], width: job.width, height: job.height, bytes: buf.length, manifest };
  }

  private async renderVideo(job: GenerationJob, id: string, opts: GenerateOptions, progress: (f: number) => void): Promise<ProviderResult> {
    const scratch = path.join(opts.workDir, `.${id}.tmp`);
    const out = path.join(opts.workDir, `${id}.mp4`);
    await mkdir(scratch, { recursive: true });
    let ok = false;
    try {
      const plan = await prepareVideo(job, scratch, out, this.videoSettings);
      throwIfAborted(opts.signal);
      progress(0.05);
      try {
        await runFfmpeg(plan.args, {
          // The job's folder: its inputs (copies of stored media, fetched files) and scratch files are in it.
          cwd: opts.workDir,
          expectedDurationSeconds: plan.durationSeconds,
          signal: opts.signal,
          onProgress: (f) => progress(0.05 + 0.93 * f),
        });
      } catch (err) {
        if (err instanceof FfmpegError) {
          // Killed from outside (OOM killer, shutdown): worth another try. A non-zero exit is not.
          throw new ProviderError(`video render failed: ${err.message}`, {
            retryable: err.exitSignal !== null,
            code: 'render_failed',
            cause: err,
          });
        }
        throw err;
      }
      const info = await probe(out, { signal: opts.signal });
      const { size } = await stat(out);
      ok = true;
      progress(1);
      return {
        path: out,
        contentType: CONTENT_TYPES.mp4,
        width: info.width ?? job.width,
        height: info.height ?? job.height,
        durationSeconds: info.duration_seconds ?? plan.durationSeconds,
        bytes: size,
        manifest: plan.manifest,
      };
    } finally {
      await rm(scratch, { recursive: true, force: true });
      if (!ok) await rm(out, { force: true });
    }
  }
}
