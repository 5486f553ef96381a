// Writes deterministic SVG previews into spec/previews/ for every relative .svg path that
// spec/catalog.yaml and spec/avatars.yaml reference (template previews, preset previews and
// posters, slideshow templates, avatar portraits).
//
//   node scripts/make-previews.ts
//
// Pure string templating, no randomness, no clocks: re-running produces byte-identical
// files. Colours come from a hash of the item's slug (or slug/preset id). Stale .svg files
// under spec/previews/ that nothing references any more are removed.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync, rmdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PREVIEWS_DIR_URL,
  readCatalogSources,
  referencedPreviews,
  type AspectRatio,
  type PreviewRef,
} from '../src/services/catalog/catalog-data.ts';
import { hash32, rng } from '../src/engines/local/layout.ts';
import { presenterSvg } from '../src/services/catalog/presenters.ts';

// ---------------------------------------------------------------------------------------
// Deterministic helpers
// ---------------------------------------------------------------------------------------

const hash = hash32;

/** Rounds to one decimal and prints without trailing zeros. */
function n(v: number): string {
  const r = Math.round(v * 10) / 10;
  return Object.is(r, -0) ? '0' : String(r);
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function hslToHex(h: number, s: number, l: number): string {
  const sat = Math.max(0, Math.min(100, s)) / 100;
  const lig = Math.max(0, Math.min(100, l)) / 100;
  const a = sat * Math.min(lig, 1 - lig);
  const f = (k0: number): string => {
    const k = (k0 + h / 30) % 12;
    const c = lig - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

interface Palette {
  hue: number;
  bg1: string;
  bg2: string;
  glow: string;
  accent: string;
  accentInk: string;
  light: string;
  soft: string;
  ink: string;
  muted: string;
  angle: [number, number, number, number];
}

function palette(seed: string): Palette {
  const h = hash(seed);
  const hue = h % 360;
  const hue2 = (hue + 25 + ((h >>> 9) % 80)) % 360;
  const sat = 55 + ((h >>> 16) % 25);
  const accentHue = (hue + 150 + ((h >>> 20) % 60)) % 360;
  const accentLight = 58 + ((h >>> 24) % 10);
  const angles: Array<[number, number, number, number]> = [
    [0, 0, 1, 1],
    [1, 0, 0, 1],
    [0, 0, 0, 1],
    [0, 1, 1, 0],
  ];
  return {
    hue,
    bg1: hslToHex(hue, sat, 24 + ((h >>> 4) % 8)),
    bg2: hslToHex(hue2, sat + 10, 48 + ((h >>> 12) % 10)),
    glow: hslToHex(hue2, 90, 75),
    accent: hslToHex(accentHue, 88, accentLight),
    accentInk: hslToHex(accentHue, 60, 14),
    light: hslToHex(hue, 35, 96),
    soft: hslToHex(hue, 30, 86),
    ink: hslToHex(hue, 45, 12),
    muted: hslToHex(hue, 12, 62),
    angle: angles[(h >>> 28) % angles.length],
  };
}

const DIMS: Record<AspectRatio, [number, number]> = {
  '1:1': [1080, 1080],
  '4:5': [1080, 1350],
  '9:16': [1080, 1920],
  '16:9': [1920, 1080],
};

const FONT = "Inter, 'Helvetica Neue', Arial, sans-serif";

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

// ---------------------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------------------

function rect(x: number, y: number, w: number, h: number, r: number, fill: string, extra = ''): string {
  return `<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" rx="${n(r)}" fill="${fill}"${extra}/>`;
}

function circle(cx: number, cy: number, r: number, fill: string, extra = ''): string {
  return `<circle cx="${n(cx)}" cy="${n(cy)}" r="${n(r)}" fill="${fill}"${extra}/>`;
}

function op(v: number): string {
  return ` opacity="${n(v * 100) === '100' ? '1' : String(Math.round(v * 100) / 100)}"`;
}

function text(
  x: number,
  y: number,
  s: string,
  size: number,
  fill: string,
  opts: { weight?: number; anchor?: 'start' | 'middle' | 'end'; spacing?: number; italic?: boolean } = {},
): string {
  const anchor = opts.anchor ?? 'start';
  const extra = (opts.spacing ? ` letter-spacing="${n(opts.spacing)}"` : '') + (opts.italic ? ' font-style="italic"' : '');
  return (
    `<text x="${n(x)}" y="${n(y)}" font-family="${esc(FONT)}" font-size="${n(size)}" ` +
    `font-weight="${opts.weight ?? 400}" fill="${fill}" text-anchor="${anchor}"${extra}>${esc(s)}</text>`
  );
}

/** Greedy word wrap using an average glyph width estimate. */
function wrap(s: string, maxWidth: number, size: number, factor = 0.56): string[] {
  const maxChars = Math.max(4, Math.floor(maxWidth / (size * factor)));
  const lines: string[] = [];
  let line = '';
  for (const word of s.split(/\s+/)) {
    if (!word) continue;
    const candidate = line ? `${line} ${word}` : word;
    if (candidate.length <= maxChars || !line) line = candidate;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Fits text into a box: shrinks the size until it wraps into at most maxLines lines. */
function fitText(s: string, maxWidth: number, size: number, maxLines: number, factor = 0.56): { lines: string[]; size: number } {
  let fs = size;
  let lines = wrap(s, maxWidth, fs, factor);
  while ((lines.length > maxLines || lines.some((l) => l.length * fs * factor > maxWidth)) && fs > 12) {
    fs *= 0.9;
    lines = wrap(s, maxWidth, fs, factor);
  }
  return { lines, size: fs };
}

function textBlock(
  x: number,
  y: number,
  s: string,
  maxWidth: number,
  size: number,
  maxLines: number,
  fill: string,
  opts: { weight?: number; anchor?: 'start' | 'middle' | 'end'; lineHeight?: number; factor?: number } = {},
): { svg: string; height: number } {
  const fit = fitText(s, maxWidth, size, maxLines, opts.factor ?? 0.56);
  const lh = fit.size * (opts.lineHeight ?? 1.12);
  const svg = fit.lines
    .map((line, i) => text(x, y + fit.size * 0.8 + i * lh, line, fit.size, fill, { weight: opts.weight ?? 800, anchor: opts.anchor }))
    .join('');
  return { svg, height: fit.lines.length * lh };
}

function bars(
  x: number,
  y: number,
  w: number,
  lineH: number,
  count: number,
  fill: string,
  seed: string,
  align: 'start' | 'middle' = 'start',
): string {
  const r = rng(seed);
  let out = '';
  for (let i = 0; i < count; i++) {
    const lw = i === count - 1 ? w * (0.35 + 0.25 * r()) : w * (0.7 + 0.3 * r());
    const lx = align === 'middle' ? x + (w - lw) / 2 : x;
    out += rect(lx, y + i * lineH * 1.8, lw, lineH, lineH / 2, fill);
  }
  return out;
}

function star(cx: number, cy: number, r: number, fill: string): string {
  const pts: string[] = [];
  for (let i = 0; i < 10; i++) {
    const rad = i % 2 === 0 ? r : r * 0.45;
    const a = -Math.PI / 2 + (i * Math.PI) / 5;
    pts.push(`${n(cx + rad * Math.cos(a))},${n(cy + rad * Math.sin(a))}`);
  }
  return `<polygon points="${pts.join(' ')}" fill="${fill}"/>`;
}

function sparkle(cx: number, cy: number, r: number, fill: string): string {
  const k = r * 0.22;
  return (
    `<path d="M${n(cx)} ${n(cy - r)} Q${n(cx + k)} ${n(cy - k)} ${n(cx + r)} ${n(cy)} Q${n(cx + k)} ${n(cy + k)} ` +
    `${n(cx)} ${n(cy + r)} Q${n(cx - k)} ${n(cy + k)} ${n(cx - r)} ${n(cy)} Q${n(cx - k)} ${n(cy - k)} ${n(cx)} ${n(cy - r)}Z" fill="${fill}"/>`
  );
}

function check(cx: number, cy: number, r: number, bg: string, fg: string): string {
  return (
    circle(cx, cy, r, bg) +
    `<path d="M${n(cx - r * 0.45)} ${n(cy + r * 0.02)} L${n(cx - r * 0.1)} ${n(cy + r * 0.38)} L${n(cx + r * 0.5)} ${n(cy - r * 0.35)}" ` +
    `fill="none" stroke="${fg}" stroke-width="${n(r * 0.24)}" stroke-linecap="round" stroke-linejoin="round"/>`
  );
}

function cross(cx: number, cy: number, r: number, bg: string, fg: string): string {
  const k = r * 0.38;
  return (
    circle(cx, cy, r, bg) +
    `<path d="M${n(cx - k)} ${n(cy - k)} L${n(cx + k)} ${n(cy + k)} M${n(cx + k)} ${n(cy - k)} L${n(cx - k)} ${n(cy + k)}" ` +
    `stroke="${fg}" stroke-width="${n(r * 0.22)}" stroke-linecap="round"/>`
  );
}

function playIcon(cx: number, cy: number, r: number, p: Palette): string {
  return (
    circle(cx, cy, r * 1.18, '#ffffff', op(0.22)) +
    circle(cx, cy, r, '#ffffff', op(0.94)) +
    `<path d="M${n(cx - r * 0.3)} ${n(cy - r * 0.45)} L${n(cx + r * 0.5)} ${n(cy)} L${n(cx - r * 0.3)} ${n(cy + r * 0.45)}Z" fill="${p.ink}"/>`
  );
}

function ctaButton(cx: number, cy: number, w: number, h: number, label: string, p: Palette): string {
  const fs = h * 0.42;
  return (
    rect(cx - w / 2, cy - h / 2 + h * 0.08, w, h, h / 2, '#000000', op(0.18)) +
    rect(cx - w / 2, cy - h / 2, w, h, h / 2, p.accent) +
    text(cx, cy + fs * 0.36, label, fs, p.accentInk, { weight: 800, anchor: 'middle', spacing: fs * 0.04 })
  );
}

function pill(
  x: number,
  y: number,
  label: string,
  size: number,
  fill: string,
  ink: string,
  opacity = 1,
): { svg: string; w: number; h: number } {
  const h = size * 1.9;
  const w = label.length * size * 0.62 + size * 1.8;
  return {
    svg:
      rect(x, y, w, h, h / 2, fill, opacity < 1 ? op(opacity) : '') +
      text(x + w / 2, y + h / 2 + size * 0.36, label, size, ink, { weight: 700, anchor: 'middle', spacing: size * 0.06 }),
    w,
    h,
  };
}

/** A stylised product (bottle, box or jar) whose overall height is about s, centred on cx, cy. */
function product(cx: number, cy: number, s: number, p: Palette, seed: string, dim = false): string {
  const kind = hash(seed) % 3;
  const body = dim ? p.muted : p.light;
  const cap = dim ? p.soft : p.accent;
  let out =
    circle(cx, cy, s * 0.56, p.glow, op(dim ? 0.06 : 0.16)) +
    `<ellipse cx="${n(cx)}" cy="${n(cy + s * 0.48)}" rx="${n(s * 0.34)}" ry="${n(s * 0.05)}" fill="#000000"${op(0.25)}/>`;
  if (kind === 0) {
    out +=
      rect(cx - s * 0.08, cy - s * 0.38, s * 0.16, s * 0.16, s * 0.03, body) +
      rect(cx - s * 0.1, cy - s * 0.5, s * 0.2, s * 0.13, s * 0.03, cap) +
      rect(cx - s * 0.21, cy - s * 0.27, s * 0.42, s * 0.75, s * 0.09, body) +
      rect(cx - s * 0.21, cy - s * 0.02, s * 0.42, s * 0.22, 0, cap, op(0.9)) +
      rect(cx - s * 0.12, cy + s * 0.05, s * 0.24, s * 0.03, s * 0.015, p.accentInk, op(0.7)) +
      rect(cx - s * 0.08, cy + s * 0.11, s * 0.16, s * 0.025, s * 0.012, p.accentInk, op(0.45)) +
      rect(cx - s * 0.16, cy - s * 0.22, s * 0.05, s * 0.6, s * 0.025, '#ffffff', op(0.35));
  } else if (kind === 1) {
    const x0 = cx - s * 0.3;
    const y0 = cy - s * 0.2;
    const fw = s * 0.46;
    const fh = s * 0.66;
    const d = s * 0.14;
    out +=
      `<path d="M${n(x0)} ${n(y0)} L${n(x0 + d)} ${n(y0 - d)} L${n(x0 + fw + d)} ${n(y0 - d)} L${n(x0 + fw)} ${n(y0)}Z" fill="${body}"${op(0.75)}/>` +
      `<path d="M${n(x0 + fw)} ${n(y0)} L${n(x0 + fw + d)} ${n(y0 - d)} L${n(x0 + fw + d)} ${n(y0 + fh - d)} L${n(x0 + fw)} ${n(y0 + fh)}Z" fill="${cap}"${op(0.75)}/>` +
      rect(x0, y0, fw, fh, s * 0.01, body) +
      rect(x0, y0 + fh * 0.38, fw, fh * 0.24, 0, cap) +
      rect(x0 + fw * 0.2, y0 + fh * 0.46, fw * 0.6, fh * 0.035, fh * 0.017, p.accentInk, op(0.7)) +
      rect(x0 + fw * 0.3, y0 + fh * 0.53, fw * 0.4, fh * 0.03, fh * 0.015, p.accentInk, op(0.45));
  } else {
    out +=
      rect(cx - s * 0.3, cy - s * 0.1, s * 0.6, s * 0.58, s * 0.12, body) +
      rect(cx - s * 0.33, cy - s * 0.26, s * 0.66, s * 0.18, s * 0.05, cap) +
      rect(cx - s * 0.3, cy + s * 0.06, s * 0.6, s * 0.2, 0, cap, op(0.85)) +
      rect(cx - s * 0.15, cy + s * 0.13, s * 0.3, s * 0.035, s * 0.017, p.accentInk, op(0.7)) +
      rect(cx - s * 0.24, cy - s * 0.05, s * 0.06, s * 0.45, s * 0.03, '#ffffff', op(0.35));
  }
  return out;
}

const SKIN = ['#f6d3b3', '#eab68f', '#c98c62', '#a26a42', '#7b4d2e', '#f2c9a1'];
const HAIR = ['#2b1d14', '#4a2f1d', '#8a5a2b', '#d6ad68', '#1c1c1c', '#6b3b2a', '#b9b3ad'];

/** Head-and-shoulders figure; s is the head radius. */
function person(cx: number, cy: number, s: number, p: Palette, seed: string, gender: string, shirt?: string): string {
  const h = hash(`${seed}#person`);
  const skin = SKIN[h % SKIN.length];
  const hair = HAIR[(h >>> 5) % HAIR.length];
  const top = shirt ?? p.accent;
  const longHair = gender === 'female' || (gender !== 'male' && (h >>> 9) % 2 === 0);
  let out = '';
  if (longHair) {
    out += rect(cx - s * 1.12, cy - s * 0.9, s * 2.24, s * 2.9, s * 1.05, hair);
  }
  // shoulders
  out +=
    `<path d="M${n(cx - s * 2.3)} ${n(cy + s * 3.6)} C${n(cx - s * 2.2)} ${n(cy + s * 1.7)} ${n(cx - s * 1.2)} ${n(cy + s * 1.35)} ` +
    `${n(cx)} ${n(cy + s * 1.35)} C${n(cx + s * 1.2)} ${n(cy + s * 1.35)} ${n(cx + s * 2.2)} ${n(cy + s * 1.7)} ${n(cx + s * 2.3)} ${n(cy + s * 3.6)}Z" fill="${top}"/>` +
    rect(cx - s * 0.34, cy + s * 0.6, s * 0.68, s * 0.95, s * 0.3, skin) +
    `<path d="M${n(cx - s * 0.5)} ${n(cy + s * 1.36)} Q${n(cx)} ${n(cy + s * 1.95)} ${n(cx + s * 0.5)} ${n(cy + s * 1.36)}Z" fill="${skin}"/>` +
    circle(cx, cy, s, skin);
  // hair cap
  if (longHair) {
    out += `<path d="M${n(cx - s * 1.02)} ${n(cy + s * 0.1)} C${n(cx - s * 1.1)} ${n(cy - s * 1.2)} ${n(cx + s * 1.1)} ${n(cy - s * 1.3)} ${n(cx + s * 1.02)} ${n(cy + s * 0.1)} C${n(cx + s * 0.6)} ${n(cy - s * 0.55)} ${n(cx - s * 0.5)} ${n(cy - s * 0.5)} ${n(cx - s * 1.02)} ${n(cy + s * 0.1)}Z" fill="${hair}"/>`;
  } else {
    out += `<path d="M${n(cx - s * 1.0)} ${n(cy - s * 0.05)} C${n(cx - s * 1.05)} ${n(cy - s * 1.3)} ${n(cx + s * 1.05)} ${n(cy - s * 1.3)} ${n(cx + s * 1.0)} ${n(cy - s * 0.05)} C${n(cx + s * 0.7)} ${n(cy - s * 0.6)} ${n(cx - s * 0.7)} ${n(cy - s * 0.6)} ${n(cx - s * 1.0)} ${n(cy - s * 0.05)}Z" fill="${hair}"/>`;
  }
  // face
  out +=
    circle(cx - s * 0.34, cy + s * 0.08, s * 0.08, p.ink) +
    circle(cx + s * 0.34, cy + s * 0.08, s * 0.08, p.ink) +
    `<path d="M${n(cx - s * 0.3)} ${n(cy + s * 0.45)} Q${n(cx)} ${n(cy + s * 0.68)} ${n(cx + s * 0.3)} ${n(cy + s * 0.45)}" fill="none" stroke="${p.ink}" stroke-width="${n(s * 0.07)}" stroke-linecap="round"/>` +
    circle(cx - s * 0.55, cy + s * 0.35, s * 0.14, '#ff7a7a', op(0.25)) +
    circle(cx + s * 0.55, cy + s * 0.35, s * 0.14, '#ff7a7a', op(0.25));
  return out;
}

function heart(cx: number, cy: number, r: number, fill: string): string {
  return (
    `<path d="M${n(cx)} ${n(cy + r * 0.8)} C${n(cx - r * 1.4)} ${n(cy - r * 0.1)} ${n(cx - r * 0.7)} ${n(cy - r * 1.1)} ${n(cx)} ${n(cy - r * 0.35)} ` +
    `C${n(cx + r * 0.7)} ${n(cy - r * 1.1)} ${n(cx + r * 1.4)} ${n(cy - r * 0.1)} ${n(cx)} ${n(cy + r * 0.8)}Z" fill="${fill}"/>`
  );
}

// ---------------------------------------------------------------------------------------
// Sample copy per template (visual only)
// ---------------------------------------------------------------------------------------

interface Copy {
  headline: string;
  cta: string;
  caption?: string;
}

const COPY: Record<string, Copy> = {
  'bold-sale-banner': { headline: 'MEGA SALE UP TO 50% OFF', cta: 'SHOP NOW' },
  'product-spotlight': { headline: 'Meet your new everyday essential', cta: 'Discover' },
  'testimonial-quote': { headline: 'Finally, skincare that actually works. My skin has never felt this good.', cta: 'Read reviews' },
  'before-after-split': { headline: 'See the difference in 14 days', cta: 'Try it' },
  'feature-callout-grid': { headline: 'Everything you need, nothing you don\u2019t', cta: 'Learn more' },
  'limited-time-offer-story': { headline: 'Today only: 40% off everything', cta: 'Swipe up' },
  'us-vs-them-comparison': { headline: 'Why switch? Compare for yourself', cta: 'Switch today' },
  'seasonal-promo-poster': { headline: 'The season\u2019s best picks are here', cta: 'Shop the edit' },
  'minimal-product-hero': { headline: 'Less, but better.', cta: 'Shop' },
  'app-install-banner': { headline: 'Plan, track and grow in one app', cta: 'Get the app' },
  'product-demo-showcase': { headline: 'See it in action', cta: 'Shop now' },
  'flash-sale-countdown': { headline: 'Flash sale ends soon', cta: 'Grab yours' },
  'cinematic-brand-story': { headline: 'Made for the journey', cta: 'Watch' },
  'feature-walkthrough': { headline: 'Set up in three steps', cta: 'Try free' },
  'problem-solution-explainer': { headline: 'Tired of tangled cables?', cta: 'Fix it' },
  'lifestyle-montage': { headline: 'Live it every day', cta: 'Explore' },
  'unboxing-ugc': { headline: 'Unboxing', cta: 'Shop', caption: 'ok the packaging alone is worth it' },
  'founder-story': { headline: 'Founder story', cta: 'Our story', caption: 'I started this in my garage in 2019' },
  'talking-head-review': { headline: 'Honest review', cta: 'Shop', caption: 'honest review after 30 days' },
  'get-ready-with-me': { headline: 'GRWM', cta: 'Shop', caption: 'grwm using only 3 products' },
  'day-in-the-life': { headline: 'Day in the life', cta: 'Shop', caption: 'a day in my life as a nurse' },
  'green-screen-reaction': { headline: 'Reaction', cta: 'Shop', caption: 'wait, you guys didn\u2019t know this?' },
  'photo-dump-carousel': { headline: 'Weekend photo dump', cta: 'Swipe' },
  'listicle-tips-carousel': { headline: '5 tips for glowing skin', cta: 'Swipe' },
  'product-benefits-carousel': { headline: '3 reasons you\u2019ll love it', cta: 'Swipe' },
  'storytime-slideshow': { headline: 'Storytime: how I fixed my sleep', cta: 'Swipe' },
};

function copyFor(slug: string, title: string): Copy {
  return COPY[slug] ?? { headline: title, cta: 'Learn more', caption: title.toLowerCase() };
}

// ---------------------------------------------------------------------------------------
// Sketches (draw inside a box)
// ---------------------------------------------------------------------------------------

function staticSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const slug = ref.slug;
  if (slug.includes('before-after')) return splitSketch(b, p, ref, copy);
  if (slug.includes('testimonial')) return quoteSketch(b, p, ref, copy);
  if (slug.includes('comparison')) return comparisonSketch(b, p, ref, copy);
  if (slug.includes('callout')) return calloutSketch(b, p, ref, copy);
  if (slug.includes('app-install')) return appSketch(b, p, ref, copy);
  if (slug.includes('offer-story')) return storyOfferSketch(b, p, ref, copy);
  return heroSketch(b, p, ref, copy);
}

function heroSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const wide = b.w / b.h > 1.3;
  const sale = ref.slug.includes('sale');
  let out = '';
  if (wide) {
    const lw = b.w * 0.54;
    const hb = textBlock(b.x, b.y + b.h * 0.14, copy.headline, lw, b.h * 0.15, 3, '#ffffff');
    out += hb.svg;
    const by = b.y + b.h * 0.14 + hb.height + b.h * 0.06;
    out += bars(b.x, by, lw * 0.8, b.h * 0.03, 2, p.soft, `${ref.seed}#bars`);
    out += ctaButton(b.x + lw * 0.25, by + b.h * 0.22, lw * 0.5, b.h * 0.12, copy.cta, p);
    const s = Math.min(b.w * 0.4, b.h) * 0.85;
    out += product(b.x + b.w * 0.78, b.y + b.h * 0.5, s, p, ref.seed);
  } else {
    const hb = textBlock(b.x + b.w / 2, b.y, sale ? copy.headline.toUpperCase() : copy.headline, b.w * 0.92, b.w * 0.11, 3, '#ffffff', {
      anchor: 'middle',
    });
    out += hb.svg;
    const ctaH = b.w * 0.11;
    const ctaY = b.y + b.h - ctaH / 2;
    const top = b.y + hb.height + b.h * 0.04;
    const bottom = ctaY - ctaH / 2 - b.h * 0.05;
    const s = Math.min(b.w * 0.7, bottom - top) * 0.95;
    out += product(b.x + b.w / 2, (top + bottom) / 2, s, p, ref.seed);
    if (sale) {
      const r = b.w * 0.12;
      const cx = b.x + b.w * 0.82;
      const cy = top + r * 0.9;
      out += star(cx, cy, r * 1.25, p.accent) + circle(cx, cy, r * 0.8, p.accent);
      out += text(cx, cy + r * 0.18, '-50%', r * 0.5, p.accentInk, { weight: 900, anchor: 'middle' });
    }
    out += ctaButton(b.x + b.w / 2, ctaY, b.w * 0.46, ctaH, copy.cta.toUpperCase(), p);
  }
  return out;
}

function splitSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const hb = textBlock(b.x + b.w / 2, b.y, copy.headline, b.w * 0.9, Math.min(b.w, b.h) * 0.085, 2, '#ffffff', { anchor: 'middle' });
  const top = b.y + hb.height + b.h * 0.04;
  const gap = b.w * 0.03;
  const pw = (b.w - gap) / 2;
  const ph = b.y + b.h - top;
  const s = Math.min(pw * 0.8, ph * 0.62);
  let out = hb.svg;
  out += rect(b.x, top, pw, ph, pw * 0.06, hslToHex(p.hue, 8, 55));
  out += rect(b.x + pw + gap, top, pw, ph, pw * 0.06, p.light, op(0.95));
  out += product(b.x + pw / 2, top + ph * 0.55, s, p, ref.seed, true);
  out += product(b.x + pw + gap + pw / 2, top + ph * 0.55, s, p, ref.seed);
  for (const [dx, dy, k] of [
    [0.2, 0.2, 0.09],
    [0.82, 0.3, 0.06],
    [0.75, 0.78, 0.07],
  ] as const) {
    out += sparkle(b.x + pw + gap + pw * dx, top + ph * dy, pw * k, p.accent);
  }
  const fs = pw * 0.075;
  out += pill(b.x + pw * 0.06, top + pw * 0.06, 'BEFORE', fs, p.ink, '#ffffff', 0.75).svg;
  out += pill(b.x + pw + gap + pw * 0.06, top + pw * 0.06, 'AFTER', fs, p.accent, p.accentInk).svg;
  const mx = b.x + pw + gap / 2;
  out += rect(mx - gap * 0.15, top, gap * 0.3, ph, 0, '#ffffff');
  out += circle(mx, top + ph / 2, pw * 0.08, '#ffffff');
  out += `<path d="M${n(mx - pw * 0.015)} ${n(top + ph / 2 - pw * 0.03)} L${n(mx - pw * 0.045)} ${n(top + ph / 2)} L${n(mx - pw * 0.015)} ${n(top + ph / 2 + pw * 0.03)} M${n(mx + pw * 0.015)} ${n(top + ph / 2 - pw * 0.03)} L${n(mx + pw * 0.045)} ${n(top + ph / 2)} L${n(mx + pw * 0.015)} ${n(top + ph / 2 + pw * 0.03)}" fill="none" stroke="${p.ink}" stroke-width="${n(pw * 0.012)}" stroke-linecap="round" stroke-linejoin="round"/>`;
  return out;
}

function quoteSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const pad = Math.min(b.w, b.h) * 0.08;
  let out = rect(b.x, b.y + b.h * 0.02, b.w, b.h * 0.98, pad, '#000000', op(0.15));
  out += rect(b.x, b.y, b.w, b.h * 0.97, pad, p.light);
  const qs = Math.min(b.w, b.h) * 0.28;
  out += text(b.x + pad, b.y + pad + qs * 0.72, '\u201C', qs, p.accent, { weight: 900 });
  const starsY = b.y + pad + qs * 0.45;
  const sr = Math.min(b.w, b.h) * 0.032;
  for (let i = 0; i < 5; i++) out += star(b.x + b.w - pad - sr - i * sr * 2.4, starsY, sr, p.accent);
  const qb = textBlock(b.x + pad, b.y + pad + qs * 0.8, copy.headline, b.w - pad * 2, Math.min(b.w, b.h) * 0.075, 5, p.ink, {
    weight: 700,
  });
  out += qb.svg;
  const ay = b.y + b.h * 0.97 - pad - Math.min(b.w, b.h) * 0.06;
  const ar = Math.min(b.w, b.h) * 0.065;
  out += person(b.x + pad + ar, ay - ar * 0.2, ar * 0.42, p, ref.seed, 'female');
  out += circle(b.x + pad + ar, ay, ar, 'none', ` stroke="${p.accent}" stroke-width="${n(ar * 0.1)}"`);
  out += bars(b.x + pad + ar * 2.6, ay - ar * 0.45, b.w * 0.35, ar * 0.3, 2, p.muted, `${ref.seed}#name`);
  return out;
}

function comparisonSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const hb = textBlock(b.x + b.w / 2, b.y, copy.headline, b.w * 0.92, Math.min(b.w, b.h) * 0.085, 2, '#ffffff', { anchor: 'middle' });
  const top = b.y + hb.height + b.h * 0.05;
  const th = b.y + b.h - top;
  const rows = 5;
  const rh = th / (rows + 1);
  const c1 = b.x + b.w * 0.5;
  const cw = b.w * 0.25;
  let out = hb.svg;
  out += rect(b.x, top, b.w, th, b.w * 0.04, p.light, op(0.96));
  out += rect(c1 + b.w * 0.01, top + rh * 0.12, cw - b.w * 0.02, th - rh * 0.24, b.w * 0.03, p.accent, op(0.22));
  const fs = rh * 0.32;
  out += text(c1 + cw / 2, top + rh * 0.62, 'US', fs, p.ink, { weight: 900, anchor: 'middle' });
  out += text(c1 + cw * 1.5, top + rh * 0.62, 'THEM', fs, p.muted, { weight: 900, anchor: 'middle' });
  const r = rng(`${ref.seed}#rows`);
  for (let i = 1; i <= rows; i++) {
    const cy = top + rh * (i + 0.5);
    out += rect(b.x + b.w * 0.06, cy - rh * 0.09, b.w * (0.26 + 0.14 * r()), rh * 0.18, rh * 0.09, p.muted, op(0.6));
    out += check(c1 + cw / 2, cy, rh * 0.26, p.accent, p.accentInk);
    out += i === rows ? check(c1 + cw * 1.5, cy, rh * 0.26, p.soft, p.muted) : cross(c1 + cw * 1.5, cy, rh * 0.26, p.soft, p.muted);
    if (i < rows) out += rect(b.x + b.w * 0.04, cy + rh / 2, b.w * 0.92, Math.max(2, rh * 0.015), 0, p.soft);
  }
  return out;
}

function calloutSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const hb = textBlock(b.x + b.w / 2, b.y, copy.headline, b.w * 0.9, Math.min(b.w, b.h) * 0.08, 2, '#ffffff', { anchor: 'middle' });
  const top = b.y + hb.height + b.h * 0.04;
  const area: Box = { x: b.x, y: top, w: b.w, h: b.y + b.h - top };
  const cx = area.x + area.w / 2;
  const cy = area.y + area.h / 2;
  const s = Math.min(area.w * 0.45, area.h * 0.8);
  let out = hb.svg + product(cx, cy, s, p, ref.seed);
  const pw = area.w * 0.3;
  const ph = area.h * 0.13;
  const spots: Array<[number, number, number, number]> = [
    [area.x, area.y + area.h * 0.08, cx - s * 0.18, cy - s * 0.22],
    [area.x + area.w - pw, area.y + area.h * 0.08, cx + s * 0.18, cy - s * 0.3],
    [area.x, area.y + area.h * 0.72, cx - s * 0.2, cy + s * 0.2],
    [area.x + area.w - pw, area.y + area.h * 0.72, cx + s * 0.2, cy + s * 0.12],
  ];
  spots.forEach(([x, y, tx, ty], i) => {
    const ax = i % 2 === 0 ? x + pw : x;
    const ay = y + ph / 2;
    out += `<path d="M${n(ax)} ${n(ay)} L${n(tx)} ${n(ty)}" stroke="#ffffff" stroke-width="${n(ph * 0.04)}" stroke-dasharray="${n(ph * 0.12)} ${n(ph * 0.1)}"/>`;
    out += circle(tx, ty, ph * 0.1, p.accent) + circle(tx, ty, ph * 0.2, p.accent, op(0.3));
    out += rect(x, y, pw, ph, ph / 2, p.light, op(0.96));
    out += circle(x + ph / 2, ay, ph * 0.32, p.accent);
    out += check(x + ph / 2, ay, ph * 0.2, p.accent, p.accentInk);
    out += bars(x + ph * 1.05, ay - ph * 0.2, pw - ph * 1.4, ph * 0.13, 2, p.muted, `${ref.seed}#c${i}`);
  });
  return out;
}

