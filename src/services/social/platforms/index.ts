// The social platform adapters, one file per platform. Platforms without one are refused at
// validation (services/social/limits.ts: `available: false`), never queued.
import type { SocialPlatform } from '../accounts.ts';
import { facebook } from './facebook.ts';
import type { SocialAdapter } from './http.ts';
import { instagram } from './instagram.ts';
import { linkedin } from './linkedin.ts';
import { pinterest } from './pinterest.ts';
import { threads } from './threads.ts';
import { tiktok } from './tiktok.ts';
import { x } from './x.ts';
import { youtube } from './youtube.ts';

export const SOCIAL_ADAPTERS: Partial<Record<SocialPlatform, SocialAdapter>> = {
  x,
  linkedin,
  // Meta (Graph APIs: containers published by id, media fetched from our signed URLs)
  instagram,
  facebook,
  threads,
  tiktok,
  youtube,
  pinterest,
};
export { PlatformError } from './http.ts';
