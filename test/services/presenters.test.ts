// The catalog's public avatars are DiceBear Open Peeps (CC0) people in a room, written into
// spec/previews/avatars/ by scripts/make-previews.ts, and their mouth shapes are the style's own
// faces: the mouth region changes between the closed and each open face, nothing outside it does
// (but the eyes and brows of a face, above the mouth region), and the region drawn alone is the
// card's pixels there.
import t from 'tap';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { parse } from 'yaml';
import { AVATARS_URL, PREVIEWS_DIR_URL } from '../../src/services/catalog/catalog-data.ts';
import {
  CARD_H,
  CARD_W,
  catalogPresenter,
  PRESENTER_FACE,
  PRESENTER_FACES,
  PRESENTER_MOUTH,
  presenterMouthSvg,
  presenterSvg,
} from '../../src/services/catalog/presenters.ts';

const avatars = (parse(readFileSync(AVATARS_URL, 'utf8')) as { avatars: { id: string; image: string }[] }).avatars;

const raw = async (svg: string | Buffer) => sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
const box = (f: { x: number; y: number; w: number; h: number }) => ({
  x: Math.round(f.x * CARD_W),
  y: Math.round(f.y * CARD_H),
  w: Math.round(f.w * CARD_W),
  h: Math.round(f.h * CARD_H),
});

/** Mean absolute channel difference of two RGB images inside `r` (or, with `outside`, everywhere else below row `below`). */
function meanDiff(a: Buffer, b: Buffer, W: number, r: { x: number; y: number; w: number; h: number }, outside = false, below = 0): number {
  let sum = 0;
  let n = 0;
  for (let y = below; y < CARD_H; y++)
    for (let x = 0; x < W; x++) {
      const inside = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
      if (inside === outside) continue;
      const i = (y * W + x) * 3;
      sum += Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
      n += 3;
    }
  return n ? sum / n : 0;
}

t.test('every public avatar preview is its Open Peeps presenter card, as make-previews writes it', async (t) => {
  t.equal(avatars.length, 10);
  for (const a of avatars) {
    const file = readFileSync(new URL(a.image, PREVIEWS_DIR_URL), 'utf8');
    t.equal(file, presenterSvg(a.id), `${a.image} is presenterSvg('${a.id}') (run node scripts/make-previews.ts)`);
    t.match(file, /Open Peeps by Pablo Stanley[^<]*CC0 1\.0/, `${a.id}: credits the CC0 artwork`);
    t.match(file, /<g transform="translate\([^"]+\) scale\([^"]+\)">/, `${a.id}: the DiceBear drawing is placed on the card`);
    t.match(file, /filter="url\(#soft\)"/, `${a.id}: stands in a soft (blurred) room, not a void`);
  }
  // Ten different people: no two cards alike.
  t.equal(new Set(avatars.map((a) => presenterSvg(a.id))).size, avatars.length);
  t.throws(() => presenterSvg('nobody'), /no presenter look/);
});

t.test("an open face changes the card's mouth region only (eyes and brows aside)", async (t) => {
  const mouth = box(PRESENTER_MOUTH);
  const face = box(PRESENTER_FACE);
  t.ok(
    mouth.x >= face.x && mouth.x + mouth.w <= face.x + face.w + 40 && mouth.y > face.y && mouth.y + mouth.h <= face.y + face.h + 20,
    'the mouth is in the lower face',
  );
  for (const id of ['maya-lifestyle', 'marcus-chef', 'priya-tech-reviewer']) {
    const closed = await raw(presenterSvg(id));
    for (const f of PRESENTER_FACES.slice(1)) {
      const open = await raw(presenterSvg(id, f));
      const inside = meanDiff(closed.data, open.data, CARD_W, mouth);
      // Below the nose (the mouth region's top) nothing but the mouth changes.
      const rest = meanDiff(closed.data, open.data, CARD_W, mouth, true, mouth.y);
      t.ok(inside > 8, `${id} ${f}: the mouth region changes (${inside.toFixed(1)})`);
      t.ok(rest < 0.05, `${id} ${f}: nothing else below the nose does (${rest.toFixed(3)})`);
    }
  }
});

t.test("a presenter's openings are its card's mouth region, drawn alone", async (t) => {
  const id = 'chloe-beauty';
  const p = await catalogPresenter(id);
  t.equal(p.openings.length, 3, 'three openings');
  t.same(p.mouth, PRESENTER_MOUTH);
  t.same(p.face, PRESENTER_FACE);
  const mouth = box(PRESENTER_MOUTH);
  const full = await raw(p.image);
  t.same([full.info.width, full.info.height], [CARD_W, CARD_H]);
  for (const [i, f] of PRESENTER_FACES.slice(1).entries()) {
    const region = await sharp(p.openings[i]).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    t.same([region.info.width, region.info.height], [mouth.w, mouth.h], `${f}: the size of the mouth region`);
    const card = await sharp(Buffer.from(presenterSvg(id, f)))
      .extract({ left: mouth.x, top: mouth.y, width: mouth.w, height: mouth.h })
      .removeAlpha()
      .raw()
      .toBuffer();
    const d = meanDiff(region.data, card, mouth.w, { x: 0, y: 0, w: mouth.w, h: mouth.h });
    t.ok(d < 2, `${f}: the card's pixels there (${d.toFixed(2)})`);
  }
  // Drawn once per process.
  t.equal(await catalogPresenter(id), p);
  t.equal(presenterMouthSvg(id, 'explaining').includes(`viewBox="${mouth.x} ${mouth.y} ${mouth.w} ${mouth.h}"`), true);
});
