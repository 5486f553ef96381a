// The scene renderer of faceless videos (sharp/libvips, SVG drawn by librsvg, type set by pango):
// one still per beat at the video's full size, which the timeline renderer then moves with a
// slow pan. Typography first, no drawn stand-in for a product:
//
//   1. the background: the beat's photo (a stock photo or a model's picture) or the customer's
//      reference image, cover-cropped to the frame; else the style's gradient (turned per scene)
//      and decoration (see STYLES) with the scene's composition (see COMPOSITIONS: a stacked
//      word list, a band, a slanted block, a numeral, a frame; consecutive scenes never share one)
//      in the brand's or the style's colours;
//   2. the texture motifs (selected_ai_styles), then the grades (selected_flux_dev_styles);
//   3. the scene's title as big type in the style's display face (not over a stock photo or a
//      model's picture; a list item's number set large above its name), fitted into the type zone
//      every pan keeps in the frame (typeZone) at the composition's scale (TYPE_SCALE), in the first
//      of the style's colours that reads at 4.5:1 on the pixels behind it, else white on a dark scrim;
//   4. unless `plain`, the style's fixed lines (the vintage frame), a dark scrim under the caption
//      band and the brand (a band in its colours, its name on a chip, its logo). Faceless videos draw their scenes plain and lay
//      renderOverlay's picture (scrim and brand) over the whole video, so the brand stays put.
// composeScene also says where its texts are (the media quality checker's manifest); sceneTexts
// and overlayTexts measure them without drawing.
//
// Same input, same pixels: every "random" position comes from a seeded generator.
import sharp, { type OverlayOptions } from 'sharp';
import type { AiStyle, FluxStyle, ImageStyle, OverlayInput, SceneEngine, SceneInput, SceneText } from '../image/types.ts';
import { fontFace, type FontFace } from '../../media/fonts.ts';
import { sceneTitle } from '../write/brief.ts';
import { hexToRgb, rng } from './layout.ts';
import { contrastRatio, relativeLuminance } from '../../media/quality/pixels.ts';

interface StyleDef {
  /** Gradient stops, top to bottom. */
  gradient: [string, string];
  /** Shape colours of the style's decoration. */
  accents: string[];
  /** Display face of the scene's title and its number. */
  font: FontFace;
  /** Face of the brand's name. */
  label: FontFace;
  /** Whether the title is set in capitals (condensed and heavy display faces). */
  caps: boolean;
  numeral: string;
  /** The style's decoration (SVG elements), given the frame and a seeded random source. */
  decorate(w: number, h: number, rnd: () => number, accents: string[]): string;
  /** Lines fixed over the whole video (not moving with a scene's pan), SVG elements; none when absent. */
  fixed?(w: number, h: number, accents: string[]): string;
  /** Colour of the texture motifs: light on dark styles, dark on light ones. */
  ink: string;
  /** Card outline colour and width around the reference image. */
  card: { stroke: string; width: number; radius: number };
}

const circle = (cx: number, cy: number, r: number, fill: string, opacity = 1) =>
  `<circle cx="${cx.toFixed(0)}" cy="${cy.toFixed(0)}" r="${r.toFixed(0)}" fill="${fill}" fill-opacity="${opacity}"/>`;

