// What a media file really is: the type from its magic bytes (file-type), then the facts a
// timeline needs from the decoder (sharp for images, ffprobe for audio/video). The declared type
// of an upload is only ever compared with this, never trusted.
import { createReadStream } from 'node:fs';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { probe, readsAsSniffed, SNIFF_BYTES } from './ffmpeg.ts';
import { DEFAULT_PIXEL_LIMITS, pixelProblem, type PixelLimits } from './limits.ts';

export type MediaKind = 'image' | 'video' | 'audio';

interface Supported {
  kind: MediaKind | 'av';
  ext: string;
  /** Types that are the same container (an .mp4 may hold audio only, an .m4a is an mp4). */
  family: string;
}

/** Types the editor accepts, by the MIME type file-type reports. */
const SUPPORTED: Record<string, Supported> = {
  'image/png': { kind: 'image', ext: 'png', family: 'png' },
  'image/jpeg': { kind: 'image', ext: 'jpg', family: 'jpeg' },
  'image/webp': { kind: 'image', ext: 'webp', family: 'webp' },
  'video/mp4': { kind: 'av', ext: 'mp4', family: 'mp4' },
  'video/quicktime': { kind: 'av', ext: 'mov', family: 'mp4' },
  'video/x-m4v': { kind: 'av', ext: 'mp4', family: 'mp4' },
  'audio/x-m4a': { kind: 'audio', ext: 'm4a', family: 'mp4' },
  'audio/mp4': { kind: 'audio', ext: 'm4a', family: 'mp4' },
  'video/webm': { kind: 'av', ext: 'webm', family: 'webm' },
  'audio/webm': { kind: 'audio', ext: 'webm', family: 'webm' },
  'audio/mpeg': { kind: 'audio', ext: 'mp3', family: 'mpeg' },
  'audio/wav': { kind: 'audio', ext: 'wav', family: 'wav' },
  'audio/aac': { kind: 'audio', ext: 'aac', family: 'aac' },
  'audio/ogg': { kind: 'audio', ext: 'ogg', family: 'ogg' },
  'audio/opus': { kind: 'audio', ext: 'opus', family: 'ogg' },
  'video/ogg': { kind: 'av', ext: 'ogv', family: 'ogg' },
  'audio/flac': { kind: 'audio', ext: 'flac', family: 'flac' },
};

/** Spellings of declared types that mean one of the types above. */
const ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/mpeg3': 'audio/mpeg',
  'audio/x-mp3': 'audio/mpeg',
  'audio/x-mpeg': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/m4a': 'audio/mp4',
  'audio/x-m4a': 'audio/mp4',
  'audio/x-aac': 'audio/aac',
  'audio/x-flac': 'audio/flac',
  'application/ogg': 'audio/ogg',
};

export const SUPPORTED_TYPES = Object.keys(SUPPORTED).filter((t) => t !== 'audio/x-m4a' && t !== 'video/x-m4v');

export { SNIFF_BYTES };

export function normalizeType(type: string): string {
  const t = type.split(';')[0].trim().toLowerCase();
  return ALIASES[t] ?? t;
}

export class MediaRejected extends Error {
  /** What the message is about: 'type' (unsupported or mismatching), 'decode', 'kind'. */
  readonly reason: 'type' | 'mismatch' | 'decode' | 'kind' | 'pixels';
  constructor(reason: MediaRejected['reason'], message: string) {
    super(message);
    this.name = 'MediaRejected';
    this.reason = reason;
  }
}

export interface Sniffed {
  mime: string;
  ext: string;
}

/** The real type of a file from its first bytes, or a MediaRejected naming what it looks like. */
export async function sniff(head: Uint8Array): Promise<Sniffed> {
  const found = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES)).catch(() => undefined);
  if (!found) throw new MediaRejected('type', 'is not a recognised image, video or audio file (unknown format)');
  if (!SUPPORTED[found.mime]) {
    throw new MediaRejected(
      'type',
      `is ${found.mime}, which the editor does not support (supported: PNG, JPEG, WebP images; MP4, MOV, WebM videos; MP3, WAV, M4A, AAC, OGG, Opus, FLAC audio)`,
    );
  }
  return { mime: found.mime, ext: found.ext };
}

/** Whether a declared type agrees with the sniffed one (same container family). */
export function declaredMatches(declared: string, sniffed: Sniffed): boolean {
  const d = normalizeType(declared);
  const want = SUPPORTED[d] ?? SUPPORTED[ALIASES[d] ?? ''];
  const got = SUPPORTED[sniffed.mime];
  if (!want || !got) return false;
  return want.family === got.family;
}

export interface Inspected {
  kind: MediaKind;
  contentType: string;
  ext: string;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  hasAudio: boolean | null;
}

