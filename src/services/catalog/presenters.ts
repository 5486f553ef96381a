// The catalog's public avatars as illustrated people: DiceBear's Open Peeps (artwork by Pablo
// Stanley, CC0 1.0; @dicebear/open-peeps, code MIT) drawn from fixed options per avatar (skin,
// hair, clothing, facial hair, glasses as its description in spec/avatars.yaml says), waist up,
// in a soft room of its own (a blurred backdrop: home, gym, desk, kitchen …), on a 1080×1350 card.
//
// The card is the avatar's preview (spec/previews/avatars/<id>.svg, written by
// scripts/make-previews.ts from presenterSvg) and the presenter of UGC ads. The style's faces
// are its mouth shapes: the same card with an open mouth (PRESENTER_FACES), whose mouth region
// the UGC renderer shows per frame while the presenter speaks (src/engines/local/mouth.ts).
import { createAvatar } from '@dicebear/core';
import * as openPeeps from '@dicebear/open-peeps';
import sharp from 'sharp';
import type { FractionBox } from '../../media/portrait.ts';

type PeepOptions = openPeeps.Options;
type Head = NonNullable<PeepOptions['head']>[number];
type FacialHair = NonNullable<PeepOptions['facialHair']>[number];
type Accessory = NonNullable<PeepOptions['accessories']>[number];

/** A room behind the presenter: the wall's two tones, the accent of its light and what stands in it. */
type Setting = 'home' | 'gym' | 'desk' | 'office' | 'vanity' | 'kitchen' | 'outdoors' | 'gaming' | 'studio' | 'living';

interface Look {
  head: Head;
  skin: string;
  hair: string;
  clothing: string;
  facialHair?: FacialHair;
  accessory?: Accessory;
  setting: Setting;
}

/**
 * Each public avatar's look, from its description in spec/avatars.yaml. Clothing and walls are
 * mid-tones: captions lie over the shirt, and a near-white next to a dark caption scrim reads as
 * glyphs past its box (the quality checker's text-fit).
 */
const LOOKS: Record<string, Look> = {
  'maya-lifestyle': { head: 'long', skin: 'edb98a', hair: '4a312c', clothing: 'e78276', setting: 'home' },
  'jordan-fitness': { head: 'shaved2', skin: 'ae5d29', hair: '2c1b18', clothing: '2bb673', setting: 'gym' },
  'priya-tech-reviewer': { head: 'bun', skin: 'd08b5b', hair: '2c1b18', clothing: '5b7bd5', accessory: 'glasses', setting: 'desk' },
  'daniel-business': { head: 'pomp', skin: 'edb98a', hair: '724133', clothing: '34495e', setting: 'office' },
  'chloe-beauty': { head: 'longCurly', skin: 'edb98a', hair: 'b58143', clothing: 'e0607e', setting: 'vanity' },
  'marcus-chef': { head: 'noHair2', skin: '694d3d', hair: '2c1b18', clothing: 'e07a3f', facialHair: 'full', setting: 'kitchen' },
  'sofia-travel': { head: 'hatHip', skin: 'd08b5b', hair: 'a55728', clothing: 'f2a541', setting: 'outdoors' },
  'ethan-gamer': { head: 'short2', skin: 'edb98a', hair: 'd6b370', clothing: '6c5ce7', setting: 'gaming' },
  'grace-wellness': { head: 'grayMedium', skin: 'edb98a', hair: 'e8e1e1', clothing: '5fa8a0', setting: 'studio' },
  'sam-everyday': { head: 'short4', skin: 'd08b5b', hair: '4a312c', clothing: '78a6c8', setting: 'living' },
};

/** The presenter's faces: closed (index 0), then the openings 1–3 of src/engines/local/mouth.ts. */
export const PRESENTER_FACES = ['smile', 'concernedFear', 'explaining', 'lovingGrin1'] as const;

export const CARD_W = 1080;
export const CARD_H = 1350;
// The peep (its 704-unit frame, drawn past it to the waist) on the card: a medium shot, head top
// under the room's upper third, its body centred and running off the bottom edge, so that the
// captions a UGC ad lays under the face fall on its shirt (a flat colour), not on hair and outlines.
const SCALE = 0.85;
const TX = 246.75;
const TY = 440;
/**
 * Where the face (brows to chin, ear to cheek) and the mouth (every face's mouth, open or not) are,
 * in peep units. The layout puts the top of the head 0.7 face heights over the face box: so the
 * box starts at the brows, and the hair's top (y 94) is where the layout expects it.
 */
