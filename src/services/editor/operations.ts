// The 19 edit operations of PATCH /editor/videos/{id}, applied in order to an in-memory copy
// of one project version. Any failure throws an ApiError naming the operation's index and the
// field (context.operation_index, context.field, context.errors); the caller then writes
// nothing. External work (speech, sound effects, URLs, transcription) goes through
// EditResources, which remembers it between the preparing and the committing run.
import type { components } from '../../../generated/openapi.d.ts';
import { ApiError } from '../../errors.ts';
import {
  addTrack,
  baseItem,
  CAPTION_DEFAULTS,
  compatible,
  drawOrder,
  frontLayer,
  hasAudio,
  isTextLike,
  isVisual,
  itemEnd,
  MAX_ITEMS,
  MAX_TIMELINE_SECONDS,
  MAX_TRACKS,
  mediaLayer,
  newItemId,
  packTrack,
  pickTextSlot,
  t3,
  TEXT_BOX_WIDTH,
  TEXT_DEFAULTS,
  textBlockHeight,
  textTransform,
  trackHasRoom,
  type Animation,
  type CaptionEntry,
  type Item,
  type ItemType,
  type TextStyle,
  type Timeline,
  type Track,
} from './model.ts';
import type { EditResources, MediaInfo, TimedWord } from './resources.ts';

type S = components['schemas'];
type Op = S['EditorOperation'];
export type AppliedOperation = S['AppliedEditOperation'];

export interface ProjectState {
  title: string;
  timeline: Timeline;
  frame: { width: number; height: number };
  fps: number;
  /** EDITOR_MAX_TIMELINE_SECONDS: no item may end later (default: the hard ceiling). */
  maxSeconds?: number;
}

/** A failure of one operation, before it is given its index. */
export class OpError extends Error {
  readonly code: 'bad_request' | 'not_found';
  readonly field: string;
  readonly resource: string | undefined;
  constructor(code: OpError['code'], field: string, message: string, resource?: string) {
    super(message);
    this.code = code;
    this.field = field;
    this.resource = resource;
  }
}

const bad = (field: string, message: string) => new OpError('bad_request', field, message);

/** Operation types that need work outside the database (done before the row lock is taken). */
export const EXTERNAL_OPS = new Set<Op['type']>(['add_voiceover', 'add_sound_effect', 'generate_captions_from_items']);

interface Env {
  state: ProjectState;
  res: EditResources;
  index: number;
  /** `body.operations[i].` */
  prefix: string;
  /**
   * Source-range checks deferred to the end of the batch (trim, then shorten, is fine): item id →
   * the last operation that changed its timing or source, and the field to name.
   */
  deferred: Map<string, { index: number; type: string; field: string }>;
}

const TYPE_NAMES: Record<ItemType, string> = {
  video: 'a video',
  image: 'an image',
  audio: 'an audio',
  text: 'a text',
  captions: 'a captions',
};

function getItem(env: Env, id: string, field = 'item_id'): Item {
  const item = env.state.timeline.items.find((i) => i.item_id === id);
  if (!item) throw new OpError('not_found', field, `item ${id} does not exist in this project`, 'editor_item');
  return item;
}

function requireType(item: Item, types: ItemType[], field: string, what: string): void {
  if (!types.includes(item.type)) {
    const list = types.length > 1 ? `${types.slice(0, -1).join(', ')} and ${types[types.length - 1]}` : types[0];
    throw bad(field, `item ${item.item_id} is ${TYPE_NAMES[item.type]} item; ${what} applies to ${list} items`);
  }
}

function checkTimeline(env: Env, from: number, duration: number, field: string): void {
  const max = Math.min(env.state.maxSeconds ?? MAX_TIMELINE_SECONDS, MAX_TIMELINE_SECONDS);
  if (from + duration > max + 1e-9) throw bad(field, `ends at ${t3(from + duration)} s, beyond the ${max} s timeline limit`);
}

/** Registers an item's source range for checking once the whole batch is applied. */
function checkSource(env: Env, item: Item, field: string): void {
  if (hasAudio(item.type) && item.media_id) env.deferred.set(item.item_id, { index: env.index, type: '', field });
}

