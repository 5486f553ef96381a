// Slideshows in 9:16, 4:5 and 1:1, with and without text overlays, in English, Spanish and German
// (every aspect × overlays pair once, the languages in turn; `npm run bench:quality` renders the
// full product), pass the media quality checker: distinct slides, readable overlays, sound.
import t from 'tap';
import { mediaMatrix } from '../../scripts/lib/media-matrix.ts';
import { checkCases } from '../helpers/quality-matrix.ts';

const cases = mediaMatrix({ slideshowPairs: true, slides: 4 }).filter((c) => c.pipeline === 'slideshow');
t.equal(cases.length, 6, '3 aspects × with and without overlays');
t.same(new Set(cases.map((c) => c.body.language)).size, 3, 'three languages');
await checkCases(t, cases);