const FACE_UNITS = { x0: 260, x1: 560, y0: 286, y1: 560 };
const MOUTH_UNITS = { x0: 350, x1: 580, y0: 426, y1: 538 };

const toCard = (u: { x0: number; x1: number; y0: number; y1: number }): FractionBox => ({
  x: (TX + u.x0 * SCALE) / CARD_W,
  y: (TY + u.y0 * SCALE) / CARD_H,
  w: ((u.x1 - u.x0) * SCALE) / CARD_W,
  h: ((u.y1 - u.y0) * SCALE) / CARD_H,
});

/** The mouth region in whole card pixels (its openings are drawn for exactly this rect). */
const MOUTH_PX = (() => {
  const m = toCard(MOUTH_UNITS);
  return { x: Math.round(m.x * CARD_W), y: Math.round(m.y * CARD_H), w: Math.round(m.w * CARD_W), h: Math.round(m.h * CARD_H) };
})();

/** Where the face and the mouth are on every presenter card (fractions of the card). */
export const PRESENTER_FACE = toCard(FACE_UNITS);
export const PRESENTER_MOUTH: FractionBox = {
  x: MOUTH_PX.x / CARD_W,
  y: MOUTH_PX.y / CARD_H,
  w: MOUTH_PX.w / CARD_W,
  h: MOUTH_PX.h / CARD_H,
};

/** Whether `id` is a public avatar drawn here. */
export const isPresenter = (id: string): boolean => Object.hasOwn(LOOKS, id);

/** The peep's drawing (the inside of DiceBear's SVG) with face `face`. */
function peep(id: string, look: Look, face: (typeof PRESENTER_FACES)[number]): string {
  const svg = createAvatar(openPeeps, {
    seed: id,
    clip: false,
    face: [face],
    head: [look.head],
    skinColor: [look.skin],
    headContrastColor: [look.hair],
    clothingColor: [look.clothing],
    facialHair: look.facialHair ? [look.facialHair] : [],
    facialHairProbability: look.facialHair ? 100 : 0,
    accessories: look.accessory ? [look.accessory] : [],
    accessoriesProbability: look.accessory ? 100 : 0,
    maskProbability: 0,
  }).toString();
  // The licence metadata goes into the card's own <metadata>; the drawing is what follows it.
  return svg
    .replace(/^<svg[^>]*>/, '')
    .replace(/<\/svg>\s*$/, '')
    .replace(/<metadata[\s\S]*?<\/metadata>/, '');
}

const rect = (x: number, y: number, w: number, h: number, fill: string, extra = '') =>
  `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${fill}"${extra}/>`;
const circle = (cx: number, cy: number, r: number, fill: string, extra = '') =>
  `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${fill}"${extra}/>`;

/** A plant in a pot standing at (x, floor). */
const plant = (x: number, floor: number, leaf: string, pot: string) =>
  rect(x - 55, floor - 120, 110, 120, pot, ' rx="14"') +
  [-70, -25, 20, 60]
    .map(
      (dx, i) =>
        `<ellipse cx="${x + dx}" cy="${floor - 190 - (i % 2) * 60}" rx="48" ry="110" fill="${leaf}" transform="rotate(${dx / 2} ${x + dx} ${floor - 150})"/>`,
    )
    .join('');

/** A window with its light at (x, y). */
const windowAt = (x: number, y: number, w: number, h: number, glass: string, frame: string) =>
  rect(x - 16, y - 16, w + 32, h + 32, frame, ' rx="10"') +
  rect(x, y, w, h, glass) +
  rect(x + w / 2 - 8, y, 16, h, frame) +
  rect(x, y + h / 2 - 8, w, 16, frame);

/** A shelf with things on it. */
const shelf = (x: number, y: number, w: number, board: string, items: string[]) =>
  rect(x, y, w, 18, board) +
  items
    .map((c, i) =>
      rect(x + 30 + i * ((w - 60) / items.length), y - 70 - (i % 3) * 25, (w - 60) / items.length - 18, 70 + (i % 3) * 25, c, ' rx="6"'),
    )
    .join('');

const W = CARD_W;
const H = CARD_H;

