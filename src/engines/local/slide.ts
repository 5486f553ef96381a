// The slide renderer of slideshows (sharp/libvips): one PNG per slide at the frame's full size,
// with NO text on it (a slideshow's words are editable text items on the editor timeline, or
// absent). A carousel is a series: every slide is drawn in one system (the palette, the same
// shapes and type), varied per slide. What it draws:
//   - the background in the palette's background colour (brand kit, else the reference's
//     palette, else a deep tone derived from the prompt), lit by a soft radial glow whose place
//     changes from slide to slide;
//   - without a picture (`type` slides: the words are the design): one confident shape per slide,
//     a large soft disc in a tint of the accent colour set off a corner that turns per slide, and
//     on the body slides of a series their number ("02") as a large numeral in the same tint;
//     every tint keeps ≥ 4.5:1 contrast with the overlay text colour (overlayTextColours), so
//     the words read anywhere on the slide;
//   - `card` layout with a picture: a white card in the lower part holding the slide's product
//     image whole (contained, on a blur of itself; the card's width and side change from slide
//     to slide), the disc behind it;
//     `full-bleed` layout (photo-dump and storytime references): the product image covers the
//     whole slide under a dark scrim at the top; an image model's picture for the slide
//     (`picture`) takes the product image's place;
//   - the avatar as a round portrait with a white ring, bottom left;
//   - the brand logo contained in a box at the top right;
//   - progress dots at the bottom (the current slide filled in the accent colour).
// With a picture the text zone (from below the 9:16 feed's top UI zone to ~40 % of the height)
// shows only the background colour; without one, the text takes the hero zone, the middle of the
// slide (heroZone).
// Same inputs, same pixels.
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { SlideInputError, type SlideEngine, type SlideInput, type SlidePalette } from '../image/types.ts';
import { fontFace } from '../../media/fonts.ts';
import { contrast, mix, paletteFor, rng, textOn } from './layout.ts';

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
  /** Where overlay text goes above a picture (nothing but background in the card layout). */
  textZone: Rect;
  /** Where overlay text goes on a slide without a picture: the middle of the slide, out of the UI zones. */
  heroZone: Rect;
  /** A body slide's number ("02"), top left of the hero zone: the text of those slides starts below it (numberedZone). */
  numeral: Rect;
  card: Rect;
  /** The product image inside the card (card layout). */
  productSlot: Rect;
  avatar: { cx: number; cy: number; r: number };
  logo: Rect;
  dots: { y: number; r: number; gap: number };
}

const r = Math.round;

/** The hero zone of a numbered (body) slide: below its numeral. */
export function numberedZone(g: SlideGeometry): Rect {
  const top = g.numeral.y + g.numeral.h + r(g.margin * 0.5);
  return { ...g.heroZone, y: top, h: g.heroZone.y + g.heroZone.h - top };
}