function phone(x: number, y: number, w: number, h: number, p: Palette): { svg: string; screen: Box } {
  const bz = w * 0.045;
  const screen: Box = { x: x + bz, y: y + bz, w: w - bz * 2, h: h - bz * 2 };
  return {
    svg:
      rect(x + w * 0.03, y + w * 0.05, w, h, w * 0.16, '#000000', op(0.25)) +
      rect(x, y, w, h, w * 0.16, '#111318') +
      rect(screen.x, screen.y, screen.w, screen.h, w * 0.125, p.light) +
      rect(x + w * 0.36, y + bz * 1.4, w * 0.28, bz * 1.1, bz * 0.55, '#111318'),
    screen,
  };
}

function appSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const wide = b.w / b.h > 1;
  const ph = wide ? b.h : b.h * 0.55;
  const pw = ph * 0.49;
  const px = wide ? b.x + b.w * 0.06 : b.x + (b.w - pw) / 2;
  const py = wide ? b.y : b.y + b.h * 0.42;
  const ph1 = phone(px, py, pw, ph, p);
  const sc = ph1.screen;
  let out = ph1.svg;
  out += rect(sc.x, sc.y, sc.w, sc.h * 0.22, 0, p.accent, op(0.85));
  out += rect(sc.x + sc.w * 0.08, sc.y + sc.h * 0.1, sc.w * 0.5, sc.h * 0.035, sc.h * 0.017, p.accentInk, op(0.8));
  const r = rng(`${ref.seed}#app`);
  for (let i = 0; i < 3; i++) {
    const cy = sc.y + sc.h * (0.28 + i * 0.22);
    out += rect(sc.x + sc.w * 0.07, cy, sc.w * 0.86, sc.h * 0.18, sc.w * 0.06, '#ffffff');
    out += circle(sc.x + sc.w * 0.2, cy + sc.h * 0.09, sc.w * 0.08, i === 0 ? p.accent : p.soft);
    out += rect(sc.x + sc.w * 0.34, cy + sc.h * 0.06, sc.w * (0.3 + 0.2 * r()), sc.h * 0.022, sc.h * 0.011, p.muted);
    out += rect(sc.x + sc.w * 0.34, cy + sc.h * 0.1, sc.w * (0.2 + 0.15 * r()), sc.h * 0.02, sc.h * 0.01, p.soft);
  }
  const tx = wide ? b.x + b.w * 0.42 : b.x;
  const tw = wide ? b.w * 0.56 : b.w;
  const ty = wide ? b.y + b.h * 0.1 : b.y;
  const icon = Math.min(b.w, b.h) * (wide ? 0.17 : 0.14);
  out += rect(tx, ty, icon, icon, icon * 0.24, p.accent);
  out += circle(tx + icon / 2, ty + icon / 2, icon * 0.22, p.accentInk);
  for (let i = 0; i < 5; i++) out += star(tx + icon * 1.35 + i * icon * 0.34, ty + icon * 0.5, icon * 0.14, '#ffd24a');
  const hb = textBlock(tx, ty + icon * 1.3, copy.headline, tw, Math.min(b.w, b.h) * (wide ? 0.12 : 0.085), 3, '#ffffff');
  out += hb.svg;
  const by = ty + icon * 1.3 + hb.height + icon * 0.35;
  const bw = Math.min(tw * 0.46, icon * 2.9);
  const bh = icon * 0.62;
  for (const [i, label] of [
    [0, 'App Store'],
    [1, 'Google Play'],
  ] as const) {
    const bx = tx + i * (bw + icon * 0.2);
    out += rect(bx, by, bw, bh, bh * 0.22, '#0b0b0f');
    out += circle(bx + bh * 0.5, by + bh / 2, bh * 0.22, '#ffffff');
    out += text(bx + bh * 0.9, by + bh * 0.64, label, bh * 0.36, '#ffffff', { weight: 700 });
  }
  return out;
}

function storyOfferSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  let out = '';
  const seg = (b.w - b.w * 0.02 * 3) / 4;
  for (let i = 0; i < 4; i++) {
    out += rect(b.x + i * (seg + b.w * 0.02), b.y, seg, b.w * 0.012, b.w * 0.006, '#ffffff', op(i === 0 ? 1 : 0.4));
  }
  const ar = b.w * 0.055;
  out += circle(b.x + ar, b.y + b.w * 0.05 + ar, ar, p.accent);
  out += bars(b.x + ar * 2.5, b.y + b.w * 0.05 + ar * 0.7, b.w * 0.3, ar * 0.35, 1, '#ffffff', `${ref.seed}#brand`);
  const cy = b.y + b.h * 0.3;
  const r = b.w * 0.27;
  out += circle(b.x + b.w / 2, cy, r * 1.12, p.accent, op(0.3)) + circle(b.x + b.w / 2, cy, r, p.accent);
  out += text(b.x + b.w / 2, cy + r * 0.08, '40%', r * 0.62, p.accentInk, { weight: 900, anchor: 'middle' });
  out += text(b.x + b.w / 2, cy + r * 0.45, 'OFF', r * 0.26, p.accentInk, { weight: 800, anchor: 'middle', spacing: r * 0.04 });
  const hb = textBlock(b.x + b.w / 2, cy + r * 1.35, copy.headline, b.w * 0.9, b.w * 0.1, 3, '#ffffff', { anchor: 'middle' });
  out += hb.svg;
  const codeY = cy + r * 1.35 + hb.height + b.w * 0.08;
  const cw = b.w * 0.62;
  const ch = b.w * 0.14;
  out += rect(
    b.x + (b.w - cw) / 2,
    codeY,
    cw,
    ch,
    ch * 0.2,
    p.light,
    `${op(0.12)} stroke="#ffffff" stroke-width="${n(ch * 0.04)}" stroke-dasharray="${n(ch * 0.16)} ${n(ch * 0.1)}"`,
  );
  out += text(b.x + b.w / 2, codeY + ch * 0.64, 'CODE: GLOW40', ch * 0.36, '#ffffff', {
    weight: 800,
    anchor: 'middle',
    spacing: ch * 0.03,
  });
  const ay = b.y + b.h - b.w * 0.14;
  out += `<path d="M${n(b.x + b.w / 2 - b.w * 0.05)} ${n(ay)} L${n(b.x + b.w / 2)} ${n(ay - b.w * 0.05)} L${n(b.x + b.w / 2 + b.w * 0.05)} ${n(ay)}" fill="none" stroke="#ffffff" stroke-width="${n(b.w * 0.014)}" stroke-linecap="round" stroke-linejoin="round"/>`;
  out += text(b.x + b.w / 2, ay + b.w * 0.09, copy.cta.toUpperCase(), b.w * 0.05, '#ffffff', {
    weight: 800,
    anchor: 'middle',
    spacing: b.w * 0.006,
  });
  return out;
}

