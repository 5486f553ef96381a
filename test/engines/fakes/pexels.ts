// A fake of the Pexels API (https://www.pexels.com/api/documentation/; response shapes as in the
// official client github.com/pexels/pexels-javascript src/types.ts: Photo, Video, the paginated
// lists, ErrorResponse {error}), refusing what the real one refuses:
//   - no `Authorization: <key>` header (the key itself, as createFetchWrapper.ts sends it) → 401;
//   - GET /v1/search and /videos/search only; `query` required; orientation landscape | portrait |
//     square; size large | medium | small; per_page 1–80; page ≥ 1 → 400 {"error"} otherwise
//     (the documentation lists the values; the fake refuses the rest outright);
//   - past `limit` searches: 429 with X-Ratelimit-Limit, X-Ratelimit-Remaining: 0 and
//     X-Ratelimit-Reset (the epoch second the quota renews), which successful answers carry too.
// Search matches an item whose words (`alt`) include every word of the query, and nothing else:
// orientation and size are left to the adapter's own filters, which the tests check.
// Files: photos at /photos/{id}/pexels-photo-{id}.jpeg, resized as Pexels' image CDN does for the
// src variants' parameters (w, h, dpr; fit=crop crops, else fits inside, never enlarging): flat
// JPEGs of the item's colour at that size. Video files at /video-files/{id}/{file}.mp4: H.264 MP4s
// of the listed size and the video's duration, in the item's colour with a white bar crossing it
// every 2 seconds (moving footage: frames at two times differ).
import type http from 'node:http';
import { jpeg, mp4, startFake, type Fake } from './common.ts';

export interface FakePhoto {
  id: number;
  width: number;
  height: number;
  color: string;
  alt: string;
  photographer?: string;
}

export interface FakeVideo {
  id: number;
  width: number;
  height: number;
  duration: number;
  color: string;
  alt: string;
  /** The video's files; sizes small enough to encode quickly. */
  files: { width: number; height: number; quality: 'hd' | 'sd'; file_type?: string }[];
}

export interface PexelsFake extends Fake {
  /** The search requests, in order. */
  searches: () => { path: string; query: URLSearchParams; authorization: string | undefined }[];
  /** The media paths (and query strings) downloaded. */
  downloads: string[];
}

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
const matchesQuery = (alt: string, query: string) => {
  const have = new Set(words(alt));
  return words(query).every((w) => have.has(w));
};

function badParams(q: URLSearchParams): string | undefined {
  if (!q.get('query')?.trim()) return 'query is required';
  const o = q.get('orientation');
  if (o !== null && !['landscape', 'portrait', 'square'].includes(o)) return 'orientation must be landscape, portrait or square';
  const s = q.get('size');
  if (s !== null && !['large', 'medium', 'small'].includes(s)) return 'size must be large, medium or small';
  const per = q.get('per_page');
  if (per !== null && !(/^\d+$/.test(per) && Number(per) >= 1 && Number(per) <= 80)) return 'per_page must be between 1 and 80';
  const page = q.get('page');
  if (page !== null && !(/^\d+$/.test(page) && Number(page) >= 1)) return 'page must be a positive integer';
  return undefined;
}

/** The size the image CDN answers for a photo URL's parameters. */
function resized(p: FakePhoto, q: URLSearchParams): { width: number; height: number } {
  const dpr = Number(q.get('dpr') ?? 1);
  const w = q.get('w') ? Number(q.get('w')) * dpr : Number.POSITIVE_INFINITY;
  const h = q.get('h') ? Number(q.get('h')) * dpr : Number.POSITIVE_INFINITY;
  if (q.get('fit') === 'crop') return { width: Math.min(w, p.width), height: Math.min(h, p.height) };
  const s = Math.min(1, w / p.width, h / p.height);
  return { width: Math.round(p.width * s), height: Math.round(p.height * s) };
}

