// Text and captions of the timeline renderer as ASS subtitles (libass, through ffmpeg's `ass`
// filter with the bundled fonts of src/media/fonts.ts as fontsdir): positioned blocks with stroke or a
// background box, enter/exit animations as ASS override tags (\fad, \move, \t with scale,
// rotation and clip), and word-timed captions as \kf karaoke (the word fills with the highlight
// colour while it is spoken).
import type { components } from '../../generated/openapi.d.ts';
import { bundledFamily } from './fonts.ts';

type S = components['schemas'];
type Item = S['EditorItem'];
type TextStyle = S['TextStyle'];
type Animation = S['Animation'];
type Cue = S['CaptionEntry'];

/** What names that are not bundled render as (the closest bundled family). */
const FAMILIES: [RegExp, string][] = [
  [/bebas|oswald|league gothic|impact|anton/i, 'Anton'],
  [/playfair|didot|bodoni/i, 'Playfair Display'],
  [/dm serif|abril|serif display/i, 'DM Serif Display'],
  [/montserrat|poppins|gotham|futura|proxima/i, 'Montserrat'],
  [/inter|roboto|helvetica|arial|sf pro|system|open sans|lato/i, 'Inter'],
  [/serif/i, 'DejaVu Serif'],
  [/mono|code|courier/i, 'DejaVu Sans Mono'],
  [/condensed|narrow/i, 'DejaVu Sans Condensed'],
];

/** The bundled family a text style's font_family renders with (src/media/fonts.ts lists them; default DejaVu Sans). */
export function fontFamily(name: string | undefined): string {
  if (!name) return 'DejaVu Sans';
  const bundled = bundledFamily(name);
  if (bundled) return bundled;
  if (/sans.*serif|sans$/i.test(name) && !/mono/i.test(name)) return 'DejaVu Sans';
  for (const [re, family] of FAMILIES) if (re.test(name)) return family;
  return 'DejaVu Sans';
}

/** #RRGGBB[AA] → ASS &HAABBGGRR (ASS alpha: 00 opaque, FF transparent). */
export function assColor(hex: string | undefined, fallback = '#FFFFFF', opacity = 1): string {
  const h = (hex ?? fallback).replace('#', '');
  const r = h.slice(0, 2);
  const g = h.slice(2, 4);
  const b = h.slice(4, 6);
  const a = h.length >= 8 ? parseInt(h.slice(6, 8), 16) / 255 : 1;
  const alpha = Math.round(255 - 255 * a * opacity);
  return `&H${alpha.toString(16).padStart(2, '0')}${b}${g}${r}`.toUpperCase();
}

