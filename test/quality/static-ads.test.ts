// Every static ad template in every aspect (10 × 4), made by the local engines over HTTP, passes
// the media quality checker: texts read back, fit with margins and out of UI zones, contrast ≥ 4.5:1,
// no uncovered canvas.
import t from 'tap';
import { mediaMatrix } from '../../scripts/lib/media-matrix.ts';
import { checkCases } from '../helpers/quality-matrix.ts';

const cases = mediaMatrix().filter((c) => c.pipeline === 'static_ad');
t.equal(cases.length, 40, '10 templates × 4 aspects');
await checkCases(t, cases);
