// Pure, deterministic layout decisions of the local renderer: the palette (the texts are decided
// in ../write/ad-copy.ts) and the geometry of every element for a given job. No I/O here, so tests
// (and the image and video renderers) can ask where the product frame or the caption band is.
// A template preset picks an arrangement (by its place among the template's presets) and a tone
// (by the words of its id); a logo takes the end of the brand band; an avatar takes the UGC
// picture or a presenter disc in the product frame.
import type { GenerationJob } from '../generation.ts';

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
  /** The brand kit's logo box (top right, the end of the brand band); the logo is fitted inside it, right-aligned. */
  logo: Rect | null;
  /** The avatar: the whole picture of a UGC ad, else a presenter disc (the rect is its bounding square) in the product card. */
  avatar: Rect | null;
  avatarShape: 'fill' | 'disc';
  /** The preset's arrangement (standard without a preset). */
  arrangement: Arrangement;
}

/** How a preset arranges an ad: standard; flipped (product before the headline, or mirrored when landscape); inset (a smaller product frame). */
export type Arrangement = 'standard' | 'flipped' | 'inset';
export type PresetTone = 'dark' | 'light' | 'warm' | 'vivid';

export interface PresetLook {
  arrangement: Arrangement;
  /** The colour mood its name asks for (used when neither a brand kit nor a reference gives colours). */
  tone: PresetTone | null;
}

const ARRANGEMENTS: Arrangement[] = ['standard', 'flipped', 'inset'];

/**
 * A template preset's look: its arrangement by its place among the template's presets (so the
 * presets of one template differ in layout), its tone by the words of its id.
 */
export function presetLook(job: Pick<GenerationJob, 'presetId' | 'presetIndex'>): PresetLook | null {
  if (!job.presetId) return null;
  const index = job.presetIndex !== undefined && job.presetIndex >= 0 ? job.presetIndex : hash32(job.presetId);
  const id = job.presetId;
  const tone: PresetTone | null = /noir|dark|night|moody|black|midnight/.test(id)
    ? 'dark'
    : /white|studio|pastel|soft|marble|minimal|clean|spring|paper|note|card|morning/.test(id)
      ? 'light'
      : /golden|sunset|cozy|kitchen|holiday|red|hot|warm|gift/.test(id)
        ? 'warm'
        : /neon|energy|vivid|kinetic|slam|pop|color/.test(id)
          ? 'vivid'
          : null;
  return { arrangement: ARRANGEMENTS[index % ARRANGEMENTS.length], tone };
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
  const full =
    h.length === 3
      ? h
          .split('')
          .map((c) => c + c)
          .join('')
      : h;
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
  const h =
    m[1].length === 3
      ? m[1]
          .split('')
          .map((x) => x + x)
          .join('')
      : m[1];
  return `#${h.toLowerCase()}`;
}

