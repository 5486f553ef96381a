// The pure parts of slideshows: the default title, what a brand kit's free-form data yields, the
// palette rule (brand kit, then reference, then prompt), a reference image's palette, and slides
// at full size with their inputs where the geometry says.
import sharp from 'sharp';
import t from 'tap';
import {
  imagePalette,
  numbered,
  numberedZone,
  overlayTextColours,
  renderSlide,
  slideGeometry,
  slidePalette,
} from '../../src/engines/local/slide.ts';
import { hexToRgb } from '../../src/engines/local/layout.ts';
import { contrastRatio, relativeLuminance } from '../../src/media/quality/pixels.ts';
import { slideTextLayouts } from '../../src/pipelines/slideshow/stages.ts';
import type { SlideshowSpec } from '../../src/pipelines/slideshow/request.ts';
import { phashDistance } from '../helpers/phash.ts';
import { brandKitLook, titleFromPrompt } from '../../src/pipelines/slideshow/request.ts';

t.test('the title defaults to the prompt’s first sentence, cut near 60 characters', async (t) => {
  t.equal(titleFromPrompt('Five habits of calm mornings. Start with water.'), 'Five habits of calm mornings');
  t.equal(titleFromPrompt('  Why   sleep matters!  '), 'Why sleep matters');
  const long = titleFromPrompt('A very long description of a product launch that keeps going on and on without any full stop at all');
  t.ok(long.length <= 61 && long.endsWith('…'), long);
  t.equal(titleFromPrompt('...'), 'Slideshow');
});

t.test('a brand kit yields its colours, logo URL and fonts; junk is ignored', async (t) => {
  t.same(
    brandKitLook({
      colors: ['#112233', 'red', '#aabbcc'],
      accent_color: '#FFCC00',
      logo_url: 'https://cdn.example.com/l.png',
      fonts: ['Inter', { family: 'Merriweather Serif' }, '<script>'],
    }),
    {
      colors: ['#112233', '#AABBCC', '#FFCC00'],
      logoUrl: 'https://cdn.example.com/l.png',
      fonts: ['Inter', 'Merriweather Serif'],
    },
  );
  t.same(brandKitLook({ logo_url: 'file:///etc/passwd' }), { colors: [], logoUrl: undefined, fonts: [] });
  t.same(brandKitLook(null), { colors: [], logoUrl: undefined, fonts: [] });
});

t.test('palette: the kit first, then the reference, then the prompt', async (t) => {
  const kit = slidePalette({ brandColors: ['#123456', '#FFCC00'], referenceColors: ['#aa0000', '#00aa00'], prompt: 'x' });
  t.same(kit, { background: '#123456', accent: '#ffcc00', secondary: '#aa0000' }, 'kit background and accent; the reference decorates');
  const ref = slidePalette({ referenceColors: ['#1e40c8', '#ffd000', '#00aa00'], prompt: 'x' });
  t.same(ref, { background: '#1e40c8', accent: '#ffd000', secondary: '#00aa00' });
  const a = slidePalette({ prompt: 'Sleep better' });
  t.same(slidePalette({ prompt: 'Sleep better' }), a, 'deterministic');
  t.not(slidePalette({ prompt: 'Run faster' }).background, a.background, 'another prompt, another palette');
  const flat = slidePalette({ brandColors: ['#123456', '#123457'], prompt: 'x' });
  t.not(flat.accent, '#123457', 'an accent lost in the background is replaced');
});

t.test('a reference image’s palette: its main colours, most frequent first', async (t) => {
  const img = await sharp({ create: { width: 100, height: 100, channels: 3, background: '#1e40c8' } })
    .composite([
      {
        input: await sharp({ create: { width: 30, height: 100, channels: 3, background: '#ffd000' } })
          .png()
          .toBuffer(),
        left: 0,
        top: 0,
      },
    ])
    .png()
    .toBuffer();
  const colours = await imagePalette(img);
  t.equal(colours[0], '#1e40c8', 'the dominant colour first');
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(colours[1].slice(i, i + 2), 16));
  t.ok(Math.abs(r - 0xff) <= 4 && Math.abs(g - 0xd0) <= 4 && b <= 4, `then the stripe's (${colours[1]})`);
  t.ok(colours.length <= 3);
});

