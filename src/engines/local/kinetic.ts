// Kinetic typography for the local video ads: the ad copy (../write/ad-copy.ts) as a sequence of
// beats (hook → subheadline or its parts → the product image → the offer → an end card with the
// CTA and brand), each filling the frame with big type in the bundled display faces over a ground
// of its own (colour and graphic swap between beats, a wipe in the next ground's colour on the
// cut), words punching, rising or fading in one by one.
//
// ffmpeg side (ONE invocation, planned by ./ad-video.ts): each ground is a still PNG looped for its
// beat's frames (the end card's with the kit's logo), the product beat a Ken Burns zoompan of the
// customer's image shown whole over a blurred copy of it (zoom ≥ 1, never uncovering the canvas),
// the segments concatenated, then one `ass` filter (libass with the bundled fonts) draws every
// word, the CTA pill and the wipes with their \t/\move animations.
//
// The manifest is exact: libass sets a font size of S px at an em of S / ((winAscent+winDescent) /
// unitsPerEm) of the face (read from the TTF's OS/2 table), so the renderer knows each word's width
// (pango, at that em) and where each line's glyphs are (cap height or ascender to baseline or
// descender); each line is listed on its own (OCR reads one line at a time) from the moment its
// last word has settled to the moment the wipe out of its beat starts.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { assColor } from '../../media/ass.ts';
import { escapeFilterValue as esc, inputArgs } from '../../media/ffmpeg.ts';
import { bundledFamily, fontFace, linkFonts, textWidth, type FontFace } from '../../media/fonts.ts';
import { MARGIN, safeZoneFor, type PlacedText } from '../../media/quality/manifest.ts';
import type { GenerationJob } from '../generation.ts';
import { adCopy } from '../write/ad-copy.ts';
import { assetImage } from './ad-image.ts';
import { contrast, mix, paletteFor, rng, type Rect } from './layout.ts';

export type BeatKind = 'hook' | 'point' | 'product' | 'offer' | 'end';
export type Motion = 'punch' | 'rise' | 'reveal';

/** One beat: what it says (empty for the product image) and when it shows (seconds). */
export interface Beat {
  kind: BeatKind;
  text: string;
  a: number;
  b: number;
}

/** A wipe into the next beat takes this long (seconds), ending on the cut. */
export const WIPE_S = 0.2;
/** A word's entrance (seconds). */
const ENTER_S = 0.24;

const r = Math.round;

// ------------------------------------------------------------------ the beats

const words = (s: string) => s.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);

/** A text in two parts at the most even word break (a comma or "and"/"with" break preferred). */
function halves(text: string): [string, string] {
  const w = words(text);
  let best = Math.ceil(w.length / 2);
  let score = Infinity;
  for (let i = 1; i < w.length; i++) {
    const left = w.slice(0, i).join(' ').length;
    const right = w.slice(i).join(' ').length;
    const natural = /[,;:]$/.test(w[i - 1]) || /^(and|with|for|to|in|of|that|by)$/i.test(w[i]) ? 0.6 : 1;
    const s = Math.abs(left - right) * natural;
    if (s < score) [best, score] = [i, s];
  }
  return [
    w
      .slice(0, best)
      .join(' ')
      .replace(/[,;:]$/, ''),
    w.slice(best).join(' '),
  ];
}

/** How many beats a duration holds: about one per 1.35 s, 3 to 6. */
export const beatCount = (duration: number) => Math.max(3, Math.min(6, Math.round(duration / 1.35)));

/** The beats of the job's copy over `duration` seconds (see the head of this file). */
export function planBeats(job: GenerationJob, duration: number): Beat[] {
  const copy = adCopy(job);
  const max = beatCount(duration);
  const offer = copy.offer?.trim() || null;
  let sub = copy.subheadline?.trim() || null;
  const product = job.referenceImages.length > 0;
  // The parts that must show, then what is dropped when they do not fit.
  const fixed = () => 2 + (offer ? 1 : 0) + (product ? 1 : 0) + (sub ? 1 : 0);
  let hasProduct = product;
  if (fixed() > max) sub = null;
  if (2 + (offer ? 1 : 0) + (hasProduct ? 1 : 0) > max) hasProduct = false;
  const hook = [copy.headline];
  const points = sub ? [sub] : [];
  let n = 2 + (offer ? 1 : 0) + (hasProduct ? 1 : 0) + points.length;
  // Room left: the headline in two beats, then the subheadline in two.
  if (n < max && words(copy.headline).length >= 3) [hook[0], hook[1]] = halves(copy.headline);
  n = 2 + (offer ? 1 : 0) + (hasProduct ? 1 : 0) + points.length + (hook.length - 1);
  if (n < max && sub && words(sub).length >= 5) points.splice(0, 1, ...halves(sub));
  const kinds: [BeatKind, string][] = [
    ...hook.map((h): [BeatKind, string] => ['hook', h]),
    ...points.map((p): [BeatKind, string] => ['point', p]),
    ...(hasProduct ? [['product', ''] as [BeatKind, string]] : []),
    ...(offer ? [['offer', offer] as [BeatKind, string]] : []),
    ['end', copy.cta],
  ].filter(([kind, text]) => kind === 'product' || text.trim()) as [BeatKind, string][];
  // The end card stays longest; the others share the rest.
  const end = Math.min(duration * 0.4, Math.max(1.4, duration * 0.26));
  const each = (duration - end) / Math.max(1, kinds.length - 1);
  return kinds.map(([kind, text], i) => {
    const a = i * each;
    return { kind, text, a: t3(a), b: t3(i === kinds.length - 1 ? duration : a + each) };
  });
}

