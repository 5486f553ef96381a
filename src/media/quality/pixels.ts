// Pixel measures of the media quality checker (./check.ts), on decoded RGBA frames.
//
// Contrast of a placed text (textContrast): WCAG 2 relative luminance and contrast ratio
// ((L1 + 0.05) / (L2 + 0.05)) between the glyphs and the pixels right next to them. Which pixels
// are the glyphs: those within RGB distance 48 (at most half-way to the background's colour) of
// a colour the renderer says it drew (PlacedText.color and .colors); without one, the box's pixels are split into two colours by k-means (k = 2,
// in RGB, seeded with the 5th and 95th luminance percentiles) and the smaller cluster is the text
// (glyphs cover less of their box than the background does). Antialiased glyph edges are blends,
// so the measure is taken away from them: the text's luminance is the 90th percentile of its
// pixels towards its own extreme (the glyph cores), the background's is the median of the pixels
// 2–5 px from the nearest glyph pixel (what the eye sees the glyph against: a scrim, an outline, the
// page). A gradient or photo varies along the line, so the box is cut into square-ish segments
// along its width and the worst segment counts. A box of one colour has no visible text: ratio 1.
//
// OCR input (inkImage): each pixel's distance from the text's colour (the nearest of its colours) as grey, so the glyphs come
// out black on white whatever is behind them (an outline, a photo, a scrim).
//
// Glyphs outside the box (inkAcrossEdge): strokes of the text's colour in the bands just left and
// right of the box (beyond a 2 px tolerance for antialiasing, as far as half the box's height),
// each a run of text colour enclosed by the box's own background (or cut by the frame's edge): a
// line too long for its box runs on past it. Other colours end the band (a neighbour, another
// ground), and a run of text colour that does not end is an area of that colour, not a stroke.
//
// Uncovered canvas (uncoveredBar): a straight bar along an edge: at least 2 lines (rows or
// columns) that are blank (≥ 97 % of their pixels black, max channel ≤ 24, or transparent,
// alpha ≤ 8), followed within 2 lines by a straight content edge (≥ 60 % of that line not blank
// and a step in mean luminance or alpha of at least 20 levels). A dark design is not a bar: after
// its black background the first non-black line is a glyph's or shape's top, mostly still black; a
// frame black all over (a fade) has no content edge at all.
import type { Box } from './manifest.ts';

/** A decoded frame: RGBA, 8 bits per channel, rows top to bottom. */
export interface Frame {
  data: Buffer;
  width: number;
  height: number;
}

const channel = (v: number) => {
  const c = v / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const LINEAR = Array.from({ length: 256 }, (_, v) => channel(v));

/** WCAG 2 relative luminance (0–1) of an sRGB colour. */
export function relativeLuminance(r: number, g: number, b: number): number {
  return 0.2126 * LINEAR[r] + 0.7152 * LINEAR[g] + 0.0722 * LINEAR[b];
}

/** WCAG 2 contrast ratio (1–21) of two relative luminances. */
export function contrastRatio(l1: number, l2: number): number {
  return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
}

/** `#rrggbb` (or `#rgb`) as [r, g, b], or undefined. */
export function parseHex(color: string | undefined): [number, number, number] | undefined {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(color?.trim() ?? '');
  if (!m) return undefined;
  const hex = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}

/** A box clamped to the frame, in whole pixels (empty when it lies outside). */
export function clampBox(box: Box, frame: Frame): Box {
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, Math.floor(box.y));
  const x1 = Math.min(frame.width, Math.ceil(box.x + box.w));
  const y1 = Math.min(frame.height, Math.ceil(box.y + box.h));
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

type Rgb = [number, number, number];
const dist2 = (a: Rgb, b: Rgb) => (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2;

/** The box's pixels on a grid of at most ~40,000 cells (every `step`-th pixel). */
function grid(frame: Frame, box: Box): { step: number; gw: number; gh: number; rgb: Rgb[] } {
  const b = clampBox(box, frame);
  const step = Math.max(1, Math.ceil(Math.sqrt((b.w * b.h) / 40_000)));
  const gw = Math.ceil(b.w / step);
  const gh = Math.ceil(b.h / step);
  const rgb: Rgb[] = [];
  for (let gy = 0; gy < gh; gy++)
    for (let gx = 0; gx < gw; gx++) {
      const i = ((b.y + gy * step) * frame.width + b.x + gx * step) * 4;
      rgb.push([frame.data[i], frame.data[i + 1], frame.data[i + 2]]);
    }
  return { step, gw, gh, rgb };
}

const lumOf = (c: Rgb) => relativeLuminance(Math.round(c[0]), Math.round(c[1]), Math.round(c[2]));

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round((p / 100) * (s.length - 1))))];
}