export const STYLES: Record<ImageStyle, StyleDef> = {
  cinematic: {
    gradient: ['#0B2A33', '#C8772E'],
    accents: ['#F2B56B', '#11434F'],
    font: fontFace('Anton', 'regular'),
    label: fontFace('Montserrat', 'bold'),
    caps: true,
    numeral: '#F2B56B',
    decorate: (w, h, rnd, a) =>
      // A low sun behind haze and a beam of light (no letterbox bars: a pan would show them as black borders).
      `<radialGradient id="sun"><stop offset="0" stop-color="${a[0]}" stop-opacity="0.8"/><stop offset="1" stop-color="${a[0]}" stop-opacity="0"/></radialGradient>` +
      circle(w * (0.2 + 0.6 * rnd()), h * (0.55 + 0.2 * rnd()), Math.min(w, h) * (0.3 + 0.2 * rnd()), 'url(#sun)') +
      `<polygon points="${(w * rnd()).toFixed(0)},0 ${(w * (0.2 + rnd())).toFixed(0)},0 ${(w * rnd()).toFixed(0)},${h}" fill="#FFFFFF" fill-opacity="0.06"/>`,
    ink: '#FFFFFF',
    card: { stroke: '#000000', width: 0, radius: 8 },
  },
  watercolor: {
    gradient: ['#F4EDE1', '#E9DFCC'],
    accents: ['#9CC5D9', '#E8A6A1', '#B8D8B0', '#F3D27A'],
    font: fontFace('DM Serif Display', 'regular'),
    label: fontFace('Montserrat', 'bold'),
    caps: false,
    numeral: '#7A6A58',
    decorate: (w, h, rnd, a) =>
      Array.from({ length: 9 }, (_, i) => circle(w * rnd(), h * rnd(), Math.min(w, h) * (0.12 + 0.2 * rnd()), a[i % a.length], 0.45)).join(
        '',
      ),
    ink: '#3F6E8C',
    card: { stroke: '#FFFFFF', width: 18, radius: 4 },
  },
  comic: {
    gradient: ['#1E63D6', '#1E63D6'],
    accents: ['#E63946', '#FFD23F', '#000000'],
    font: fontFace('Montserrat', 'black'),
    label: fontFace('Montserrat', 'black'),
    caps: true,
    numeral: '#FFD23F',
    decorate: (w, h, rnd, a) => {
      // A starburst behind the card.
      const cx = w * (0.4 + 0.2 * rnd());
      const cy = h * 0.4;
      const pts: string[] = [];
      for (let i = 0; i < 28; i++) {
        const r = (i % 2 ? 0.28 : 0.5) * Math.min(w, h);
        const ang = (i / 28) * Math.PI * 2;
        pts.push(`${(cx + r * Math.cos(ang)).toFixed(0)},${(cy + r * Math.sin(ang)).toFixed(0)}`);
      }
      return `<polygon points="${pts.join(' ')}" fill="${a[0]}" stroke="#000" stroke-width="14"/>`;
    },
    ink: '#FFFFFF',
    card: { stroke: '#000000', width: 16, radius: 0 },
  },
  minimal: {
    gradient: ['#F5F5F2', '#F5F5F2'],
    accents: ['#222222', '#FF5A36'],
    font: fontFace('Montserrat', 'bold'),
    label: fontFace('Inter', 'bold'),
    caps: false,
    numeral: '#222222',
    decorate: (w, h, rnd, a) =>
      // A hairline and one block of the accent, somewhere else in every scene.
      `<line x1="${(w * 0.08).toFixed(0)}" y1="${(h * 0.12).toFixed(0)}" x2="${(w * 0.92).toFixed(0)}" y2="${(h * 0.12).toFixed(0)}" stroke="${a[0]}" stroke-width="3"/>` +
      `<rect x="${(w * (rnd() < 0.5 ? 0 : 0.55)).toFixed(0)}" y="${(h * (0.5 + 0.3 * rnd())).toFixed(0)}" width="${(w * 0.45).toFixed(0)}" height="${(h * 0.3).toFixed(0)}" fill="${a[1]}"/>`,
    ink: '#1F3A5F',
    card: { stroke: '#222222', width: 2, radius: 0 },
  },
  neon: {
    // A deep violet, not black: a straight light line under a black band is what a letterbox bar looks like.
    gradient: ['#1A0B30', '#160A24'],
    accents: ['#FF2BD6', '#19F0FF'],
    font: fontFace('Anton', 'regular'),
    label: fontFace('Montserrat', 'bold'),
    caps: true,
    numeral: '#19F0FF',
    decorate: (w, h, rnd, a) => {
      // Laser lines above and below the type, never through it.
      const z = typeZone(w, h);
      const gap = h * 0.03;
      const bands: [number, number][] = [
        [h * 0.06, z.y - gap],
        [z.y + z.h + gap, h * 0.95],
      ];
      return Array.from({ length: 6 }, (_, i) => {
        const [lo, hi] = bands[i % 2];
        const y1 = lo + (hi - lo) * rnd();
        const y2 = lo + (hi - lo) * rnd();
        const c = a[i % 2];
        const at = `x1="0" y1="${y1.toFixed(0)}" x2="${w}" y2="${y2.toFixed(0)}"`;
        return `<line ${at} stroke="${c}" stroke-width="22" stroke-opacity="0.25"/><line ${at} stroke="${c}" stroke-width="6"/>`;
      }).join('');
    },
    ink: '#FFFFFF',
    card: { stroke: '#FF2BD6', width: 10, radius: 24 },
  },
  vintage: {
    gradient: ['#D9C29A', '#8A6A3F'],
    accents: ['#5C4326', '#EFE0C0'],
    font: fontFace('Playfair Display', 'black'),
    label: fontFace('Playfair Display', 'bold'),
    caps: false,
    numeral: '#3E2C17',
    decorate: () => '',
    // A double rule round the picture, fixed over the video (a panning still would carry it to the edge), 5 % in.
    // In a dark warm grey, not the style's brown: the overlay is not graded, and under black_and_white a brown frame would be the one coloured thing.
    fixed: (w, h) => {
      const ink = '#4A4038';
      const m = Math.round(Math.min(w, h) * 0.05);
      const n = m + Math.round(Math.min(w, h) * 0.018);
      const sw = Math.max(4, Math.round(Math.min(w, h) * 0.009));
      return (
        `<rect x="${m}" y="${m}" width="${w - 2 * m}" height="${h - 2 * m}" fill="none" stroke="${ink}" stroke-width="${sw}"/>` +
        `<rect x="${n}" y="${n}" width="${w - 2 * n}" height="${h - 2 * n}" fill="none" stroke="${ink}" stroke-width="${Math.max(2, Math.round(sw / 3))}"/>`
      );
    },
    ink: '#3E2C17',
    card: { stroke: '#EFE0C0', width: 14, radius: 2 },
  },
};