/** A video/audio item must not read past the end of its source. */
async function checkSourceNow(env: Env, item: Item, field: string): Promise<void> {
  if (!hasAudio(item.type) || !item.media_id) return;
  const m = await env.res.media(item.media_id);
  if (!m?.durationSeconds) return;
  const needed = item.source_start_seconds + item.duration_seconds * item.playback_rate;
  if (item.source_start_seconds >= m.durationSeconds) {
    throw bad(field, `source_start_seconds ${item.source_start_seconds} is at or past the end of the media (${m.durationSeconds} s)`);
  }
  if (needed > m.durationSeconds + 0.05) {
    throw bad(
      field,
      `item ${item.item_id} would need ${t3(needed)} s of its ${m.durationSeconds} s source (source_start_seconds ${item.source_start_seconds} + duration_seconds ${item.duration_seconds} × playback_rate ${item.playback_rate}); shorten it, trim less or speed it up`,
    );
  }
}

function checkFades(item: Item, field: string): void {
  if (item.audio_fade_in_seconds > item.duration_seconds + 1e-9)
    throw bad(field, `audio_fade_in_seconds ${item.audio_fade_in_seconds} is longer than the item (${item.duration_seconds} s)`);
  if (item.audio_fade_out_seconds > item.duration_seconds + 1e-9)
    throw bad(field, `audio_fade_out_seconds ${item.audio_fade_out_seconds} is longer than the item (${item.duration_seconds} s)`);
}

function checkAnimation(item: Item, field: string): void {
  const a = item.animation;
  if (!a) return;
  const total = (a.enter?.duration_seconds ?? 0) + (a.exit?.duration_seconds ?? 0);
  if (total > item.duration_seconds + 1e-9) {
    throw bad(
      field,
      `enter and exit animations last ${t3(total)} s together, longer than item ${item.item_id} (${item.duration_seconds} s)`,
    );
  }
}

const withDefaults = (a: Animation): Animation => ({ ...a, duration_seconds: a.duration_seconds ?? 0.5 });

function mergeStyle(base: TextStyle | null, patch: TextStyle | undefined, defaults: TextStyle): TextStyle {
  return { ...defaults, ...(base ?? {}), ...(patch ?? {}) };
}

function checkCaptions(captions: CaptionEntry[], duration: number | undefined, field: string): void {
  captions.forEach((c, k) => {
    if (c.endMs <= c.startMs) throw bad(`${field}[${k}].endMs`, `must be after startMs (${c.startMs})`);
    if (duration !== undefined && c.startMs >= duration * 1000 - 1e-6)
      throw bad(`${field}[${k}].startMs`, `starts at ${c.startMs} ms, after the captions item ends (${Math.round(duration * 1000)} ms)`);
    (c.words ?? []).forEach((w, j) => {
      if (w.endMs < w.startMs) throw bad(`${field}[${k}].words[${j}].endMs`, `must not be before startMs (${w.startMs})`);
    });
  });
}

function textTrack(tl: Timeline, type: 'text' | 'captions', from: number, duration: number): Track {
  return packTrack(tl, type, from, duration).track;
}

function ensureCapacity(tl: Timeline, field: string): void {
  if (tl.items.length >= MAX_ITEMS) throw bad(field, `the project already has ${MAX_ITEMS} items, the most it may have`);
  if (tl.tracks.length > MAX_TRACKS) throw bad(field, `the project would have more than ${MAX_TRACKS} tracks`);
}

