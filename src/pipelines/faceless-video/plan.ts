// The pure parts of the faceless pipeline: a narration in parts (hook, beats, call to action),
// speech rate fitting, caption cues from word timings, scene times and the editor timeline the
// video is rendered from (and that the editor opens afterwards). No I/O here.
import { speechTokens } from '../../engines/speech/timings.ts';
import type { SpokenWord } from '../../engines/speech/types.ts';
import { sceneTitle } from '../../engines/write/brief.ts';
import {
  addTrack,
  baseItem,
  CAPTION_DEFAULTS,
  newItemId,
  t3,
  type CaptionEntry,
  type Item,
  type Timeline,
} from '../../services/editor/model.ts';

/**
 * Words per second of the local voices at speed 1 (eSpeak NG at 175 wpm, with its pauses: a 63-word
 * script takes about 21.5 s). Scripts are sized with it, so their narration fills the video.
 */
export const WORDS_PER_SECOND = 2.9;
/** The fastest the narration is sped up to fit the duration. */
export const MAX_SPEED = 1.6;
export const MIN_SPEED = 0.8;

export interface NarrationPart {
  role: 'hook' | 'beat' | 'cta';
  text: string;
  /** A short visual description of the part's scene. */
  scene: string;
  /** The part's on-screen title (2–6 words; stored scripts made before it have none: onScreenTitle). */
  title?: string;
}

/** A part's on-screen title: the writer's, else a phrase of its narration (never a bag of its words). */
export function onScreenTitle(part: Pick<NarrationPart, 'text' | 'title'> | undefined): string | undefined {
  if (!part) return undefined;
  return part.title?.trim() || sceneTitle(part.text);
}

/** Sentences of a text (keeps the end punctuation). */
export function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?…。！？])\s+/u)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

/** Words as the synthesizer's timings count them (whitespace tokens with a letter or digit). */
export const spokenTokens = speechTokens;

/**
 * A given script as parts: its sentences, merged into at most `maxParts` parts of similar
 * length (each part one scene); the first is the hook, the last the call to action.
 */
export function partsFromScript(script: string, maxParts = 7): NarrationPart[] {
  let list = sentences(script);
  if (!list.length) list = [script.trim()];
  while (list.length > maxParts) {
    // Merge the shortest neighbouring pair.
    let best = 0;
    for (let i = 1; i < list.length - 1; i++) if (list[i].length + list[i + 1].length < list[best].length + list[best + 1].length) best = i;
    list.splice(best, 2, `${list[best]} ${list[best + 1]}`);
  }
  return list.map((text, i) => ({
    role: i === 0 ? 'hook' : i === list.length - 1 && list.length > 1 ? 'cta' : 'beat',
    text,
    scene: text,
    title: sceneTitle(text),
  }));
}

/**
 * Where the narration should end in a video of `targetMs`: a short hold after the call to action
 * (0.5 s, a tenth of a short video), covering at least 90 % of the video (from its first word) and never leaving a
 * music-only or silent tail over 1 s; a narration ending anywhere in [min, max] is left as it is.
 */
export function narrationEnd(targetMs: number): { min: number; ideal: number; max: number } {
  const ideal = targetMs - Math.min(500, targetMs * 0.1);
  return {
    // 90 % spoken counts from the first word, which comes a little after 0 (LEAD_IN_MS).
    min: Math.min(ideal, Math.max(targetMs * 0.9 + LEAD_IN_MS, targetMs - 1000)),
    ideal,
    max: targetMs - Math.min(300, targetMs * 0.06),
  };
}

/** About when the voices' first word starts (ms): the silence before it is not narration. */
const LEAD_IN_MS = 300;

/** How long a written script is planned to speak (seconds): to where the speech-rate fit aims, so it needs little of the fit. */
export function scriptSeconds(durationSeconds: number): number {
  return narrationEnd(durationSeconds * 1000).ideal / 1000;
}

/**
 * The speech rate that makes a narration of `spokenMs` at speed `speed` end where narrationEnd
 * puts it (clamped to MIN_SPEED..MAX_SPEED); the same speed when it already ends there.
 */
