// The slide renderer of slideshows (sharp/libvips): one PNG per slide at the frame's full size,
// with NO text on it (a slideshow's words are editable text items on the editor timeline, or
// absent). What it draws:
//   - the background in the palette's background colour (brand kit, else the reference's
//     palette, else one derived from the prompt), a decoration in its secondary colour and an
//     accent bar; the top-left corner always shows the background colour;
//   - `card` layout: a white card in the lower part holding the slide's product image
//     (cover-fitted), or a drawn stand-in; `full-bleed` layout (photo-dump and storytime
//     references): the product image covers the whole slide under a dark scrim at the top;
//     an image model's picture for the slide (`picture`) takes the product image's place;
//   - the avatar as a round portrait with a white ring, bottom left;
//   - the brand logo contained in a box at the top right;
//   - progress dots at the bottom (the current slide filled in the accent colour).
// The top ~40% stays free of pictures in the card layout: overlay text goes there.
// Same inputs, same pixels.
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { SlideInputError, type SlideEngine, type SlideInput, type SlidePalette } from '../image/types.ts';
import { contrast, hexToRgb, paletteFor, rng, textOn } from './layout.ts';

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface SlideGeometry {
  unit: number;
  margin: number;
  /** Always the background colour. */
  corner: Rect;
  /** Where overlay text goes (nothing but background and decoration in the card layout). */
  textZone: Rect;
  card: Rect;
  /** The product image inside the card (card layout). */
  productSlot: Rect;
  avatar: { cx: number; cy: number; r: number };
  logo: Rect;
  dots: { y: number; r: number; gap: number };
}

const r = Math.round;

export function slideGeometry(width: number, height: number): SlideGeometry {
  const unit = Math.min(width, height);
  const margin = r(unit * 0.06);
  const cardTop = r(height * 0.42);
  const dotsY = height - r(margin * 0.7);
  const card = { x: margin, y: cardTop, w: width - 2 * margin, h: Math.max(2, dotsY - r(margin * 0.9) - cardTop) };
  const inset = r(unit * 0.02);
  const avatarR = r(unit * 0.1);
  return {
    unit,
    margin,
    corner: { x: 0, y: 0, w: r(unit * 0.08), h: r(unit * 0.08) },
    textZone: { x: margin, y: margin, w: width - 2 * margin, h: cardTop - 2 * margin },
    card,
    productSlot: { x: card.x + inset, y: card.y + inset, w: card.w - 2 * inset, h: card.h - 2 * inset },
    avatar: { cx: margin + avatarR, cy: card.y + card.h - avatarR + r(unit * 0.03), r: avatarR },
    logo: { x: width - margin - r(unit * 0.22), y: r(margin * 0.6), w: r(unit * 0.22), h: r(unit * 0.09) },
    dots: { y: dotsY, r: Math.max(3, r(unit * 0.009)), gap: r(unit * 0.035) },
  };
}

/**
 * The palette of a slideshow: the brand kit's colours first (background, then accent), the
 * reference's palette next (background and accent when there is no kit, else the decoration),
 * else one derived from the prompt.
 */
export function slidePalette(opts: { brandColors?: string[]; referenceColors?: string[]; prompt: string }): SlidePalette {
  const brand = (opts.brandColors ?? []).map((c) => c.toLowerCase());
  const ref = (opts.referenceColors ?? []).map((c) => c.toLowerCase());
  const derived = paletteFor({ prompt: opts.prompt, title: '', brandColors: brand.length ? brand : ref.length ? ref : undefined });
  const background = derived.primary;
  let accent = (brand.length ? (brand[1] ?? ref[1]) : ref[1]) ?? derived.accent;
  // An accent that disappears into the background is no accent.
  if (contrast(accent, background) < 1.5) accent = contrast(derived.accent, background) >= 1.5 ? derived.accent : textOn(background);
  const secondary = (brand.length ? (ref[0] ?? brand[2]) : ref[2]) ?? derived.secondary;
  return { background, secondary, accent };
}

