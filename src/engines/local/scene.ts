// The scene renderer of faceless videos (sharp/libvips, SVG drawn by librsvg): one still per
// beat at the video's full size, which the timeline renderer then moves with a slow pan.
//
//   1. the background of the image style (palette, gradient, shapes: see STYLES);
//   2. the beat's reference image, if any, cover-fitted into a rounded card;
//   3. the texture motifs (selected_ai_styles) over everything so far;
//   4. the grades (selected_flux_dev_styles), in order, over everything so far;
//   5. on top, ungraded: a dark scrim under the caption band, the brand kit's colour band and its
//      name in the style's typeface, and the scene number.
// A scene given a photo (a stock photo) has the photo, cover-cropped to the frame, in place of
// steps 1–3, then the grades, the scrim and the brand (no scene number). A `plain` scene has no
// scrim and no brand: renderOverlay draws those alone on a transparent picture, which the
// timeline lays over the clips of a faceless video (and their plain stills).
//
// Same input, same pixels: every "random" position comes from a seeded generator.
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp, { type OverlayOptions } from 'sharp';
import type { AiStyle, FluxStyle, ImageStyle, OverlayInput, SceneEngine, SceneInput } from '../image/types.ts';
import { FONT_BOLD } from './font.ts';
import { rng } from './layout.ts';

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const SERIF_BOLD = path.join(FONT_DIR, 'DejaVuSerif-Bold.ttf');
const SANS_LIGHT = path.join(FONT_DIR, 'DejaVuSans-ExtraLight.ttf');

