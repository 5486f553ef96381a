// The analysis of reference media (src/media/analysis.ts) as the references service uses it:
//   analyseFiles      the stored media of a reference, copied into the job's folder, analysed in order;
//   analyseUrlMedia   media given by URL to the target suggestions: fetched through the guarded
//                     client, sniffed and inspected like an upload, analysed in a temporary folder;
//   previewAnalysis   a catalog template's preview (our own SVG), rasterised and analysed once per
//                     process (memory cache keyed by the preview path); its text is the SVG's own text;
//   similarity        how alike two analyses are (palette, perceptual hash, text, layout), with why;
//   referenceStyle    what renderers use of a ready reference: palette, subject, text regions.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import {
  analyseImage,
  analyseVideo,
  deltaE,
  hexToLab,
  mergePalettes,
  type Box,
  type ImageAnalysis,
  type MediaAnalysis,
  type PaletteColor,
} from '../../media/analysis.ts';
import type { MediaFile } from '../../media/ffmpeg.ts';
import { fetchCheckedMedia } from '../../media/fetch-media.ts';
import { processTempFolder } from '../../media/work-folder.ts';
import { engineFor } from '../../engines/index.ts';
import { TranscriptionFailed } from '../../engines/transcribe/types.ts';
import { findSlideshowTemplate, findTemplate, PREVIEWS_DIR_URL } from '../catalog/catalog-data.ts';

export type { MediaAnalysis, ImageAnalysis, VideoAnalysis, Box, PaletteColor } from '../../media/analysis.ts';

const limitsOf = (ctx: Pick<AppContext, 'config'>) => ({
  maxPixels: ctx.config.mediaMaxPixels,
  maxDimension: ctx.config.mediaMaxDimension,
});

/** Analyses local media files (each in `workDir`, typed as sniffed), in order. */
export async function analyseFiles(
  ctx: Pick<AppContext, 'config' | 'log'>,
  files: MediaFile[],
  workDir: string,
  signal?: AbortSignal,
  maxVideoSeconds?: number,
): Promise<MediaAnalysis[]> {
  const transcriber = engineFor('transcribe', ctx);
  const out: MediaAnalysis[] = [];
  for (const file of files) {
    const opts = { limits: limitsOf(ctx), ocrDeadlineMs: ctx.config.referenceOcrTimeoutMs, signal };
    if (!file.type.startsWith('video/')) {
      out.push(await analyseImage(file.path, opts));
      continue;
    }
    out.push(
      await analyseVideo(file, {
        ...opts,
        workDir,
        maxSeconds: maxVideoSeconds,
        transcribe: transcriber
          ? async (f) => {
              try {
                return (await transcriber.transcribe(f.path, { contentType: f.type, signal })).text;
              } catch (err) {
                // A provider that refuses this audio for good leaves the transcript empty; an outage is retried.
                if (err instanceof TranscriptionFailed && !err.retryable) {
                  ctx.log.warn({ err: err.message }, 'reference analysis: the transcription provider refused the audio');
                  return null;
                }
                throw err;
              }
            }
          : undefined,
      }),
    );
  }
  return out;
}

/** A URL the target suggestions could not use: a 400 on `field`. */
export class UrlMediaRefused extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** Most bytes a suggestion (a free GET) fetches per URL. */
export const SUGGEST_IMAGE_MAX_BYTES = 10 * 1024 * 1024;
export const SUGGEST_VIDEO_MAX_BYTES = 50 * 1024 * 1024;
const SUGGEST_VIDEO_SECONDS = 30;

