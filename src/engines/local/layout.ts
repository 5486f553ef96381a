// Pure, deterministic layout decisions of the local renderer: the palette (the texts are decided
// in ../write/ad-copy.ts) and the geometry of every element for a given job. No I/O here, so tests
// (and the image and video renderers) can ask where the product frame or the caption band is.
// A template preset picks an arrangement (by its place among the template's presets) and a tone
// (by the words of its id); a logo takes the end of the brand band; an avatar takes the UGC
// picture or a presenter disc in the product frame.
import type { GenerationJob } from '../generation.ts';
import { adCopy, adStructure, type AdStructure } from '../write/ad-copy.ts';
import { mouthBox, type FractionBox } from '../../media/portrait.ts';
import { MARGIN, safeZoneFor } from '../../media/quality/manifest.ts';
import { contrastRatio, relativeLuminance } from '../../media/quality/pixels.ts';

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
  /** The line under the headline, when the copy has one. */
  subheadline: Rect | null;
  /** The offer line above the call to action, when the copy has one. */
  offer: Rect | null;
  /** UGC: where the portrait is drawn whole (the rest of the avatar rect is its blurred fill), its face and its mouth. */
  portrait: Rect | null;
  face: Rect | null;
  mouth: Rect | null;
  /** The area every text stays in: 4 % margins and more, out of a 9:16 feed's UI zones. */
  safe: Rect;
  /** Whether the ad shows pictures (reference images or an avatar); without, it is a typographic poster. */
  pictured: boolean;
  /**
   * A static poster's structure (../write/ad-copy.ts adStructure: a comparison, feature callouts,
   * before/after halves, a quote's rating and attribution, a sale's hero number) and the area it
   * fills; null for none.
   */
  structure: AdStructure | null;
  body: Rect | null;
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

/** WCAG contrast ratio (1–21) of two `#rrggbb` colours. */
export function contrast(a: string, b: string): number {
  return contrastRatio(relativeLuminance(...hexToRgb(a)), relativeLuminance(...hexToRgb(b)));
}

/** White or near-black, whichever reads better on `bg`. */
export function textOn(bg: string): string {
  return contrast('#ffffff', bg) >= contrast('#111111', bg) ? '#ffffff' : '#111111';
}

/** The text colour for `bg` with at least 4.5:1 contrast: white, else near-black, else black (one of them always has it). */
export function readableOn(bg: string): string {
  if (contrast('#ffffff', bg) >= 4.5 && contrast('#ffffff', bg) >= contrast('#111111', bg)) return '#ffffff';
  return contrast('#111111', bg) >= 4.5 ? '#111111' : '#000000';
}

/** The colour between a and b at t (0: a, 1: b). */
export function mix(a: string, b: string, t: number): string {
  const [x, y] = [hexToRgb(a), hexToRgb(b)];
  return rgbToHex(...(x.map((v, i) => v + (y[i] - v) * t) as [number, number, number]));
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
  return { primary, secondary, accent, onPrimary: readableOn(primary), onAccent: readableOn(accent) };
}

/** The palette on a near-white ground (a minimal hero): the accent kept when it shows on it, else a deep shade of its hue. */
export function lightPalette(p: Palette): Palette {
  const primary = '#f5f5f7';
  const [h] = rgbToHsl(p.accent);
  const accent = contrast(p.accent, primary) >= 3 ? p.accent : hslToHex(h, 70, 38);
  return { primary, secondary: '#e6e6eb', accent, onPrimary: readableOn(primary), onAccent: readableOn(accent) };
}

// ---------------------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------------------

