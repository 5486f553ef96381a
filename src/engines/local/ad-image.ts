// The local renderer's image composer (sharp/libvips), typography first: the template's texture
// (./ad-style.ts) over a gradient of the palette (brand kit, else custom reference, else preset
// tone, else the prompt's hash); the customer's pictures where given (reference images cover-fitted
// in a product card, the avatar as a presenter disc, or as the whole picture of a UGC ad with the
// product card beside the face); without any, no stand-in product: the type takes the space. The
// texts of adCopy() (headline, subheadline, offer, CTA, badge, brand line) are each fitted into
// their box (sized down and wrapped, never clipped) inside the safe area, in a colour with at
// least 4.5:1 contrast to what is behind it (on a scrim where the ground does not allow it); each
// is recorded in the ad's MediaManifest. A static poster also draws its template's structure
// (./ad-parts.ts: a comparison, feature callouts, before/after halves, a quote's foot, a sale's
// hero number, an app's phone). Texts are set by pango with the bundled faces (../../media/fonts.ts)
// the template pairs (./ad-style.ts), in the brand kit's families when it names some. Same job in,
// same pixels out.
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { DEFAULT_PIXEL_LIMITS } from '../../media/limits.ts';
import { faceBox } from '../../media/portrait.ts';
import { safeZoneFor, type MediaManifest, type PlacedText } from '../../media/quality/manifest.ts';
import { ProviderError, type GenerationJob, type ImageFormat } from '../generation.ts';
import { fontFace, type FontFace } from '../../media/fonts.ts';
import { adCopy, type AdCopy } from '../write/ad-copy.ts';
import { adStyle, textureSvg, type AdStyle } from './ad-style.ts';
import { markSvg, quoteMarkLayer, structureLayers, svg, svgLayer, type PartsDraw, type TextSpec } from './ad-parts.ts';
import {
  computeLayout,
  contrast,
  lightPalette,
  mix,
  paletteFor,
  readableOn,
  type AdLayout,
  type LayoutInput,
  type Palette,
  type Rect,
} from './layout.ts';

/**
 * full: the finished ad. overlay: texts, brand and CTA on a transparent canvas, each on a scrim
 * (over a video, or over a model's hero picture). plate: the finished ad's background and picture
 * without its texts (a first frame for a video model, which must not animate text).
 */
export type ComposeMode = 'full' | 'overlay' | 'plate';

/** A text as drawn, with its colour (the checker measures its contrast against the pixels behind). */
export interface DrawnText extends PlacedText {
  colour: string;
}