/** Brand colours when the job has any valid '#RRGGBB', else a palette from the prompt's hash. */
export function paletteFor(
  job: Pick<GenerationJob, 'brandColors' | 'prompt' | 'title' | 'referenceColors' | 'presetId' | 'presetIndex'>,
): Palette {
  const valid = (list: string[] | undefined) => (list ?? []).map(normaliseHex).filter((c): c is string => c !== null);
  // Brand kit colours first, then the custom reference's colours.
  let brand = valid(job.brandColors);
  if (brand.length === 0) brand = valid(job.referenceColors);
  const tone = presetLook(job)?.tone ?? null;
  let primary: string;
  let secondary: string;
  let accent: string;
  if (brand.length > 0) {
    primary = brand[0];
    const [h, s, l] = rgbToHsl(primary);
    secondary = brand[1] ?? hslToHex(h, s, l > 50 ? l - 18 : l + 16);
    accent = brand[2] ?? brand[1] ?? hslToHex((h + 180) % 360, clamp(s + 10, 45, 90), 52);
  } else if (tone) {
    // The preset's mood, in a hue of its own.
    const rand = rng(`palette:${job.presetId}`);
    const hue = Math.floor(rand() * 360);
    const [sat, light] = { dark: [25, 11], light: [30, 92], warm: [78, 45], vivid: [95, 50] }[tone];
    primary = hslToHex(hue, sat, light);
    secondary = hslToHex((hue + 20) % 360, sat, tone === 'light' ? 82 : tone === 'dark' ? 20 : light - 14);
    accent = hslToHex((hue + 160) % 360, 85, tone === 'light' ? 45 : 58);
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

type LayoutInput = Pick<GenerationJob, 'type' | 'templateSlug' | 'width' | 'height' | 'referenceImages' | 'brandName' | 'avatarName'> &
  Partial<Pick<GenerationJob, 'presetId' | 'presetIndex' | 'logo' | 'avatarImage' | 'referenceSubject'>>;

/**
 * The arrangement: the preset's; else, following a custom reference, the product where the
 * reference has its subject (before the headline when the subject sits in the upper part, or
 * in the left part of a landscape frame; a smaller frame for a small subject); else standard.
 */
export function arrangementFor(job: LayoutInput, orientation: 'portrait' | 'landscape' | 'square'): Arrangement {
  const preset = presetLook(job);
  if (preset) return preset.arrangement;
  const s = job.referenceSubject;
  if (!s || !(s.width > 0 && s.height > 0)) return 'standard';
  const cx = s.x + s.width / 2;
  const cy = s.y + s.height / 2;
  if (orientation === 'landscape' ? cx < 0.42 : cy < 0.42) return 'flipped';
  if (s.width * s.height < 0.12) return 'inset';
  return 'standard';
}

/** The logo box at the end of a brand band (the band's text keeps the rest). */
function splitBand(band: Rect, hasLogo: boolean, gap: number): { text: Rect; logo: Rect | null } {
  if (!hasLogo) return { text: band, logo: null };
  const lw = Math.min(r(band.w * 0.45), r(band.h * 3));
  return { text: { ...band, w: Math.max(2, band.w - lw - gap) }, logo: { x: band.x + band.w - lw, y: band.y, w: lw, h: band.h } };
}

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
  const band = hasBrandLine || job.logo ? { x: m, y: m, w: W - 2 * m, h: r(u * 0.065) } : null;
  const split = band ? splitBand(band, Boolean(job.logo), gap) : null;
  const brand = hasBrandLine && split ? split.text : null;
  const top = band ? band.y + band.h + gap : m;
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
    logo: split?.logo ?? null,
    avatar: null,
    avatarShape: 'fill',
    arrangement: arrangementFor(job, orientation),
  };
}

/** The frame a full layout is drawn in, and the choices every part of it follows. */
interface LayoutFrame {
  W: number;
  H: number;
  kind: LayoutKind;
  orientation: AdLayout['orientation'];
  /** The frame's shorter side, the unit of every size. */
  u: number;
  m: number;
  gap: number;
  hasBand: boolean;
  hasLogo: boolean;
  arrangement: Arrangement;
}

/** The main blocks of a full layout: brand band, headline, product card, call to action, and a logo placed outside a band. */
interface Blocks {
  band: Rect | null;
  headline: Rect;
  product: Rect;
  cta: Rect | null;
  logo: Rect | null;
}

