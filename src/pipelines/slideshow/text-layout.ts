// How a slide's words are set as its editable text item: big, bold type centred in a band, as
// text carousels set them. The band is the slide's hero zone (its middle, out of the 9:16 UI
// zones) when the slide shows no picture, else the text zone above the card or over the top of a
// full-bleed picture (src/engines/local/slide.ts slideGeometry). The words are broken into lines
// here, each narrower than the band, so the renderer never wraps them again and the manifest's
// boxes are the drawn ones; the size is the largest (up to a cap: the hook's larger) at which
// every line fits and the block fits the band, and the block is centred in the band.
import type { components } from '../../../generated/openapi.d.ts';
import { fontFamily } from '../../media/ass.ts';
import { fontFace, textWidth, type FontFace } from '../../media/fonts.ts';
import type { Rect } from '../../engines/local/slide.ts';

type TextStyle = components['schemas']['TextStyle'];
type Transform = components['schemas']['Transform'];

/** The display face of the slides' headlines, and the face of their bodies, when the brand kit names none. */
export const SLIDE_FONT = 'Montserrat';
export const SLIDE_BODY_FONT = 'Inter';
/** libass sets a font size of `size` px at an em of size / this (src/engines/render/manifest.ts LINE_EMS). */
const LINE_EMS = 1.164;
/** Lines are set at most this share of the band's width (the shapers of pango and libass differ by a few pixels). */
const FILL = 0.94;

export interface SlideTextLayout {
  /** The words with a line break after each line. */
  text: string;
  style: TextStyle;
  transform: Transform;
  lines: number;
}

/** Greedy line breaking of each paragraph of `text`, given each word's width and a space's at the same size. */
function breakLines(paragraphs: { word: string; w: number }[][], space: number, room: number): string[] | undefined {
  const out: string[] = [];
  for (const words of paragraphs) {
    let line: string[] = [];
    let width = 0;
    for (const { word, w } of words) {
      if (w > room) return undefined;
      const next = line.length ? width + space + w : w;
      if (next > room && line.length) {
        out.push(line.join(' '));
        line = [word];
        width = w;
      } else {
        line.push(word);
        width = next;
      }
    }
    if (line.length) out.push(line.join(' '));
  }
  return out;
}

/**
 * The layout of a slide's words in `band` (pixels of a width × height frame): the largest size up
 * to `maxSize` (down to `minSize`) at which they fit, broken into lines, the block centred.
 */
export async function layoutSlideText(
  words: string,
  opts: {
    frame: { width: number; height: number };
    band: Rect;
    maxSize: number;
    minSize: number;
    style: TextStyle;
  },
): Promise<SlideTextLayout> {
  const { frame, band, style } = opts;
  const face: FontFace = fontFace(fontFamily(style.font_family), (style.font_weight ?? 700) >= 600);
  const outline = style.stroke_width ?? 0;
  // Widths scale with the size: each word is measured once, at an em of 100 px.
  const at100 = async (s: string) => textWidth(s, face, 100);
  const paragraphs = await Promise.all(
    words
      .split('\n')
      .map((p) => p.trim().split(/\s+/).filter(Boolean))
      .filter((p) => p.length)
      .map((p) => Promise.all(p.map(async (word) => ({ word, w: await at100(word) })))),
  );
  const space = (await at100('x x')) - (await at100('xx'));
  const room = band.w * FILL - 2 * outline;
  let size = Math.round(opts.maxSize);
  let lines: string[] = [];
  for (; ; size = Math.floor(size * 0.95)) {
    const em = size / LINE_EMS / 100;
    const scaled = paragraphs.map((p) => p.map(({ word, w }) => ({ word, w: w * em })));
    const broken = breakLines(scaled, space * em, room);
    if (broken && broken.length * size + 2 * outline <= band.h) {
      lines = broken;
      break;
    }
    if (size <= opts.minSize) {
      lines = breakLines(scaled, space * em, room) ?? paragraphs.map((p) => p.map((x) => x.word).join(' '));
      break;
    }
  }
  const blockH = lines.length * size + 2 * outline;
  const top = band.y + Math.max(0, (band.h - blockH) / 2);
  const t3 = (v: number) => Math.round(v * 1000) / 1000;
  const width = band.w / frame.width;
  return {
    text: lines.join('\n'),
    style: { ...style, font_size: size, top: t3(top / frame.height), align: 'center', left: 0.5 },
    transform: { left: t3((1 - width) / 2), top: t3(top / frame.height), width: t3(width), height: t3(blockH / frame.height), opacity: 1 },
    lines: lines.length,
  };
}

/** `layout` moved so its block's top is at `topPx`. */
function placedAt(layout: SlideTextLayout, topPx: number, height: number): SlideTextLayout {
  const top = Math.round((topPx / height) * 1000) / 1000;
  return { ...layout, style: { ...layout.style, top }, transform: { ...layout.transform, top } };
}

/**
 * A slide's headline and body as two text items, stacked and centred in `band`: the headline in
 * the display style up to `headingMax` px, the body in the text style up to `bodyMax`, a gap of
 * half the body's size between them; both scaled down together until the stack fits.
 */
export async function stackSlideText(
  parts: { heading: string; body: string },
  opts: {
    frame: { width: number; height: number };
    band: Rect;
    headingMax: number;
    bodyMax: number;
    minSize: number;
    heading: TextStyle;
    body: TextStyle;
  },
): Promise<SlideTextLayout[]> {
  const { frame, band } = opts;
  for (let scale = 1; ; scale *= 0.92) {
    const size = (max: number) => Math.max(opts.minSize, Math.round(max * scale));
    const head = parts.heading
      ? await layoutSlideText(parts.heading, { frame, band, maxSize: size(opts.headingMax), minSize: opts.minSize, style: opts.heading })
      : undefined;
    const bodySize = size(opts.bodyMax);
    const body = parts.body
      ? await layoutSlideText(parts.body, { frame, band, maxSize: bodySize, minSize: opts.minSize, style: opts.body })
      : undefined;
    const hh = head ? head.transform.height * frame.height : 0;
    const bh = body ? body.transform.height * frame.height : 0;
    const gap = head && body ? Math.round(bodySize * 0.6) : 0;
    const total = hh + gap + bh;
    if (total <= band.h || (size(opts.headingMax) <= opts.minSize && bodySize <= opts.minSize)) {
      const top = band.y + Math.max(0, (band.h - total) / 2);
      return [...(head ? [placedAt(head, top, frame.height)] : []), ...(body ? [placedAt(body, top + hh + gap, frame.height)] : [])];
    }
  }
}
