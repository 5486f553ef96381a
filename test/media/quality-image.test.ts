// The media quality checker on still images (src/media/quality/check.ts): each check passes on a
// poster a designer would publish and FAILS on one with exactly that defect (clipped text, low
// contrast, text in the 9:16 top zone, a transparent border, words other than those placed),
// while the checks that defect does not concern still pass. The posters are drawn as the local
// renderers draw text (sharp, pango, the bundled DejaVu Sans Bold).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { keptWord, stopOcr } from '../../src/media/ocr.ts';
import { type CheckName, checkMedia, checkSlides, type QualityReport } from '../../src/media/quality/check.ts';
import { FONT_BOLD } from '../../src/media/fonts.ts';
import { type Box, type MediaManifest, PORTRAIT_SAFE_ZONE } from '../../src/media/quality/manifest.ts';
import { contrastRatio, relativeLuminance } from '../../src/media/quality/pixels.ts';
import { lastWordRead, ocrScales, textSimilarity } from '../../src/media/quality/text.ts';
import { ffmpeg, inDir, type PosterSpec, poster } from './quality-fixtures.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-image-'));
const at = inDir(dir);
t.teardown(async () => {
  await stopOcr();
  fs.rmSync(dir, { recursive: true, force: true });
});

const W = 720;
const H = 900;
const brand: Omit<PosterSpec, 'texts'> = {
  width: W,
  height: H,
  background: 'url(#g)',
  gradient: ['#1d2b64', '#f8cdda'],
  pattern: 'circles',
};
const headline = { text: 'Fresh citrus water', px: 64, color: '#ffffff', x: 72, y: 120, maxWidth: 560, scrim: 'rgba(10,12,30,0.78)' };
const cta = { text: 'Order today', px: 40, color: '#111111', x: 72, y: 700, role: 'cta', scrim: '#ffd23f' };

const rows = (r: QualityReport, check: CheckName) => r.rows.filter((row) => row.check === check);
const failed = (r: QualityReport) => r.rows.filter((row) => !row.pass).map((row) => `${row.check} ${row.subject}: ${row.detail}`);

t.test('WCAG contrast and the read-back measure', async (t) => {
  t.equal(Math.round(contrastRatio(relativeLuminance(255, 255, 255), relativeLuminance(0, 0, 0)) * 10) / 10, 21);
  // #767676 on white is the classic just-passing grey (4.54:1); #777777 just fails (4.48:1).
  t.ok(contrastRatio(relativeLuminance(0x76, 0x76, 0x76), 1) >= 4.5);
  t.ok(contrastRatio(relativeLuminance(0x77, 0x77, 0x77), 1) < 4.5);
  t.equal(textSimilarity('Fresh citrus water!', 'FRESH citrus\nwater'), 1, 'case, punctuation and line breaks do not count');
  t.ok(textSimilarity('Fresh citrus water', 'Fresh citrus') < 0.8, 'a missing word fails');
  t.equal(textSimilarity('Größer, schöner: Café', 'Grosser schoner Cafe'), 1, 'accents do not count (the OCR model is English); ß is ss');
  t.ok(textSimilarity('Fresh citrus water', 'Summer sale now on') < 0.5, 'other words fail');
  t.ok(lastWordRead('Starts now', 'Starts now'));
  t.notOk(lastWordRead('Summer sale starts now', 'Summer sale starts no'), 'a cut last word is missing');
});

t.test('a good poster passes every check', async (t) => {
  const m = await poster(at('good.png'), { ...brand, texts: [headline, cta] });
  const r = await checkMedia(at('good.png'), m);
  t.same(failed(r), [], 'nothing fails');
  t.equal(r.pass, true);
  t.equal(rows(r, 'text-readback').length, 2, 'both texts read back');
  t.equal(rows(r, 'text-fit').length, 2);
  for (const row of rows(r, 'text-contrast')) t.ok((row.value as number) >= 10, `${row.subject}: ${row.value}:1`);
  t.equal(rows(r, 'uncovered-canvas').length, 1);
  // A manifest of another size is a renderer's mistake: reported, and its boxes scaled to still check the texts.
  const half = {
    ...m,
    width: W / 2,
    height: H / 2,
    texts: m.texts.map((x) => ({ ...x, box: { x: x.box.x / 2, y: x.box.y / 2, w: x.box.w / 2, h: x.box.h / 2 } })),
  };
  const scaled = await checkMedia(at('good.png'), half);
  t.same(failed(scaled), ['manifest size: the manifest describes another size than the file has; its boxes were scaled']);
  t.equal(rows(scaled, 'text-readback').filter((x) => x.pass).length, 2);
});