const t3 = (v: number) => Math.round(v * 1000) / 1000;

// ------------------------------------------------------------------ the look

/** A template's faces and motion (the brand kit's first font, when bundled, sets the display type). */
interface Look {
  head: FontFace;
  body: FontFace;
  upper: boolean;
  motion: Motion;
}

const LOOKS: Record<string, [string, boolean, Motion]> = {
  'product-demo-showcase': ['Montserrat', false, 'rise'],
  'flash-sale-countdown': ['Montserrat', true, 'punch'],
  'cinematic-brand-story': ['Playfair Display', false, 'reveal'],
  'feature-walkthrough': ['Inter', false, 'punch'],
  'problem-solution-explainer': ['Inter', true, 'rise'],
  'lifestyle-montage': ['DM Serif Display', false, 'reveal'],
};

function lookOf(job: GenerationJob): Look {
  const [family, upper, motion] = LOOKS[job.templateSlug ?? ''] ?? ['Montserrat', true, 'punch'];
  const kit = bundledFamily(job.fonts?.[0]);
  const head = kit ?? family;
  return {
    head: fontFace(head, 'black'),
    body: fontFace(bundledFamily(job.fonts?.[1]) ?? 'Montserrat', 'bold'),
    upper: !kit && upper,
    motion,
  };
}

/** A ground (two gradient stops) and the ink its text is set in, at 5:1 or more. */
export interface Ground {
  from: string;
  to: string;
  ink: string;
  /** The second colour of the beat (the CTA pill, a highlighted graphic). */
  pop: string;
}

/** `bg` moved away from `ink` until the two reach 5:1. */
function legible(bg: string, ink: string): string {
  const away = contrast(ink, '#ffffff') > contrast(ink, '#000000') ? '#ffffff' : '#000000';
  let c = bg;
  for (let i = 1; i <= 10 && contrast(ink, c) < 5.2; i++) c = mix(bg, away, i * 0.1);
  return c;
}

/** A ground from a base colour: the ink readable on it, the base adjusted to 5:1 with it, a gradient stop a little apart. */
function groundOf(base: string, pop: string): Ground {
  const ink = inkFor(base);
  const from = legible(base, ink);
  const to = legible(mix(from, ink === '#ffffff' ? '#000000' : '#ffffff', 0.22), ink);
  return { from, to, ink, pop: contrast(pop, from) >= 1.6 ? pop : ink };
}

/** White or near-black, whichever stands out more on `bg`. */
const inkFor = (bg: string) => (contrast('#ffffff', bg) >= contrast('#111111', bg) ? '#ffffff' : '#111111');

const luma = (hex: string) => contrast(hex, '#000000');

/**
 * The grounds of the beats: deep (the brand colour darkened), light (a tint of it), and the accent;
 * each beat takes the one furthest in lightness from the beat before, so consecutive beats differ
 * (a product beat's ground is its image; the one after it takes the accent, else deep).
 */
export function groundsFor(job: GenerationJob, beats: Beat[]): Ground[] {
  const p = paletteFor(job);
  const deep = groundOf(mix(p.primary, '#000000', 0.35), p.accent);
  const light = groundOf(mix(p.primary, '#ffffff', 0.86), p.primary);
  const accent = groundOf(p.accent, p.primary);
  const out: Ground[] = [];
  for (const [i, beat] of beats.entries()) {
    const prev = out[i - 1];
    if (!prev) out.push(beat.kind === 'offer' ? accent : deep);
    else if (beat.kind === 'end') out.push(luma(prev.from) > 3 ? deep : light);
    else if (beat.kind === 'offer') out.push(Math.abs(luma(accent.from) - luma(prev.from)) > 2 ? accent : prev === deep ? light : deep);
    else out.push(prev === deep ? light : deep);
  }
  return out;
}

// ------------------------------------------------------------------ setting the type

