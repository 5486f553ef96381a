// The faceless scenes as a viewer sees them: consecutive scenes look different (perceptual hash)
// in every image style, no still has black borders a pan would show, the brand's name stays inside
// the frame with margins and out of the 9:16 feed's UI zones, and the scene's big type stays
// inside every pan's window, clear of the UI zones and of the captions.
import sharp from 'sharp';
import t from 'tap';
import type { SceneInput } from '../../src/engines/image/types.ts';
import { composeScene, overlayTexts, renderScene, sceneTexts, typeZone } from '../../src/engines/local/scene.ts';
import { pannedBox } from '../../src/engines/render/manifest.ts';
import { textContrast } from '../../src/media/quality/pixels.ts';
import { captionTop } from '../../src/pipelines/faceless-video/plan.ts';
import spec from '../../generated/openapi.json' with { type: 'json' };
import { phashDistance } from '../helpers/phash.ts';

const IMAGE_STYLES: SceneInput['style'][] = (spec as any).components.schemas.FacelessImageStyle.enum;
const SCRIPT = [
  'Soda is a sugar trap you barely notice.',
  'Sparkling water has zero sugar and real fizz.',
  'It keeps you hydrated all day long.',
  'Swap one can a day and feel the difference.',
  'Cold, crisp, and ready when you are.',
  'Try it this week: grab a cold can.',
];
const scene = (s: Partial<SceneInput>): SceneInput => ({
  width: 270,
  height: 480,
  index: 0,
  count: SCRIPT.length,
  seed: '42',
  style: 'cinematic',
  aiStyles: [],
  fluxStyles: [],
  captionTop: 0.58,
  plain: true,
  ...s,
});

t.test('consecutive scenes are visibly different in every image style (pHash distance ≥ 10 of 64)', async (t) => {
  for (const style of IMAGE_STYLES)
    for (const seed of ['42', '7']) {
      const stills = await Promise.all(SCRIPT.map((text, index) => renderScene(scene({ style, seed, index, text }))));
      for (let i = 1; i < stills.length; i++) {
        const d = await phashDistance(stills[i - 1], stills[i]);
        t.ok(d >= 10, `${style} (seed ${seed}): scenes ${i} and ${i + 1} are ${d} bits apart`);
      }
    }
});

t.test("one reference image for every scene: the customer's picture in each, and still no two consecutive scenes alike", async (t) => {
  const reference = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#88AACC' } })
    .composite([
      {
        input: Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect x="300" y="100" width="200" height="420" rx="40" fill="#00FF00"/></svg>',
        ),
      },
    ])
    .png()
    .toBuffer();
  for (const style of ['cinematic', 'minimal'] as const) {
    const stills = await Promise.all(SCRIPT.map((text, index) => renderScene(scene({ style, index, text, reference }))));
    for (let i = 1; i < stills.length; i++) {
      const d = await phashDistance(stills[i - 1], stills[i]);
      t.ok(d >= 10, `${style} with a reference: scenes ${i} and ${i + 1} are ${d} bits apart`);
    }
    for (const [i, still] of stills.entries()) {
      const { data } = await sharp(still).raw().toBuffer({ resolveWithObject: true });
      let green = 0;
      for (let p = 0; p < data.length; p += 3) if (data[p + 1] > 180 && data[p] < 90 && data[p + 2] < 90) green++;
      t.ok(green > 2000, `${style}, scene ${i + 1}: the reference's product shows (${green} pixels)`);
    }
  }
});

t.test('no still has black rows or columns at its edges (a pan would show them as bars)', async (t) => {
  for (const style of IMAGE_STYLES) {
    const { data, info } = await sharp(await renderScene(scene({ style, text: SCRIPT[0] })))
      .raw()
      .toBuffer({ resolveWithObject: true });
    const black = (x: number, y: number) => {
      const i = (y * info.width + x) * info.channels;
      return data[i] + data[i + 1] + data[i + 2] < 24;
    };
    const rowBlack = (y: number) => Array.from({ length: info.width }, (_, x) => black(x, y)).filter(Boolean).length > info.width * 0.9;
    const colBlack = (x: number) => Array.from({ length: info.height }, (_, y) => black(x, y)).filter(Boolean).length > info.height * 0.9;
    t.notOk(rowBlack(0) || rowBlack(info.height - 1) || colBlack(0) || colBlack(info.width - 1), `${style}: no black border`);
  }
});