t.test('slides are full size with the product, avatar and logo where the geometry says', async (t) => {
  const product = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#00ff00' } })
    .png()
    .toBuffer();
  const avatar = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#ff00ff' } })
    .png()
    .toBuffer();
  const logo = await sharp({ create: { width: 200, height: 80, channels: 3, background: '#ffff00' } })
    .png()
    .toBuffer();
  const palette = { background: '#123456', secondary: '#333333', accent: '#ffcc00' };
  for (const [w, h] of [
    [1080, 1920],
    [1080, 1080],
    [1080, 1350],
  ]) {
    const png = await renderSlide({ width: w, height: h, index: 1, count: 4, layout: 'card', palette, product, avatar, logo, seed: 's' });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    t.same([info.width, info.height, info.channels], [w, h, 3]);
    const at = (x: number, y: number) => {
      const i = (Math.round(y) * w + Math.round(x)) * 3;
      return `#${[data[i], data[i + 1], data[i + 2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
    };
    const g = slideGeometry(w, h);
    t.equal(at(2, 2), '#123456', `${w}×${h}: background corner`);
    t.equal(at(g.productSlot.x + g.productSlot.w / 2, g.productSlot.y + g.productSlot.h / 3), '#00ff00', 'product');
    t.equal(at(g.avatar.cx, g.avatar.cy), '#ff00ff', 'avatar');
    t.equal(at(g.logo.x + g.logo.w - 5, g.logo.y + 5), '#ffff00', 'logo');
    // The text zone holds no picture: only background and decoration colours.
    const z = g.textZone;
    t.notOk(['#00ff00', '#ff00ff', '#ffff00'].includes(at(z.x + z.w / 2, z.y + z.h / 2)), 'nothing drawn where the text goes');
  }
  const bleed = await renderSlide({ width: 1080, height: 1080, index: 0, count: 3, layout: 'full-bleed', palette, product, seed: 's' });
  const { data } = await sharp(bleed).raw().toBuffer({ resolveWithObject: true });
  const i = (1000 * 1080 + 540) * 3;
  t.same([data[i], data[i + 1], data[i + 2]], [0, 255, 0], 'full-bleed: the product covers the slide');
  await t.rejects(
    renderSlide({
      width: 1080,
      height: 1080,
      index: 0,
      count: 3,
      layout: 'card',
      palette,
      product: Buffer.from('not an image'),
      seed: 's',
    }),
    { name: 'SlideInputError', input: 'product' },
  );
});

t.test(
  'consecutive slides look different (pHash ≥ 10), with or without a product; the text zone is plain background below the 9:16 UI zone',
  async (t) => {
    const palette = { background: '#123456', secondary: '#2a6f97', accent: '#ffcc00' };
    const product = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#e94f37' } })
      .png()
      .toBuffer();
    for (const p of [undefined, product]) {
      const slides = [];
      for (let i = 0; i < 6; i++)
        slides.push(await renderSlide({ width: 270, height: 480, index: i, count: 6, layout: 'card', palette, product: p, seed: 'x' }));
      for (let i = 1; i < slides.length; i++) {
        const d = await phashDistance(slides[i - 1], slides[i]);
        t.ok(d >= 10, `${p ? 'one product' : 'no product'}: slides ${i} and ${i + 1} are ${d} bits apart`);
      }
      const g = slideGeometry(270, 480);
      t.ok(g.textZone.y >= 480 * 0.14, `the text zone starts below the top UI zone (${g.textZone.y})`);
      t.ok(g.heroZone.y >= 480 * 0.14 && g.heroZone.y + g.heroZone.h <= 480 * 0.8, 'the hero zone is out of both UI zones');
      // With a picture, plain background above it; without, the words may fall anywhere in the
      // hero zone, and every pixel there keeps 4.5:1 with the overlay text colour.
      const ink = hexToRgb(overlayTextColours(palette.background).color);
      for (const [n, png] of slides.entries()) {
        // Body slides carry their number above the words.
        const zone = p ? g.textZone : numbered(n, slides.length) ? numberedZone(g) : g.heroZone;
        const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
        let other = 0;
        let worst = 21;
        for (let y = zone.y; y < zone.y + zone.h; y += 4)
          for (let x = zone.x; x < zone.x + zone.w; x += 4) {
            const i = (y * 270 + x) * 3;
            if (Math.abs(data[i] - 0x12) + Math.abs(data[i + 1] - 0x34) + Math.abs(data[i + 2] - 0x56) > 12) other++;
            worst = Math.min(worst, contrastRatio(relativeLuminance(data[i], data[i + 1], data[i + 2]), relativeLuminance(...ink)));
          }
        if (p) t.equal(other, 0, 'nothing but the background where the text goes');
        else t.ok(worst >= 4.5, `the overlay colour reads everywhere in the hero zone (worst ${worst.toFixed(2)}:1)`);
      }
    }
  },
);

/** Share of neighbouring pixel pairs (every 2nd row and column) whose colours differ by more than 60 (sum over the channels): hard edges. */
async function hardEdges(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h, channels: c } = info;
  let edges = 0;
  let pairs = 0;
  const diff = (a: number, b: number) =>
    Math.abs(data[a] - data[b]) + Math.abs(data[a + 1] - data[b + 1]) + Math.abs(data[a + 2] - data[b + 2]);
  for (let y = 0; y < h - 1; y += 2)
    for (let x = 0; x < w - 1; x += 2) {
      const i = (y * w + x) * c;
      pairs += 2;
      if (diff(i, i + c) > 60) edges++;
      if (diff(i, i + w * c) > 60) edges++;
    }
  return edges / pairs;
}

t.test('slides without pictures are quiet designs, not pattern blocks: few hard edges, still distinct', async (t) => {
  for (const prompt of ['Five habits for calmer mornings', 'Cinco hábitos para mañanas tranquilas', 'Black Friday sneaker sale']) {
    const palette = slidePalette({ prompt });
    for (const [w, h] of [
      [270, 480],
      [270, 270],
      [270, 338],
    ]) {
      const slides = [];
      for (let i = 0; i < 6; i++)
        slides.push(await renderSlide({ width: w, height: h, index: i, count: 6, layout: 'card', palette, seed: prompt }));
      const edges = await Promise.all(slides.map(hardEdges));
      t.ok(Math.max(...edges) <= 0.01, `${prompt} ${w}×${h}: hard edges ${edges.map((e) => (e * 100).toFixed(2)).join(', ')} % ≤ 1 %`);
      for (let i = 1; i < slides.length; i++) {
        const d = await phashDistance(slides[i - 1], slides[i]);
        t.ok(d >= 10, `${prompt} ${w}×${h}: slides ${i} and ${i + 1} are ${d} bits apart`);
      }
    }
  }
});

t.test('overlay words are big type centred in the hero zone of a slide without pictures: a headline over its body', async (t) => {
  const palette = slidePalette({ prompt: 'Five habits for calmer mornings' });
  const parts = [
    { heading: 'Calmer mornings', body: 'Swipe to see why.' },
    { heading: 'Why it matters', body: 'Once you try calmer mornings, it’s hard to go back.' },
    { heading: 'Ready to try calmer mornings?', body: 'Follow for more, and save this post for later.' },
  ];
  for (const [aspect, width, height] of [
    ['9:16', 1080, 1920],
    ['4:5', 1080, 1350],
    ['1:1', 1080, 1080],
  ] as const) {
    const spec = { width, height, aspectRatio: aspect, productImageUrls: [], reference: null, brandKit: null } as unknown as SlideshowSpec;
    const layouts = await slideTextLayouts(parts, spec, palette, false);
    const g = slideGeometry(width, height);
    layouts.forEach(([head, body], i) => {
      const where = `${aspect} slide ${i + 1}`;
      t.ok(head.style.font_size! >= width * 0.09, `${where}: a ${head.style.font_size} px headline (≥ 9 % of the width)`);
      t.ok(body.style.font_size! >= width * 0.04, `${where}: a ${body.style.font_size} px body (≥ 4 % of the width)`);
      t.ok(head.style.font_size! >= 1.8 * body.style.font_size!, `${where}: the headline dominates`);
      t.same([head.style.font_family, body.style.font_family], ['Montserrat', 'Inter'], 'bundled display and text faces');
      t.same([head.text.replace(/\s+/g, ' '), body.text.replace(/\s+/g, ' ')], [parts[i].heading, parts[i].body], 'the words, in lines');
      const top = head.transform.top * height;
      const bottom = (body.transform.top + body.transform.height) * height;
      t.ok(body.transform.top * height >= (head.transform.top + head.transform.height) * height, `${where}: the body below the headline`);
      const zone = numbered(i, parts.length) ? numberedZone(g) : g.heroZone;
      t.ok(top >= zone.y - 1 && bottom <= zone.y + zone.h + 1, `${where}: inside its band`);
      t.ok(Math.abs((top + bottom) / 2 - (zone.y + zone.h / 2)) <= 2, `${where}: centred in it`);
    });
    t.ok(layouts[0][0].style.font_size! > layouts[1][0].style.font_size!, `${aspect}: the hook's headline is set larger`);
  }
  const none = await slideTextLayouts([null], { width: 1080, height: 1080, brandKit: null } as unknown as SlideshowSpec, palette, false);
  t.same(none, [[]], 'no overlays, no text items');
});
