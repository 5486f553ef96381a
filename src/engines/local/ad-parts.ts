// The structure a static template promises, drawn in the layout's body (../write/ad-copy.ts
// adStructure decides the words, ./layout.ts the area): a comparison's two columns (us ✓, them ✗,
// the same points), a feature grid's callouts with drawn icons, a before/after's two labelled
// halves with an arrow between, a testimonial's rating and attribution, a sale's hero number. Marks
// (ticks, crosses, icons, stars, the arrow, quotation marks) are drawn shapes; every word is set by
// the composer's text setter (./ad-image.ts), which fits it in its box and records it in the manifest.
import type { OverlayOptions } from 'sharp';
import type { FontFace } from '../../media/fonts.ts';
import type { AdStructure } from '../write/ad-copy.ts';
import { mix, readableOn, type AdLayout, type Palette, type Rect } from './layout.ts';

/** How one text is drawn: where, its role, its colour and size cap, and whether it sits on a scrim panel. */
export interface TextSpec {
  text: string;
  role: string;
  box: Rect;
  colour: string;
  maxPx: number;
  face: FontFace;
  align?: 'left' | 'centre';
  va?: 'top' | 'middle' | 'bottom';
  /** The markup around the escaped text (letter spacing). */
  extra?: string;
  /** A panel behind the text: its fill and opacity. */
  panel?: { fill: string; opacity: number } | null;
  /** Short texts (brand, label, badge): never wrapped, sized down instead. */
  oneLine?: boolean;
  /** Wrapped between words only (a word too long for the box is set smaller, never broken). */
  wholeWords?: boolean;
}

/** What the parts are drawn with: the composer's choices and its text setter. */
export interface PartsDraw {
  layout: AdLayout;
  palette: Palette;
  /** The colour of texts on the background. */
  ink: string;
  headFace: FontFace;
  bodyFace: FontFace;
  textFace: FontFace;
  /** A sale's hero number: the body family at its heaviest (display faces' % and digits read poorly at poster size). */
  heroFace: FontFace;
  /** The template sets its display texts in capitals. */
  upper: boolean;
  text(spec: TextSpec): Promise<OverlayOptions[]>;
  /** Where the last text set was drawn. */
  lastBox(): Rect;
}

const r = Math.round;

