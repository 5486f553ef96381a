// What a rendered timeline shows, for the media quality checker (src/media/quality/manifest.ts):
// the text and captions items (each cue with its box and time span), texts drawn on panning
// stills (the box covering every place the pan takes them), where the scenes start and the
// spans the narration speaks.
import type { components } from '../../../generated/openapi.d.ts';
import { type Box, type MediaManifest, type PlacedText, safeZoneFor } from '../../media/quality/manifest.ts';
import { PAN_SCALE } from './ffmpeg.ts';

type Item = components['schemas']['EditorItem'];
type Word = { startMs: number; endMs: number };

const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);
const t3 = (v: number) => Math.round(v * 1000) / 1000;

/** The frame box of an item's transform, in pixels. */
export function itemBox(item: Item, frame: { width: number; height: number }): Box {
  const t = item.transform;
  return {
    x: Math.round(t.left * frame.width),
    y: Math.round(t.top * frame.height),
    w: Math.round(t.width * frame.width),
    h: Math.round(t.height * frame.height),
  };
}

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

/** The text items and every cue of the captions items, with their boxes and times. */
export function timelineTexts(items: Item[], frame: { width: number; height: number }): PlacedText[] {
  const out: PlacedText[] = [];
  for (const item of items) {
    const box = itemBox(item, frame);
    if (item.type === 'text' && item.text)
      out.push({
        text: item.text.replace(/\s+/g, ' '),
        box,
        role: 'text',
        fromSeconds: item.from_seconds,
        toSeconds: t3(item.from_seconds + item.duration_seconds),
      });
    if (item.type === 'captions')
      for (const cue of item.captions ?? [])
        out.push({
          text: cue.text,
          box,
          role: 'caption',
          fromSeconds: t3(item.from_seconds + cue.startMs / 1000),
          toSeconds: t3(Math.min(item.from_seconds + item.duration_seconds, item.from_seconds + cue.endMs / 1000)),
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
export function timelineManifest(opts: {
  width: number;
  height: number;
  items: Item[];
  sceneItems: Item[];
  extra?: PlacedText[];
  narration?: { fromSeconds: number; toSeconds: number }[];
  requestedSeconds?: number;
}): MediaManifest {
  const frame = { width: opts.width, height: opts.height };
  const safeZone = safeZoneFor(opts.width, opts.height);
  return {
    width: opts.width,
    height: opts.height,
    texts: [...(opts.extra ?? []), ...timelineTexts(opts.items, frame)],
    ...(safeZone ? { safeZone } : {}),
    sceneStarts: opts.sceneItems.map((i) => i.from_seconds).sort((a, b) => a - b),
    ...(opts.narration ? { narration: opts.narration } : {}),
    ...(opts.requestedSeconds ? { requestedSeconds: opts.requestedSeconds } : {}),
  };
}