/** A face's vertical metrics in ems (from its TrueType tables). */
export interface FaceMetrics {
  /** (winAscent + winDescent): libass sets size S at an em of S / this. */
  lineEms: number;
  /** winAscent: the baseline's depth in libass's line box. */
  winAscent: number;
  capHeight: number;
  ascender: number;
  descender: number;
}

const metricsCache = new Map<string, FaceMetrics>();
export function faceMetrics(file: string): FaceMetrics {
  const hit = metricsCache.get(file);
  if (hit) return hit;
  const b = readFileSync(file);
  const tables: Record<string, number> = {};
  for (let i = 0; i < b.readUInt16BE(4); i++) tables[b.toString('latin1', 12 + i * 16, 16 + i * 16)] = b.readUInt32BE(20 + i * 16);
  const upem = b.readUInt16BE(tables.head + 18);
  const os2 = tables['OS/2'];
  const win = [b.readUInt16BE(os2 + 74), b.readUInt16BE(os2 + 76)];
  const m: FaceMetrics = {
    lineEms: (win[0] + win[1]) / upem,
    winAscent: win[0] / upem,
    capHeight: b.readUInt16BE(os2) >= 2 ? b.readInt16BE(os2 + 88) / upem : 0.72,
    ascender: b.readInt16BE(os2 + 68) / upem,
    descender: -b.readInt16BE(os2 + 70) / upem,
  };
  metricsCache.set(file, m);
  return m;
}
export const lineEms = (file: string) => faceMetrics(file).lineEms;

/** A block of type as set: its lines (words and their widths at `em`), the em and the line pitch (px). */
export interface SetBlock {
  lines: { words: string[]; widths: number[]; width: number }[];
  em: number;
  pitch: number;
  space: number;
  face: FontFace;
}

/** Splits `w` (word widths) into `n` lines whose widest is the narrowest possible (spaces of width `sp`). */
function bestSplit(w: number[], n: number, sp: number): number[][] {
  let best: number[][] = [];
  let score = Infinity;
  const walk = (start: number, left: number, acc: number[][]) => {
    if (left === 1) {
      const lines = [...acc, range(start, w.length)];
      const widest = Math.max(...lines.map((l) => lineWidth(l, w, sp)));
      if (widest < score) [best, score] = [lines, widest];
      return;
    }
    for (let end = start + 1; end <= w.length - left + 1; end++) walk(end, left - 1, [...acc, range(start, end)]);
  };
  walk(0, n, []);
  return best;
}
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
const lineWidth = (l: number[], w: number[], sp: number) => l.reduce((s, i) => s + w[i], 0) + sp * (l.length - 1);

/** Widths at 100 px to the em, by face and text (the end card sets the headline's words again). */
const widths = new Map<string, Promise<number>>();
function widthAt100(text: string, face: FontFace): Promise<number> {
  const key = `${face.file}\n${text}`;
  let hit = widths.get(key);
  if (!hit) {
    if (widths.size > 5000) widths.clear();
    hit = textWidth(text, face, 100);
    widths.set(key, hit);
  }
  return hit;
}

/**
 * The text set as large as it fits `box` in at most four lines (five for seven words or more) (at most `maxEm` px to the em),
 * lines split where they are most even, `leading` ems apart.
 */
export async function setType(text: string, face: FontFace, box: Rect, maxEm: number, leading: number): Promise<SetBlock> {
  const list = words(text);
  const REF = 100;
  const w1 = await Promise.all(list.map((x) => widthAt100(x, face)));
  const sp = (await widthAt100('x x', face)) - 2 * (await widthAt100('x', face)) + 2;
  const ems = lineEms(face.file);
  let pick = { em: 0, lines: [[0]] as number[][] };
  for (let n = 1; n <= Math.min(list.length >= 7 ? 5 : 4, list.length); n++) {
    const lines = bestSplit(w1, n, sp);
    const widest = Math.max(...lines.map((l) => lineWidth(l, w1, sp)));
    const em = Math.min(maxEm, (box.w * REF) / (widest * 1.04), box.h / ((n - 1) * leading + ems));
    // One more line must buy at least 8 % more size.
    if (em > pick.em * 1.08) pick = { em, lines };
  }
  let em = Math.floor(pick.em);
  // Pango's own width of each whole line at that em (kerning across words), shrunk until each fits.
  for (;;) {
    const widths = await Promise.all(pick.lines.map((l) => textWidth(l.map((i) => list[i]).join(' '), face, em)));
    const over = Math.max(...widths) / box.w;
    if (over <= 0.97 || em <= 8) break;
    em = Math.max(8, Math.floor((em * 0.97) / over));
  }
  const scale = em / REF;
  return {
    lines: pick.lines.map((l) => ({
      words: l.map((i) => list[i]),
      widths: l.map((i) => w1[i] * scale),
      width: lineWidth(l, w1, sp) * scale,
    })),
    em,
    pitch: em * leading,
    space: sp * scale,
    face,
  };
}

