// Reading back the words a renderer drew (src/media/ocr.ts, Tesseract): the whole image, then
// overlapping bands of a quarter of its height (Tesseract skips a short line, such as a button's
// text, on a busy page). Callers end the OCR worker with stopOcr() in their teardown.
import sharp from 'sharp';
import { recognizeText } from '../../src/media/ocr.ts';

/** Lower case, every run of punctuation and spaces one space. */
export const normWords = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** The words OCR reads in an image, normalised (normWords), the readings of its bands joined by " | ". */
export async function ocrWords(png: Buffer): Promise<string> {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  const parts = [png];
  for (let i = 0; i < 7; i++) {
    const top = Math.round((i * height) / 8);
    const band = { left: 0, top, width, height: Math.min(Math.round(height / 4), height - top) };
    parts.push(await sharp(png).extract(band).greyscale().normalise().png().toBuffer());
  }
  const read: string[] = [];
  for (const part of parts) {
    const { text, timedOut } = await recognizeText(part, 60_000);
    if (timedOut) throw new Error('OCR timed out');
    read.push(normWords(text));
  }
  return read.join(' | ');
}
