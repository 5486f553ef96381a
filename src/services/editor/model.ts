// The editor's timeline document: tracks and items exactly as the spec's EditorTrack and
// EditorItem, plus id counters. Pure helpers only (no database, no I/O).
import type { components } from '../../../generated/openapi.d.ts';

type S = components['schemas'];
export type Item = S['EditorItem'];
export type Track = S['EditorTrack'];
export type ItemType = S['EditorItemType'];
export type TextStyle = S['TextStyle'];
export type Transform = S['Transform'];
export type Animation = S['Animation'];
export type AudioRole = S['AudioRole'];
export type Fit = S['Fit'];
export type CaptionEntry = S['CaptionEntry'];
export type EditorOperation = S['EditorOperation'];

export interface Timeline {
  tracks: Track[];
  items: Item[];
  /** Counters of the ids handed out so far (ids are never reused within a project). */
  seq: { track: number; item: number };
}

export const MAX_TIMELINE_SECONDS = 14400;
export const MAX_ITEMS = 2000;
export const MAX_TRACKS = 100;
/** Layer of the first text/captions overlay; media layers start at 0. */
export const FRONT_LAYER = 10;
export const IMAGE_DEFAULT_SECONDS = 5;

export const FRAME_SIZES: Record<S['EditorAspectRatio'], { width: number; height: number }> = {
  '9:16': { width: 1080, height: 1920 },
  '16:9': { width: 1920, height: 1080 },
  '1:1': { width: 1080, height: 1080 },
  '4:5': { width: 1080, height: 1350 },
};

export const FULL_FRAME: Transform = { left: 0, top: 0, width: 1, height: 1, opacity: 1 };

export const emptyTimeline = (): Timeline => ({ tracks: [], items: [], seq: { track: 0, item: 0 } });

/** Milliseconds precision for every stored time. */
export const t3 = (v: number) => Math.round(v * 1000) / 1000;

export const itemEnd = (i: Item) => t3(i.from_seconds + i.duration_seconds);

export const isVisual = (type: ItemType) => type !== 'audio';
export const isMedia = (type: ItemType) => type === 'video' || type === 'image' || type === 'audio';
export const hasAudio = (type: ItemType) => type === 'video' || type === 'audio';
export const isTextLike = (type: ItemType) => type === 'text' || type === 'captions';

/** Track types an item may live on: video and image items share visual tracks; others exact. */
export function compatible(track: ItemType, item: ItemType): boolean {
  if (track === item) return true;
  return (track === 'video' || track === 'image') && (item === 'video' || item === 'image');
}

const TRACK_NAMES: Record<ItemType, string> = { video: 'Video', image: 'Image', audio: 'Audio', text: 'Text', captions: 'Captions' };

export function addTrack(tl: Timeline, type: ItemType): Track {
  tl.seq.track += 1;
  const sameType = tl.tracks.filter((t) => t.type === type).length;
  const order = tl.tracks.reduce((m, t) => Math.max(m, t.order + 1), 0);
  const track: Track = { track_id: `trk_${type}_${tl.seq.track}`, type, name: `${TRACK_NAMES[type]} ${sameType + 1}`, order };
  tl.tracks.push(track);
  return track;
}

export function newItemId(tl: Timeline, type: ItemType): string {
  tl.seq.item += 1;
  return `itm_${type}_${tl.seq.item}`;
}

export function baseItem(fields: Pick<Item, 'item_id' | 'track_id' | 'type' | 'from_seconds' | 'duration_seconds'> & Partial<Item>): Item {
  return {
    media_id: null,
    source_start_seconds: 0,
    playback_rate: 1,
    volume_db: 0,
    audio_fade_in_seconds: 0,
    audio_fade_out_seconds: 0,
    audio_role: null,
    fit: 'cover',
    transform: { ...FULL_FRAME },
    animation: null,
    transition: null,
    text: null,
    captions: null,
    style: null,
    layer: 0,
    ...fields,
  };
}

const overlaps = (a0: number, a1: number, b0: number, b1: number) => a0 < b1 - 1e-6 && b0 < a1 - 1e-6;

/** True when nothing on the track overlaps [from, from+duration) (except `ignore`). */
export function trackHasRoom(tl: Timeline, trackId: string, from: number, duration: number, ignore?: string): boolean {
  const end = from + duration;
  return !tl.items.some((i) => i.track_id === trackId && i.item_id !== ignore && overlaps(from, end, i.from_seconds, itemEnd(i)));
}

/**
 * The packing rule: the first track (by order) of a compatible type whose timeline has room for
 * [from, from+duration), else a new track of the item's type.
 */
export function packTrack(tl: Timeline, type: ItemType, from: number, duration: number): { track: Track; created: boolean } {
  const candidates = tl.tracks.filter((t) => compatible(t.type, type)).sort((a, b) => a.order - b.order);
  // Same-type tracks first, then the other visual type.
  for (const t of [...candidates.filter((c) => c.type === type), ...candidates.filter((c) => c.type !== type)]) {
    if (trackHasRoom(tl, t.track_id, from, duration)) return { track: t, created: false };
  }
  return { track: addTrack(tl, type), created: true };
}