/** Where a block's lines go: each line's centre (x, y) with the block centred on (cx, cy). */
function lineCentres(block: SetBlock, cx: number, cy: number): { x: number; y: number }[] {
  const n = block.lines.length;
  return block.lines.map((_, i) => ({ x: cx, y: cy + (i - (n - 1) / 2) * block.pitch }));
}

/**
 * Each line of a block as placed: its words and the box its glyphs are drawn in (from the cap
 * height, or the ascender when it has lower case, to the baseline or the descender), so OCR reads
 * one line at a time and no box takes in the line above or below.
 */
export function placedLines(block: SetBlock, cx: number, cy: number, rest: Omit<PlacedText, 'text' | 'box'>): PlacedText[] {
  const m = faceMetrics(block.face.file);
  const size = block.em * m.lineEms;
  const slack = Math.ceil(block.em * 0.06);
  return lineCentres(block, cx, cy).map((c, i) => {
    const text = block.lines[i].words.join(' ');
    const base = c.y - size / 2 + m.winAscent * block.em;
    const lower = /[\p{Ll}]/u.test(text);
    const top = base - block.em * m.capHeight * (lower ? 1.12 : 1.08);
    const bottom = base + block.em * (lower || /[,;QJ]/.test(text) ? m.descender * 0.9 : 0.06);
    const w = block.lines[i].width;
    return { text, box: { x: r(cx - w / 2 - slack), y: r(top), w: r(w + 2 * slack), h: r(bottom - top) }, ...rest };
  });
}

/** The box the block's glyphs are drawn in: libass's line height (size) around each line's centre, a little slack at the sides. */
export function blockBox(block: SetBlock, cx: number, cy: number): Rect {
  const size = block.em * lineEms(block.face.file);
  const centres = lineCentres(block, cx, cy);
  const widest = Math.max(...block.lines.map((l) => l.width));
  const slack = Math.ceil(block.em * 0.06);
  return {
    x: r(cx - widest / 2 - slack),
    y: r(centres[0].y - size / 2),
    w: r(widest + 2 * slack),
    h: r(centres.at(-1)!.y - centres[0].y + size),
  };
}

// ------------------------------------------------------------------ the ASS script

interface AssOut {
  styles: string[];
  events: string[];
}

