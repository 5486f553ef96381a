// The one typeface of the local renderer: DejaVu Sans (npm package dejavu-fonts-ttf, Bitstream
// Vera licence with DejaVu's public-domain changes: free to use, embed and redistribute). Shipped
// as TTF files inside node_modules, so rendering never depends on the fonts of the machine:
// sharp/pango gets the file through `fontfile`, ffmpeg's drawtext through `fontfile=`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const dir = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');

export const FONT_BOLD = path.join(dir, 'DejaVuSans-Bold.ttf');
export const FONT_REGULAR = path.join(dir, 'DejaVuSans.ttf');
/** Pango family names of the files above. */
export const FAMILY_BOLD = 'DejaVu Sans Bold';
export const FAMILY_REGULAR = 'DejaVu Sans';

for (const f of [FONT_BOLD, FONT_REGULAR]) {
  if (!existsSync(f)) throw new Error(`font file missing: ${f} (is the dejavu-fonts-ttf package installed?)`);
}
