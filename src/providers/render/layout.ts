// Pure, deterministic layout decisions of the local renderer: the palette, the texts derived
// from the prompt, and the geometry of every element for a given job. No I/O here, so tests
// (and the image and video renderers) can ask where the product frame or the caption band is.
import type { GenerationJob } from '../types.ts';

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type LayoutKind = 'hero' | 'banner' | 'split' | 'quote' | 'grid' | 'ugc' | 'model';

export interface Palette {
  /** Background; always fills the top-left corner of a composed ad. */
  primary: string;
  secondary: string;
  /** CTA button, badge. */
  accent: string;
  /** Text drawn on primary. */
  onPrimary: string;
  /** Text drawn on accent. */
  onAccent: string;
}

export interface AdLayout {
  kind: LayoutKind;
  width: number;
  height: number;
  orientation: 'portrait' | 'landscape' | 'square';
  /** min(width, height): the unit every size is a fraction of. */
  unit: number;
  margin: number;
  brand: Rect | null;
  headline: Rect;
  /** The card holding the reference images (or a placeholder product). */
  product: Rect;
  /** Reference-image slots inside the product frame; slot i shows reference i mod n. */
  slots: Rect[];
  /** Labels drawn on the slots (split layouts), same order as slots. */
  slotLabels: string[];
  cta: Rect | null;
  badge: { cx: number; cy: number; r: number } | null;
  /** Band where a video burns its captions in. */
  caption: Rect;
  /** A corner square that always shows palette.primary in a composed ad. */
  corner: Rect;
}

// ---------------------------------------------------------------------------------------
// Deterministic helpers
// ---------------------------------------------------------------------------------------

/** FNV-1a, 32 bit. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A deterministic stream of numbers in [0, 1) (xorshift32) seeded by a string. */
export function rng(seed: string): () => number {
  let state = hash32(seed) || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x100000000;
  };
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

export function hexToRgb(hex: string): [number, number, number] {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? h.split('').map((c) => c + c).join('') : h;
  return [parseInt(full.slice(0, 2), 16), parseInt(full.slice(2, 4), 16), parseInt(full.slice(4, 6), 16)];
}

function rgbToHex(r: number, g: number, b: number): string {
  return `#${[r, g, b].map((v) => clamp(Math.round(v), 0, 255).toString(16).padStart(2, '0')).join('')}`;
}

export function hslToHex(h: number, s: number, l: number): string {
  const sat = clamp(s, 0, 100) / 100;
  const lig = clamp(l, 0, 100) / 100;
  const a = sat * Math.min(lig, 1 - lig);
  const f = (k0: number) => {
    const k = (k0 + h / 30) % 12;
    return (lig - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))) * 255;
  };
  return rgbToHex(f(0), f(8), f(4));
}

function rgbToHsl(hex: string): [number, number, number] {
  const [r, g, b] = hexToRgb(hex).map((v) => v / 255);
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  if (max === min) return [0, 0, l * 100];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  const h = max === r ? (g - b) / d + (g < b ? 6 : 0) : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return [h * 60, s * 100, l * 100];
}