/** Two colour clusters (k-means, k = 2); `text` is the index of the text's cluster. */
export interface Split {
  centres: [Rgb, Rgb];
  label: Uint8Array;
  text: 0 | 1;
}

/** Splits pixels into text and background colours (see the head of this file). */
export function splitColours(rgb: Rgb[], textColor?: string): Split | undefined {
  if (rgb.length < 4) return undefined;
  const lums = rgb.map(lumOf);
  const order = lums.map((_, i) => i).sort((a, b) => lums[a] - lums[b]);
  const centres: [Rgb, Rgb] = [[...rgb[order[Math.floor(order.length * 0.05)]]], [...rgb[order[Math.floor(order.length * 0.95)]]]];
  const label = new Uint8Array(rgb.length);
  for (let iter = 0; iter < 10; iter++) {
    const sum = [
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ];
    rgb.forEach((c, i) => {
      const k = dist2(c, centres[0]) <= dist2(c, centres[1]) ? 0 : 1;
      label[i] = k;
      sum[k][0] += c[0];
      sum[k][1] += c[1];
      sum[k][2] += c[2];
      sum[k][3]++;
    });
    for (const k of [0, 1]) if (sum[k][3]) centres[k] = [sum[k][0] / sum[k][3], sum[k][1] / sum[k][3], sum[k][2] / sum[k][3]];
  }
  const count1 = label.reduce((a, b) => a + b, 0);
  const given = parseHex(textColor);
  const text: 0 | 1 = given ? (dist2(centres[0], given) <= dist2(centres[1], given) ? 0 : 1) : count1 <= rgb.length - count1 ? 1 : 0;
  return { centres, label, text };
}

export interface ContrastEstimate {
  ratio: number;
  /** Relative luminance of the text and of the background next to it, where the contrast is worst. */
  text: number;
  background: number;
  /** The share of the box's pixels that are the text's colour. */
  textShare: number;
}

/** The text's colours and the background's main colour in a box, and which pixels are the text's. */
export interface Ink {
  /** The text's colours: the ones named (main first), else the smaller k-means cluster's centre. */
  inks: Rgb[];
  ground: Rgb;
  /** Whether the colours were named (else estimated). */
  named: boolean;
  isText: (c: Rgb) => boolean;
}

/** How near (RGB distance) a pixel must be to a colour the renderer names to be that text's (at most half-way to the background's). */
const GIVEN_TOLERANCE = 48;

/** The text's colours in `box` (those named, else the smaller k-means cluster) and the background's. */
export function inkOf(frame: Frame, box: Box, colors: string[] = []): Ink | undefined {
  const split = splitColours(grid(frame, box).rgb, colors[0]);
  if (!split || dist2(split.centres[0], split.centres[1]) < 10 ** 2) return undefined;
  const ground = split.centres[1 - split.text];
  const given = colors.map(parseHex).filter((c): c is Rgb => c !== undefined);
  if (!given.length) {
    const centre = split.centres[split.text];
    return { inks: [centre], ground, named: false, isText: (c) => dist2(c, centre) <= dist2(c, ground) };
  }
  const tolerance = given.map((g) => Math.min(GIVEN_TOLERANCE, 0.5 * Math.sqrt(dist2(g, ground))) ** 2);
  return { inks: given, ground, named: true, isText: (c) => given.some((g, k) => dist2(c, g) <= tolerance[k]) };
}

