// The local renderer's image composer (sharp/libvips): background in the palette (brand kit,
// else custom reference, else preset tone, else the prompt's hash), the product frame with the
// reference images cover-fitted (or a drawn placeholder product), the avatar (the whole picture
// of a UGC ad with the product in a card on it, else a presenter disc in the product frame), the
// headline, the brand line and the kit's logo, a CTA button and, per layout kind, a badge, slot
// labels or rating stars. Texts are set by pango with the shipped DejaVu files, in the brand
// kit's families when it names some. Same job in, same pixels out.
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { ProviderError, type GenerationJob, type ImageFormat } from '../generation.ts';
import { fontFace, type FontFace } from './font.ts';
import { adCopy } from '../write/ad-copy.ts';
import { computeLayout, hexToRgb, paletteFor, rng, type AdLayout, type Palette, type Rect } from './layout.ts';

/**
 * full: the finished ad. overlay: texts, brand and CTA on a transparent canvas with scrims (over a
 * video, or over a model's hero picture). plate: the finished ad's background and picture without
 * its texts (a first frame for a video model, which must not animate text).
 */
export type ComposeMode = 'full' | 'overlay' | 'plate';

export interface ComposedAd {
  layout: AdLayout;
  palette: Palette;
  headline: string;
  /** RGBA pixels, width × height × 4. */
  pixels: Buffer;
}

const r = Math.round;

const escXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

interface TextLayer {
  input: Buffer;
  width: number;
  height: number;
}

/**
 * Sets pango markup in `face` (bold DejaVu Sans by default). `fit`: as large as fits in box (capped at maxPx);
 * `px`: a fixed size, wrapped at box width.
 */
async function setText(
  markup: string,
  box: { w: number; h: number },
  o: { face?: FontFace; align?: 'left' | 'centre'; px?: number; maxPx?: number; spacing?: number },
): Promise<TextLayer> {
  const face = o.face ?? fontFace(undefined, true);
  const base = {
    text: markup,
    font: `${face.family} 12`,
    fontfile: face.file,
    width: Math.max(1, box.w),
    align: o.align ?? 'centre',
    rgba: true,
    wrap: 'word' as const,
    spacing: o.spacing,
  };
  // pango size 12 pt at `dpi` is 12 * dpi / 72 = dpi / 6 pixels.
  const render = async (opts: object) => {
    const { data, info } = await sharp({ text: { ...base, ...opts } })
      .png({ compressionLevel: 0 })
      .toBuffer({ resolveWithObject: true });
    return { input: data, width: info.width, height: info.height, dpi: info.textAutofitDpi };
  };
  if (o.px) return render({ dpi: Math.max(1, r(o.px * 6)) });
  let t = await render({ height: Math.max(1, box.h) });
  if (o.maxPx && t.dpi && t.dpi / 6 > o.maxPx) t = await render({ dpi: r(o.maxPx * 6) });
  return t;
}

const span = (text: string, colour: string, extra = '') => `<span foreground="${colour}"${extra}>${escXml(text)}</span>`;

/** Position of a w×h layer inside box by alignment, clamped into the canvas. */
function place(layout: AdLayout, box: Rect, w: number, h: number, ha: 'left' | 'centre', va: 'top' | 'middle' | 'bottom') {
  const left = ha === 'left' ? box.x : box.x + r((box.w - w) / 2);
  const top = va === 'top' ? box.y : va === 'bottom' ? box.y + box.h - h : box.y + r((box.h - h) / 2);
  return { left: Math.max(0, Math.min(layout.width - w, left)), top: Math.max(0, Math.min(layout.height - h, top)) };
}