function motif(kind: AiStyle, w: number, h: number, rnd: () => number, ink: string): string {
  switch (kind) {
    case 'bokeh':
      return (
        `<radialGradient id="bokeh"><stop offset="0" stop-color="${ink}" stop-opacity="0.6"/><stop offset="0.7" stop-color="${ink}" stop-opacity="0.3"/><stop offset="1" stop-color="${ink}" stop-opacity="0"/></radialGradient>` +
        Array.from({ length: 16 }, () => circle(w * rnd(), h * rnd(), Math.min(w, h) * (0.04 + 0.08 * rnd()), 'url(#bokeh)')).join('')
      );
    case 'geometric':
      return Array.from({ length: 10 }, (_, i) => {
        const x = w * rnd();
        const y = h * rnd();
        const s = Math.min(w, h) * (0.06 + 0.1 * rnd());
        return i % 2
          ? `<rect x="${x.toFixed(0)}" y="${y.toFixed(0)}" width="${s.toFixed(0)}" height="${s.toFixed(0)}" fill="none" stroke="${ink}" stroke-opacity="0.75" stroke-width="${Math.max(3, Math.round(Math.min(w, h) * 0.008))}" transform="rotate(${(rnd() * 90).toFixed(0)} ${x.toFixed(0)} ${y.toFixed(0)})"/>`
          : `<polygon points="${x.toFixed(0)},${(y - s).toFixed(0)} ${(x + s).toFixed(0)},${(y + s).toFixed(0)} ${(x - s).toFixed(0)},${(y + s).toFixed(0)}" fill="none" stroke="${ink}" stroke-opacity="0.75" stroke-width="${Math.max(3, Math.round(Math.min(w, h) * 0.008))}"/>`;
      }).join('');
    case 'halftone':
      return `<rect width="${w}" height="${h}" fill="url(#dots)"/>`;
    case 'grain':
      return ''; // a tiled noise layer (grainTile), not SVG: librsvg's turbulence is slow at this size
    case 'light_leaks':
      return `<rect width="${w}" height="${h}" fill="url(#leakA)"/><rect width="${w}" height="${h}" fill="url(#leakB)"/>`;
    case 'scanlines':
      return `<rect width="${w}" height="${h}" fill="url(#lines)"/>`;
  }
}

const DEFS = `<defs>
<pattern id="dots" width="18" height="18" patternUnits="userSpaceOnUse"><circle cx="9" cy="9" r="4" fill="#000000" fill-opacity="0.35"/></pattern>
<pattern id="lines" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="3" fill="#000000" fill-opacity="0.45"/></pattern>
<radialGradient id="leakA" cx="0" cy="0" r="0.8"><stop offset="0" stop-color="#FF7A1A" stop-opacity="0.75"/><stop offset="1" stop-color="#FF7A1A" stop-opacity="0"/></radialGradient>
<radialGradient id="leakB" cx="1" cy="1" r="0.7"><stop offset="0" stop-color="#FF2D55" stop-opacity="0.6"/><stop offset="1" stop-color="#FF2D55" stop-opacity="0"/></radialGradient>
<radialGradient id="vignette" cx="0.5" cy="0.5" r="0.75"><stop offset="0.55" stop-color="#000000" stop-opacity="0"/><stop offset="1" stop-color="#000000" stop-opacity="0.8"/></radialGradient>
</defs>`;

