// The timeline renderer: one editor project (tracks and items) → one H.264/AAC MP4, in ONE
// ffmpeg invocation whose filter graph this module writes.
//
//   video  a black canvas of the project's size and rate; every video/image item is trimmed
//          (input seek), re-timed (setpts by playback_rate), held on its last frame if the
//          source is short, scaled and cropped by `fit` into its transform box, animated
//          (alpha fades, moves as overlay expressions on t, scale/zoom/flip/snap as per-frame
//          perspective warps — ffmpeg 4.1 has no time-varying scale), made translucent by its
//          opacity, shifted to its start and overlaid in drawing order (layer, track order,
//          start); runs of text/captions items in that order are burned in by an `ass` filter
//          (see src/media/ass.ts) with the bundled fonts (src/media/fonts.ts) as fontsdir.
//   audio  every audible item trimmed, tempo-changed (atempo chain), set to 48 kHz stereo,
//          gained (volume dB), faded, delayed to its start and padded to the project length;
//          amix of all, with the level restored (amix divides by the number of inputs and 4.1
//          has no normalize=0). A project with nothing audible renders without an audio stream:
//          never a silent track.
//
// planRender() writes the graph (and ASS files) into a work folder and returns the ffmpeg
// arguments; renderTimeline() runs them; ffmpegRenderer is the render capability's engine
// (./types.ts) the registry hands out. bench/editor-render.ts runs the same arguments bare.
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { components } from '../../../generated/openapi.d.ts';
import { linkFonts } from '../../media/fonts.ts';
import { buildAss, type AssItem } from '../../media/ass.ts';
import { escapeFilterValue as esc, inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import type { RenderEngine, RenderMedia, RenderOptions, RenderProject, RenderQuality } from './types.ts';

type S = components['schemas'];
type Item = S['EditorItem'];
type Track = S['EditorTrack'];
type Animation = S['Animation'];

const ENCODER: Record<RenderQuality, { preset: string; crf: number; audioBitrate: string }> = {
  draft: { preset: 'ultrafast', crf: 28, audioBitrate: '128k' },
  standard: { preset: 'veryfast', crf: 21, audioBitrate: '160k' },
  high: { preset: 'medium', crf: 18, audioBitrate: '192k' },
};

/**
 * x264's frame threads: twice the cores (x264's own default is one and a half times). The filter
 * graph runs on ffmpeg's main thread and leaves the encoder waiting between frames; more frames
 * in flight keep the cores busy meanwhile (bench:faceless on 2 cores: 0.4–1 s less of an 8 s render).
 */
const ENCODER_THREADS = Math.min(16, 2 * os.availableParallelism());

export interface RenderPlan {
  args: string[];
  durationSeconds: number;
  outPath: string;
  files: string[];
}

const n = (v: number) => (Math.round(v * 1000) / 1000).toString();
const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);

/** `name=k=v:k=v`, every value escaped for the filter graph. */
function f(name: string, opts: Record<string, string | number> = {}): string {
  const parts = Object.entries(opts).map(([k, v]) => `${k}=${esc(String(v))}`);
  return parts.length ? `${name}=${parts.join(':')}` : name;
}

/** atempo accepts 0.5..2 per instance in ffmpeg 4.1: chain for 0.25..4. */
function atempo(rate: number): string[] {
  const out: string[] = [];
  let r = rate;
  while (r > 2 + 1e-9) {
    out.push(f('atempo', { tempo: 2 }));
    r /= 2;
  }
  while (r < 0.5 - 1e-9) {
    out.push(f('atempo', { tempo: 0.5 }));
    r /= 0.5;
  }
  if (Math.abs(r - 1) > 1e-6) out.push(f('atempo', { tempo: n(r) }));
  return out;
}

const clip01 = (e: string) => `clip(${e},0,1)`;
/** ease-out cubic of p (0..1). */
const easeOut = (p: string) => `(1-pow(1-${p},3))`;