function backgroundSvg(layout: AdLayout, p: Palette, seed: string, mode: ComposeMode): string {
  const { width: W, height: H, unit: u } = layout;
  const rand = rng(`bg:${seed}`);
  const parts: string[] = [];
  const defs: string[] = [];
  if (mode === 'overlay') {
    defs.push(
      `<linearGradient id="top" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#000" stop-opacity="0.6"/><stop offset="1" stop-color="#000" stop-opacity="0"/></linearGradient>`,
      `<linearGradient id="bot" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#000" stop-opacity="0"/><stop offset="1" stop-color="#000" stop-opacity="0.65"/></linearGradient>`,
    );
    // Scrims behind the top texts and the bottom captions/CTA, for legibility over any video.
    const topEnd = Math.min(H, layout.headline.y + layout.headline.h + r(u * 0.08));
    const botStart = Math.max(0, layout.caption.y - r(u * 0.08));
    parts.push(`<rect x="0" y="0" width="${W}" height="${topEnd}" fill="url(#top)"/>`);
    parts.push(`<rect x="0" y="${botStart}" width="${W}" height="${H - botStart}" fill="url(#bot)"/>`);
  } else {
    parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="${p.primary}"/>`);
    // Decorations stay away from the top-left corner, which always shows the primary colour.
    const variant = Math.floor(rand() * 3);
    if (variant === 0) {
      parts.push(
        `<circle cx="${r(W * (0.82 + rand() * 0.12))}" cy="${r(H * (0.8 + rand() * 0.12))}" r="${r(u * (0.5 + rand() * 0.2))}" fill="${p.secondary}" opacity="0.9"/>`,
      );
      parts.push(`<circle cx="${r(W * 0.95)}" cy="${r(H * 0.18)}" r="${r(u * 0.16)}" fill="${p.accent}" opacity="0.22"/>`);
    } else if (variant === 1) {
      parts.push(`<polygon points="${r(W * 0.45)},${H} ${W},${r(H * 0.3)} ${W},${H}" fill="${p.secondary}" opacity="0.9"/>`);
      parts.push(`<polygon points="${r(W * 0.7)},0 ${W},0 ${W},${r(H * 0.22)}" fill="${p.accent}" opacity="0.25"/>`);
    } else {
      const band = r(u * 0.22);
      parts.push(`<rect x="0" y="${H - band * 2}" width="${W}" height="${band * 2}" fill="${p.secondary}" opacity="0.9"/>`);
      for (let i = 0; i < 6; i++) {
        parts.push(
          `<circle cx="${r(W * (0.55 + 0.08 * i))}" cy="${r(H * 0.08 + (i % 2) * u * 0.05)}" r="${r(u * 0.012)}" fill="${p.onPrimary}" opacity="0.35"/>`,
        );
      }
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}"><defs>${defs.join('')}</defs>${parts.join('')}</svg>`;
}

/**
 * The product card: a soft drop shadow (blurred by libvips: an SVG blur filter costs seconds at
 * 4K) and the light frame the slots sit in.
 */
async function productCard(layout: AdLayout): Promise<OverlayOptions[]> {
  const { product, unit: u, width: W, height: H } = layout;
  const rx = r(u * 0.025);
  const sd = Math.max(2, r(u * 0.012));
  const pad = sd * 3;
  // Shadow canvas: the card grown by `pad`, shifted down-right, clipped to the image.
  const x0 = Math.max(0, product.x + sd - pad);
  const y0 = Math.max(0, product.y + 2 * sd - pad);
  const x1 = Math.min(W, product.x + sd + product.w + pad);
  const y1 = Math.min(H, product.y + 2 * sd + product.h + pad);
  const shadowSvg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${x1 - x0}" height="${y1 - y0}">` +
    `<rect x="${product.x + sd - x0}" y="${product.y + 2 * sd - y0}" width="${product.w}" height="${product.h}" rx="${rx}" fill="#000000" fill-opacity="0.3"/></svg>`;
  const shadow = await sharp(Buffer.from(shadowSvg)).blur(sd).png({ compressionLevel: 0 }).toBuffer();
  const card = `<svg xmlns="http://www.w3.org/2000/svg" width="${product.w}" height="${product.h}"><rect width="${product.w}" height="${product.h}" rx="${rx}" fill="#ffffff"/></svg>`;
  return [
    { input: shadow, left: x0, top: y0 },
    { input: Buffer.from(card), left: product.x, top: product.y },
  ];
}

/** A drawn stand-in product when the job has no reference image. */
function placeholderSvg(slot: Rect, p: Palette, seed: string): string {
  const { w, h } = slot;
  const rand = rng(`ph:${seed}`);
  const s = Math.min(w, h);
  const cx = w / 2;
  const shape = Math.floor(rand() * 3);
  const [ar, ag, ab] = hexToRgb(p.accent);
  const light = `rgb(${r(ar + (255 - ar) * 0.55)},${r(ag + (255 - ag) * 0.55)},${r(ab + (255 - ab) * 0.55)})`;
  let body: string;
  if (shape === 0) {
    const bw = s * 0.34;
    const bh = s * 0.62;
    const x = cx - bw / 2;
    const y = h / 2 - bh / 2 + s * 0.05;
    body =
      `<rect x="${r(cx - bw * 0.18)}" y="${r(y - s * 0.1)}" width="${r(bw * 0.36)}" height="${r(s * 0.12)}" rx="${r(s * 0.02)}" fill="${p.secondary}"/>` +
      `<rect x="${r(x)}" y="${r(y)}" width="${r(bw)}" height="${r(bh)}" rx="${r(bw * 0.22)}" fill="url(#g)"/>` +
      `<rect x="${r(x + bw * 0.14)}" y="${r(y + bh * 0.38)}" width="${r(bw * 0.72)}" height="${r(bh * 0.28)}" rx="${r(s * 0.015)}" fill="#ffffff" opacity="0.85"/>`;
  } else if (shape === 1) {
    const bw = s * 0.5;
    const x = cx - bw / 2;
    const y = h / 2 - bw / 2;
    body =
      `<polygon points="${r(x)},${r(y)} ${r(x + bw * 0.25)},${r(y - bw * 0.18)} ${r(x + bw * 1.25)},${r(y - bw * 0.18)} ${r(x + bw)},${r(y)}" fill="${light}"/>` +
      `<polygon points="${r(x + bw)},${r(y)} ${r(x + bw * 1.25)},${r(y - bw * 0.18)} ${r(x + bw * 1.25)},${r(y + bw * 0.82)} ${r(x + bw)},${r(y + bw)}" fill="${p.secondary}"/>` +
      `<rect x="${r(x)}" y="${r(y)}" width="${r(bw)}" height="${r(bw)}" fill="url(#g)"/>`;
  } else {
    body =
      `<circle cx="${r(cx)}" cy="${r(h / 2)}" r="${r(s * 0.3)}" fill="url(#g)"/>` +
      `<circle cx="${r(cx - s * 0.1)}" cy="${r(h / 2 - s * 0.1)}" r="${r(s * 0.07)}" fill="#ffffff" opacity="0.5"/>`;
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<defs><linearGradient id="bg" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${light}"/><stop offset="1" stop-color="#ffffff"/></linearGradient>` +
    `<linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${p.accent}"/><stop offset="1" stop-color="${p.secondary}"/></linearGradient></defs>` +
    `<rect width="${w}" height="${h}" fill="url(#bg)"/>` +
    `<ellipse cx="${r(cx)}" cy="${r(h / 2 + s * 0.36)}" rx="${r(s * 0.28)}" ry="${r(s * 0.04)}" fill="#000" opacity="0.15"/>` +
    body +
    `</svg>`
  );
}

async function slotImage(job: GenerationJob, layout: AdLayout, palette: Palette, i: number): Promise<OverlayOptions> {
  const slot = layout.slots[i];
  const refs = job.referenceImages;
  if (refs.length === 0) {
    const seed = `${job.prompt}|${job.templateSlug ?? job.modelSlug ?? ''}|${i}`;
    return { input: Buffer.from(placeholderSvg(slot, palette, seed)), left: slot.x, top: slot.y };
  }
  const refIndex = i % refs.length;
  try {
    let img = sharp(refs[refIndex], { failOn: 'error', limitInputPixels: job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels })
      .rotate()
      .resize(slot.w, slot.h, { fit: 'cover', position: sharp.strategy.attention })
      .ensureAlpha();
    // Split layouts: the first pane ("before", "them") is muted.
    if (layout.kind === 'split' && i === 0) img = img.modulate({ saturation: 0.15, brightness: 0.9 });
    const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
    return { input: data, raw: { width: info.width, height: info.height, channels: info.channels }, left: slot.x, top: slot.y };
  } catch (err) {
    const over = /exceeds pixel limit/i.test((err as Error).message);
    const why = over
      ? `has more than ${job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels} pixels (width × height), the most accepted`
      : `could not be decoded: ${(err as Error).message}`;
    throw new ProviderError(`reference image ${refIndex + 1} ${why}`, {
      retryable: false,
      code: 'invalid_reference_image',
      cause: err,
    });
  }
}

/** Headline face: the brand kit's first font; other texts: its second, else its first. Bold DejaVu Sans without a kit. */
export function facesFor(job: Pick<GenerationJob, 'fonts'>): { headFace: FontFace; bodyFace: FontFace } {
  const fonts = job.fonts ?? [];
  return { headFace: fontFace(fonts[0], true), bodyFace: fontFace(fonts[1] ?? fonts[0], true) };
}

function boundsOf(rects: Rect[]): Rect {
  const x0 = Math.min(...rects.map((a) => a.x));
  const y0 = Math.min(...rects.map((a) => a.y));
  const x1 = Math.max(...rects.map((a) => a.x + a.w));
  const y1 = Math.max(...rects.map((a) => a.y + a.h));
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** Decodes an asset image (avatar portrait, logo) within the pixel limit, or a non-retryable ProviderError naming it. */
function assetImage(job: GenerationJob, bytes: Buffer, what: string, code: string) {
  const img = sharp(bytes, { failOn: 'error', limitInputPixels: job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels }).rotate();
  const fail = (err: unknown): never => {
    throw new ProviderError(`${what} could not be decoded: ${(err as Error).message}`, { retryable: false, code, cause: err });
  };
  return { img, fail };
}

/** The avatar's portrait cover-fitted (centred) into `box`, as raw RGBA. */
async function avatarPixels(job: GenerationJob, box: Rect): Promise<Buffer> {
  const { img, fail } = assetImage(job, job.avatarImage!, 'the avatar image', 'invalid_avatar_image');
  return img.resize(box.w, box.h, { fit: 'cover', position: 'centre' }).ensureAlpha().raw().toBuffer().catch(fail);
}

async function avatarLayer(job: GenerationJob, box: Rect): Promise<OverlayOptions> {
  return { input: await avatarPixels(job, box), raw: { width: box.w, height: box.h, channels: 4 }, left: box.x, top: box.y };
}

/** The presenter disc: the portrait cut round, with a ring in the accent colour. */
async function avatarDisc(job: GenerationJob, box: Rect, palette: Palette): Promise<OverlayOptions[]> {
  const d = box.w;
  const mask = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${d}" height="${d}"><circle cx="${d / 2}" cy="${d / 2}" r="${d / 2}" fill="#fff"/></svg>`,
  );
  const face = await sharp(await avatarPixels(job, box), { raw: { width: d, height: d, channels: 4 } })
    .composite([{ input: mask, blend: 'dest-in' }])
    .png({ compressionLevel: 0 })
    .toBuffer();
  const sw = Math.max(2, r(d * 0.035));
  const ring = `<svg xmlns="http://www.w3.org/2000/svg" width="${d}" height="${d}"><circle cx="${d / 2}" cy="${d / 2}" r="${d / 2 - sw / 2}" fill="none" stroke="${palette.accent}" stroke-width="${sw}"/></svg>`;
  return [
    { input: face, left: box.x, top: box.y },
    { input: Buffer.from(ring), left: box.x, top: box.y },
  ];
}

/** The logo fitted inside `box` (never enlarged past it), right-aligned and vertically centred. */
async function logoLayer(job: GenerationJob, box: Rect): Promise<OverlayOptions> {
  const { img, fail } = assetImage(job, job.logo!, 'the brand kit logo', 'invalid_logo');
  const { data, info } = await img
    .resize(box.w, box.h, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch(fail);
  return {
    input: data,
    raw: { width: info.width, height: info.height, channels: 4 },
    left: box.x + box.w - info.width,
    top: box.y + r((box.h - info.height) / 2),
  };
}

/** What every part of one ad is drawn with. */
interface AdDraw {
  job: GenerationJob;
  layout: AdLayout;
  palette: Palette;
  mode: ComposeMode;
  /** The texts' alignment: left in a landscape ad's text column, else centred. */
  align: 'left' | 'centre';
  headFace: FontFace;
  bodyFace: FontFace;
}

const svgLayer = (s: string, left: number, top: number): OverlayOptions => ({ input: Buffer.from(s), left, top });

/** Renders the ad of `job` (at job.width × job.height) into RGBA pixels. */
export async function composeAd(job: GenerationJob, mode: ComposeMode = 'full'): Promise<ComposedAd> {
  const layout = computeLayout(job, mode === 'overlay' ? 'overlay' : 'full');
  const palette = paletteFor(job);
  // A preset has decorations of its own (the background variant is seeded by it).
  const seed = `${job.prompt}|${job.templateSlug ?? job.modelSlug ?? ''}|${layout.kind}${job.presetId ? `|${job.presetId}` : ''}`;
  const headline = adCopy(job).headline;
  const align = layout.orientation === 'landscape' && layout.kind !== 'model' && mode === 'full' ? 'left' : 'centre';
  const d: AdDraw = { job, layout, palette, mode, align, ...facesFor(job) };
  const layers: OverlayOptions[] = [];
  if (mode !== 'overlay') layers.push(...(await pictureLayers(d)));
  if (mode !== 'plate') layers.push(...(await textLayers(d, headline)));
  const pixels = await sharp(Buffer.from(backgroundSvg(layout, palette, seed, mode)))
    .composite(layers)
    .ensureAlpha()
    .raw()
    .toBuffer();
  return { layout, palette, headline, pixels };
}

/** The headline, brand line, logo, CTA and badge. */
async function textLayers(d: AdDraw, headline: string): Promise<OverlayOptions[]> {
  const { job, layout } = d;
  const layers = await headlineLayers(d, headline);
  if (layout.brand) layers.push(await brandLayer(d, layout.brand));
  // Logo: fitted inside its box, right-aligned, vertically centred.
  if (layout.logo && job.logo) layers.push(await logoLayer(job, layout.logo));
  if (layout.cta) layers.push(...(await ctaLayers(d, layout.cta)));
  if (layout.badge) layers.push(...(await badgeLayers(d, layout.badge)));
  return layers;
}

/** The picture of a finished ad: the product card (or the UGC presenter with the product in a card), its images, the presenter disc, slot labels. */
async function pictureLayers(d: AdDraw): Promise<OverlayOptions[]> {
  const { job, layout, palette } = d;
  const layers: OverlayOptions[] = [];
  if (layout.avatar && layout.avatarShape === 'fill') {
    // UGC: the presenter is the picture; the product sits in a card on it.
    layers.push(await avatarLayer(job, layout.avatar));
    const area = boundsOf(layout.slots);
    const pad = Math.max(2, r(layout.unit * 0.012));
    const box = { x: area.x - pad, y: area.y - pad, w: area.w + 2 * pad, h: area.h + 2 * pad };
    layers.push(
      svgLayer(
        `<svg xmlns="http://www.w3.org/2000/svg" width="${box.w}" height="${box.h}"><rect width="${box.w}" height="${box.h}" rx="${pad}" fill="#ffffff"/></svg>`,
        box.x,
        box.y,
      ),
    );
  } else layers.push(...(await productCard(layout)));
  for (let i = 0; i < layout.slots.length; i++) layers.push(await slotImage(job, layout, palette, i));
  if (layout.avatar && layout.avatarShape === 'disc') layers.push(...(await avatarDisc(job, layout.avatar, palette)));
  for (let i = 0; i < layout.slotLabels.length && i < layout.slots.length; i++) layers.push(...(await slotLabel(d, i)));
  return layers;
}

/** A split layout's slot label: a pill in the top-left of its pane. */
async function slotLabel({ layout, palette, bodyFace }: AdDraw, i: number): Promise<OverlayOptions[]> {
  const slot = layout.slots[i];
  const px = Math.max(8, r(layout.unit * 0.035));
  const t = await setText(
    span(layout.slotLabels[i].toUpperCase(), i === 0 ? '#ffffff' : palette.onAccent),
    { w: slot.w, h: px * 2 },
    { px, face: bodyFace },
  );
  const pad = r(px * 0.6);
  const pw = Math.min(slot.w, t.width + 2 * pad);
  const ph = Math.min(slot.h, t.height + pad);
  const fill = i === 0 ? '#333333' : palette.accent;
  return [
    svgLayer(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${pw}" height="${ph}"><rect width="${pw}" height="${ph}" rx="${r(ph / 2)}" fill="${fill}"/></svg>`,
      slot.x + pad,
      slot.y + pad,
    ),
    { input: t.input, left: slot.x + pad + r((pw - t.width) / 2), top: slot.y + pad + r((ph - t.height) / 2) },
  ];
}

/** The headline (a quote with rating stars; on a UGC picture, over a caption box for legibility). */
async function headlineLayers({ layout, palette, mode, align, headFace }: AdDraw, headline: string): Promise<OverlayOptions[]> {
  const u = layout.unit;
  const headColour = mode === 'overlay' || layout.kind === 'ugc' ? '#ffffff' : palette.onPrimary;
  let headMarkup = span(layout.kind === 'quote' ? `“${headline}”` : headline, headColour);
  if (layout.kind === 'quote')
    headMarkup += `\n<span size="55%" foreground="${mode === 'overlay' ? '#ffd54a' : palette.accent}">★★★★★</span>`;
  const headMax = r(u * (layout.kind === 'model' ? 0.05 : layout.kind === 'ugc' ? 0.065 : 0.1));
  const head = await setText(headMarkup, layout.headline, { align, maxPx: headMax, spacing: 0, face: headFace });
  const headPos = place(layout, layout.headline, head.width, head.height, align, layout.kind === 'ugc' ? 'bottom' : 'middle');
  const layers: OverlayOptions[] = [];
  if (layout.kind === 'ugc') {
    const pad = r(u * 0.02);
    const bw = head.width + 2 * pad;
    const bh = head.height + 2 * pad;
    layers.push(
      svgLayer(
        `<svg xmlns="http://www.w3.org/2000/svg" width="${bw}" height="${bh}"><rect width="${bw}" height="${bh}" rx="${pad}" fill="#000000" fill-opacity="0.6"/></svg>`,
        Math.max(0, headPos.left - pad),
        Math.max(0, headPos.top - pad),
      ),
    );
  }
  layers.push({ input: head.input, left: headPos.left, top: headPos.top });
  return layers;
}

/** The brand line: the UGC presenter's handle and the brand name, spaced capitals. */
async function brandLayer({ job, layout, palette, mode, align, bodyFace }: AdDraw, box: Rect): Promise<OverlayOptions> {
  const parts: string[] = [];
  if (layout.kind === 'ugc' && job.avatarName) parts.push(`@${job.avatarName.replace(/\s+/g, '').toLowerCase()}`);
  if (job.brandName) parts.push(job.brandName.toUpperCase());
  const px = Math.max(8, r(box.h * 0.62));
  const colour = mode === 'overlay' ? '#ffffff' : palette.onPrimary;
  const t = await setText(
    `<span foreground="${colour}" letter_spacing="${r(px * 0.1 * 1024)}">${escXml(parts.join('  ·  '))}</span>`,
    box,
    { px, align, face: bodyFace },
  );
  const pos = place(layout, box, Math.min(t.width, box.w), t.height, align, 'middle');
  return { input: t.input, left: pos.left, top: pos.top };
}

/** The CTA button: a pill in the accent colour with its text. */
async function ctaLayers({ job, palette, align, bodyFace }: AdDraw, c: Rect): Promise<OverlayOptions[]> {
  const px = Math.max(8, r(c.h * 0.4));
  const t = await setText(span(`${adCopy(job).cta}  →`, palette.onAccent), { w: c.w, h: c.h }, { px, face: bodyFace });
  const bw = Math.max(Math.min(c.w, t.width + r(c.h * 1.2)), r(c.w * 0.5));
  const bx = align === 'left' ? c.x : c.x + r((c.w - bw) / 2);
  return [
    svgLayer(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${bw}" height="${c.h}"><rect width="${bw}" height="${c.h}" rx="${r(c.h / 2)}" fill="${palette.accent}"/></svg>`,
      bx,
      c.y,
    ),
    { input: t.input, left: bx + r((bw - t.width) / 2), top: c.y + r((c.h - t.height) / 2) },
  ];
}

/** The badge: a disc (clipped to the canvas) over the card's corner, and its text. */
async function badgeLayers({ job, layout, palette, bodyFace }: AdDraw, b: NonNullable<AdLayout['badge']>): Promise<OverlayOptions[]> {
  const x0 = Math.max(0, b.cx - b.r);
  const y0 = Math.max(0, b.cy - b.r);
  const x1 = Math.min(layout.width, b.cx + b.r);
  const y1 = Math.min(layout.height, b.cy + b.r);
  const sw = Math.max(2, r(b.r * 0.05));
  const disc = svgLayer(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${x1 - x0}" height="${y1 - y0}"><circle cx="${b.cx - x0}" cy="${b.cy - y0}" r="${b.r - sw / 2}" fill="${palette.accent}" stroke="${palette.onAccent}" stroke-width="${sw}"/></svg>`,
    x0,
    y0,
  );
  const t = await setText(
    span(adCopy(job).badge, palette.onAccent),
    { w: r(b.r * 1.4), h: r(b.r * 0.8) },
    { maxPx: r(b.r * 0.6), face: bodyFace },
  );
  const left = Math.max(0, Math.min(layout.width - t.width, b.cx - r(t.width / 2)));
  const top = Math.max(0, Math.min(layout.height - t.height, b.cy - r(t.height / 2)));
  return [disc, { input: t.input, left, top }];
}

export function encodeRaw(ad: ComposedAd, opaque = true): Sharp {
  const img = sharp(ad.pixels, { raw: { width: ad.layout.width, height: ad.layout.height, channels: 4 } });
  return opaque ? img.removeAlpha() : img;
}

/**
 * The finished ad in `format`, exactly job.width × job.height: composed here, or (job.heroImage)
 * the template's texts, brand and CTA composited over the model's hero picture, cover-fitted to
 * the frame; (job.textless) the picture without texts.
 */
export async function renderAdImage(job: GenerationJob, format: ImageFormat): Promise<Buffer> {
  const img = job.heroImage ? await overHero(job, job.heroImage) : encodeRaw(await composeAd(job, job.textless ? 'plate' : 'full'), true);
  if (format === 'jpeg') return img.jpeg({ quality: 92, mozjpeg: false }).toBuffer();
  if (format === 'webp') return img.webp({ quality: 90, smartSubsample: true }).toBuffer();
  return img.png({ compressionLevel: 6 }).toBuffer();
}

async function overHero(job: GenerationJob, hero: string): Promise<Sharp> {
  const limitInputPixels = job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels;
  const base = await sharp(hero, { limitInputPixels })
    .rotate()
    .resize(job.width, job.height, { fit: 'cover', position: sharp.strategy.attention })
    .removeAlpha()
    .toBuffer();
  const overlay = await encodeRaw(await composeAd(job, 'overlay'), false)
    .png({ compressionLevel: 0 })
    .toBuffer();
  return sharp(
    await sharp(base)
      .composite([{ input: overlay }])
      .removeAlpha()
      .png({ compressionLevel: 0 })
      .toBuffer(),
  );
}
