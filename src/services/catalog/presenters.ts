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

/** Each public avatar's look, from its description in spec/avatars.yaml. */
const LOOKS: Record<string, Look> = {
  'maya-lifestyle': { head: 'long', skin: 'edb98a', hair: '4a312c', clothing: 'e78276', setting: 'home' },
  'jordan-fitness': { head: 'shaved2', skin: 'ae5d29', hair: '2c1b18', clothing: '2bb673', setting: 'gym' },
  'priya-tech-reviewer': { head: 'bun', skin: 'd08b5b', hair: '2c1b18', clothing: '8fa7df', accessory: 'glasses', setting: 'desk' },
  'daniel-business': { head: 'pomp', skin: 'ffdbb4', hair: '724133', clothing: '34495e', setting: 'office' },
  'chloe-beauty': { head: 'longCurly', skin: 'ffdbb4', hair: 'b58143', clothing: 'f59797', setting: 'vanity' },
  'marcus-chef': { head: 'noHair2', skin: '694d3d', hair: '2c1b18', clothing: 'f4f1ea', facialHair: 'full', setting: 'kitchen' },
  'sofia-travel': { head: 'hatHip', skin: 'd08b5b', hair: 'a55728', clothing: 'ffcf77', setting: 'outdoors' },
  'ethan-gamer': { head: 'short2', skin: 'edb98a', hair: 'd6b370', clothing: '6c5ce7', setting: 'gaming' },
  'grace-wellness': { head: 'grayMedium', skin: 'edb98a', hair: 'e8e1e1', clothing: '9ddadb', setting: 'studio' },
  'sam-everyday': { head: 'short4', skin: 'd08b5b', hair: '4a312c', clothing: '78a6c8', setting: 'living' },
};

/** The presenter's faces: closed (index 0), then the openings 1–3 of src/engines/local/mouth.ts. */
export const PRESENTER_FACES = ['smile', 'concernedFear', 'explaining', 'lovingGrin1'] as const;

export const CARD_W = 1080;
export const CARD_H = 1350;
// The peep (its 704-unit frame, drawn past it to the waist) on the card: scaled, head top near
// the top fifth, its body centred and running off the bottom edge.
const SCALE = 1.1;
const TX = 160.5;
const TY = 46.6;
/** Where the face's skin and the mouth (every face's mouth, open or not) are, in peep units. */
const FACE_UNITS = { x0: 260, x1: 560, y0: 215, y1: 560 };
const MOUTH_UNITS = { x0: 350, x1: 580, y0: 426, y1: 538 };

const toCard = (u: { x0: number; x1: number; y0: number; y1: number }): FractionBox => ({
  x: (TX + u.x0 * SCALE) / CARD_W,
  y: (TY + u.y0 * SCALE) / CARD_H,
  w: ((u.x1 - u.x0) * SCALE) / CARD_W,
  h: ((u.y1 - u.y0) * SCALE) / CARD_H,
});

/** Where the face and the mouth are on every presenter card (fractions of the card). */
export const PRESENTER_FACE = toCard(FACE_UNITS);
export const PRESENTER_MOUTH = toCard(MOUTH_UNITS);

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
const circle = (cx: number, cy: number, r: number, fill: string, extra = '') => `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${fill}"${extra}/>`;

/** A plant in a pot standing at (x, floor). */
const plant = (x: number, floor: number, leaf: string, pot: string) =>
  rect(x - 55, floor - 120, 110, 120, pot, ' rx="14"') +
  [-70, -25, 20, 60]
    .map((dx, i) => `<ellipse cx="${x + dx}" cy="${floor - 190 - (i % 2) * 60}" rx="48" ry="110" fill="${leaf}" transform="rotate(${dx / 2} ${x + dx} ${floor - 150})"/>`)
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
  items.map((c, i) => rect(x + 30 + i * ((w - 60) / items.length), y - 70 - (i % 3) * 25, (w - 60) / items.length - 18, 70 + (i % 3) * 25, c, ' rx="6"')).join('');