/** Places a media item (the packing rule unless a track is given). Shared with POST …/media. */
export function placeMediaItem(
  tl: Timeline,
  m: MediaInfo,
  p: {
    from_seconds?: number;
    duration_seconds?: number;
    fit?: S['Fit'];
    track_id?: string;
    audio_role?: S['AudioRole'];
    volume_db?: number;
  },
  field: (name: string) => string,
  maxSeconds = MAX_TIMELINE_SECONDS,
): { item: Item; track: Track } {
  const type: ItemType = m.kind === 'voice' ? 'audio' : m.kind;
  const from = t3(p.from_seconds ?? 0);
  const mediaDuration = m.durationSeconds ?? undefined;
  const duration = t3(p.duration_seconds ?? (type === 'image' ? 5 : (mediaDuration ?? 5)));
  if (type !== 'image' && mediaDuration !== undefined && duration > mediaDuration + 0.05) {
    throw bad(field('duration_seconds'), `is ${duration} s but the media is only ${mediaDuration} s long`);
  }
  const max = Math.min(maxSeconds, MAX_TIMELINE_SECONDS);
  if (from + duration > max + 1e-9) {
    throw bad(
      field(
        p.duration_seconds === undefined && p.from_seconds === undefined
          ? 'media_id'
          : p.from_seconds === undefined
            ? 'duration_seconds'
            : 'from_seconds',
      ),
      `the item would end at ${t3(from + duration)} s, beyond the ${max} s timeline limit`,
    );
  }
  if (p.audio_role && type === 'image') throw bad(field('audio_role'), 'applies to audio and video media only; this media is an image');
  if (m.status !== 'completed') throw bad(field('media_id'), `media ${m.id} is ${m.status}, not ready`);
  ensureCapacity(tl, field('media_id'));
  let track: Track;
  let created = false;
  if (p.track_id) {
    const found = tl.tracks.find((t) => t.track_id === p.track_id);
    if (!found) throw new OpError('not_found', field('track_id'), `track ${p.track_id} does not exist in this project`, 'editor_track');
    if (!compatible(found.type, type))
      throw bad(
        field('track_id'),
        `track ${found.track_id} is ${TYPE_NAMES[found.type].replace(/ $/, '')} track and cannot hold ${TYPE_NAMES[type]} item`,
      );
    track = found;
  } else {
    ({ track, created } = packTrack(tl, type, from, duration));
  }
  const role: S['AudioRole'] | null =
    type === 'image'
      ? null
      : (p.audio_role ??
        (type === 'video'
          ? 'source_video'
          : m.source === 'voiceover'
            ? 'voiceover'
            : m.source === 'sound_effect'
              ? 'sound_effect'
              : m.kind === 'voice'
                ? 'voice'
                : 'audio'));
  const item = baseItem({
    item_id: newItemId(tl, type),
    track_id: track.track_id,
    type,
    media_id: m.id,
    from_seconds: from,
    duration_seconds: duration,
    audio_role: role,
    fit: p.fit ?? 'cover',
    volume_db: p.volume_db ?? 0,
    layer: type === 'audio' ? 0 : mediaLayer(tl, track, created),
  });
  tl.items.push(item);
  return { item, track };
}

// ------------------------------------------------------------------------------ operations

type Handler<T extends Op['type']> = (env: Env, op: Extract<Op, { type: T }>) => Promise<string[]> | string[];