function formatDuration(sec: number): string {
  return `0:${String(sec).padStart(2, '0')}`;
}

function videoSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy, poster: boolean): string {
  const slug = ref.slug;
  const m = Math.min(b.w, b.h);
  const frame: Box = { x: b.x, y: b.y, w: b.w, h: b.h };
  const clip = `clip-${hash(ref.path).toString(36)}`;
  let out = `<clipPath id="${clip}">${rect(frame.x, frame.y, frame.w, frame.h, m * 0.05, '#000')}</clipPath>`;
  out += `<g clip-path="url(#${clip})">`;
  out += rect(frame.x, frame.y, frame.w, frame.h, 0, p.ink, op(0.55));
  // scene: sun, hills, floor
  out += circle(frame.x + frame.w * 0.75, frame.y + frame.h * 0.25, m * 0.14, p.glow, op(0.55));
  out += `<path d="M${n(frame.x)} ${n(frame.y + frame.h * 0.7)} Q${n(frame.x + frame.w * 0.25)} ${n(frame.y + frame.h * 0.52)} ${n(frame.x + frame.w * 0.5)} ${n(frame.y + frame.h * 0.66)} T${n(frame.x + frame.w)} ${n(frame.y + frame.h * 0.6)} L${n(frame.x + frame.w)} ${n(frame.y + frame.h)} L${n(frame.x)} ${n(frame.y + frame.h)}Z" fill="${p.bg1}"${op(0.8)}/>`;
  if (slug.includes('montage')) {
    const g = m * 0.02;
    const tw = (frame.w - g * 4) / 3;
    for (let i = 0; i < 3; i++) {
      const tx = frame.x + g + i * (tw + g);
      const ty = frame.y + frame.h * 0.3;
      const th = frame.h * 0.5;
      out += `<clipPath id="${clip}-t${i}">${rect(tx, ty, tw, th, m * 0.03, '#000')}</clipPath>`;
      out += rect(tx, ty, tw, th, m * 0.03, i === 1 ? p.bg2 : p.soft, op(0.9));
      out += `<g clip-path="url(#${clip}-t${i})">${person(tx + tw / 2, ty + th * 0.38, tw * 0.16, p, `${ref.seed}#m${i}`, i === 1 ? 'male' : 'female')}</g>`;
    }
  } else if (slug.includes('walkthrough')) {
    const w = frame.w * 0.78;
    const h = frame.h * 0.55;
    const x = frame.x + (frame.w - w) / 2;
    const y = frame.y + frame.h * 0.17;
    out += rect(x, y, w, h, m * 0.025, '#ffffff');
    out += rect(x, y, w, h * 0.1, m * 0.025, p.soft);
    for (let i = 0; i < 3; i++)
      out += circle(x + h * 0.06 + i * h * 0.07, y + h * 0.05, h * 0.022, i === 0 ? '#ff5f57' : i === 1 ? '#febc2e' : '#28c840');
    for (let i = 0; i < 3; i++) {
      const sx = x + w * 0.06 + i * w * 0.31;
      out += rect(sx, y + h * 0.2, w * 0.27, h * 0.6, m * 0.02, i === 1 ? p.accent : p.soft, op(i === 1 ? 0.9 : 0.7));
      out += text(sx + w * 0.135, y + h * 0.56, String(i + 1), h * 0.2, i === 1 ? p.accentInk : p.muted, { weight: 900, anchor: 'middle' });
    }
    out += `<path d="M${n(x + w * 0.62)} ${n(y + h * 0.62)} l${n(m * 0.05)} ${n(m * 0.02)} l${n(-m * 0.02)} ${n(m * 0.008)} l${n(m * 0.02)} ${n(m * 0.03)} l${n(-m * 0.012)} ${n(m * 0.006)} l${n(-m * 0.02)} ${n(-m * 0.028)} l${n(-m * 0.014)} ${n(m * 0.016)}Z" fill="${p.ink}" stroke="#ffffff" stroke-width="${n(m * 0.004)}"/>`;
  } else if (slug.includes('problem-solution')) {
    const half = frame.w / 2;
    out += rect(frame.x, frame.y, half, frame.h, 0, hslToHex(p.hue, 10, 30), op(0.85));
    out += product(frame.x + half / 2, frame.y + frame.h * 0.5, Math.min(half * 0.7, frame.h * 0.35), p, ref.seed, true);
    out += product(frame.x + half * 1.5, frame.y + frame.h * 0.5, Math.min(half * 0.7, frame.h * 0.35), p, ref.seed);
    out += pill(frame.x + half * 0.08, frame.y + frame.h * 0.2, 'PROBLEM', m * 0.035, p.ink, '#ffffff', 0.8).svg;
    out += pill(frame.x + half * 1.08, frame.y + frame.h * 0.2, 'SOLUTION', m * 0.035, p.accent, p.accentInk).svg;
  } else {
    const wideFrame = frame.w / frame.h > 1.3;
    const s = Math.min(frame.w * 0.5, frame.h * (wideFrame ? 0.55 : 0.42));
    const cy = frame.y + frame.h * 0.56;
    const pcx = frame.x + frame.w * (wideFrame ? 0.72 : 0.5);
    if (slug.includes('demo')) {
      out += `<ellipse cx="${n(pcx)}" cy="${n(cy + s * 0.48)}" rx="${n(s * 0.6)}" ry="${n(s * 0.1)}" fill="none" stroke="${p.accent}" stroke-width="${n(m * 0.008)}"/>`;
    }
    out += product(pcx, cy, s, p, ref.seed);
  }
  if (slug.includes('countdown')) {
    const bw = m * 0.14;
    const gx = frame.x + (frame.w - bw * 3 - m * 0.04) / 2;
    ['02', '14', '59'].forEach((v, i) => {
      const x = gx + i * (bw + m * 0.02);
      out += rect(x, frame.y + frame.h * 0.14, bw, bw * 1.1, bw * 0.15, '#0b0b0f', op(0.85));
      out += text(x + bw / 2, frame.y + frame.h * 0.14 + bw * 0.75, v, bw * 0.55, p.accent, { weight: 900, anchor: 'middle' });
    });
  }
  if (slug.includes('cinematic')) {
    out += rect(frame.x, frame.y, frame.w, frame.h * 0.1, 0, '#000000');
    out += rect(frame.x, frame.y + frame.h * 0.9, frame.w, frame.h * 0.1, 0, '#000000');
  }
  // headline overlay
  const hy = slug.includes('cinematic') ? frame.y + frame.h * 0.12 : frame.y + m * 0.05;
  if (!slug.includes('countdown')) {
    out += textBlock(frame.x + m * 0.06, hy, copy.headline, frame.w * 0.7, m * 0.075, 2, '#ffffff').svg;
  }
  out += playIcon(frame.x + frame.w / 2, frame.y + frame.h * 0.5, m * (poster ? 0.11 : 0.085), p);
  // progress bar
  const py = frame.y + frame.h - m * 0.06 - (slug.includes('cinematic') ? frame.h * 0.1 : 0);
  const px = frame.x + m * 0.06;
  const pw = frame.w - m * 0.28;
  const done = 0.25 + (hash(`${ref.seed}#progress`) % 40) / 100;
  out += rect(px, py, pw, m * 0.012, m * 0.006, '#ffffff', op(0.35));
  out += rect(px, py, pw * done, m * 0.012, m * 0.006, p.accent);
  out += circle(px + pw * done, py + m * 0.006, m * 0.018, '#ffffff');
  out += text(frame.x + frame.w - m * 0.05, py + m * 0.018, formatDuration(ref.duration ?? 8), m * 0.035, '#ffffff', {
    weight: 700,
    anchor: 'end',
  });
  out += '</g>';
  return out;
}

function ugcSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy, poster: boolean): string {
  let ph = b.h;
  let pw = ph * 0.49;
  if (pw > b.w * 0.9) {
    pw = b.w * 0.9;
    ph = pw / 0.49;
  }
  const ph1 = phone(b.x + (b.w - pw) / 2, b.y + (b.h - ph) / 2, pw, ph, p);
  const sc = ph1.screen;
  const clip = `clip-${hash(ref.path).toString(36)}`;
  let out = ph1.svg;
  out += `<clipPath id="${clip}">${rect(sc.x, sc.y, sc.w, sc.h, pw * 0.125, '#000')}</clipPath><g clip-path="url(#${clip})">`;
  out += rect(sc.x, sc.y, sc.w, sc.h, 0, p.bg2);
  out += rect(sc.x, sc.y + sc.h * 0.62, sc.w, sc.h * 0.38, 0, p.bg1, op(0.6));
  const slug = ref.slug;
  if (slug.includes('green-screen')) {
    out += rect(sc.x + sc.w * 0.08, sc.y + sc.h * 0.07, sc.w * 0.84, sc.h * 0.3, sc.w * 0.04, '#ffffff');
    out += rect(sc.x + sc.w * 0.12, sc.y + sc.h * 0.1, sc.w * 0.76, sc.h * 0.1, sc.w * 0.02, p.soft);
    out += bars(sc.x + sc.w * 0.12, sc.y + sc.h * 0.23, sc.w * 0.7, sc.h * 0.015, 4, p.muted, `${ref.seed}#article`);
    out += person(sc.x + sc.w * 0.5, sc.y + sc.h * 0.5, sc.w * 0.13, p, ref.seed, 'female');
  } else {
    const gender = hash(`${ref.seed}#g`) % 2 === 0 ? 'female' : 'male';
    out += person(sc.x + sc.w * 0.5, sc.y + sc.h * 0.34, sc.w * 0.16, p, ref.seed, gender);
    out += product(sc.x + sc.w * 0.66, sc.y + sc.h * 0.6, sc.w * 0.32, p, ref.seed);
  }
  // caption bubble
  const cap = copy.caption ?? copy.headline;
  const fs = sc.w * 0.058;
  const fit = fitText(cap, sc.w * 0.72, fs, 2);
  const cw = Math.max(...fit.lines.map((l) => l.length)) * fit.size * 0.56 + fit.size * 1.4;
  const chh = fit.lines.length * fit.size * 1.25 + fit.size * 0.9;
  const cx = sc.x + (sc.w - cw) / 2;
  const cy = sc.y + sc.h * 0.7;
  out += rect(cx, cy, cw, chh, fit.size * 0.5, '#ffffff');
  fit.lines.forEach((line, i) => {
    out += text(sc.x + sc.w / 2, cy + fit.size * 1.25 + i * fit.size * 1.25, line, fit.size, p.ink, { weight: 800, anchor: 'middle' });
  });
  // side rail
  const rx = sc.x + sc.w * 0.89;
  for (let i = 0; i < 3; i++) {
    const ry = sc.y + sc.h * (0.48 + i * 0.08);
    out += circle(rx, ry, sc.w * 0.055, '#000000', op(0.3));
    if (i === 0) out += heart(rx, ry, sc.w * 0.03, '#ff4d6d');
    else if (i === 1) out += rect(rx - sc.w * 0.028, ry - sc.w * 0.02, sc.w * 0.056, sc.w * 0.04, sc.w * 0.012, '#ffffff');
    else
      out += `<path d="M${n(rx - sc.w * 0.025)} ${n(ry + sc.w * 0.02)} L${n(rx + sc.w * 0.028)} ${n(ry)} L${n(rx - sc.w * 0.025)} ${n(ry - sc.w * 0.02)}Z" fill="#ffffff"/>`;
  }
  // username + text lines
  out += circle(sc.x + sc.w * 0.1, sc.y + sc.h * 0.88, sc.w * 0.045, p.accent);
  out += bars(sc.x + sc.w * 0.18, sc.y + sc.h * 0.87, sc.w * 0.4, sc.h * 0.012, 2, '#ffffff', `${ref.seed}#user`);
  if (slug.includes('founder')) {
    out += pill(sc.x + sc.w * 0.06, sc.y + sc.h * 0.06, 'FOUNDER', sc.w * 0.04, p.accent, p.accentInk).svg;
  }
  out += playIcon(sc.x + sc.w / 2, sc.y + sc.h * 0.5, sc.w * (poster ? 0.14 : 0.11), p);
  out += rect(sc.x, sc.y + sc.h - sc.h * 0.012, sc.w * 0.4, sc.h * 0.012, 0, '#ffffff', op(0.9));
  out += '</g>';
  return out;
}

