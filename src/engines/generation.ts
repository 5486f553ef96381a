// The request the engines of a generation take (the image, video and lipsync capabilities:
// ./image/types.ts, ./video/types.ts, ./lipsync/types.ts). A worker resolves a queued generation
// into a GenerationJob (dimensions resolved, reference media already fetched or read from
// storage), gets its engine from the registry (./index.ts: the local renderer, or the hosted model
// the catalog names for an AI model variant when its key is configured) and calls generate(); the
// engine writes one file into opts.workDir and describes it in a ProviderResult. Moving the file
// into storage is the caller's business.
import type { components as CatalogSchema } from '../../generated/catalog-data.d.ts';
import type { MediaFile } from '../media/ffmpeg.ts';
import type { SpokenWord } from './speech/types.ts';
import type { MediaManifest } from '../media/quality/manifest.ts';
import type { CustomerCopy } from './write/ad-copy.ts';
import type { FractionBox } from '../media/portrait.ts';

/** The hosted model behind an AI model variant (spec/catalog.yaml `provider`). */
export type ProviderModel = CatalogSchema['schemas']['ProviderModel'];

/**
 * A job submitted to a hosted provider, stored on the generation before polling so that a
 * worker that crashed resumes polling it instead of submitting (and paying) again.
 */
export interface ProviderJobRef {
  /** comfyui: a prompt queued on the self-hosted ComfyUI server (../selfhosted/comfyui.ts). */
  provider: 'replicate' | 'fal' | 'comfyui';
  id: string;
  /** fal: the app the request belongs to ("owner/alias"), whose /requests/{id} paths it is read under. */
  app?: string;
}

export type GenerationType = 'static_ad' | 'video_ad' | 'ugc_ad' | 'ai_model';
export type OutputKind = 'image' | 'video';
export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface GenerationJob {
  generationId: string; // uuid
  type: GenerationType;
  output: OutputKind;
  prompt: string;
  /** The customer's copy of a template ad (headline, subheadline, cta, offer), used verbatim; see ../write/ad-copy.ts. */
  copy?: CustomerCopy;
  title: string; // template or model title, for the layout
  templateSlug?: string;
  modelSlug?: string;
  variantId?: string;
  presetId?: string | null;
  qualityTier?: 'high' | 'low';
  aspectRatio: string; // e.g. '9:16' (resolved server-side, never 'auto' here)
  width: number; // resolved from aspect ratio + resolution (resolveDimensions)
  height: number;
  durationSeconds?: number; // videos
  imageFormat?: ImageFormat;
  brandColors?: string[]; // '#RRGGBB', from the brand kit
  /** The brand kit's colours by role (primary, secondary, accent, background, text), for hosted prompts. */
  brandColorRoles?: { role: string; hex: string }[];
  brandName?: string;
  referenceImages: Buffer[]; // already fetched (by a guarded client elsewhere) or read from storage
  /** MEDIA_MAX_PIXELS: a reference image with more pixels is refused (not decoded). */
  maxInputPixels?: number;
  // Local files inside the job's work folder, each with its sniffed type (the demuxer it is read with).
  sourceVideo?: MediaFile;
  motionVideo?: MediaFile;
  audio?: MediaFile;
  generateAudio: boolean;
  avatarName?: string;
  /** The avatar's portrait (PNG, JPEG or WebP bytes), composited as the presenter (static, video and UGC ads). */
  avatarImage?: Buffer;
  /**
   * A catalog avatar (src/services/catalog/presenters.ts): where the face and the mouth are on
   * avatarImage (fractions), and its mouth region drawn with each opening 1–3, which a UGC
   * presenter shows while speaking.
   */
  presenter?: { face: FractionBox; mouth: FractionBox; openings: Buffer[] };
  /** Position of presetId in its template's presets (picks the preset's arrangement). */
  presetIndex?: number;
  /** The brand kit's logo (PNG, JPEG or WebP bytes, checked at upload), drawn in the top-right corner. */
  logo?: Buffer;
  /** The brand kit's fonts (bundled DejaVu family names): the first sets the headline, the second (else the first) the other texts. */
  fonts?: string[];
  /** A custom reference's colours ('#RRGGBB', most dominant first): the palette when there is no brand kit. */
  referenceColors?: string[];
  /** Where a custom reference's subject is (fractions 0–1 of its frame): arranges the ad when no preset does. */
  referenceSubject?: { x: number; y: number; width: number; height: number } | null;
  /** The hosted model that makes this AI model variant, when the catalog names one (see ./index.ts). */
  providerModel?: ProviderModel;
  /**
   * Finishing a template a model made (local engine): the model's picture (a file in the job's
   * folder) that the template's texts, brand and CTA are composited over. A model's footage comes
   * as sourceVideo instead.
   */
  heroImage?: string;
  /** The template's picture without its texts (local engine): a first frame for a video model. */
  textless?: boolean;
  /** A narrated ad's words and when each is said (local engine): its captions, timed to them. */
  spokenWords?: SpokenWord[];
}

