// What each platform accepts, checked before a publication is queued (README "Social
// publishing" documents the same table). A target whose platform cannot take the media is a 400
// naming the account and the limit; a platform whose adapter is not built yet is refused the same way.
import { instagramOptionProblem } from './platforms/instagram.ts';
import type { SocialPlatform } from './accounts.ts';

export interface PlatformLimits {
  /** Publishing to it is implemented (an adapter under src/services/social/platforms/). */
  available: boolean;
  captionMaxChars: number;
  image?: { types: string[]; maxBytes: number; maxPixels?: number; minAspect?: number; maxAspect?: number };
  video?: { types: string[]; maxBytes: number; minSeconds: number; maxSeconds: number; minAspect: number; maxAspect: number };
  /** Most images in one post (1: no carousel). */
  maxImages: number;
  /** What the platform's options (platform_options.<platform>) require of the media, when they matter. */
  options?: (media: MediaFacts[], options: Record<string, unknown>) => string | undefined;
}

const MB = 1024 * 1024;

/**
 * | platform | caption | image | video | images per post |
 * |---|---|---|---|---|
 * | X | 280 characters | JPEG, PNG, WebP, GIF ≤ 5 MB | MP4/MOV ≤ 512 MB, 0.5–140 s, aspect 1:3–3:1 | 4 |
 * | LinkedIn | 3000 characters | JPEG, PNG, GIF ≤ 36,152,320 pixels, ≤ 100 MB | MP4 75 KB–500 MB, 3 s–30 min, aspect 1:2.4–2.4:1 | 20 |
 * | Instagram | 2200 characters | JPEG ≤ 8 MB, aspect 4:5–1.91:1 | MP4/MOV ≤ 300 MB, 3 s–15 min, aspect 1:10–10:1 (a reel) | 10 |
 * | Facebook | 63,206 characters | JPEG, PNG, GIF, WebP, TIFF, BMP ≤ 4 MB | MP4/MOV ≤ 1 GB, 1 s–20 min, aspect 9:16–16:9 | 10 |
 * | Threads | 500 characters | JPEG, PNG ≤ 8 MB, aspect 1:10–10:1 | MP4/MOV ≤ 1 GB, ≤ 5 min, aspect 1:10–10:1 | 20 |
 * | TikTok | 2200 characters | JPEG, WebP ≤ 20 MB (photo posts) | MP4/WebM/MOV ≤ 4 GB, 1 s–10 min (the creator's own maximum checked when posting) | 35 |
 * | YouTube | 5000 characters (the description) | — | MP4/MOV/WebM ≤ 256 GB, 1 s–12 h | 0 |
 * | Pinterest | 800 characters (the description) | JPEG, PNG, WebP, BMP, TIFF ≤ 20 MB | MP4/MOV/M4V ≤ 2 GB, 4 s–15 min, aspect 1:2–1.91:1 | 5 |
 * Options each platform requires (src/services/social/options.ts): TikTok privacy_level, Pinterest board_id,
 * YouTube a title (or a caption to take it from).
 */