export function layoutKind(job: Pick<GenerationJob, 'type' | 'templateSlug'>): LayoutKind {
  if (job.type === 'ai_model') return 'model';
  if (job.type === 'ugc_ad') return 'ugc';
  const slug = job.templateSlug ?? '';
  if (/before|after|-vs-|versus|comparison|problem/.test(slug)) return 'split';
  if (/sale|offer|promo|countdown|flash|banner|seasonal/.test(slug)) return 'banner';
  if (/testimonial|quote|review|founder/.test(slug)) return 'quote';
  if (/grid|feature|walkthrough|callout|montage/.test(slug)) return 'grid';
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

export type LayoutInput = Pick<
  GenerationJob,
  'type' | 'templateSlug' | 'width' | 'height' | 'referenceImages' | 'brandName' | 'avatarName'
> &
  Partial<
    Pick<GenerationJob, 'presetId' | 'presetIndex' | 'logo' | 'avatarImage' | 'referenceSubject' | 'prompt' | 'title' | 'copy' | 'output'>
  > & {
    /** The avatar portrait's width / height and face box (UGC: where the product card may go); measured by the composer. */
    portraitShape?: { aspect: number; face: FractionBox | null; mouth?: FractionBox };
  };

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

/** The text margins (at least MARGIN of each side, 6 % of the shorter side otherwise) and the area texts stay in. */
function safeArea(W: number, H: number, u: number): { mx: number; my: number; safe: Rect } {
  const mx = Math.max(r(u * 0.06), Math.ceil(W * (MARGIN + 0.005)));
  const my = Math.max(r(u * 0.06), Math.ceil(H * (MARGIN + 0.005)));
  const zone = safeZoneFor(W, H);
  const top = zone ? Math.ceil(H * (zone.top + 0.01)) : my;
  const bottom = zone ? Math.floor(H * (1 - zone.bottom - 0.01)) : H - my;
  return { mx, my, safe: { x: mx, y: top, w: W - 2 * mx, h: bottom - top } };
}

const orientationOf = (W: number, H: number): AdLayout['orientation'] =>
  H / W >= 1.15 ? 'portrait' : H / W <= 1 / 1.15 ? 'landscape' : 'square';

/** Which optional texts the copy of the job has. */
function copyHas(job: LayoutInput): { sub: boolean; offer: boolean } {
  const c = adCopy({ prompt: job.prompt ?? '', title: job.title ?? '', type: job.type, templateSlug: job.templateSlug, copy: job.copy });
  return { sub: Boolean(c.subheadline), offer: Boolean(c.offer) };
}

/** The structure a static poster (no pictures, not a video) shows, else null. */
function structureOf(job: LayoutInput, pictured: boolean): AdStructure | null {
  if (job.type !== 'static_ad' || pictured || job.output === 'video') return null;
  return adStructure({ ...job, prompt: job.prompt ?? '', title: job.title ?? '' });
}

function overlayLayout(job: LayoutInput): AdLayout {
  const W = job.width;
  const H = job.height;
  const kind = layoutKind(job);
  const orientation = orientationOf(W, H);
  const u = Math.min(W, H);
  const { mx, safe } = safeArea(W, H, u);
  const gap = r(u * 0.025);
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));
  const band = hasBrandLine || job.logo ? { x: safe.x, y: safe.y, w: safe.w, h: r(u * 0.065) } : null;
  const split = band ? splitBand(band, Boolean(job.logo), gap) : null;
  const brand = hasBrandLine && split ? split.text : null;
  const top = band ? band.y + band.h + gap : safe.y;
  const headline = { x: safe.x, y: top, w: safe.w, h: r(H * (orientation === 'landscape' ? 0.24 : 0.14)) };
  const has = copyHas(job);
  const subheadline = has.sub ? { x: safe.x, y: headline.y + headline.h, w: safe.w, h: r(u * 0.06) } : null;
  const ctaH = r(u * 0.1);
  const ctaW = Math.min(safe.w, r(u * 0.56));
  const cta = { x: r((W - ctaW) / 2), y: safe.y + safe.h - ctaH, w: ctaW, h: ctaH };
  const offer = has.offer ? { x: safe.x, y: cta.y - gap - r(u * 0.06), w: safe.w, h: r(u * 0.06) } : null;
  const capH = r(u * 0.18);
  const caption = { x: safe.x, y: (offer?.y ?? cta.y) - gap - capH, w: safe.w, h: capH };
  const cornerSize = Math.max(2, Math.min(mx, r(u * 0.04)));
  return {
    kind,
    width: W,
    height: H,
    orientation,
    unit: u,
    margin: mx,
    brand,
    headline,
    product: { x: 0, y: 0, w: W, h: H },
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
    subheadline,
    offer,
    portrait: null,
    face: null,
    mouth: null,
    safe,
    pictured: true,
    structure: null,
    body: null,
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
  /** The horizontal text margin. */
  m: number;
  gap: number;
  safe: Rect;
  hasBand: boolean;
  hasLogo: boolean;
  arrangement: Arrangement;
  /** A video: a caption band is kept free. */
  video: boolean;
  sub: boolean;
  offer: boolean;
  /** Reference images to show (else no product card: the space is the type's). */
  pictured: boolean;
  structure: AdStructure | null;
  /** A structure in boxes (comparison, features, before/after): laid out as a picture would be. */
  boxed: boolean;
}