const cs = (seconds: number) => {
  const total = Math.max(0, Math.round(seconds * 100));
  const h = Math.floor(total / 360000);
  const m = Math.floor((total % 360000) / 6000);
  const s = Math.floor((total % 6000) / 100);
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(total % 100).padStart(2, '0')}`;
};
const assText = (t: string) => t.replace(/\\/g, '\\\u200B').replace(/\{/g, '(').replace(/\}/g, ')');

/** A style per face in use (size and colours set per event). */
function styleLine(name: string, face: FontFace): string {
  const family = face.family.replace(/ (Bold|Heavy)$/, '');
  const bold = /Bold|Heavy/.test(face.family) ? -1 : 0;
  return `Style: ${name},${family},40,&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,${bold},0,0,0,100,100,0,0,1,0,0,5,0,0,0,1`;
}

/**
 * Each word of a block as an event entering with `motion` from `start` (a word at a time, or a
 * line at a time for `rise`), shown until `end`. Returns when the last word has settled.
 */
function blockEvents(
  out: AssOut,
  style: string,
  block: SetBlock,
  at: { x: number; y: number },
  span: { start: number; end: number; motion: Motion; ink: string; stagger: number },
): number {
  const size = r(block.em * lineEms(block.face.file));
  const colour = `\\1c${assColor(span.ink).replace('&H00', '&H')}&`;
  let settled = span.start;
  let k = 0;
  for (const [li, line] of block.lines.entries()) {
    const centre = lineCentres(block, at.x, at.y)[li];
    let x = centre.x - line.width / 2;
    for (const [wi, word] of line.words.entries()) {
      const cx = r(x + line.widths[wi] / 2);
      const cy = r(centre.y);
      x += line.widths[wi] + block.space;
      const t0 = span.start + (span.motion === 'rise' ? li : k++) * span.stagger;
      const ms = r(ENTER_S * 1000);
      const tags =
        span.motion === 'punch'
          ? `\\pos(${cx},${cy})\\fscx150\\fscy150\\alpha&HFF&\\t(0,${r(ms * 0.4)},\\alpha&H00&)\\t(0,${ms},0.6,\\fscx100\\fscy100)`
          : span.motion === 'rise'
            ? `\\move(${cx},${r(cy + size * 0.6)},${cx},${cy},0,${ms})\\clip(0,${r(cy - size / 2)},100000,${r(cy + size / 2)})`
            : `\\move(${cx},${r(cy + size * 0.12)},${cx},${cy},0,${ms})\\alpha&HFF&\\t(0,${ms},\\alpha&H00&)`;
      out.events.push(`Dialogue: 2,${cs(t0)},${cs(span.end)},${style},,0,0,0,,{\\an5\\fs${size}${colour}${tags}}${assText(word)}`);
      settled = Math.max(settled, t0 + ENTER_S);
    }
  }
  return settled;
}

/** A rounded rectangle (corner radius h/2) as an ASS drawing of w × h. */
function pillPath(w: number, h: number): string {
  const rad = h / 2;
  const k = rad * 0.5523;
  const p = (v: number) => r(v);
  return [
    `m ${p(rad)} 0 l ${p(w - rad)} 0`,
    `b ${p(w - rad + k)} 0 ${p(w)} ${p(rad - k)} ${p(w)} ${p(rad)}`,
    `b ${p(w)} ${p(rad + k)} ${p(w - rad + k)} ${p(h)} ${p(w - rad)} ${p(h)}`,
    `l ${p(rad)} ${p(h)}`,
    `b ${p(rad - k)} ${p(h)} 0 ${p(rad + k)} 0 ${p(rad)}`,
    `b 0 ${p(rad - k)} ${p(rad - k)} 0 ${p(rad)} 0`,
  ].join(' ');
}

/** The wipe into a beat: a panel of its ground's colour sweeping across the frame (a bar of `edge` leading), covering it whole on the cut. */
function wipeEvents(out: AssOut, W: number, H: number, at: number, colour: string, edge: string, dir: number) {
  const bar = r(W * 0.05);
  const ms = r(WIPE_S * 1000);
  const span = `${cs(at - WIPE_S)},${cs(at)}`;
  // dir 1: from the left (the panel's right edge leads), -1: from the right (its left edge leads).
  const [p0, e0, e1] = dir > 0 ? [-W, -bar, W - bar] : [W, W, 0];
  out.events.push(
    `Dialogue: 5,${span},Draw,,0,0,0,,{\\an7\\move(${p0},0,0,0,0,${ms})\\1c${bgr(colour)}&\\p1}m 0 0 l ${W} 0 l ${W} ${H} l 0 ${H}{\\p0}`,
  );
  out.events.push(
    `Dialogue: 6,${span},Draw,,0,0,0,,{\\an7\\move(${e0},0,${e1},0,0,${ms})\\1c${bgr(edge)}&\\p1}m 0 0 l ${bar} 0 l ${bar} ${H} l 0 ${H}{\\p0}`,
  );
}
const bgr = (hex: string) => assColor(hex).replace('&H00', '&H');

// ------------------------------------------------------------------ the frame

/** The area type may fill: 4 % margins plus room, out of a 9:16 feed's UI zones. */
export function typeArea(W: number, H: number): Rect {
  const zone = safeZoneFor(W, H);
  const side = r(W * (MARGIN + 0.045));
  const top = r(H * Math.max(MARGIN + 0.05, (zone?.top ?? 0) + 0.025));
  const bottom = r(H * Math.max(MARGIN + 0.05, (zone?.bottom ?? 0) + 0.03));
  return { x: side, y: top, w: W - 2 * side, h: H - top - bottom };
}

export interface KineticResult {
  /** ffmpeg input arguments of the grounds and the product image (input indexes from `firstInput`). */
  inputs: string[];
  /** Filtergraph chains of the beats' segments ([k0], [k1] …). */
  segments: string[];
  /** The chain (without its output label) joining them and drawing every beat's type. */
  picture: string;
  texts: PlacedText[];
  sceneStarts: number[];
  beats: Beat[];
}

/** A beat's text block: the face, the box it may fill and its largest em. */
function blockSpec(
  beat: Beat,
  look: Look,
  area: Rect,
  W: number,
  H: number,
): { face: FontFace; box: Rect; maxEm: number; leading: number } {
  const u = Math.min(W, H);
  const display = look.head.file === fontFace('Anton', 'regular').file;
  const leading = display ? 1.1 : 1.2;
  if (beat.kind === 'offer') return { face: look.head, box: area, maxEm: u * 0.42, leading };
  if (beat.kind === 'point')
    return { face: look.head, box: { ...area, y: area.y + r(area.h * 0.1), h: r(area.h * 0.8) }, maxEm: u * 0.2, leading };
  return { face: look.head, box: area, maxEm: u * (W < H ? 0.42 : 0.3), leading };
}

/** The text of a beat as drawn (the display face in capitals when the look says so). */
const shown = (text: string, look: Look, kind: BeatKind) => (look.upper || kind === 'offer' ? text.toUpperCase() : text);

/**
 * Writes the grounds (and the ASS script) of the kinetic ad into `dir` and returns its inputs and
 * graph; `firstInput` is the index the first of its inputs gets.
 */
export async function kineticVideo(
  job: GenerationJob,
  duration: number,
  fps: number,
  dir: string,
  files: string[],
  opts: { firstInput: number; supersample: number },
): Promise<KineticResult> {
  const { width: W, height: H } = job;
  const beats = planBeats(job, duration);
  const grounds = groundsFor(job, beats);
  const look = lookOf(job);
  const area = typeArea(W, H);
  // The end card's logo (the brand kit's) heads its area; the texts take the rest.
  const logoBox = job.logo ? { x: area.x + r(area.w * 0.25), y: area.y, w: r(area.w * 0.5), h: r(area.h * 0.12) } : null;
  const endArea = logoBox ? { ...area, y: area.y + r(area.h * 0.16), h: area.h - r(area.h * 0.16) } : area;
  const out: AssOut = { styles: [styleLine('Head', look.head), styleLine('Body', look.body), styleLine('Draw', look.body)], events: [] };
  const texts: PlacedText[] = [];
  const rand = rng(`kinetic:${job.prompt}|${job.templateSlug ?? ''}`);
  // The pictures are made while the type is set.
  const pictures = segments(job, beats, grounds, fps, dir, files, { ...opts, logoBox });
  pictures.catch(() => {});
  for (const [i, beat] of beats.entries()) {
    const g = grounds[i];
    const textEnd = beat.b - (i < beats.length - 1 ? WIPE_S + 0.02 : 0.05);
    if (i > 0) wipeEvents(out, W, H, beat.a, beat.kind === 'product' ? grounds[i - 1].pop : g.from, g.pop, rand() < 0.5 ? 1 : -1);
    if (beat.kind === 'product') continue;
    if (beat.kind === 'end')
      texts.push(...(await endCard(out, job, beat, g, look, endArea, textEnd, shown(adCopy(job).headline, look, 'hook'))));
    else {
      const spec = blockSpec(beat, look, area, W, H);
      const text = shown(beat.text, look, beat.kind);
      const block = await setType(text, spec.face, spec.box, spec.maxEm, spec.leading);
      const cx = spec.box.x + spec.box.w / 2;
      const cy = spec.box.y + spec.box.h / 2;
      const n = block.lines.reduce((s, l) => s + l.words.length, 0);
      const motion = beat.kind === 'offer' ? 'punch' : i % 2 === 0 ? look.motion : look.motion === 'punch' ? 'rise' : 'punch';
      const stagger = Math.min(0.1, Math.max(0.03, ((beat.b - beat.a) * 0.3 - ENTER_S) / Math.max(1, n - 1)));
      const start = beat.a + 0.06;
      const settled = blockEvents(out, 'Head', block, { x: cx, y: cy }, { start, end: textEnd, motion, ink: g.ink, stagger });
      const role = beat.kind === 'hook' ? 'headline' : beat.kind === 'offer' ? 'offer' : 'subheadline';
      texts.push(...placedLines(block, cx, cy, { role, fromSeconds: t3(settled + 0.04), toSeconds: t3(textEnd), color: g.ink }));
    }
  }
  const assFile = path.join(dir, 'kinetic.ass');
  await writeFile(assFile, assScript(W, H, out), 'utf8');
  files.push(assFile);
  const fontsDir = await linkFonts(dir);
  const segs = await pictures;
  const concat = `${beats.map((_, i) => `[k${i}]`).join('')}concat=n=${beats.length}:v=1:a=0,setsar=1`;
  const picture = `${concat},ass=filename=${esc(assFile)}:fontsdir=${esc(fontsDir)}`;
  return { inputs: segs.inputs, segments: segs.graph, picture, texts, sceneStarts: beats.map((b) => b.a), beats };
}

/** The end card: the brand name (when the kit has one) and the headline over the CTA in a pill of the beat's second colour, popping in. */
async function endCard(
  out: AssOut,
  job: GenerationJob,
  beat: Beat,
  g: Ground,
  look: Look,
  area: Rect,
  end: number,
  headline: string,
): Promise<PlacedText[]> {
  const placed: PlacedText[] = [];
  const u = Math.min(job.width, job.height);
  const cx = area.x + area.w / 2;
  const pill = legiblePill(g);
  const cta = await setType(
    beat.text,
    look.body,
    { ...area, x: area.x + r(area.w * 0.12), w: r(area.w * 0.76), h: r(area.h * 0.2) },
    u * 0.1,
    1.1,
  );
  const padX = r(cta.em * 0.9);
  const pw = r(Math.max(...cta.lines.map((l) => l.width)) + 2 * padX);
  const ph = r((cta.lines.length - 1) * cta.pitch + cta.em * 2);
  const brand = job.brandName?.trim();
  const brandBlock = brand ? await setType(brand.toUpperCase(), look.body, { ...area, h: r(area.h * 0.12) }, u * 0.07, 1.05) : null;
  const head = await setType(
    headline,
    look.head,
    { ...area, h: r(area.h * 0.5) },
    u * 0.2,
    look.head.file === fontFace('Anton', 'regular').file ? 1.1 : 1.2,
  );
  const gap = r(u * 0.06);
  const stack = [brandBlock ? blockBox(brandBlock, 0, 0).h : 0, blockBox(head, 0, 0).h, ph];
  const total = stack.reduce((x, y) => x + y, 0) + gap * (stack.filter(Boolean).length - 1);
  let y = area.y + (area.h - total) / 2;
  const start = beat.a + 0.06;
  const blocks: [SetBlock | null, string][] = [
    [brandBlock, 'brand'],
    [head, 'headline'],
  ];
  for (const [k, [block, role]] of blocks.entries()) {
    if (!block) continue;
    const cy = y + stack[k] / 2;
    const settled = blockEvents(
      out,
      k === 0 ? 'Body' : 'Head',
      block,
      { x: cx, y: cy },
      { start: start + k * 0.1, end, motion: 'reveal', ink: g.ink, stagger: 0.05 },
    );
    placed.push(...placedLines(block, cx, cy, { role, fromSeconds: t3(settled + 0.04), toSeconds: t3(end), color: g.ink }));
    y += stack[k] + gap;
  }
  const py = r(y + ph / 2);
  const t0 = start + 0.3;
  const pop = `\\t(0,160,\\fscx112\\fscy112)\\t(160,300,\\fscx100\\fscy100)`;
  const fade = `\\fscx40\\fscy40\\alpha&HFF&\\t(0,120,\\alpha&H00&)`;
  out.events.push(
    `Dialogue: 3,${cs(t0)},${cs(end)},Draw,,0,0,0,,{\\an5\\pos(${r(cx)},${py})\\1c${bgr(pill.fill)}&${fade}${pop}\\p1}${pillPath(pw, ph)}{\\p0}`,
  );
  const size = r(cta.em * lineEms(cta.face.file));
  for (const [li, c] of lineCentres(cta, cx, py).entries())
    out.events.push(
      `Dialogue: 4,${cs(t0)},${cs(end)},Body,,0,0,0,,{\\an5\\pos(${r(c.x)},${r(c.y)})\\fs${size}\\1c${bgr(pill.ink)}&${fade}${pop}}${assText(cta.lines[li].words.join(' '))}`,
    );
  placed.push(...placedLines(cta, cx, py, { role: 'cta', fromSeconds: t3(t0 + 0.34), toSeconds: t3(end), color: pill.ink }));
  return placed;
}

/** The CTA pill: the beat's second colour with its own ink at 5:1 (the pill distinct from the ground). */
function legiblePill(g: Ground): { fill: string; ink: string } {
  const base = contrast(g.pop, g.from) >= 1.6 ? g.pop : g.ink;
  const ink = inkFor(base);
  return { fill: legible(base, ink), ink };
}

function assScript(W: number, H: number, out: AssOut): string {
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${W}`,
    `PlayResY: ${H}`,
    'WrapStyle: 2',
    'ScaledBorderAndShadow: yes',
    'YCbCr Matrix: TV.709',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    ...out.styles,
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...out.events,
    '',
  ].join('\n');
}