export const svg = (w: number, h: number, body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`;
export const svgLayer = (s: string, left: number, top: number): OverlayOptions => ({ input: Buffer.from(s), left, top });

/** A rounded rectangle of `fill` covering `box`. */
const card = (box: Rect, fill: string, rx: number): OverlayOptions =>
  svgLayer(svg(box.w, box.h, `<rect width="${box.w}" height="${box.h}" rx="${rx}" fill="${fill}"/>`), box.x, box.y);

export type Mark = 'tick' | 'cross' | 'star' | 'bolt' | 'target' | 'diamond' | 'arrow' | 'quote';

/** A mark of size s (its square's side) in `ink` on a disc of `disc` (none when null). */
export function markSvg(mark: Mark, s: number, ink: string, disc: string | null): string {
  const c = s / 2;
  const k = (v: number) => r(v * s * 100) / 100;
  const sw = Math.max(2, k(0.1));
  const stroke = `stroke="${ink}" stroke-width="${sw}" stroke-linecap="round" stroke-linejoin="round" fill="none"`;
  const shapes: Record<Mark, string> = {
    tick: `<polyline points="${k(0.28)},${k(0.52)} ${k(0.44)},${k(0.68)} ${k(0.73)},${k(0.35)}" ${stroke}/>`,
    cross: `<path d="M${k(0.33)} ${k(0.33)} L${k(0.67)} ${k(0.67)} M${k(0.67)} ${k(0.33)} L${k(0.33)} ${k(0.67)}" ${stroke}/>`,
    star: `<polygon points="${starPoints(c, c, s * 0.34)}" fill="${ink}"/>`,
    bolt: `<polygon points="${k(0.55)},${k(0.18)} ${k(0.3)},${k(0.55)} ${k(0.48)},${k(0.55)} ${k(0.42)},${k(0.82)} ${k(0.7)},${k(0.43)} ${k(0.52)},${k(0.43)}" fill="${ink}"/>`,
    target: `<circle cx="${c}" cy="${c}" r="${k(0.26)}" ${stroke}/><circle cx="${c}" cy="${c}" r="${k(0.09)}" fill="${ink}"/>`,
    diamond: `<polygon points="${c},${k(0.2)} ${k(0.8)},${c} ${c},${k(0.8)} ${k(0.2)},${c}" fill="${ink}"/>`,
    arrow: `<path d="M${k(0.25)} ${c} L${k(0.72)} ${c} M${k(0.52)} ${k(0.3)} L${k(0.74)} ${c} L${k(0.52)} ${k(0.7)}" ${stroke}/>`,
    quote: [0.08, 0.54]
      .map(
        (x) =>
          `<circle cx="${k(x + 0.19)}" cy="${k(0.6)}" r="${k(0.18)}" fill="${ink}"/><path d="M${k(x + 0.02)} ${k(0.6)} Q${k(x + 0.04)} ${k(0.2)} ${k(x + 0.36)} ${k(0.12)} L${k(x + 0.36)} ${k(0.26)} Q${k(x + 0.2)} ${k(0.32)} ${k(x + 0.2)} ${k(0.5)} Z" fill="${ink}"/>`,
      )
      .join(''),
  };
  const back = disc ? `<circle cx="${c}" cy="${c}" r="${c}" fill="${disc}"/>` : '';
  return svg(s, s, back + shapes[mark]);
}

/** The points of a five-pointed star of outer radius `rad` around (cx, cy). */
export function starPoints(cx: number, cy: number, rad: number): string {
  return Array.from({ length: 10 }, (_, i) => {
    const a = (Math.PI / 5) * i - Math.PI / 2;
    const d = i % 2 ? rad * 0.45 : rad;
    return `${r(cx + d * Math.cos(a))},${r(cy + d * Math.sin(a))}`;
  }).join(' ');
}

const markLayer = (mark: Mark, box: { x: number; y: number }, s: number, ink: string, disc: string | null) =>
  svgLayer(markSvg(mark, s, ink, disc), r(box.x), r(box.y));

/** The structure of the layout in its body. */
export async function structureLayers(d: PartsDraw, s: AdStructure): Promise<OverlayOptions[]> {
  const body = d.layout.body;
  if (!body) return [];
  if (s.kind === 'comparison') return comparisonLayers(d, body, s);
  if (s.kind === 'features') return featureLayers(d, body, s.items);
  if (s.kind === 'before-after') return beforeAfterLayers(d, body, s);
  if (s.kind === 'quote') return quoteFootLayers(d, body, s.attribution);
  if (s.kind === 'app') return phoneLayers(d, body, s);
  return offerHeroLayers(d, body, s.hero);
}

/** A card colour away from the ground (darker on a light ground, lighter on a dark one), opaque so its text's contrast is known. */
const quietFill = (d: PartsDraw) =>
  d.ink === '#ffffff' ? mix(d.palette.primary, '#000000', 0.45) : mix(d.palette.primary, '#ffffff', 0.65);

/** Two side-by-side rects in `box` with `gap` between (stacked when `stack`). */
function halves(box: Rect, gap: number, stack: boolean): [Rect, Rect] {
  if (stack) {
    const h = r((box.h - gap) / 2);
    return [
      { ...box, h },
      { ...box, y: box.y + h + gap, h: box.h - h - gap },
    ];
  }
  const w = r((box.w - gap) / 2);
  return [
    { ...box, w },
    { ...box, x: box.x + w + gap, w: box.w - w - gap },
  ];
}

/** Us ✓ and them ✗: two columns, each with its name and the same points, ticked or crossed. */
async function comparisonLayers(d: PartsDraw, body: Rect, s: { us: string; them: string; points: string[] }): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const cols = halves(body, r(u * 0.03), false);
  const out: OverlayOptions[] = [];
  const sides = [
    { name: s.us, fill: d.palette.accent, mark: 'tick' as const },
    { name: s.them, fill: quietFill(d), mark: 'cross' as const },
  ];
  for (const [i, col] of cols.entries()) {
    const { name, fill, mark } = sides[i];
    const ink = readableOn(fill);
    const p = r(u * 0.03);
    out.push(card(col, fill, r(u * 0.025)));
    const headH = r(Math.min(u * 0.11, col.h * 0.22));
    const head = { x: col.x + p, y: col.y + p, w: col.w - 2 * p, h: headH };
    out.push(
      ...(await d.text({
        wholeWords: true,
        text: d.upper ? name.toUpperCase() : name,
        role: 'label',
        box: head,
        colour: ink,
        maxPx: r(u * 0.07),
        face: d.headFace,
        align: 'centre',
      })),
    );
    const rowsTop = head.y + headH + r(p * 0.6);
    const rowH = r((col.y + col.h - p - rowsTop) / s.points.length);
    const icon = Math.min(r(rowH * 0.55), r(u * 0.06));
    for (const [k, point] of s.points.entries()) {
      const y = rowsTop + k * rowH;
      // The mark's disc is a tint between card and text (a disc in the text's colour beside it would read as a clipped glyph).
      out.push(markLayer(mark, { x: col.x + p, y: y + (rowH - icon) / 2 }, icon, ink, mix(fill, ink, 0.5)));
      const tx = col.x + p + icon + r(p * 0.6);
      const box = { x: tx, y: y + r(rowH * 0.05), w: col.x + col.w - p - tx, h: r(rowH * 0.9) };
      out.push(
        ...(await d.text({
          wholeWords: true,
          text: point,
          role: 'point',
          box,
          colour: ink,
          maxPx: r(u * 0.046),
          face: d.bodyFace,
          align: 'left',
        })),
      );
    }
  }
  return out;
}

/** Cells for n callouts: a row or column of n when the body is that long, else two columns. */
function cells(body: Rect, n: number, gap: number): Rect[] {
  const ratio = body.w / body.h;
  const cols = n <= 3 ? (ratio > 2.2 ? n : ratio < 0.9 ? 1 : n === 2 ? 2 : 1) : ratio > 3 ? n : 2;
  const rows = Math.ceil(n / cols);
  const w = (body.w - gap * (cols - 1)) / cols;
  const h = (body.h - gap * (rows - 1)) / rows;
  return Array.from({ length: n }, (_, i) => ({
    x: r(body.x + (i % cols) * (w + gap)),
    y: r(body.y + Math.floor(i / cols) * (h + gap)),
    w: r(w),
    h: r(h),
  }));
}

const ICONS: Mark[] = ['bolt', 'star', 'target', 'diamond'];

/** Feature callouts: a card each, a drawn icon on an accent disc and the feature's words. */
async function featureLayers(d: PartsDraw, body: Rect, items: string[]): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const fill = quietFill(d);
  const ink = readableOn(fill);
  const out: OverlayOptions[] = [];
  for (const [i, cell] of cells(body, items.length, r(u * 0.03)).entries()) {
    const p = r(u * 0.03);
    out.push(card(cell, fill, r(u * 0.025)));
    const across = cell.w > cell.h * 1.8;
    const icon = r(Math.min(u * 0.1, across ? cell.h - 2 * p : cell.h * 0.36, cell.w * 0.4));
    const iconAt = across ? { x: cell.x + p, y: cell.y + (cell.h - icon) / 2 } : { x: cell.x + (cell.w - icon) / 2, y: cell.y + p };
    out.push(markLayer(ICONS[i % ICONS.length], iconAt, icon, readableOn(d.palette.accent), d.palette.accent));
    const box = across
      ? { x: cell.x + 2 * p + icon, y: cell.y + p, w: cell.w - 3 * p - icon, h: cell.h - 2 * p }
      : { x: cell.x + p, y: cell.y + r(1.6 * p) + icon, w: cell.w - 2 * p, h: cell.h - r(2.6 * p) - icon };
    const align = across ? ('left' as const) : ('centre' as const);
    out.push(
      ...(await d.text({
        wholeWords: true,
        text: items[i],
        role: 'point',
        box,
        colour: ink,
        maxPx: r(u * 0.055),
        face: d.bodyFace,
        align,
      })),
    );
  }
  return out;
}

/** Before and after: two halves (the before one muted), each labelled, with an arrow disc on the seam. */
async function beforeAfterLayers(d: PartsDraw, body: Rect, s: { before: string; after: string }): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const gap = r(u * 0.02);
  const stack = body.h > body.w * 1.05;
  const parts = halves(body, gap, stack);
  const disc = r(u * 0.1);
  const out: OverlayOptions[] = [];
  const sides = [
    { label: 'Before', text: s.before, fill: mix(quietFill(d), '#808080', 0.35) },
    { label: 'After', text: s.after, fill: d.palette.accent },
  ];
  for (const [i, part] of parts.entries()) {
    const { label, text, fill } = sides[i];
    const ink = readableOn(fill);
    const p = r(u * 0.035);
    out.push(card(part, fill, r(u * 0.025)));
    const labelBox = { x: part.x + p, y: part.y + p, w: r(Math.min(part.w - 2 * p, u * 0.3)), h: r(u * 0.065) };
    out.push(
      ...(await d.text({
        text: label.toUpperCase(),
        role: 'label',
        box: labelBox,
        colour: readableOn(ink),
        maxPx: r(u * 0.04),
        face: d.bodyFace,
        align: 'left',
        va: 'top',
        panel: { fill: ink, opacity: 1 },
        oneLine: true,
      })),
    );
    // The words keep clear of the label and of the arrow disc on the seam.
    const top = labelBox.y + labelBox.h + r(p * 0.5);
    const seam = r(disc / 2);
    const box = stack
      ? { x: part.x + p, y: top, w: part.w - 2 * p, h: part.y + part.h - p - top - (i === 0 ? seam : 0) }
      : { x: part.x + p + (i === 1 ? seam : 0), y: top, w: part.w - 2 * p - seam, h: part.y + part.h - p - top };
    if (i === 1 && stack) box.y += seam;
    if (i === 1 && stack) box.h -= seam;
    out.push(
      ...(await d.text({
        wholeWords: true,
        text: d.upper ? text.toUpperCase() : text,
        role: 'point',
        box,
        colour: ink,
        maxPx: r(u * 0.085),
        face: d.headFace,
        align: 'centre',
      })),
    );
  }
  const [a, b] = parts;
  const centre = stack ? { x: body.x + body.w / 2, y: (a.y + a.h + b.y) / 2 } : { x: (a.x + a.w + b.x) / 2, y: body.y + body.h / 2 };
  // A disc of neither half's text colour (one beside a text in its own colour would read as a clipped glyph).
  const discFill = mix(mix(readableOn(sides[0].fill), readableOn(sides[1].fill), 0.5), d.palette.primary, 0.5);
  out.push(
    svgLayer(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${disc}" height="${disc}"><g transform="rotate(${stack ? 90 : 0} ${disc / 2} ${disc / 2})">${markSvg('arrow', disc, readableOn(discFill), discFill).replace(/^<svg[^>]*>|<\/svg>$/g, '')}</g></svg>`,
      r(centre.x - disc / 2),
      r(centre.y - disc / 2),
    ),
  );
  return out;
}