/** The main blocks of a full layout. */
interface Blocks {
  band: Rect | null;
  headline: Rect;
  subheadline: Rect | null;
  offer: Rect | null;
  product: Rect;
  cta: Rect | null;
  caption: Rect;
  logo: Rect | null;
  badge?: AdLayout['badge'];
  portrait?: Rect;
  face?: Rect;
  /** UGC: the area the portrait and its blurred fill cover. */
  avatar?: Rect;
  /** A quote's foot (rating and attribution) under its headline. */
  body?: Rect;
}

function frameOf(job: LayoutInput): LayoutFrame {
  const W = job.width;
  const H = job.height;
  const kind = layoutKind(job);
  const orientation = orientationOf(W, H);
  const u = Math.min(W, H);
  const { mx, safe } = safeArea(W, H, u);
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));
  const has = copyHas(job);
  const pictured = job.referenceImages.length > 0 || (Boolean(job.avatarImage) && kind !== 'ugc' && kind !== 'model');
  const structure = structureOf(job, pictured);
  const given = Boolean(job.copy?.subheadline?.trim());
  const c = structure ? adCopy({ ...job, prompt: job.prompt ?? '', title: job.title ?? '' }) : null;
  return {
    W,
    H,
    kind,
    orientation,
    u,
    m: mx,
    gap: r(u * 0.03),
    safe,
    hasBand: hasBrandLine || Boolean(job.logo),
    hasLogo: Boolean(job.logo),
    arrangement: kind === 'model' ? 'standard' : arrangementFor(job, orientation),
    video: job.output === 'video' || job.type === 'video_ad' || job.type === 'ugc_ad',
    // A structure says what a derived subheadline would; the customer's is kept.
    sub: structure ? given : has.sub,
    // A hero that is the whole offer ("FREE SHIPPING") needs no offer line under it.
    offer: has.offer && !(structure?.kind === 'offer' && structure.hero === c?.offer?.toUpperCase()),
    // A presenter (static and video ads) is a picture too.
    pictured,
    structure,
    boxed: structure !== null && ['comparison', 'features', 'before-after', 'app'].includes(structure.kind),
  };
}

