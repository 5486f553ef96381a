// The face-centred square crop of an uploaded avatar portrait. sharp's `attention` strategy
// (libvips' smartcrop: the region with the most luminance frequency, saturation and skin tones)
// picks the window; on a portrait that is the face.
import sharp from 'sharp';
import type { PixelLimits } from './limits.ts';

/** Side of the stored portrait at most (smaller uploads are not enlarged). */
export const PORTRAIT_MAX_SIDE = 1024;

/** A square PNG of the upload's shorter side (at most PORTRAIT_MAX_SIDE), centred on the face region. */
export async function facePortrait(bytes: Buffer, limits: PixelLimits): Promise<{ png: Buffer; side: number }> {
  const img = sharp(bytes, { limitInputPixels: limits.maxPixels }).rotate();
  const meta = await img.metadata();
  const side = Math.min(meta.width ?? 0, meta.height ?? 0, PORTRAIT_MAX_SIDE);
  const png = await img.resize({ width: side, height: side, fit: 'cover', position: sharp.strategy.attention }).png().toBuffer();
  return { png, side };
}

/** A box in fractions (0–1) of a picture's width and height. */
export interface FractionBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

const SAMPLE = 120;

/** Skin by the YCbCr rule (Chai & Ngan: Cb 77–127, Cr 133–173) and the RGB order of skin (R > G ≥ B). */
const isSkin = (r: number, g: number, b: number) => {
  const y = 0.299 * r + 0.587 * g + 0.114 * b;
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  return y > 50 && r > g + 10 && g >= b && cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173;
};

/**
 * Where the face is in a portrait (fractions of its frame): the pixels near the most common skin
 * colour, then the rows of them at least half as wide as the widest row, contiguous with it (the
 * face, not the neck, shoulders or a shirt of a skin-like hue). Null without enough skin.
 */
export async function faceBox(bytes: Buffer, limits: PixelLimits): Promise<FractionBox | null> {
  const { data, info } = await sharp(bytes, { limitInputPixels: limits.maxPixels })
    .rotate()
    .resize(SAMPLE, SAMPLE, { fit: 'fill' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const mask = faceSkinMask(data);
  if (!mask) return null;
  // A face sits in the upper three quarters of a portrait.
  const rows = rowSpans(mask, info.width, info.height).map((r, y) => (y < info.height * 0.75 ? r : { n: 0, x0: 0, x1: -1 }));
  const widest = rows.reduce((best, r, i) => (r.n > rows[best].n ? i : best), 0);
  if (rows[widest].n < info.width * 0.08) return null;
  let top = widest;
  let bottom = widest;
  while (top > 0 && rows[top - 1].n >= rows[widest].n * 0.5) top--;
  while (bottom < rows.length - 1 && rows[bottom + 1].n >= rows[widest].n * 0.5) bottom++;
  const x0 = Math.min(...rows.slice(top, bottom + 1).map((r) => r.x0));
  const x1 = Math.max(...rows.slice(top, bottom + 1).map((r) => r.x1));
  return { x: x0 / info.width, y: top / info.height, w: (x1 - x0 + 1) / info.width, h: (bottom - top + 1) / info.height };
}

/** The pixels within reach of the most common skin colour (16-level bins) of the upper middle, or null without skin. */
function faceSkinMask(data: Buffer): Uint8Array | null {
  const bins = new Map<number, number>();
  const key = (i: number) => ((data[i] >> 4) << 8) | ((data[i + 1] >> 4) << 4) | (data[i + 2] >> 4);
  // Counted where a portrait has its face: the middle of its upper part.
  for (let y = Math.round(SAMPLE * 0.3); y < SAMPLE * 0.55; y++)
    for (let x = Math.round(SAMPLE * 0.35); x < SAMPLE * 0.65; x++) {
      const i = (y * SAMPLE + x) * 3;
      if (isSkin(data[i], data[i + 1], data[i + 2])) bins.set(key(i), (bins.get(key(i)) ?? 0) + 1);
    }
  if (bins.size === 0) return null;
  const mode = [...bins.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const [mr, mg, mb] = [(mode >> 8) * 16 + 8, ((mode >> 4) & 15) * 16 + 8, (mode & 15) * 16 + 8];
  const mask = new Uint8Array(data.length / 3);
  for (let i = 0, p = 0; i < data.length; i += 3, p++)
    mask[p] = Math.abs(data[i] - mr) + Math.abs(data[i + 1] - mg) + Math.abs(data[i + 2] - mb) < 70 ? 1 : 0;
  return mask;
}

/** Per row: how many mask pixels, and the first and last of them. */
function rowSpans(mask: Uint8Array, w: number, h: number): { n: number; x0: number; x1: number }[] {
  const rows: { n: number; x0: number; x1: number }[] = [];
  for (let y = 0; y < h; y++) {
    let n = 0;
    let x0 = w;
    let x1 = -1;
    for (let x = 0; x < w; x++) {
      if (!mask[y * w + x]) continue;
      n++;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
    }
    rows.push({ n, x0, x1 });
  }
  return rows;
}

/** Where the mouth is, from the face box: centred, at 72 % of its height, 30 % of its width. */
export function mouthBox(face: FractionBox): FractionBox {
  const w = face.w * 0.3;
  const h = face.h * 0.12;
  return { x: face.x + (face.w - w) / 2, y: face.y + face.h * 0.72 - h / 2, w, h };
}
