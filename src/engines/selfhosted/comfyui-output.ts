// What the ComfyUI engine (./comfyui.ts) makes of the file a workflow saved: checked like an
// upload (sniffed, inspected with the sniffed demuxer forced, pixels bounded by MEDIA_MAX_PIXELS
// and MEDIA_MAX_DIMENSION, a video's length bounded), then made the job's file at the job's size:
//   image  PNG (or the job's image format), covering width × height (resized, centre-cropped);
//   video  H.264/AAC MP4 through our ffmpeg, covering width × height: an MP4 or WebM video
//          (SaveVideo, SaveWEBM) is transcoded; an animated WebP (SaveAnimatedWEBP), which this
//          ffmpeg cannot decode, is split into frames by sharp first.
import { link, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { checkMediaBytes } from '../../media/fetch-media.ts';
import { inputArgs, probe, runFfmpeg } from '../../media/ffmpeg.ts';
import { DEFAULT_PIXEL_LIMITS, type PixelLimits } from '../../media/limits.ts';
import { CONTENT_TYPES, ProviderError, type GenerationJob, type ImageFormat, type ProviderResult } from '../generation.ts';

/** Output size caps: an image is far smaller; a video may be long. */
const MAX_OUTPUT_BYTES = { image: 50 * 1024 * 1024, video: 500 * 1024 * 1024 };
/** Longest video accepted: our durations are at most 30 s; a workflow may pad, not make minutes. */
const MAX_OUTPUT_SECONDS = 120;
const EXT: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };
const WANTED = { image: ['image/png', 'image/jpeg', 'image/webp'], video: ['video/mp4', 'video/webm', 'image/webp'] };

export { MAX_OUTPUT_BYTES as COMFYUI_MAX_OUTPUT_BYTES };

/** Checks a workflow's output file and writes the job's file (format, size) into workDir. */
export async function storeComfyOutput(
  job: GenerationJob,
  bytes: Buffer,
  workDir: string,
  limits: PixelLimits = DEFAULT_PIXEL_LIMITS,
  signal?: AbortSignal,
): Promise<ProviderResult> {
  const invalid = (why: string, cause?: unknown) =>
    new ProviderError(`ComfyUI output is not a valid ${job.output}: ${why}`.slice(0, 1900), {
      retryable: false,
      code: 'provider_invalid_output',
      cause,
    });
  if (bytes.length > MAX_OUTPUT_BYTES[job.output]) throw invalid(`it is over ${MAX_OUTPUT_BYTES[job.output]} bytes`);
  const wanted = WANTED[job.output];
  const { sniffed, inspected } = await checkMediaBytes(bytes, {
    types: wanted,
    inspect: {
      file: (s) => path.join(workDir, `.${job.generationId}.comfyui.${s.ext}`),
      limits,
      // An animated WebP is read as an image (its first frame's size); it is split into frames below.
      kinds: job.output === 'video' ? ['video', 'image'] : ['image'],
      maxSeconds: MAX_OUTPUT_SECONDS,
    },
    refuse: (r) =>
      r.reason === 'type'
        ? invalid(`it is ${r.mime ?? 'not a recognised file'} (expected ${wanted.join(', ')})`)
        : r.reason === 'kind'
          ? invalid(`it is ${r.inspected.contentType}`)
          : invalid(`it ${r.message}`, r.reason === 'rejected' ? r.error : undefined),
  });
  const tmp = inspected.file;
  try {
    if (job.output === 'image') return await coverImage(job, tmp, limits);
    if (sniffed.mime === 'image/webp') return await webpToMp4(job, tmp, workDir, limits, invalid, signal);
    return await toMp4(job, inputArgs({ path: tmp, type: sniffed.mime }), workDir, signal);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** The image at the job's size and format. */
async function coverImage(job: GenerationJob, file: string, limits: PixelLimits): Promise<ProviderResult> {
  const want = job.imageFormat ?? 'png';
  const out = path.join(path.dirname(file), `${job.generationId}.${EXT[want]}`);
  const img = sharp(file, { limitInputPixels: limits.maxPixels }).rotate().resize(job.width, job.height, { fit: 'cover' });
  await (want === 'jpeg'
    ? img.flatten({ background: '#ffffff' }).jpeg({ quality: 92 })
    : want === 'webp'
      ? img.webp({ quality: 90 })
      : img.png()
  ).toFile(out);
  return { path: out, contentType: CONTENT_TYPES[want], width: job.width, height: job.height, bytes: (await stat(out)).size };
}

/** Encodes `input` (ffmpeg input arguments of a file in workDir) as the job's MP4, covering its size. */
async function toMp4(job: GenerationJob, input: string[], workDir: string, signal?: AbortSignal): Promise<ProviderResult> {
  const out = path.join(workDir, `${job.generationId}.mp4`);
  const { width: w, height: h } = job;
  await runFfmpeg(
    [
      ...input,
      '-map',
      '0:v:0',
      '-map',
      '0:a:0?',
      '-vf',
      `scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h},setsar=1`,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '20',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
      path.basename(out),
    ],
    { cwd: workDir, signal },
  );
  const p = await probe({ path: out, type: 'video/mp4' }, { signal });
  return {
    path: out,
    contentType: CONTENT_TYPES.mp4,
    width: p.width ?? w,
    height: p.height ?? h,
    durationSeconds: p.duration_seconds ?? undefined,
    hasAudio: p.has_audio,
    bytes: (await stat(out)).size,
  };
}

/**
 * An animated WebP's frames (PNGs written by sharp) encoded as the job's MP4. Frames may last
 * different times (an encoder merges repeated frames into one longer one): the rate is that of the
 * shortest frame, and a longer frame is written as many times as it lasts.
 */
async function webpToMp4(
  job: GenerationJob,
  file: string,
  workDir: string,
  limits: PixelLimits,
  invalid: (why: string) => ProviderError,
  signal?: AbortSignal,
): Promise<ProviderResult> {
  const meta = await sharp(file, { limitInputPixels: limits.maxPixels }).metadata();
  // An animation has frame delays (one frame, when every frame was the same); a still WebP has none.
  if (!meta.delay?.length) throw invalid('it is a still WebP image');
  const pages = meta.pages ?? 1;
  const delays = Array.from({ length: pages }, (_, i) => Math.max(10, meta.delay?.[i] ?? 100));
  const step = Math.min(...delays);
  const repeats = delays.map((d) => Math.max(1, Math.round(d / step)));
  if ((repeats.reduce((a, b) => a + b, 0) * step) / 1000 > MAX_OUTPUT_SECONDS)
    throw invalid(`it lasts more than the ${MAX_OUTPUT_SECONDS} s accepted`);
  const frames = path.join(workDir, `.${job.generationId}.frames`);
  await mkdir(frames, { recursive: true });
  try {
    let n = 0;
    for (let page = 0; page < pages; page++) {
      if (signal?.aborted) throw signal.reason;
      const first = path.join(frames, `f${String(n++).padStart(5, '0')}.png`);
      await sharp(file, { page, limitInputPixels: limits.maxPixels }).png({ compressionLevel: 1 }).toFile(first);
      for (let r = 1; r < repeats[page]; r++) await link(first, path.join(frames, `f${String(n++).padStart(5, '0')}.png`));
    }
    const pattern = path.join(path.basename(frames), 'f%05d.png');
    return await toMp4(job, ['-f', 'image2', '-framerate', String(1000 / step), '-c:v', 'png', '-i', pattern], workDir, signal);
  } finally {
    await rm(frames, { recursive: true, force: true });
  }
}