/** The room of each setting: wall gradient, floor and furniture (before the blur). */
const ROOMS: Record<Setting, { wall: [string, string]; things: string }> = {
  home: {
    wall: ['#e2b594', '#c98f6e'],
    things:
      windowAt(90, 200, 300, 420, '#fbe9c9', '#f3dcc4') + plant(910, 1000, '#4f7f4b', '#a85f3c') + rect(0, 1000, W, H - 1000, '#b07a5a'),
  },
  gym: {
    wall: ['#9fb3c6', '#7f95ab'],
    things:
      rect(0, 380, W, 60, '#2bb673', ' opacity="0.55"') +
      [120, 260, 820, 960].map((x) => circle(x, 820, 70, '#3d4a57') + circle(x, 820, 26, '#9fb3c6')).join('') +
      rect(0, 900, W, 60, '#5f6f80'),
  },
  desk: {
    wall: ['#1f2440', '#2c2f5a'],
    things:
      `<ellipse cx="180" cy="300" rx="260" ry="200" fill="#7b5cff" opacity="0.55"/><ellipse cx="930" cy="380" rx="260" ry="220" fill="#00c2d1" opacity="0.45"/>` +
      shelf(40, 620, 320, '#3b4070', ['#ff6b9a', '#ffd166', '#6fd3ff']) +
      shelf(720, 560, 330, '#3b4070', ['#a0e7a0', '#c3a6ff', '#ff9f6b']) +
      rect(0, 1060, W, H - 1060, '#151935'),
  },
  office: {
    wall: ['#c9b9a3', '#b09e86'],
    things:
      windowAt(720, 170, 300, 520, '#cfe3ef', '#e6ddd0') +
      Array.from({ length: 9 }, (_, i) => rect(720, 180 + i * 56, 300, 14, '#a99c8a', ' opacity="0.8"')).join('') +
      rect(70, 260, 240, 300, '#8a7f70', ' rx="6"') +
      rect(90, 280, 200, 260, '#b7c4b0') +
      rect(0, 1050, W, H - 1050, '#8a7c6a'),
  },
  vanity: {
    wall: ['#e7a9b3', '#d48a98'],
    things:
      circle(540, 470, 420, '#f7d9de', ' stroke="#c9808e" stroke-width="26"') +
      Array.from({ length: 10 }, (_, i) => {
        const a = Math.PI * (0.95 + (i / 9) * 1.1);
        return circle(540 + 470 * Math.cos(a), 470 + 470 * Math.sin(a), 26, '#fff2c2');
      }).join('') +
      rect(0, 1030, W, H - 1030, '#c98c7e'),
  },
  kitchen: {
    wall: ['#d8c7ad', '#c2ad8f'],
    things:
      Array.from({ length: 12 }, (_, i) => rect(0, 560 + i * 60, W, 4, '#b59f80')).join('') +
      Array.from({ length: 10 }, (_, i) => rect(i * 120, 560, 4, 720, '#b59f80')).join('') +
      rect(0, 1100, W, H - 1100, '#9c8466') +
      shelf(40, 380, 360, '#b07a4f', ['#e8a33d', '#c0392b', '#f4d35e', '#6a994e']) +
      shelf(700, 340, 340, '#b07a4f', ['#f7f7f2', '#d9d2c5', '#e8a33d']) +
      `<path d="M880 0 V120" stroke="#333" stroke-width="6"/><path d="M800 200 Q880 100 960 200 Z" fill="#2d6a4f"/>`,
  },
  outdoors: {
    wall: ['#7fbfe8', '#b5dcf2'],
    things:
      circle(860, 230, 110, '#fff1b8') +
      `<path d="M-40 900 L260 430 L520 900 Z" fill="#7f9cb5"/><path d="M360 900 L720 360 L1120 900 Z" fill="#93adc3"/>` +
      `<path d="M0 860 Q300 760 600 860 T1080 840 V1350 H0 Z" fill="#7fb77e"/><path d="M0 1000 Q400 900 1080 1000 V1350 H0 Z" fill="#5e9a5d"/>`,
  },
  gaming: {
    wall: ['#17122b', '#2a1850'],
    things:
      `<ellipse cx="160" cy="420" rx="240" ry="260" fill="#ff2fa0" opacity="0.45"/><ellipse cx="960" cy="330" rx="240" ry="240" fill="#3ae0ff" opacity="0.45"/>` +
      rect(60, 760, 960, 14, '#3ae0ff', ' opacity="0.7"') +
      shelf(700, 600, 330, '#35245f', ['#ff2fa0', '#ffe14d', '#3ae0ff']) +
      rect(0, 1060, W, H - 1060, '#100b1f'),
  },
  studio: {
    wall: ['#b7cdb5', '#9bb598'],
    things:
      circle(540, 560, 400, '#dfe9da', ' opacity="0.8"') +
      plant(140, 1040, '#4f7f4f', '#b9a58c') +
      plant(950, 1060, '#6a9461', '#a8957a') +
      rect(0, 1040, W, H - 1040, '#8da487'),
  },
  living: {
    wall: ['#cbbfae', '#b3a593'],
    things:
      rect(90, 250, 220, 280, '#c98b6b', ' rx="6"') +
      rect(110, 270, 180, 240, '#f1d9b5') +
      rect(770, 220, 220, 160, '#5b7c99', ' rx="6"') +
      rect(790, 240, 180, 120, '#b9d3e8') +
      rect(-40, 860, W + 80, 260, '#6c7f8c', ' rx="60"') +
      rect(0, 1100, W, H - 1100, '#8f8273'),
  },
};