interface Box {
  /** Box position and size in pixels. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Scale/crop filters placing a w×h source by `fit` into the box; returns the filters and the offset inside the box. */
function fitFilters(
  fit: S['Fit'],
  srcW: number,
  srcH: number,
  box: Box,
): { filters: string[]; dx: number; dy: number; w: number; h: number } {
  switch (fit) {
    case 'fill':
      return { filters: [f('scale', { w: box.w, h: box.h })], dx: 0, dy: 0, w: box.w, h: box.h };
    case 'contain': {
      const s = Math.min(box.w / srcW, box.h / srcH);
      const w = Math.min(box.w, even(srcW * s));
      const h = Math.min(box.h, even(srcH * s));
      return { filters: [f('scale', { w, h })], dx: Math.round((box.w - w) / 2), dy: Math.round((box.h - h) / 2), w, h };
    }
    case 'none': {
      const w = Math.min(even(srcW), box.w);
      const h = Math.min(even(srcH), box.h);
      const filters = [f('scale', { w: even(srcW), h: even(srcH) })];
      if (w < even(srcW) || h < even(srcH))
        filters.push(f('crop', { w, h, x: Math.floor((even(srcW) - w) / 2), y: Math.floor((even(srcH) - h) / 2) }));
      return { filters, dx: Math.round((box.w - w) / 2), dy: Math.round((box.h - h) / 2), w, h };
    }
    default: {
      // cover
      const s = Math.max(box.w / srcW, box.h / srcH);
      const sw = Math.max(box.w, even(srcW * s));
      const sh = Math.max(box.h, even(srcH * s));
      return {
        filters: [
          f('scale', { w: sw, h: sh }),
          f('crop', { w: box.w, h: box.h, x: Math.floor((sw - box.w) / 2), y: Math.floor((sh - box.h) / 2) }),
        ],
        dx: 0,
        dy: 0,
        w: box.w,
        h: box.h,
      };
    }
  }
}

/** Types drawn as a change of opacity (alpha fade) over the animation. */
const FADING = new Set<Animation['type']>(['fade', 'swipe', 'float', 'zoom', 'glitch']);
/** Types drawn as a change of size (perspective warp). */
const WARPING = new Set<Animation['type']>(['scale', 'zoom', 'flip', 'snap']);
/** Types drawn as motion (overlay position expressions). */
const MOVING = new Set<Animation['type']>(['slide', 'swipe', 'float', 'bounce', 'glitch']);

/**
 * Overlay position offset expression (on timeline t) of an animation: `p` is the progress 0→1
 * of entering (or 1→0 of leaving).
 */
function motion(
  a: Animation,
  p: string,
  axis: 'x' | 'y',
  box: Box,
  frame: { width: number; height: number },
  entering: boolean,
): string | undefined {
  const dir = a.direction ?? 'up';
  const away = `(1-${easeOut(p)})`;
  const sign = (v: number) => (entering ? v : -v);
  switch (a.type) {
    case 'slide':
    case 'swipe':
    case 'float': {
      const scale = a.type === 'slide' ? 1 : a.type === 'swipe' ? 0.25 : 0.05;
      if ((dir === 'up' || dir === 'down') !== (axis === 'y')) return undefined;
      // Where the item is when it is fully away: off frame for slide, a short way for the others.
      const full = {
        up: a.type === 'slide' ? (entering ? frame.height - box.y : -(box.y + box.h)) : sign(frame.height * scale),
        down: a.type === 'slide' ? (entering ? -(box.y + box.h) : frame.height - box.y) : sign(-frame.height * scale),
        left: a.type === 'slide' ? (entering ? frame.width - box.x : -(box.x + box.w)) : sign(frame.width * scale),
        right: a.type === 'slide' ? (entering ? -(box.x + box.w) : frame.width - box.x) : sign(-frame.width * scale),
      }[dir];
      return `${n(full)}*${away}`;
    }
    case 'bounce':
      if (axis !== 'y') return undefined;
      return `-${n(frame.height * 0.15)}*(1-${p})*abs(cos(${p}*PI*2.5))`;
    case 'glitch':
      if (axis !== 'x') return undefined;
      return `${n(frame.width * 0.03)}*(1-${p})*(2*gte(sin(t*211.7),0)-1)`;
    default:
      return undefined;
  }
}

/**
 * Per-frame perspective warp (destination corners) of a scaling animation; item time T =
 * `start` + in/FPS (the filter's frame count: perspective has no t; `start` is where the piece
 * of the item it warps begins).
 */
function warp(a: Animation, entering: boolean, dur: number, fps: number, start: number, w: number, h: number): string {
  const d = Math.max(0.04, a.duration_seconds ?? 0.5);
  const T = start > 0 ? `(${n(start)}+in/${n(fps)})` : `(in/${n(fps)})`;
  const p = entering ? clip01(`${T}/${n(d)}`) : clip01(`(${n(dur)}-${T})/${n(d)}`);
  const e = easeOut(p);
  let sx: string;
  let sy: string;
  switch (a.type) {
    case 'scale':
      sx = sy = `max(0.01,${e})`;
      break;
    case 'zoom':
      sx = sy = `(1.4-0.4*${e})`;
      break;
    case 'snap': {
      const q = Math.min(d, 0.15);
      const ps = entering ? clip01(`${T}/${n(q)}`) : clip01(`(${n(dur)}-${T})/${n(q)}`);
      sx = sy = `(0.85+0.15*${ps})`;
      break;
    }
    default:
      // flip: turns around the vertical axis, with a little perspective on the far edge
      sx = `max(0.01,sin(${e}*PI/2))`;
      sy = '1';
  }
  const cx = w / 2;
  const cy = h / 2;
  const skew = a.type === 'flip' ? `${n(h * 0.08)}*(1-${sx})` : '0';
  const enable = entering ? `lt(t,${n(Math.min(dur, d))})` : `gt(t,${n(Math.max(0, dur - d))})`;
  return f('perspective', {
    x0: `${n(cx)}-${n(cx)}*${sx}`,
    y0: `${n(cy)}-${n(cy)}*${sy}`,
    x1: `${n(cx)}+${n(cx)}*${sx}`,
    y1: `${n(cy)}-${n(cy)}*${sy}+${skew}`,
    x2: `${n(cx)}-${n(cx)}*${sx}`,
    y2: `${n(cy)}+${n(cy)}*${sy}`,
    x3: `${n(cx)}+${n(cx)}*${sx}`,
    y3: `${n(cy)}+${n(cy)}*${sy}-${skew}`,
    sense: 'destination',
    eval: 'frame',
    enable,
  });
}

/**
 * The item's enter animation as drawn: its own, or, when it has none or a pan and starts with a
 * transition, the transition's (fade, slide in from the right, zoom) over the overlap.
 */
function enterOf(item: Item): Animation | null {
  const own = item.animation?.enter ?? null;
  const tr = item.transition;
  if ((own && own.type !== 'pan') || !tr || tr.overlap_seconds < 0.04) return own;
  const type = tr.type ?? 'fade';
  return { type, duration_seconds: tr.overlap_seconds, ...(type === 'slide' ? { direction: 'left' as const } : {}) };
}

/** How much larger than its box a panning item is drawn. */
export const PAN_SCALE = 1.12;

/** The item's pan animation (enter or exit), if any: a slow drift instead of a fixed frame. */
function panOf(item: Item): { a: Animation; entering: boolean } | undefined {
  if (item.type !== 'image' && item.type !== 'video') return undefined;
  if (item.animation?.enter?.type === 'pan') return { a: item.animation.enter, entering: true };
  if (item.animation?.exit?.type === 'pan') return { a: item.animation.exit, entering: false };
  return undefined;
}

/** Drawing order, back to front: layer, then track order, then start. */
export function drawingOrder(items: Item[], tracks: Track[]): Item[] {
  const order = new Map(tracks.map((t) => [t.track_id, t.order]));
  return items
    .filter((i) => i.type !== 'audio')
    .sort(
      (a, b) =>
        a.layer - b.layer ||
        (order.get(a.track_id) ?? 0) - (order.get(b.track_id) ?? 0) ||
        a.from_seconds - b.from_seconds ||
        (a.item_id < b.item_id ? -1 : 1),
    );
}

export const projectDuration = (items: Item[]) =>
  Math.round(items.reduce((m, i) => Math.max(m, i.from_seconds + i.duration_seconds), 0) * 1000) / 1000;

/** Where a fitted source sits in its box (`fitFilters`' result). */
type Fitted = ReturnType<typeof fitFilters>;

/** The ffmpeg inputs, filter-graph lines and written files of the render being planned. */
class RenderGraph {
  readonly inputs: string[] = [];
  readonly lines: string[] = [];
  readonly files: string[] = [];
  /** The label of the video drawn so far. */
  current = 'v0';
  private inputCount = 0;
  private labelCount = 0;
  private readonly itemInput = new Map<string, number>();
  readonly project: RenderProject;

