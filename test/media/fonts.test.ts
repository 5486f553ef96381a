// The bundled typefaces: every family the spec offers (BrandFont) is a real file that pango sets
// (each family and weight measures differently, so none silently falls back to another), and
// libass finds them by name in the fonts folder the timeline renderer links.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import spec from '../../generated/openapi.json' with { type: 'json' };
import { fontFamily } from '../../src/media/ass.ts';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { BUNDLED_FAMILIES, BUNDLED_FONT_FILES, fontFace, linkFonts, textWidth } from '../../src/media/fonts.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'fonts-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

t.test('the spec offers exactly the bundled families', async (t) => {
  const schemas = (spec as { components: { schemas: Record<string, { enum?: string[] }> } }).components.schemas;
  t.same([...(schemas.BrandFont.enum ?? [])].sort(), [...BUNDLED_FAMILIES].sort());
});

t.test('every family and weight sets the text with its own metrics', async (t) => {
  const widths = new Map<string, number>();
  for (const family of BUNDLED_FAMILIES) {
    for (const weight of ['regular', 'bold', 'black'] as const) {
      const face = fontFace(family, weight);
      widths.set(`${face.file}`, await textWidth('Quick brown foxes jump', face, 40));
    }
  }
  const distinct = new Set(widths.values());
  t.equal(widths.size, BUNDLED_FONT_FILES.length, 'every file is reached by a family and weight');
  t.ok(distinct.size >= BUNDLED_FONT_FILES.length - 3, `distinct widths: ${distinct.size} of ${widths.size}`);
  t.not(
    await textWidth('Quick brown foxes', fontFace('Anton', false), 40),
    await textWidth('Quick brown foxes', fontFace('DejaVu Sans', false), 40),
  );
  t.not(
    await textWidth('Quick brown foxes', fontFace('Inter', 'black'), 40),
    await textWidth('Quick brown foxes', fontFace('Inter', 'regular'), 40),
  );
  t.equal(fontFace('montserrat', true).family, 'Montserrat Bold', 'names match case-insensitively');
  t.equal(fontFace('Comic Sans', true).family, 'DejaVu Sans Bold', 'an unknown name is DejaVu Sans');
  t.equal(fontFace('Anton', 'black').family, 'Anton', 'a one-weight family keeps its weight');
});

t.test('text styles name the closest bundled family', async (t) => {
  t.equal(fontFamily('Anton'), 'Anton');
  t.equal(fontFamily('bebas neue'), 'Anton');
  t.equal(fontFamily('Roboto'), 'Inter');
  t.equal(fontFamily('Poppins'), 'Montserrat');
  t.equal(fontFamily('Playfair'), 'Playfair Display');
  t.equal(fontFamily('Georgia Serif'), 'DejaVu Serif');
  t.equal(fontFamily(undefined), 'DejaVu Sans');
});

t.test('libass finds a bundled family by name in the linked fonts folder', async (t) => {
  const fonts = await linkFonts(work);
  t.equal(readdirSync(fonts).length, BUNDLED_FONT_FILES.length);
  t.equal(await linkFonts(work), fonts, 'linking again is harmless');
  const inkWidth = async (family: string) => {
    const ass = path.join(work, `${family.replace(/ /g, '')}.ass`);
    writeFileSync(
      ass,
      [
        '[Script Info]',
        'ScriptType: v4.00+',
        'PlayResX: 800',
        'PlayResY: 200',
        '',
        '[V4+ Styles]',
        'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
        `Style: S,${family},80,&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,0,0,5,0,0,0,1`,
        '',
        '[Events]',
        'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
        'Dialogue: 0,0:00:00.00,0:00:01.00,S,,0,0,0,,Headline type',
        '',
      ].join('\n'),
    );
    const out = path.join(work, `${family.replace(/ /g, '')}.png`);
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=black:s=800x200:d=1',
      '-vf',
      `ass=filename=${ass}:fontsdir=${fonts}`,
      '-frames:v',
      '1',
      out,
    ]);
    const { data, info } = await sharp(out).greyscale().raw().toBuffer({ resolveWithObject: true });
    let min = info.width;
    let max = 0;
    for (let y = 0; y < info.height; y++)
      for (let x = 0; x < info.width; x++)
        if (data[y * info.width + x] > 128) {
          min = Math.min(min, x);
          max = Math.max(max, x);
        }
    return max - min;
  };
  const anton = await inkWidth('Anton');
  const dejavu = await inkWidth('DejaVu Sans');
  const playfair = await inkWidth('Playfair Display');
  t.ok(anton > 100 && dejavu > 100 && playfair > 100, 'each drew the line');
  t.ok(anton < dejavu * 0.85, `Anton is condensed (${anton} px against DejaVu Sans ${dejavu} px)`);
  t.not(playfair, dejavu, 'Playfair Display is its own face');
});