/**
 * The presenter card of public avatar `id` with face `face` (PRESENTER_FACES[0] closed): the
 * blurred room, a soft light behind the head, the peep. Throws on an id without a look.
 */
export function presenterSvg(id: string, face: (typeof PRESENTER_FACES)[number] = PRESENTER_FACES[0]): string {
  const look = LOOKS[id];
  if (!look) throw new Error(`no presenter look for avatar ${id}`);
  const { wall, things } = ROOMS[look.setting];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CARD_W}" height="${CARD_H}" viewBox="0 0 ${CARD_W} ${CARD_H}" role="img">\n` +
    `<title>${id}</title>\n` +
    `<metadata>Open Peeps by Pablo Stanley (https://www.openpeeps.com/), CC0 1.0, drawn with DiceBear (@dicebear/open-peeps)</metadata>\n` +
    `<defs><linearGradient id="wall" x1="0" y1="0" x2="0.4" y2="1"><stop offset="0" stop-color="${wall[0]}"/><stop offset="1" stop-color="${wall[1]}"/></linearGradient>` +
    `<radialGradient id="light" cx="0.5" cy="0.5" r="0.5"><stop offset="0" stop-color="#ffffff" stop-opacity="0.45"/><stop offset="1" stop-color="#ffffff" stop-opacity="0"/></radialGradient>` +
    `<filter id="soft" x="-5%" y="-5%" width="110%" height="110%"><feGaussianBlur stdDeviation="9"/></filter></defs>\n` +
    `<rect width="${CARD_W}" height="${CARD_H}" fill="url(#wall)"/>\n` +
    `<g filter="url(#soft)">${things}</g>\n` +
    `<ellipse cx="583" cy="680" rx="480" ry="420" fill="url(#light)"/>\n` +
    `<g transform="translate(${TX} ${TY}) scale(${SCALE})">${peep(id, look, face)}</g>\n` +
    `</svg>\n`
  );
}

/** A catalog presenter for a render: the card (PNG) with its face and mouth boxes, and the mouth region (PRESENTER_MOUTH) with each opening 1–3. */
export interface CatalogPresenter {
  image: Buffer;
  face: FractionBox;
  mouth: FractionBox;
  openings: Buffer[];
}

/** The card with face `face` seen through its mouth region only (librsvg draws just that; the room's blur is most of a card's cost). */
export function presenterMouthSvg(id: string, face: (typeof PRESENTER_FACES)[number]): string {
  const { x, y, w, h } = MOUTH_PX;
  return presenterSvg(id, face).replace(
    `width="${CARD_W}" height="${CARD_H}" viewBox="0 0 ${CARD_W} ${CARD_H}"`,
    `width="${w}" height="${h}" viewBox="${x} ${y} ${w} ${h}"`,
  );
}

const presenters = new Map<string, Promise<CatalogPresenter>>();

/** Public avatar `id`'s card and its mouth openings as PNGs (drawn once per process: they never change). */
export function catalogPresenter(id: string): Promise<CatalogPresenter> {
  let p = presenters.get(id);
  if (!p) {
    p = (async () => {
      const png = (svg: string) => sharp(Buffer.from(svg)).png().toBuffer();
      const [image, ...openings] = await Promise.all([
        png(presenterSvg(id)),
        ...PRESENTER_FACES.slice(1).map((f) => png(presenterMouthSvg(id, f))),
      ]);
      return { image, face: PRESENTER_FACE, mouth: PRESENTER_MOUTH, openings };
    })();
    p.catch(() => presenters.delete(id));
    presenters.set(id, p);
  }
  return p;
}