/** The main colours of an image (most frequent first, clearly distinct from each other), as #rrggbb. */
export async function imagePalette(bytes: Buffer, maxInputPixels = DEFAULT_PIXEL_LIMITS.maxPixels, count = 3): Promise<string[]> {
  const { data, info } = await sharp(bytes, { limitInputPixels: maxInputPixels })
    .rotate()
    .resize(48, 48, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const buckets = new Map<number, { n: number; r: number; g: number; b: number }>();
  for (let i = 0; i < data.length; i += info.channels) {
    const key = ((data[i] >> 4) << 8) | ((data[i + 1] >> 4) << 4) | (data[i + 2] >> 4);
    const b = buckets.get(key) ?? { n: 0, r: 0, g: 0, b: 0 };
    b.n += 1;
    b.r += data[i];
    b.g += data[i + 1];
    b.b += data[i + 2];
    buckets.set(key, b);
  }
  const ranked = [...buckets.values()].sort((a, b) => b.n - a.n).map((b) => [b.r / b.n, b.g / b.n, b.b / b.n] as const);
  const out: (readonly [number, number, number])[] = [];
  for (const c of ranked) {
    if (out.every((o) => Math.hypot(o[0] - c[0], o[1] - c[1], o[2] - c[2]) > 64)) out.push(c);
    if (out.length === count) break;
  }
  return out.map(([R, G, B]) => `#${[R, G, B].map((v) => r(v).toString(16).padStart(2, '0')).join('')}`);
}

async function decode(bytes: Buffer, input: SlideInputError['input'], maxPixels: number, fn: (img: Sharp) => Sharp): Promise<Buffer> {
  try {
    return await fn(sharp(bytes, { failOn: 'error', limitInputPixels: maxPixels }).rotate())
      .png({ compressionLevel: 0 })
      .toBuffer();
  } catch (err) {
    const over = /exceeds pixel limit/i.test((err as Error).message);
    throw new SlideInputError(
      input,
      over ? `has more than ${maxPixels} pixels (width × height), the most accepted` : `could not be decoded: ${(err as Error).message}`,
    );
  }
}

const svg = (w: number, h: number, body: string) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${body}</svg>`);

function lighten(hex: string, amount: number): string {
  const [R, G, B] = hexToRgb(hex);
  return `rgb(${r(R + (255 - R) * amount)},${r(G + (255 - G) * amount)},${r(B + (255 - B) * amount)})`;
}

/** Renders one slide; returns the PNG. */
export async function renderSlide(s: SlideInput): Promise<Buffer> {
  const g = slideGeometry(s.width, s.height);
  const maxPixels = s.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels;
  const base = await slideBackground(s, g);
  const layers: OverlayOptions[] = [];
  // An image model's picture takes the product's place.
  const shown = s.picture
    ? { bytes: s.picture, input: 'picture' as const }
    : s.product
      ? { bytes: s.product, input: 'product' as const }
      : undefined;
  if (s.layout === 'full-bleed' && shown) layers.push(...(await fullBleedLayers(s, shown, maxPixels)));
  else layers.push(...(await cardLayers(s, g, shown, maxPixels)));
  if (s.avatar) layers.push(...(await avatarLayers(s, s.avatar, g, maxPixels)));
  if (s.logo) {
    const box = g.logo;
    const logo = await decode(s.logo, 'logo', maxPixels, (img) => img.resize(box.w, box.h, { fit: 'inside' }));
    const meta = await sharp(logo).metadata();
    layers.push({ input: logo, left: box.x + box.w - (meta.width ?? box.w), top: box.y });
  }
  layers.push(progressDots(s, g));
  return sharp(base).composite(layers).removeAlpha().png({ compressionLevel: 6 }).toBuffer();
}

/** Background and decoration (seeded per slideshow; the decoration keeps away from the top-left corner). */
function slideBackground(s: SlideInput, g: SlideGeometry): Promise<Buffer> {
  const { width: W, height: H, palette: p } = s;
  const rand = rng(`slide:${s.seed}`);
  const shift = (s.index % 3) * 0.08 + rand() * 0.04;
  const decor = [
    `<rect width="${W}" height="${H}" fill="${p.background}"/>`,
    `<circle cx="${r(W * (0.9 - shift))}" cy="${r(H * 0.3)}" r="${r(g.unit * 0.34)}" fill="${p.secondary}" opacity="0.85"/>`,
    `<circle cx="${r(W * (0.08 + shift))}" cy="${r(H * 0.97)}" r="${r(g.unit * 0.22)}" fill="${p.secondary}" opacity="0.5"/>`,
    `<rect x="${g.margin}" y="${g.card.y - r(g.unit * 0.05)}" width="${r(g.unit * 0.18)}" height="${Math.max(4, r(g.unit * 0.012))}" rx="${r(g.unit * 0.006)}" fill="${p.accent}"/>`,
  ];
  return sharp(svg(W, H, decor.join('')))
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** The picture a slide shows (the product, or an image model's picture) and which input it is. */
type Shown = { bytes: Buffer; input: 'product' | 'picture' };

/** Full bleed: the picture over the whole slide, a dark gradient at the top for the text. */
async function fullBleedLayers(s: SlideInput, shown: Shown, maxPixels: number): Promise<OverlayOptions[]> {
  const { width: W, height: H } = s;
  return [
    {
      input: await decode(shown.bytes, shown.input, maxPixels, (img) =>
        img.resize(W, H, { fit: 'cover', position: sharp.strategy.attention }),
      ),
      left: 0,
      top: 0,
    },
    {
      input: svg(
        W,
        H,
        `<defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#000" stop-opacity="0.55"/><stop offset="0.45" stop-color="#000" stop-opacity="0"/></linearGradient></defs><rect width="${W}" height="${H}" fill="url(#s)"/>`,
      ),
      left: 0,
      top: 0,
    },
  ];
}