export function fitSpeed(spokenMs: number, speed: number, targetMs: number): number {
  const end = narrationEnd(targetMs);
  if (spokenMs >= end.min && spokenMs <= end.max) return speed;
  // Never slower than MIN_SPEED in all (synthesis rate times tempo): slower speech drags; a script
  // written here is sized to the duration with the voices' real rate, so it needs little of either.
  return Math.max(MIN_SPEED, Math.min(MAX_SPEED, (speed * spokenMs) / end.ideal));
}

/** Where each part starts in the narration (ms), from the words' timings. */
export function partStarts(parts: NarrationPart[], words: SpokenWord[]): number[] {
  const starts: number[] = [];
  let w = 0;
  for (const p of parts) {
    starts.push(w < words.length ? words[w].startMs : (words.at(-1)?.endMs ?? 0));
    w += spokenTokens(p.text).length;
  }
  starts[0] = 0;
  return starts;
}

/**
 * Caption cues: up to `maxWords` words each, broken after end punctuation and at part
 * boundaries; a cue shows from its first word's start to its last word's end (held a little,
 * never into the next cue), with the words' own times for the karaoke highlight.
 */
export function captionCues(parts: NarrationPart[], words: SpokenWord[], maxWords = 4): CaptionEntry[] {
  const boundaries = new Set<number>();
  let count = 0;
  for (const p of parts) {
    count += spokenTokens(p.text).length;
    boundaries.add(count);
  }
  const cues: CaptionEntry[] = [];
  let group: SpokenWord[] = [];
  const flush = () => {
    if (!group.length) return;
    cues.push({
      text: group.map((g) => g.text).join(' '),
      startMs: Math.round(group[0].startMs),
      endMs: Math.round(group.at(-1)!.endMs),
      words: group.map((g) => ({ text: g.text, startMs: Math.round(g.startMs), endMs: Math.round(g.endMs) })),
    });
    group = [];
  };
  words.forEach((w, i) => {
    group.push(w);
    if (group.length >= maxWords || /[.!?…,;:。！？]$/u.test(w.text) || boundaries.has(i + 1)) flush();
  });
  flush();
  for (let i = 0; i < cues.length; i++) {
    const next = cues[i + 1]?.startMs ?? Infinity;
    cues[i].endMs = Math.max(cues[i].startMs + 1, Math.min(cues[i].endMs + 150, next));
  }
  return cues;
}

export interface TimelineInput {
  width: number;
  height: number;
  durationSeconds: number;
  /** Scene images by part (media ids), their start times (ms) and the voiceover. */
  sceneMediaIds: string[];
  sceneStartsMs: number[];
  voice: { mediaId: string; durationMs: number };
  cues: CaptionEntry[];
  /** The music bed (ducked under the narration in the file itself). */
  music?: { mediaId: string; durationMs: number };
  /** Each scene's clip (a video media id, as long as its scene), or null where the scene is its still. */
  clips?: (string | null)[];
  /** The caption scrim and brand (a transparent picture) laid over every scene: scenes whose stills were drawn without them. */
  overlayMediaId?: string;
}

const PAN_DIRECTIONS = ['up', 'left', 'down', 'right'] as const;

/**
 * A model's prompt for a scene (the image model's still, the video model's clip): its description
 * in the request's styles, and no words in the picture (captions go over it).
 */
export function scenePrompt(
  spec: { imageStyle: string; aiStyles: readonly string[]; fluxStyles: readonly string[]; aspectRatio: string },
  description: string,
  kind: 'still' | 'clip',
): string {
  const styles = [spec.imageStyle, ...spec.aiStyles, ...spec.fluxStyles].map((st) => st.replace(/[_-]+/g, ' '));
  const frame = spec.aspectRatio === '9:16' ? 'vertical' : 'horizontal';
  return [
    description.trim(),
    `Style: ${styles.join(', ')}.`,
    kind === 'still'
      ? `A ${frame} still of a short video, with calm space at the bottom for captions.`
      : `A ${frame} shot of a short video: steady, gentle camera motion, calm space at the bottom for captions, no sound.`,
    `No text, lettering, captions, logos or watermarks in the ${kind === 'still' ? 'image' : 'video'}.`,
  ].join('\n\n');
}

