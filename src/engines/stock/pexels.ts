// Pexels (https://www.pexels.com/api/documentation/; shapes as in the official client,
// github.com/pexels/pexels-javascript src/types.ts and createFetchWrapper.ts):
//   GET {PEXELS_API_BASE}/v1/search?query&orientation&size&per_page       photos
//   GET {PEXELS_API_BASE}/videos/search?query&orientation&size&per_page   videos
//        Authorization: {PEXELS_API_KEY}   (the key itself, no scheme)
//   → {photos: [{id, width, height, url, photographer, photographer_url, alt,
//                src: {original, large2x, large, medium, small, portrait, landscape, tiny}}], …}
//   → {videos: [{id, width, height, url, duration, user: {name, url},
//                video_files: [{link, width, height, quality, file_type, fps}]}], …}
//   orientation: landscape | portrait | square; size: small | medium | large (photos: at least 4,
//   12 or 24 MP; videos: HD, Full HD, 4K); per_page 1–80. Errors: {"error": "…"}; 429 when the
//   quota is spent, its X-Ratelimit-Reset the epoch second the quota renews.
// A photo's renditions: `large` (fits 940×650), `large2x` (fits 1880×1300) and `original`.
import { HostedApi, type ErrorReading } from '../hosted/hosted.ts';
import { fitInside, matches, resetMs, smallestFitting, type Rendition } from './select.ts';
import type { StockAttribution, StockEngine, StockItem, StockQuery } from './types.ts';

export interface StockEngineOptions {
  /** PEXELS_API_BASE or PIXABAY_API_BASE (no trailing slash). */
  baseUrl: string;
  key: string;
  /** PROVIDER_TIMEOUT_MS: one search. */
  requestTimeoutMs?: number;
  /** 429s waited out in place (when the wait is at most maxRetryAfterMs) before a retryable failure. */
  rateLimitWaits?: number;
  maxRetryAfterMs?: number;
}

interface PexelsPhoto {
  id: number;
  width: number;
  height: number;
  url: string;
  photographer: string;
  photographer_url: string;
  src: Record<'original' | 'large2x' | 'large', string>;
}

interface PexelsVideo {
  id: number;
  width: number;
  height: number;
  url: string;
  duration: number;
  user: { name: string; url: string };
  video_files: { link: string; width: number | null; height: number | null; quality: string | null; file_type: string }[];
}

const PER_PAGE = 20;
const LICENSE = {
  license: 'Pexels License: free to use; crediting the creator and Pexels is appreciated',
  licenseUrl: 'https://www.pexels.com/license/',
};

function readError(_status: number, body: unknown): ErrorReading {
  const e = (body as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? { message: e } : {};
}

/** The `size` filter: the smallest class that still holds the resolution asked for. */
function sizeFor(q: StockQuery): 'small' | 'medium' | 'large' {
  if (q.kind === 'video') {
    const short = Math.min(q.minWidth, q.minHeight);
    return short <= 720 ? 'small' : short <= 1080 ? 'medium' : 'large';
  }
  const mp = q.minWidth * q.minHeight;
  return mp <= 4e6 ? 'small' : mp <= 12e6 ? 'medium' : 'large';
}

const attribution = (name: string, authorUrl: string, pageUrl: string): StockAttribution => ({
  provider: 'Pexels',
  authorName: name,
  authorUrl,
  pageUrl,
  ...LICENSE,
});

function photoItem(p: PexelsPhoto, q: StockQuery): StockItem | undefined {
  if (!p?.src || !matches(q, p)) return undefined;
  const renditions: Rendition[] = [
    { url: p.src.large, ...fitInside(p.width, p.height, 940, 650) },
    { url: p.src.large2x, ...fitInside(p.width, p.height, 1880, 1300) },
    { url: p.src.original, width: p.width, height: p.height },
  ];
  const r = smallestFitting(renditions, q);
  return r && { id: String(p.id), kind: 'photo', ...r, attribution: attribution(p.photographer, p.photographer_url, p.url) };
}

function videoItem(v: PexelsVideo, q: StockQuery): StockItem | undefined {
  if (!Array.isArray(v?.video_files) || !matches(q, { ...v, durationSeconds: v.duration })) return undefined;
  const files = v.video_files
    .filter((f) => f.file_type === 'video/mp4' && f.width && f.height)
    .map((f) => ({ url: f.link, width: f.width as number, height: f.height as number }));
  const r = smallestFitting(files, q);
  return (
    r && {
      id: String(v.id),
      kind: 'video',
      ...r,
      durationSeconds: v.duration,
      attribution: attribution(v.user?.name ?? '', v.user?.url ?? '', v.url),
    }
  );
}

export function createPexels(o: StockEngineOptions): StockEngine {
  const api = new HostedApi('Pexels', o, o.key, readError, { retryAfter: (h) => resetMs(h, 'x-ratelimit-reset', true) });
  return {
    name: 'pexels',
    async search(q) {
      const params = new URLSearchParams({ query: q.text, orientation: q.orientation, size: sizeFor(q), per_page: String(PER_PAGE) });
      const path = q.kind === 'video' ? '/videos/search' : '/v1/search';
      const body = (await api.call(`${path}?${params}`, { method: 'GET', signal: q.signal })) as { photos?: unknown; videos?: unknown };
      const list = q.kind === 'video' ? body.videos : body.photos;
      if (!Array.isArray(list)) return [];
      return list
        .map((x) => (q.kind === 'video' ? videoItem(x as PexelsVideo, q) : photoItem(x as PexelsPhoto, q)))
        .filter((x): x is StockItem => Boolean(x));
    },
  };
}