/** Fetches (guarded), checks and analyses media given by URL, for a request a client waits on. */
export async function analyseUrlMedia(
  ctx: AppContext,
  items: { url: string; kind: 'image' | 'video'; field: string }[],
): Promise<MediaAnalysis[]> {
  const dir = path.join(processTempFolder(ctx.config.dataDir), `suggest-${randomUUID()}`);
  await fs.mkdir(dir, { recursive: true });
  try {
    const files: MediaFile[] = [];
    for (const [i, item] of items.entries()) {
      const { inspected } = await fetchCheckedMedia(ctx.fetcher, item.url, {
        maxBytes: item.kind === 'video' ? SUGGEST_VIDEO_MAX_BYTES : SUGGEST_IMAGE_MAX_BYTES,
        inspect: { file: path.join(dir, `input-${i}`), limits: limitsOf(ctx), kinds: [item.kind] },
        refuse: (r) =>
          new UrlMediaRefused(
            item.field,
            r.reason === 'fetch'
              ? `could not be fetched: ${r.message}`
              : r.reason === 'kind'
                ? `${r.message}, not ${item.kind === 'image' ? 'an image' : 'a video'}`
                : r.message,
          ),
      });
      files.push({ path: inspected.file, type: inspected.facts.contentType });
    }
    // Suggestions are free and answered while the client waits: no transcript, the first 30 s of a video.
    return await analyseFiles(
      { config: { ...ctx.config, transcription: { ...ctx.config.transcription, url: undefined } }, log: ctx.log },
      files,
      dir,
      undefined,
      SUGGEST_VIDEO_SECONDS,
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------ catalog previews

const previewCache = new Map<string, Promise<ImageAnalysis | undefined>>();

/** The texts of an SVG's <text>/<tspan> elements (our previews: the words a viewer reads). */
function svgText(svg: string): string {
  const texts = [...svg.matchAll(/<(?:text|tspan)\b[^>]*>([^<]*)</g)].map((m) => m[1].trim()).filter(Boolean);
  const decoded = texts.map((t) =>
    t
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;|&apos;/g, "'"),
  );
  return decoded.join('\n');
}

/** The preview path (under spec/previews/) of a template or slideshow template. */
export function previewPathOf(slug: string): string | undefined {
  return findTemplate(slug)?.preview_image ?? findSlideshowTemplate(slug)?.preview_image;
}

/** The analysis of a template's catalog preview (cached per process), or undefined when it has none. */
export function previewAnalysis(ctx: Pick<AppContext, 'config'>, slug: string): Promise<ImageAnalysis | undefined> {
  const rel = previewPathOf(slug);
  if (!rel) return Promise.resolve(undefined);
  let cached = previewCache.get(rel);
  if (!cached) {
    cached = (async () => {
      const file = new URL(rel, PREVIEWS_DIR_URL);
      const bytes = await fs.readFile(file).catch(() => undefined);
      if (!bytes) return undefined;
      const a = await analyseImage(bytes, { limits: limitsOf(ctx), ocrDeadlineMs: 0, skipOcr: true });
      return { ...a, text: rel.endsWith('.svg') ? svgText(bytes.toString('utf8')) : '' };
    })().catch(() => undefined);
    previewCache.set(rel, cached);
  }
  return cached;
}

// ------------------------------------------------------------------------------------ similarity

export interface Similarity {
  /** 0–1, weighted: palette 0.4, perceptual hash 0.25, text 0.2, layout 0.15 (text weight moves to the others when neither has text). */
  score: number;
  palette: number;
  hash: number;
  text: number | null;
  layout: number;
  /** The strongest parts, as phrases for a reason ("palette close (ΔE 6)"). */
  why: string[];
}

/**
 * Palette similarity: for each colour of one palette, the ΔE to the closest colour of the other,
 * weighted by its proportion, both ways; 1 at ΔE 0, 0 at ΔE ≥ 50.
 */
export function paletteDistance(a: PaletteColor[], b: PaletteColor[]): number {
  if (!a.length || !b.length) return 50;
  const la = a.map((c) => ({ lab: hexToLab(c.hex), w: c.proportion }));
  const lb = b.map((c) => ({ lab: hexToLab(c.hex), w: c.proportion }));
  const oneWay = (x: typeof la, y: typeof lb) => {
    const total = x.reduce((s, c) => s + c.w, 0) || 1;
    return x.reduce((s, c) => s + c.w * Math.min(...y.map((d) => deltaE(c.lab, d.lab))), 0) / total;
  };
  return (oneWay(la, lb) + oneWay(lb, la)) / 2;
}

/** Hamming distance of two hex perceptual hashes (0–64). */
export function hashDistance(a: string, b: string): number {
  let d = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    let x = Number.parseInt(a[i], 16) ^ Number.parseInt(b[i], 16);
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d + 4 * Math.abs(a.length - b.length);
}

const STOP = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'for',
  'with',
  'in',
  'on',
  'to',
  'my',
  'our',
  'your',
  'is',
  'are',
  'at',
  'by',
  'from',
  'this',
  'that',
]);
export const textWords = (s: string) =>
  (
    s
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .match(/[a-z0-9]+/g) ?? []
  ).filter((w) => w.length > 1 && !STOP.has(w));