/** Text that only playlists and scripts of other demuxers carry (HLS, ffconcat). */
const PLAYLIST_MARKERS = ['#EXTM3U', '#EXT-X-', 'ffconcat version'].map((m) => Buffer.from(m, 'latin1'));
const MARKER_OVERLAP = Math.max(...PLAYLIST_MARKERS.map((m) => m.length)) - 1;

/** Whether a playlist marker stands anywhere in the file (read once, in chunks). */
export async function carriesPlaylist(file: string): Promise<boolean> {
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const window = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    if (PLAYLIST_MARKERS.some((m) => window.includes(m))) return true;
    tail = window.subarray(Math.max(0, window.length - MARKER_OVERLAP));
  }
  return false;
}

/**
 * Decodes the header of a local file already sniffed as `sniffed`: kind, type and probed facts.
 * Audio and video must be plain files of their sniffed container all the way through: no playlist
 * anywhere in them, and read by ffmpeg's own format detection as that container (with only that
 * demuxer allowed), or they are refused; then they are probed with that demuxer forced.
 * An image or video frame over `limits` is a MediaRejected with reason 'pixels'.
 */
export async function inspect(file: string, sniffed: Sniffed, limits: PixelLimits = DEFAULT_PIXEL_LIMITS): Promise<Inspected> {
  const info = SUPPORTED[sniffed.mime];
  if (info.kind === 'image') {
    const meta = await sharp(file, { limitInputPixels: limits.maxPixels })
      .metadata()
      .catch((err: Error) => {
        if (/exceeds pixel limit/i.test(err.message))
          throw new MediaRejected('pixels', `has more than ${limits.maxPixels} pixels (width × height), the most accepted`);
        throw new MediaRejected('decode', `could not be decoded as ${sniffed.mime}: ${err.message}`);
      });
    if (!meta.width || !meta.height) throw new MediaRejected('decode', `could not be decoded as ${sniffed.mime} (no dimensions)`);
    const tooBig = pixelProblem(meta.width, meta.height, limits);
    if (tooBig) throw new MediaRejected('pixels', tooBig);
    return {
      kind: 'image',
      contentType: sniffed.mime,
      ext: info.ext,
      width: meta.width,
      height: meta.height,
      durationSeconds: null,
      hasAudio: null,
    };
  }
  if (await carriesPlaylist(file)) throw new MediaRejected('mismatch', `is not a plain ${sniffed.mime} file: it carries a playlist`);
  // Headers only, with the sniffed demuxer forced; nothing is decoded before the pixel check.
  const p = await probe({ path: file, type: sniffed.mime }).catch((err: Error) => {
    throw new MediaRejected('decode', `could not be decoded as ${sniffed.mime}: ${err.message.split('\n').slice(-1)[0]}`);
  });
  const plain = async () => {
    if ((await readsAsSniffed({ path: file, type: sniffed.mime })) === 'other_format') {
      throw new MediaRejected(
        'mismatch',
        `is not a plain ${sniffed.mime} file: its content does not read as that format all the way through`,
      );
    }
  };
  const duration = p.duration_seconds !== null && p.duration_seconds > 0 ? Math.round(p.duration_seconds * 1000) / 1000 : null;
  if (p.has_video && info.kind !== 'audio') {
    if (!p.width || !p.height) throw new MediaRejected('decode', 'is a video without a frame size');
    const tooBig = pixelProblem(p.width, p.height, limits);
    if (tooBig) throw new MediaRejected('pixels', `has frames that ${tooBig.replace(/^is /, 'are ')}`);
    if (!duration) throw new MediaRejected('decode', 'is a video without a duration');
    await plain();
    const contentType = sniffed.mime === 'video/x-m4v' ? 'video/mp4' : sniffed.mime;
    return {
      kind: 'video',
      contentType,
      ext: info.ext,
      width: p.width,
      height: p.height,
      durationSeconds: duration,
      hasAudio: p.has_audio,
    };
  }
  if (!p.has_audio) throw new MediaRejected('decode', `is ${sniffed.mime} without an audio or video stream`);
  if (!duration) throw new MediaRejected('decode', 'is audio without a duration');
  await plain();
  const contentType =
    info.family === 'mp4'
      ? 'audio/mp4'
      : info.family === 'webm'
        ? 'audio/webm'
        : info.family === 'ogg' && sniffed.mime !== 'audio/opus'
          ? 'audio/ogg'
          : sniffed.mime;
  const ext = info.family === 'mp4' ? 'm4a' : info.ext === 'ogv' ? 'ogg' : info.ext;
  return { kind: 'audio', contentType, ext, width: null, height: null, durationSeconds: duration, hasAudio: true };
}