const handlers: { [T in Op['type']]: Handler<T> } = {
  set_title(env, op) {
    env.state.title = op.title;
    return [];
  },

  remove_item(env, op) {
    const item = getItem(env, op.item_id);
    const tl = env.state.timeline;
    tl.items = tl.items.filter((i) => i !== item);
    const touched: string[] = [item.item_id];
    for (const i of tl.items) {
      if (i.transition?.from_item_id === item.item_id) {
        i.transition = null;
        touched.push(i.item_id);
      }
    }
    return touched;
  },

  async set_item_timing(env, op) {
    const item = getItem(env, op.item_id);
    if (op.from_seconds === undefined && op.duration_seconds === undefined)
      throw bad('from_seconds', 'give from_seconds and/or duration_seconds');
    if (op.from_seconds !== undefined) item.from_seconds = t3(op.from_seconds);
    if (op.duration_seconds !== undefined) item.duration_seconds = t3(op.duration_seconds);
    checkTimeline(env, item.from_seconds, item.duration_seconds, op.duration_seconds !== undefined ? 'duration_seconds' : 'from_seconds');
    checkSource(env, item, 'duration_seconds');
    checkFades(item, 'duration_seconds');
    checkAnimation(item, 'duration_seconds');
    return [item.item_id];
  },

  async set_item_source(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['video', 'audio'], 'item_id', 'set_item_source');
    if (op.source_start_seconds === undefined && op.playback_rate === undefined)
      throw bad('source_start_seconds', 'give source_start_seconds and/or playback_rate');
    if (op.source_start_seconds !== undefined) item.source_start_seconds = t3(op.source_start_seconds);
    if (op.playback_rate !== undefined) item.playback_rate = op.playback_rate;
    checkSource(env, item, op.source_start_seconds !== undefined ? 'source_start_seconds' : 'playback_rate');
    return [item.item_id];
  },

  set_item_audio(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['video', 'audio'], 'item_id', 'set_item_audio');
    if (op.volume_db === undefined && op.audio_fade_in_seconds === undefined && op.audio_fade_out_seconds === undefined) {
      throw bad('volume_db', 'give volume_db, audio_fade_in_seconds and/or audio_fade_out_seconds');
    }
    if (op.volume_db !== undefined) item.volume_db = op.volume_db;
    if (op.audio_fade_in_seconds !== undefined) item.audio_fade_in_seconds = t3(op.audio_fade_in_seconds);
    if (op.audio_fade_out_seconds !== undefined) item.audio_fade_out_seconds = t3(op.audio_fade_out_seconds);
    checkFades(item, op.audio_fade_in_seconds !== undefined ? 'audio_fade_in_seconds' : 'audio_fade_out_seconds');
    return [item.item_id];
  },

  set_audio_levels(env, op) {
    if (op.volume_db === undefined && op.audio_fade_in_seconds === undefined && op.audio_fade_out_seconds === undefined) {
      throw bad('volume_db', 'give volume_db, audio_fade_in_seconds and/or audio_fade_out_seconds');
    }
    const tl = env.state.timeline;
    (op.item_ids ?? []).forEach((id, k) => {
      const item = getItem(env, id, `item_ids[${k}]`);
      requireType(item, ['video', 'audio'], `item_ids[${k}]`, 'set_audio_levels');
    });
    (op.exclude_item_ids ?? []).forEach((id, k) => {
      getItem(env, id, `exclude_item_ids[${k}]`);
    });
    const ids = op.item_ids ? new Set(op.item_ids) : undefined;
    const excluded = new Set(op.exclude_item_ids ?? []);
    const selected = tl.items.filter(
      (i) =>
        hasAudio(i.type) &&
        (!ids || ids.has(i.item_id)) &&
        (!op.item_types || op.item_types.includes(i.type as 'video' | 'audio')) &&
        (!op.audio_roles || (i.audio_role !== null && op.audio_roles.includes(i.audio_role))) &&
        !excluded.has(i.item_id),
    );
    for (const i of selected) {
      if (op.volume_db !== undefined) i.volume_db = op.volume_db;
      if (op.audio_fade_in_seconds !== undefined) i.audio_fade_in_seconds = t3(Math.min(op.audio_fade_in_seconds, i.duration_seconds));
      if (op.audio_fade_out_seconds !== undefined) i.audio_fade_out_seconds = t3(Math.min(op.audio_fade_out_seconds, i.duration_seconds));
    }
    return selected.map((i) => i.item_id);
  },

  set_item_animation(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['video', 'image', 'text', 'captions'], 'item_id', 'set_item_animation');
    if (op.enter === undefined && op.exit === undefined) throw bad('enter', 'give enter and/or exit (null clears one)');
    const cur = item.animation ?? { enter: null, exit: null };
    const next = {
      enter: op.enter === undefined ? cur.enter : op.enter === null ? null : withDefaults(op.enter),
      exit: op.exit === undefined ? cur.exit : op.exit === null ? null : withDefaults(op.exit),
    };
    item.animation = next.enter || next.exit ? next : null;
    checkAnimation(item, op.enter ? 'enter.duration_seconds' : 'exit.duration_seconds');
    return [item.item_id];
  },

  apply_item_transition(env, op) {
    const from = getItem(env, op.from_item_id, 'from_item_id');
    const to = getItem(env, op.to_item_id, 'to_item_id');
    if (from === to) throw bad('to_item_id', 'must be a different item than from_item_id');
    requireType(from, ['video', 'image', 'text', 'captions'], 'from_item_id', 'apply_item_transition');
    requireType(to, ['video', 'image', 'text', 'captions'], 'to_item_id', 'apply_item_transition');
    const overlap = t3(op.overlap_seconds ?? 0.5);
    if (overlap > Math.min(from.duration_seconds, to.duration_seconds) + 1e-9) {
      throw bad(
        'overlap_seconds',
        `${overlap} s is longer than ${from.duration_seconds < to.duration_seconds ? `item ${from.item_id}` : `item ${to.item_id}`} (${Math.min(from.duration_seconds, to.duration_seconds)} s)`,
      );
    }
    const start = t3(itemEnd(from) - overlap);
    if (start < 0) throw bad('overlap_seconds', `would start ${to.item_id} before the timeline's start`);
    to.from_seconds = start;
    checkTimeline(env, to.from_seconds, to.duration_seconds, 'to_item_id');
    to.transition = { from_item_id: from.item_id, overlap_seconds: overlap };
    if (overlap > 0 || op.enter || op.exit) {
      const fade = (): Animation => ({ type: 'fade', duration_seconds: Math.max(0.05, overlap) });
      to.animation = { enter: op.enter ? withDefaults(op.enter) : fade(), exit: to.animation?.exit ?? null };
      from.animation = { enter: from.animation?.enter ?? null, exit: op.exit ? withDefaults(op.exit) : fade() };
    }
    checkAnimation(to, 'enter.duration_seconds');
    checkAnimation(from, 'exit.duration_seconds');
    return [from.item_id, to.item_id];
  },

  split_item(env, op) {
    const item = getItem(env, op.item_id);
    const tl = env.state.timeline;
    const at = t3(op.at_seconds);
    if (at <= item.from_seconds + 0.005 || at >= itemEnd(item) - 0.005) {
      throw bad('at_seconds', `${at} s is not strictly inside item ${item.item_id} (${item.from_seconds} s to ${itemEnd(item)} s)`);
    }
    ensureCapacity(tl, 'item_id');
    const firstDuration = t3(at - item.from_seconds);
    const second: Item = structuredClone(item);
    second.item_id = newItemId(tl, item.type);
    second.from_seconds = at;
    second.duration_seconds = t3(item.duration_seconds - firstDuration);
    if (hasAudio(item.type)) second.source_start_seconds = t3(item.source_start_seconds + firstDuration * item.playback_rate);
    // The cut is hard: the first half keeps the way in, the second the way out.
    second.transition = null;
    second.animation = item.animation?.exit ? { enter: null, exit: item.animation.exit } : null;
    item.animation = item.animation?.enter ? { enter: item.animation.enter, exit: null } : null;
    item.duration_seconds = firstDuration;
    if (item.audio_fade_out_seconds > 0) {
      second.audio_fade_out_seconds = Math.min(item.audio_fade_out_seconds, second.duration_seconds);
      item.audio_fade_out_seconds = 0;
    }
    second.audio_fade_in_seconds = 0;
    item.audio_fade_in_seconds = Math.min(item.audio_fade_in_seconds, item.duration_seconds);
    if (item.type === 'captions' && item.captions) {
      const cut = Math.round(firstDuration * 1000);
      const all = item.captions;
      item.captions = all.filter((c) => c.startMs < cut).map((c) => clipCue(c, 0, cut, 0));
      second.captions = all.filter((c) => c.endMs > cut).map((c) => clipCue(c, cut, Number.MAX_SAFE_INTEGER, cut));
    }
    checkAnimation(item, 'at_seconds');
    checkAnimation(second, 'at_seconds');
    tl.items.push(second);
    return [item.item_id, second.item_id];
  },

  set_item_transform(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['video', 'image', 'text', 'captions'], 'item_id', 'set_item_transform');
    const fields = ['left', 'top', 'width', 'height', 'opacity'] as const;
    if (!fields.some((f) => op[f] !== undefined)) throw bad('left', 'give at least one of left, top, width, height, opacity');
    for (const f of fields) if (op[f] !== undefined) item.transform[f] = t3(op[f]!);
    if (isTextLike(item.type) && item.style) {
      // The text block's anchor follows its box.
      const align = item.style.align ?? 'center';
      const t = item.transform;
      item.style = {
        ...item.style,
        top: Math.max(0, Math.min(1, t.top)),
        left: Math.max(0, Math.min(1, t3(align === 'left' ? t.left : align === 'right' ? t.left + t.width : t.left + t.width / 2))),
      };
    }
    return [item.item_id];
  },

  move_item_to_track(env, op) {
    const item = getItem(env, op.item_id);
    const track = env.state.timeline.tracks.find((t) => t.track_id === op.track_id);
    if (!track) throw new OpError('not_found', 'track_id', `track ${op.track_id} does not exist in this project`, 'editor_track');
    if (!compatible(track.type, item.type))
      throw bad('track_id', `track ${track.track_id} is ${TYPE_NAMES[track.type]} track and cannot hold ${TYPE_NAMES[item.type]} item`);
    item.track_id = track.track_id;
    return [item.item_id];
  },

  set_item_layer_order(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['video', 'image', 'text', 'captions'], 'item_id', 'set_item_layer_order');
    const order = drawOrder(env.state.timeline);
    const pos = order.indexOf(item);
    const others = order.filter((i) => i !== item);
    if (op.position === 'front') {
      item.layer = Math.max(0, ...others.map((i) => i.layer)) + 1;
      return [item.item_id];
    }
    if (op.position === 'back') {
      const min = others.length ? Math.min(...others.map((i) => i.layer)) : 0;
      if (min > 0) {
        item.layer = min - 1;
        return [item.item_id];
      }
      item.layer = 0;
      for (const i of others) i.layer += 1;
      return [item.item_id, ...others.map((i) => i.item_id)];
    }
    // forward/backward: one step past the neighbour in drawing order, then layers renumbered
    // so the new order is exactly what the layer numbers say.
    const target = op.position === 'forward' ? pos + 1 : pos - 1;
    if (target < 0 || target >= order.length) return [item.item_id];
    const reordered = order.filter((i) => i !== item);
    reordered.splice(target, 0, item);
    const changed: string[] = [];
    let layer = 0;
    for (const i of reordered) {
      if (i.layer !== layer) {
        i.layer = layer;
        changed.push(i.item_id);
      }
      layer++;
    }
    return changed.includes(item.item_id) ? changed : [item.item_id, ...changed];
  },

  add_text(env, op) {
    const tl = env.state.timeline;
    ensureCapacity(tl, 'text');
    const from = t3(op.from_seconds ?? 0);
    const duration = t3(op.duration_seconds ?? 3);
    checkTimeline(env, from, duration, 'duration_seconds');
    const style = mergeStyle(null, op.style, TEXT_DEFAULTS);
    if (op.style?.top === undefined) {
      style.top = pickTextSlot(tl, from, duration, textBlockHeight(op.text, style, env.state.frame));
    }
    const track = textTrack(tl, 'text', from, duration);
    const item = baseItem({
      item_id: newItemId(tl, 'text'),
      track_id: track.track_id,
      type: 'text',
      from_seconds: from,
      duration_seconds: duration,
      fit: 'contain',
      text: op.text,
      style,
      transform: textTransform(op.text, style, env.state.frame),
      layer: frontLayer(tl),
    });
    tl.items.push(item);
    return [item.item_id];
  },

  update_text(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['text'], 'item_id', 'update_text');
    if (op.text === undefined && op.style === undefined) throw bad('text', 'give text and/or style');
    if (op.text !== undefined) item.text = op.text;
    item.style = mergeStyle(item.style, op.style, TEXT_DEFAULTS);
    item.transform = textTransform(
      item.text ?? '',
      item.style,
      env.state.frame,
      item.transform.opacity,
      item.transform.width || TEXT_BOX_WIDTH,
    );
    return [item.item_id];
  },

  add_captions(env, op) {
    const tl = env.state.timeline;
    ensureCapacity(tl, 'captions');
    const from = t3(op.from_seconds ?? 0);
    const lastEnd = Math.max(...op.captions.map((c) => c.endMs));
    const duration = t3(op.duration_seconds ?? Math.max(0.01, lastEnd / 1000));
    checkCaptions(op.captions, op.duration_seconds, 'captions');
    checkTimeline(env, from, duration, 'duration_seconds');
    const item = newCaptionsItem(env, op.captions, from, duration, op.style);
    return [item.item_id];
  },

  update_captions(env, op) {
    const item = getItem(env, op.item_id);
    requireType(item, ['captions'], 'item_id', 'update_captions');
    if (op.captions === undefined && op.style === undefined) throw bad('captions', 'give captions and/or style');
    if (op.captions) {
      checkCaptions(op.captions, item.duration_seconds, 'captions');
      item.captions = op.captions;
    }
    item.style = mergeStyle(item.style, op.style, CAPTION_DEFAULTS);
    item.transform = captionsTransform(item.style, env.state.frame, item.transform.opacity);
    return [item.item_id];
  },

  async add_sound_effect(env, op) {
    const given = (['sound_effect_id', 'url', 'media_id'] as const).filter((k) => op[k] !== undefined);
    if (given.length !== 1) throw bad(given[1] ?? 'sound_effect_id', 'give exactly one of sound_effect_id, url and media_id');
    let m: MediaInfo | undefined;
    if (op.sound_effect_id) m = await env.res.soundEffect(op.sound_effect_id, `${env.prefix}sound_effect_id`);
    else if (op.url) m = await env.res.fromUrl(op.url, `${env.prefix}url`, 'audio');
    else {
      m = await env.res.media(op.media_id!);
      if (!m) throw new OpError('not_found', 'media_id', `media ${op.media_id} does not exist in this workspace`, 'editor_media');
      if (m.kind !== 'audio' && m.kind !== 'voice') throw bad('media_id', `media ${m.id} is ${m.kind}; a sound effect must be audio`);
    }
    const { item } = placeMediaItem(
      env.state.timeline,
      m,
      { from_seconds: op.from_seconds, duration_seconds: op.duration_seconds, audio_role: 'sound_effect', volume_db: op.volume_db },
      (f) => (f === 'media_id' ? given[0] : f),
      env.state.maxSeconds,
    );
    return [item.item_id];
  },

  async add_voiceover(env, op) {
    const m = await env.res.voiceover(env.index, op.text, op.voice_id, op.voice_settings, `${env.prefix}voice_id`);
    const { item } = placeMediaItem(
      env.state.timeline,
      m,
      { from_seconds: op.from_seconds, audio_role: 'voiceover', volume_db: op.volume_db },
      (f) => (f === 'media_id' ? 'text' : f),
      env.state.maxSeconds,
    );
    return [item.item_id];
  },

  async generate_captions_from_items(env, op) {
    const tl = env.state.timeline;
    let sources: Item[];
    if (op.source_item_ids) {
      sources = op.source_item_ids.map((id, k) => {
        const item = getItem(env, id, `source_item_ids[${k}]`);
        requireType(item, ['video', 'audio'], `source_item_ids[${k}]`, 'generate_captions_from_items');
        if (!item.media_id) throw bad(`source_item_ids[${k}]`, `item ${id} has no media`);
        return item;
      });
    } else {
      sources = tl.items.filter(
        (i) => hasAudio(i.type) && i.media_id && i.volume_db > -60 && i.audio_role !== 'music' && i.audio_role !== 'sound_effect',
      );
    }
    await env.res.preload(sources.map((s) => s.media_id!));
    const words: TimedWord[] = [];
    for (const [k, s] of sources.entries()) {
      const m = await env.res.media(s.media_id!);
      if (!m) continue;
      if (s.type === 'video' && m.hasAudio === false) {
        if (op.source_item_ids) throw bad(`source_item_ids[${k}]`, `item ${s.item_id}'s video has no audio track`);
        continue;
      }
      const field = op.source_item_ids ? `${env.prefix}source_item_ids[${k}]` : `${env.prefix}source_item_ids`;
      const mediaWords = await env.res.words(m, op.language, field);
      words.push(...wordsOnTimeline(s, mediaWords));
    }
    if (!sources.length) throw bad('source_item_ids', 'the project has no audible video or audio items to caption');
    if (!words.length) throw bad('source_item_ids', 'no speech was found in the selected items (within their trims and durations)');
    words.sort((a, b) => a.startMs - b.startMs);
    const firstMs = words[0].startMs;
    const lastMs = words[words.length - 1].endMs;
    if (op.captions_item_id) {
      const item = getItem(env, op.captions_item_id, 'captions_item_id');
      requireType(item, ['captions'], 'captions_item_id', 'generate_captions_from_items');
      const from = Math.min(item.from_seconds, Math.floor(firstMs / 10) / 100);
      item.from_seconds = t3(from);
      item.duration_seconds = t3(Math.max(itemEnd(item), lastMs / 1000 + 0.2) - from);
      checkTimeline(env, item.from_seconds, item.duration_seconds, 'captions_item_id');
      item.captions = cuesFromWords(words, Math.round(from * 1000));
      item.style = mergeStyle(item.style, op.style, CAPTION_DEFAULTS);
      item.transform = captionsTransform(item.style, env.state.frame, item.transform.opacity);
      return [item.item_id];
    }
    const from = t3(Math.floor(firstMs / 10) / 100);
    const duration = t3(lastMs / 1000 + 0.2 - from);
    checkTimeline(env, from, duration, 'source_item_ids');
    ensureCapacity(tl, 'source_item_ids');
    const item = newCaptionsItem(env, cuesFromWords(words, Math.round(from * 1000)), from, duration, op.style);
    return [item.item_id];
  },
};