function luminance(hex: string): number {
  const [r, g, b] = hexToRgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** White or near-black, whichever reads better on `bg`. */
export function textOn(bg: string): string {
  return contrast('#ffffff', bg) >= contrast('#111111', bg) ? '#ffffff' : '#111111';
}

function normaliseHex(c: string): string | null {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(c.trim());
  if (!m) return null;
  const h = m[1].length === 3 ? m[1].split('').map((x) => x + x).join('') : m[1];
  return `#${h.toLowerCase()}`;
}

/** Brand colours when the job has any valid '#RRGGBB', else a palette from the prompt's hash. */
export function paletteFor(job: Pick<GenerationJob, 'brandColors' | 'prompt' | 'title'>): Palette {
  const brand = (job.brandColors ?? []).map(normaliseHex).filter((c): c is string => c !== null);
  let primary: string;
  let secondary: string;
  let accent: string;
  if (brand.length > 0) {
    primary = brand[0];
    const [h, s, l] = rgbToHsl(primary);
    secondary = brand[1] ?? hslToHex(h, s, l > 50 ? l - 18 : l + 16);
    accent = brand[2] ?? brand[1] ?? hslToHex((h + 180) % 360, clamp(s + 10, 45, 90), 52);
  } else {
    const rand = rng(`palette:${job.prompt || job.title}`);
    const hue = Math.floor(rand() * 360);
    const sat = 55 + rand() * 20;
    primary = hslToHex(hue, sat, 34 + rand() * 14);
    secondary = hslToHex((hue + 25 + rand() * 20) % 360, sat, 22 + rand() * 10);
    accent = hslToHex((hue + 150 + rand() * 60) % 360, 80, 55);
  }
  // A CTA that disappears into the background is no CTA.
  if (contrast(accent, primary) < 1.5) accent = textOn(primary) === '#ffffff' ? '#ffffff' : '#111111';
  return { primary, secondary, accent, onPrimary: textOn(primary), onAccent: textOn(accent) };
}

// ---------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------------------

export function layoutKind(job: Pick<GenerationJob, 'type' | 'templateSlug'>): LayoutKind {
  if (job.type === 'ai_model') return 'model';
  if (job.type === 'ugc_ad') return 'ugc';
  const slug = job.templateSlug ?? '';
  if (/before|after|-vs-|versus|comparison|problem/.test(slug)) return 'split';
  if (/testimonial|quote|review|founder|story/.test(slug)) return 'quote';
  if (/grid|feature|walkthrough|callout|montage/.test(slug)) return 'grid';
  if (/sale|offer|promo|countdown|flash|banner|seasonal/.test(slug)) return 'banner';
  return 'hero';
}

const r = Math.round;

/** Splits `area` into `n` tiles (gap `g`) along its long side, or in a grid for n ≥ 4. */
export function tile(area: Rect, n: number, g: number): Rect[] {
  if (n <= 1) return [area];
  const wide = area.w >= area.h;
  if (n === 2) {
    return wide
      ? [
          { x: area.x, y: area.y, w: r((area.w - g) / 2), h: area.h },
          { x: area.x + r((area.w - g) / 2) + g, y: area.y, w: area.w - r((area.w - g) / 2) - g, h: area.h },
        ]
      : [
          { x: area.x, y: area.y, w: area.w, h: r((area.h - g) / 2) },
          { x: area.x, y: area.y + r((area.h - g) / 2) + g, w: area.w, h: area.h - r((area.h - g) / 2) - g },
        ];
  }
  if (n === 3) {
    if (wide) {
      const bw = r((area.w - g) * 0.62);
      const sw = area.w - bw - g;
      const sh = r((area.h - g) / 2);
      return [
        { x: area.x, y: area.y, w: bw, h: area.h },
        { x: area.x + bw + g, y: area.y, w: sw, h: sh },
        { x: area.x + bw + g, y: area.y + sh + g, w: sw, h: area.h - sh - g },
      ];
    }
    const bh = r((area.h - g) * 0.62);
    const sh = area.h - bh - g;
    const sw = r((area.w - g) / 2);
    return [
      { x: area.x, y: area.y, w: area.w, h: bh },
      { x: area.x, y: area.y + bh + g, w: sw, h: sh },
      { x: area.x + sw + g, y: area.y + bh + g, w: area.w - sw - g, h: sh },
    ];
  }
  const cols = wide ? Math.ceil(Math.sqrt(n)) : Math.ceil(n / Math.ceil(Math.sqrt(n)));
  const rows = Math.ceil(n / cols);
  const out: Rect[] = [];
  const ch = (area.h - g * (rows - 1)) / rows;
  for (let row = 0; row < rows; row++) {
    const inRow = row === rows - 1 ? n - cols * (rows - 1) : cols;
    const cw = (area.w - g * (inRow - 1)) / inRow;
    for (let c = 0; c < inRow; c++) {
      const x0 = r(area.x + c * (cw + g));
      const y0 = r(area.y + row * (ch + g));
      const x1 = c === inRow - 1 ? area.x + area.w : r(area.x + c * (cw + g) + cw);
      const y1 = row === rows - 1 ? area.y + area.h : r(area.y + row * (ch + g) + ch);
      out.push({ x: x0, y: y0, w: x1 - x0, h: y1 - y0 });
    }
  }
  return out;
}

export const inset = (a: Rect, d: number): Rect => ({ x: a.x + d, y: a.y + d, w: Math.max(2, a.w - 2 * d), h: Math.max(2, a.h - 2 * d) });

type LayoutInput = Pick<GenerationJob, 'type' | 'templateSlug' | 'width' | 'height' | 'referenceImages' | 'brandName' | 'avatarName'>;

/**
 * Where everything goes. `overlay`: the layout of texts over a source video (no product card, no
 * slots): brand and headline at the top, CTA at the bottom, captions just above it.
 */
export function computeLayout(job: LayoutInput, mode: 'full' | 'overlay' = 'full'): AdLayout {
  return mode === 'overlay' ? overlayLayout(job) : fullLayout(job);
}

function overlayLayout(job: LayoutInput): AdLayout {
  const W = job.width;
  const H = job.height;
  const kind = layoutKind(job);
  const ratio = H / W;
  const orientation = ratio >= 1.15 ? 'portrait' : ratio <= 1 / 1.15 ? 'landscape' : 'square';
  const u = Math.min(W, H);
  const m = r(u * 0.06);
  const gap = r(u * 0.025);
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));
  const brand = hasBrandLine ? { x: m, y: m, w: W - 2 * m, h: r(u * 0.065) } : null;
  const top = brand ? brand.y + brand.h + gap : m;
  const headline = { x: m, y: top, w: W - 2 * m, h: r(H * (orientation === 'landscape' ? 0.24 : 0.16)) };
  const ctaH = r(u * 0.1);
  const ctaW = r(u * 0.56);
  const cta = { x: r((W - ctaW) / 2), y: H - m - ctaH, w: ctaW, h: ctaH };
  const capH = r(u * 0.2);
  const caption = { x: r(W * 0.05), y: cta.y - gap - capH, w: r(W * 0.9), h: capH };
  const product = { x: 0, y: 0, w: W, h: H };
  const cornerSize = Math.max(2, Math.min(m, r(u * 0.04)));
  return {
    kind,
    width: W,
    height: H,
    orientation,
    unit: u,
    margin: m,
    brand,
    headline,
    product,
    slots: [],
    slotLabels: [],
    cta,
    badge: null,
    caption,
    corner: { x: 0, y: 0, w: cornerSize, h: cornerSize },
  };
}