/** A testimonial's foot: five stars and the attribution under them. */
async function quoteFootLayers(d: PartsDraw, body: Rect, attribution: string): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const starH = r(Math.min(body.h * 0.36, u * 0.06));
  const w = starH * 5;
  const left = d.layout.orientation === 'landscape' ? body.x : body.x + r((body.w - w) / 2);
  const stars = [0, 1, 2, 3, 4].map(
    (i) => `<polygon points="${starPoints(starH * i + starH / 2, starH / 2, starH * 0.48)}" fill="${d.ink}"/>`,
  );
  const top = body.y + r(u * 0.03);
  const out = [svgLayer(svg(w, starH, stars.join('')), left, top)];
  const box = { x: body.x, y: top + starH + r(u * 0.02), w: body.w, h: body.y + body.h - top - starH - r(u * 0.02) };
  out.push(
    ...(await d.text({
      wholeWords: true,
      text: attribution,
      role: 'attribution',
      box,
      colour: d.ink,
      maxPx: r(u * 0.04),
      face: d.textFace,
      va: 'top',
      oneLine: true,
    })),
  );
  return out;
}

/** A testimonial's quotation mark, in the band over the headline. */
export function quoteMarkLayer(d: PartsDraw, headline: Rect): OverlayOptions {
  const s = r(d.layout.unit * 0.1);
  const x = d.layout.orientation === 'landscape' ? headline.x : headline.x + r((headline.w - s) / 2);
  return markLayer(
    'quote',
    { x, y: headline.y - s - r(d.layout.unit * 0.01) },
    s,
    d.palette.accent === d.palette.primary ? d.ink : d.palette.accent,
    null,
  );
}

