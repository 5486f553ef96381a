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