export const PLATFORM_LIMITS: Record<SocialPlatform, PlatformLimits> = {
  x: {
    available: true,
    captionMaxChars: 280,
    image: { types: ['image/jpeg', 'image/png', 'image/webp', 'image/gif'], maxBytes: 5 * MB },
    video: {
      types: ['video/mp4', 'video/quicktime'],
      maxBytes: 512 * MB,
      minSeconds: 0.5,
      maxSeconds: 140,
      minAspect: 1 / 3,
      maxAspect: 3,
    },
    maxImages: 4,
  },
  linkedin: {
    available: true,
    captionMaxChars: 3000,
    image: { types: ['image/jpeg', 'image/png', 'image/gif'], maxBytes: 100 * MB, maxPixels: 36_152_320 },
    video: { types: ['video/mp4'], maxBytes: 500 * MB, minSeconds: 3, maxSeconds: 30 * 60, minAspect: 1 / 2.4, maxAspect: 2.4 },
    maxImages: 20,
  },
  // Meta: Instagram content publishing, Facebook Page photos/videos (file_url), Threads media specs.
  instagram: {
    available: true,
    captionMaxChars: 2200,
    image: { types: ['image/jpeg'], maxBytes: 8 * MB, minAspect: 4 / 5, maxAspect: 1.91 },
    video: {
      types: ['video/mp4', 'video/quicktime'],
      maxBytes: 300 * MB,
      minSeconds: 3,
      maxSeconds: 15 * 60,
      minAspect: 1 / 10,
      maxAspect: 10,
    },
    maxImages: 10,
    options: instagramOptionProblem,
  },
  facebook: {
    available: true,
    captionMaxChars: 63206,
    image: { types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/tiff', 'image/bmp'], maxBytes: 4 * MB },
    video: {
      types: ['video/mp4', 'video/quicktime'],
      maxBytes: 1024 * MB,
      minSeconds: 1,
      maxSeconds: 20 * 60,
      minAspect: 9 / 16,
      maxAspect: 16 / 9,
    },
    maxImages: 10,
    options: (_media, o) =>
      o.post_type && o.post_type !== 'feed' ? `facebook publishing supports post_type feed only (got ${String(o.post_type)})` : undefined,
  },
  threads: {
    available: true,
    captionMaxChars: 500,
    image: { types: ['image/jpeg', 'image/png'], maxBytes: 8 * MB, minAspect: 1 / 10, maxAspect: 10 },
    video: {
      types: ['video/mp4', 'video/quicktime'],
      maxBytes: 1024 * MB,
      minSeconds: 0,
      maxSeconds: 5 * 60,
      minAspect: 1 / 10,
      maxAspect: 10,
    },
    maxImages: 20,
  },
  tiktok: {
    available: true,
    captionMaxChars: 2200,
    image: { types: ['image/jpeg', 'image/webp'], maxBytes: 20 * MB },
    video: {
      types: ['video/mp4', 'video/webm', 'video/quicktime'],
      maxBytes: 4 * 1024 * MB,
      minSeconds: 1,
      maxSeconds: 10 * 60,
      minAspect: 0,
      maxAspect: Number.POSITIVE_INFINITY,
    },
    maxImages: 35,
  },
  youtube: {
    available: true,
    captionMaxChars: 5000,
    video: {
      types: ['video/mp4', 'video/quicktime', 'video/webm'],
      maxBytes: 256 * 1024 * MB,
      minSeconds: 1,
      maxSeconds: 12 * 3600,
      minAspect: 0,
      maxAspect: Number.POSITIVE_INFINITY,
    },
    maxImages: 0,
  },
  pinterest: {
    available: true,
    captionMaxChars: 800,
    image: { types: ['image/jpeg', 'image/png', 'image/webp', 'image/bmp', 'image/tiff'], maxBytes: 20 * MB },
    video: {
      types: ['video/mp4', 'video/quicktime', 'video/x-m4v'],
      maxBytes: 2 * 1024 * MB,
      minSeconds: 4,
      maxSeconds: 15 * 60,
      minAspect: 1 / 2,
      maxAspect: 1.91,
    },
    maxImages: 5,
  },
};

export interface MediaFacts {
  kind: 'image' | 'video' | 'audio' | 'voice';
  contentType: string;
  sizeBytes: number;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
}

const fmtBytes = (n: number) => (n >= MB ? `${Math.round((n / MB) * 10) / 10} MB` : `${Math.round(n / 1024)} KB`);
const ratio = (r: number) => (r >= 1 ? `${Math.round(r * 100) / 100}:1` : `1:${Math.round((1 / r) * 100) / 100}`);

/** The limit the media or caption breaks on this platform (a sentence), or undefined when it fits. */
export function checkTarget(
  platform: SocialPlatform,
  media: MediaFacts[],
  caption: string,
  options: Record<string, unknown> = {},
): string | undefined {
  const l = PLATFORM_LIMITS[platform];
  if (!l.available) return `platform ${platform} publishing is not available yet`;
  const chars = [...caption].length;
  if (chars > l.captionMaxChars) return `the caption is ${chars} characters; ${platform} allows at most ${l.captionMaxChars}`;
  const videos = media.filter((m) => m.kind === 'video');
  const images = media.filter((m) => m.kind === 'image');
  if (media.some((m) => m.kind !== 'image' && m.kind !== 'video')) return 'only images and videos can be published';
  if (videos.length && media.length > 1) return 'a post holds one video, or images only';
  if (images.length && !l.image) return `${platform} does not take images`;
  if (images.length > l.maxImages) return `${images.length} images; ${platform} allows at most ${l.maxImages} per post`;
  for (const m of images) {
    if (!l.image) return `${platform} does not take images`;
    if (!l.image.types.includes(m.contentType))
      return `${m.contentType} images are not accepted by ${platform} (accepted: ${l.image.types.join(', ')})`;
    if (m.sizeBytes > l.image.maxBytes)
      return `the image is ${fmtBytes(m.sizeBytes)}; ${platform} allows at most ${fmtBytes(l.image.maxBytes)}`;
    if (l.image.maxPixels && m.width && m.height && m.width * m.height > l.image.maxPixels) {
      return `the image has ${m.width * m.height} pixels; ${platform} allows at most ${l.image.maxPixels}`;
    }
    const { minAspect, maxAspect } = l.image;
    if (minAspect && maxAspect && m.width && m.height) {
      const r = m.width / m.height;
      if (r < minAspect - 1e-6 || r > maxAspect + 1e-6)
        return `the image's aspect ratio is ${ratio(r)}; ${platform} takes ${ratio(minAspect)} to ${ratio(maxAspect)}`;
    }
  }
  for (const m of videos) {
    const v = l.video;
    if (!v) return `${platform} does not take videos`;
    if (!v.types.includes(m.contentType))
      return `${m.contentType} videos are not accepted by ${platform} (accepted: ${v.types.join(', ')})`;
    if (m.sizeBytes > v.maxBytes) return `the video is ${fmtBytes(m.sizeBytes)}; ${platform} allows at most ${fmtBytes(v.maxBytes)}`;
    const d = m.durationSeconds;
    if (d == null) return 'the video has no known duration';
    if (d < v.minSeconds || d > v.maxSeconds)
      return `the video lasts ${Math.round(d * 10) / 10} s; ${platform} takes ${v.minSeconds}–${v.maxSeconds} s`;
    if (m.width && m.height) {
      const r = m.width / m.height;
      if (r < v.minAspect - 1e-6 || r > v.maxAspect + 1e-6)
        return `the video's aspect ratio is ${ratio(r)}; ${platform} takes ${ratio(v.minAspect)} to ${ratio(v.maxAspect)}`;
    }
  }
  if (media.length && l.options) return l.options(media, options);
  return undefined;
}
