// The faceless scene renderer: every published image style, texture motif (selected_ai_styles)
// and grade (selected_flux_dev_styles) changes the pixels visibly; brand colours and the
// reference image are drawn; the same input gives the same pixels.
import sharp from 'sharp';
import t from 'tap';
import type { SceneInput } from '../../src/engines/image/types.ts';
import { renderOverlay, renderScene, sceneTexts } from '../../src/engines/local/scene.ts';
import spec from '../../generated/openapi.json' with { type: 'json' };

const schemas = (spec as any).components.schemas;
const IMAGE_STYLES: SceneInput['style'][] = schemas.FacelessImageStyle.enum;
const AI_STYLES: SceneInput['aiStyles'][number][] = schemas.FacelessAiStyle.enum;
const FLUX_STYLES: SceneInput['fluxStyles'][number][] = schemas.FacelessFluxDevStyle.enum;

const base: SceneInput = {
  width: 270,
  height: 480,
  index: 0,
  count: 3,
  seed: 'test',
  style: 'minimal',
  aiStyles: [],
  fluxStyles: [],
  captionTop: 0.7,
};
const pixels = async (s: Partial<SceneInput>) =>
  await sharp(await renderScene({ ...base, ...s }))
    .removeAlpha()
    .raw()
    .toBuffer();
/** Mean absolute difference per channel value, 0–255. */
const diff = (a: Buffer, b: Buffer) => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i] - b[i]);
  return d / a.length;
};

t.test('the spec publishes the style lists', async (t) => {
  t.ok(IMAGE_STYLES.length >= 6 && AI_STYLES.length >= 6 && FLUX_STYLES.length >= 6);
  t.equal(schemas.CreateFacelessVideoRequest.properties.selected_ai_styles.items.$ref, '#/components/schemas/FacelessAiStyle');
});

t.test('each image style looks different from every other', async (t) => {
  const out = new Map<string, Buffer>();
  for (const s of IMAGE_STYLES) out.set(s, await pixels({ style: s }));
  for (const a of IMAGE_STYLES)
    for (const b of IMAGE_STYLES)
      if (a < b) t.ok(diff(out.get(a)!, out.get(b)!) > 15, `${a} vs ${b}: ${diff(out.get(a)!, out.get(b)!).toFixed(1)}`);
  t.same(await pixels({ style: 'neon' }), out.get('neon'), 'deterministic');
});

t.test('each motif and each grade changes the scene', async (t) => {
  for (const style of ['minimal', 'cinematic'] as const) {
    const plain = await pixels({ style });
    for (const m of AI_STYLES) {
      const d = diff(plain, await pixels({ style, aiStyles: [m] }));
      t.ok(d > 1.5, `${style} + ${m}: ${d.toFixed(2)}`);
    }
    for (const g of FLUX_STYLES) {
      const d = diff(plain, await pixels({ style, fluxStyles: [g] }));
      t.ok(d > 2, `${style} + ${g}: ${d.toFixed(2)}`);
    }
  }
});

t.test('brand colours stay exact over a grade; the reference is composited', async (t) => {
  const ref = await sharp({ create: { width: 100, height: 80, channels: 3, background: '#00FF00' } })
    .png()
    .toBuffer();
  const img = await sharp(
    await renderScene({
      ...base,
      style: 'vintage',
      fluxStyles: ['black_and_white'],
      brand: { name: 'Acme', colors: ['#E11D48'] },
      reference: ref,
    }),
  )
    .removeAlpha()
    .raw()
    .toBuffer();
  let brand = 0;
  let green = 0;
  for (let i = 0; i < img.length; i += 3) {
    if (Math.abs(img[i] - 0xe1) + Math.abs(img[i + 1] - 0x1d) + Math.abs(img[i + 2] - 0x48) < 40) brand++;
    if (img[i + 1] > 120 && img[i + 1] - Math.max(img[i], img[i + 2]) < 40) green++;
  }
  t.ok(brand > 1000, `${brand} brand pixels`);
  t.ok(green > 5000, `${green} pixels of the (greyed) reference`);
});