const svg = (w: number, h: number, body: string) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${DEFS}${body}</svg>`);

const escXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Applies one grade to raw RGB pixels; returns raw RGB pixels of the same size. */
async function grade(raw: Buffer, w: number, h: number, g: FluxStyle): Promise<Buffer> {
  const img = sharp(raw, { raw: { width: w, height: h, channels: 3 } });
  switch (g) {
    case 'warm':
      return img
        .recomb([
          [1.12, 0.08, 0],
          [0.02, 1.0, 0],
          [0, 0, 0.78],
        ])
        .raw()
        .toBuffer();
    case 'cool':
      return img
        .recomb([
          [0.8, 0, 0.05],
          [0, 0.98, 0.06],
          [0, 0.1, 1.15],
        ])
        .raw()
        .toBuffer();
    case 'high_contrast':
      return img
        .linear(1.45, -0.45 * 128)
        .raw()
        .toBuffer();
    case 'muted':
      return img.modulate({ saturation: 0.35 }).raw().toBuffer();
    case 'black_and_white':
      return img
        .recomb([
          [0.299, 0.587, 0.114],
          [0.299, 0.587, 0.114],
          [0.299, 0.587, 0.114],
        ])
        .raw()
        .toBuffer();
    case 'vignette': {
      const png = await img
        .composite([{ input: svg(w, h, `<rect width="${w}" height="${h}" fill="url(#vignette)"/>`) }])
        .png({ compressionLevel: 0 })
        .toBuffer();
      return sharp(png).removeAlpha().raw().toBuffer();
    }
  }
}

/** A 256×256 tile of grey film grain (seeded), translucent. */
let grainTile: Promise<Buffer> | undefined;
function grain(): Promise<Buffer> {
  grainTile ??= (() => {
    const rnd = rng('grain');
    const px = Buffer.alloc(256 * 256 * 4);
    for (let i = 0; i < 256 * 256; i++) {
      const v = Math.round(rnd() * 255);
      px[i * 4] = px[i * 4 + 1] = px[i * 4 + 2] = v;
      px[i * 4 + 3] = 60;
    }
    return sharp(px, { raw: { width: 256, height: 256, channels: 4 } })
      .png()
      .toBuffer();
  })();
  return grainTile;
}

/** Text as a transparent PNG (pango with the given face). */
async function text(
  value: string,
  face: FontFace,
  px: number,
  color: string,
  maxWidth: number,
): Promise<{ input: Buffer; width: number; height: number }> {
  const t = sharp({
    text: {
      text: `<span foreground="${color}">${escXml(value)}</span>`,
      fontfile: face.file,
      font: `${face.family} ${px}px`,
      rgba: true,
      width: maxWidth,
      dpi: 72,
    },
  });
  const { data, info } = await t.png().toBuffer({ resolveWithObject: true });
  return { input: data, width: info.width, height: info.height };
}

type Box = { x: number; y: number; w: number; h: number };

/** A scene's title as set: its number ("03" of "03 · Real fizz") and its words; a long text is shortened to a phrase of it. */
export function sceneHeading(text: string | undefined): { number?: string; words: string } | undefined {
  const t = (text ?? '').replace(/\s+/g, ' ').trim();
  if (!/[\p{L}\p{N}]/u.test(t)) return undefined;
  const m = /^(\d{1,2}) · (.+)$/u.exec(t);
  const body = m ? m[2] : t;
  const words = body.split(' ').length > 7 ? sceneTitle(body) : body;
  return m ? { number: m[1], words } : { words };
}

/**
 * Where a scene's type goes: inside the part of the still every pan shows (the timeline draws a
 * panning still PAN_SCALE larger and crops it, up to 1 − 1/PAN_SCALE of a side), clear of the
 * 9:16 feed's UI zones and above the caption band, with 4 % margins to spare.
 */
export function typeZone(w: number, h: number): Box {
  const x = Math.round(w * 0.15);
  // Below the brand's chip (and the UI zone) wherever the pan takes it, above the captions.
  return h > w
    ? { x, y: Math.round(h * 0.285), w: w - 2 * x, h: Math.round(h * 0.215) }
    : { x, y: Math.round(h * 0.25), w: w - 2 * x, h: Math.round(h * 0.4) };
}

/** The compositions scenes take in turn (consecutive scenes never share one). */
const COMPOSITIONS = ['stack', 'band', 'wedge', 'numeral', 'frame'] as const;
type Composition = (typeof COMPOSITIONS)[number];

export function compositionOf(seed: string, index: number): Composition {
  const offset = Math.floor(rng(`composition:${seed}`)() * COMPOSITIONS.length);
  return COMPOSITIONS[(index + offset) % COMPOSITIONS.length];
}

/** The composition's shapes (SVG) around the type zone, in the brand's or the style's colours. */
function shapes(c: Composition, w: number, h: number, z: Box, fill: string, line: string): string {
  const pad = Math.round(Math.min(w, h) * 0.05);
  switch (c) {
    case 'band':
      return `<rect x="0" y="${z.y - pad}" width="${w}" height="${z.h + 2 * pad}" fill="${fill}"/>`;
    case 'wedge':
      // A slanted edge above the type, the fill colour from there down.
      return `<polygon points="0,${z.y - 2 * pad} ${w},${z.y - pad / 2} ${w},${h} 0,${h}" fill="${fill}"/>`;
    case 'frame': {
      const sw = Math.max(3, Math.round(Math.min(w, h) * 0.014));
      return `<rect x="${z.x - pad}" y="${z.y - pad}" width="${z.w + 2 * pad}" height="${z.h + 2 * pad}" fill="none" stroke="${line}" stroke-width="${sw}"/>`;
    }
    case 'stack':
      // Its bar is drawn with the type (stackBar), in a colour unlike the type's.
      return '';
    default:
      // numeral: the lower part of the frame in the fill colour, under the type.
      return `<rect x="0" y="${z.y + z.h + pad}" width="${w}" height="${h - z.y - z.h - pad}" fill="${fill}"/>`;
  }
}

/**
 * The stack composition's bar beside the type: in the colour of the scene's that is least like the
 * type's (the composition's line and fill, the style's accents), so it reads as a rule, not as a
 * letter of the words.
 */
function stackBar(s: SceneInput, def: StyleDef, ink: string, accent: string): OverlayOptions {
  const { width: w, height: h } = s;
  const z = typeZone(w, h);
  const pad = Math.round(Math.min(w, h) * 0.05);
  const bw = Math.max(4, Math.round(Math.min(w, h) * 0.02));
  const { fill, line } = compositionColours(s, def);
  const apart = (c: string) => {
    const [r, g, b] = hexToRgb(c);
    return Math.min(...[ink, accent].map(hexToRgb).map(([R, G, B]) => Math.hypot(r - R, g - G, b - B)));
  };
  const colour = [line, fill, def.numeral, ...def.accents].reduce((a, b) => (apart(b) > apart(a) ? b : a));
  return { input: svg(bw, z.h, `<rect width="${bw}" height="${z.h}" fill="${colour}"/>`), left: z.x - pad, top: z.y };
}

/** The luminances of the pixels of `box` in raw RGB pixels (every 3rd pixel each way). */
function luminances(raw: Buffer, w: number, box: Box): number[] {
  const out: number[] = [];
  for (let y = box.y; y < box.y + box.h; y += 3)
    for (let x = box.x; x < box.x + box.w; x += 3) {
      const i = (y * w + x) * 3;
      out.push(relativeLuminance(raw[i], raw[i + 1], raw[i + 2]));
    }
  return out;
}

/** The contrast ratio a colour keeps against 98 % of the given pixels. */
function worstContrast(hex: string, lums: number[]): number {
  const [r, g, b] = hexToRgb(hex);
  const l = relativeLuminance(r, g, b);
  const ratios = lums.map((p) => contrastRatio(l, p)).sort((a, b) => a - b);
  return ratios[Math.floor(ratios.length * 0.02)] ?? 21;
}

/** The type's colour: the first candidate readable (≥ 4.5:1) on the pixels behind it, else white on a dark scrim. */
function typeColours(candidates: string[], lums: number[]): { ink: string; accent: string; scrim: boolean } {
  const readable = candidates.filter((c) => worstContrast(c, lums) >= 4.5);
  if (!readable.length) return { ink: '#FFFFFF', accent: '#FFFFFF', scrim: true };
  return { ink: readable[0], accent: readable.find((c) => c.toLowerCase() !== readable[0].toLowerCase()) ?? readable[0], scrim: false };
}

/** Text fitted into a box (pango picks the largest size that fits), as a transparent PNG. */
async function fittedText(markup: string, face: FontFace, box: { w: number; h: number }, align: 'left' | 'centre') {
  const { data, info } = await sharp({
    text: { text: markup, fontfile: face.file, font: face.family, width: box.w, height: box.h, rgba: true, align, wrap: 'word' },
  })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { input: data, width: info.width, height: info.height };
}

/** A text element placed on a still: its words, box in pixels and fill colours (#rrggbb, main first). */

/** The stack composition's lines: one word each up to three, two lines of two for four, else three, the words shared out evenly in their order. */
function stackLines(words: string): string[] {
  const w = words.split(' ');
  const lines = w.length <= 3 ? w.length : w.length === 4 ? 2 : 3;
  return Array.from({ length: lines }, (_, i) =>
    w.slice(Math.round((i * w.length) / lines), Math.round(((i + 1) * w.length) / lines)).join(' '),
  );
}

/** How much of the type zone each composition's type takes (width, height): the type scale changes from scene to scene. */
const TYPE_SCALE: Record<Composition, [number, number]> = {
  stack: [1, 1],
  band: [1, 0.7],
  wedge: [0.86, 0.8],
  numeral: [1, 1],
  frame: [0.88, 0.8],
};

/** The scene's title set in the type zone in the given colours: the fitted text, where it goes and its words. */
async function setType(s: SceneInput, def: StyleDef, c: Composition, ink: string, accent: string) {
  const heading = sceneHeading(s.text);
  if (!heading) return undefined;
  const z = typeZone(s.width, s.height);
  const caps = (x: string) => (def.caps ? x.toLocaleUpperCase() : x);
  const words = caps(heading.words);
  // A list item's number, set above its words in the accent (a scene that is no list item has none).
  const numeral = heading.number;
  const body =
    c === 'stack'
      ? stackLines(words)
          .map((x, i) => `<span foreground="${i % 2 ? accent : ink}">${escXml(x)}</span>`)
          .join('\n')
      : `<span foreground="${ink}">${escXml(words)}</span>`;
  // The number is set larger than the words (pango's size is relative to the fitted size).
  const markup = numeral ? `<span foreground="${accent}" size="x-large">${numeral}</span>\n${body}` : body;
  const [sw, sh] = TYPE_SCALE[c];
  const box = { w: Math.round(z.w * sw), h: Math.round(z.h * sh) };
  const align = c === 'stack' || c === 'wedge' ? 'left' : 'centre';
  const t = await fittedText(markup, def.font, box, align);
  const left = align === 'left' ? z.x : z.x + Math.round((z.w - t.width) / 2);
  const top = z.y + Math.round((z.h - t.height) / 2);
  const text = numeral ? `${numeral} ${words}` : words;
  return { t, left, top, text, numbered: numeral !== undefined };
}

/** The colours the type is set in: white on a scrim over the customer's picture, else the first of the style's readable on the pixels behind it. */
function inkOf(s: SceneInput, def: StyleDef, raw: Buffer): { ink: string; accent: string; scrim: boolean } {
  const { width: w, height: h } = s;
  return s.reference
    ? { ink: '#FFFFFF', accent: '#FFFFFF', scrim: true }
    : typeColours([def.ink, def.numeral, ...def.accents, '#FFFFFF', '#000000'], luminances(raw, w, typeZone(w, h)));
}

/** The fill colours of the set type (main first): the accent only where the composition uses it. */
function typeFills(c: Composition, ink: string, accent: string, numbered: boolean): Pick<SceneText, 'color' | 'colors'> {
  const two = (c === 'stack' || numbered) && accent.toLowerCase() !== ink.toLowerCase();
  return { color: ink.toUpperCase(), ...(two ? { colors: [accent.toUpperCase()] } : {}) };
}

/** The texts a scene still has (its big type, where it is on the still, its colours: the background is drawn to choose them, the type is not). */
export async function sceneTexts(s: SceneInput): Promise<SceneText[]> {
  if (s.photo || !sceneHeading(s.text)) return [];
  const def = STYLES[s.style];
  const c = compositionOf(s.seed, s.index);
  const raw = s.reference ? undefined : await gradedBase(s, def, c);
  const { ink, accent } = raw ? inkOf(s, def, raw) : { ink: '#FFFFFF', accent: '#FFFFFF' };
  const set = await setType(s, def, c, ink, accent);
  return set
    ? [
        {
          text: set.text,
          box: { x: set.left, y: set.top, w: set.t.width, h: set.t.height },
          role: 'scene',
          ...typeFills(c, ink, accent, set.numbered),
        },
      ]
    : [];
}

/** The scene's big type over raw RGB pixels: in a readable colour (on a scrim when none is). */
async function bigType(
  s: SceneInput,
  def: StyleDef,
  raw: Buffer,
  c: Composition,
): Promise<{ layers: OverlayOptions[]; texts: SceneText[] }> {
  const { width: w, height: h } = s;
  // Over the customer's picture the type sits on a scrim, as a caption card, not across the product.
  const { ink, accent, scrim } = inkOf(s, def, raw);
  const set = await setType(s, def, c, ink, accent);
  if (!set) return { layers: [], texts: [] };
  const { t, left, top } = set;
  const layers: OverlayOptions[] = c === 'stack' ? [stackBar(s, def, ink, accent)] : [];
  if (scrim) {
    const pad = Math.round(Math.min(w, h) * 0.03);
    const sw = t.width + 2 * pad;
    const sh = t.height + 2 * pad;
    layers.push({
      input: svg(sw, sh, `<rect width="${sw}" height="${sh}" rx="${pad}" fill="#000" fill-opacity="0.78"/>`),
      left: left - pad,
      top: top - pad,
    });
  }
  layers.push({ input: t.input, left, top });
  return {
    layers,
    texts: [
      { text: set.text, box: { x: left, y: top, w: t.width, h: t.height }, role: 'scene', ...typeFills(c, ink, accent, set.numbered) },
    ],
  };
}

/** One scene still as JPEG (the timeline's image input; JPEG decodes fastest for every frame). */
/** The scene's still alone (JPEG bytes). */
export async function renderScene(s: SceneInput): Promise<Buffer> {
  return (await composeScene(s)).jpeg;
}

/**
 * One scene still and the texts on it: the background (the photo, the reference, or the style's
 * drawing in the scene's composition), graded, then the scene's big type and, unless plain, the
 * caption scrim and the brand.
 */
export async function composeScene(s: SceneInput): Promise<{ jpeg: Buffer; texts: SceneText[] }> {
  const { width: w, height: h } = s;
  const def = STYLES[s.style];
  const c = compositionOf(s.seed, s.index);
  const raw = s.photo
    ? await pictureBase(s, s.photo)
    : s.reference
      ? await referenceBase(s, def, c, s.reference)
      : await gradedBase(s, def, c);
  // A stock photo or a model's picture is the scene's image: no big type over it.
  const type = s.photo ? { layers: [], texts: [] } : await bigType(s, def, raw, c);
  const top: OverlayOptions[] = [...type.layers];
  const texts = [...type.texts];
  if (!s.plain) {
    const brand = await brandLayers(s, def, h > w);
    top.unshift(...fixedLayers(s), captionScrim(s));
    top.push(...brand.layers);
    texts.push(...brand.texts);
  }
  const jpeg = await sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .composite(top)
    .jpeg({ quality: 88, chromaSubsampling: '4:2:0' })
    .toBuffer();
  return { jpeg, texts };
}

/** A photo (stock photo, model picture or the customer's reference) cover-cropped to the frame and graded; raw RGB pixels. */
async function pictureBase(s: SceneInput, photo: Buffer): Promise<Buffer> {
  const { width: w, height: h } = s;
  let raw: Buffer = await sharp(photo, { limitInputPixels: s.maxInputPixels ?? 40_000_000 })
    .rotate()
    .resize(w, h, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer();
  for (const g of s.fluxStyles) raw = await grade(raw, w, h, g);
  return raw;
}

/** The colours of a scene's composition: its fill (the brand's colours, else the style's accents, in turn) and line. */
function compositionColours(s: SceneInput, def: StyleDef): { fill: string; line: string } {
  const brand = s.brand?.colors ?? [];
  return { fill: brand[s.index % Math.max(1, brand.length)] ?? def.accents[s.index % def.accents.length], line: brand[1] ?? def.numeral };
}

/**
 * The customer's reference image behind the type: cover-cropped, closer in and to another side
 * from scene to scene (so one reference still makes scenes that differ), the composition's line
 * shapes over it, then the grades; raw RGB pixels.
 */
async function referenceBase(s: SceneInput, def: StyleDef, c: Composition, reference: Buffer): Promise<Buffer> {
  const { width: w, height: h } = s;
  const zoom = [1, 1.35, 1.2][s.index % 3];
  const [px, py] = [
    [0.5, 0.5],
    [0.15, 0.25],
    [0.85, 0.75],
  ][s.index % 3];
  const [zw, zh] = [Math.round(w * zoom), Math.round(h * zoom)];
  const photo = await sharp(reference, { limitInputPixels: s.maxInputPixels ?? 40_000_000 })
    .rotate()
    .resize(zw, zh, { fit: 'cover' })
    .extract({ left: Math.round((zw - w) * px), top: Math.round((zh - h) * py), width: w, height: h })
    .removeAlpha()
    .png({ compressionLevel: 0 })
    .toBuffer();
  const { fill, line } = compositionColours(s, def);
  let raw: Buffer = await sharp(photo)
    // Only the line shapes (frame, bar): a filled band or block would hide the customer's picture.
    .composite([{ input: svg(w, h, c === 'frame' || c === 'stack' ? shapes(c, w, h, typeZone(w, h), fill, line) : '') }])
    .removeAlpha()
    .raw()
    .toBuffer();
  for (const g of s.fluxStyles) raw = await grade(raw, w, h, g);
  return raw;
}

/** The style's background in the scene's composition, the motifs, then the grades; raw RGB pixels. */
async function gradedBase(s: SceneInput, def: StyleDef, c: Composition): Promise<Buffer> {
  const { width: w, height: h } = s;
  const rnd = rng(`${s.seed}:${s.index}`);
  const { fill, line } = compositionColours(s, def);
  // The gradient turns with the scene: top→bottom, diagonal, bottom→top, the other diagonal.
  const dirs = ['x1="0" y1="0" x2="0" y2="1"', 'x1="0" y1="0" x2="1" y2="1"', 'x1="0" y1="1" x2="0" y2="0"', 'x1="1" y1="0" x2="0" y2="1"'];
  const background = svg(
    w,
    h,
    `<linearGradient id="bg" ${dirs[s.index % dirs.length]}><stop offset="0" stop-color="${def.gradient[0]}"/><stop offset="1" stop-color="${def.gradient[1]}"/></linearGradient>` +
      `<rect width="${w}" height="${h}" fill="url(#bg)"/>${def.decorate(w, h, rnd, def.accents)}${shapes(c, w, h, typeZone(w, h), fill, line)}`,
  );
  const layers: OverlayOptions[] = [];
  if (s.aiStyles.length) layers.push({ input: svg(w, h, s.aiStyles.map((m) => motif(m, w, h, rnd, def.ink)).join('')), left: 0, top: 0 });
  if (s.aiStyles.includes('grain')) layers.push({ input: await grain(), tile: true, left: 0, top: 0 });
  const flat = await sharp(background).composite(layers).png({ compressionLevel: 0 }).toBuffer();
  let raw: Buffer = await sharp(flat).removeAlpha().raw().toBuffer();
  for (const g of s.fluxStyles) raw = await grade(raw, w, h, g);
  return raw;
}

/** The caption scrim and the brand on a transparent PNG: what a still has over its picture, laid over a clip. */
export async function renderOverlay(s: OverlayInput): Promise<Buffer> {
  const { width: w, height: h } = s;
  return sharp({ create: { width: w, height: h, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([...fixedLayers(s), captionScrim(s), ...(await brandLayers(s, STYLES[s.style], h > w)).layers])
    .png()
    .toBuffer();
}

/** The texts of the overlay (the brand's name) and where they are. */
export async function overlayTexts(s: OverlayInput): Promise<SceneText[]> {
  return (await brandLayers(s, STYLES[s.style], s.height > s.width)).texts;
}

/** The style's lines fixed over the video (the vintage frame), as a layer; none for most styles. */
function fixedLayers(s: OverlayInput): OverlayOptions[] {
  const def = STYLES[s.style];
  return def.fixed ? [{ input: svg(s.width, s.height, def.fixed(s.width, s.height, def.accents)), left: 0, top: 0 }] : [];
}

/** A dark gradient from just above the caption band down, for legible captions. */
function captionScrim(s: OverlayInput): OverlayOptions {
  const { width: w, height: h } = s;
  const scrimTop = Math.max(0, Math.round(h * (s.captionTop - 0.06)));
  return {
    input: svg(
      w,
      h,
      `<linearGradient id="scrim" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#000" stop-opacity="0"/><stop offset="0.25" stop-color="#000" stop-opacity="0.55"/><stop offset="1" stop-color="#000" stop-opacity="0.7"/></linearGradient>` +
        `<rect x="0" y="${scrimTop}" width="${w}" height="${h - scrimTop}" fill="url(#scrim)"/>`,
    ),
    left: 0,
    top: 0,
  };
}

