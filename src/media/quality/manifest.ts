// What a renderer knows about the media it made, for the media quality checker (./check.ts):
// every text element it placed (the words, the box it fits in, when it shows), the platform's
// UI zones it had to avoid, where its scenes change and when the narration speaks. Renderers
// return one next to their output; `npm run check:media -- FILE` reads it from FILE.media.json
// when present (without it, the checks that need no manifest still run).

/** A rectangle in pixels of the output frame. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** One text element as drawn. */
export interface PlacedText {
  /** The words exactly as drawn (line breaks as spaces). */
  text: string;
  /** The box the drawn glyphs fit in (pixels, at the output's size). */
  box: Box;
  /** What it is: headline, subheadline, cta, offer, badge, brand, caption, slide, title … */
  role: string;
  /** For video: when it shows (seconds); absent for images (always). */
  fromSeconds?: number;
  toSeconds?: number;
  /** The glyphs' fill colour (#rrggbb) when known: the contrast check then knows which colour is the text. */
  color?: string;
  /** Other fill colours some of its glyphs have (a karaoke or highlight word), when known. */
  colors?: string[];
}

/** Fractions of the frame height a platform's UI covers (9:16 feeds: top 0.14, bottom 0.20). */
export interface SafeZone {
  top: number;
  bottom: number;
}

export interface MediaManifest {
  /** Output size in pixels. */
  width: number;
  height: number;
  texts: PlacedText[];
  /** The UI zones texts must stay out of; absent: only the 4 % margins apply. */
  safeZone?: SafeZone;
  /** Video: the start of each scene or slide (seconds), first at 0. */
  sceneStarts?: number[];
  /** Video: the spans the narration speaks (seconds). */
  narration?: { fromSeconds: number; toSeconds: number }[];
  /** Video: the duration asked for (seconds), for narration coverage. */
  requestedSeconds?: number;
  /** The language of the texts (ISO 639-1, e.g. es), when not English: OCR reads them with its model (../ocr.ts ocrLanguages). */
  language?: string;
}

/** The UI zones of 9:16 feeds (TikTok, Reels, Shorts): caption, buttons and tabs. */
export const PORTRAIT_SAFE_ZONE: SafeZone = { top: 0.14, bottom: 0.2 };
/** The margin every text keeps from each edge (fraction of the frame's side). */
export const MARGIN = 0.04;

/** Where `npm run check:media` looks for the manifest of `file`. */
export const manifestPathOf = (file: string): string => `${file}.media.json`;

/** The safe zone of an output of this size: 9:16-like portrait frames have one, others none. */
export function safeZoneFor(width: number, height: number): SafeZone | undefined {
  return height / width >= 1.6 ? PORTRAIT_SAFE_ZONE : undefined;
}