function fullLayout(job: LayoutInput): AdLayout {
  const W = job.width;
  const H = job.height;
  const kind = layoutKind(job);
  const ratio = H / W;
  const orientation = ratio >= 1.15 ? 'portrait' : ratio <= 1 / 1.15 ? 'landscape' : 'square';
  const u = Math.min(W, H);
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));
  const hasLogo = Boolean(job.logo);
  const f: LayoutFrame = {
    W,
    H,
    kind,
    orientation,
    u,
    m: r(u * (kind === 'ugc' ? 0.04 : 0.06)),
    gap: r(u * 0.03),
    hasBand: hasBrandLine || hasLogo,
    hasLogo,
    arrangement: kind === 'model' ? 'standard' : arrangementFor(job, orientation),
  };
  let { band, headline, product, cta, logo } =
    kind === 'model' ? modelBlocks(f) : orientation === 'landscape' ? columnBlocks(f) : stackedBlocks(f);
  if (f.arrangement === 'flipped' && orientation === 'landscape' && kind !== 'model') {
    // Mirrored: the text column on the right, the product on the left.
    const mirror = (a: Rect): Rect => ({ ...a, x: W - a.x - a.w });
    band = band && mirror(band);
    headline = mirror(headline);
    cta = cta && mirror(cta);
    product = mirror(product);
  }
  let brand: Rect | null = null;
  if (band && f.hasBand) {
    const split = splitBand(band, hasLogo, f.gap);
    brand = hasBrandLine ? split.text : null;
    logo = split.logo;
  }
  const border = Math.max(2, r(u * 0.014));
  const { avatar, productArea } = avatarPlace(f, job, product, border);
  const { slots, slotLabels } = productSlots(kind, productArea, job, Math.max(2, r(u * 0.01)));
  const badge = kind === 'banner' ? { cx: product.x + product.w - r(u * 0.085), cy: product.y + r(u * 0.085), r: r(u * 0.1) } : null;
  const cornerSize = Math.max(2, Math.min(f.m, r(u * 0.04)));
  return {
    kind,
    width: W,
    height: H,
    orientation,
    unit: u,
    margin: f.m,
    brand,
    headline,
    product,
    slots,
    slotLabels,
    cta,
    badge,
    caption: captionBox(f, product),
    corner: { x: 0, y: 0, w: cornerSize, h: cornerSize },
    logo,
    avatar,
    avatarShape: kind === 'ugc' ? 'fill' : 'disc',
    arrangement: f.arrangement,
  };
}

/** AI model output: the picture over most of the frame, a headline strip under it, a logo over its top-right corner. */
function modelBlocks({ W, H, u, m, gap, hasLogo }: LayoutFrame): Blocks {
  const strip = r(H * 0.11);
  const product = { x: m, y: m, w: W - 2 * m, h: H - 2 * m - strip - gap };
  const headline = { x: m, y: product.y + product.h + gap, w: W - 2 * m, h: strip };
  let logo: Rect | null = null;
  if (hasLogo) {
    const lh = r(u * 0.07);
    const lw = r(lh * 3);
    logo = { x: product.x + product.w - lw - r(u * 0.02), y: product.y + r(u * 0.02), w: lw, h: lh };
  }
  return { band: null, headline, product, cta: null, logo };
}

/** Landscape: a text column (band, headline, call to action) on the left, the product on the right. */
function columnBlocks({ W, H, u, m, gap, hasBand, arrangement }: LayoutFrame): Blocks {
  const colW = r(W * 0.44) - m;
  const band = { x: m, y: m, w: colW, h: r(u * 0.07) };
  const ctaH = r(u * 0.13);
  const cta = { x: m, y: H - m - ctaH, w: r(colW * 0.75), h: ctaH };
  const headTop = hasBand ? band.y + band.h + gap : m;
  const headline = { x: m, y: headTop, w: colW, h: cta.y - gap - headTop };
  const px = r(W * 0.48);
  let product = { x: px, y: m, w: W - m - px, h: H - 2 * m };
  if (arrangement === 'inset') product = inset(product, r(Math.min(product.w, product.h) * 0.1));
  return { band, headline, product, cta, logo: null };
}