export interface ProviderResult {
  path: string;
  contentType: string;
  width: number;
  height: number;
  durationSeconds?: number;
  /** Whether the video has a sound track, when the provider knows (hosted outputs are probed). */
  hasAudio?: boolean;
  bytes: number;
  /** What the local renderer placed (texts, boxes, timings), for the media quality checker. */
  manifest?: MediaManifest;
}

export interface GenerateOptions {
  /** Folder the provider writes its output (and any scratch files, removed before returning) into. */
  workDir: string;
  /** Called with non-decreasing fractions in 0..1; the last call is 1 on success. */
  onProgress?: (fraction: number) => void;
  signal?: AbortSignal;
  /** A hosted job an earlier attempt submitted: poll it instead of submitting again. */
  resume?: ProviderJobRef;
  /** Stores (or with null forgets) the hosted job; awaited before the first poll. */
  onSubmitted?: (ref: ProviderJobRef | null) => Promise<void>;
}

/** An engine of a generation (image, video or lipsync). */
export interface Provider {
  name: string;
  generate(job: GenerationJob, opts: GenerateOptions): Promise<ProviderResult>;
  /** Best effort: stops a hosted job (the generation will not use it). */
  cancel?(ref: ProviderJobRef): Promise<void>;
}

/**
 * A failure of a provider. `retryable` tells the worker whether running the same job again may
 * succeed (transient: network, timeouts, 5xx, 429) or not (bad input, rejected request, a job the
 * remote service marked failed). `code` is a short machine-readable reason for the generation's
 * error object. Aborts are not ProviderErrors: they reject with the signal's reason.
 */
export class ProviderError extends Error {
  readonly retryable: boolean;
  readonly code: string;
  /** HTTP status of the remote answer behind the error, when there was one. */
  readonly status: number | undefined;
  /** The remote's Retry-After, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, opts: { retryable: boolean; code: string; status?: number; retryAfterMs?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.retryable = opts.retryable;
    this.code = opts.code;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export const CONTENT_TYPES: Record<ImageFormat | 'mp4', string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  mp4: 'video/mp4',
};

// ---------------------------------------------------------------------------------------
// Dimensions
// ---------------------------------------------------------------------------------------

/** Short side in pixels for the "p" resolutions. */
const SHORT_SIDE: Record<string, number> = { '480p': 480, '720p': 720, '1080p': 1080, '1440p': 1440, '2160p': 2160 };
/** Long side in pixels for the "K" resolutions. */
const LONG_SIDE: Record<string, number> = { '1K': 1024, '2K': 2048, '4K': 3840 };
/** Used when a caller passes no resolution. */
const DEFAULT_RESOLUTION: Record<OutputKind, string> = { image: '1K', video: '720p' };

const even = (v: number): number => Math.max(2, 2 * Math.round(v / 2));

/** Parses 'W:H' (positive integers, ratio between 1:4 and 4:1). */
export function parseAspectRatio(aspectRatio: string): { w: number; h: number } {
  const m = /^\s*(\d{1,3})\s*:\s*(\d{1,3})\s*$/.exec(aspectRatio ?? '');
  const w = m ? Number(m[1]) : 0;
  const h = m ? Number(m[2]) : 0;
  if (!m || w < 1 || h < 1 || w / h > 4 || h / w > 4) {
    throw new Error(
      `Unknown aspect ratio "${aspectRatio}": expected W:H such as 1:1, 4:5, 9:16 or 16:9 (between 1:4 and 4:1; "auto" must be resolved before rendering)`,
    );
  }
  return { w, h };
}

/**
 * Pixel size for an aspect ratio and a resolution: '720p'/'1080p' (and 480p, 1440p, 2160p) fix the
 * short side, '1K'/'2K'/'4K' the long side (1024, 2048, 3840). Both sides are even (H.264 yuv420p
 * needs that). `output` only picks the default resolution when none is given (image 1K, video 720p).
 */
export function resolveDimensions(
  aspectRatio: string,
  resolution: string | undefined | null,
  output: OutputKind,
): { width: number; height: number } {
  if (output !== 'image' && output !== 'video') throw new Error(`Unknown output kind "${output}": expected image or video`);
  const { w, h } = parseAspectRatio(aspectRatio);
  const res = (resolution ?? '').trim() || DEFAULT_RESOLUTION[output];
  const key = /^\d+p$/i.test(res) ? res.toLowerCase() : res.toUpperCase();
  const ratio = w / h; // width / height
  if (key in SHORT_SIDE) {
    const short = SHORT_SIDE[key];
    return ratio >= 1 ? { width: even(short * ratio), height: short } : { width: short, height: even(short / ratio) };
  }
  if (key in LONG_SIDE) {
    const long = LONG_SIDE[key];
    return ratio >= 1 ? { width: long, height: even(long / ratio) } : { width: even(long * ratio), height: long };
  }
  throw new Error(
    `Unknown resolution "${resolution}": expected one of ${[...Object.keys(SHORT_SIDE), ...Object.keys(LONG_SIDE)].join(', ')}`,
  );
}