/** City-block distance (in cells) of each cell to the nearest text cell (two-pass chamfer). */
function distanceToText(text: boolean[], gw: number, gh: number): Uint16Array {
  const d = new Uint16Array(gw * gh).map((_, i) => (text[i] ? 0 : 65535));
  for (let y = 0; y < gh; y++)
    for (let x = 0; x < gw; x++) {
      const i = y * gw + x;
      if (x > 0) d[i] = Math.min(d[i], d[i - 1] + 1);
      if (y > 0) d[i] = Math.min(d[i], d[i - gw] + 1);
    }
  for (let y = gh - 1; y >= 0; y--)
    for (let x = gw - 1; x >= 0; x--) {
      const i = y * gw + x;
      if (x < gw - 1) d[i] = Math.min(d[i], d[i + 1] + 1);
      if (y < gh - 1) d[i] = Math.min(d[i], d[i + gw] + 1);
    }
  return d;
}

/** The contrast of the text drawn in `box` against the pixels next to it (see the head of this file). */
export function textContrast(frame: Frame, box: Box, colors: string[] = []): ContrastEstimate {
  const none = { ratio: 1, text: 0, background: 0, textShare: 0 };
  const found = inkOf(frame, box, colors);
  if (!found) return none;
  const { step, gw, gh, rgb } = grid(frame, box);
  const text = rgb.map(found.isText);
  const dist = distanceToText(text, gw, gh);
  const near = Math.max(1, Math.ceil(2 / step));
  const far = Math.max(near + 1, Math.round(5 / step));
  const lighter = lumOf(found.inks[0]) > lumOf(found.ground);
  const segments = Math.min(8, Math.max(1, Math.round(gw / Math.max(1, gh))));
  let worst: ContrastEstimate | undefined;
  for (let sgm = 0; sgm < segments; sgm++) {
    const textLums: number[] = [];
    const ring: number[] = [];
    for (let gy = 0; gy < gh; gy++)
      for (let gx = Math.floor((sgm * gw) / segments); gx < Math.floor(((sgm + 1) * gw) / segments); gx++) {
        const i = gy * gw + gx;
        if (text[i]) textLums.push(lumOf(rgb[i]));
        else if (dist[i] >= near && dist[i] <= far) ring.push(lumOf(rgb[i]));
      }
    if (textLums.length < 3 || ring.length < 3) continue;
    const t = percentile(textLums, lighter ? 90 : 10);
    const b = percentile(ring, 50);
    const ratio = contrastRatio(t, b);
    if (!worst || ratio < worst.ratio) worst = { ratio, text: t, background: b, textShare: 0 };
  }
  if (!worst) return none;
  return { ...worst, textShare: text.filter(Boolean).length / rgb.length };
}

/**
 * The region as a grey image for OCR: each pixel's distance from the text's colour, so the glyphs
 * come out black on white whatever is behind them (an outline, a photo, a scrim). One byte a pixel.
 */
export function inkImage(frame: Frame, region: Box, found: Ink): Buffer {
  const r = clampBox(region, frame);
  const out = Buffer.alloc(r.w * r.h);
  const scale = 255 / Math.max(40, 0.5 * Math.sqrt(dist2(found.inks[0], found.ground)));
  for (let y = 0; y < r.h; y++)
    for (let x = 0; x < r.w; x++) {
      const i = ((r.y + y) * frame.width + r.x + x) * 4;
      const c: Rgb = [frame.data[i], frame.data[i + 1], frame.data[i + 2]];
      const d = Math.sqrt(Math.min(...found.inks.map((ink) => dist2(c, ink))));
      // An estimated colour is a blend of the text's colours: grey by how much nearer to it than to the background.
      const g = Math.sqrt(dist2(c, found.ground));
      out[y * r.w + x] = found.named ? Math.min(255, Math.round(d * scale)) : Math.round((255 * d) / Math.max(1, d + g));
    }
  return out;
}

/**
 * The side of `box` its glyphs run past, or undefined (see the head of this file): rows whose band
 * beside the box, walked outward from 2 px off its edge, holds a stroke of the text's colour
 * enclosed by the box's background (or cut by the frame's edge) before any other colour.
 */