export function slideGeometry(width: number, height: number): SlideGeometry {
  const unit = Math.min(width, height);
  const margin = r(unit * 0.06);
  const cardTop = r(height * 0.42);
  // 9:16 feeds cover the top 14 % with their UI: the text starts below it.
  const portrait = height / width >= 1.6;
  const textTop = portrait ? r(height * 0.16) : margin;
  const dotsY = height - r(margin * 0.7);
  // 9:16: from below the top UI zone to above the bottom one (20 %); else inside the margins, above the dots.
  const heroBottom = portrait ? r(height * 0.78) : dotsY - r(margin * 1.2);
  const card = { x: margin, y: cardTop, w: width - 2 * margin, h: Math.max(2, dotsY - r(margin * 0.9) - cardTop) };
  const inset = r(unit * 0.02);
  const avatarR = r(unit * 0.1);
  return {
    unit,
    margin,
    corner: { x: 0, y: 0, w: r(unit * 0.08), h: r(unit * 0.08) },
    textZone: { x: margin, y: textTop, w: width - 2 * margin, h: cardTop - margin - textTop },
    heroZone: { x: margin, y: textTop, w: width - 2 * margin, h: heroBottom - textTop },
    numeral: { x: margin, y: textTop, w: r(unit * 0.3), h: r(unit * 0.13) },
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
  const own = brand.length > 0 || ref.length > 0;
  const derived = paletteFor({ prompt: opts.prompt, title: '', brandColors: own ? (brand.length ? brand : ref) : undefined });
  // Without a kit or reference: a deep, quiet tone of the prompt's hue (a designed series, not a poster of primaries).
  const background = own ? derived.primary : mix(derived.primary, '#0c0c14', 0.55);
  // Derived: a light tone of the same hue with a touch of its complement (a quiet two-colour scheme, not a clash).
  let accent =
    (brand.length ? (brand[1] ?? ref[1]) : ref[1]) ??
    (own ? derived.accent : mix(mix(derived.primary, '#ffffff', 0.55), derived.accent, 0.2));
  // An accent that disappears into the background is no accent.
  if (contrast(accent, background) < 1.5) accent = contrast(derived.accent, background) >= 1.5 ? derived.accent : textOn(background);
  const secondary = (brand.length ? (ref[0] ?? brand[2]) : ref[2]) ?? (own ? derived.secondary : mix(derived.secondary, background, 0.5));
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
  const layers: OverlayOptions[] = [];
  // An image model's picture takes the product's place.
  const shown = s.picture
    ? { bytes: s.picture, input: 'picture' as const }
    : s.product
      ? { bytes: s.product, input: 'product' as const }
      : undefined;
  const base = await slideBackground(s, g, !shown);
  if (s.layout === 'full-bleed' && shown) layers.push(...(await fullBleedLayers(s, shown, maxPixels)));
  else if (shown) layers.push(...(await cardLayers(s, g, shown, maxPixels)));
  else layers.push(...(await numeralLayer(s, g)));
  if (s.avatar) layers.push(...(await avatarLayers(s, s.avatar, g, maxPixels)));
  if (s.logo) {
    const box = g.logo;
    const logo = await decode(s.logo, 'logo', maxPixels, (img) => img.resize(box.w, box.h, { fit: 'inside' }));
    const meta = await sharp(logo).metadata();
    layers.push({ input: logo, left: box.x + box.w - (meta.width ?? box.w), top: box.y });
  }
  layers.push(progressDots(s, g));
  return sharp(base).composite(layers).removeAlpha().png({ compressionLevel: 2 }).toBuffer();
}

/**
 * The strongest mix of `bg` towards `to` (at most `max`) on which the overlay text colour of `bg`
 * still has 5:1 contrast (WCAG AA's 4.5 with room for video compression): the tints of the
 * glow, the disc and the numeral, so the words read wherever they fall.
 */
export function readableTint(bg: string, to: string, max: number): string {
  const ink = overlayTextColours(bg).color;
  for (let t = max; t > 0.01; t -= 0.02) {
    const c = mix(bg, to, t);
    if (contrast(ink, c) >= 5) return c;
  }
  return bg;
}

/** Where slide `index`'s disc sits (its centre, as fractions of the frame), turned per slideshow; never the top-left corner (the background's). */
const DISC_SPOTS: [number, number][] = [
  [1, 0.12],
  [0.02, 0.98],
  [0.98, 0.9],
  [0.1, 0.62],
  [0.92, 0.5],
];

/**
 * The background of every slide: the palette's background colour, lit by a soft radial glow (its
 * centre moves from slide to slide; it fades out before the top-left corner) and the slide's disc,
 * when there is no picture; with a picture, plain, the disc behind the card, below the text zone.
 */
function slideBackground(s: SlideInput, g: SlideGeometry, bare: boolean): Promise<Buffer> {
  const { width: W, height: H, palette: p } = s;
  const turn = Math.floor(rng(`slide:${s.seed}`)() * DISC_SPOTS.length);
  const glow = readableTint(p.background, p.secondary === p.background ? p.accent : p.secondary, 0.7);
  const [gx, gy] = s.index % 2 ? [0.75, 0.7] : [0.6, 0.4];
  const defs = `<defs><radialGradient id="g" cx="${gx}" cy="${gy}" r="0.55"><stop offset="0" stop-color="${glow}" stop-opacity="0.9"/><stop offset="1" stop-color="${glow}" stop-opacity="0"/></radialGradient></defs>`;
  let shape = '';
  const disc = readableTint(p.background, p.accent, 0.35);
  if (bare) {
    const [fx, fy] = DISC_SPOTS[(s.index + turn) % DISC_SPOTS.length];
    shape = `<circle cx="${r(fx * W)}" cy="${r(fy * H)}" r="${r(g.unit * 0.42)}" fill="${disc}"/>`;
  } else {
    const cx = s.index % 2 ? g.card.x + g.card.w : g.card.x;
    shape = `<circle cx="${cx}" cy="${g.card.y + r(g.card.h * 0.6)}" r="${r(g.unit * 0.36)}" fill="${disc}"/>`;
  }
  // Above a picture the text zone keeps the plain background: the glow lights bare slides only.
  const lit = bare ? `<rect width="${W}" height="${H}" fill="url(#g)"/>` : '';
  return sharp(svg(W, H, `${defs}<rect width="${W}" height="${H}" fill="${p.background}"/>${lit}${shape}`))
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** Whether slide `index` of `count` is a numbered body slide (the hook and the call to action are not). */
export const numbered = (index: number, count: number) => index > 0 && index < count - 1;

/** The number of body slide `index` ("02") as a numeral in the accent colour, top left of the hero zone (the text starts below it). */
async function numeralLayer(s: SlideInput, g: SlideGeometry): Promise<OverlayOptions[]> {
  if (!numbered(s.index, s.count)) return [];
  const face = fontFace('Anton', 'regular');
  // Anton's digits are about 0.74 of the line: a line of this size fills the numeral's box.
  const px = r(g.numeral.h / 1.2);
  const colour = s.palette.accent;
  const num = String(s.index + 1).padStart(2, '0');
  const img = await sharp({
    text: { text: `<span foreground="${colour}">${num}</span>`, font: `${face.family} 12`, fontfile: face.file, dpi: px * 6, rgba: true },
  })
    .png({ compressionLevel: 0 })
    .toBuffer({ resolveWithObject: true });
  const img2 = img.info.height > g.numeral.h ? await sharp(img.data).resize({ height: g.numeral.h }).png().toBuffer() : img.data;
  return [{ input: img2, left: g.numeral.x, top: g.numeral.y }];
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

/** Card: a white card with the picture (rounded) in its slot, turned a little and shifted per slide. */
async function cardLayers(s: SlideInput, g: SlideGeometry, shown: Shown, maxPixels: number): Promise<OverlayOptions[]> {
  const { card, productSlot: slot } = g;
  const rx = r(g.unit * 0.03);
  // Alternate sizes and sides, so a slideshow of one product does not repeat the same picture.
  const shrink = [0, 0.12, 0.06][s.index % 3];
  const side = s.index % 2 ? 0 : 1;
  const dx = r(card.w * shrink * side);
  const c = { x: card.x + dx, y: card.y, w: r(card.w * (1 - shrink)), h: card.h };
  const inner = { x: slot.x - card.x, y: slot.y - card.y, w: c.w - 2 * (slot.x - card.x), h: slot.h };
  // The whole picture (never cropped: it is the customer's product), on a soft blur of itself.
  const backdrop = await decode(shown.bytes, shown.input, maxPixels, (img) => img.resize(inner.w, inner.h, { fit: 'cover' }).blur(24));
  const whole = await decode(shown.bytes, shown.input, maxPixels, (img) => img.resize(inner.w, inner.h, { fit: 'inside' }));
  const size = await sharp(whole).metadata();
  const pic = await sharp(backdrop)
    .composite([{ input: whole, left: r((inner.w - (size.width ?? inner.w)) / 2), top: r((inner.h - (size.height ?? inner.h)) / 2) }])
    .png({ compressionLevel: 0 })
    .toBuffer();
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