/** A sale's hero: the offer's number, as large as the body takes, over an accent bar. */
async function offerHeroLayers(d: PartsDraw, body: Rect, hero: string): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const bar = Math.max(4, r(u * 0.02));
  const box = { ...body, h: body.h - 2 * bar };
  const layers = await d.text({
    wholeWords: true,
    text: hero,
    role: 'offer',
    box,
    colour: d.ink,
    maxPx: r(body.h * 0.9),
    face: d.heroFace,
    align: 'centre',
    oneLine: hero.split(' ').length < 2,
  });
  const drawn = d.lastBox();
  const w = r(Math.min(body.w, Math.max(u * 0.2, drawn.w * 0.6)));
  const bx = drawn.x + r((drawn.w - w) / 2);
  return [
    ...layers,
    svgLayer(
      svg(w, bar, `<rect width="${w}" height="${bar}" rx="${r(bar / 2)}" fill="${d.palette.accent}"/>`),
      bx,
      drawn.y + drawn.h + bar,
    ),
  ];
}

/** An app's phone: a dark frame, a light screen with the app's icon (a drawn mark), its name and what it does. */
async function phoneLayers(d: PartsDraw, body: Rect, s: { name: string; line: string | null }): Promise<OverlayOptions[]> {
  const u = d.layout.unit;
  const h = Math.min(body.h, r(body.w * 2.05));
  const w = r(h * 0.49);
  const phone = { x: body.x + r((body.w - w) / 2), y: body.y + r((body.h - h) / 2), w, h };
  const bezel = Math.max(3, r(w * 0.045));
  const screen = { x: phone.x + bezel, y: phone.y + bezel, w: w - 2 * bezel, h: h - 2 * bezel };
  const fill = mix(d.palette.primary, '#ffffff', 0.9);
  const ink = readableOn(fill);
  const notchW = r(w * 0.3);
  const out: OverlayOptions[] = [
    card(phone, '#111111', r(w * 0.14)),
    card(screen, fill, r(w * 0.1)),
    svgLayer(
      svg(notchW, bezel * 2, `<rect width="${notchW}" height="${bezel * 2}" rx="${bezel}" fill="#111111"/>`),
      phone.x + r((w - notchW) / 2),
      screen.y,
    ),
  ];
  const p = r(screen.w * 0.1);
  const icon = r(Math.min(screen.w * 0.42, screen.h * 0.24));
  const iconAt = { x: screen.x + r((screen.w - icon) / 2), y: screen.y + r(screen.h * 0.16) };
  out.push(
    svgLayer(
      svg(
        icon,
        icon,
        `<rect width="${icon}" height="${icon}" rx="${r(icon * 0.23)}" fill="${d.palette.accent}"/>${markSvg('bolt', icon, readableOn(d.palette.accent), null).replace(/^<svg[^>]*>|<\/svg>$/g, '')}`,
      ),
      iconAt.x,
      iconAt.y,
    ),
  );
  const nameBox = { x: screen.x + p, y: iconAt.y + icon + r(p * 0.8), w: screen.w - 2 * p, h: r(screen.h * 0.16) };
  out.push(
    ...(await d.text({
      wholeWords: true,
      text: s.name,
      role: 'label',
      box: nameBox,
      colour: ink,
      maxPx: r(u * 0.06),
      face: d.headFace,
      align: 'centre',
      va: 'top',
    })),
  );
  if (s.line) {
    const top = d.lastBox().y + d.lastBox().h + r(p * 0.5);
    const lineBox = { x: screen.x + p, y: top, w: screen.w - 2 * p, h: screen.y + screen.h - p - top };
    out.push(
      ...(await d.text({
        wholeWords: true,
        text: s.line,
        role: 'point',
        box: lineBox,
        colour: ink,
        maxPx: r(u * 0.038),
        face: d.textFace,
        align: 'centre',
        va: 'top',
      })),
    );
  }
  return out;
}