/** The most readable of the candidates on `bg` (white or black always reach 4.5:1). */
function readableOn(bg: string, candidates: string[]): string {
  const [r, g, b] = hexToRgb(bg);
  const lum = [relativeLuminance(r, g, b)];
  return [...candidates, '#FFFFFF', '#000000'].find((c) => worstContrast(c, lum) >= 4.5) ?? '#FFFFFF';
}

/**
 * The brand: a band in its colours, and under it (clear of the 9:16 feed's top UI zone, 6 % in
 * from the sides) its name on a chip of its first colour and its logo on the right.
 */
async function brandLayers(s: OverlayInput, def: StyleDef, portrait: boolean): Promise<{ layers: OverlayOptions[]; texts: SceneText[] }> {
  const { width: w, height: h } = s;
  const layers: OverlayOptions[] = [];
  const texts: SceneText[] = [];
  const band = Math.round(h * 0.035);
  const bandY = portrait ? Math.round(h * 0.09) : Math.round(h * 0.02);
  const belowBand = Math.max(portrait ? Math.round(h * 0.145) : 0, bandY + band + Math.round(band / 3) + Math.round(h * 0.01));
  const side = Math.round(w * 0.06);
  if (s.brand?.colors.length) {
    const [c1, c2] = [s.brand.colors[0], s.brand.colors[1] ?? s.brand.colors[0]];
    layers.push({
      input: svg(
        w,
        h,
        `<rect x="0" y="${bandY}" width="${w}" height="${band}" fill="${c1}"/><rect x="0" y="${bandY + band}" width="${w}" height="${Math.round(band / 3)}" fill="${c2}"/>`,
      ),
      left: 0,
      top: 0,
    });
  }
  let logoWidth = 0;
  if (s.brand?.logo) {
    const box = Math.round(Math.min(w, h) * 0.14);
    const logo = await sharp(s.brand.logo, { limitInputPixels: 40_000_000 })
      .rotate()
      .resize(box, box, { fit: 'inside' })
      .png()
      .toBuffer({ resolveWithObject: true });
    logoWidth = logo.info.width + Math.round(w * 0.03);
    layers.push({ input: logo.data, left: w - side - logo.info.width, top: Math.min(h - logo.info.height, belowBand) });
  }
  if (s.brand?.name) {
    const chip = s.brand.colors[0] ?? '#111111';
    const pad = Math.round(Math.min(w, h) * 0.015);
    const maxWidth = w - 2 * side - logoWidth - 2 * pad;
    const name = await text(
      s.brand.name.slice(0, 40),
      def.label,
      Math.round(Math.min(w, h) * 0.045),
      readableOn(chip, s.brand.colors.slice(1)),
      maxWidth,
    );
    const cw = Math.min(name.width, maxWidth) + 2 * pad;
    const ch = name.height + 2 * pad;
    layers.push({ input: svg(cw, ch, `<rect width="${cw}" height="${ch}" rx="${pad}" fill="${chip}"/>`), left: side, top: belowBand });
    layers.push({ input: name.input, left: side + pad, top: belowBand + pad });
    texts.push({
      text: s.brand.name.slice(0, 40),
      box: { x: side + pad, y: belowBand + pad, w: name.width, h: name.height },
      role: 'brand',
    });
  }
  return { layers, texts };
}

/** The scene engine: the still drawn on this machine. */
export const localScenes: SceneEngine = { name: 'local', renderScene: composeScene, renderOverlay };