const cs = (seconds: number) => {
  const total = Math.max(0, Math.round(seconds * 100));
  const h = Math.floor(total / 360000);
  const m = Math.floor((total % 360000) / 6000);
  const s = Math.floor((total % 6000) / 100);
  const c = total % 100;
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(c).padStart(2, '0')}`;
};

const escapeText = (t: string) => t.replace(/\\/g, '\\\u200B').replace(/\{/g, '(').replace(/\}/g, ')').replace(/\r?\n/g, '\\N');

/** The style's text_transform applied to a text (the editor model uses it too). */
export function applyTextTransform(text: string, style: TextStyle): string {
  switch (style.text_transform) {
    case 'uppercase':
      return text.toUpperCase();
    case 'lowercase':
      return text.toLowerCase();
    case 'capitalize':
      return text.replace(/(^|\s)(\p{L})/gu, (_, s: string, c: string) => s + c.toUpperCase());
    default:
      return text;
  }
}

export interface AssFrame {
  width: number;
  height: number;
}

/** One text or captions item with its place in the drawing order. */
export interface AssItem {
  item: Item;
  layer: number;
}

const r = (v: number) => Math.round(v);

export interface Anchor {
  x: number;
  y: number;
  an: number;
}

/** Where a block is drawn from: its transform's top edge, at its left edge, centre or right edge by align (\\an7, 8, 9). */
export function anchorOf(item: Item, frame: AssFrame): Anchor {
  const style = item.style ?? {};
  const align = style.align ?? 'center';
  const t = item.transform;
  const x =
    align === 'left' ? t.left * frame.width : align === 'right' ? (t.left + t.width) * frame.width : (t.left + t.width / 2) * frame.width;
  return { x: r(x), y: r(t.top * frame.height), an: align === 'left' ? 7 : align === 'right' ? 9 : 8 };
}

/** Tags of an enter (entering=true) or exit animation over a segment of `ms` milliseconds. */
function animationTags(a: Animation, entering: boolean, ms: number, at: Anchor, frame: AssFrame, blockHeight: number): string {
  const dir = a.direction ?? 'up';
  const dist = (scale: number) => {
    const w = frame.width * scale;
    const h = frame.height * scale;
    // Where the motion starts (enter) or ends (exit), relative to the anchor.
    switch (dir) {
      case 'up':
        return entering
          ? { dx: 0, dy: scale >= 1 ? frame.height - at.y + 10 : h }
          : { dx: 0, dy: scale >= 1 ? -(at.y + blockHeight + 10) : -h };
      case 'down':
        return entering
          ? { dx: 0, dy: scale >= 1 ? -(at.y + blockHeight + 10) : -h }
          : { dx: 0, dy: scale >= 1 ? frame.height - at.y + 10 : h };
      case 'left':
        return entering ? { dx: scale >= 1 ? frame.width : w, dy: 0 } : { dx: scale >= 1 ? -frame.width : -w, dy: 0 };
      default:
        return entering ? { dx: scale >= 1 ? -frame.width : -w, dy: 0 } : { dx: scale >= 1 ? frame.width : w, dy: 0 };
    }
  };
  const move = (scale: number) => {
    const { dx, dy } = dist(scale);
    const far = `${r(at.x + dx)},${r(at.y + dy)}`;
    const home = `${at.x},${at.y}`;
    return entering ? `\\move(${far},${home},0,${ms})` : `\\move(${home},${far},0,${ms})`;
  };
  const fad = entering ? `\\fad(${ms},0)` : `\\fad(0,${ms})`;
  const grow = (from: number) =>
    entering ? `\\fscx${from}\\fscy${from}\\t(0,${ms},\\fscx100\\fscy100)` : `\\t(0,${ms},\\fscx${from}\\fscy${from})`;
  switch (a.type) {
    case 'fade':
      return fad;
    case 'slide':
      return move(1);
    case 'swipe':
      return move(0.25) + fad;
    case 'float':
      return move(0.05) + fad;
    case 'scale':
      return grow(0);
    case 'zoom':
      return grow(140) + fad;
    case 'flip':
      return entering ? `\\fry90\\t(0,${ms},\\fry0)` : `\\t(0,${ms},\\fry90)`;
    case 'bounce': {
      const drop = r(frame.height * 0.12);
      const a1 = r(ms * 0.55);
      const a2 = r(ms * 0.78);
      return entering
        ? `\\move(${at.x},${at.y - drop},${at.x},${at.y},0,${a1})\\t(${a1},${a2},\\fscy88\\fscx106)\\t(${a2},${ms},\\fscy100\\fscx100)`
        : `\\t(0,${r(ms * 0.3)},\\fscy88\\fscx106)\\t(${r(ms * 0.3)},${ms},\\fscy100\\fscx100)\\move(${at.x},${at.y},${at.x},${at.y - drop},${r(ms * 0.3)},${ms})${fad}`;
    }
    case 'glitch': {
      const s = r(ms / 4);
      return `\\frz4\\fax0.2\\t(0,${s},\\frz-3\\fax-0.15)\\t(${s},${2 * s},\\frz2\\fax0.1)\\t(${2 * s},${ms},\\frz0\\fax0)${fad}`;
    }
    case 'snap': {
      const q = Math.min(ms, 150);
      return entering ? `\\fscx85\\fscy85\\t(0,${q},\\fscx100\\fscy100)` : `\\t(${ms - q},${ms},\\fscx85\\fscy85)\\fad(0,${q})`;
    }
    default:
      return fad;
  }
}

/** \k karaoke body of a cue for a segment starting `segStartMs` after the item starts (the words' time base). */
function karaoke(cue: Cue, style: TextStyle, segStartMs: number): string {
  const words = cue.words ?? [];
  let cursor = segStartMs;
  const parts: string[] = [];
  for (const [i, w] of words.entries()) {
    const gap = Math.max(0, w.startMs - cursor);
    const start = Math.max(w.startMs, cursor);
    const dur = Math.max(0, w.endMs - start);
    const text = escapeText(applyTextTransform(w.text, style));
    parts.push(`${gap > 0 ? `{\\k${Math.round(gap / 10)}}` : ''}{\\kf${Math.round(dur / 10)}}${text}${i < words.length - 1 ? ' ' : ''}`);
    cursor = Math.max(cursor, w.endMs);
  }
  return parts.join('');
}

/** An &HAABBGGRR colour as the &HBBGGRR& of a \\c override. */
const rgbTag = (c: string) => `&H${c.slice(4)}&`;

/** pop: the spoken word's scale (%). */
const POP = 128;

/** How the spoken word is marked (TextStyle.caption_style); karaoke by default. */
type CaptionStyle = NonNullable<TextStyle['caption_style']>;

/** A line of a cue on screen from `from` to `to`: its body, and for bounce the lifted word drawn over it. */
interface Line {
  from: number;
  to: number;
  body: (segStartMs: number) => string;
  lifted?: string;
}

/**
 * The cue's text with word `at` marked (highlight: coloured; pop: coloured and enlarged; bounce:
 * hidden here, drawn lifted by `liftedWord`), or with no word marked when `at` is -1.
 */
function markedWords(cue: Cue, style: TextStyle, at: number, kind: CaptionStyle, colours: { base: string; highlight: string }): string {
  const words = cue.words ?? [];
  return words
    .map((w, i) => {
      const text = escapeText(applyTextTransform(w.text, style));
      if (i !== at) return text;
      if (kind === 'bounce') return `{\\alpha&HFF&}${text}{\\alpha&H00&}`;
      if (kind === 'pop') return `{\\c${colours.highlight}\\fscx${POP}\\fscy${POP}}${text}{\\c${colours.base}\\fscx100\\fscy100}`;
      return `{\\c${colours.highlight}}${text}{\\c${colours.base}}`;
    })
    .join(' ');
}

/** The cue's text with only word `at` visible, in the highlight colour (drawn lifted over the line: bounce). */
function liftedWord(cue: Cue, style: TextStyle, at: number, highlight: string): string {
  return (cue.words ?? [])
    .map((w, i) => {
      const text = escapeText(applyTextTransform(w.text, style));
      return i === at ? `{\\alpha&H00&\\c${highlight}}${text}{\\alpha&HFF&}` : text;
    })
    .join(' ')
    .replace(/^/, '{\\alpha&HFF&}');
}

/** The lines of a word-timed cue in a word-by-word style: one per spoken word (and the plain line before the first). */
function wordLines(
  cue: Cue,
  style: TextStyle,
  from: number,
  to: number,
  start: number,
  kind: CaptionStyle,
  colours: { base: string; highlight: string },
): Line[] {
  const words = cue.words ?? [];
  const lines: Line[] = [];
  const first = Math.max(from, start + (words[0]?.startMs ?? 0) / 1000);
  if (first > from + 0.01) {
    const plain = markedWords(cue, style, -1, kind, colours);
    lines.push({ from, to: first, body: () => plain });
  }
  words.forEach((w, i) => {
    const a = Math.max(from, start + w.startMs / 1000);
    const b = i + 1 < words.length ? Math.min(to, start + words[i + 1].startMs / 1000) : to;
    if (b <= a) return;
    const body = markedWords(cue, style, i, kind, colours);
    lines.push({ from: a, to: b, body: () => body, lifted: kind === 'bounce' ? liftedWord(cue, style, i, colours.highlight) : undefined });
  });
  return lines;
}

/** The lines an item shows: its text, or each cue (karaoke), or each spoken word of each cue (the word-by-word styles). */
function itemLines(item: Item, style: TextStyle, kind: CaptionStyle, colours: { base: string; highlight: string }): Line[] {
  const start = item.from_seconds;
  const end = item.from_seconds + item.duration_seconds;
  if (item.type !== 'captions') {
    const text = escapeText(applyTextTransform(item.text ?? '', style));
    return [{ from: start, to: end, body: () => text }];
  }
  const lines: Line[] = [];
  for (const cue of item.captions ?? []) {
    const from = start + cue.startMs / 1000;
    const to = Math.min(end, start + cue.endMs / 1000);
    if (to <= from) continue;
    const plain = escapeText(applyTextTransform(cue.text, style));
    if (cue.words?.length && kind !== 'karaoke') lines.push(...wordLines(cue, style, from, to, start, kind, colours));
    else lines.push({ from, to, body: (seg) => (cue.words?.length ? karaoke(cue, style, seg) : plain) });
  }
  return lines;
}

/** How an item's text is set: font size (px), bold, outline width (or the box's padding), the caption style and how the spoken word is marked. */
export interface TextGeometry {
  size: number;
  bold: boolean;
  outline: number;
  boxed: boolean;
  kind: CaptionStyle;
  /** Karaoke with word timings: PrimaryColour is the highlight (a cue without words shows in it entirely). */
  karaokeCues: boolean;
  /** bounce: how far the spoken word is lifted above its line (px). */
  lift: number;
  /** pop: the spoken word's scale. */
  popScale: number;
}

export function textGeometry(item: Item): TextGeometry {
  const isCaptions = item.type === 'captions';
  const style: TextStyle = item.style ?? {};
  const size = style.font_size ?? (isCaptions ? 56 : 64);
  const boxed = Boolean(style.background_color);
  const kind: CaptionStyle = style.caption_style ?? 'karaoke';
  return {
    size,
    bold: (style.font_weight ?? 700) >= 600,
    outline: boxed ? Math.max(4, Math.round(size * 0.22)) : (style.stroke_width ?? 0),
    boxed,
    kind,
    karaokeCues: isCaptions && kind === 'karaoke' && (item.captions ?? []).some((c) => c.words?.length),
    lift: isCaptions && kind === 'bounce' ? r(size * 0.15) : 0,
    popScale: isCaptions && kind === 'pop' ? POP / 100 : 1,
  };
}

/** `#rrggbb` of a style colour (#RRGGBB[AA]), or undefined when it is not opaque (its drawn colour is then a blend). */
function opaqueHex(hex: string): string | undefined {
  const h = hex.replace('#', '');
  if (!/^[0-9a-f]{6}([0-9a-f]{2})?$/i.test(h) || (h.length === 8 && h.slice(6).toLowerCase() !== 'ff')) return undefined;
  return `#${h.slice(0, 6).toUpperCase()}`;
}