function clipCue(c: CaptionEntry, fromMs: number, toMs: number, shiftMs: number): CaptionEntry {
  const clip = (v: number) => Math.max(fromMs, Math.min(toMs, v)) - shiftMs;
  const out: CaptionEntry = { ...c, startMs: clip(c.startMs), endMs: clip(c.endMs) };
  if (c.timestampMs !== undefined) out.timestampMs = clip(c.timestampMs);
  if (c.words)
    out.words = c.words
      .filter((w) => w.endMs > fromMs && w.startMs < toMs)
      .map((w) => ({ ...w, startMs: clip(w.startMs), endMs: clip(w.endMs) }));
  return out;
}

function captionsTransform(style: TextStyle, frame: { width: number; height: number }, opacity = 1) {
  return textTransform('Caption line one\nline two', style, frame, opacity);
}

function newCaptionsItem(env: Env, captions: CaptionEntry[], from: number, duration: number, style: TextStyle | undefined): Item {
  const tl = env.state.timeline;
  const merged = mergeStyle(null, style, CAPTION_DEFAULTS);
  const track = textTrack(tl, 'captions', from, duration);
  const item = baseItem({
    item_id: newItemId(tl, 'captions'),
    track_id: track.track_id,
    type: 'captions',
    from_seconds: from,
    duration_seconds: duration,
    fit: 'contain',
    captions,
    style: merged,
    transform: captionsTransform(merged, env.state.frame),
    layer: frontLayer(tl),
  });
  tl.items.push(item);
  return item;
}

