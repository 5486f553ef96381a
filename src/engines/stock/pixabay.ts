// Pixabay (https://pixabay.com/api/docs/):
//   GET {PIXABAY_API_BASE}/?key&q&image_type=photo&orientation&safesearch=true&per_page   images
//   GET {PIXABAY_API_BASE}/videos/?key&q&video_type=film&safesearch=true&per_page         videos
//   The key is the `key` query parameter (kept out of every error message: ApiShape.urlSecret).
//   q at most 100 characters; orientation all | horizontal | vertical (images only; there is no
//   square); per_page 3–200.
//   → {total, totalHits, hits: [{id, pageURL, user, user_id, webformatURL, webformatWidth,
//      webformatHeight, largeImageURL, imageWidth, imageHeight, …}]}
//   → {total, totalHits, hits: [{id, pageURL, user, user_id, duration,
//      videos: {large, medium, small, tiny: {url, width, height, size, thumbnail}}}]}
//   (a missing rendition has an empty url). Errors are plain text ("[ERROR 400] …"); 429 "API
//   rate limit exceeded" with X-RateLimit-Reset, the seconds left in the 60-second window.
// A photo's renditions: webformatURL (its own size, at most 640) and largeImageURL (fits 1280×1280).
import { HostedApi } from '../hosted/hosted.ts';
import type { StockEngineOptions } from './pexels.ts';
import { fitInside, matches, resetMs, smallestFitting, type Rendition } from './select.ts';
import type { StockAttribution, StockEngine, StockItem, StockQuery } from './types.ts';

interface PixabayHit {
  id: number;
  pageURL: string;
  user: string;
  user_id: number;
  // images
  webformatURL?: string;
  webformatWidth?: number;
  webformatHeight?: number;
  largeImageURL?: string;
  imageWidth?: number;
  imageHeight?: number;
  // videos
  duration?: number;
  videos?: Record<string, { url: string; width: number; height: number }>;
}

const PER_PAGE = 20;
const ORIENTATION = { portrait: 'vertical', landscape: 'horizontal', square: 'all' } as const;

const attribution = (h: PixabayHit): StockAttribution => ({
  provider: 'Pixabay',
  authorName: h.user,
  authorUrl: `https://pixabay.com/users/${encodeURIComponent(h.user)}-${h.user_id}/`,
  pageUrl: h.pageURL,
  license: 'Pixabay Content License: free to use; attribution not required',
  licenseUrl: 'https://pixabay.com/service/license-summary/',
});

function photoItem(h: PixabayHit, q: StockQuery): StockItem | undefined {
  const width = h.imageWidth ?? 0;
  const height = h.imageHeight ?? 0;
  if (!matches(q, { width, height })) return undefined;
  const renditions: Rendition[] = [
    { url: h.webformatURL ?? '', width: h.webformatWidth ?? 0, height: h.webformatHeight ?? 0 },
    { url: h.largeImageURL ?? '', ...fitInside(width, height, 1280, 1280) },
  ];
  const r = smallestFitting(renditions, q);
  return r && { id: String(h.id), kind: 'photo', ...r, attribution: attribution(h) };
}

function videoItem(h: PixabayHit, q: StockQuery): StockItem | undefined {
  const renditions = Object.values(h.videos ?? {}).filter((v) => v?.url && v.width > 0 && v.height > 0);
  const largest = renditions.sort((a, b) => b.width * b.height - a.width * a.height)[0];
  if (!largest || !matches(q, { width: largest.width, height: largest.height, durationSeconds: h.duration })) return undefined;
  const r = smallestFitting(renditions, q);
  return r && { id: String(h.id), kind: 'video', ...r, durationSeconds: h.duration, attribution: attribution(h) };
}

export function createPixabay(o: StockEngineOptions): StockEngine {
  const api = new HostedApi('Pixabay', o, '', () => ({}), {
    retryAfter: (h) => resetMs(h, 'x-ratelimit-reset', false),
    urlSecret: o.key,
  });
  return {
    name: 'pixabay',
    async search(q) {
      const params = new URLSearchParams({ key: o.key, q: q.text.slice(0, 100), safesearch: 'true', per_page: String(PER_PAGE) });
      if (q.kind === 'video') params.set('video_type', 'film');
      else {
        params.set('image_type', 'photo');
        params.set('orientation', ORIENTATION[q.orientation]);
      }
      const path = q.kind === 'video' ? '/videos/' : '/';
      const body = (await api.call(`${path}?${params}`, { method: 'GET', signal: q.signal })) as { hits?: unknown };
      if (!Array.isArray(body.hits)) return [];
      return body.hits
        .map((h) => (q.kind === 'video' ? videoItem(h as PixabayHit, q) : photoItem(h as PixabayHit, q)))
        .filter((x): x is StockItem => Boolean(x));
    },
  };
}
