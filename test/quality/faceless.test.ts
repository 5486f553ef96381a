// Faceless videos in every image style, both aspects and three durations, made by the local
// engines over HTTP, pass the media quality checker: distinct scenes, no uncovered canvas during
// pans and transitions, readable captions, narration over ≥ 90 % of the duration, sound.
import t from 'tap';
import { IMAGE_STYLES, mediaMatrix } from '../../scripts/lib/media-matrix.ts';
import { checkCases } from '../helpers/quality-matrix.ts';

const cases = mediaMatrix({ durations: [10, 15, 20] }).filter((c) => c.pipeline === 'faceless_video');
t.same(new Set(cases.map((c) => c.body.image_style)), new Set(IMAGE_STYLES), 'every image style');
t.same(new Set(cases.map((c) => c.aspect)).size, 2, 'both aspects');
t.same(new Set(cases.map((c) => c.body.duration)).size, 3, 'three durations');
await checkCases(t, cases);