function slideshowSketch(b: Box, p: Palette, ref: PreviewRef, copy: Copy): string {
  const cw = Math.min(b.w * 0.62, b.h * 0.8 * 0.8);
  const ch = cw * 1.25;
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h * 0.46;
  let out = '';
  const back: Array<[number, number, string]> = [
    [-8, -cw * 0.2, p.soft],
    [7, cw * 0.2, p.accent],
  ];
  for (const [deg, dx, fill] of back) {
    out += `<g transform="rotate(${deg} ${n(cx + dx)} ${n(cy)})">${rect(cx + dx - cw / 2, cy - ch / 2, cw, ch, cw * 0.06, fill, op(0.85))}</g>`;
  }
  const x = cx - cw / 2;
  const y = cy - ch / 2;
  out += rect(x + cw * 0.02, y + cw * 0.03, cw, ch, cw * 0.06, '#000000', op(0.2));
  out += rect(x, y, cw, ch, cw * 0.06, '#ffffff');
  out += rect(x + cw * 0.06, y + cw * 0.06, cw * 0.88, ch * 0.55, cw * 0.04, p.bg2);
  out += circle(x + cw * 0.72, y + ch * 0.16, cw * 0.08, p.glow);
  out += `<path d="M${n(x + cw * 0.06)} ${n(y + ch * 0.55 + cw * 0.06)} L${n(x + cw * 0.32)} ${n(y + ch * 0.3)} L${n(x + cw * 0.5)} ${n(y + ch * 0.45)} L${n(x + cw * 0.64)} ${n(y + ch * 0.35)} L${n(x + cw * 0.94)} ${n(y + ch * 0.55 + cw * 0.06)}Z" fill="${p.bg1}"/>`;
  if (ref.slug.includes('listicle')) {
    out += circle(x + cw * 0.18, y + cw * 0.18, cw * 0.1, p.accent);
    out += text(x + cw * 0.18, y + cw * 0.22, '01', cw * 0.1, p.accentInk, { weight: 900, anchor: 'middle' });
  }
  out += textBlock(x + cw * 0.07, y + ch * 0.64, copy.headline, cw * 0.86, cw * 0.085, 2, p.ink).svg;
  out += bars(x + cw * 0.07, y + ch * 0.86, cw * 0.8, cw * 0.025, 2, p.soft, `${ref.seed}#slide`);
  out += pill(x + cw - cw * 0.26, y + cw * 0.08, '1/6', cw * 0.04, p.ink, '#ffffff', 0.7).svg;
  const dy = y + ch + b.h * 0.07;
  for (let i = 0; i < 6; i++) {
    out += circle(cx - cw * 0.2 + i * cw * 0.08, dy, cw * 0.018, '#ffffff', op(i === 0 ? 1 : 0.45));
  }
  const ar = cw * 0.07;
  out += circle(x + cw + ar * 0.3, cy, ar, '#ffffff', op(0.9));
  out += `<path d="M${n(x + cw + ar * 0.05)} ${n(cy - ar * 0.4)} L${n(x + cw + ar * 0.5)} ${n(cy)} L${n(x + cw + ar * 0.05)} ${n(cy + ar * 0.4)}" fill="none" stroke="${p.ink}" stroke-width="${n(ar * 0.18)}" stroke-linecap="round" stroke-linejoin="round"/>`;
  return out;
}

