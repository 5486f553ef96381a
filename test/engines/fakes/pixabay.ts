// A fake of the Pixabay API (https://pixabay.com/api/docs/: "Search Images", "Search Videos",
// "Error Handling", "Rate Limit"), refusing what the real one refuses, with its plain-text errors:
//   - the key is the `key` query parameter; missing or wrong → 400 "[ERROR 400] Invalid or missing
//     API key";
//   - GET /api/ (images) and /api/videos/ only; q at most 100 characters; image_type all | photo |
//     illustration | vector; video_type all | film | animation; orientation all | horizontal |
//     vertical; per_page 3–200; page ≥ 1 → 400 "[ERROR 400] …" naming the parameter;
//   - past `limit` searches in the window: 429 "API rate limit exceeded" with X-RateLimit-Limit,
//     X-RateLimit-Remaining and X-RateLimit-Reset (the seconds left in the window), which
//     successful answers carry too.
// Search matches a hit whose tags include every word of q (orientation is left to the adapter's
// own filter, which the tests check). Files: images at /get/{id}_640.jpg (webformatURL, its long
// side 640) and /get/{id}_1280.jpg (largeImageURL, fitting 1280×1280); videos at
// /video/{id}/{large|medium|small|tiny}.mp4, each a flat H.264 MP4 of its listed size. A rendition
// a video lacks is listed with an empty url and zero size, as the real API lists it.
import type http from 'node:http';
import { jpeg, mp4, startFake, type Fake } from './common.ts';

export interface FakeImage {
  id: number;
  width: number;
  height: number;
  color: string;
  tags: string;
  user?: string;
}

export interface FakeClip {
  id: number;
  duration: number;
  color: string;
  tags: string;
  /** The renditions it has (the others are listed empty). */
  renditions: Partial<Record<'large' | 'medium' | 'small' | 'tiny', { width: number; height: number }>>;
}

export interface PixabayFake extends Fake {
  searches: () => { path: string; query: URLSearchParams }[];
  downloads: string[];
}

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
const matchesQuery = (tags: string, q: string) => {
  const have = new Set(words(tags));
  return words(q).every((w) => have.has(w));
};
const fit = (w: number, h: number, box: number) => {
  const s = Math.min(1, box / w, box / h);
  return { width: Math.round(w * s), height: Math.round(h * s) };
};

function badParams(q: URLSearchParams, videos: boolean): string | undefined {
  const enumOf = (name: string, values: string[]) => {
    const v = q.get(name);
    return v !== null && !values.includes(v) ? `[ERROR 400] "${name}" is not one of ${values.join(', ')}.` : undefined;
  };
  if ((q.get('q') ?? '').length > 100) return '[ERROR 400] "q" exceeds the maximum length of 100 characters.';
  const per = q.get('per_page');
  if (per !== null && !(/^\d+$/.test(per) && Number(per) >= 3 && Number(per) <= 200))
    return '[ERROR 400] "per_page" is out of valid range.';
  const page = q.get('page');
  if (page !== null && !(/^\d+$/.test(page) && Number(page) >= 1)) return '[ERROR 400] "page" is out of valid range.';
  return (
    enumOf('orientation', ['all', 'horizontal', 'vertical']) ??
    (videos ? enumOf('video_type', ['all', 'film', 'animation']) : enumOf('image_type', ['all', 'photo', 'illustration', 'vector']))
  );
}

