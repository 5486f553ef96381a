// What a rendered timeline shows, for the media quality checker (src/media/quality/manifest.ts):
// the text and captions items (each cue with the box its glyphs are drawn in, its time span and
// fill colours), texts drawn on panning stills (the box covering every place the pan takes them),
// where the scenes start and the spans the narration speaks.
//
// The box of a text as libass draws it (drawnBox): a line is as tall as the font size (libass
// scales DejaVu so that its ascent plus descent, 1.164 em, is the size), set from the block's
// anchor down (../../media/ass.ts anchorOf), as wide as pango measures the words at that em
// (a few pixels of slack for the two shapers), wrapped at the item's width into as many lines as
// the words need; plus the outline (or the box's padding), the word bounce lifts above the line
// and the word pop enlarges.
import type { components } from '../../../generated/openapi.d.ts';
import { anchorOf, applyTextTransform, fillColours, fontFamily, textGeometry } from '../../media/ass.ts';
import { type Box, type MediaManifest, type PlacedText, safeZoneFor } from '../../media/quality/manifest.ts';
import { fontFace, textWidth } from '../../media/fonts.ts';
import { PAN_SCALE } from './ffmpeg.ts';

type Item = components['schemas']['EditorItem'];
type Word = { startMs: number; endMs: number };

const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);
const t3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Where a box drawn on a full-frame still lands in the frame while the still pans (the timeline
 * draws it PAN_SCALE larger and moves a frame-sized window across it): the box covering every
 * place it takes.
 */
export function pannedBox(box: Box, item: Item, frame: { width: number; height: number }): Box {
  const pan =
    item.animation?.enter?.type === 'pan' ? item.animation.enter : item.animation?.exit?.type === 'pan' ? item.animation.exit : null;
  if (!pan) return box;
  const bw = even(frame.width * PAN_SCALE);
  const bh = even(frame.height * PAN_SCALE);
  const sx = bw / frame.width;
  const sy = bh / frame.height;
  const rx = bw - frame.width;
  const ry = bh - frame.height;
  const horizontal = pan.direction === 'left' || pan.direction === 'right';
  const x = box.x * sx - (horizontal ? rx : Math.floor(rx / 2));
  const y = box.y * sy - (horizontal ? Math.floor(ry / 2) : ry);
  return {
    x: Math.round(x),
    y: Math.round(y),
    w: Math.round(box.w * sx + (horizontal ? rx : 0)),
    h: Math.round(box.h * sy + (horizontal ? 0 : ry)),
  };
}

/** DejaVu's ascent plus descent in ems: libass sets a font size of `size` px at an em of size / this. */
const LINE_EMS = 1.164;

/** The box the glyphs of `text` are drawn in by the timeline renderer (../../media/ass.ts; see the head of this file). */
export async function drawnBox(text: string, item: Item, frame: { width: number; height: number }): Promise<Box> {
  const style = item.style ?? {};
  const g = textGeometry(item);
  const face = fontFace(fontFamily(style.font_family), g.bold);
  const room = Math.max(1, item.transform.width * frame.width);
  const paragraphs = applyTextTransform(text, style).split('\n');
  let lines = 0;
  let widest = 0;
  for (const para of paragraphs) {
    const words = para.trim();
    const w = words ? (await textWidth(words, face, g.size / LINE_EMS)) + Math.ceil(g.size * 0.05) : 0;
    // Wrapping breaks between words, so a wrapped paragraph takes a little more room than its width.
    const n = w <= room ? 1 : Math.ceil(w / (room * 0.9));
    lines += n;
    widest = Math.max(widest, n === 1 ? w : room);
    // pop: one word at a time is drawn larger (its share of the line, at most the longest word's).
    if (g.popScale > 1) {
      const longest = Math.max(...words.split(/\s+/).map((x) => x.length));
      widest = Math.min(room, widest + (w * (g.popScale - 1) * longest) / Math.max(1, words.length));
    }
  }
  const at = anchorOf(item, frame);
  const w = Math.round(widest + 2 * g.outline);
  const x = at.an === 7 ? at.x - g.outline : at.an === 9 ? at.x - w + g.outline : at.x - w / 2;
  // The line with the popped word is that much taller.
  const h = (lines + g.popScale - 1) * g.size + 2 * g.outline + g.lift;
  return { x: Math.round(x), y: Math.round(at.y - g.outline - g.lift), w, h: Math.round(h) };
}

/** A fill colour list as PlacedText's color (the main one) and colors (the others). */
function colourFields(colours: string[]): Pick<PlacedText, 'color' | 'colors'> {
  return { ...(colours[0] ? { color: colours[0] } : {}), ...(colours.length > 1 ? { colors: colours.slice(1) } : {}) };
}

/** The text items and every cue of the captions items, with the boxes their glyphs are drawn in, their times and fill colours. */
export async function timelineTexts(items: Item[], frame: { width: number; height: number }): Promise<PlacedText[]> {
  const out: PlacedText[] = [];
  for (const item of items) {
    if (item.type === 'text' && item.text)
      out.push({
        text: item.text.replace(/\s+/g, ' '),
        box: await drawnBox(item.text, item, frame),
        role: 'text',
        fromSeconds: item.from_seconds,
        toSeconds: t3(item.from_seconds + item.duration_seconds),
        ...colourFields(fillColours(item)),
      });
    if (item.type === 'captions')
      for (const cue of item.captions ?? [])
        out.push({
          text: cue.text,
          box: await drawnBox(cue.text, item, frame),
          role: 'caption',
          fromSeconds: t3(item.from_seconds + cue.startMs / 1000),
          toSeconds: t3(Math.min(item.from_seconds + item.duration_seconds, item.from_seconds + cue.endMs / 1000)),
          ...colourFields(fillColours(item, cue)),
        });
  }
  return out;
}

/** The spans the words are spoken in (pauses under `gapMs` joined). */
export function narrationSpans(words: Word[], offsetSeconds = 0, gapMs = 400): { fromSeconds: number; toSeconds: number }[] {
  const spans: { fromSeconds: number; toSeconds: number }[] = [];
  for (const w of [...words].sort((a, b) => a.startMs - b.startMs)) {
    const from = t3(offsetSeconds + w.startMs / 1000);
    const to = t3(offsetSeconds + w.endMs / 1000);
    const last = spans.at(-1);
    if (last && from - last.toSeconds <= gapMs / 1000) last.toSeconds = Math.max(last.toSeconds, to);
    else spans.push({ fromSeconds: from, toSeconds: to });
  }
  return spans;
}

/** The manifest of a rendered timeline: its texts (plus `extra`, e.g. texts drawn on its stills), scene starts and narration. */
export async function timelineManifest(opts: {
  width: number;
  height: number;
  items: Item[];
  sceneItems: Item[];
  extra?: PlacedText[];
  narration?: { fromSeconds: number; toSeconds: number }[];
  requestedSeconds?: number;
}): Promise<MediaManifest> {
  const frame = { width: opts.width, height: opts.height };
  const safeZone = safeZoneFor(opts.width, opts.height);
  return {
    width: opts.width,
    height: opts.height,
    texts: [...(opts.extra ?? []), ...(await timelineTexts(opts.items, frame))],
    ...(safeZone ? { safeZone } : {}),
    sceneStarts: opts.sceneItems.map((i) => i.from_seconds).sort((a, b) => a - b),
    ...(opts.narration ? { narration: opts.narration } : {}),
    ...(opts.requestedSeconds ? { requestedSeconds: opts.requestedSeconds } : {}),
  };
}