/** Top of the caption band (fraction of the frame height) for a frame. */
// Portrait: the captions (0.60–0.76 of the height) end above the 9:16 feed's bottom UI zone (the lowest 20 %).
export const captionTop = (width: number, height: number) => (height > width ? 0.58 : 0.76);

/**
 * The editor timeline of a faceless video: one track of scenes back to back from 0 to the end,
 * each a still drifting with a pan or a clip covering its scene (a video track then), the
 * overlay (caption scrim and brand) over all of them when the scenes were made without it, the
 * voiceover on an audio track, and one captions item over the whole video in the caption band.
 */
export function facelessTimeline(input: TimelineInput): Timeline {
  const tl: Timeline = { tracks: [], items: [], seq: { track: 0, item: 0 } };
  const scenes = addTrack(tl, input.clips?.some(Boolean) ? 'video' : 'image');
  const overlay = input.overlayMediaId ? addTrack(tl, 'image') : undefined;
  const audio = addTrack(tl, 'audio');
  const captions = addTrack(tl, 'captions');
  const D = t3(input.durationSeconds);
  input.sceneMediaIds.forEach((mediaId, i) => {
    const from = t3(input.sceneStartsMs[i] / 1000);
    const end = i + 1 < input.sceneMediaIds.length ? t3(input.sceneStartsMs[i + 1] / 1000) : D;
    const dur = t3(Math.max(0.1, end - from));
    const clip = input.clips?.[i];
    const place = { track_id: scenes.track_id, from_seconds: from, duration_seconds: dur, layer: 0 };
    if (clip) {
      tl.items.push(baseItem({ item_id: newItemId(tl, 'video'), type: 'video', media_id: clip, ...place }));
      return;
    }
    tl.items.push(
      baseItem({
        item_id: newItemId(tl, 'image'),
        type: 'image',
        media_id: mediaId,
        ...place,
        animation: {
          enter: { type: 'pan', duration_seconds: t3(Math.min(10, dur)), direction: PAN_DIRECTIONS[i % PAN_DIRECTIONS.length] },
          exit: null,
        },
      }),
    );
  });
  if (overlay) {
    tl.items.push(
      baseItem({
        item_id: newItemId(tl, 'image'),
        track_id: overlay.track_id,
        type: 'image',
        media_id: input.overlayMediaId!,
        from_seconds: 0,
        duration_seconds: D,
        fit: 'fill',
        layer: 1,
      }),
    );
  }
  tl.items.push(
    baseItem({
      item_id: newItemId(tl, 'audio'),
      track_id: audio.track_id,
      type: 'audio',
      media_id: input.voice.mediaId,
      from_seconds: 0,
      duration_seconds: t3(Math.min(D, input.voice.durationMs / 1000)),
      audio_role: 'voiceover',
      transform: { left: 0, top: 0, width: 1, height: 1, opacity: 1 },
    }),
  );
  if (input.music) {
    const music = addTrack(tl, 'audio');
    tl.items.push(
      baseItem({
        item_id: newItemId(tl, 'audio'),
        track_id: music.track_id,
        type: 'audio',
        media_id: input.music.mediaId,
        from_seconds: 0,
        duration_seconds: t3(Math.min(D, input.music.durationMs / 1000)),
        audio_role: 'music',
        volume_db: -6,
      }),
    );
  }
  const portrait = input.height > input.width;
  const top = captionTop(input.width, input.height);
  const captionItem: Item = baseItem({
    item_id: newItemId(tl, 'captions'),
    track_id: captions.track_id,
    type: 'captions',
    from_seconds: 0,
    duration_seconds: D,
    captions: input.cues,
    style: {
      ...CAPTION_DEFAULTS,
      font_size: portrait ? 84 : 64,
      stroke_width: 6,
      top: top + 0.02,
      highlight_color: '#FFD400',
      color: '#FFFFFF',
    },
    transform: { left: 0.06, top: t3(top + 0.02), width: 0.88, height: portrait ? 0.16 : 0.14, opacity: 1 },
    layer: 10,
  });
  tl.items.push(captionItem);
  return tl;
}