// ------------------------------------------------------------------ the grounds as video segments

/** The ground of a beat as an SVG: its gradient and a graphic in the frame's edges (away from the type). */
function groundSvg(g: Ground, W: number, H: number, kind: BeatKind, seed: number): string {
  const u = Math.min(W, H);
  const angle = [
    [0, 0, 1, 1],
    [1, 0, 0, 1],
    [0, 1, 1, 0],
  ][seed % 3];
  const shade = g.ink === '#ffffff' ? '#000000' : '#ffffff';
  const shapes: string[] = [];
  const band = r(u * 0.035);
  if (kind === 'end' || kind === 'offer') {
    // Concentric rings from a corner.
    for (let i = 1; i <= 6; i++)
      shapes.push(
        `<circle cx="${seed % 2 ? W : 0}" cy="${H}" r="${r(u * 0.22 * i)}" fill="none" stroke="${shade}" stroke-opacity="0.08" stroke-width="${r(u * 0.04)}"/>`,
      );
  } else if (seed % 2) {
    // Bars of the second colour at the top and bottom edges.
    shapes.push(
      `<rect x="0" y="0" width="${W}" height="${band}" fill="${g.pop}"/><rect x="0" y="${H - band}" width="${W}" height="${band}" fill="${g.pop}"/>`,
    );
  } else {
    // A band of shade across the bottom-left corner and a disc of it on the top-right one, both
    // off the type (an edge through a line of type is one more thing for OCR to misread).
    shapes.push(`<polygon points="0,${r(H * 0.8)} 0,${H} ${r(W * 0.5)},${H}" fill="${shade}" fill-opacity="0.1"/>`);
    shapes.push(`<circle cx="${W}" cy="0" r="${r(u * 0.3)}" fill="${shade}" fill-opacity="0.1"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><defs><linearGradient id="g" x1="${angle[0]}" y1="${angle[1]}" x2="${angle[2]}" y2="${angle[3]}"><stop offset="0" stop-color="${g.from}"/><stop offset="1" stop-color="${g.to}"/></linearGradient></defs><rect width="${W}" height="${H}" fill="url(#g)"/>${shapes.join('')}</svg>`;
}

/** Each beat's picture as the segment [k<i>]: a looped ground, or the product image's Ken Burns; the logo on the end card. */
async function segments(
  job: GenerationJob,
  beats: Beat[],
  grounds: Ground[],
  fps: number,
  dir: string,
  files: string[],
  opts: { firstInput: number; supersample: number; logoBox: Rect | null },
): Promise<{ inputs: string[]; graph: string[] }> {
  const { width: W, height: H } = job;
  const ss = Math.max(1, opts.supersample);
  // The pictures are written at once (sharp works in its own threads).
  const made = await Promise.all(
    beats.map(async (beat, i) => {
      const frames = Math.max(1, r(beat.b * fps) - r(beat.a * fps));
      if (beat.kind === 'product') {
        // A photograph: JPEG at the frame's size, scaled up by ffmpeg (smoother zoompan steps).
        const file = path.join(dir, `beat-${i}.jpg`);
        await writeFile(file, await productStill(job, grounds[i - 1] ?? grounds[i], W, H));
        const z = `1+0.09*on/${Math.max(1, frames - 1)}`;
        const chain = `${ss > 1 ? `scale=w=${W * ss}:h=${H * ss}:flags=bicubic,` : ''}zoompan=z=${esc(z)}:x=${esc('(iw-iw/zoom)/2')}:y=${esc('(ih-ih/zoom)/2')}:d=${frames}:s=${W}x${H}:fps=${fps},setsar=1,format=yuv420p`;
        return { file, type: 'image/jpeg', chain };
      }
      const file = path.join(dir, `beat-${i}.png`);
      const logo = beat.kind === 'end' && opts.logoBox ? [await logoLayer(job, opts.logoBox)] : [];
      await sharp(Buffer.from(groundSvg(grounds[i], W, H, beat.kind, i)))
        .composite(logo)
        .png({ compressionLevel: 1 })
        .toFile(file);
      return { file, type: 'image/png', chain: `format=yuv420p,loop=loop=${frames - 1}:size=1:start=0,setpts=N/${fps}/TB,setsar=1` };
    }),
  );
  files.push(...made.map((m) => m.file));
  return {
    inputs: made.flatMap((m) => inputArgs({ path: m.file, type: m.type })),
    graph: made.map((m, i) => `[${opts.firstInput + i}:v]${m.chain}[k${i}]`),
  };
}

/** The brand kit's logo fitted inside `box` (never enlarged past it), centred in it. */
async function logoLayer(job: GenerationJob, box: Rect): Promise<{ input: Buffer; left: number; top: number }> {
  const { img, fail } = assetImage(job, job.logo!, 'the brand kit logo', 'invalid_logo');
  const { data, info } = await img.resize(box.w, box.h, { fit: 'inside' }).png().toBuffer({ resolveWithObject: true }).catch(fail);
  return { input: data, left: box.x + r((box.w - info.width) / 2), top: box.y + r((box.h - info.height) / 2) };
}

/**
 * The product beat's picture at w × h: the customer's first image whole (contained, centred, at
 * most 86 % of the frame) over a blurred, darkened copy of it filling the frame, so nothing of
 * the product is cut off and no canvas shows.
 */
async function productStill(job: GenerationJob, g: Ground, w: number, h: number): Promise<Buffer> {
  // Decoded once, at most the frame's size.
  const { img, fail } = assetImage(job, job.referenceImages[0], 'reference image 1', 'invalid_reference_image');
  const { data, info } = await img
    .resize(r(w * 0.86), r(h * 0.86), { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch(fail);
  const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
  const back = await sharp(data, raw)
    .resize(r(w / 16), r(h / 16), { fit: 'cover' })
    .flatten({ background: g.from })
    .blur(8)
    .modulate({ brightness: 0.55 })
    .resize(w, h)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return sharp(back.data, { raw: { width: w, height: h, channels: back.info.channels } })
    .composite([{ input: data, ...raw, left: r((w - info.width) / 2), top: r((h - info.height) / 2) }])
    .jpeg({ quality: 92 })
    .toBuffer();
}