t.test("the brand's name fits inside the frame with 4 % margins, below the 9:16 top UI zone", async (t) => {
  const logo = await sharp({ create: { width: 300, height: 120, channels: 3, background: '#FF00FF' } })
    .png()
    .toBuffer();
  for (const [width, height] of [
    [1080, 1920],
    [1920, 1080],
  ]) {
    const texts = await overlayTexts({
      width,
      height,
      style: 'vintage',
      captionTop: captionTop(width, height),
      brand: { name: 'The Extraordinarily Long-Named Sparkling Water Company', colors: ['#0E7C7B', '#F4D35E'], logo },
    });
    t.equal(texts.length, 1);
    const b = texts[0].box;
    t.ok(b.x >= width * 0.04 && b.x + b.w <= width * 0.96, `${width}×${height}: inside the side margins (${b.x}–${b.x + b.w})`);
    t.ok(b.y >= (height > width ? height * 0.14 : height * 0.04), `${width}×${height}: below the top zone (${b.y})`);
    t.ok(b.y + b.h <= height * 0.3, `${width}×${height}: near the top (${b.y + b.h})`);
  }
});

t.test("the scene's big type: its words, inside every pan's window, clear of the UI zones and the captions", async (t) => {
  for (const [width, height] of [
    [1080, 1920],
    [1920, 1080],
  ]) {
    const zone = typeZone(width, height);
    const portrait = height > width;
    for (const [index, text] of SCRIPT.entries()) {
      const drawn = await composeScene(scene({ width, height, index, text, style: 'comic' }));
      const measured = await sceneTexts(scene({ width, height, index, text, style: 'comic' }));
      t.same(measured, drawn.texts, 'measured where it is drawn');
      const b = measured[0].box;
      t.ok(
        b.x >= zone.x && b.y >= zone.y && b.x + b.w <= zone.x + zone.w && b.y + b.h <= zone.y + zone.h,
        `scene ${index + 1} in the type zone`,
      );
    }
    const [brand] = await overlayTexts({
      width,
      height,
      style: 'comic',
      captionTop: captionTop(width, height),
      brand: { name: 'Acme Sparkling Water', colors: ['#E11D48'] },
    });
    for (const direction of ['up', 'down', 'left', 'right'] as const) {
      const item = { animation: { enter: { type: 'pan', direction, duration_seconds: 5 }, exit: null } } as any;
      const b = pannedBox(zone, item, { width, height });
      t.ok(b.x >= width * 0.04 && b.x + b.w <= width * 0.96, `${width}×${height} pan ${direction}: side margins`);
      t.ok(
        b.y >= height * (portrait ? 0.14 : 0.04),
        `${width}×${height} pan ${direction}: below the top zone (${(b.y / height).toFixed(3)})`,
      );
      t.ok(b.y + b.h <= height * (captionTop(width, height) + 0.01), `${width}×${height} pan ${direction}: above the captions`);
      t.ok(
        b.y >= brand.box.y + brand.box.h,
        `${width}×${height} pan ${direction}: below the brand's name (${b.y} ≥ ${brand.box.y + brand.box.h})`,
      );
    }
  }
});

/** WCAG relative luminance of 8-bit sRGB. */
const luminance = (r: number, g: number, b: number) => {
  const ch = (v: number) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
};

t.test('the big type reads at 4.5:1 against what is behind it, in every style and composition', async (t) => {
  for (const style of IMAGE_STYLES)
    for (let index = 0; index < 5; index++) {
      const { jpeg, texts } = await composeScene(
        scene({ width: 540, height: 960, style, index, text: SCRIPT[index], aiStyles: ['grain'] }),
      );
      const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
      const b = texts[0].box;
      const lums: number[] = [];
      for (let y = b.y; y < b.y + b.h; y++)
        for (let x = b.x; x < b.x + b.w; x++) {
          const i = (y * info.width + x) * info.channels;
          lums.push(luminance(data[i], data[i + 1], data[i + 2]));
        }
      lums.sort((p, q) => p - q);
      // The glyphs and the ground are the two ends of the box's luminances (the glyphs cover well over 5 % of it).
      const dark = lums[Math.floor(lums.length * 0.04)];
      const light = lums[Math.floor(lums.length * 0.96)];
      const ratio = (light + 0.05) / (dark + 0.05);
      t.ok(ratio >= 4.5, `${style}, scene ${index + 1}: ${ratio.toFixed(2)}:1`);
    }
});

t.test("the scene's big type is named in the colours it is drawn in, and reads at 4.5:1 next to its glyphs in every style", async (t) => {
  for (const style of IMAGE_STYLES)
    for (const [index, text] of SCRIPT.entries()) {
      const s = scene({ style, index, text, width: 540, height: 960 });
      const { jpeg, texts } = await composeScene(s);
      const [placed] = await sceneTexts(s);
      t.same(placed, texts[0], `${style} ${index}: sceneTexts says what composeScene drew`);
      const colours = [placed.color, ...(placed.colors ?? [])].filter((c): c is string => !!c);
      t.ok(colours.length, `${style} ${index}: its fill colours are named`);
      const { data, info } = await sharp(jpeg).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const contrast = textContrast({ data, width: info.width, height: info.height }, placed.box, colours);
      t.ok(contrast.ratio >= 4.5, `${style} ${index}: contrast ${contrast.ratio.toFixed(2)} ≥ 4.5`);
    }
});