export async function startPixabayFake(
  key: string,
  library: { images?: FakeImage[]; clips?: FakeClip[]; limit?: number; resetSeconds?: number },
): Promise<PixabayFake> {
  const images = library.images ?? [];
  const clips = library.clips ?? [];
  const limit = library.limit ?? 100;
  const downloads: string[] = [];
  let used = 0;
  let fake: Fake;
  const text = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);

  const userOf = (id: number, user?: string) => ({ user_id: 3000 + id, user: user ?? `creator${id}`, userImageURL: '' });
  const imageHit = (i: FakeImage) => {
    const web = fit(i.width, i.height, 640);
    return {
      id: i.id,
      pageURL: `https://pixabay.com/photos/${words(i.tags).join('-')}-${i.id}/`,
      type: 'photo',
      tags: i.tags,
      previewURL: `${fake.url}/get/${i.id}_150.jpg`,
      webformatURL: `${fake.url}/get/${i.id}_640.jpg`,
      webformatWidth: web.width,
      webformatHeight: web.height,
      largeImageURL: `${fake.url}/get/${i.id}_1280.jpg`,
      imageWidth: i.width,
      imageHeight: i.height,
      imageSize: i.width * i.height,
      views: 1,
      downloads: 1,
      likes: 0,
      comments: 0,
      ...userOf(i.id, i.user),
    };
  };
  const clipHit = (c: FakeClip) => ({
    id: c.id,
    pageURL: `https://pixabay.com/videos/${words(c.tags).join('-')}-${c.id}/`,
    type: 'film',
    tags: c.tags,
    duration: c.duration,
    videos: Object.fromEntries(
      (['large', 'medium', 'small', 'tiny'] as const).map((r) => {
        const v = c.renditions[r];
        return [
          r,
          v
            ? { url: `${fake.url}/video/${c.id}/${r}.mp4`, width: v.width, height: v.height, size: 1000, thumbnail: '' }
            : { url: '', width: 0, height: 0, size: 0, thumbnail: '' },
        ];
      }),
    ),
    views: 1,
    downloads: 1,
    likes: 0,
    comments: 0,
    ...userOf(c.id),
  });

  const serveMedia = async (path: string, res: http.ServerResponse) => {
    const img = /^\/get\/(\d+)_(640|1280)\.jpg$/.exec(path);
    const vid = /^\/video\/(\d+)\/(large|medium|small|tiny)\.mp4$/.exec(path);
    const i = img && images.find((x) => x.id === Number(img[1]));
    const c = vid && clips.find((x) => x.id === Number(vid[1]));
    const r = c?.renditions[vid![2] as 'large'];
    if (!i && !r) return text(res, 404, 'Not Found');
    downloads.push(path);
    let bytes: Buffer;
    if (i) {
      const size = img![2] === '640' ? fit(i.width, i.height, 640) : fit(i.width, i.height, 1280);
      bytes = await jpeg(size.width, size.height, i.color);
    } else bytes = await mp4(r!.width, r!.height, c!.duration, c!.color);
    res.writeHead(200, { 'content-type': i ? 'image/jpeg' : 'video/mp4', 'content-length': bytes.length }).end(bytes);
  };

  fake = await startFake(async (req, res) => {
    if (req.path.startsWith('/get/') || req.path.startsWith('/video/')) return serveMedia(req.path, res);
    const kind = req.path === '/api/' ? 'images' : req.path === '/api/videos/' ? 'videos' : undefined;
    if (!kind || req.method !== 'GET') return text(res, 404, 'Not Found');
    if (req.query.get('key') !== key) return text(res, 400, '[ERROR 400] Invalid or missing API key');
    const rate = (remaining: number) => ({
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(remaining),
      'X-RateLimit-Reset': String(library.resetSeconds ?? 60),
    });
    if (used >= limit) return text(res, 429, 'API rate limit exceeded', rate(0));
    const problem = badParams(req.query, kind === 'videos');
    if (problem) return text(res, 400, problem);
    used++;
    const q = req.query.get('q') ?? '';
    const perPage = Number(req.query.get('per_page') ?? 20);
    const hits = kind === 'images' ? images.filter((i) => matchesQuery(i.tags, q)) : clips.filter((c) => matchesQuery(c.tags, q));
    const body = {
      total: hits.length,
      totalHits: hits.length,
      hits: hits.slice(0, perPage).map((h) => (kind === 'images' ? imageHit(h as FakeImage) : clipHit(h as FakeClip))),
    };
    res.writeHead(200, { 'content-type': 'application/json', ...rate(limit - used) }).end(JSON.stringify(body));
  });
  return Object.assign(fake, {
    downloads,
    searches: () => fake.seen.filter((s) => s.path === '/api/' || s.path === '/api/videos/').map((s) => ({ path: s.path, query: s.query })),
  });
}
