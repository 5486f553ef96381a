// Text checks of the media quality checker (./check.ts): where a placed text sits (textPlacement)
// and whether OCR reads its words back (readBack).
//
// Read-back: the box, with a little padding, is cut from the frame as the distance of each pixel
// from the text's colour (./pixels.ts inkImage: black glyphs on white, which Tesseract reads best,
// whatever outline, scrim or photo is behind them), upscaled so a short box is about 100 px tall
// (read again at about 60 px when that reading fails: see OCR_LINE_PX), then read by OCR (../ocr.ts)
// with the model of the manifest's language. Both the placed words and the words read are
// normalised (lower case, letters and digits only, ß as ss; accents dropped only when the text's
// language has no OCR model of its own, since the English model reads é as e and ñ as n) and
// compared without spaces (OCR splits and joins words freely): similarity = 1 − Levenshtein
// distance ÷ the longer length. It passes at ≥ 0.8 (a real render reads ≥ 0.9; another text or
// one with a word missing falls well below) AND when the placed text's last word is found at the
// end of what was read (a clipped line loses its last word first; an edit per 4 letters allowed).
import type { Box, PlacedText } from './manifest.ts';
import { MARGIN, type SafeZone } from './manifest.ts';
import { hasOwnModel } from '../ocr.ts';

export const READ_BACK_THRESHOLD = 0.8;

/**
 * Placed words as compared: lower case, letters and digits, single spaces, ß as ss (upper case sets
 * it SS); without accents (NFKD, marks dropped) unless `accents` (the OCR read them with a model
 * of their language).
 */
export function normaliseWords(text: string, accents = false): string {
  const folded = accents ? text.normalize('NFC') : text.normalize('NFKD').replace(/\p{M}/gu, '');
  return folded
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Levenshtein distance (insert, delete, substitute: 1 each). */
export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** 1 − edit distance ÷ longer length, of the normalised texts without spaces. */
export function textSimilarity(placed: string, read: string, accents = false): number {
  const a = normaliseWords(placed, accents).replace(/ /g, '');
  const b = normaliseWords(read, accents).replace(/ /g, '');
  if (!a.length && !b.length) return 1;
  return 1 - levenshtein(a, b) / Math.max(a.length, b.length);
}

/** Whether the last word of `placed` ends what was `read` (an edit per 4 letters allowed). */
export function lastWordRead(placed: string, read: string, accents = false): boolean {
  const words = normaliseWords(placed, accents).split(' ').filter(Boolean);
  const last = words.at(-1);
  if (!last) return true;
  const tail = normaliseWords(read, accents)
    .replace(/ /g, '')
    .slice(-(last.length + 2));
  const allowed = Math.floor(last.length / 4);
  for (let start = 0; start < tail.length; start++)
    for (const len of [last.length - 1, last.length, last.length + 1])
      if (len > 0 && start + len <= tail.length && levenshtein(last, tail.slice(start, start + len)) <= allowed) return true;
  return false;
}

export interface ReadBackVerdict {
  similarity: number;
  lastWord: boolean;
  pass: boolean;
}

/** The verdict on a text in `language` (ISO 639-1; accents count when OCR has a model of that language). */
export function readBackVerdict(placed: string, read: string, language?: string): ReadBackVerdict {
  const accents = hasOwnModel(language);
  const similarity = textSimilarity(placed, read, accents);
  const lastWord = lastWordRead(placed, read, accents);
  return { similarity, lastWord, pass: similarity >= READ_BACK_THRESHOLD && lastWord };
}

/** The padding around a box that OCR and the overflow test look at: 15 % of its height, 6–24 px. */
export const padOf = (box: Box) => Math.round(Math.min(24, Math.max(6, 0.15 * box.h)));

/**
 * The heights (px) a short box is upscaled to for OCR, in the order tried: about 100 px, and when
 * that reading fails, about 60 px. Tesseract's LSTM misreads a glyph now and then at one size and
 * not at another (DejaVu Bold "now" read as "how" in a 34 px CTA at 100 px, in a 31 px one at
 * 60 px); a clipped or wrong text reads wrong at both, since the pixels lack the words.
 */
export const OCR_LINE_PX = [100, 60] as const;

/** The upscale factor that makes a short box about `px` tall (at most 4×). */
export const upscaleOf = (box: Box, px: number = OCR_LINE_PX[0]) => Math.min(4, Math.max(1, px / Math.max(1, box.h)));

/** Boxes at least this tall are also read at half their size. */
export const HALF_SIZE_FROM_PX = 200;

/**
 * The scales a box is read at for OCR, in the order tried until a reading passes: those that make
 * it about OCR_LINE_PX tall (a box already that tall: its own size, once); then, for display type
 * taller than a line of print, scaled down (three quarters, half size, then to each OCR_LINE_PX height).
 * Tesseract drops glyphs and whole lines of very large type (a 160 px headline's last line, Playfair
 * "farm in" at 190 px read as "farm") that it reads at 100 px; a wrong or clipped text reads wrong
 * at every size.
 */
export function ocrScales(box: Box): number[] {
  const up = OCR_LINE_PX.map((px) => upscaleOf(box, px));
  const down = box.h > 1.5 * OCR_LINE_PX[0] ? OCR_LINE_PX.map((px) => px / box.h) : [];
  // A block taller than a line of print (two lines of body text) at three quarters too: Tesseract
  // drops the end of a last line ("every year.") that it reads slightly smaller.
  if (box.h > OCR_LINE_PX[0]) down.push(0.75);
  if (box.h >= HALF_SIZE_FROM_PX) down.push(0.5);
  return [...new Set([...up, ...down.sort((a, b) => b - a)])];
}

export interface Placement {
  pass: boolean;
  /** The smallest distance of the box from an edge, as a fraction of that side (negative: outside). */
  margin: number;
  problems: string[];
}

/** Whether a placed box keeps the 4 % margins and stays out of the safe zone's top and bottom bands. */
export function textPlacement(text: PlacedText, width: number, height: number, safeZone?: SafeZone): Placement {
  const { x, y, w, h } = text.box;
  const sides = { left: x / width, right: (width - x - w) / width, top: y / height, bottom: (height - y - h) / height };
  const problems: string[] = [];
  const eps = 0.5 / Math.min(width, height);
  for (const [side, m] of Object.entries(sides)) {
    if (m < 0) problems.push(`outside the frame at the ${side} (${pct(m)})`);
    else if (m < MARGIN - eps) problems.push(`${side} margin ${pct(m)} < ${pct(MARGIN)}`);
  }
  if (safeZone && sides.top < safeZone.top - eps)
    problems.push(`inside the top UI zone (${pct(sides.top)} from the top < ${pct(safeZone.top)})`);
  if (safeZone && sides.bottom < safeZone.bottom - eps)
    problems.push(`inside the bottom UI zone (${pct(sides.bottom)} from the bottom < ${pct(safeZone.bottom)})`);
  return { pass: problems.length === 0, margin: Math.min(...Object.values(sides)), problems };
}

export const pct = (f: number) => `${Math.round(f * 1000) / 10} %`;