  constructor(project: RenderProject) {
    this.project = project;
  }

  /** Adds an input; returns its index. */
  input(args: string[]): number {
    this.inputs.push(...args);
    return this.inputCount++;
  }

  /** Draws `filter` (reading the video so far, then `also`) into a new label that becomes the video so far. */
  draw(filter: string, also = ''): void {
    const out = `v${++this.labelCount}`;
    this.lines.push(`[${this.current}]${also}${filter}[${out}]`);
    this.current = out;
  }

  /** The item's media input, opened once (a video item's input also feeds its audio); undefined without media. */
  open(item: Item): number | undefined {
    if (!item.media_id) return undefined;
    const m = this.project.media.get(item.media_id);
    if (!m) throw new Error(`media ${item.media_id} of item ${item.item_id} is missing`);
    const known = this.itemInput.get(item.item_id);
    if (known !== undefined) return known;
    const idx =
      m.kind === 'image'
        ? this.input(inputArgs(m, [])) // one decoded frame, fitted once and looped in the graph (see stillChain, panChain)
        : this.input(inputArgs(m, ['-ss', n(item.source_start_seconds), '-t', n(item.duration_seconds * item.playback_rate + 0.25)]));
    this.itemInput.set(item.item_id, idx);
    return idx;
  }
}

/**
 * Writes the filter graph (and ASS files) for `project` into `workDir` and returns the ffmpeg
 * arguments rendering it to `outPath`.
 */
export async function planRender(
  project: RenderProject,
  workDir: string,
  outPath: string,
  quality: RenderQuality = 'standard',
): Promise<RenderPlan> {
  const { width: W, height: H, fps } = project;
  const D = projectDuration(project.items);
  if (D <= 0) throw new Error('the project has no items to render');
  const g = new RenderGraph(project);
  const base = g.input(['-f', 'lavfi', '-i', f('color', { c: 'black', s: `${W}x${H}`, r: n(fps), d: n(D) })]);
  g.lines.push(`[${base}:v]${f('format', { pix_fmts: 'yuv420p' })}[v0]`);
  await drawVisuals(g, workDir);
  g.lines.push(`[${g.current}]${f('format', { pix_fmts: 'yuv420p' })}[vout]`);
  const audible = mixAudio(g, D);

  const script = path.join(workDir, 'graph.txt');
  await writeFile(script, g.lines.join(';\n'), 'utf8');
  g.files.push(script);
  return { args: [...g.inputs, ...encodeArgs(script, fps, D, quality, outPath, audible)], durationSeconds: D, outPath, files: g.files };
}

/** Every visual item overlaid in drawing order; each run of text/captions items burned in by one ASS file. */
async function drawVisuals(g: RenderGraph, workDir: string): Promise<void> {
  const frame = { width: g.project.width, height: g.project.height };
  let textRun: AssItem[] = [];
  let runs = 0;
  let fontsDir: string | undefined;
  const flushText = async () => {
    if (!textRun.length) return;
    fontsDir ??= await linkFonts(workDir);
    const file = path.join(workDir, `text-${runs++}.ass`);
    await writeFile(file, buildAss(textRun, frame), 'utf8');
    g.files.push(file);
    g.draw(f('ass', { filename: file, fontsdir: fontsDir }));
    textRun = [];
  };
  for (const [z, item] of drawingOrder(g.project.items, g.project.tracks).entries()) {
    if (item.type === 'text' || item.type === 'captions') {
      textRun.push({ item, layer: z });
      continue;
    }
    await flushText();
    overlayItem(g, item);
  }
  await flushText();
}

/** A stretch of an item (item seconds) drawn by one overlay, and which of the item's enter and exit animations it carries. */
interface Piece {
  from: number;
  to: number;
  enter: boolean;
  exit: boolean;
}

/**
 * The pieces an item is drawn in. An alpha fade or a perspective warp copies every frame it is
 * given (and a warp's transparent margin every frame again), acting or not; so an item whose
 * enter or exit animation is one of them, shorter than the item, is drawn as its opening stretch
 * (with the enter animation), its middle (plain) and its closing stretch (with the exit
 * animation), each cut on the frame grid, rather than as one stream filtered throughout.
 */
function piecesOf(item: Item, fps: number): Piece[] {
  const dur = item.duration_seconds;
  const costly = (a: Animation | null | undefined) =>
    a && (FADING.has(a.type) || WARPING.has(a.type)) ? Math.min(dur, Math.max(0.04, a.duration_seconds ?? 0.5)) : 0;
  const whole = [{ from: 0, to: dur, enter: true, exit: true }];
  const dIn = costly(enterOf(item));
  const dOut = costly(item.animation?.exit);
  if (!dIn && !dOut) return whole;
  const headEnd = dIn ? Math.ceil(dIn * fps - 1e-6) / fps : 0;
  const tailStart = dOut ? Math.floor((dur - dOut) * fps + 1e-6) / fps : dur;
  if (tailStart - headEnd < 2 / fps) return whole;
  const pieces: Piece[] = [];
  if (headEnd > 0) pieces.push({ from: 0, to: headEnd, enter: true, exit: false });
  pieces.push({ from: headEnd, to: tailStart, enter: false, exit: false });
  if (tailStart < dur) pieces.push({ from: tailStart, to: dur, enter: false, exit: true });
  return pieces;
}

/** One image or video item: its filter chain, then overlaid on the video so far while it is on the timeline (in pieces: piecesOf). */
function overlayItem(g: RenderGraph, item: Item): void {
  const idx = g.open(item);
  if (idx === undefined) return;
  const { width: W, height: H, fps } = g.project;
  const m = g.project.media.get(item.media_id!)!;
  const t = item.transform;
  const box: Box = { x: Math.round(t.left * W), y: Math.round(t.top * H), w: even(t.width * W), h: even(t.height * H) };
  const pan = panOf(item);
  const { chain, fit } = pan ? panChain(item, m, box, g.project, pan) : stillChain(item, m, box, g.project);
  const pieces = piecesOf(item, fps);
  const src = `it${item.item_id.replace(/[^A-Za-z0-9]/g, '')}`;
  const labels = pieces.length > 1 ? pieces.map((_p, k) => `${src}p${k}`) : [src];
  if (pieces.length > 1) g.lines.push(`[${idx}:v]${chain.join(',')},split=${pieces.length}${labels.map((l) => `[${l}]`).join('')}`);
  const from = item.from_seconds;
  const dur = item.duration_seconds;
  for (const [k, piece] of pieces.entries()) {
    const filters: string[] = [];
    if (pieces.length > 1)
      filters.push(f('trim', { ...(piece.from > 0 ? { start: n(piece.from) } : {}), ...(piece.to < dur ? { end: n(piece.to) } : {}) }));
    const warped = warpFilters(item, fit, fps, piece);
    filters.push(...warped.filters, ...fadeFilters(item, piece));
    if (t.opacity < 1) filters.push(f('lutyuv', { a: `val*${n(t.opacity)}` }));
    // Its last frame held two frames longer (the overlay's `enable` still ends it at its end: a
    // stream that ended would otherwise leave the canvas uncovered from its last frame's time, a
    // black frame at every cut), on a microsecond time base (shifted by an offset off the frame
    // grid, a coarse one such as an image's 1/25 would round its frames onto another grid).
    filters.push(f('tpad', { stop_mode: 'clone', stop_duration: n(2 / fps) }), 'settb=AVTB', `setpts=PTS+${n(from)}/TB`);
    const label = `${src}${pieces.length > 1 ? `q${k}` : ''}`;
    g.lines.push(
      pieces.length > 1 ? `[${labels[k]}]${filters.join(',')}[${label}]` : `[${idx}:v]${[...chain, ...filters].join(',')}[${label}]`,
    );
    const { x, y } = overlayPosition(item, box, fit, warped.pad, { width: W, height: H });
    // A piece before another stays on one frame longer (the next, drawn over it, takes over on the frame grid).
    const until = from + piece.to + (k < pieces.length - 1 ? 1 / fps : 0);
    g.draw(f('overlay', { x, y, eof_action: 'pass', enable: `between(t,${n(from + piece.from)},${n(until)})` }), `[${label}]`);
  }
}

/** The re-timing filters of a video item: playback rate, the project's rate, its last frame held to the item's length. */
function retimeFilters(item: Item, fps: number): string[] {
  return [
    `setpts=(PTS-STARTPTS)/${n(item.playback_rate)}`,
    f('fps', { fps: n(fps) }),
    f('tpad', { stop_mode: 'clone', stop_duration: n(item.duration_seconds) }),
  ];
}

/** An item without pan: re-timed, trimmed and fitted into its box. */
function stillChain(item: Item, m: RenderMedia, box: Box, { width, height, fps }: RenderProject): { chain: string[]; fit: Fitted } {
  const fit = fitFilters(item.fit, m.width ?? width, m.height ?? height, box);
  const chain =
    m.kind === 'image' ? [...fit.filters, ...loopFrame(item.duration_seconds, fps)] : [...retimeFilters(item, fps), ...fit.filters];
  chain.push(f('trim', { duration: n(item.duration_seconds) }), f('format', { pix_fmts: 'yuva420p' }));
  return { chain, fit };
}

/**
 * A still's one decoded frame repeated for `dur` seconds at the project's rate (decoded and scaled
 * once, not per frame), on the frame grid's own time base (exact frame times: an image's 1/25
 * would round them, and a piece cut at a frame time would start a frame late).
 */
function loopFrame(dur: number, fps: number): string[] {
  return [f('loop', { loop: Math.ceil(dur * fps) + 1, size: 1, start: 0 }), f('settb', { expr: `1/${n(fps)}` }), 'setpts=N'];
}

/**
 * A panning item: fitted into a box PAN_SCALE times larger, then a window of the box's size drifts
 * across it (crop with per-frame x/y). A still image is decoded and fitted once, then looped.
 */
function panChain(
  item: Item,
  m: RenderMedia,
  box: Box,
  { width, height, fps }: RenderProject,
  { a, entering }: { a: Animation; entering: boolean },
): { chain: string[]; fit: Fitted } {
  const dur = item.duration_seconds;
  const big = fitFilters(item.fit, m.width ?? width, m.height ?? height, {
    ...box,
    w: even(box.w * PAN_SCALE),
    h: even(box.h * PAN_SCALE),
  });
  const cw = Math.min(box.w, big.w);
  const ch = Math.min(box.h, big.h);
  const chain = m.kind === 'image' ? [...big.filters, ...loopFrame(dur, fps)] : [...retimeFilters(item, fps), ...big.filters];
  const d = Math.min(dur, a.duration_seconds ?? 0.5);
  const p = entering ? clip01(`t/${n(d)}`) : clip01(`(t-${n(Math.max(0, dur - d))})/${n(d)}`);
  const rx = big.w - cw;
  const ry = big.h - ch;
  const dir = a.direction ?? 'up';
  const x = dir === 'left' ? `${rx}*${p}` : dir === 'right' ? `${rx}*(1-${p})` : `${Math.floor(rx / 2)}`;
  const y = dir === 'up' ? `${ry}*${p}` : dir === 'down' ? `${ry}*(1-${p})` : `${Math.floor(ry / 2)}`;
  chain.push(f('trim', { duration: n(dur) }), f('crop', { w: cw, h: ch, x, y }), f('format', { pix_fmts: 'yuva420p' }));
  return { chain, fit: { filters: [], dx: Math.round((box.w - cw) / 2), dy: Math.round((box.h - ch) / 2), w: cw, h: ch } };
}

/** Scaling animations (enter, exit) of the piece as perspective warps, on a transparent margin of `pad` pixels around the item. */
function warpFilters(item: Item, fit: Fitted, fps: number, piece: Piece): { filters: string[]; pad: number } {
  const enter = piece.enter ? enterOf(item) : null;
  const exit = piece.exit ? (item.animation?.exit ?? null) : null;
  const warpsIn = !!enter && WARPING.has(enter.type);
  const warpsOut = !!exit && WARPING.has(exit.type);
  if (!warpsIn && !warpsOut) return { filters: [], pad: 0 };
  const pad = 4;
  const dur = item.duration_seconds;
  const w = fit.w + 2 * pad;
  const h = fit.h + 2 * pad;
  const filters = [f('pad', { w, h, x: pad, y: pad, color: 'black@0' })];
  if (warpsIn) filters.push(warp(enter!, true, dur, fps, piece.from, w, h));
  if (warpsOut) filters.push(warp(exit!, false, dur, fps, piece.from, w, h));
  return { filters, pad };
}

/** Fading animations (enter, exit) of the piece as alpha fades. */
function fadeFilters(item: Item, piece: Piece): string[] {
  const enter = piece.enter ? enterOf(item) : null;
  const exit = piece.exit ? (item.animation?.exit ?? null) : null;
  const dur = item.duration_seconds;
  const filters: string[] = [];
  if (enter && FADING.has(enter.type))
    filters.push(f('fade', { t: 'in', st: 0, d: n(Math.min(dur, enter.duration_seconds ?? 0.5)), alpha: 1 }));
  if (exit && FADING.has(exit.type)) {
    const d = Math.min(dur, exit.duration_seconds ?? 0.5);
    filters.push(f('fade', { t: 'out', st: n(Math.max(0, dur - d)), d: n(d), alpha: 1 }));
  }
  return filters;
}

/** The overlay's x and y expressions: the fitted item's place in its box, plus the moving animations' offsets. */
function overlayPosition(
  item: Item,
  box: Box,
  fit: Fitted,
  pad: number,
  frame: { width: number; height: number },
): { x: string; y: string } {
  let x = `${box.x + fit.dx - pad}`;
  let y = `${box.y + fit.dy - pad}`;
  const from = item.from_seconds;
  const end = from + item.duration_seconds;
  for (const [a, entering] of [
    [enterOf(item), true],
    [item.animation?.exit ?? null, false],
  ] as const) {
    if (!a || !MOVING.has(a.type)) continue;
    const d = Math.max(0.04, a.duration_seconds ?? 0.5);
    const p = entering ? clip01(`(t-${n(from)})/${n(d)}`) : clip01(`(${n(end)}-t)/${n(d)}`);
    const ox = motion(a, p, 'x', box, frame, entering);
    const oy = motion(a, p, 'y', box, frame, entering);
    if (ox) x = `${x}+${ox}`;
    if (oy) y = `${y}+${oy}`;
  }
  return { x, y };
}

const AUDIO_FORMAT = { sample_fmts: 'fltp', sample_rates: 48000, channel_layouts: 'stereo' };

/** Every audible item, each padded to the project's length, mixed into [aout]; false (and no [aout]) when nothing is audible. */
function mixAudio(g: RenderGraph, D: number): boolean {
  const audio: string[] = [];
  const samples = Math.round(D * 48000);
  const muted = new Set(g.project.tracks.filter((t) => t.muted).map((t) => t.track_id));
  for (const item of g.project.items) {
    if (item.type !== 'audio' && item.type !== 'video') continue;
    if (muted.has(item.track_id) || item.volume_db <= -60 || !item.media_id) continue;
    const m = g.project.media.get(item.media_id);
    if (!m || (item.type === 'video' && !m.hasAudio)) continue;
    const idx = g.open(item)!;
    const label = `a${audio.length}`;
    g.lines.push(`[${idx}:a]${audioChain(item, samples).join(',')}[${label}]`);
    audio.push(label);
  }
  if (audio.length === 1) g.lines.push(`[${audio[0]}]anull[aout]`);
  else if (audio.length > 1) {
    const count = audio.length;
    g.lines.push(
      `${audio.map((a) => `[${a}]`).join('')}${f('amix', { inputs: count, duration: 'longest', dropout_transition: 0 })},${f('volume', { volume: count })}[aout]`,
    );
  }
  return audio.length > 0;
}

/** One audible item: trimmed, re-timed, gained, faded, delayed to its start and padded to `samples`. */
function audioChain(item: Item, samples: number): string[] {
  const dur = item.duration_seconds;
  // A video's fades follow its visual enter/exit fades (cross-fades cross-fade the sound too).
  const visualIn =
    item.type === 'video' && item.animation?.enter && FADING.has(item.animation.enter.type)
      ? (item.animation.enter.duration_seconds ?? 0.5)
      : 0;
  const visualOut =
    item.type === 'video' && item.animation?.exit && FADING.has(item.animation.exit.type)
      ? (item.animation.exit.duration_seconds ?? 0.5)
      : 0;
  const fadeIn = Math.min(dur, Math.max(item.audio_fade_in_seconds, visualIn));
  const fadeOut = Math.min(dur, Math.max(item.audio_fade_out_seconds, visualOut));
  const chain = ['asetpts=PTS-STARTPTS', ...atempo(item.playback_rate), f('aformat', AUDIO_FORMAT), f('atrim', { duration: n(dur) })];
  if (item.volume_db !== 0) chain.push(f('volume', { volume: `${n(item.volume_db)}dB` }));
  if (fadeIn > 0) chain.push(f('afade', { t: 'in', st: 0, d: n(fadeIn) }));
  if (fadeOut > 0) chain.push(f('afade', { t: 'out', st: n(Math.max(0, dur - fadeOut)), d: n(fadeOut) }));
  const delay = Math.round(item.from_seconds * 1000);
  if (delay > 0) chain.push(f('adelay', { delays: `${delay}|${delay}` }));
  chain.push(f('apad', { whole_len: samples }), f('atrim', { end_sample: samples }));
  return chain;
}

/** The output half of the ffmpeg arguments: the graph script, the H.264 (and AAC, when `audible`) encoder settings of `quality`, the length. */
function encodeArgs(script: string, fps: number, D: number, quality: RenderQuality, outPath: string, audible: boolean): string[] {
  const enc = ENCODER[quality];
  const audio = audible ? ['-map', '[aout]', '-c:a', 'aac', '-b:a', enc.audioBitrate, '-ar', '48000', '-ac', '2'] : [];
  return [
    '-filter_complex_script',
    script,
    '-map',
    '[vout]',
    '-c:v',
    'libx264',
    '-preset',
    enc.preset,
    '-crf',
    String(enc.crf),
    '-threads',
    String(ENCODER_THREADS),
    '-pix_fmt',
    'yuv420p',
    '-r',
    n(fps),
    ...audio,
    '-t',
    n(D),
    '-movflags',
    '+faststart',
    outPath,
  ];
}

/** Renders `project` into `outPath` (an .mp4), using `workDir` for intermediates. */
export async function renderTimeline(
  project: RenderProject,
  workDir: string,
  outPath: string,
  opts: RenderOptions = {},
): Promise<RenderPlan> {
  const plan = await planRender(project, workDir, outPath, opts.quality);
  await runFfmpeg(plan.args, {
    expectedDurationSeconds: plan.durationSeconds,
    onProgress: opts.onProgress,
    signal: opts.signal,
    cwd: workDir,
  });
  return plan;
}

/** The render engine: the timeline rendered by one ffmpeg run. */
export const ffmpegRenderer: RenderEngine = {
  name: 'ffmpeg',
  async render(project, workDir, outPath, opts) {
    await renderTimeline(project, workDir, outPath, opts);
  },
};