function fullLayout(job: LayoutInput): AdLayout {
  const W = job.width;
  const H = job.height;
  const kind = layoutKind(job);
  const ratio = H / W;
  const orientation = ratio >= 1.15 ? 'portrait' : ratio <= 1 / 1.15 ? 'landscape' : 'square';
  const u = Math.min(W, H);
  const m = r(u * (kind === 'ugc' ? 0.04 : 0.06));
  const gap = r(u * 0.03);
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));

  let brand: Rect | null = null;
  let headline: Rect;
  let product: Rect;
  let cta: Rect | null = null;

  if (kind === 'model') {
    const strip = r(H * 0.11);
    product = { x: m, y: m, w: W - 2 * m, h: H - 2 * m - strip - gap };
    headline = { x: m, y: product.y + product.h + gap, w: W - 2 * m, h: strip };
  } else if (orientation === 'landscape') {
    const colW = r(W * 0.44) - m;
    brand = { x: m, y: m, w: colW, h: r(u * 0.07) };
    const ctaH = r(u * 0.13);
    cta = { x: m, y: H - m - ctaH, w: r(colW * 0.75), h: ctaH };
    const headTop = hasBrandLine ? brand.y + brand.h + gap : m;
    headline = { x: m, y: headTop, w: colW, h: cta.y - gap - headTop };
    const px = r(W * 0.48);
    product = { x: px, y: m, w: W - m - px, h: H - 2 * m };
  } else {
    brand = { x: m, y: m, w: W - 2 * m, h: r(u * (kind === 'ugc' ? 0.07 : 0.065)) };
    const ctaH = r(u * (orientation === 'portrait' ? 0.11 : 0.1));
    const ctaW = r(u * 0.56);
    cta = { x: r((W - ctaW) / 2), y: H - m - ctaH, w: ctaW, h: ctaH };
    const top = hasBrandLine ? brand.y + brand.h + r(gap * 0.7) : m;
    if (kind === 'ugc') {
      product = { x: m, y: top, w: W - 2 * m, h: cta.y - gap - top };
      headline = { x: product.x + r(product.w * 0.06), y: product.y + r(product.h * 0.66), w: r(product.w * 0.88), h: r(product.h * 0.2) };
    } else {
      const headFrac = { hero: 0.17, banner: 0.22, split: 0.15, quote: 0.22, grid: 0.15 }[kind] * (orientation === 'square' ? 1.1 : 1);
      headline = { x: m, y: top, w: W - 2 * m, h: r(H * headFrac) };
      const py = headline.y + headline.h + gap;
      const ph = cta.y - gap - py;
      const maxW = W - 2 * m;
      const pw = kind === 'quote' ? r(maxW * 0.8) : orientation === 'square' ? Math.min(maxW, r(ph * 1.6)) : maxW;
      product = { x: r((W - pw) / 2), y: py, w: pw, h: ph };
    }
  }
  if (!hasBrandLine) brand = null;

  const border = Math.max(2, r(u * 0.014));
  const inner = inset(product, border);
  const g = Math.max(2, r(u * 0.01));
  const nRefs = job.referenceImages.length;
  let slots: Rect[];
  let slotLabels: string[] = [];
  if (kind === 'split') {
    slots = tile(inner, 2, g);
    const comparison = /-vs-|versus|comparison/.test(job.templateSlug ?? '');
    slotLabels = comparison ? ['Them', 'Us'] : /problem/.test(job.templateSlug ?? '') ? ['Problem', 'Solution'] : ['Before', 'After'];
  } else if (kind === 'grid') {
    slots = tile(inner, Math.max(4, Math.min(nRefs, 9)), g);
  } else {
    slots = tile(inner, Math.max(1, Math.min(nRefs, 10)), g);
  }

  const badge =
    kind === 'banner' ? { cx: product.x + product.w - r(u * 0.085), cy: product.y + r(u * 0.085), r: r(u * 0.1) } : null;

  // Video captions: lower part of the product frame (above the CTA), never over the headline.
  const capH = r(Math.min(product.h * 0.3, u * 0.2));
  const caption =
    kind === 'ugc'
      ? { x: product.x + r(product.w * 0.05), y: product.y + r(product.h * 0.08), w: r(product.w * 0.9), h: capH }
      : { x: product.x + r(product.w * 0.04), y: product.y + product.h - capH - r(u * 0.03), w: r(product.w * 0.92), h: capH };

  const cornerSize = Math.max(2, Math.min(m, r(u * 0.04)));
  return {
    kind,
    width: W,
    height: H,
    orientation,
    unit: u,
    margin: m,
    brand,
    headline,
    product,
    slots,
    slotLabels,
    cta,
    badge,
    caption,
    corner: { x: 0, y: 0, w: cornerSize, h: cornerSize },
  };
}
