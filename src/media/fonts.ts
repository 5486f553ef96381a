// The typefaces of the local renderers, all shipped as TTF files inside node_modules, so rendering
// never depends on the fonts of the machine: sharp/pango gets the file through `fontfile`, ffmpeg's
// drawtext through `fontfile=`, libass through a fonts folder of links (linkFonts).
//   - DejaVu (npm dejavu-fonts-ttf; Bitstream Vera licence with DejaVu's public-domain changes):
//     the default face, the widest script coverage;
//   - display and text faces from Google Fonts (npm @expo-google-fonts/*; the fonts are under the
//     SIL Open Font License 1.1, free to embed and redistribute): Anton (condensed display),
//     Montserrat (geometric sans), Inter (interface and body text), Playfair Display and DM Serif
//     Display (serif display).
import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp from 'sharp';

const require = createRequire(import.meta.url);
const dejavu = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const google = (pkg: string) => path.dirname(require.resolve(`@expo-google-fonts/${pkg}/package.json`));

export const FONT_BOLD = path.join(dejavu, 'DejaVuSans-Bold.ttf');
export const FONT_REGULAR = path.join(dejavu, 'DejaVuSans.ttf');
/** Pango family names of the files above. */
export const FAMILY_BOLD = 'DejaVu Sans Bold';
export const FAMILY_REGULAR = 'DejaVu Sans';

/** A weight a face can be set in: 400, 700 or 900 (a family without the weight uses its nearest). */
export type FontWeight = 'regular' | 'bold' | 'black';

/** Pango's word for each weight (appended to the family in a font description). */
const PANGO_WEIGHT: Record<FontWeight, string> = { regular: '', bold: ' Bold', black: ' Heavy' };

function googleFiles(pkg: string, stem: string, weights: FontWeight[]): Partial<Record<FontWeight, string>> {
  const name: Record<FontWeight, string> = { regular: '400Regular', bold: '700Bold', black: '900Black' };
  return Object.fromEntries(weights.map((w) => [w, path.join(google(pkg), name[w], `${stem}_${name[w]}.ttf`)]));
}

/**
 * The bundled families a brand kit or a text style may name (spec: BrandFont), each with the files of
 * its weights. Names are the families' own (what the TTF files declare), so libass finds them by name.
 */
const FAMILIES: Record<string, Partial<Record<FontWeight, string>>> = {
  'DejaVu Sans': { regular: FONT_REGULAR, bold: FONT_BOLD },
  'DejaVu Sans Condensed': {
    regular: path.join(dejavu, 'DejaVuSansCondensed.ttf'),
    bold: path.join(dejavu, 'DejaVuSansCondensed-Bold.ttf'),
  },
  'DejaVu Sans Mono': { regular: path.join(dejavu, 'DejaVuSansMono.ttf'), bold: path.join(dejavu, 'DejaVuSansMono-Bold.ttf') },
  'DejaVu Serif': { regular: path.join(dejavu, 'DejaVuSerif.ttf'), bold: path.join(dejavu, 'DejaVuSerif-Bold.ttf') },
  'DejaVu Serif Condensed': {
    regular: path.join(dejavu, 'DejaVuSerifCondensed.ttf'),
    bold: path.join(dejavu, 'DejaVuSerifCondensed-Bold.ttf'),
  },
  Anton: googleFiles('anton', 'Anton', ['regular']),
  Inter: googleFiles('inter', 'Inter', ['regular', 'bold', 'black']),
  Montserrat: googleFiles('montserrat', 'Montserrat', ['regular', 'bold', 'black']),
  'Playfair Display': googleFiles('playfair-display', 'PlayfairDisplay', ['regular', 'bold', 'black']),
  'DM Serif Display': googleFiles('dm-serif-display', 'DMSerifDisplay', ['regular']),
};

/** The names of the bundled families, as a brand kit or text style spells them. */
export const BUNDLED_FAMILIES = Object.keys(FAMILIES);

/** Every bundled font file. */
export const BUNDLED_FONT_FILES = [...new Set(Object.values(FAMILIES).flatMap((f) => Object.values(f)))];

for (const f of BUNDLED_FONT_FILES) {
  if (!existsSync(f)) throw new Error(`font file missing: ${f} (are dejavu-fonts-ttf and @expo-google-fonts/* installed?)`);
}

export interface FontFace {
  /** Pango font description family (with the weight word when not regular). */
  family: string;
  file: string;
}

/** The family's name as bundled (case-insensitive match), or undefined when it is not bundled. */
export function bundledFamily(name: string | undefined): string | undefined {
  const wanted = (name ?? '').trim().toLowerCase();
  return BUNDLED_FAMILIES.find((k) => k.toLowerCase() === wanted);
}

/**
 * The face of a bundled family by name (case-insensitive, e.g. a brand kit's font), or DejaVu Sans
 * when the name is not one of the bundled families. `bold: true` is the 700 weight; a family
 * without the weight asked for is set in its nearest (Anton and DM Serif Display have one weight).
 */
export function fontFace(name: string | undefined, bold: boolean | FontWeight): FontFace {
  const key = bundledFamily(name) ?? 'DejaVu Sans';
  const want: FontWeight = bold === true ? 'bold' : bold === false ? 'regular' : bold;
  const files = FAMILIES[key];
  const order: FontWeight[] =
    want === 'black' ? ['black', 'bold', 'regular'] : want === 'bold' ? ['bold', 'black', 'regular'] : ['regular', 'bold'];
  const weight = order.find((w) => files[w]) as FontWeight;
  return { family: `${key}${PANGO_WEIGHT[weight]}`, file: files[weight] as string };
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

/**
 * A folder `fonts/` inside `workDir` holding a link to every bundled font file: libass takes one
 * fonts folder (the `ass` filter's fontsdir) and picks faces from it by family name and weight.
 */
export async function linkFonts(workDir: string): Promise<string> {
  const dir = path.join(workDir, 'fonts');
  await mkdir(dir, { recursive: true });
  await Promise.all(
    BUNDLED_FONT_FILES.map((f) =>
      symlink(f, path.join(dir, path.basename(f))).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      }),
    ),
  );
  return dir;
}
