// Every UGC ad template in 9:16 and 16:9 (6 × 2), made by the local engines over HTTP (the presenter
// speaks its script), passes the media quality checker (texts in sampled frames, no uncovered
// canvas, sound).
import t from 'tap';
import { mediaMatrix } from '../../scripts/lib/media-matrix.ts';
import { checkCases } from '../helpers/quality-matrix.ts';

const cases = mediaMatrix().filter((c) => c.pipeline === 'ugc_ad');
t.equal(cases.length, 12, '6 templates × 2 aspects');
await checkCases(t, cases);