function fullLayout(job: LayoutInput): AdLayout {
  const f = frameOf(job);
  const { W, H, u, kind } = f;
  const hasBrandLine = Boolean(job.brandName || (kind === 'ugc' && job.avatarName));
  const ugcPortrait = kind === 'ugc' && job.avatarImage && job.portraitShape;
  let b: Blocks =
    kind === 'model'
      ? modelBlocks(f)
      : ugcPortrait
        ? ugcBlocks(f, job.portraitShape!)
        : f.orientation === 'landscape'
          ? columnBlocks(f)
          : stackedBlocks(f);
  if (f.arrangement === 'flipped' && f.orientation === 'landscape' && kind !== 'model' && !ugcPortrait) b = mirrored(b, W);
  if (f.structure?.kind === 'quote') b = quoteFoot(f, b);
  let brand: Rect | null = null;
  let logo = b.logo;
  if (b.band && f.hasBand) {
    const split = splitBand(b.band, f.hasLogo, f.gap);
    brand = hasBrandLine ? split.text : null;
    logo = split.logo;
  }
  const border = Math.max(2, r(u * 0.014));
  const { avatar, productArea } = ugcPortrait
    ? { avatar: b.avatar ?? { x: 0, y: 0, w: W, h: H }, productArea: inset(b.product, border) }
    : avatarPlace(f, job, b.product, border);
  const { slots, slotLabels } = job.referenceImages.length
    ? productSlots(kind, productArea, job, Math.max(2, r(u * 0.01)))
    : { slots: [], slotLabels: [] };
  const cornerSize = Math.max(2, Math.min(f.m, r(u * 0.04)));
  const face = b.face ?? null;
  const mouth =
    face && b.portrait && job.portraitShape?.face
      ? mouthRect(b.portrait, job.portraitShape.mouth ?? mouthBox(job.portraitShape.face))
      : null;
  return {
    kind,
    width: W,
    height: H,
    orientation: f.orientation,
    unit: u,
    margin: f.m,
    brand,
    headline: b.headline,
    product: b.product,
    slots,
    slotLabels,
    cta: b.cta,
    badge: b.badge === undefined ? badgeFor(f, b) : b.badge,
    caption: b.caption,
    corner: { x: 0, y: 0, w: cornerSize, h: cornerSize },
    logo,
    avatar,
    avatarShape: ugcPortrait ? 'fill' : 'disc',
    arrangement: f.arrangement,
    subheadline: b.subheadline,
    offer: b.offer,
    portrait: b.portrait ?? null,
    face,
    mouth,
    safe: f.safe,
    pictured: f.pictured || Boolean(avatar),
    structure: f.structure,
    body: bodyOf(f, b),
  };
}

/** A quote: room for its quotation mark over the headline, and its foot (rating, attribution) under it. */
function quoteFoot(f: LayoutFrame, b: Blocks): Blocks {
  const markH = r(f.u * 0.11);
  const footH = r(f.u * (f.orientation === 'portrait' ? 0.17 : 0.15));
  const h = b.headline;
  const headline = { ...h, y: h.y + markH, h: Math.max(2, h.h - markH - footH) };
  return { ...b, headline, body: { ...h, y: headline.y + headline.h, h: footH } };
}

/** Landscape, flipped: the text column on the right, the product on the left. */
function mirrored(b: Blocks, W: number): Blocks {
  const mirror = (a: Rect): Rect => ({ ...a, x: W - a.x - a.w });
  const m = (a: Rect | null) => a && mirror(a);
  return {
    ...b,
    band: m(b.band),
    headline: mirror(b.headline),
    subheadline: m(b.subheadline),
    offer: m(b.offer),
    cta: m(b.cta),
    product: mirror(b.product),
    caption: mirror(b.caption),
  };
}

/** The area a structure fills: the product's place (boxes, a sale's hero), or the quote's foot under the headline. */
function bodyOf(f: LayoutFrame, b: Blocks): Rect | null {
  if (!f.structure) return null;
  return f.structure.kind === 'quote' ? (b.body ?? null) : b.product;
}

/** Banner layouts with an offer: a sticker over the product card's corner, or beside the headline on a poster without a structure. */
function badgeFor(f: LayoutFrame, b: Blocks): AdLayout['badge'] {
  // A structure (a sale's hero number, an app's phone) has the offer in its own place.
  if (f.kind !== 'banner' || !f.offer || f.structure) return null;
  const rad = r(f.u * 0.1);
  if (f.pictured) return { cx: b.product.x + b.product.w - r(f.u * 0.085), cy: b.product.y + r(f.u * 0.085), r: rad };
  // A poster: the sticker in the product column (landscape) or under the texts, centred.
  const p = b.product;
  return { cx: p.x + r(p.w / 2), cy: p.y + r(p.h / 2), r: Math.min(r(f.u * 0.16), r(Math.min(p.w, p.h) * 0.42)) };
}