/** The room of each setting: wall gradient, floor and furniture (before the blur). */
function room(setting: Setting): { wall: [string, string]; things: string } {
  const W = CARD_W;
  const H = CARD_H;
  switch (setting) {
    case 'home':
      return { wall: ['#f6e7d8', '#e9cfb8'], things: windowAt(90, 200, 300, 420, '#fff8e8', '#ffffff') + plant(910, 1000, '#5f8f5b', '#c97b52') + rect(0, 1000, W, H - 1000, '#d9b99b') };
    case 'gym':
      return {
        wall: ['#dfe7ee', '#b8c6d3'],
        things: rect(0, 380, W, 60, '#2bb673', ' opacity="0.55"') + [120, 260, 820, 960].map((x) => circle(x, 820, 70, '#3d4a57') + circle(x, 820, 26, '#b8c6d3')).join('') + rect(0, 900, W, 60, '#8c99a6'),
      };
    case 'desk':
      return {
        wall: ['#1f2440', '#2c2f5a'],
        things:
          `<ellipse cx="180" cy="300" rx="260" ry="200" fill="#7b5cff" opacity="0.55"/><ellipse cx="930" cy="380" rx="260" ry="220" fill="#00c2d1" opacity="0.45"/>` +
          shelf(40, 620, 320, '#3b4070', ['#ff6b9a', '#ffd166', '#6fd3ff']) +
          shelf(720, 560, 330, '#3b4070', ['#a0e7a0', '#c3a6ff', '#ff9f6b']) +
          rect(0, 1060, W, H - 1060, '#151935'),
      };
    case 'office':
      return {
        wall: ['#ece8e1', '#d6cfc4'],
        things:
          windowAt(720, 170, 300, 520, '#dfeef7', '#f7f5f2') +
          Array.from({ length: 9 }, (_, i) => rect(720, 180 + i * 56, 300, 14, '#c9c3b8', ' opacity="0.8"')).join('') +
          rect(70, 260, 240, 300, '#8a7f70', ' rx="6"') +
          rect(90, 280, 200, 260, '#b7c4b0') +
          rect(0, 1050, W, H - 1050, '#a89c8c'),
      };
    case 'vanity':
      return {
        wall: ['#fbe3e6', '#f1c6cd'],
        things:
          circle(540, 470, 420, '#fff5f6', ' stroke="#e7b3bb" stroke-width="26"') +
          Array.from({ length: 10 }, (_, i) => {
            const a = Math.PI * (0.95 + (i / 9) * 1.1);
            return circle(540 + 470 * Math.cos(a), 470 + 470 * Math.sin(a), 26, '#fff2c2');
          }).join('') +
          rect(0, 1030, W, H - 1030, '#e9b9a8'),
      };
    case 'kitchen':
      return {
        wall: ['#f4f1ea', '#e4ddd0'],
        things:
          Array.from({ length: 12 }, (_, i) => rect(0, 560 + i * 60, W, 4, '#d2c8b8')).join('') +
          Array.from({ length: 10 }, (_, i) => rect(i * 120, 560, 4, 720, '#d2c8b8')).join('') +
          shelf(40, 380, 360, '#b07a4f', ['#e8a33d', '#c0392b', '#f4d35e', '#6a994e']) +
          shelf(700, 340, 340, '#b07a4f', ['#f7f7f2', '#d9d2c5', '#e8a33d']) +
          `<path d="M880 0 V120" stroke="#333" stroke-width="6"/><path d="M800 200 Q880 100 960 200 Z" fill="#2d6a4f"/>`,
      };
    case 'outdoors':
      return {
        wall: ['#9fd3f5', '#e7f4fb'],
        things:
          circle(860, 230, 110, '#fff1b8') +
          `<path d="M-40 900 L260 430 L520 900 Z" fill="#7f9cb5"/><path d="M360 900 L720 360 L1120 900 Z" fill="#93adc3"/>` +
          `<path d="M0 860 Q300 760 600 860 T1080 840 V1350 H0 Z" fill="#7fb77e"/><path d="M0 1000 Q400 900 1080 1000 V1350 H0 Z" fill="#5e9a5d"/>`,
      };
    case 'gaming':
      return {
        wall: ['#17122b', '#2a1850'],
        things:
          `<ellipse cx="160" cy="420" rx="240" ry="260" fill="#ff2fa0" opacity="0.45"/><ellipse cx="960" cy="330" rx="240" ry="240" fill="#3ae0ff" opacity="0.45"/>` +
          rect(60, 760, 960, 14, '#3ae0ff', ' opacity="0.7"') +
          shelf(700, 600, 330, '#35245f', ['#ff2fa0', '#ffe14d', '#3ae0ff']) +
          rect(0, 1060, W, H - 1060, '#100b1f'),
      };
    case 'studio':
      return {
        wall: ['#e3ece3', '#c9d8c8'],
        things: circle(540, 560, 400, '#f3f7ef', ' opacity="0.8"') + plant(140, 1040, '#6b9a6b', '#e0d4c3') + plant(950, 1060, '#86ad7d', '#d7c7b0') + rect(0, 1040, W, H - 1040, '#b9c8b4'),
      };
    case 'living':
      return {
        wall: ['#ebe6df', '#d3cbc0'],
        things:
          rect(90, 250, 220, 280, '#c98b6b', ' rx="6"') +
          rect(110, 270, 180, 240, '#f1d9b5') +
          rect(770, 220, 220, 160, '#5b7c99', ' rx="6"') +
          rect(790, 240, 180, 120, '#b9d3e8') +
          rect(-40, 860, W + 80, 260, '#7d8f9b', ' rx="60"') +
          rect(0, 1100, W, H - 1100, '#a3978a'),
      };
  }
}