/** A media file's word timings placed on the timeline through the item's trim, rate and length. */
export function wordsOnTimeline(item: Item, words: TimedWord[]): TimedWord[] {
  const srcStart = item.source_start_seconds * 1000;
  const srcEnd = srcStart + item.duration_seconds * item.playback_rate * 1000;
  const base = item.from_seconds * 1000;
  const out: TimedWord[] = [];
  for (const w of words) {
    if (w.endMs <= srcStart || w.startMs >= srcEnd) continue;
    const s = Math.max(w.startMs, srcStart);
    const e = Math.min(w.endMs, srcEnd);
    out.push({
      text: w.text,
      startMs: Math.round(base + (s - srcStart) / item.playback_rate),
      endMs: Math.round(base + (e - srcStart) / item.playback_rate),
      ...(w.confidence !== undefined ? { confidence: w.confidence } : {}),
    });
  }
  return out;
}

/** Groups timeline words into caption cues (at most 6 words or 2.8 s, broken at pauses and sentence ends). */
export function cuesFromWords(words: TimedWord[], originMs: number): CaptionEntry[] {
  const cues: CaptionEntry[] = [];
  let cur: TimedWord[] = [];
  const flush = () => {
    if (!cur.length) return;
    const rel = (v: number) => Math.max(0, v - originMs);
    const confs = cur.map((w) => w.confidence).filter((c): c is number => c !== undefined);
    cues.push({
      text: cur
        .map((w) => w.text)
        .join(' ')
        .slice(0, 500),
      startMs: rel(cur[0].startMs),
      endMs: Math.max(rel(cur[0].startMs) + 1, rel(cur[cur.length - 1].endMs)),
      ...(confs.length ? { confidence: Math.round((confs.reduce((a, b) => a + b, 0) / confs.length) * 1000) / 1000 } : {}),
      words: cur.map((w) => ({
        text: w.text.slice(0, 100),
        startMs: rel(w.startMs),
        endMs: Math.max(rel(w.startMs), rel(w.endMs)),
        ...(w.confidence !== undefined ? { confidence: w.confidence } : {}),
      })),
    });
    cur = [];
  };
  for (const w of words) {
    const prev = cur[cur.length - 1];
    if (prev && (cur.length >= 6 || w.endMs - cur[0].startMs > 2800 || w.startMs - prev.endMs > 600 || /[.!?]$/.test(prev.text))) flush();
    cur.push(w);
  }
  flush();
  return cues;
}

