// ffmpeg / ffprobe helpers shared by the renderers (generation providers, the editor's timeline
// renderer, TTS, catalog samples). The binaries come from the @ffmpeg-installer / @ffprobe-installer
// packages (static builds shipped inside npm packages), never from PATH.
//
//   runFfmpeg(args, {cwd, expectedDurationSeconds, onProgress, signal})  one ffmpeg run with progress
//   inputArgs(file, options)                                            `-f <demuxer> … -i <file>` of a typed file
//   probe(file)                                                         ffprobe JSON, summarised
//   extractFrame(file, seconds)                                         one frame as a PNG buffer
//   escapeFilterValue(value)                                            quote a value for a filtergraph
//
// User media is hostile (security issue: an ID3 tag longer than file-type's 4,100-byte window,
// then an HLS playlist, was sniffed as MP3 and then opened by ffmpeg as HLS, whose segment was
// another workspace's file). So, at every depth:
//   - every input of every run is forced to the demuxer of the type it was sniffed as
//     (`inputArgs`); runFfmpeg refuses an input without `-f`, and one outside its job folder (`cwd`);
//     probe() and extractFrame() sniff a path they are given without a type;
//   - protocols are limited to plain files (`-protocol_whitelist file`), probes additionally to the
//     one demuxer (`-format_whitelist`): no playlists, no concat, no data:/http;
//   - decoded frames are bounded (`-max_pixels`), and so is each process's memory (ulimit -v);
//   - each run is its own process group, killed whole on abort, and killed at once when the Node
//     process that started it dies (./child-guard.ts), so no render outlives its worker.
import type { ChildProcess } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import { fileTypeFromBuffer } from 'file-type';
import { killGuarded, spawnGuarded } from './child-guard.ts';
import { DEFAULT_PIXEL_LIMITS } from './limits.ts';

export const FFMPEG_PATH: string = ffmpegInstaller.path;
export const FFPROBE_PATH: string = ffprobeInstaller.path;

/** Limits every ffmpeg/ffprobe run gets (configureMediaLimits sets them from the configuration). */
export const mediaLimits = {
  /** Largest decoded frame (width × height) of any input (MEDIA_MAX_PIXELS). */
  maxPixels: DEFAULT_PIXEL_LIMITS.maxPixels,
  /** Address-space limit of one ffmpeg/ffprobe process, in MiB (0: none). */
  maxMemoryMb: 4096,
};

export function configureMediaLimits(limits: Partial<typeof mediaLimits>): void {
  Object.assign(mediaLimits, limits);
}

/** A local media file and the type its bytes were sniffed as: how a file becomes an ffmpeg input. */
export interface MediaFile {
  path: string;
  /** The sniffed MIME type (e.g. audio/mpeg), never a declared one. */
  type: string;
}

const IMAGE = (decoder: string) => ['-f', 'image2', '-pattern_type', 'none', '-c:v', decoder];
/** The demuxer (and, for images, decoder) each supported type is read with: nothing is guessed. */
const DEMUXER: Record<string, string[]> = {
  'image/png': IMAGE('png'),
  'image/jpeg': IMAGE('mjpeg'),
  'image/webp': IMAGE('webp'),
  'video/mp4': ['-f', 'mov'],
  'video/quicktime': ['-f', 'mov'],
  'video/x-m4v': ['-f', 'mov'],
  'audio/mp4': ['-f', 'mov'],
  'audio/x-m4a': ['-f', 'mov'],
  'video/webm': ['-f', 'matroska'],
  'audio/webm': ['-f', 'matroska'],
  'audio/mpeg': ['-f', 'mp3'],
  'audio/wav': ['-f', 'wav'],
  'audio/aac': ['-f', 'aac'],
  'audio/ogg': ['-f', 'ogg'],
  'audio/opus': ['-f', 'ogg'],
  'video/ogg': ['-f', 'ogg'],
  'audio/flac': ['-f', 'flac'],
};

/** The demuxer name a type is forced to (e.g. `mp3`), or undefined for types we do not read. */
export function demuxerOf(type: string): string | undefined {
  const args = DEMUXER[type];
  return args ? args[1] : undefined;
}

/** The forced demuxer (and image decoder) arguments of a typed file, or an FfmpegError for a type we do not read. */
function forcedFormat(file: MediaFile): string[] {
  const forced = DEMUXER[file.type];
  if (!forced)
    throw new FfmpegError(`${path.basename(file.path)} is ${file.type}, which is not a media type ffmpeg may read here`, null, null, '');
  return forced;
}