/** AI model output: the picture over most of the frame, a headline strip under it, a logo over its top-right corner. */
function modelBlocks({ W, H, u, safe, gap, hasLogo }: LayoutFrame): Blocks {
  const strip = r(H * 0.11);
  const product = { x: safe.x, y: safe.y, w: safe.w, h: safe.h - strip - gap };
  const headline = { x: safe.x, y: product.y + product.h + gap, w: safe.w, h: strip };
  let logo: Rect | null = null;
  if (hasLogo) {
    const lh = r(u * 0.07);
    const lw = r(lh * 3);
    logo = { x: product.x + product.w - lw - r(u * 0.02), y: product.y + r(u * 0.02), w: lw, h: lh };
  }
  const caption = { x: safe.x, y: H - safe.y - r(u * 0.2), w: W - 2 * safe.x, h: r(u * 0.2) };
  return { band: null, headline, subheadline: null, offer: null, product, cta: null, caption, logo };
}

/** The foot of a text column, bottom up: the call to action, the offer, a video's caption band. */
function foot(
  f: LayoutFrame,
  col: Rect,
  ctaW: number,
  centred: boolean,
): { cta: Rect; offer: Rect | null; caption: Rect | null; top: number } {
  const { u, gap } = f;
  const ctaH = r(u * (f.orientation === 'portrait' ? 0.11 : 0.1));
  const cta = { x: centred ? col.x + r((col.w - ctaW) / 2) : col.x, y: col.y + col.h - ctaH, w: ctaW, h: ctaH };
  let top = cta.y - gap;
  const offer = f.offer ? { x: col.x, y: top - r(u * 0.075), w: col.w, h: r(u * 0.075) } : null;
  if (offer) top = offer.y - gap;
  const capH = r(u * 0.17);
  const caption = f.video && f.orientation !== 'landscape' ? { x: col.x, y: top - capH, w: col.w, h: capH } : null;
  if (caption) top = caption.y - gap;
  return { cta, offer, caption, top };
}

/** Landscape: a text column (band, headline, subheadline, offer, call to action) on the left, the product (or a poster panel) on the right. */
function columnBlocks(f: LayoutFrame): Blocks {
  const { W, u, gap, safe, hasBand, arrangement } = f;
  const pictured = f.pictured || f.boxed;
  // A poster's type takes the width (a banner keeps a column for its sticker).
  const sticker = f.kind === 'banner' && (f.offer || f.structure);
  const colW = pictured ? r(W * 0.44) - safe.x : sticker ? r(W * 0.6) - safe.x : safe.w;
  const col = { x: safe.x, y: safe.y, w: colW, h: safe.h };
  const band = { x: safe.x, y: safe.y, w: colW, h: r(u * 0.07) };
  const ft = foot(f, col, r(colW * 0.75), false);
  const { cta, offer } = ft;
  // A poster video keeps its caption band under the type; with a picture, the captions go on it.
  const posterCaption = f.video && !pictured ? { x: safe.x, y: ft.top - r(u * 0.16), w: colW, h: r(u * 0.16) } : null;
  const footTop = posterCaption ? posterCaption.y - gap : ft.top;
  const headTop = hasBand ? band.y + band.h + gap : safe.y;
  const subH = f.sub ? r(u * 0.1) : 0;
  const headline = { x: safe.x, y: headTop, w: colW, h: footTop - headTop - subH };
  const subheadline = f.sub ? { x: safe.x, y: headline.y + headline.h, w: colW, h: subH } : null;
  const px = pictured ? r(W * 0.48) : sticker ? r(W * 0.64) : safe.x;
  let product = { x: px, y: safe.y, w: W - safe.x - px, h: safe.h };
  const caption = posterCaption ?? { x: px, y: safe.y + safe.h - r(u * 0.2), w: product.w, h: r(u * 0.2) };
  if (f.video && pictured) product = { ...product, h: caption.y - gap - product.y };
  if (arrangement === 'inset' && pictured) product = inset(product, r(Math.min(product.w, product.h) * 0.1));
  return { band, headline, subheadline, offer, product, cta, caption, logo: null };
}