/**
 * Applies `ops` in order to `state` (mutated). Throws an ApiError naming the failing operation's
 * index and field; returns what each operation did.
 */
export async function applyOperations(state: ProjectState, ops: Op[], res: EditResources): Promise<AppliedOperation[]> {
  res.used.clear();
  const applied: AppliedOperation[] = [];
  const deferred: Env['deferred'] = new Map();
  for (const [index, op] of ops.entries()) {
    const prefix = `body.operations[${index}].`;
    const env: Env = { state, res, index, prefix, deferred };
    try {
      const itemIds = await (handlers[op.type] as Handler<typeof op.type>)(env, op as never);
      applied.push({ index, type: op.type, item_ids: [...new Set(itemIds)] });
    } catch (err) {
      throw atIndex(err, index, op.type, prefix);
    }
  }
  for (const [id, at] of deferred) {
    const item = state.timeline.items.find((i) => i.item_id === id);
    if (!item) continue;
    const prefix = `body.operations[${at.index}].`;
    try {
      await checkSourceNow({ state, res, index: at.index, prefix, deferred }, item, at.field);
    } catch (err) {
      throw atIndex(err, at.index, ops[at.index].type, prefix);
    }
  }
  return applied;
}

function atIndex(err: unknown, index: number, type: string, prefix: string): unknown {
  if (err instanceof OpError) {
    const field = `${prefix}${err.field}`;
    return new ApiError(err.code, `Operation ${index} (${type}) failed: ${err.field} ${err.message}`, {
      operation_index: index,
      field,
      ...(err.resource ? { resource: err.resource } : {}),
      ...(err.code === 'bad_request' ? { errors: [{ field, message: err.message }] } : {}),
    });
  }
  if (err instanceof ApiError) {
    err.context.operation_index ??= index;
    if (!err.message.startsWith('Operation ')) {
      return new ApiError(
        err.code,
        `Operation ${index} (${type}) failed: ${err.message.replace(/^Invalid request: /, '')}`,
        err.context,
        err.headers,
      );
    }
  }
  return err;
}

export { isVisual, addTrack, trackHasRoom };
