// The slide renderer of slideshows (sharp/libvips): one PNG per slide at the frame's full size,
// with NO text on it (a slideshow's words are editable text items on the editor timeline, or
// absent). What it draws:
//   - the background in the palette's background colour (brand kit, else the reference's
//     palette, else one derived from the prompt); below the text zone a bold pattern in the
//     palette's secondary and accent colours that changes from slide to slide (PATTERNS:
//     stripes, blocks, chevrons, a grid, waves, a split), and an accent bar;
//   - `card` layout: a white card in the lower part holding the slide's product image
//     (cover-fitted; its width and side change from slide to slide), and no stand-in without
//     one; `full-bleed` layout (photo-dump and storytime references): the product image covers
//     the whole slide under a dark scrim at the top; an image model's picture for the slide
//     (`picture`) takes the product image's place;
//   - the avatar as a round portrait with a white ring, bottom left;
//   - the brand logo contained in a box at the top right;
//   - progress dots at the bottom (the current slide filled in the accent colour).
// The text zone (from below the 9:16 feed's top UI zone to ~40 % of the height) shows only the
// background colour in the card layout: overlay text goes there.
// Same inputs, same pixels.
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { SlideInputError, type SlideEngine, type SlideInput, type SlidePalette } from '../image/types.ts';
import { contrast, paletteFor, rng, textOn } from './layout.ts';

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
  // 9:16 feeds cover the top 14 % with their UI: the text starts below it.
  const textTop = height / width >= 1.6 ? r(height * 0.16) : margin;
  const dotsY = height - r(margin * 0.7);
  const card = { x: margin, y: cardTop, w: width - 2 * margin, h: Math.max(2, dotsY - r(margin * 0.9) - cardTop) };
  const inset = r(unit * 0.02);
  const avatarR = r(unit * 0.1);
  return {
    unit,
    margin,
    corner: { x: 0, y: 0, w: r(unit * 0.08), h: r(unit * 0.08) },
    textZone: { x: margin, y: textTop, w: width - 2 * margin, h: cardTop - margin - textTop },
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

/** The compositions of the lower part of the slides, in turn (consecutive slides never share one). */
const PATTERNS = ['stripes', 'blocks', 'chevrons', 'grid', 'wave', 'split'] as const;

/**
 * The decoration of slide `index` in the lower part (below the text zone: the text keeps the
 * plain background colour behind it): one of PATTERNS in the palette's colours, turned per
 * slideshow; and the accent bar above the card.
 */
function decoration(s: SlideInput, g: SlideGeometry): string {
  const { width: W, height: H, palette: p } = s;
  const top = g.textZone.y + g.textZone.h;
  const h = H - top;
  const u = g.unit;
  const offset = Math.floor(rng(`slide:${s.seed}`)() * PATTERNS.length);
  const kind = PATTERNS[(s.index + offset) % PATTERNS.length];
  const [c1, c2] = s.index % 2 ? [p.accent, p.secondary] : [p.secondary, p.accent];
  switch (kind) {
    case 'stripes':
      return Array.from(
        { length: 4 },
        (_, i) => `<rect x="0" y="${r(top + h * (0.15 + i * 0.22))}" width="${W}" height="${r(h * 0.1)}" fill="${i % 2 ? c2 : c1}"/>`,
      ).join('');
    case 'blocks':
      return `<rect x="0" y="${r(top + h * 0.3)}" width="${r(W * 0.62)}" height="${r(h * 0.7)}" fill="${c1}"/><rect x="${r(W * 0.62)}" y="${r(top + h * 0.55)}" width="${r(W * 0.38)}" height="${r(h * 0.45)}" fill="${c2}"/>`;
    case 'chevrons':
      return Array.from({ length: 3 }, (_, i) => {
        const y = r(top + h * (0.2 + i * 0.27));
        return `<polygon points="0,${y} ${r(W / 2)},${y + r(h * 0.14)} ${W},${y} ${W},${y + r(h * 0.12)} ${r(W / 2)},${y + r(h * 0.26)} 0,${y + r(h * 0.12)}" fill="${i % 2 ? c2 : c1}"/>`;
      }).join('');
    case 'grid': {
      const step = r(u * 0.16);
      const cells: string[] = [];
      for (let y = top + r(h * 0.1), row = 0; y < H; y += step, row++)
        for (let x = (row % 2) * step, col = 0; x < W; x += 2 * step, col++)
          cells.push(`<rect x="${x}" y="${y}" width="${step}" height="${step}" fill="${(row + col) % 3 ? c1 : c2}"/>`);
      return cells.join('');
    }
    case 'wave':
      return `<path d="M0 ${r(top + h * 0.35)} C ${r(W * 0.3)} ${r(top + h * 0.1)}, ${r(W * 0.6)} ${r(top + h * 0.6)}, ${W} ${r(top + h * 0.3)} L ${W} ${H} L 0 ${H} Z" fill="${c1}"/><path d="M0 ${r(top + h * 0.7)} C ${r(W * 0.4)} ${r(top + h * 0.5)}, ${r(W * 0.7)} ${r(top + h * 0.95)}, ${W} ${r(top + h * 0.65)} L ${W} ${H} L 0 ${H} Z" fill="${c2}"/>`;
    default:
      // Two slanted planes (a straight band along the bottom edge would read as a letterbox bar).
      return `<polygon points="0,${r(top + h * 0.2)} ${W},${r(top + h * 0.6)} ${W},${H} 0,${H}" fill="${c1}"/><polygon points="0,${r(top + h * 0.95)} ${W},${r(top + h * 0.72)} ${W},${H} 0,${H}" fill="${c2}"/>`;
  }
}

/** Background, the slide's decoration and the accent bar. */
function slideBackground(s: SlideInput, g: SlideGeometry): Promise<Buffer> {
  const { width: W, height: H, palette: p } = s;
  const bar = `<rect x="${g.margin}" y="${g.card.y - r(g.unit * 0.05)}" width="${r(g.unit * 0.18)}" height="${Math.max(4, r(g.unit * 0.012))}" rx="${r(g.unit * 0.006)}" fill="${p.accent}"/>`;
  return sharp(svg(W, H, `<rect width="${W}" height="${H}" fill="${p.background}"/>${decoration(s, g)}${bar}`))
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

/** Card: a white card with the picture (rounded) in its slot, turned a little and shifted per slide; without a picture, nothing (no stand-in). */
async function cardLayers(s: SlideInput, g: SlideGeometry, shown: Shown | undefined, maxPixels: number): Promise<OverlayOptions[]> {
  if (!shown) return [];
  const { card, productSlot: slot } = g;
  const rx = r(g.unit * 0.03);
  // Alternate sizes and sides, so a slideshow of one product does not repeat the same picture.
  const shrink = [0, 0.12, 0.06][s.index % 3];
  const side = s.index % 2 ? 0 : 1;
  const dx = r(card.w * shrink * side);
  const c = { x: card.x + dx, y: card.y, w: r(card.w * (1 - shrink)), h: card.h };
  const inner = { x: slot.x - card.x, y: slot.y - card.y, w: c.w - 2 * (slot.x - card.x), h: slot.h };
  const pic = await decode(shown.bytes, shown.input, maxPixels, (img) =>
    img.resize(inner.w, inner.h, { fit: 'cover', position: s.index % 2 ? sharp.strategy.attention : sharp.strategy.entropy }),
  );
  const mask = svg(inner.w, inner.h, `<rect width="${inner.w}" height="${inner.h}" rx="${r(rx * 0.6)}" fill="#fff"/>`);
  const rounded = await sharp(pic)
    .ensureAlpha()
    .composite([{ input: mask, blend: 'dest-in' }])
    .png({ compressionLevel: 0 })
    .toBuffer();
  return [
    { input: svg(c.w, c.h, `<rect width="${c.w}" height="${c.h}" rx="${rx}" fill="#ffffff"/>`), left: c.x, top: c.y },
    { input: rounded, left: c.x + inner.x, top: c.y + inner.y },
  ];
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
