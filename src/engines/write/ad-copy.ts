// The words of a template ad (static, video and UGC ads, local or composited over a model's
// picture): its headline, subheadline, call to action, offer, badge and the caption lines a video
// ad shows in order. The customer's `copy` fields (POST /generations `copy`) are used verbatim;
// whatever they leave out is derived from the prompt here. Every ad renderer reads its texts
// through adCopy(), so the words are decided in one place.
import type { GenerationJob } from '../generation.ts';

/** The copy a customer sent with a template generation (each field optional, used verbatim). */
export interface CustomerCopy {
  headline?: string;
  subheadline?: string;
  cta?: string;
  offer?: string;
}

/** The texts an ad shows. */
export interface AdCopy {
  headline: string;
  /** A second line under the headline, or null for none. */
  subheadline: string | null;
  /** The call to action (button text). */
  cta: string;
  /** An offer (e.g. "20% off this week"), or null for none. */
  offer: string | null;
  /** Sticker text of banner layouts (SALE, NEW, -20%). */
  badge: string;
  /** The caption text of a video ad without narration, in reading order. */
  captions: string;
}

export type AdCopyInput = Pick<GenerationJob, 'prompt' | 'title' | 'type' | 'templateSlug' | 'copy'>;

/** The texts of the ad of `job`: the customer's copy first, else derived from the prompt. */
export function adCopy(job: AdCopyInput): AdCopy {
  const given = job.copy ?? {};
  return {
    headline: given.headline ?? headlineFrom(job.prompt, job.title),
    subheadline: given.subheadline ?? null,
    cta: given.cta ?? ctaFrom(job.prompt, job.type),
    offer: given.offer ?? null,
    badge: badgeFrom(job.prompt, job.templateSlug ?? ''),
    captions: captionText(job.prompt),
  };
}

export const LEADING_INSTRUCTION =
  /^(?:please\s+)?(?:create|make|generate|design|render|produce|draw|show|build|write|give\s+me)\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+|some\s+)?/i;
const MEDIA_NOUN =
  /\b(?:static\s+|video\s+|ugc\s+|social\s+|instagram\s+|tiktok\s+)?(?:ad|advert|advertisement|video|image|picture|photo|poster|banner|post|story|reel)s?\s+(?:for|about|of|showing|featuring|with)\s+/i;

/** A short headline from the prompt's first sentence, without the "create an ad for" part. */
export function headlineFrom(prompt: string, fallback: string): string {
  const first = (prompt || '').split(/(?<=[.!?])\s+|\n+/)[0]?.trim() ?? '';
  let text = first.replace(LEADING_INSTRUCTION, '');
  // "summer sale ad for our shoes" → "summer sale: our shoes"; "an ad for our shoes" → "our shoes".
  const noun = MEDIA_NOUN.exec(text);
  if (noun) {
    const before = text.slice(0, noun.index).trim();
    const after = text.slice(noun.index + noun[0].length).trim();
    text = before ? `${before}: ${after}` : after;
  }
  text = text.replace(/[.\s]+$/, '').trim();
  if (!text) text = (fallback || '').trim();
  if (!text) return 'New';
  const words = text.split(/\s+/);
  if (words.length > 12) text = `${words.slice(0, 12).join(' ')}…`;
  if (text.length > 90) text = `${text.slice(0, 89).trimEnd()}…`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Call to action from the prompt's wording. */
export function ctaFrom(prompt: string, type: GenerationJob['type']): string {
  const p = (prompt || '').toLowerCase();
  if (/\b(app|download|install)\b/.test(p)) return 'Install now';
  if (/\b(book|reserve|appointment)\b/.test(p)) return 'Book now';
  if (/\b(sign ?up|join|register|subscribe)\b/.test(p)) return 'Sign up';
  if (/\b(learn|discover|guide|how to)\b/.test(p)) return 'Learn more';
  if (/\b(order|delivery|food|menu)\b/.test(p)) return 'Order now';
  return type === 'ugc_ad' ? 'Get yours' : 'Shop now';
}

/** Sticker text for banner layouts: a discount from the prompt, else SALE / NEW. */
export function badgeFrom(prompt: string, slug: string): string {
  const pct = /(\d{1,2})\s*%/.exec(prompt || '');
  if (pct) return `-${pct[1]}%`;
  if (/\bfree shipping\b/i.test(prompt)) return 'FREE';
  return /sale|offer|deal|countdown/i.test(`${slug} ${prompt}`) ? 'SALE' : 'NEW';
}

/** The prompt as caption text: without a leading "create a …" instruction, first letter capitalised. */
export function captionText(prompt: string): string {
  const t = (prompt || '').replace(/\s+/g, ' ').trim().replace(LEADING_INSTRUCTION, '');
  return t.charAt(0).toUpperCase() + t.slice(1);
}
