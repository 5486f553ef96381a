// ffmpeg / ffprobe helpers shared by the renderers (generation providers, and later the editor's
// timeline renderer). The binaries come from the @ffmpeg-installer / @ffprobe-installer packages
// (static builds shipped inside npm packages), never from PATH.
//
//   runFfmpeg(args, {expectedDurationSeconds, onProgress, signal})  one ffmpeg run with progress
//   probe(file)                                                      ffprobe JSON, summarised
//   extractFrame(file, seconds)                                      one frame as a PNG buffer
//   escapeFilterValue(value)                                         quote a value for a filtergraph
import { spawn, type ChildProcess } from 'node:child_process';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';

export const FFMPEG_PATH: string = ffmpegInstaller.path;
export const FFPROBE_PATH: string = ffprobeInstaller.path;

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
    const fullArgs = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats', ...args];
    const child = spawn(FFMPEG_PATH, fullArgs, { stdio: ['ignore', 'pipe', 'pipe'], cwd: opts.cwd });
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
      child.kill('SIGKILL');
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
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
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
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => stderr.push(chunk));

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

function collect(program: string, args: string[], signal?: AbortSignal): Promise<Buffer> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const stderr = lineTail(STDERR_LINES);
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => stderr.push(c));
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
      reject(new FfmpegError(`${name} exited with ${code !== null ? `code ${code}` : `signal ${sig}`}${tail ? `:\n${tail}` : ''}`, code, sig, tail));
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
}

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
}

/** Summarises `ffprobe -show_format -show_streams` of a local file. */
export async function probe(file: string, opts: { signal?: AbortSignal } = {}): Promise<ProbeResult> {
  const out = await collect(
    FFPROBE_PATH,
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '--', file],
    opts.signal,
  );
  const json = JSON.parse(out.toString('utf8')) as { format?: { format_name?: string; duration?: string }; streams?: FfprobeStream[] };
  const streams = json.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic) ?? streams.find((s) => s.codec_type === 'video');
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
  };
}

/** Decodes the frame at `seconds` into a PNG buffer (thumbnails, tests). */
export function extractFrame(file: string, seconds: number, opts: { signal?: AbortSignal } = {}): Promise<Buffer> {
  return collect(
    FFMPEG_PATH,
    ['-hide_banner', '-nostdin', '-loglevel', 'error', '-ss', String(seconds), '-i', file, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'],
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