/** Portrait and square: band on top, the foot at the bottom; headline, subheadline and product stacked between (a poster without images: the type takes it all). */
function stackedBlocks(f: LayoutFrame): Blocks {
  const { W, u, gap, safe, hasBand, arrangement, kind, orientation } = f;
  const pictured = f.pictured || f.boxed;
  const band = { x: safe.x, y: safe.y, w: safe.w, h: r(u * 0.065) };
  const ft = foot(f, safe, Math.min(safe.w, r(u * 0.56)), true);
  const top = hasBand ? band.y + band.h + r(gap * 0.7) : safe.y;
  const mid = { x: safe.x, y: top, w: safe.w, h: ft.top - top };
  const subH = f.sub ? r(u * 0.09) : 0;
  if (!pictured) {
    // A poster: the headline fills the middle (a banner keeps room for its sticker).
    const stickerH = kind === 'banner' && (f.offer || f.structure) ? r(mid.h * (f.structure?.kind === 'offer' ? 0.46 : 0.34)) : 0;
    const headline = { ...mid, h: mid.h - subH - stickerH };
    const subheadline = f.sub ? { ...mid, y: headline.y + headline.h, h: subH } : null;
    const product = { ...mid, y: mid.y + mid.h - stickerH, h: stickerH || mid.h };
    return { band, headline, subheadline, offer: ft.offer, product, cta: ft.cta, caption: ft.caption ?? product, logo: null };
  }
  const headFrac = ({ hero: 0.26, banner: 0.3, split: 0.24, quote: 0.32, grid: 0.24, ugc: 0.26 } as Record<string, number>)[kind] ?? 0.26;
  let headline = { ...mid, h: r(mid.h * headFrac * (orientation === 'square' ? 1.15 : 1)) };
  let subheadline = f.sub ? { ...mid, y: headline.y + headline.h, h: subH } : null;
  const py = headline.y + headline.h + subH + gap;
  const ph = mid.y + mid.h - py;
  let pw = kind === 'quote' ? r(safe.w * 0.8) : orientation === 'square' ? Math.min(safe.w, r(ph * 1.6)) : safe.w;
  if (arrangement === 'inset') pw = r(pw * 0.78);
  let product = { x: r((W - pw) / 2), y: py, w: pw, h: ph };
  if (arrangement === 'flipped') {
    // The product first, the headline under it.
    product = { ...product, y: top };
    headline = { ...headline, y: top + ph + gap };
    subheadline = subheadline && { ...subheadline, y: headline.y + headline.h };
  }
  return { band, headline, subheadline, offer: ft.offer, product, cta: ft.cta, caption: ft.caption ?? product, logo: null };
}

/**
 * UGC with a portrait: the portrait fills the frame (whole, face high, its blurred copy around it);
 * the handle and brand on top, a hook headline under them, the product card beside the face
 * (never over it), captions and the call to action under the face. Landscape: the portrait on
 * the right, the texts and the product card in a column on the left.
 */
function ugcBlocks(f: LayoutFrame, shape: { aspect: number; face: FractionBox | null }): Blocks {
  const { W, H, u, gap, safe } = f;
  const landscape = f.orientation === 'landscape';
  const area = landscape ? { x: r(W * 0.46), y: 0, w: W - r(W * 0.46), h: H } : { x: 0, y: 0, w: W, h: H };
  const col = landscape ? { x: safe.x, y: safe.y, w: area.x - gap - safe.x, h: safe.h } : safe;
  const band = { x: col.x, y: col.y, w: col.w, h: r(u * 0.07) };
  const ft = foot({ ...f, video: !landscape }, col, Math.min(col.w, r(u * 0.56)), !landscape);
  const headline = { x: col.x, y: band.y + band.h + r(gap * 0.7), w: col.w, h: r(u * (landscape ? 0.2 : 0.13)) };
  const subheadline = f.sub ? { x: col.x, y: headline.y + headline.h, w: col.w, h: r(u * 0.07) } : null;
  const below = (subheadline ?? headline).y + (subheadline ?? headline).h + gap;
  const fb = shape.face ?? { x: 0.3, y: 0.3, w: 0.4, h: 0.25 };
  // Portrait frames: the head starts under the texts above it.
  const portrait = containPortrait(area, shape, landscape ? 0 : below);
  const face = {
    x: portrait.x + r(fb.x * portrait.w),
    y: portrait.y + r(fb.y * portrait.h),
    w: r(fb.w * portrait.w),
    h: r(fb.h * portrait.h),
  };
  const caption = landscape
    ? { x: area.x + r(area.w * 0.06), y: safe.y + safe.h - r(u * 0.18), w: r(area.w * 0.88), h: r(u * 0.18) }
    : ft.caption!;
  const product = landscape
    ? { x: col.x, y: below, w: Math.min(col.w, ft.top - below), h: ft.top - below }
    : besideFace(f, headFor(face), below, caption.y - gap);
  return {
    band,
    headline,
    subheadline,
    offer: ft.offer,
    product,
    cta: ft.cta,
    caption,
    logo: null,
    portrait,
    face,
    badge: null,
    avatar: area,
  };
}

