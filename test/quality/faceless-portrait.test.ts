// Faceless videos in 9:16 (half of the image styles, three durations; the other aspect and the
// other styles: faceless-landscape.test.ts), made by the local engines over HTTP, pass the media
// quality checker: distinct scenes, no uncovered canvas during pans and transitions, readable
// captions, narration over ≥ 90 % of the duration, sound.
import t from 'tap';
import { FACELESS_TEST_DURATIONS, IMAGE_STYLES, mediaMatrix } from '../../scripts/lib/media-matrix.ts';
import { checkCases } from '../helpers/quality-matrix.ts';

const all = mediaMatrix({ durations: FACELESS_TEST_DURATIONS }).filter((c) => c.pipeline === 'faceless_video');
t.same(new Set(all.map((c) => c.body.image_style)), new Set(IMAGE_STYLES), 'every image style, over both files');
const cases = all.filter((c) => c.aspect === '9:16');
t.same(new Set(cases.map((c) => c.body.duration)).size, 3, 'three durations');
await checkCases(t, cases);
