// Pixel measures of the media quality checker (./check.ts), on decoded RGBA frames.
//
// Contrast of a placed text (textContrast): WCAG 2 relative luminance and contrast ratio
// ((L1 + 0.05) / (L2 + 0.05)). The text's colour and the colour behind it come from the box's own
// pixels: they are split into two colours by k-means (k = 2, in RGB, seeded with the 5th and 95th
// luminance percentiles). The text is the cluster nearer to the colour the renderer says it drew
// (PlacedText.color), else the smaller cluster (glyphs cover less of their box than the background
// does). Antialiased glyph edges are blends of both, so the measure is taken away from them: the
// text's luminance is the 90th percentile of its cluster towards its own extreme (the glyph cores),
// the background's is the 90th percentile towards the text of the background pixels at least 2 px
// away from any text pixel (the worst part of a gradient or photo behind the text, not its
// average). A box of one colour has no visible text: ratio 1.
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
  /** Relative luminance of the text and of the background behind it. */
  text: number;
  background: number;
  /** The share of the box's pixels that are the text's colour. */
  textShare: number;
}

/** The contrast of the text drawn in `box` against the pixels behind it (see the head of this file). */
export function textContrast(frame: Frame, box: Box, textColor?: string): ContrastEstimate {
  const { step, gw, gh, rgb } = grid(frame, box);
  const split = splitColours(rgb, textColor);
  const none = { ratio: 1, text: 0, background: 0, textShare: 0 };
  if (!split || dist2(split.centres[0], split.centres[1]) < 10 ** 2) return none;
  const isText = (i: number) => split.label[i] === split.text;
  const textLums: number[] = [];
  const bgLums: number[] = [];
  const reach = Math.max(1, Math.round(2 / step));
  for (let gy = 0; gy < gh; gy++)
    for (let gx = 0; gx < gw; gx++) {
      const i = gy * gw + gx;
      if (isText(i)) {
        textLums.push(lumOf(rgb[i]));
        continue;
      }
      let nearText = false;
      for (let dy = -reach; dy <= reach && !nearText; dy++)
        for (let dx = -reach; dx <= reach && !nearText; dx++) {
          const x = gx + dx;
          const y = gy + dy;
          if (x >= 0 && y >= 0 && x < gw && y < gh && isText(y * gw + x)) nearText = true;
        }
      if (!nearText) bgLums.push(lumOf(rgb[i]));
    }
  if (!textLums.length) return none;
  if (!bgLums.length) for (const [i, k] of split.label.entries()) if (k !== split.text) bgLums.push(lumOf(rgb[i]));
  if (!bgLums.length) return none;
  const lighter = lumOf(split.centres[split.text]) > lumOf(split.centres[1 - split.text]);
  const text = percentile(textLums, lighter ? 90 : 10);
  const background = percentile(bgLums, lighter ? 90 : 10);
  return { ratio: contrastRatio(text, background), text, background, textShare: textLums.length / rgb.length };
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
  const near = dist2(t, bg) * 0.3 ** 2;
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
