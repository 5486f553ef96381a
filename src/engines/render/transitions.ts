// Scene transitions of the timelines the pipelines make (faceless videos, slideshows): each
// scene after the first starts while the one before it is still showing (that one is lengthened
// by the transition) and says so in its `transition` (from_item_id, overlap_seconds, type), as
// the editor's apply_item_transition leaves two items. The types take turns: a cross-fade, a
// slide in from the right, a zoom settling from 140 %. An item without an enter animation of its
// own, or with a pan, enters the way its transition says (./ffmpeg.ts, enterOf); ffmpeg 4.1 has
// no xfade, so the timeline renderer draws them as an alpha fade, a moving overlay and a
// perspective warp of the incoming item over the outgoing one.
import type { components } from '../../../generated/openapi.d.ts';

type Item = components['schemas']['EditorItem'];
type TransitionType = NonNullable<components['schemas']['ItemTransition']['type']>;

export const SCENE_TRANSITIONS: readonly TransitionType[] = ['fade', 'slide', 'zoom'];

/** Seconds of each transition (less for short scenes: at most a third of either scene). */
export const TRANSITION_SECONDS = 0.5;

const t3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Gives `scenes` (items back to back, in order; changed in place) their transitions: every scene
 * after the first overlaps the one before by the transition's length, entering the way whose
 * turn it is.
 */
export function addSceneTransitions(scenes: Item[], types: readonly TransitionType[] = SCENE_TRANSITIONS): void {
  for (let i = 1; i < scenes.length; i++) {
    const prev = scenes[i - 1];
    const cur = scenes[i];
    const d = t3(Math.min(TRANSITION_SECONDS, cur.duration_seconds / 3, prev.duration_seconds / 3));
    if (d < 0.05) continue;
    prev.duration_seconds = t3(prev.duration_seconds + d);
    cur.transition = { from_item_id: prev.item_id, overlap_seconds: d, type: types[(i - 1) % types.length] };
  }
}