/** The head around a face box: the hair above it and the chin and neck under it. */
const headFor = (face: Rect): Rect => ({
  x: face.x - r(face.w * 0.15),
  y: face.y - r(face.h * 0.7),
  w: r(face.w * 1.3),
  h: r(face.h * 2.2),
});

/** The portrait contained (whole) in `area`, the top of its head at `headTop` where it can be. */
function containPortrait(area: Rect, shape: { aspect: number; face: FractionBox | null }, headTop: number): Rect {
  const aspect = shape.aspect > 0 ? shape.aspect : 0.8;
  const w = Math.min(area.w, r(area.h * aspect));
  const h = Math.min(area.h, r(w / aspect));
  const fb = shape.face ?? { x: 0.3, y: 0.3, w: 0.4, h: 0.25 };
  // The top of the head (hair over the face box) at headTop; centred when the area is the portrait's height.
  const y = clamp(r(headTop - (fb.y - fb.h * 0.7) * h), area.y, area.y + area.h - h);
  return { x: area.x + r((area.w - w) / 2), y, w, h };
}

/** The product card on the roomier side of the head (under it when neither side has room), between `top` and `bottom`. */
function besideFace(f: LayoutFrame, head: Rect, top: number, bottom: number): Rect {
  const { safe, gap, u } = f;
  const left = head.x - gap - safe.x;
  const right = safe.x + safe.w - (head.x + head.w) - gap;
  const side = Math.max(left, right);
  const maxH = Math.max(2, bottom - top);
  if (side >= u * 0.16) {
    const w = Math.min(side, r(f.W * 0.4));
    const h = Math.min(maxH, r(w * 1.15));
    const y = clamp(head.y + r(head.h * 0.45) - r(h / 2), top, bottom - h);
    return { x: left >= right ? safe.x : safe.x + safe.w - w, y, w, h };
  }
  const y = Math.max(top, head.y + head.h + gap);
  const h = Math.max(2, Math.min(bottom - y, r(u * 0.3)));
  const w = Math.min(safe.w, r(h * 1.2));
  return { x: r((f.W - w) / 2), y, w, h };
}

/** The mouth (fractions of the portrait) in frame pixels. */
function mouthRect(portrait: Rect, m: FractionBox): Rect {
  return {
    x: portrait.x + r(m.x * portrait.w),
    y: portrait.y + r(m.y * portrait.h),
    w: Math.max(4, r(m.w * portrait.w)),
    h: Math.max(4, r(m.h * portrait.h)),
  };
}

/** The presenter disc of a static or video ad: in the lower corner of the product card. Returns it with the area the product images fill. */
function avatarPlace(f: LayoutFrame, job: LayoutInput, product: Rect, border: number): { avatar: Rect | null; productArea: Rect } {
  const inner = inset(product, border);
  if (!job.avatarImage || f.kind === 'model' || f.kind === 'ugc') return { avatar: null, productArea: inner };
  const off = border * 2;
  if (job.referenceImages.length === 0) {
    // The presenter alone: a large disc in the middle of the card.
    const d = r(Math.min(inner.w, inner.h) * 0.8);
    return { avatar: { x: inner.x + r((inner.w - d) / 2), y: inner.y + r((inner.h - d) / 2), w: d, h: d }, productArea: inner };
  }
  const d = r(Math.min(inner.w, inner.h) * 0.4);
  const flipped = f.arrangement === 'flipped';
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