/** The input arguments of `file`: its forced demuxer, then `options` (-ss, -t, -loop …), then `-i`. */
export function inputArgs(file: MediaFile, options: string[] = []): string[] {
  return [...forcedFormat(file), ...options, '-i', file.path];
}

/** Bytes file-type needs to recognise every supported type. */
export const SNIFF_BYTES = 4100;

/** The sniffed type of a local file from its first bytes (file-type), for paths given without one. */
export async function sniffFile(file: string): Promise<MediaFile> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const found = await fileTypeFromBuffer(head.subarray(0, bytesRead)).catch(() => undefined);
    if (!found || !DEMUXER[found.mime]) {
      throw new FfmpegError(
        `${path.basename(file)} is ${found?.mime ?? 'of an unknown type'}, which is not a media type ffmpeg may read here`,
        null,
        null,
        '',
      );
    }
    return { path: file, type: found.mime };
  } finally {
    await fh.close();
  }
}

const typed = async (file: string | MediaFile): Promise<MediaFile> => (typeof file === 'string' ? sniffFile(file) : file);

/** How many trailing stderr lines an error carries. */
const STDERR_LINES = 20;

/** ffmpeg exited non-zero (or was killed by a signal other than our abort). */
export class FfmpegError extends Error {
  readonly exitCode: number | null;
  readonly exitSignal: NodeJS.Signals | null;
  /** The last lines ffmpeg wrote to stderr. */
  readonly stderr: string;

  constructor(message: string, exitCode: number | null, exitSignal: NodeJS.Signals | null, stderr: string) {
    super(message);
    this.name = 'FfmpegError';
    this.exitCode = exitCode;
    this.exitSignal = exitSignal;
    this.stderr = stderr;
  }
}

export interface RunFfmpegOptions {
  /** Length of the output in seconds, to turn ffmpeg's out_time into a fraction. */
  expectedDurationSeconds?: number;
  /** Non-decreasing fractions in 0..1; called with 1 once ffmpeg exits successfully. */
  onProgress?: (fraction: number) => void;
  /** Aborting kills ffmpeg (SIGKILL); the promise rejects with the signal's reason once it has exited. */
  signal?: AbortSignal;
  /** Sees the child process right after spawn (tests use its pid). */
  onSpawn?: (child: ChildProcess) => void;
  /** Working directory of the ffmpeg process. */
  cwd?: string;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Keeps the last `max` lines of a stream of text chunks. */
function lineTail(max: number): { push(chunk: string): void; text(): string } {
  let lines: string[] = [];
  let partial = '';
  return {
    push(chunk: string) {
      const parts = (partial + chunk).split(/\r?\n|\r/);
      partial = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) lines.push(p);
      if (lines.length > max) lines = lines.slice(-max);
      if (partial.length > 4096) partial = partial.slice(-4096);
    },
    text() {
      return [...lines, ...(partial.trim() ? [partial] : [])].slice(-max).join('\n');
    },
  };
}

const within = (dir: string, file: string) => {
  const rel = path.relative(dir, path.resolve(dir, file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
};

/**
 * Checks and completes the inputs of an ffmpeg command line: every `-i` must have a forced `-f`
 * among its own options; a file input must lie inside `cwd` (the job's own folder); each file input
 * gets `-protocol_whitelist file` and `-max_pixels`. lavfi inputs are graphs this code writes.
 */
export function guardInputs(args: string[], cwd: string | undefined): string[] {
  const out: string[] = [];
  let segment: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a !== '-i') {
      segment.push(a);
      continue;
    }
    const input = args[++i];
    const f = segment.lastIndexOf('-f');
    if (f < 0 || f + 1 >= segment.length) throw new FfmpegError(`ffmpeg input ${input} has no forced format (-f)`, null, null, '');
    if (segment[f + 1] !== 'lavfi') {
      if (!cwd || !within(cwd, input)) throw new FfmpegError(`ffmpeg input ${input} is not a file of this job's folder`, null, null, '');
      segment.push('-protocol_whitelist', 'file', '-max_pixels', String(mediaLimits.maxPixels));
    }
    out.push(...segment, '-i', input);
    segment = [];
  }
  return [...out, ...segment];
}