/**
 * The presenter card of public avatar `id` with face `face` (PRESENTER_FACES[0] closed): the
 * blurred room, a soft light behind the head, the peep. Throws on an id without a look.
 */
export function presenterSvg(id: string, face: (typeof PRESENTER_FACES)[number] = PRESENTER_FACES[0]): string {
  const look = LOOKS[id];
  if (!look) throw new Error(`no presenter look for avatar ${id}`);
  const { wall, things } = room(look.setting);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CARD_W}" height="${CARD_H}" viewBox="0 0 ${CARD_W} ${CARD_H}" role="img">\n` +
    `<title>${id}</title>\n` +
    `<metadata>Open Peeps by Pablo Stanley (https://www.openpeeps.com/), CC0 1.0, drawn with DiceBear (@dicebear/open-peeps)</metadata>\n` +
    `<defs><linearGradient id="wall" x1="0" y1="0" x2="0.4" y2="1"><stop offset="0" stop-color="${wall[0]}"/><stop offset="1" stop-color="${wall[1]}"/></linearGradient>` +
    `<radialGradient id="light" cx="0.5" cy="0.5" r="0.5"><stop offset="0" stop-color="#ffffff" stop-opacity="0.45"/><stop offset="1" stop-color="#ffffff" stop-opacity="0"/></radialGradient>` +
    `<filter id="soft" x="-5%" y="-5%" width="110%" height="110%"><feGaussianBlur stdDeviation="9"/></filter></defs>\n` +
    `<rect width="${CARD_W}" height="${CARD_H}" fill="url(#wall)"/>\n` +
    `<g filter="url(#soft)">${things}</g>\n` +
    `<ellipse cx="560" cy="520" rx="520" ry="460" fill="url(#light)"/>\n` +
    `<g transform="translate(${TX} ${TY}) scale(${SCALE})">${peep(id, look, face)}</g>\n` +
    `</svg>\n`
  );
}

/** A catalog presenter for a render: the card (PNG) with its face and mouth boxes, and the card with each opening (1–3). */
export interface CatalogPresenter {
  image: Buffer;
  face: FractionBox;
  mouth: FractionBox;
  openings: Buffer[];
}

/** The PNGs of public avatar `id`'s card with each face (closed first). */
export async function catalogPresenter(id: string): Promise<CatalogPresenter> {
  const [image, ...openings] = await Promise.all(PRESENTER_FACES.map((f) => sharp(Buffer.from(presenterSvg(id, f))).png().toBuffer()));
  return { image, face: PRESENTER_FACE, mouth: PRESENTER_MOUTH, openings };
}