t.test('a photo fills the frame (cover-cropped), under the caption scrim and the brand', async (t) => {
  // A wide photo, red on its left and right quarters, blue in its middle half: cropped about
  // its centre to the portrait frame, only blue remains.
  const photo = await sharp({ create: { width: 1200, height: 600, channels: 3, background: '#FF0000' } })
    .composite([{ input: { create: { width: 600, height: 600, channels: 3, background: '#0000FF' } }, left: 300, top: 0 }])
    .jpeg()
    .toBuffer();
  const logo = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#00FF00' } })
    .png()
    .toBuffer();
  const jpeg = await renderScene({ ...base, photo, brand: { name: '', colors: ['#FFFF00'], logo } });
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  t.same([info.width, info.height], [base.width, base.height], 'the frame size');
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
  const blue = ([r, g, b]: number[]) => b > 200 && r < 60 && g < 60;
  t.ok(
    blue(at(10, Math.round(base.height * 0.4))) && blue(at(base.width - 10, Math.round(base.height * 0.4))),
    'the photo, cropped about its centre',
  );
  const [, , bottom] = at(base.width / 2, base.height - 5);
  t.ok(bottom < 120, `the caption band is darkened (blue ${bottom})`);
  let yellow = 0;
  let green = 0;
  for (let i = 0; i < data.length; i += 3) {
    if (data[i] > 200 && data[i + 1] > 200 && data[i + 2] < 80) yellow++;
    if (data[i + 1] > 200 && data[i] < 80 && data[i + 2] < 80) green++;
  }
  t.ok(yellow > 500, `the brand band (${yellow} pixels)`);
  t.ok(green > 200, `the logo (${green} pixels)`);
});

t.test(
  'a scene shows its title as a phrase: a list item its number and name, a sentence a phrase of it, never a bag of words',
  async (t) => {
    const squash = (x: string) =>
      x
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim();
    const sentence = 'Number one. Everyday life gets simpler with sparkling water.';
    for (const style of IMAGE_STYLES) {
      const [item] = await sceneTexts({ ...base, width: 540, height: 960, style, text: '03 · Real fizz' });
      t.equal(squash(item.text), '03 real fizz', `${style}: the item's number and name`);
      const [said] = await sceneTexts({ ...base, width: 540, height: 960, style, text: sentence });
      t.ok(squash(sentence).includes(squash(said.text)), `${style}: "${said.text}" is a phrase of the sentence`);
    }
  },
);

t.test('the vintage frame stays put over the video, 4 % or more in from every edge, and is not in the panning still', async (t) => {
  const [w, h] = [540, 960];
  const { data } = await sharp(await renderOverlay({ width: w, height: h, style: 'vintage', captionTop: 0.58 }))
    .raw()
    .toBuffer({ resolveWithObject: true });
  const alphaAt = (x: number, y: number) => data[(y * w + x) * 4 + 3];
  const margin = Math.ceil(w * 0.04);
  let inMargin = 0;
  for (let y = 0; y < h * 0.5; y++) for (let x = 0; x < margin; x++) inMargin += alphaAt(x, y) > 0 || alphaAt(w - 1 - x, y) > 0 ? 1 : 0;
  t.equal(inMargin, 0, 'nothing drawn within 4 % of the left and right edges');
  let frame = 0;
  for (let x = margin; x < w * 0.1; x++) frame += alphaAt(x, Math.round(h * 0.3)) > 200 ? 1 : 0;
  t.ok(frame > 0, 'the frame is drawn in the overlay');
  const still = await sharp(await renderScene({ ...base, width: w, height: h, style: 'vintage', plain: true, text: 'Real fizz' }))
    .raw()
    .toBuffer();
  const px = (x: number, y: number) => still.subarray((y * w + x) * 3, (y * w + x) * 3 + 3);
  const [a, b] = [px(Math.round(w * 0.04), Math.round(h * 0.3)), px(Math.round(w * 0.02), Math.round(h * 0.3))];
  t.ok(Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) < 40, 'the plain still has no frame line near its edge');
});