/**
 * Runs ffmpeg with `args` (everything after the program name; inputs, filters, outputs).
 * Adds `-hide_banner -nostdin -y -loglevel error -progress pipe:1 -nostats` in front, parses the
 * progress stream (out_time_ms, which ffmpeg reports in microseconds) into a fraction of
 * `expectedDurationSeconds`, and resolves when ffmpeg exits 0. A non-zero exit rejects with an
 * FfmpegError whose message ends with the last stderr lines.
 */
export function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<void> {
  const { signal, onProgress } = opts;
  const expected = opts.expectedDurationSeconds && opts.expectedDurationSeconds > 0 ? opts.expectedDurationSeconds : 0;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const fullArgs = [
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      '-progress',
      'pipe:1',
      '-nostats',
      ...guardInputs(args, opts.cwd),
    ];
    const child = spawnGuarded(FFMPEG_PATH, fullArgs, { cwd: opts.cwd, maxMemoryMb: mediaLimits.maxMemoryMb });
    const stdout = child.stdout!;
    const stderr = lineTail(STDERR_LINES);
    let last = -1;
    let aborted = false;
    let settled = false;
    const report = (f: number) => {
      const v = Math.max(0, Math.min(1, f));
      if (v > last) {
        last = v;
        try {
          onProgress?.(v);
        } catch {
          // a failing progress callback must not break the render
        }
      }
    };

    const onAbort = () => {
      aborted = true;
      killGuarded(child);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (err: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };

    let buf = '';
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        const eq = line.indexOf('=');
        if (eq < 0) continue;
        const key = line.slice(0, eq);
        const value = line.slice(eq + 1);
        if ((key === 'out_time_ms' || key === 'out_time_us') && expected > 0) {
          const us = Number(value);
          // Stay below 1 until ffmpeg has actually exited (the trailer, faststart's moov move).
          if (Number.isFinite(us) && us >= 0) report(Math.min(0.99, us / 1e6 / expected));
        }
      }
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => stderr.push(chunk));

    child.on('error', (err) => finish(new FfmpegError(`could not start ffmpeg (${FFMPEG_PATH}): ${err.message}`, null, null, '')));
    child.on('close', (code, sig) => {
      if (aborted && signal) return finish(abortReason(signal));
      if (code === 0) {
        report(1);
        return finish(null);
      }
      const tail = stderr.text();
      const how = code !== null ? `code ${code}` : `signal ${sig}`;
      finish(new FfmpegError(`ffmpeg exited with ${how}${tail ? `:\n${tail}` : ''}`, code, sig, tail));
    });
    opts.onSpawn?.(child);
  });
}

/** Runs ffprobe/ffmpeg on one already guarded command line and collects its stdout. */
function collect(program: string, args: string[], signal?: AbortSignal): Promise<Buffer> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const child = spawnGuarded(program, args, { maxMemoryMb: mediaLimits.maxMemoryMb });
    const out: Buffer[] = [];
    const stderr = lineTail(STDERR_LINES);
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      killGuarded(child);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => stderr.push(c));
    child.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new FfmpegError(`could not start ${program}: ${err.message}`, null, null, ''));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (aborted && signal) return reject(abortReason(signal));
      if (code === 0) return resolve(Buffer.concat(out));
      const tail = stderr.text();
      const name = program === FFPROBE_PATH ? 'ffprobe' : 'ffmpeg';
      reject(
        new FfmpegError(
          `${name} exited with ${code !== null ? `code ${code}` : `signal ${sig}`}${tail ? `:\n${tail}` : ''}`,
          code,
          sig,
          tail,
        ),
      );
    });
  });
}

export interface ProbeResult {
  /** ffprobe's format_name, e.g. 'mov,mp4,m4a,3gp,3g2,mj2' or 'png_pipe'. */
  format: string;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  video_codec: string | null;
  audio_codec: string | null;
  has_audio: boolean;
  has_video: boolean;
  /** Frames per second of the video stream (avg_frame_rate, else r_frame_rate), or null. */
  fps: number | null;
}

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  disposition?: { attached_pic?: number };
}

/** The ffprobe/ffmpeg input options of a typed file: its demuxer, and no other demuxer or protocol. */
function probeInput(file: MediaFile, program: 'ffprobe' | 'ffmpeg'): string[] {
  const forced = forcedFormat(file);
  // ffprobe has no -c:v: an image's decoder follows from the image2 demuxer and the sniffed extension.
  // It reads headers only (the caller checks the frame size it reports); ffmpeg decodes, so it is bounded.
  if (program === 'ffprobe')
    return [...forced.slice(0, forced[1] === 'image2' ? 4 : 2), '-format_whitelist', forced[1], '-protocol_whitelist', 'file'];
  return [...forced, '-format_whitelist', forced[1], '-protocol_whitelist', 'file', '-max_pixels', String(mediaLimits.maxPixels)];
}

