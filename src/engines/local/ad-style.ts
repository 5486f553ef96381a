// The look of each ad template (the templates are sold as different designs): the texture over
// its brand-colour gradient, the face and case of its headline, and an accent element. Pure: the
// image composer (./ad-image.ts) draws what this decides.
import type { GenerationJob } from '../generation.ts';
import type { FontWeight } from '../../media/fonts.ts';
import { hash32, rng } from './layout.ts';

type HeadFamily = 'Anton' | 'Montserrat' | 'Inter' | 'Playfair Display' | 'DM Serif Display';

export type Texture = 'stripes' | 'dots' | 'grid' | 'rings' | 'waves' | 'split' | 'spotlight' | 'frame' | 'tiles' | 'vignette';

export interface AdStyle {
  texture: Texture;
  /** The headline in capitals (sale and offer templates). */
  upper: boolean;
  /** The template's headline family when the brand kit names none (a bundled display face). */
  family: HeadFamily;
  /** The headline's weight in that family (Anton and DM Serif Display have one). */
  weight: FontWeight;
  /** The family of the other texts (subheadline, points, CTA) when the brand kit names none. */
  body: 'Inter' | 'Montserrat';
  /** A short bar in the accent colour under the headline. */
  rule: boolean;
  /** A near-white ground (an Apple-style minimal hero) when neither a brand kit nor a reference gives colours. */
  light?: boolean;
}