export function inkAcrossEdge(frame: Frame, box: Box, reach: number, textColor?: string): 'left' | 'right' | undefined {
  const { rgb } = grid(frame, box);
  const split = splitColours(rgb, textColor);
  if (!split || dist2(split.centres[0], split.centres[1]) < 30 ** 2) return undefined;
  const t = split.centres[split.text];
  const bg = split.centres[1 - split.text];
  // Within a fifth of the text-to-ground distance: a light wall glimpsed between a caption's scrim
  // and a dark outline beside it (a fourth to a third of the way) is not a glyph's stroke.
  const near = dist2(t, bg) * 0.2 ** 2;
  const kind = (x: number, y: number): 'ink' | 'ground' | 'other' => {
    const i = (y * frame.width + x) * 4;
    const c: Rgb = [frame.data[i], frame.data[i + 1], frame.data[i + 2]];
    return dist2(c, t) <= near ? 'ink' : dist2(c, bg) <= near ? 'ground' : 'other';
  };
  const rows = clampBox(box, frame);
  const maxStroke = Math.max(3, box.h / 3);
  for (const [side, dir, x0] of [
    ['left', -1, Math.floor(box.x) - 3],
    ['right', 1, Math.ceil(box.x + box.w) + 2],
  ] as const) {
    let crossing = 0;
    for (let y = rows.y; y < rows.y + rows.h; y++) if (strokeInRow(kind, frame.width, x0, dir, reach, y, maxStroke)) crossing++;
    if (crossing >= Math.max(2, 0.03 * box.h)) return side;
  }
  return undefined;
}

/** Whether row `y`, walked from `x0` in `dir` for `reach` px, has an ink run after ground, closed by ground or the frame's edge. */
function strokeInRow(
  kind: (x: number, y: number) => 'ink' | 'ground' | 'other',
  width: number,
  x0: number,
  dir: 1 | -1,
  reach: number,
  y: number,
  maxStroke: number,
): boolean {
  let groundSeen = false;
  let run = 0;
  for (let k = 0, x = x0; k < reach; k++, x += dir) {
    if (x < 0 || x >= width) return run > 0 && run <= maxStroke;
    const c = kind(x, y);
    if (c === 'other') return false;
    if (c === 'ink') {
      if (groundSeen) run++;
      continue;
    }
    if (run > 0 && run <= maxStroke) return true;
    run = 0;
    groundSeen = true;
  }
  return false;
}

export interface Bar {
  edge: 'top' | 'bottom' | 'left' | 'right';
  /** Lines (rows or columns) of the frame the bar covers. */
  depth: number;
}

/** The pixel of `edge`'s line `line` (0 = outermost) at position `k` along it, as a byte offset. */
function offsetOf(frame: Frame, edge: Bar['edge'], line: number, k: number): number {
  const { width: w, height: h } = frame;
  const [x, y] = edge === 'top' ? [k, line] : edge === 'bottom' ? [k, h - 1 - line] : edge === 'left' ? [line, k] : [w - 1 - line, k];
  return (y * w + x) * 4;
}

interface LineStats {
  blank: number;
  lum: number;
  alpha: number;
}

function lineStats(frame: Frame, edge: Bar['edge'], line: number): LineStats {
  const n = edge === 'top' || edge === 'bottom' ? frame.width : frame.height;
  let blank = 0;
  let lum = 0;
  let alpha = 0;
  for (let k = 0; k < n; k++) {
    const i = offsetOf(frame, edge, line, k);
    const [r, g, b, a] = [frame.data[i], frame.data[i + 1], frame.data[i + 2], frame.data[i + 3]];
    if (a <= 8 || Math.max(r, g, b) <= 24) blank++;
    lum += 0.2126 * r + 0.7152 * g + 0.0722 * b;
    alpha += a;
  }
  return { blank: blank / n, lum: lum / n, alpha: alpha / n };
}

/** The first straight blank bar along an edge of the frame (see the head of this file), or undefined. */
export function uncoveredBar(frame: Frame): Bar | undefined {
  for (const edge of ['top', 'bottom', 'left', 'right'] as const) {
    const lines = edge === 'top' || edge === 'bottom' ? frame.height : frame.width;
    const max = Math.floor(lines * 0.45);
    let depth = 0;
    while (depth < max && lineStats(frame, edge, depth).blank >= 0.97) depth++;
    if (depth < 2 || depth >= max) continue;
    const bar = lineStats(frame, edge, 0);
    for (const line of [depth, depth + 1]) {
      const s = lineStats(frame, edge, line);
      if (1 - s.blank >= 0.6 && (s.lum - bar.lum >= 20 || s.alpha - bar.alpha >= 20)) return { edge, depth };
    }
  }
  return undefined;
}