/** Portrait and square: band on top, call to action at the bottom; headline and product stacked between (UGC: the headline over the picture). */
function stackedBlocks({ W, H, kind, orientation, u, m, gap, hasBand, arrangement }: LayoutFrame): Blocks {
  const band = { x: m, y: m, w: W - 2 * m, h: r(u * (kind === 'ugc' ? 0.07 : 0.065)) };
  const ctaH = r(u * (orientation === 'portrait' ? 0.11 : 0.1));
  const ctaW = r(u * 0.56);
  const cta = { x: r((W - ctaW) / 2), y: H - m - ctaH, w: ctaW, h: ctaH };
  const top = hasBand ? band.y + band.h + r(gap * 0.7) : m;
  if (kind === 'ugc') {
    let product = { x: m, y: top, w: W - 2 * m, h: cta.y - gap - top };
    if (arrangement === 'inset') product = inset(product, m);
    // Flipped: the caption box at the top of the picture instead of its lower part.
    const hy = arrangement === 'flipped' ? 0.12 : 0.66;
    const headline = {
      x: product.x + r(product.w * 0.06),
      y: product.y + r(product.h * hy),
      w: r(product.w * 0.88),
      h: r(product.h * 0.2),
    };
    return { band, headline, product, cta, logo: null };
  }
  const headFrac =
    { hero: 0.17, banner: 0.22, split: 0.15, quote: 0.22, grid: 0.15 }[kind as Exclude<LayoutKind, 'ugc' | 'model'>] *
    (orientation === 'square' ? 1.1 : 1);
  let headline = { x: m, y: top, w: W - 2 * m, h: r(H * headFrac) };
  const py = headline.y + headline.h + gap;
  const ph = cta.y - gap - py;
  const maxW = W - 2 * m;
  let pw = kind === 'quote' ? r(maxW * 0.8) : orientation === 'square' ? Math.min(maxW, r(ph * 1.6)) : maxW;
  if (arrangement === 'inset') pw = r(pw * 0.78);
  let product = { x: r((W - pw) / 2), y: py, w: pw, h: ph };
  if (arrangement === 'flipped') {
    // The product first, the headline under it.
    product = { ...product, y: top };
    headline = { ...headline, y: top + product.h + gap };
  }
  return { band, headline, product, cta, logo: null };
}

/**
 * The avatar: the whole UGC picture (the product moves into a card on it), else a presenter disc
 * in the lower corner of the product card. Returns it with the area the product images fill.
 */
function avatarPlace(f: LayoutFrame, job: LayoutInput, product: Rect, border: number): { avatar: Rect | null; productArea: Rect } {
  const inner = inset(product, border);
  if (!job.avatarImage || f.kind === 'model') return { avatar: null, productArea: inner };
  const flipped = f.arrangement === 'flipped';
  if (f.kind === 'ugc') {
    const cw = r(product.w * 0.42);
    const ch = Math.min(cw, r(product.h * 0.3));
    const cy = flipped ? product.y + r(product.h * 0.4) : product.y + r(product.h * 0.3);
    const cx = flipped ? product.x + r(product.w * 0.05) : product.x + product.w - cw - r(product.w * 0.05);
    return { avatar: { ...product }, productArea: { x: cx, y: cy, w: cw, h: ch } };
  }
  const d = r(Math.min(inner.w, inner.h) * 0.4);
  const off = border * 2;
  return {
    avatar: { x: flipped ? inner.x + inner.w - d - off : inner.x + off, y: inner.y + inner.h - d - off, w: d, h: d },
    productArea: inner,
  };
}

/** The product area tiled into image slots (split: two, labelled; grid: 4–9; else one per reference image, up to 10). */
function productSlots(kind: LayoutKind, area: Rect, job: LayoutInput, g: number): { slots: Rect[]; slotLabels: string[] } {
  const nRefs = job.referenceImages.length;
  if (kind === 'split') {
    const comparison = /-vs-|versus|comparison/.test(job.templateSlug ?? '');
    const slotLabels = comparison ? ['Them', 'Us'] : /problem/.test(job.templateSlug ?? '') ? ['Problem', 'Solution'] : ['Before', 'After'];
    return { slots: tile(area, 2, g), slotLabels };
  }
  if (kind === 'grid') return { slots: tile(area, Math.max(4, Math.min(nRefs, 9)), g), slotLabels: [] };
  return { slots: tile(area, Math.max(1, Math.min(nRefs, 10)), g), slotLabels: [] };
}

/** Video captions: lower part of the product frame (above the CTA), never over the headline. */
function captionBox({ kind, arrangement, u }: LayoutFrame, product: Rect): Rect {
  const capH = r(Math.min(product.h * 0.3, u * 0.2));
  if (kind !== 'ugc')
    return { x: product.x + r(product.w * 0.04), y: product.y + product.h - capH - r(u * 0.03), w: r(product.w * 0.92), h: capH };
  return arrangement === 'flipped'
    ? { x: product.x + r(product.w * 0.05), y: product.y + r(product.h * 0.7), w: r(product.w * 0.9), h: capH }
    : { x: product.x + r(product.w * 0.05), y: product.y + r(product.h * 0.08), w: r(product.w * 0.9), h: capH };
}