const BY_SLUG: Record<string, AdStyle> = {
  'bold-sale-banner': { texture: 'stripes', upper: true, family: 'Anton', weight: 'regular', body: 'Inter', rule: false },
  'product-spotlight': { texture: 'spotlight', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'testimonial-quote': { texture: 'waves', upper: false, family: 'Playfair Display', weight: 'bold', body: 'Inter', rule: false },
  'before-after-split': { texture: 'split', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'feature-callout-grid': { texture: 'grid', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'limited-time-offer-story': { texture: 'rings', upper: true, family: 'Anton', weight: 'regular', body: 'Montserrat', rule: false },
  'us-vs-them-comparison': { texture: 'split', upper: true, family: 'Montserrat', weight: 'black', body: 'Inter', rule: false },
  'seasonal-promo-poster': { texture: 'dots', upper: false, family: 'DM Serif Display', weight: 'regular', body: 'Montserrat', rule: true },
  'minimal-product-hero': { texture: 'frame', upper: false, family: 'Inter', weight: 'black', body: 'Inter', rule: false, light: true },
  'app-install-banner': { texture: 'tiles', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'product-demo-showcase': { texture: 'spotlight', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'flash-sale-countdown': { texture: 'stripes', upper: true, family: 'Anton', weight: 'regular', body: 'Montserrat', rule: false },
  'cinematic-brand-story': { texture: 'vignette', upper: true, family: 'Playfair Display', weight: 'black', body: 'Inter', rule: false },
  'feature-walkthrough': { texture: 'grid', upper: false, family: 'Montserrat', weight: 'black', body: 'Inter', rule: true },
  'problem-solution-explainer': { texture: 'split', upper: false, family: 'Anton', weight: 'regular', body: 'Inter', rule: true },
  'lifestyle-montage': { texture: 'waves', upper: false, family: 'DM Serif Display', weight: 'regular', body: 'Montserrat', rule: false },
};

const TEXTURES: Texture[] = ['stripes', 'dots', 'grid', 'rings', 'waves', 'spotlight', 'tiles'];

/** The template's style; an unknown template (or an AI model's output) gets one by its name's hash. */
export function adStyle(job: Pick<GenerationJob, 'templateSlug' | 'modelSlug'>): AdStyle {
  const slug = job.templateSlug ?? job.modelSlug ?? '';
  const known = BY_SLUG[slug];
  if (known) return known;
  return {
    texture: TEXTURES[hash32(slug) % TEXTURES.length],
    upper: false,
    family: 'Montserrat',
    weight: 'black',
    body: 'Inter',
    rule: true,
  };
}

/**
 * The texture as SVG shapes in `ink` (low opacity; the composer draws them in the colour away from
 * its texts' colour, so the texture only adds contrast),
 * away from the top-left corner (which shows the primary colour). `seed` varies the details.
 */
export function textureSvg(t: Texture, W: number, H: number, ink: string, seed: string): string {
  const u = Math.min(W, H);
  const rand = rng(`texture:${seed}`);
  const r = Math.round;
  const o = `fill="${ink}" fill-opacity="0.1"`;
  const line = `stroke="${ink}" stroke-opacity="0.12" fill="none"`;
  const corner = r(u * 0.06);
  const out: string[] = [];
  if (t === 'stripes') {
    const step = r(u * 0.09);
    for (let x = corner * 2; x < W + H; x += step)
      out.push(`<polygon points="${x},0 ${x + r(step / 2)},0 ${x + r(step / 2) - H},${H} ${x - H},${H}" ${o}/>`);
  } else if (t === 'dots') {
    const step = r(u * 0.07);
    for (let y = corner * 2; y < H; y += step)
      for (let x = corner * 2 + ((y / step) % 2) * r(step / 2); x < W; x += step)
        out.push(`<circle cx="${x}" cy="${y}" r="${r(u * (0.006 + rand() * 0.01))}" ${o}/>`);
  } else if (t === 'grid') {
    const step = r(u * 0.08);
    for (let x = corner * 2; x < W; x += step)
      out.push(`<line x1="${x}" y1="0" x2="${x}" y2="${H}" ${line} stroke-width="${Math.max(1, r(u * 0.003))}"/>`);
    for (let y = corner * 2; y < H; y += step)
      out.push(`<line x1="0" y1="${y}" x2="${W}" y2="${y}" ${line} stroke-width="${Math.max(1, r(u * 0.003))}"/>`);
  } else if (t === 'rings') {
    for (let i = 1; i < 9; i++) out.push(`<circle cx="${W}" cy="${H}" r="${r(u * 0.16 * i)}" ${line} stroke-width="${r(u * 0.03)}"/>`);
  } else if (t === 'waves') {
    for (let i = 0; i < 7; i++) {
      const y = r(H * (0.25 + i * 0.11));
      out.push(
        `<path d="M0 ${y} Q ${r(W * 0.25)} ${y - r(u * 0.06)} ${r(W * 0.5)} ${y} T ${W} ${y}" ${line} stroke-width="${r(u * 0.012)}"/>`,
      );
    }
  } else if (t === 'split') {
    out.push(`<polygon points="${W},${r(H * 0.12)} ${W},${H} ${r(W * 0.35)},${H}" ${o}/>`);
  } else if (t === 'spotlight') {
    out.push(
      `<circle cx="${r(W * 0.5)}" cy="${r(H * 0.55)}" r="${r(u * 0.48)}" ${o}/><circle cx="${r(W * 0.5)}" cy="${r(H * 0.55)}" r="${r(u * 0.32)}" ${o}/>`,
    );
  } else if (t === 'frame') {
    const d = r(u * 0.03);
    out.push(`<rect x="${d}" y="${d}" width="${W - 2 * d}" height="${H - 2 * d}" ${line} stroke-width="${Math.max(1, r(u * 0.004))}"/>`);
  } else if (t === 'tiles') {
    const s = r(u * 0.12);
    for (let y = r(H * 0.5); y < H; y += s + r(s / 4))
      for (let x = r(W * 0.5); x < W; x += s + r(s / 4))
        out.push(`<rect x="${x}" y="${y}" width="${s}" height="${s}" rx="${r(s * 0.25)}" ${o}/>`);
  } else if (t === 'vignette') {
    out.push(`<rect x="0" y="${r(H * 0.55)}" width="${W}" height="${H - r(H * 0.55)}" ${o}/>`);
  }
  return out.join('');
}
