// Reading back the words a renderer drew (src/media/ocr.ts, Tesseract): the whole image, then
// overlapping bands of a quarter of its height (Tesseract skips a short line, such as a button's
// text, on a busy page), then, when the caller has the manifest of what the renderer placed, each
// placed text's box with a margin around it. Tesseract binarises a page with one threshold: a
// light button with dark text on a darker ground (or a dark button with light text on a lighter
// ground) comes out as one blob and its words are lost in every band; the box alone reads. The
// boxes only say where to look: the words still have to be read from the pixels. Callers end the
// OCR worker with stopOcr() in their teardown.
import sharp from 'sharp';
import { recognizeText } from '../../src/media/ocr.ts';
import type { MediaManifest } from '../../src/media/quality/manifest.ts';

/** Lower case, every run of punctuation and spaces one space. */
export const normWords = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * A placed text's box with a margin of 15 % of its height (6–24 px), inside the image, scaled to
 * about 100 px tall: short texts upscaled, and display type taller than 150 px scaled down
 * (Tesseract misreads the glyphs of very large condensed type that it reads at 100 px).
 */
async function boxImage(png: Buffer, width: number, height: number, box: { x: number; y: number; w: number; h: number }) {
  const pad = Math.round(Math.min(24, Math.max(6, 0.15 * box.h)));
  const left = Math.max(0, box.x - pad);
  const top = Math.max(0, box.y - pad);
  const region = { left, top, width: Math.min(width, box.x + box.w + pad) - left, height: Math.min(height, box.y + box.h + pad) - top };
  if (region.width < 4 || region.height < 4) return undefined;
  const tall = Math.max(1, box.h);
  const scale = tall > 150 ? 100 / tall : Math.min(4, Math.max(1, 100 / tall));
  return sharp(png)
    .extract(region)
    .resize({ width: Math.round(region.width * scale), kernel: 'lanczos3' })
    .greyscale()
    .normalise()
    .png()
    .toBuffer();
}

/**
 * The words OCR reads in an image, normalised (normWords), the readings of its bands (and of the
 * boxes of `manifest`'s texts, when given) joined by " | ".
 */
export async function ocrWords(png: Buffer, manifest?: Pick<MediaManifest, 'texts'>): Promise<string> {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  const parts = [png];
  for (let i = 0; i < 7; i++) {
    const top = Math.round((i * height) / 8);
    const band = { left: 0, top, width, height: Math.min(Math.round(height / 4), height - top) };
    parts.push(await sharp(png).extract(band).greyscale().normalise().png().toBuffer());
  }
  for (const text of manifest?.texts ?? []) {
    const part = await boxImage(png, width, height, text.box);
    if (part) parts.push(part);
  }
  const read: string[] = [];
  for (const part of parts) {
    const { text, timedOut } = await recognizeText(part, 60_000);
    if (timedOut) throw new Error('OCR timed out');
    read.push(normWords(text));
  }
  return read.join(' | ');
}