interface StyleDef {
  /** Gradient stops, top to bottom. */
  gradient: [string, string];
  /** Shape colours of the style's decoration. */
  accents: string[];
  /** Typeface of the scene number and brand name. */
  font: string;
  numeral: string;
  /** The style's decoration (SVG elements), given the frame and a seeded random source. */
  decorate(w: number, h: number, rnd: () => number, accents: string[]): string;
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
    font: FONT_BOLD,
    numeral: '#F2B56B',
    decorate: (w, h, rnd, a) =>
      // A low sun and letterbox bars.
      `${circle(w * (0.3 + 0.4 * rnd()), h * 0.62, Math.min(w, h) * 0.22, a[0], 0.35)}` +
      `<rect x="0" y="0" width="${w}" height="${(h * 0.07).toFixed(0)}" fill="#000"/><rect x="0" y="${(h * 0.93).toFixed(0)}" width="${w}" height="${(h * 0.07).toFixed(0)}" fill="#000"/>`,
    ink: '#FFFFFF',
    card: { stroke: '#000000', width: 0, radius: 8 },
  },
  watercolor: {
    gradient: ['#F4EDE1', '#E9DFCC'],
    accents: ['#9CC5D9', '#E8A6A1', '#B8D8B0', '#F3D27A'],
    font: SERIF_BOLD,
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
    font: FONT_BOLD,
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
    font: SANS_LIGHT,
    numeral: '#222222',
    decorate: (w, h, _rnd, a) =>
      `<line x1="${(w * 0.08).toFixed(0)}" y1="${(h * 0.12).toFixed(0)}" x2="${(w * 0.92).toFixed(0)}" y2="${(h * 0.12).toFixed(0)}" stroke="${a[0]}" stroke-width="3"/>` +
      `<rect x="${(w * 0.08).toFixed(0)}" y="${(h * 0.16).toFixed(0)}" width="${(w * 0.84).toFixed(0)}" height="${(h * 0.45).toFixed(0)}" fill="${a[1]}"/>`,
    ink: '#1F3A5F',
    card: { stroke: '#222222', width: 2, radius: 0 },
  },
  neon: {
    gradient: ['#0A0612', '#160A24'],
    accents: ['#FF2BD6', '#19F0FF'],
    font: FONT_BOLD,
    numeral: '#19F0FF',
    decorate: (w, h, rnd, a) =>
      Array.from({ length: 6 }, (_, i) => {
        const y = h * (0.1 + 0.8 * rnd());
        const c = a[i % 2];
        return `<line x1="0" y1="${y.toFixed(0)}" x2="${w}" y2="${(y + h * (rnd() - 0.5) * 0.3).toFixed(0)}" stroke="${c}" stroke-width="22" stroke-opacity="0.25"/><line x1="0" y1="${y.toFixed(0)}" x2="${w}" y2="${(y + h * (rnd() - 0.5) * 0.3).toFixed(0)}" stroke="${c}" stroke-width="6"/>`;
      }).join(''),
    ink: '#FFFFFF',
    card: { stroke: '#FF2BD6', width: 10, radius: 24 },
  },
  vintage: {
    gradient: ['#D9C29A', '#8A6A3F'],
    accents: ['#5C4326', '#EFE0C0'],
    font: SERIF_BOLD,
    numeral: '#3E2C17',
    decorate: (w, h, _rnd, a) =>
      `<rect x="${(w * 0.04).toFixed(0)}" y="${(h * 0.03).toFixed(0)}" width="${(w * 0.92).toFixed(0)}" height="${(h * 0.94).toFixed(0)}" fill="none" stroke="${a[0]}" stroke-width="10"/>` +
      `<rect x="${(w * 0.06).toFixed(0)}" y="${(h * 0.045).toFixed(0)}" width="${(w * 0.88).toFixed(0)}" height="${(h * 0.91).toFixed(0)}" fill="none" stroke="${a[0]}" stroke-width="3"/>`,
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

/** Text as a transparent PNG (pango with the given font file). */
async function text(
  value: string,
  fontfile: string,
  px: number,
  color: string,
  maxWidth: number,
): Promise<{ input: Buffer; width: number; height: number }> {
  const family = fontfile === SERIF_BOLD ? 'DejaVu Serif Bold' : fontfile === SANS_LIGHT ? 'DejaVu Sans ExtraLight' : 'DejaVu Sans Bold';
  const t = sharp({
    text: {
      text: `<span foreground="${color}">${escXml(value)}</span>`,
      fontfile,
      font: `${family} ${px}px`,
      rgba: true,
      width: maxWidth,
      dpi: 72,
    },
  });
  const { data, info } = await t.png().toBuffer({ resolveWithObject: true });
  return { input: data, width: info.width, height: info.height };
}

type Box = { x: number; y: number; w: number; h: number };

/** One scene still as JPEG (the timeline's image input; JPEG decodes fastest for every frame). */
export async function renderScene(s: SceneInput): Promise<Buffer> {
  if (s.photo) return photoScene(s, s.photo);
  const { width: w, height: h } = s;
  const def = STYLES[s.style];
  const portrait = h > w;
  const card = portrait
    ? { x: Math.round(w * 0.1), y: Math.round(h * 0.15), w: Math.round(w * 0.8), h: Math.round(h * 0.45) }
    : { x: Math.round(w * 0.3), y: Math.round(h * 0.12), w: Math.round(w * 0.4), h: Math.round(h * 0.52) };
  const raw = await gradedBase(s, def, card);
  // 5. Scrim, brand and number (ungraded: brand colours stay exact).
  const top: OverlayOptions[] = s.plain ? [] : [captionScrim(s), ...(await brandLayers(s, def, portrait))];
  const numeral = await text(
    String(s.index + 1).padStart(2, '0'),
    def.font,
    Math.round(Math.min(w, h) * 0.09),
    def.numeral,
    Math.round(w * 0.3),
  );
  const ny = portrait ? card.y + card.h + Math.round(h * 0.015) : card.y;
  top.push({ input: numeral.input, left: Math.round(portrait ? w * 0.1 : w * 0.08), top: Math.min(h - numeral.height, ny) });

  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .composite(top)
    .jpeg({ quality: 88, chromaSubsampling: '4:2:0' })
    .toBuffer();
}

/** A scene over a photo: the photo cover-cropped to the frame and graded, then the scrim and brand. */
async function photoScene(s: SceneInput, photo: Buffer): Promise<Buffer> {
  const { width: w, height: h } = s;
  let raw: Buffer = await sharp(photo, { limitInputPixels: s.maxInputPixels ?? 40_000_000 })
    .rotate()
    .resize(w, h, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer();
  for (const g of s.fluxStyles) raw = await grade(raw, w, h, g);
  const top: OverlayOptions[] = s.plain ? [] : [captionScrim(s), ...(await brandLayers(s, STYLES[s.style], h > w))];
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .composite(top)
    .jpeg({ quality: 88, chromaSubsampling: '4:2:0' })
    .toBuffer();
}

/** Steps 1–4: the style's background, the reference card, the motifs, then the grades; raw RGB pixels. */
async function gradedBase(s: SceneInput, def: StyleDef, card: Box): Promise<Buffer> {
  const { width: w, height: h } = s;
  const rnd = rng(`${s.seed}:${s.index}`);
  const layers = s.reference ? await referenceCard(s, s.reference, def, card) : [];
  const background = svg(
    w,
    h,
    `<linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${def.gradient[0]}"/><stop offset="1" stop-color="${def.gradient[1]}"/></linearGradient>` +
      `<rect width="${w}" height="${h}" fill="url(#bg)"/>${def.decorate(w, h, rnd, def.accents)}`,
  );
  // 3. Motifs.
  if (s.aiStyles.length) layers.push({ input: svg(w, h, s.aiStyles.map((m) => motif(m, w, h, rnd, def.ink)).join('')), left: 0, top: 0 });
  if (s.aiStyles.includes('grain')) layers.push({ input: await grain(), tile: true, left: 0, top: 0 });
  const flat = await sharp(background).composite(layers).png({ compressionLevel: 0 }).toBuffer();
  let raw: Buffer = await sharp(flat).removeAlpha().raw().toBuffer();
  // 4. Grades.
  for (const g of s.fluxStyles) raw = await grade(raw, w, h, g);
  return raw;
}

/** The reference image cover-fitted in the card, inside the style's outline. */
async function referenceCard(s: SceneInput, reference: Buffer, def: StyleDef, card: Box): Promise<OverlayOptions[]> {
  const b = def.card.width;
  const inner = { w: card.w - 2 * b, h: card.h - 2 * b };
  const photo = await sharp(reference, { limitInputPixels: 40_000_000 })
    .rotate()
    .resize(inner.w, inner.h, { fit: 'cover' })
    .removeAlpha()
    .png()
    .toBuffer();
  const layers: OverlayOptions[] = [];
  if (b > 0)
    layers.push({
      input: svg(
        s.width,
        s.height,
        `<rect x="${card.x}" y="${card.y}" width="${card.w}" height="${card.h}" rx="${def.card.radius}" fill="${def.card.stroke}"/>`,
      ),
      left: 0,
      top: 0,
    });
  layers.push({ input: photo, left: card.x + b, top: card.y + b });
  return layers;
}

/** The caption scrim and the brand on a transparent PNG: what a still has over its picture, laid over a clip. */
export async function renderOverlay(s: OverlayInput): Promise<Buffer> {
  const { width: w, height: h } = s;
  return sharp({ create: { width: w, height: h, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([captionScrim(s), ...(await brandLayers(s, STYLES[s.style], h > w))])
    .png()
    .toBuffer();
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

/** The brand: a band in its colours, its name under the band on the left and its logo on the right. */
async function brandLayers(s: OverlayInput, def: StyleDef, portrait: boolean): Promise<OverlayOptions[]> {
  const { width: w, height: h } = s;
  const layers: OverlayOptions[] = [];
  const band = Math.round(h * 0.035);
  const bandY = portrait ? Math.round(h * 0.09) : Math.round(h * 0.02);
  const belowBand = bandY + band + Math.round(band / 3) + Math.round(h * 0.01);
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
  if (s.brand?.name) {
    const name = await text(
      s.brand.name.slice(0, 40),
      def.font,
      Math.round(Math.min(w, h) * 0.045),
      s.brand.colors[1] ?? s.brand.colors[0] ?? '#FFFFFF',
      Math.round(w * 0.6),
    );
    layers.push({ input: name.input, left: Math.round(w * 0.06), top: Math.min(h - name.height, belowBand) });
  }
  if (s.brand?.logo) {
    const box = Math.round(Math.min(w, h) * 0.14);
    const logo = await sharp(s.brand.logo, { limitInputPixels: 40_000_000 })
      .rotate()
      .resize(box, box, { fit: 'inside' })
      .png()
      .toBuffer({ resolveWithObject: true });
    layers.push({ input: logo.data, left: w - Math.round(w * 0.06) - logo.info.width, top: Math.min(h - logo.info.height, belowBand) });
  }
  return layers;
}

/** The scene engine: the still drawn on this machine. */
export const localScenes: SceneEngine = { name: 'local', renderScene, renderOverlay };