/** Card: a white card with the picture (rounded) in its slot, or a drawn stand-in without one. */
async function cardLayers(s: SlideInput, g: SlideGeometry, shown: Shown | undefined, maxPixels: number): Promise<OverlayOptions[]> {
  const p = s.palette;
  const { card, productSlot: slot } = g;
  const rx = r(g.unit * 0.03);
  const layers: OverlayOptions[] = [
    { input: svg(card.w, card.h, `<rect width="${card.w}" height="${card.h}" rx="${rx}" fill="#ffffff"/>`), left: card.x, top: card.y },
  ];
  if (shown) {
    const pic = await decode(shown.bytes, shown.input, maxPixels, (img) =>
      img.resize(slot.w, slot.h, { fit: 'cover', position: sharp.strategy.attention }),
    );
    const mask = svg(slot.w, slot.h, `<rect width="${slot.w}" height="${slot.h}" rx="${r(rx * 0.6)}" fill="#fff"/>`);
    const rounded = await sharp(pic)
      .ensureAlpha()
      .composite([{ input: mask, blend: 'dest-in' }])
      .png({ compressionLevel: 0 })
      .toBuffer();
    layers.push({ input: rounded, left: slot.x, top: slot.y });
    return layers;
  }
  // A drawn stand-in: a soft disc in the accent colour on a light wash.
  const c = Math.min(slot.w, slot.h);
  layers.push({
    input: svg(
      slot.w,
      slot.h,
      `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${p.accent}"/><stop offset="1" stop-color="${p.secondary}"/></linearGradient></defs>` +
        `<rect width="${slot.w}" height="${slot.h}" rx="${r(rx * 0.6)}" fill="${lighten(p.accent, 0.8)}"/>` +
        `<circle cx="${r(slot.w / 2)}" cy="${r(slot.h / 2)}" r="${r(c * 0.3)}" fill="url(#g)"/>`,
    ),
    left: slot.x,
    top: slot.y,
  });
  return layers;
}

/** The presenter: a round portrait in a white ring. */
async function avatarLayers(s: SlideInput, avatar: Buffer, g: SlideGeometry, maxPixels: number): Promise<OverlayOptions[]> {
  const { cx, cy, r: ar } = g.avatar;
  const d = 2 * ar;
  const face = await decode(avatar, 'avatar', maxPixels, (img) => img.resize(d, d, { fit: 'cover', position: sharp.strategy.attention }));
  const round = await sharp(face)
    .ensureAlpha()
    .composite([{ input: svg(d, d, `<circle cx="${ar}" cy="${ar}" r="${ar}" fill="#fff"/>`), blend: 'dest-in' }])
    .png({ compressionLevel: 0 })
    .toBuffer();
  const ring = Math.max(3, r(ar * 0.08));
  const top = Math.min(s.height - d - ring, cy - ar);
  return [
    {
      input: svg(d + 2 * ring, d + 2 * ring, `<circle cx="${ar + ring}" cy="${ar + ring}" r="${ar + ring}" fill="#ffffff"/>`),
      left: cx - ar - ring,
      top: top - ring,
    },
    { input: round, left: cx - ar, top },
  ];
}

/** Progress dots: one per slide, this one's opaque. */
function progressDots(s: SlideInput, g: SlideGeometry): OverlayOptions {
  const { y, r: dr, gap } = g.dots;
  const total = (s.count - 1) * gap;
  const x0 = r(s.width / 2 - total / 2);
  const dots = Array.from(
    { length: s.count },
    (_, i) =>
      `<circle cx="${dr * 2 + i * gap}" cy="${dr * 2}" r="${dr}" fill="${s.palette.accent}" opacity="${i === s.index ? 1 : 0.35}"/>`,
  );
  const dotsW = total + dr * 4;
  return { input: svg(dotsW, dr * 4, dots.join('')), left: Math.max(0, x0 - dr * 2), top: Math.max(0, y - dr * 2) };
}

/** A colour clearly readable on `bg` for text items (white or near-black), and its outline. */
export function overlayTextColours(bg: string): { color: string; stroke: string } {
  const color = textOn(bg) === '#ffffff' ? '#FFFFFF' : '#111111';
  return { color, stroke: color === '#FFFFFF' ? '#000000' : '#FFFFFF' };
}

/** The slide engine: the slide drawn on this machine. */
export const localSlides: SlideEngine = { name: 'local', renderSlide };
