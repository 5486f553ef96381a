// The typefaces of the local renderer: DejaVu Sans by default, and the other bundled DejaVu
// families a brand kit may name (fontFace) (npm package dejavu-fonts-ttf, Bitstream
// Vera licence with DejaVu's public-domain changes: free to use, embed and redistribute). Shipped
// as TTF files inside node_modules, so rendering never depends on the fonts of the machine:
// sharp/pango gets the file through `fontfile`, ffmpeg's drawtext through `fontfile=`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp from 'sharp';

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

/** The bundled families a brand kit may name (spec: BrandKitFont), each with its regular and bold file. */
const FAMILIES: Record<string, { regular: string; bold: string }> = {
  'DejaVu Sans': { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' },
  'DejaVu Sans Condensed': { regular: 'DejaVuSansCondensed.ttf', bold: 'DejaVuSansCondensed-Bold.ttf' },
  'DejaVu Sans Mono': { regular: 'DejaVuSansMono.ttf', bold: 'DejaVuSansMono-Bold.ttf' },
  'DejaVu Serif': { regular: 'DejaVuSerif.ttf', bold: 'DejaVuSerif-Bold.ttf' },
  'DejaVu Serif Condensed': { regular: 'DejaVuSerifCondensed.ttf', bold: 'DejaVuSerifCondensed-Bold.ttf' },
};

export interface FontFace {
  /** Pango font description family (with the weight word for bold). */
  family: string;
  file: string;
}

/**
 * The face of a bundled family by name (case-insensitive, e.g. a brand kit's font), or DejaVu
 * Sans when the name is not one of the bundled families.
 */
export function fontFace(name: string | undefined, bold: boolean): FontFace {
  const key = Object.keys(FAMILIES).find((k) => k.toLowerCase() === (name ?? '').trim().toLowerCase()) ?? 'DejaVu Sans';
  return { family: bold ? `${key} Bold` : key, file: path.join(dir, FAMILIES[key][bold ? 'bold' : 'regular']) };
}

/** The width in pixels of `text` set in `face` at `px` pixels to the em (pango, as FreeType sets it for drawtext and libass). */
export async function textWidth(text: string, face: FontFace, px: number): Promise<number> {
  const markup = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const { info } = await sharp({
    text: { text: markup, fontfile: face.file, font: `${face.family} 12`, dpi: Math.round(px * 6), rgba: true },
  })
    .png({ compressionLevel: 0 })
    .toBuffer({ resolveWithObject: true });
  return info.width;
}