/**
 * Summarises `ffprobe -show_format -show_streams` of a local file, read with the demuxer of its
 * type (a path alone is sniffed first).
 */
export async function probe(input: string | MediaFile, opts: { signal?: AbortSignal } = {}): Promise<ProbeResult> {
  const file = await typed(input);
  const out = await collect(
    FFPROBE_PATH,
    ['-v', 'error', ...probeInput(file, 'ffprobe'), '-print_format', 'json', '-show_format', '-show_streams', '-i', file.path],
    opts.signal,
  );
  const json = JSON.parse(out.toString('utf8')) as { format?: { format_name?: string; duration?: string }; streams?: FfprobeStream[] };
  const streams = json.streams ?? [];
  const video =
    streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic) ?? streams.find((s) => s.codec_type === 'video');
  const audio = streams.find((s) => s.codec_type === 'audio');
  const dur = Number(json.format?.duration ?? video?.duration ?? audio?.duration);
  return {
    format: json.format?.format_name ?? 'unknown',
    duration_seconds: Number.isFinite(dur) ? dur : null,
    width: video?.width ?? null,
    height: video?.height ?? null,
    video_codec: video?.codec_name ?? null,
    audio_codec: audio?.codec_name ?? null,
    has_audio: audio !== undefined,
    has_video: video !== undefined,
    fps: frameRate(video?.avg_frame_rate) ?? frameRate(video?.r_frame_rate),
  };
}

/** An ffprobe rate such as `30000/1001` as a number (3 decimals), or null for `0/0` and the like. */
function frameRate(rate: string | undefined): number | null {
  const [n, d] = (rate ?? '').split('/').map(Number);
  const v = d ? n / d : n;
  return Number.isFinite(v) && v > 0 && v < 1000 ? Math.round(v * 1000) / 1000 : null;
}

/**
 * Whether ffmpeg, left to guess, reads `file` with the demuxer of its sniffed type. A file whose
 * content another demuxer claims (an HLS playlist behind an ID3 tag longer than the sniffing window,
 * a concat script) is not the plain media its first bytes say. Only the file itself is opened
 * (format and protocol whitelists), and only its header. Images (read with a forced decoder) pass.
 */
export async function readsAsSniffed(file: MediaFile, opts: { signal?: AbortSignal } = {}): Promise<'yes' | 'other_format' | 'unreadable'> {
  const demuxer = demuxerOf(file.type);
  if (!demuxer) return 'other_format';
  if (demuxer === 'image2') return 'yes';
  try {
    await collect(
      FFMPEG_PATH,
      [
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'error',
        '-format_whitelist',
        demuxer,
        '-protocol_whitelist',
        'file',
        '-max_pixels',
        String(mediaLimits.maxPixels),
        '-i',
        file.path,
        '-t',
        '0',
        '-f',
        'null',
        '-',
      ],
      opts.signal,
    );
    return 'yes';
  } catch (err) {
    // Another demuxer claimed the content; any other failure (a truncated or corrupt file) is the
    // decoder's to report, which the probe that follows does.
    if (err instanceof FfmpegError && err.exitCode !== null) return /not on whitelist/i.test(err.stderr) ? 'other_format' : 'unreadable';
    throw err;
  }
}

/** Decodes the frame at `seconds` into a PNG buffer (thumbnails, tests). */
export async function extractFrame(input: string | MediaFile, seconds: number, opts: { signal?: AbortSignal } = {}): Promise<Buffer> {
  const file = await typed(input);
  return collect(
    FFMPEG_PATH,
    [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      ...probeInput(file, 'ffmpeg'),
      '-ss',
      String(seconds),
      '-i',
      file.path,
      '-frames:v',
      '1',
      '-f',
      'image2pipe',
      '-c:v',
      'png',
      'pipe:1',
    ],
    opts.signal,
  );
}

/**
 * Escapes a value (a file path, a text) for use as a filter option inside a -filter_complex
 * graph: first the option level (\ ' :), then the graph level (\ ' [ ] , ;).
 */
export function escapeFilterValue(value: string): string {
  const optionLevel = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return optionLevel.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}