// ---------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------

function sectionLabel(ref: PreviewRef): string {
  switch (ref.section) {
    case 'static_ads':
      return 'Static ad';
    case 'video_ads':
      return 'Video ad';
    case 'ugc_ads':
      return 'UGC ad';
    case 'slideshow_templates':
      return 'Slideshow';
    default:
      return 'Avatar';
  }
}

function background(W: number, H: number, p: Palette, seed: string): string {
  const [x1, y1, x2, y2] = p.angle;
  const r = rng(`${seed}#bg`);
  let out =
    `<defs><linearGradient id="bg" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}">` +
    `<stop offset="0" stop-color="${p.bg1}"/><stop offset="1" stop-color="${p.bg2}"/></linearGradient>` +
    `<radialGradient id="glow" cx="0.5" cy="0.5" r="0.5"><stop offset="0" stop-color="${p.glow}" stop-opacity="0.55"/>` +
    `<stop offset="1" stop-color="${p.glow}" stop-opacity="0"/></radialGradient></defs>` +
    `<rect width="${W}" height="${H}" fill="url(#bg)"/>`;
  for (let i = 0; i < 3; i++) {
    const cr = Math.min(W, H) * (0.25 + r() * 0.35);
    out += circle(W * r(), H * r(), cr, 'url(#glow)');
  }
  out += circle(W * (0.1 + r() * 0.8), H * (0.1 + r() * 0.8), Math.min(W, H) * 0.02, '#ffffff', op(0.35));
  return out;
}

function captionBand(W: number, H: number, bandH: number, title: string, subtitle: string, p: Palette): string {
  const m = Math.min(W, H) * 0.06;
  const y = H - bandH;
  const ts = bandH * 0.3;
  const fit = fitText(title, W - m * 2, ts, 1);
  return (
    rect(0, y, W, bandH, 0, p.ink, op(0.78)) +
    rect(0, y, W, Math.max(4, bandH * 0.03), 0, p.accent) +
    text(m, y + bandH * 0.47, fit.lines[0] ?? title, fit.size, '#ffffff', { weight: 800 }) +
    text(m, y + bandH * 0.78, subtitle, bandH * 0.17, p.soft, { weight: 500, spacing: bandH * 0.005 })
  );
}

/** A public avatar's card: its illustrated presenter in a room (src/services/catalog/presenters.ts). */
function avatarSvg(ref: PreviewRef): string {
  return presenterSvg(ref.seed);
}

function wrapSvg(W: number, H: number, title: string, body: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">\n` +
    `<title>${esc(title)}</title>\n${body}\n</svg>\n`
  );
}

function renderPreview(ref: PreviewRef): string {
  if (ref.kind === 'avatar') return avatarSvg(ref);
  const [W, H] = DIMS[ref.aspect_ratio];
  const p = palette(ref.seed);
  const copy = copyFor(ref.slug, ref.title);
  const poster = ref.kind === 'preset-poster';
  const m = Math.min(W, H) * 0.07;
  let body = background(W, H, p, ref.seed);
  let box: Box;
  let chipSvg = '';
  let bandSvg = '';
  if (poster) {
    const chip = pill(m, m, (ref.subtitle ?? ref.title).toUpperCase(), Math.min(W, H) * 0.032, '#000000', '#ffffff', 0.45);
    chipSvg = chip.svg;
    const top = m + chip.h + m * 0.5;
    box = { x: m, y: top, w: W - m * 2, h: H - top - m };
  } else {
    const bandH = Math.round(Math.min(W, H) * 0.2);
    const title = ref.kind === 'preset-preview' ? (ref.subtitle ?? ref.title) : ref.title;
    const sub =
      ref.kind === 'preset-preview'
        ? `${ref.title} \u00B7 preset`
        : `${sectionLabel(ref)} \u00B7 ${ref.aspect_ratio}${ref.kind === 'template' && ref.duration ? ` \u00B7 ${ref.duration}s` : ''}`;
    bandSvg = captionBand(W, H, bandH, title, sub, p);
    box = { x: m, y: m, w: W - m * 2, h: H - bandH - m * 2 };
  }
  if (ref.section === 'static_ads') body += staticSketch(box, p, ref, copy);
  else if (ref.section === 'video_ads') body += videoSketch(box, p, ref, copy, poster);
  else if (ref.section === 'ugc_ads') body += ugcSketch(box, p, ref, copy, poster);
  else body += slideshowSketch(box, p, ref, copy);
  body += chipSvg + bandSvg;
  const label =
    ref.kind === 'template' || ref.kind === 'slideshow'
      ? ref.title
      : `${ref.title} \u2013 ${ref.subtitle ?? ''}${poster ? ' (poster)' : ''}`;
  return wrapSvg(W, H, label, body);
}

// ---------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------

function listSvgs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSvgs(full));
    else if (entry.name.endsWith('.svg')) out.push(full);
  }
  return out;
}

function removeEmptyDirs(dir: string, root: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeEmptyDirs(join(dir, entry.name), root);
  }
  if (dir !== root && readdirSync(dir).length === 0) rmdirSync(dir);
}

function main(): void {
  const root = fileURLToPath(PREVIEWS_DIR_URL);
  const sources = readCatalogSources({ checkPreviews: false, fromYaml: true });
  const refs = referencedPreviews(sources);
  const byPath = new Map<string, PreviewRef>();
  for (const ref of refs) {
    const prev = byPath.get(ref.path);
    if (prev) throw new Error(`${ref.where}: preview path "${ref.path}" is already used by ${prev.where}`);
    byPath.set(ref.path, ref);
  }

  let written = 0;
  let unchanged = 0;
  let bytes = 0;
  let done = 0;
  const total = byPath.size;
  for (const [path, ref] of byPath) {
    const file = join(root, ...path.split('/'));
    const svg = renderPreview(ref);
    bytes += Buffer.byteLength(svg);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (current === svg) unchanged++;
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, svg);
      written++;
    }
    done++;
    if (done % 10 === 0 || done === total) console.log(`[${done}/${total}] ${path}`);
  }

  let removed = 0;
  for (const file of listSvgs(root)) {
    const rel = relative(root, file).split(sep).join('/');
    if (!byPath.has(rel)) {
      rmSync(file);
      removed++;
      console.log(`removed stale ${rel}`);
    }
  }
  removeEmptyDirs(root, root);

  const kinds = new Map<string, number>();
  for (const ref of byPath.values()) kinds.set(ref.kind, (kinds.get(ref.kind) ?? 0) + 1);
  const breakdown = [...kinds].map(([k, c]) => `${c} ${k}`).join(', ');
  console.log(
    `previews: ${total} files in spec/previews (${breakdown}); ${written} written, ${unchanged} unchanged, ` +
      `${removed} stale removed; ${(bytes / 1024).toFixed(1)} KiB total`,
  );
}

main();