export async function startPexelsFake(
  key: string,
  library: { photos?: FakePhoto[]; videos?: FakeVideo[]; limit?: number },
): Promise<PexelsFake> {
  const photos = library.photos ?? [];
  const videos = library.videos ?? [];
  const limit = library.limit ?? 20_000;
  const resetAt = Math.floor(Date.now() / 1000) + 30 * 24 * 3600;
  const downloads: string[] = [];
  let used = 0;
  let fake: Fake;
  const base = () => fake.url;

  const photoJson = (p: FakePhoto) => {
    const original = `${base()}/photos/${p.id}/pexels-photo-${p.id}.jpeg`;
    const v = (params: string) => `${original}?auto=compress&cs=tinysrgb&${params}`;
    const name = p.photographer ?? `Photographer ${p.id}`;
    return {
      id: p.id,
      width: p.width,
      height: p.height,
      url: `https://www.pexels.com/photo/${p.alt.replace(/\W+/g, '-')}-${p.id}/`,
      photographer: name,
      photographer_url: `https://www.pexels.com/@${name.toLowerCase().replace(/\W+/g, '-')}`,
      photographer_id: 1000 + p.id,
      avg_color: p.color,
      src: {
        original,
        large2x: v('dpr=2&h=650&w=940'),
        large: v('h=650&w=940'),
        medium: v('h=350'),
        small: v('h=130'),
        portrait: v('fit=crop&h=1200&w=800'),
        landscape: v('fit=crop&h=627&w=1200'),
        tiny: v('dpr=1&fit=crop&h=200&w=280'),
      },
      liked: false,
      alt: p.alt,
    };
  };
  const videoJson = (v: FakeVideo) => ({
    id: v.id,
    width: v.width,
    height: v.height,
    url: `https://www.pexels.com/video/${v.alt.replace(/\W+/g, '-')}-${v.id}/`,
    image: `${base()}/videos/${v.id}/pictures/preview-0.jpg`,
    duration: v.duration,
    user: { id: 2000 + v.id, name: `Filmmaker ${v.id}`, url: `https://www.pexels.com/@filmmaker-${v.id}` },
    video_files: v.files.map((f, i) => ({
      id: v.id * 10 + i,
      quality: f.quality,
      file_type: f.file_type ?? 'video/mp4',
      width: f.width,
      height: f.height,
      fps: 25,
      link: `${base()}/video-files/${v.id}/${v.id * 10 + i}_${f.width}_${f.height}.mp4`,
    })),
    video_pictures: [],
  });

  const serveMedia = async (path: string, query: URLSearchParams, res: http.ServerResponse) => {
    const photo = /^\/photos\/(\d+)\/pexels-photo-\d+\.jpeg$/.exec(path);
    const file = /^\/video-files\/(\d+)\/(\d+)_(\d+)_(\d+)\.mp4$/.exec(path);
    const p = photo && photos.find((x) => x.id === Number(photo[1]));
    const v = file && videos.find((x) => x.id === Number(file[1]));
    if (!p && !v) return res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    downloads.push(`${path}${query.size ? `?${query}` : ''}`);
    const bytes = p
      ? await jpeg(resized(p, query).width, resized(p, query).height, p.color)
      : await mp4(Number(file![3]), Number(file![4]), v!.duration, v!.color, true);
    res.writeHead(200, { 'content-type': p ? 'image/jpeg' : 'video/mp4', 'content-length': bytes.length }).end(bytes);
  };

  fake = await startFake(async (req, res, json) => {
    if (req.path.startsWith('/photos/') || req.path.startsWith('/video-files/')) return serveMedia(req.path, req.query, res);
    const search = req.path === '/v1/search' ? 'photos' : req.path === '/videos/search' ? 'videos' : undefined;
    if (!search || req.method !== 'GET') return json(404, { error: 'Not Found' });
    if (req.headers.authorization !== key) return json(401, { error: 'Unauthorized' });
    if (used >= limit) {
      return json(
        429,
        { error: 'Rate limit exceeded' },
        { 'X-Ratelimit-Limit': String(limit), 'X-Ratelimit-Remaining': '0', 'X-Ratelimit-Reset': String(resetAt) },
      );
    }
    const problem = badParams(req.query);
    if (problem) return json(400, { error: problem });
    used++;
    const q = req.query.get('query')!;
    const perPage = Number(req.query.get('per_page') ?? 15);
    const hits = search === 'photos' ? photos.filter((p) => matchesQuery(p.alt, q)) : videos.filter((v) => matchesQuery(v.alt, q));
    const page = hits.slice(0, perPage);
    const headers = {
      'X-Ratelimit-Limit': String(limit),
      'X-Ratelimit-Remaining': String(limit - used),
      'X-Ratelimit-Reset': String(resetAt),
    };
    json(
      200,
      {
        page: 1,
        per_page: perPage,
        total_results: hits.length,
        [search]: search === 'photos' ? page.map((p) => photoJson(p as FakePhoto)) : page.map((v) => videoJson(v as FakeVideo)),
        ...(hits.length > perPage
          ? { next_page: `https://api.pexels.com${req.path}/?page=2&per_page=${perPage}&query=${encodeURIComponent(q)}` }
          : {}),
      },
      headers,
    );
  });
  return Object.assign(fake, {
    downloads,
    searches: () =>
      fake.seen
        .filter((s) => s.path === '/v1/search' || s.path === '/videos/search')
        .map((s) => ({ path: s.path, query: s.query, authorization: s.headers.authorization })),
  });
}