/**
 * The fill colours (#rrggbb) the glyphs of a text item, or of a captions item's `cue`, are drawn
 * in, main first (the outline or box is not a fill): the text colour, and the highlight colour
 * where the spoken word is marked in it (karaoke fills the words with it as they are spoken; a
 * karaoke cue without word timings is drawn in it whole). Empty when a colour is not opaque.
 */
export function fillColours(item: Item, cue?: Cue): string[] {
  const style: TextStyle = item.style ?? {};
  const base = style.color ?? '#FFFFFF';
  const highlight = style.highlight_color ?? style.color ?? '#FFD400';
  const g = textGeometry(item);
  const marked = item.type === 'captions' && !!cue?.words?.length;
  const hexes = g.karaokeCues && !marked ? [highlight] : marked ? [base, highlight] : [base];
  const out = hexes.map(opaqueHex);
  if (item.transform.opacity < 1 || out.some((c) => !c)) return [];
  return [...new Set(out as string[])];
}

/**
 * An ASS script drawing `items` (text and captions) on a width × height frame; item times are
 * on the project timeline.
 */
export function buildAss(items: AssItem[], frame: AssFrame): string {
  const styles: string[] = [];
  const events: string[] = [];
  for (const [k, { item, layer }] of items.entries()) {
    const style: TextStyle = item.style ?? {};
    const g = textGeometry(item);
    const { size, outline, boxed, kind, karaokeCues } = g;
    const bold = g.bold ? -1 : 0;
    const opacity = item.transform.opacity;
    const base = assColor(style.color, '#FFFFFF');
    const highlight = assColor(style.highlight_color ?? style.color, '#FFD400');
    const outlineColour = boxed ? assColor(style.background_color) : assColor(style.stroke_color, '#000000');
    // Karaoke: SecondaryColour before a word is spoken, PrimaryColour from then on.
    const primary = karaokeCues ? highlight : base;
    const secondary = karaokeCues ? base : highlight;
    const marginL = Math.max(0, r(item.transform.left * frame.width));
    const marginR = Math.max(0, r(frame.width - (item.transform.left + item.transform.width) * frame.width));
    styles.push(
      `Style: I${k},${fontFamily(style.font_family)},${size},${primary},${secondary},${outlineColour},${boxed ? outlineColour : '&H80000000'},${bold},0,0,0,100,100,0,0,${boxed ? 3 : 1},${outline},0,8,${marginL},${marginR},0,1`,
    );
    const at = anchorOf(item, frame);
    const alphaTag =
      opacity < 1
        ? `\\alpha&H${Math.round(255 - 255 * opacity)
            .toString(16)
            .padStart(2, '0')
            .toUpperCase()}&`
        : '';
    const blockHeight = item.transform.height * frame.height;
    const start = item.from_seconds;
    const end = item.from_seconds + item.duration_seconds;

    // Each block as up to three segments: entering, steady, leaving.
    const enter = item.animation?.enter ?? null;
    const exit = item.animation?.exit ?? null;
    const lines = itemLines(item, style, kind, { base: rgbTag(base), highlight: rgbTag(highlight) });
    for (const line of lines) {
      const segs: { from: number; to: number; tags: string }[] = [];
      const din = enter && Math.abs(line.from - start) < 1e-6 ? Math.min(enter.duration_seconds ?? 0.5, line.to - line.from) : 0;
      const dout = exit && Math.abs(line.to - end) < 1e-6 ? Math.min(exit.duration_seconds ?? 0.5, line.to - line.from - din) : 0;
      const pos = `\\an${at.an}\\pos(${at.x},${at.y})`;
      if (din > 0)
        segs.push({
          from: line.from,
          to: line.from + din,
          tags: `\\an${at.an}${/\\move/.test(animationTags(enter!, true, r(din * 1000), at, frame, blockHeight)) ? '' : `\\pos(${at.x},${at.y})`}${animationTags(enter!, true, r(din * 1000), at, frame, blockHeight)}`,
        });
      if (line.to - dout > line.from + din + 1e-6) segs.push({ from: line.from + din, to: line.to - dout, tags: pos });
      if (dout > 0) {
        const tags = animationTags(exit!, false, r(dout * 1000), at, frame, blockHeight);
        segs.push({ from: line.to - dout, to: line.to, tags: `\\an${at.an}${/\\move/.test(tags) ? '' : `\\pos(${at.x},${at.y})`}${tags}` });
      }
      for (const seg of segs) {
        const segStartMs = Math.round((seg.from - start) * 1000);
        events.push(
          `Dialogue: ${layer},${cs(seg.from)},${cs(seg.to)},I${k},,${marginL},${marginR},0,,{${seg.tags}${alphaTag}}${line.body(segStartMs)}`,
        );
      }
      // bounce: the spoken word, lifted over its place in the line within its first 120 ms.
      if (line.lifted) {
        const move = `\\an${at.an}\\move(${at.x},${at.y},${at.x},${at.y - g.lift},0,120)`;
        events.push(`Dialogue: ${layer},${cs(line.from)},${cs(line.to)},I${k},,${marginL},${marginR},0,,{${move}}${line.lifted}`);
      }
    }
  }
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${frame.width}`,
    `PlayResY: ${frame.height}`,
    'WrapStyle: 0',
    'ScaledBorderAndShadow: yes',
    'YCbCr Matrix: TV.709',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    ...styles,
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...events,
    '',
  ].join('\n');
}