/** Layer for a new media item on `track`. */
export function mediaLayer(tl: Timeline, track: Track, created: boolean): number {
  const onTrack = tl.items.filter((i) => i.track_id === track.track_id && isVisual(i.type));
  if (!created && onTrack.length) return Math.max(...onTrack.map((i) => i.layer));
  const media = tl.items.filter((i) => i.type === 'video' || i.type === 'image');
  return media.length ? Math.max(...media.map((i) => i.layer)) + 1 : 0;
}

/** A front layer for new text and captions overlays. */
export function frontLayer(tl: Timeline): number {
  const max = tl.items.reduce((m, i) => Math.max(m, i.layer), -1);
  return Math.max(FRONT_LAYER, max + 1);
}

export function trackOrder(tl: Timeline): Map<string, number> {
  return new Map(tl.tracks.map((t) => [t.track_id, t.order]));
}

/** Visual items in drawing order (back to front): layer, then track order, then start. */
export function drawOrder(tl: Timeline): Item[] {
  const order = trackOrder(tl);
  return tl.items
    .filter((i) => isVisual(i.type))
    .sort(
      (a, b) =>
        a.layer - b.layer ||
        (order.get(a.track_id) ?? 0) - (order.get(b.track_id) ?? 0) ||
        a.from_seconds - b.from_seconds ||
        (a.item_id < b.item_id ? -1 : 1),
    );
}

/** Items as the API lists them: by start, then layer, then id. */
export function sortedItems(items: Item[]): Item[] {
  return [...items].sort(
    (a, b) => a.from_seconds - b.from_seconds || a.layer - b.layer || (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : 0),
  );
}

export const timelineDuration = (tl: Timeline) => t3(tl.items.reduce((m, i) => Math.max(m, itemEnd(i)), 0));

// ----------------------------------------------------------------------------------- text

export const TEXT_DEFAULTS: TextStyle = {
  font_family: 'DejaVu Sans',
  font_size: 64,
  font_weight: 700,
  color: '#FFFFFF',
  stroke_color: '#000000',
  stroke_width: 3,
  align: 'center',
  left: 0.5,
  text_transform: 'none',
};

export const CAPTION_DEFAULTS: TextStyle = {
  font_family: 'DejaVu Sans',
  font_size: 56,
  font_weight: 700,
  color: '#FFFFFF',
  stroke_color: '#000000',
  stroke_width: 4,
  align: 'center',
  left: 0.5,
  top: 0.72,
  highlight_color: '#FFD400',
  text_transform: 'none',
};

/** Default wrapping width of a text block, as a fraction of the frame width. */
export const TEXT_BOX_WIDTH = 0.84;

/** Estimated height (fraction of the frame) of a text block. */
export function textBlockHeight(
  text: string,
  style: TextStyle,
  frame: { width: number; height: number },
  boxWidth = TEXT_BOX_WIDTH,
): number {
  const size = style.font_size ?? 64;
  const charsPerLine = Math.max(1, Math.floor((boxWidth * frame.width) / (size * 0.58)));
  let lines = 0;
  for (const para of text.split('\n')) lines += Math.max(1, Math.ceil(para.length / charsPerLine));
  return Math.min(1, (lines * size * 1.25 + 2 * (style.stroke_width ?? 0)) / frame.height);
}

/**
 * The transform box of a text block from its style anchor: top edge at style.top, horizontal
 * anchor at style.left (left edge, center or right edge by align), wrap width boxWidth.
 */
export function textTransform(
  text: string,
  style: TextStyle,
  frame: { width: number; height: number },
  opacity = 1,
  boxWidth = TEXT_BOX_WIDTH,
): Transform {
  const align = style.align ?? 'center';
  const anchor = style.left ?? 0.5;
  const left = align === 'left' ? anchor : align === 'right' ? anchor - boxWidth : anchor - boxWidth / 2;
  return {
    left: t3(Math.max(-2, Math.min(2, left))),
    top: t3(style.top ?? 0.1),
    width: t3(boxWidth),
    height: t3(Math.max(0.01, textBlockHeight(text, style, frame, boxWidth))),
    opacity,
  };
}

/** Vertical slots tried for a new text overlay whose style gives no top (fractions of the frame). */
export const TEXT_SLOTS = [0.1, 0.22, 0.34, 0.46, 0.58, 0.7, 0.82];

/**
 * The first slot whose band [top, top+height) does not overlap, during [from, end), any timed
 * text or captions item already on the timeline.
 */
export function pickTextSlot(tl: Timeline, from: number, duration: number, height: number): number {
  const end = from + duration;
  const busy = tl.items.filter((i) => isTextLike(i.type) && overlaps(from, end, i.from_seconds, itemEnd(i)));
  for (const top of TEXT_SLOTS) {
    if (top + height > 0.98) break;
    if (!busy.some((b) => overlaps(top, top + height, b.transform.top, b.transform.top + b.transform.height))) return top;
  }
  return TEXT_SLOTS[0];
}

export { applyTextTransform } from '../../media/ass.ts';