/** Jaccard similarity of the words of two texts, or null when neither has any. */
export function textSimilarity(a: string, b: string): { value: number | null; shared: string[] } {
  const wa = new Set(textWords(a));
  const wb = new Set(textWords(b));
  if (!wa.size && !wb.size) return { value: null, shared: [] };
  const shared = [...wa].filter((w) => wb.has(w));
  return { value: shared.length / (wa.size + wb.size - shared.length), shared };
}

const centre = (b: Box) => [b.x + b.width / 2, b.y + b.height / 2];

/** Layout similarity: orientation, the subject's place and the share of the frame text covers. */
function layoutSimilarity(a: ImageAnalysis | MediaAnalysis, b: ImageAnalysis | MediaAnalysis): number {
  const orient = a.orientation === b.orientation ? 1 : 0;
  let subject: number;
  if (a.subject && b.subject) {
    const [ax, ay] = centre(a.subject);
    const [bx, by] = centre(b.subject);
    subject = Math.max(0, 1 - Math.hypot(ax - bx, ay - by) / 0.7);
  } else subject = a.subject || b.subject ? 0.3 : 1;
  const cover = (x: Box[]) =>
    Math.min(
      1,
      x.reduce((s, r) => s + r.width * r.height, 0),
    );
  const text = 1 - Math.abs(cover(a.text_regions) - cover(b.text_regions));
  return 0.4 * orient + 0.4 * subject + 0.2 * text;
}

/** How alike two analyses are; `b` is the anchor (a preview, a proven reference). */
export function similarity(a: MediaAnalysis | ImageAnalysis, b: MediaAnalysis | ImageAnalysis): Similarity {
  const de = paletteDistance(a.palette, b.palette);
  const palette = Math.max(0, 1 - de / 50);
  const hd = hashDistance(a.phash, b.phash);
  // Unrelated images sit near 32 of 64 bits apart; only well below that counts.
  const hash = Math.max(0, 1 - hd / 32);
  const t = textSimilarity(a.text, b.text);
  const layout = layoutSimilarity(a, b);
  const score = t.value === null ? 0.5 * palette + 0.3 * hash + 0.2 * layout : 0.4 * palette + 0.25 * hash + 0.2 * t.value + 0.15 * layout;
  const why: string[] = [];
  if (palette >= 0.6) why.push(`palette close (ΔE ${Math.round(de)})`);
  if (hash >= 0.4) why.push(`similar composition (hash ${hd}/64 bits apart)`);
  if (t.shared.length)
    why.push(
      `shares the words ${t.shared
        .slice(0, 3)
        .map((w) => `“${w}”`)
        .join(', ')}`,
    );
  if (layout >= 0.75) why.push(`layout alike (${a.orientation}${a.subject && b.subject ? ', subject in the same place' : ''})`);
  return { score: Math.round(score * 1000) / 1000, palette, hash, text: t.value, layout, why };
}

/**
 * What renderers use of a ready reference: its items' palettes merged, the first subject found,
 * all text regions. Takes the reference as the API shows it (media[].analysis) or as stored (the
 * analysis column); null while it has no analysis.
 */
export function referenceStyle(ref: {
  analysis?: unknown;
  media?: { analysis?: unknown }[];
}): { palette: PaletteColor[]; subject: Box | null; text_regions: Box[] } | null {
  const raw: unknown[] = Array.isArray(ref.analysis) ? ref.analysis : (ref.media ?? []).map((m) => m.analysis);
  const items = raw.filter((a): a is MediaAnalysis => Boolean(a && typeof a === 'object' && 'palette' in a));
  if (!items.length) return null;
  return {
    palette: mergePalettes(items.map((a) => a.palette)),
    subject: items.find((a) => a.subject)?.subject ?? null,
    text_regions: items.flatMap((a) => a.text_regions).slice(0, 20),
  };
}

/** One analysis standing for a whole reference (its items merged), for similarity. */
export function combined(items: MediaAnalysis[]): MediaAnalysis | undefined {
  if (items.length <= 1) return items[0];
  const first = items[0];
  return {
    ...first,
    palette: mergePalettes(items.map((a) => a.palette)),
    text: items
      .map((a) => a.text)
      .filter(Boolean)
      .join('\n'),
  };
}