export interface ComposedAd {
  layout: AdLayout;
  palette: Palette;
  headline: string;
  /** RGBA pixels, width × height × 4 (with `split`: the picture without the texts). */
  pixels: Buffer;
  /** With `split`: the texts alone on a transparent canvas, RGBA. */
  textPixels?: Buffer;
  texts: DrawnText[];
  manifest: MediaManifest;
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
 * Sets pango markup in `face` as large as fits in `box` (capped at maxPx), wrapped at the box's
 * width; if pango's layout still overflows the box (a long word), set smaller until it fits.
 */
async function setText(
  markup: string,
  box: { w: number; h: number },
  o: { face: FontFace; align?: 'left' | 'centre'; maxPx: number; spacing?: number; oneLine?: boolean; wholeWords?: boolean },
): Promise<TextLayer> {
  const base = {
    text: markup,
    font: `${o.face.family} 12`,
    fontfile: o.face.file,
    width: Math.max(1, box.w),
    align: o.align ?? 'centre',
    rgba: true,
    wrap: o.oneLine ? ('none' as const) : o.wholeWords ? ('word' as const) : ('word-char' as const),
    spacing: o.spacing,
  };
  // pango size 12 pt at `dpi` is 12 * dpi / 72 = dpi / 6 pixels.
  const render = async (opts: object) => {
    const { data, info } = await sharp({ text: { ...base, ...opts } })
      .png({ compressionLevel: 0 })
      .toBuffer({ resolveWithObject: true });
    return { input: data, width: info.width, height: info.height, dpi: info.textAutofitDpi };
  };
  let t = await render({ height: Math.max(1, box.h) });
  let dpi = Math.min(t.dpi ?? o.maxPx * 6, r(o.maxPx * 6));
  if (t.dpi !== dpi) t = await render({ dpi });
  for (let i = 0; i < 10 && (t.width > box.w || t.height > box.h) && dpi > 6; i++) {
    dpi = r(dpi * 0.85);
    t = await render({ dpi });
  }
  return t;
}

const span = (text: string, colour: string, extra = '') => `<span foreground="${colour}"${extra}>${escXml(text)}</span>`;

/** Position of a w×h layer inside box by alignment, clamped into the canvas. */
function place(layout: AdLayout, box: Rect, w: number, h: number, ha: 'left' | 'centre', va: 'top' | 'middle' | 'bottom') {
  const left = ha === 'left' ? box.x : box.x + r((box.w - w) / 2);
  const top = va === 'top' ? box.y : va === 'bottom' ? box.y + box.h - h : box.y + r((box.h - h) / 2);
  return { left: Math.max(0, Math.min(layout.width - w, left)), top: Math.max(0, Math.min(layout.height - h, top)) };
}

/** The background: the palette's gradient (the primary colour in the top-left corner) and the template's texture. */
function backgroundSvg(d: AdDraw): string {
  const { layout, palette: p, mode, style } = d;
  const { width: W, height: H } = layout;
  if (mode === 'overlay') return svg(W, H, '');
  const defs = `<defs><linearGradient id="bg" x1="0" y1="0" x2="1" y2="1"><stop offset="0.4" stop-color="${p.primary}"/><stop offset="1" stop-color="${d.groundEnd}"/></linearGradient></defs>`;
  const seed = `${d.job.prompt}|${d.job.templateSlug ?? d.job.modelSlug ?? ''}|${d.job.presetId ?? ''}`;
  return svg(
    W,
    H,
    `${defs}<rect width="${W}" height="${H}" fill="url(#bg)"/>${textureSvg(style.texture, W, H, d.ink === '#ffffff' ? '#000000' : '#ffffff', seed)}`,
  );
}

/**
 * The product card: a soft drop shadow (blurred by libvips: an SVG blur filter costs seconds at
 * 4K) and the frame the slots (or the presenter alone) sit in.
 */
async function productCard(layout: AdLayout, fill: string): Promise<OverlayOptions[]> {
  const { product, unit: u, width: W, height: H } = layout;
  const rx = r(u * 0.025);
  const sd = Math.max(2, r(u * 0.012));
  const pad = sd * 3;
  // Shadow canvas: the card grown by `pad`, shifted down-right, clipped to the image.
  const x0 = Math.max(0, product.x + sd - pad);
  const y0 = Math.max(0, product.y + 2 * sd - pad);
  const x1 = Math.min(W, product.x + sd + product.w + pad);
  const y1 = Math.min(H, product.y + 2 * sd + product.h + pad);
  const shadowSvg = svg(
    x1 - x0,
    y1 - y0,
    `<rect x="${product.x + sd - x0}" y="${product.y + 2 * sd - y0}" width="${product.w}" height="${product.h}" rx="${rx}" fill="#000000" fill-opacity="0.3"/>`,
  );
  const shadow = await sharp(Buffer.from(shadowSvg)).blur(sd).png({ compressionLevel: 0 }).toBuffer();
  return [
    { input: shadow, left: x0, top: y0 },
    svgLayer(
      svg(product.w, product.h, `<rect width="${product.w}" height="${product.h}" rx="${rx}" fill="${fill}"/>`),
      product.x,
      product.y,
    ),
  ];
}

async function slotImage(job: GenerationJob, layout: AdLayout, i: number): Promise<OverlayOptions> {
  const slot = layout.slots[i];
  const refs = job.referenceImages;
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

/**
 * Headline face: the brand kit's first font, else the template's display face; other texts: the
 * kit's second, else its first, else the template's body face (bold; `textFace` is its regular).
 */
export function facesFor(job: Pick<GenerationJob, 'fonts' | 'templateSlug' | 'modelSlug'>): {
  headFace: FontFace;
  bodyFace: FontFace;
  textFace: FontFace;
} {
  const fonts = job.fonts ?? [];
  const style = adStyle(job);
  const body = fonts[1] ?? fonts[0] ?? style.body;
  return {
    headFace: fonts[0] ? fontFace(fonts[0], true) : fontFace(style.family, style.weight),
    bodyFace: fontFace(body, true),
    textFace: fontFace(body, false),
  };
}

function boundsOf(rects: Rect[]): Rect {
  const x0 = Math.min(...rects.map((a) => a.x));
  const y0 = Math.min(...rects.map((a) => a.y));
  const x1 = Math.max(...rects.map((a) => a.x + a.w));
  const y1 = Math.max(...rects.map((a) => a.y + a.h));
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** Decodes an asset image (avatar portrait, logo) within the pixel limit, or a non-retryable ProviderError naming it. */
export function assetImage(job: GenerationJob, bytes: Buffer, what: string, code: string) {
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

/** UGC: the portrait whole in its rect, over a blurred, darkened copy of it filling the avatar rect (no side of the portrait cut off). */
async function portraitLayers(job: GenerationJob, area: Rect, whole: Rect): Promise<OverlayOptions[]> {
  const raw = (w: number, h: number) => ({ width: w, height: h, channels: 4 as const });
  const back = await sharp(await avatarPixels(job, area), { raw: raw(area.w, area.h) })
    .blur(Math.max(1, r(Math.min(area.w, area.h) * 0.03)))
    .modulate({ brightness: 0.6 })
    .raw()
    .toBuffer();
  // The portrait's edges inside the area fade into the blurred copy (no hard seam).
  const fadeTop = whole.y > area.y ? 0 : 1;
  const fadeBottom = whole.y + whole.h < area.y + area.h ? 0 : 1;
  const mask = svg(
    whole.w,
    whole.h,
    `<defs><linearGradient id="f" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#fff" stop-opacity="${fadeTop}"/><stop offset="0.06" stop-color="#fff"/><stop offset="0.94" stop-color="#fff"/><stop offset="1" stop-color="#fff" stop-opacity="${fadeBottom}"/></linearGradient></defs><rect width="${whole.w}" height="${whole.h}" fill="url(#f)"/>`,
  );
  const front = await sharp(await avatarPixels(job, whole), { raw: raw(whole.w, whole.h) })
    .composite([{ input: Buffer.from(mask), blend: 'dest-in' }])
    .raw()
    .toBuffer();
  return [
    { input: back, raw: raw(area.w, area.h), left: area.x, top: area.y },
    { input: front, raw: raw(whole.w, whole.h), left: whole.x, top: whole.y },
  ];
}

/** The presenter disc: the portrait cut round, with a ring in the accent colour. */
async function avatarDisc(job: GenerationJob, box: Rect, palette: Palette): Promise<OverlayOptions[]> {
  const d = box.w;
  const mask = Buffer.from(svg(d, d, `<circle cx="${d / 2}" cy="${d / 2}" r="${d / 2}" fill="#fff"/>`));
  const face = await sharp(await avatarPixels(job, box), { raw: { width: d, height: d, channels: 4 } })
    .composite([{ input: mask, blend: 'dest-in' }])
    .png({ compressionLevel: 0 })
    .toBuffer();
  const sw = Math.max(2, r(d * 0.035));
  const ring = svg(
    d,
    d,
    `<circle cx="${d / 2}" cy="${d / 2}" r="${d / 2 - sw / 2}" fill="none" stroke="${palette.accent}" stroke-width="${sw}"/>`,
  );
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
  style: AdStyle;
  copy: AdCopy;
  /** The texts' alignment: left in a landscape ad's text column, else centred. */
  align: 'left' | 'centre';
  headFace: FontFace;
  bodyFace: FontFace;
  textFace: FontFace;
  /** The gradient's far colour. */
  groundEnd: string;
  /** The colour of texts drawn on the background. */
  ink: string;
  /** Texts on the background sit on a scrim (the ink lacks contrast somewhere on the gradient, or the ground is a picture). */
  scrim: boolean;
  /** The texts drawn so far. */
  texts: DrawnText[];
}

/**
 * The ink for the background (white, near-black or black: whichever reads best on the primary
 * colour, always at least 4.5:1) and the gradient's far colour: the brand's secondary blend where
 * the ink still reads on it, else the primary shaded away from the ink. Texts on the background
 * need a scrim only over a picture or a video.
 */
function groundFor(palette: Palette, mode: ComposeMode, kind: AdLayout['kind']): { ink: string; groundEnd: string; scrim: boolean } {
  const ink = readableOn(palette.primary);
  const blend = mix(palette.primary, palette.secondary, 0.6);
  const shade = mix(palette.primary, ink === '#ffffff' ? '#000000' : '#ffffff', 0.3);
  const groundEnd = contrast(ink, blend) >= 4.5 ? blend : shade;
  if (mode === 'overlay' || kind === 'ugc') return { ink: '#ffffff', groundEnd, scrim: true };
  return { ink, groundEnd, scrim: false };
}

/** The UGC portrait's shape and face box (measured once per ad). */
async function portraitShape(job: GenerationJob): Promise<LayoutInput['portraitShape']> {
  if (job.type !== 'ugc_ad' || !job.avatarImage) return undefined;
  const { img, fail } = assetImage(job, job.avatarImage, 'the avatar image', 'invalid_avatar_image');
  const meta = await img.metadata().catch(fail);
  const limits = { ...DEFAULT_PIXEL_LIMITS, maxPixels: job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels };
  // A catalog presenter says where its face and mouth are; an uploaded portrait's face is found.
  const face = job.presenter?.face ?? (await faceBox(job.avatarImage, limits).catch(fail));
  const [w, h] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
  return { aspect: (w ?? 1) / (h ?? 1), face, mouth: job.presenter?.mouth };
}

/** The layout, palette and drawing choices of `job`. */
async function drawFor(job: GenerationJob, mode: ComposeMode): Promise<AdDraw> {
  const layout = computeLayout({ ...job, portraitShape: await portraitShape(job) }, mode === 'overlay' ? 'overlay' : 'full');
  const style = adStyle(job);
  const given = Boolean(job.brandColors?.length || job.referenceColors?.length || job.presetId);
  const palette = style.light && !given ? lightPalette(paletteFor(job)) : paletteFor(job);
  const align = layout.orientation === 'landscape' && layout.kind !== 'model' && mode === 'full' ? 'left' : 'centre';
  const copy = adCopy(job);
  return {
    job,
    layout,
    palette,
    mode,
    style,
    copy,
    align,
    ...groundFor(palette, mode, layout.kind),
    ...facesFor(job),
    texts: [],
  };
}

/**
 * Renders the ad of `job` (at job.width × job.height) into RGBA pixels, with the manifest of its
 * texts. `split`: the picture and the texts as two layers (a video animates the picture only).
 */
export async function composeAd(job: GenerationJob, mode: ComposeMode = 'full', opts: { split?: boolean } = {}): Promise<ComposedAd> {
  const d = await drawFor(job, mode);
  const { layout } = d;
  const picture = mode !== 'overlay' ? await pictureLayers(d) : [];
  const texts = mode !== 'plate' ? await textLayers(d) : [];
  const bg = Buffer.from(backgroundSvg(d));
  const flat = (layers: OverlayOptions[], base: Buffer) => sharp(base).composite(layers).ensureAlpha().raw().toBuffer();
  const clear = Buffer.from(svg(layout.width, layout.height, ''));
  const pixels = await flat(opts.split ? picture : [...picture, ...texts], bg);
  const textPixels = opts.split ? await flat(texts, clear) : undefined;
  const manifest: MediaManifest = {
    width: layout.width,
    height: layout.height,
    texts: d.texts,
    safeZone: safeZoneFor(layout.width, layout.height),
  };
  return { layout, palette: d.palette, headline: d.copy.headline, pixels, textPixels, texts: d.texts, manifest };
}

/** The picture of a finished ad: the UGC portrait, the product card and its images, the presenter disc. */
async function pictureLayers(d: AdDraw): Promise<OverlayOptions[]> {
  const { job, layout, palette } = d;
  const layers: OverlayOptions[] = [];
  if (layout.avatar && layout.portrait) layers.push(...(await portraitLayers(job, layout.avatar, layout.portrait)));
  const card = layout.slots.length > 0 || (layout.avatar && layout.avatarShape === 'disc');
  if (card && layout.portrait) {
    // UGC: the product in a white card beside the face.
    const pad = Math.max(2, r(layout.unit * 0.012));
    const box = boundsOf(layout.slots);
    layers.push(
      svgLayer(
        svg(box.w + 2 * pad, box.h + 2 * pad, `<rect width="${box.w + 2 * pad}" height="${box.h + 2 * pad}" rx="${pad}" fill="#ffffff"/>`),
        box.x - pad,
        box.y - pad,
      ),
    );
  } else if (card) layers.push(...(await productCard(layout, layout.slots.length ? '#ffffff' : mix(palette.primary, '#ffffff', 0.82))));
  for (let i = 0; i < layout.slots.length; i++) layers.push(await slotImage(job, layout, i));
  if (layout.avatar && layout.avatarShape === 'disc') layers.push(...(await avatarDisc(job, layout.avatar, palette)));
  return layers;
}

/** The scrim behind a text on the background, when the ad needs one. */
const scrimOf = (d: AdDraw) =>
  d.scrim ? { fill: d.ink === '#ffffff' ? '#000000' : '#ffffff', opacity: d.ink === '#ffffff' ? 0.62 : 0.72 } : null;

/** Sets one text into its box, records it, and returns its layers (panel first). */
async function drawText(d: AdDraw, s: TextSpec): Promise<OverlayOptions[]> {
  const align = s.align ?? d.align;
  const pad = s.panel ? Math.max(2, r(d.layout.unit * 0.015)) : 0;
  const inner = { x: s.box.x + pad, y: s.box.y + pad, w: Math.max(1, s.box.w - 2 * pad), h: Math.max(1, s.box.h - 2 * pad) };
  const t = await setText(span(s.text, s.colour, s.extra ?? ''), inner, {
    face: s.face,
    align,
    maxPx: s.maxPx,
    spacing: 0,
    oneLine: s.oneLine,
    wholeWords: s.wholeWords,
  });
  const pos = place(d.layout, inner, t.width, t.height, align, s.va ?? 'middle');
  d.texts.push({
    text: s.text.replace(/\s+/g, ' ').trim(),
    role: s.role,
    box: { x: pos.left, y: pos.top, w: t.width, h: t.height },
    colour: s.colour,
  });
  const layers: OverlayOptions[] = [];
  if (s.panel) {
    const w = t.width + 2 * pad;
    const h = t.height + 2 * pad;
    layers.push(
      svgLayer(
        svg(w, h, `<rect width="${w}" height="${h}" rx="${pad}" fill="${s.panel.fill}" fill-opacity="${s.panel.opacity}"/>`),
        Math.max(0, pos.left - pad),
        Math.max(0, pos.top - pad),
      ),
    );
  }
  layers.push({ input: t.input, left: pos.left, top: pos.top });
  return layers;
}

/** The headline, subheadline, slot labels, brand line, logo, offer, CTA and badge. */
async function textLayers(d: AdDraw): Promise<OverlayOptions[]> {
  const { job, layout } = d;
  const layers = await headlineLayers(d);
  if (layout.structure && layout.body)
    layers.push(...(await structureLayers(partsOf(d, bodyUnderQuote(d, layout.body)), layout.structure)));
  for (let i = 0; i < layout.slotLabels.length && i < layout.slots.length; i++) layers.push(...(await slotLabel(d, i)));
  if (layout.brand) layers.push(...(await brandLayer(d, layout.brand)));
  // Logo: fitted inside its box, right-aligned, vertically centred.
  if (layout.logo && job.logo) layers.push(await logoLayer(job, layout.logo));
  if (layout.offer && d.copy.offer) layers.push(...(await offerLayers(d, layout.offer, d.copy.offer)));
  if (layout.cta) layers.push(...(await ctaLayers(d, layout.cta)));
  if (layout.badge && d.copy.badge) layers.push(...(await badgeLayers(d, layout.badge, d.copy.badge)));
  return layers;
}

/** A quote's foot (rating, attribution) right under the quote as drawn, not at the foot of the quote's box. */
function bodyUnderQuote(d: AdDraw, body: Rect): Rect {
  const quote = d.texts.find((x) => x.role === 'headline');
  if (d.layout.structure?.kind !== 'quote' || !quote) return body;
  return { ...body, y: Math.min(body.y, quote.box.y + quote.box.h + r(d.layout.unit * 0.01)) };
}

/** What the structure's parts (./ad-parts.ts) are drawn with (in `body` when given, else the layout's). */
function partsOf(d: AdDraw, body: Rect | null = d.layout.body): PartsDraw {
  return {
    layout: { ...d.layout, body },
    palette: d.palette,
    ink: d.ink,
    headFace: d.headFace,
    bodyFace: d.bodyFace,
    textFace: d.textFace,
    heroFace: d.job.fonts?.length ? d.bodyFace : fontFace(d.style.body, 'black'),
    upper: d.style.upper,
    text: (s) => drawText(d, s),
    lastBox: () => d.texts.at(-1)!.box,
  };
}

/** A split layout's slot label: a pill in the top-left of its pane. */
async function slotLabel(d: AdDraw, i: number): Promise<OverlayOptions[]> {
  const { layout, palette, bodyFace } = d;
  const slot = layout.slots[i];
  const px = Math.max(8, r(layout.unit * 0.035));
  const pad = r(px * 0.6);
  const fill = i === 0 ? '#333333' : palette.accent;
  const box = { x: slot.x + pad, y: slot.y + pad, w: Math.min(slot.w - 2 * pad, r(px * 8)), h: Math.min(slot.h - 2 * pad, r(px * 1.8)) };
  return drawText(d, {
    text: layout.slotLabels[i].toUpperCase(),
    role: 'label',
    box,
    colour: readableOn(fill),
    maxPx: px,
    face: bodyFace,
    align: 'left',
    va: 'top',
    panel: { fill, opacity: 1 },
    oneLine: true,
  });
}

/** Five stars in the accent colour (a testimonial's rating), centred in `box`. */
function starsLayer(d: AdDraw, box: Rect): OverlayOptions {
  const s = Math.max(6, Math.min(box.h, r(box.w / 6)));
  const star = (cx: number) =>
    Array.from({ length: 10 }, (_, k) => {
      const a = (Math.PI / 5) * k - Math.PI / 2;
      const rad = k % 2 ? s * 0.22 : s * 0.5;
      return `${r(cx + rad * Math.cos(a))},${r(s / 2 + rad * Math.sin(a))}`;
    }).join(' ');
  const w = s * 5;
  const body = [0, 1, 2, 3, 4].map((i) => `<polygon points="${star(s * i + s / 2)}" fill="${d.palette.accent}"/>`).join('');
  return svgLayer(svg(w, s, body), d.align === 'left' ? box.x : box.x + r((box.w - w) / 2), box.y);
}

/** The headline (in the template's case; a quote in quotation marks with stars under it), the subheadline and the accent rule. */
async function headlineLayers(d: AdDraw): Promise<OverlayOptions[]> {
  const { layout, copy, style, mode } = d;
  const u = layout.unit;
  const poster = !layout.pictured && mode !== 'overlay';
  const quote = layout.structure?.kind === 'quote' ? layout.structure.quote : null;
  let text = style.upper ? copy.headline.toUpperCase() : copy.headline;
  if (layout.kind === 'quote') text = quote ?? `“${copy.headline}”`;
  const quotePx = layout.orientation === 'square' ? 0.085 : 0.105;
  // A landscape poster without a structure has a whole column for its headline: set it larger.
  const posterPx = layout.orientation === 'landscape' && !layout.structure ? 0.17 : 0.125;
  const maxPx = r(u * (layout.kind === 'model' ? 0.05 : layout.kind === 'ugc' ? 0.075 : quote ? quotePx : poster ? posterPx : 0.1));
  const quoteStars = layout.kind === 'quote' && mode !== 'overlay' && !quote;
  const starH = quoteStars ? r(u * 0.05) : 0;
  const box = { ...layout.headline, h: layout.headline.h - starH };
  const panel = layout.kind === 'ugc' || mode === 'overlay' ? { fill: '#000000', opacity: 0.62 } : scrimOf(d);
  const layers = await drawText(d, { text, role: 'headline', box, colour: d.ink, maxPx, face: d.headFace, panel });
  const drawn = d.texts.at(-1)!.box;
  if (quote && layout.body) {
    // The quote, its mark and its foot as one group, centred in the space they share.
    const dy = Math.max(0, r((layout.body.y - (drawn.y + drawn.h)) / 2));
    for (const l of layers) l.top = (l.top ?? 0) + dy;
    drawn.y += dy;
    layers.push(quoteMarkLayer(partsOf(d), drawn));
  }
  const below = drawn.y + drawn.h + r(u * (quoteStars ? 0.015 : 0.035));
  const starY = Math.min(below, layout.headline.y + layout.headline.h - starH);
  if (quoteStars) layers.push(starsLayer(d, { x: layout.headline.x, y: starY, w: layout.headline.w, h: starH }));
  else if (d.style.rule && mode === 'full') {
    // The accent rule, where the headline's box has room for it.
    const w = r(u * 0.12);
    const h = Math.max(2, r(u * 0.012));
    const left = d.align === 'left' ? box.x : box.x + r((box.w - w) / 2);
    if (below + h <= layout.headline.y + layout.headline.h)
      layers.push(svgLayer(svg(w, h, `<rect width="${w}" height="${h}" fill="${d.palette.accent}"/>`), left, below));
  }
  if (layout.subheadline && copy.subheadline) {
    const face = d.textFace;
    const sub = {
      text: copy.subheadline,
      role: 'subheadline',
      box: layout.subheadline,
      colour: d.ink,
      maxPx: r(u * 0.045),
      face,
      panel,
      va: 'top' as const,
    };
    layers.push(...(await drawText(d, sub)));
  }
  return layers;
}

/** The brand line: the UGC presenter's handle and the brand name, spaced capitals, fitted into its band. */
async function brandLayer(d: AdDraw, box: Rect): Promise<OverlayOptions[]> {
  const { job, layout } = d;
  const parts: string[] = [];
  if (layout.kind === 'ugc' && job.avatarName) parts.push(`@${job.avatarName.replace(/\s+/g, '').toLowerCase()}`);
  if (job.brandName) parts.push(job.brandName.toUpperCase());
  const px = Math.max(8, r(box.h * 0.62));
  const panel = layout.kind === 'ugc' || d.mode === 'overlay' ? { fill: '#000000', opacity: 0.62 } : scrimOf(d);
  const extra = ` letter_spacing="${r(px * 0.1 * 1024)}"`;
  return drawText(d, {
    text: parts.join('  ·  '),
    role: 'brand',
    box,
    colour: d.ink,
    maxPx: px,
    face: d.bodyFace,
    extra,
    panel,
    oneLine: true,
  });
}

/** The offer: a tag in the ink colour with the text in the colour that reads on it. */
async function offerLayers(d: AdDraw, box: Rect, offer: string): Promise<OverlayOptions[]> {
  const fill = d.mode === 'overlay' || d.layout.kind === 'ugc' ? d.palette.accent : d.ink;
  return drawText(d, {
    text: offer,
    role: 'offer',
    box,
    colour: readableOn(fill),
    maxPx: r(d.layout.unit * 0.045),
    face: d.bodyFace,
    panel: { fill, opacity: 1 },
  });
}

/**
 * The CTA button: a pill in the accent colour with its text fitted inside and a drawn arrow after
 * it (a glyph arrow, Inter's wide one, made OCR drop the words before it), far enough from the
 * words that it never reads as a glyph of theirs.
 */
async function ctaLayers(d: AdDraw, c: Rect): Promise<OverlayOptions[]> {
  const { palette, align } = d;
  // The button in Montserrat Bold unless the brand kit names fonts (OCR reads Inter Bold's "now" as "how" from 36 px up).
  const face = d.job.fonts?.length ? d.bodyFace : fontFace('Montserrat', 'bold');
  const padX = r(c.h * 0.55);
  const ink = readableOn(palette.accent);
  const textH = r(c.h * 0.62);
  const t = await setText(span(d.copy.cta, ink), { w: c.w - 2 * padX - textH, h: textH }, { face, maxPx: r(c.h * 0.46), oneLine: true });
  const arrow = t.height;
  const gap = r(arrow * 0.5);
  const inner = t.width + gap + arrow;
  const bw = Math.max(Math.min(c.w, inner + 2 * padX), r(c.w * 0.5));
  const bx = align === 'left' ? c.x : c.x + r((c.w - bw) / 2);
  const box = { x: bx + r((bw - inner) / 2), y: c.y + r((c.h - t.height) / 2), w: t.width, h: t.height };
  d.texts.push({ text: d.copy.cta.replace(/\s+/g, ' '), role: 'cta', box, colour: ink });
  return [
    svgLayer(svg(bw, c.h, `<rect width="${bw}" height="${c.h}" rx="${r(c.h / 2)}" fill="${palette.accent}"/>`), bx, c.y),
    { input: t.input, left: box.x, top: box.y },
    svgLayer(markSvg('arrow', arrow, ink, null), box.x + t.width + gap, box.y),
  ];
}

/** The badge: a disc (clipped to the canvas) and its text fitted in the disc's inner square. */
async function badgeLayers(d: AdDraw, b: NonNullable<AdLayout['badge']>, badge: string): Promise<OverlayOptions[]> {
  const { layout, palette, bodyFace } = d;
  const x0 = Math.max(0, b.cx - b.r);
  const y0 = Math.max(0, b.cy - b.r);
  const x1 = Math.min(layout.width, b.cx + b.r);
  const y1 = Math.min(layout.height, b.cy + b.r);
  const sw = Math.max(2, r(b.r * 0.05));
  const ink = readableOn(palette.accent);
  const disc = svgLayer(
    svg(
      x1 - x0,
      y1 - y0,
      `<circle cx="${b.cx - x0}" cy="${b.cy - y0}" r="${b.r - sw / 2}" fill="${palette.accent}" stroke="${ink}" stroke-width="${sw}"/>`,
    ),
    x0,
    y0,
  );
  const side = r(b.r * 1.3);
  const box = { x: b.cx - r(side / 2), y: b.cy - r(side * 0.35), w: side, h: r(side * 0.7) };
  return [
    disc,
    ...(await drawText(d, {
      text: badge,
      role: 'badge',
      box,
      colour: ink,
      maxPx: r(b.r * 0.6),
      face: bodyFace,
      align: 'centre',
      oneLine: true,
    })),
  ];
}

export function encodeRaw(ad: ComposedAd, opaque = true, pixels: Buffer = ad.pixels): Sharp {
  const img = sharp(pixels, { raw: { width: ad.layout.width, height: ad.layout.height, channels: 4 } });
  return opaque ? img.removeAlpha() : img;
}

/** The finished ad in `format` with the manifest of its texts (see renderAdImage). */
export async function renderAd(job: GenerationJob, format: ImageFormat): Promise<{ buffer: Buffer; manifest: MediaManifest }> {
  let img: Sharp;
  let manifest: MediaManifest;
  if (job.heroImage) ({ img, manifest } = await overHero(job, job.heroImage));
  else {
    const ad = await composeAd(job, job.textless ? 'plate' : 'full');
    ({ manifest } = ad);
    img = encodeRaw(ad, true);
  }
  if (format === 'jpeg') return { buffer: await img.jpeg({ quality: 92, mozjpeg: false }).toBuffer(), manifest };
  if (format === 'webp') return { buffer: await img.webp({ quality: 90, smartSubsample: true }).toBuffer(), manifest };
  return { buffer: await img.png({ compressionLevel: 6 }).toBuffer(), manifest };
}

/**
 * The finished ad in `format`, exactly job.width × job.height: composed here, or (job.heroImage)
 * the template's texts, brand and CTA composited over the model's hero picture, cover-fitted to
 * the frame; (job.textless) the picture without texts.
 */
export async function renderAdImage(job: GenerationJob, format: ImageFormat): Promise<Buffer> {
  return (await renderAd(job, format)).buffer;
}

async function overHero(job: GenerationJob, hero: string): Promise<{ img: Sharp; manifest: MediaManifest }> {
  const limitInputPixels = job.maxInputPixels ?? DEFAULT_PIXEL_LIMITS.maxPixels;
  const base = await sharp(hero, { limitInputPixels })
    .rotate()
    .resize(job.width, job.height, { fit: 'cover', position: sharp.strategy.attention })
    .removeAlpha()
    .toBuffer();
  const ad = await composeAd(job, 'overlay');
  const overlay = await encodeRaw(ad, false).png({ compressionLevel: 0 }).toBuffer();
  const img = sharp(
    await sharp(base)
      .composite([{ input: overlay }])
      .removeAlpha()
      .png({ compressionLevel: 0 })
      .toBuffer(),
  );
  return { img, manifest: ad.manifest };
}