t.test('a line too long for its box is clipped: text-fit and read-back fail', async (t) => {
  const m = await poster(at('clipped.png'), {
    ...brand,
    texts: [{ ...headline, text: 'Sparkling citrus water for summer', maxWidth: undefined, claimWidth: 576 }],
  });
  const r = await checkMedia(at('clipped.png'), m);
  t.equal(r.pass, false);
  t.match(rows(r, 'text-fit')[0], { pass: false, detail: /run past the box's right edge/ });
  t.match(rows(r, 'text-readback')[0], { pass: false, detail: /last word is missing/ });
  t.equal(rows(r, 'text-contrast')[0].pass, true, 'the words that show are legible');
});

t.test('white text on a pale background fails contrast, on a dark scrim it passes', async (t) => {
  const plain = { ...headline, scrim: undefined };
  const pale = await poster(at('pale.png'), { width: W, height: H, background: '#f3eee3', pattern: 'none', texts: [plain] });
  const r = await checkMedia(at('pale.png'), pale);
  t.match(rows(r, 'text-contrast')[0], { pass: false });
  t.ok((rows(r, 'text-contrast')[0].value as number) < 1.5, `white on cream: ${rows(r, 'text-contrast')[0].value}:1`);
  t.equal(rows(r, 'text-fit')[0].pass, true);
  const scrim = await poster(at('scrim.png'), { width: W, height: H, background: '#f3eee3', pattern: 'none', texts: [headline] });
  const s = await checkMedia(at('scrim.png'), scrim);
  t.same(failed(s), [], 'the same text on a dark scrim passes');
  // The manifest's colour decides which cluster is the text; a wrong colour is not needed for this.
  const grey = await poster(at('grey.png'), {
    width: W,
    height: H,
    background: '#ffffff',
    pattern: 'none',
    texts: [{ ...plain, color: '#8a8a8a' }],
  });
  const g = await checkMedia(at('grey.png'), grey);
  t.match(rows(g, 'text-contrast')[0], { pass: false }, `mid grey on white (3.4:1): ${rows(g, 'text-contrast')[0].value}`);
  // Without the colour in the manifest the text is told from its background by k-means: same verdicts.
  const unnamed = (m: MediaManifest) => ({ ...m, texts: m.texts.map(({ color: _, ...x }) => x) });
  t.match(rows(await checkMedia(at('pale.png'), unnamed(pale)), 'text-contrast')[0], { pass: false });
  t.same(failed(await checkMedia(at('scrim.png'), unnamed(scrim))), []);
  t.match(rows(await checkMedia(at('grey.png'), unnamed(grey)), 'text-contrast')[0], { pass: false });
});

t.test('an outlined caption over bright colour bars passes; the same caption without its outline fails contrast', async (t) => {
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:d=1', '-frames:v', '1', at('bars.png')]);
  const caption = 'Small changes add up';
  // The box the caption's glyphs fit in: pango's layout of the same face and size, where drawtext puts it.
  const { width, height } = await sharp({
    text: { text: caption, fontfile: FONT_BOLD, font: 'DejaVu Sans Bold 56px', dpi: 72 },
  }).metadata();
  const m: MediaManifest = {
    width: 1080,
    height: 1920,
    texts: [{ text: caption, role: 'caption', color: '#ffffff', box: { x: 114, y: 1294, w: (width ?? 0) + 12, h: (height ?? 0) + 12 } }],
  };
  for (const [name, border] of [
    ['outlined.png', 5],
    ['plain.png', 0],
  ] as const)
    await ffmpeg([
      '-i',
      at('bars.png'),
      '-vf',
      `drawtext=fontfile=${FONT_BOLD}:text='${caption}':fontsize=56:fontcolor=white:borderw=${border}:bordercolor=black:x=120:y=1300`,
      at(name),
    ]);
  const outlined = await checkMedia(at('outlined.png'), m);
  t.same(failed(outlined), [], 'a black outline is what the glyphs are seen against');
  t.ok((rows(outlined, 'text-contrast')[0].value as number) >= 15);
  const plain = await checkMedia(at('plain.png'), m);
  t.same(
    failed(plain),
    [`text-contrast caption "${caption}": ${rows(plain, 'text-contrast')[0].detail}`],
    'white on yellow and cyan fails',
  );
  t.ok((rows(plain, 'text-contrast')[0].value as number) < 1.5);
});

t.test('a karaoke caption reads back when its highlight colour is named, or when no colour is', async (t) => {
  const m = await poster(at('karaoke.png'), {
    width: 1080,
    height: 1920,
    background: 'url(#g)',
    gradient: ['#ffb347', '#b33939'],
    pattern: 'stripes',
    texts: [
      {
        text: 'Small changes add up fast',
        px: 64,
        color: '#ffffff',
        x: 120,
        y: 1250,
        maxWidth: 840,
        role: 'caption',
        scrim: 'rgba(0,0,0,0.7)',
        highlight: { word: 'changes', color: '#ffd23f' },
      },
    ],
  });
  t.same(m.texts[0].colors, ['#ffd23f']);
  t.same(failed(await checkMedia(at('karaoke.png'), m)), []);
  const estimated = await checkMedia(at('karaoke.png'), { ...m, texts: m.texts.map(({ colors: _, color: __, ...x }) => x) });
  t.same(failed(estimated), []);
  // Naming white alone says the yellow word is not the text's: it is not read, and that fails.
  const whiteOnly = await checkMedia(at('karaoke.png'), { ...m, texts: m.texts.map(({ colors: _, ...x }) => x) });
  t.match(rows(whiteOnly, 'text-readback')[0], { pass: false, detail: /read "Small add up/ });
});

t.test('text inside the 9:16 top UI zone fails text-fit; below it passes', async (t) => {
  const spec: PosterSpec = {
    width: 540,
    height: 960,
    background: 'url(#g)',
    gradient: ['#0b3d2e', '#1f7a5a'],
    pattern: 'stripes',
    safeZone: PORTRAIT_SAFE_ZONE,
    texts: [{ text: 'New flavour', px: 48, color: '#ffffff', x: 48, y: 60, scrim: 'rgba(0,0,0,0.6)' }],
  };
  const high = await poster(at('zone-top.png'), spec);
  const r = await checkMedia(at('zone-top.png'), high);
  t.match(rows(r, 'text-fit')[0], { pass: false, detail: /inside the top UI zone/ });
  t.equal(rows(r, 'text-readback')[0].pass, true);
  const low = await poster(at('zone-ok.png'), { ...spec, texts: [{ ...spec.texts[0], y: 200 }] });
  const ok = await checkMedia(at('zone-ok.png'), low);
  t.same(failed(ok), []);
  // The same box at the bottom, within 20 %, fails too; and one outside the 4 % margin.
  const bottom = await checkMedia(at('zone-ok.png'), { ...low, texts: [{ ...low.texts[0], box: { ...low.texts[0].box, y: 820 } }] });
  t.match(rows(bottom, 'text-fit')[0], { pass: false, detail: /bottom UI zone/ });
  const edge = await checkMedia(at('zone-ok.png'), { ...low, texts: [{ ...low.texts[0], box: { ...low.texts[0].box, x: 10 } }] });
  t.match(rows(edge, 'text-fit')[0], { pass: false, detail: /left margin/ });
});

t.test('words other than those placed fail the read-back', async (t) => {
  const m = await poster(at('words.png'), { ...brand, texts: [headline] });
  const r = await checkMedia(at('words.png'), { ...m, texts: [{ ...m.texts[0], text: 'Summer sale now on' }] });
  t.match(rows(r, 'text-readback')[0], { pass: false });
});

t.test('transparent or black edge bars fail; a dark design does not', async (t) => {
  await poster(at('inner.png'), { ...brand, width: W, height: 780, texts: [] });
  await sharp({ create: { width: W, height: H, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: at('inner.png'), top: 120, left: 0 }])
    .png()
    .toFile(at('transparent.png'));
  const r = await checkMedia(at('transparent.png'));
  t.match(rows(r, 'uncovered-canvas')[0], { pass: false, detail: /top bar of 13\.\d %/ });
  t.equal(r.manifest, false);

  const dark = await poster(at('dark.png'), {
    width: W,
    height: H,
    background: '#000000',
    pattern: 'none',
    texts: [{ text: 'Midnight edition', px: 56, color: '#ffffff', x: 100, y: 400 }],
  });
  t.same(failed(await checkMedia(at('dark.png'), dark)), [], 'black all round a white headline is a design, not a bar');
  const fade = await poster(at('dark-gradient.png'), {
    width: W,
    height: H,
    background: 'url(#g)',
    gradient: ['#000000', '#2a2a2a'],
    pattern: 'none',
    texts: [{ text: 'Midnight edition', px: 56, color: '#ffffff', x: 100, y: 400 }],
  });
  t.same(failed(await checkMedia(at('dark-gradient.png'), fade)), [], 'nor is a gradient out of black');
});

t.test('slides: consecutive alike images fail scene-distinct', async (t) => {
  await poster(at('s1.png'), { ...brand, texts: [headline] });
  await poster(at('s2.png'), { ...brand, gradient: ['#ffb347', '#b33939'], pattern: 'stripes', texts: [cta] });
  const same = await checkSlides([at('s1.png'), at('s1.png'), at('s2.png')]);
  t.match(same, { check: 'scene-distinct', pass: false, value: 0, detail: /slides 1→2: 0 bits/ });
  const distinct = await checkSlides([at('s1.png'), at('s2.png'), at('s1.png')]);
  t.equal(distinct.pass, true, `distances: ${distinct.detail}`);
});

t.test('a small CTA and an accented word read back whole (read again at 60 px; accents kept from 40)', async (t) => {
  // The 4:5 bold-sale-banner's CTA: ~27 px white type with an arrow on a blue pill. Upscaled to
  // 100 px, Tesseract takes "now" for "how" (at 60 px it reads right); "café" reads right but at a
  // confidence of about 50 in a tall headline.
  const texts = [
    { text: 'Shop now  →', px: 27, color: '#ffffff', x: 284, y: 700, role: 'cta', scrim: '#3530e6' },
    { text: 'Kettle café', px: 100, color: '#ffffff', x: 60, y: 200, role: 'headline', scrim: 'rgba(20,60,140,1)' },
  ];
  const m = await poster(at('cta.png'), { ...brand, texts });
  const r = await checkMedia(at('cta.png'), m);
  t.same(failed(r), [], 'both read back');
  t.ok(keptWord('café', 51), 'an accented word read at 51 is kept');
  t.notOk(keptWord('cafe', 51), 'an ASCII word at 51 is not');
  t.notOk(keptWord('→', 99), 'a symbol is not a word');
});

t.test('Spanish and German texts are read with their own OCR models: their letters count', async (t) => {
  const texts = {
    de: 'Für größere Füße: grüne Schuhe',
    es: '¿Listo para mañana? Síguenos',
  };
  for (const [language, text] of Object.entries(texts)) {
    const file = at(`${language}.png`);
    const m = await poster(file, { ...brand, texts: [{ ...headline, text }] });
    const r = await checkMedia(file, { ...m, language });
    const read = rows(r, 'text-readback')[0];
    t.ok(read?.pass, `${language}: read back (${read?.value}: ${read?.detail})`);
    t.equal(read?.value, 1, `${language}: every letter, accents and ß included (${read?.detail})`);
  }
  // Compared with accents, a reading that lost them falls short: the check holds them to the letter.
  t.ok(textSimilarity('Für größere Füße', 'Fur grossere Fusse', true) < 0.9, 'accents count for a language with its own model');
  t.notOk(keptWord('mañana', 45, 'spa+eng'), 'no accented-word leniency with the language’s own model');
  t.ok(keptWord('mañana', 45, 'eng'), 'the English model alone keeps the leniency (French, Italian, Portuguese texts)');
});

/** The read-back row of a white text in a fixture crop of a real frame (test/fixtures/README.md). */
async function fixtureReadBack(name: string, size: { width: number; height: number }, language: string, text: string, box: Box) {
  const file = new URL(`../fixtures/${name}`, import.meta.url).pathname;
  const r = await checkMedia(file, { ...size, language, texts: [{ text, box, role: 'text', color: '#FFFFFF' }] });
  return rows(r, 'text-readback')[0];
}

t.test('two lines of body text are read again at three quarters: Tesseract drops the end of the last line at its own size', async (t) => {
  const text = 'There is a reason more people talk about calmer mornings every year.';
  const read = await fixtureReadBack('slide-body-2-lines-en.png', { width: 1000, height: 230 }, 'en', text, {
    x: 50,
    y: 51,
    w: 900,
    h: 128,
  });
  t.ok(read.pass, `read back whole (${read.detail})`);
  t.same(ocrScales({ x: 0, y: 0, w: 900, h: 128 }), [1, 0.75], 'a 128 px block: its own size, then three quarters');
});

t.test('very large display type is read again at half size: Tesseract drops whole lines of it at its own', async (t) => {
  const text = 'Cinco hábitos para mañanas tranquilas';
  const read = await fixtureReadBack('slide-headline-160px-es.png', { width: 960, height: 700 }, 'es', text, {
    x: 39,
    y: 32,
    w: 883,
    h: 640,
  });
  t.ok(read.pass, `read back whole (${read.detail})`);
  t.same(
    ocrScales({ x: 0, y: 0, w: 900, h: 640 }),
    [1, 0.75, 0.5, 100 / 640, 60 / 640],
    'a 640 px block: its own size, then three quarters, half, then a line of print',
  );
  t.same(
    ocrScales({ x: 0, y: 0, w: 900, h: 190 }),
    [1, 0.75, 100 / 190, 60 / 190],
    'a 190 px line: its own size, then three quarters, then scaled down to 100 and 60 px',
  );
  t.same(ocrScales({ x: 0, y: 0, w: 300, h: 30 }), [100 / 30, 2], 'a 30 px line: upscaled to 100 px, then 60 px');
});
