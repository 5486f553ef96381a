// Every generation input a customer pays for shapes the local renderer's output, in the way the
// input says (issue 12, part 2). The same request is rendered end to end (POST /generations →
// worker → stored file) with and without each input, and the outputs are measured: the brand
// colour in the palette, the logo's pixels in its box, the kit's font in the text (and nowhere
// else), the product image in the product slot, the avatar's portrait in its region (a catalog
// avatar on a static ad, an uploaded portrait on a UGC video), a preset's arrangement and tone,
// and a custom reference's colours.
import http from 'node:http';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { media, referenceInspirations } from '../../src/db/schema/index.ts';
import { extractFrame } from '../../src/media/ffmpeg.ts';
import { composeAd } from '../../src/engines/local/ad-image.ts';
import { computeLayout, type AdLayout, type Rect } from '../../src/engines/local/layout.ts';
import { faceBox } from '../../src/media/portrait.ts';
import { DEFAULT_PIXEL_LIMITS } from '../../src/media/limits.ts';
import { PREVIEWS_DIR_URL } from '../../src/services/catalog/catalog-data.ts';
import { startTestApp } from '../helpers/app.ts';
import { readFile } from 'node:fs/promises';

const W = 576;
const H = 1024;
const BRAND = '#1E40AF';
const PROMPT = 'Fresh lemonade for hot days';
const VIDEO_TEMPLATE = 'product-demo-showcase';

// Inputs made here: a product image (vertical stripes), a two-colour logo, a portrait.
const product = await sharp(
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240"><rect width="240" height="240" fill="#ff0000"/>` +
      `<rect x="80" width="40" height="240" fill="#00c800"/><rect x="160" width="40" height="240" fill="#0000ff"/></svg>`,
  ),
)
  .png()
  .toBuffer();
const logo = await sharp(
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="80"><rect width="80" height="80" fill="#ff00ff"/><rect x="80" width="80" height="80" fill="#00ffff"/></svg>`,
  ),
)
  .png()
  .toBuffer();
const portrait = await sharp(
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400"><rect width="400" height="400" fill="#20a0a0"/>` +
      `<ellipse cx="200" cy="190" rx="110" ry="140" fill="#f0c090"/><circle cx="160" cy="160" r="18" fill="#202020"/>` +
      `<circle cx="240" cy="160" r="18" fill="#202020"/><rect x="150" y="250" width="100" height="20" fill="#a02020"/></svg>`,
  ),
)
  .png()
  .toBuffer();

const fixtures = http.createServer((req, res) => {
  if (req.url === '/product.png') {
    res.writeHead(200, { 'content-type': 'image/png' });
    return res.end(product);
  }
  res.writeHead(404).end('missing');
});
await new Promise<void>((r) => fixtures.listen(0, '127.0.0.1', r));
t.teardown(() => fixtures.close());
const productUrl = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}/product.png`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 100_000, scopes: ['generations:read', 'generations:write'] });
const api = (method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { key: ws.key, body });

const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;
const kitSans = await api('POST', '/brand-kits', { name: 'Acme', colors: { primary: BRAND }, fonts: ['DejaVu Sans'], logo: dataUrl(logo) });
const kitSerif = await api('POST', '/brand-kits', {
  name: 'Acme',
  colors: { primary: BRAND },
  fonts: ['DejaVu Serif'],
  logo: dataUrl(logo),
});
const kitNoLogo = await api('POST', '/brand-kits', { name: 'Acme', colors: { primary: BRAND }, fonts: ['DejaVu Sans'] });
const avatar = await api('POST', '/avatars', { name: 'Pat', image: dataUrl(portrait) });
for (const res of [kitSans, kitSerif, kitNoLogo, avatar]) if (res.status !== 200) throw new Error(res.text);

// A saved reference: one stored image, mostly orange.
const REF_COLOUR = '#E87511';
const refImage = await sharp({ create: { width: 200, height: 200, channels: 3, background: REF_COLOUR } })
  .png()
  .toBuffer();
const refKey = `references/${ws.orgId}/orange.png`;
await app.service.ctx.storage.put(refKey, refImage, 'image/png');
const [refMedia] = await app.service.ctx.db
  .insert(media)
  .values({ orgId: ws.orgId, kind: 'image', source: 'upload', contentType: 'image/png', sizeBytes: refImage.length, storageKey: refKey })
  .returning();
const [reference] = await app.service.ctx.db
  .insert(referenceInspirations)
  .values({
    orgId: ws.orgId,
    templateSlug: 'product-spotlight',
    templateCategory: 'static-ads',
    mediaKind: 'image',
    status: 'ready',
    mediaIds: [refMedia.id],
  })
  .returning();
// An analysed reference (as the analysis job stores it): an orange palette, its subject in the upper part.
const SUBJECT = { x: 0.2, y: 0.05, width: 0.6, height: 0.3 };
const ANALYSED_COLOUR = '#2E9E5B';
const [analysed] = await app.service.ctx.db
  .insert(referenceInspirations)
  .values({
    orgId: ws.orgId,
    templateSlug: 'product-spotlight',
    templateCategory: 'static-ads',
    mediaKind: 'image',
    status: 'ready',
    mediaIds: [refMedia.id],
    analysis: [
      {
        kind: 'image',
        width: 200,
        height: 200,
        orientation: 'square',
        palette: [
          { hex: ANALYSED_COLOUR.toLowerCase(), proportion: 0.8 },
          { hex: '#ffffff', proportion: 0.2 },
        ],
        subject: SUBJECT,
        text_regions: [],
        text: '',
        phash: '0000000000000000',
      },
    ],
  })
  .returning();

const base = { type: 'static_ad', template_slug: 'product-spotlight', prompt: PROMPT, aspect_ratio: '9:16', resolution: '1K' };
const ugcBase = {
  type: 'ugc_ad',
  template_slug: 'unboxing-ugc',
  prompt: 'My honest first impressions',
  quality_tier: 'low',
  duration: 4,
  resolution: '480p',
  aspect_ratio: '9:16',
  generate_audio: false,
};

/** Queues every request first (the worker renders them while the next are sent), then waits for each. */
async function renderAll(bodies: Record<string, Record<string, unknown>>): Promise<Record<string, Buffer>> {
  const ids: Record<string, string> = {};
  for (const [name, body] of Object.entries(bodies)) {
    const res = await api('POST', '/generations', body);
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${res.text}`);
    ids[name] = res.body.generations[0].id;
  }
  const out: Record<string, Buffer> = {};
  for (const [name, id] of Object.entries(ids)) {
    const deadline = Date.now() + 120_000;
    let g = (await api('GET', `/generations/${id}`)).body;
    while (g.status === 'generating') {
      if (Date.now() > deadline) throw new Error(`${name} did not finish`);
      await new Promise((r) => setTimeout(r, 100));
      g = (await api('GET', `/generations/${id}`)).body;
    }
    if (g.status !== 'completed') throw new Error(`${name} ${g.status}: ${JSON.stringify(g.error)}`);
    const bytes = Buffer.from(await (await fetch(g.url)).arrayBuffer());
    out[name] = g.output.content_type === 'video/mp4' ? await firstFrame(bytes, name) : bytes;
  }
  return out;
}

async function firstFrame(mp4: Buffer, name: string): Promise<Buffer> {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gen-inputs-'));
  try {
    const file = path.join(dir, `${name}.mp4`);
    await writeFile(file, mp4);
    return await extractFrame({ path: file, type: 'video/mp4' }, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- measuring

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
}
const pixels = async (img: Buffer): Promise<Pixels> => {
  const { data, info } = await sharp(img).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
};
const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/** Share of the pixels in `r` (whole image by default) within `tol` of `hex` on every channel. */
function share(p: Pixels, hex: string, tol = 24, r: Rect = { x: 0, y: 0, w: p.width, h: p.height }): number {
  const [R, G, B] = rgb(hex);
  let n = 0;
  for (let y = r.y; y < r.y + r.h; y++) {
    for (let x = r.x; x < r.x + r.w; x++) {
      const i = (y * p.width + x) * 3;
      if (Math.abs(p.data[i] - R) <= tol && Math.abs(p.data[i + 1] - G) <= tol && Math.abs(p.data[i + 2] - B) <= tol) n++;
    }
  }
  return n / (r.w * r.h);
}

/** Mean absolute difference per channel (0–255) between region `r` of `p` and `q` (q is r.w × r.h, or the same size as p). */
function diff(p: Pixels, q: Pixels, r: Rect): number {
  let sum = 0;
  const same = q.width === p.width && q.height === p.height;
  for (let y = 0; y < r.h; y++) {
    for (let x = 0; x < r.w; x++) {
      const i = ((r.y + y) * p.width + r.x + x) * 3;
      const j = same ? i : (y * q.width + x) * 3;
      sum += Math.abs(p.data[i] - q.data[j]) + Math.abs(p.data[i + 1] - q.data[j + 1]) + Math.abs(p.data[i + 2] - q.data[j + 2]);
    }
  }
  return sum / (r.w * r.h * 3);
}

/** Bounding box of the pixels near `hex`. */
function bbox(p: Pixels, hex: string, tol = 30): Rect {
  const [R, G, B] = rgb(hex);
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < p.height; y++) {
    for (let x = 0; x < p.width; x++) {
      const i = (y * p.width + x) * 3;
      if (Math.abs(p.data[i] - R) <= tol && Math.abs(p.data[i + 1] - G) <= tol && Math.abs(p.data[i + 2] - B) <= tol) {
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x);
        y1 = Math.max(y1, y);
      }
    }
  }
  return { x: x0, y: y0, w: x1 - x0 + 1, h: y1 - y0 + 1 };
}

function union(rs: Rect[]): Rect {
  const ok = rs.filter((r) => r.w > 0);
  const x0 = Math.min(...ok.map((r) => r.x));
  const y0 = Math.min(...ok.map((r) => r.y));
  return { x: x0, y: y0, w: Math.max(...ok.map((r) => r.x + r.w)) - x0, h: Math.max(...ok.map((r) => r.y + r.h)) - y0 };
}
const shrink = (r: Rect, f: number): Rect => ({
  x: Math.round(r.x + (r.w * f) / 2),
  y: Math.round(r.y + (r.h * f) / 2),
  w: Math.round(r.w * (1 - f)),
  h: Math.round(r.h * (1 - f)),
});
// The layout the render had: its copy (adCopy of the prompt: "Fresh lemonade" over "For hot days")
// decides whether a subheadline takes room above the product.
const layoutOf = (over: Partial<Parameters<typeof computeLayout>[0]>): AdLayout =>
  computeLayout({
    type: 'static_ad',
    templateSlug: 'product-spotlight',
    prompt: PROMPT,
    width: W,
    height: H,
    referenceImages: [],
    brandName: undefined,
    avatarName: undefined,
    ...over,
  });
const near = (t: Test, got: Rect, want: Rect, tol: number, what: string) =>
  t.ok(
    Math.abs(got.x - want.x) <= tol &&
      Math.abs(got.y - want.y) <= tol &&
      Math.abs(got.w - want.w) <= tol &&
      Math.abs(got.h - want.h) <= tol,
    `${what}: got ${JSON.stringify(got)} want ${JSON.stringify(want)} ±${tol}`,
  );

// ---------------------------------------------------------------- the renders

const out = await renderAll({
  plain: base,
  kit: { ...base, brand_kit_id: kitSans.body.id },
  kitSerif: { ...base, brand_kit_id: kitSerif.body.id },
  kitNoLogo: { ...base, brand_kit_id: kitNoLogo.body.id },
  product: { ...base, reference_image_urls: [productUrl] },
  presetStandard: { ...base, preset_id: 'studio-white', reference_image_urls: [productUrl] },
  presetFlipped: { ...base, preset_id: 'marble-luxe', reference_image_urls: [productUrl] },
  presetDark: { ...base, template_slug: 'bold-sale-banner', preset_id: 'black-friday-noir' },
  catalogAvatar: { ...base, avatar_id: 'maya-lifestyle' },
  reference: { ...base, custom_reference_inspiration_id: reference.id },
  analysed: { ...base, custom_reference_inspiration_id: analysed.id, reference_image_urls: [productUrl] },
  ugc: ugcBase,
  ugcAvatar: { ...ugcBase, avatar_id: avatar.body.id },
});
const px: Record<string, Pixels> = {};
for (const [k, v] of Object.entries(out)) px[k] = await pixels(v);

t.test('the brand kit: its colour fills the palette, its logo sits in the logo box', async (t) => {
  const withKit = share(px.kit, BRAND);
  const without = share(px.plain, BRAND);
  t.ok(withKit > 0.2, `brand colour covers ${(withKit * 100).toFixed(1)}% of the ad with the kit`);
  t.ok(without < 0.01, `and ${(without * 100).toFixed(1)}% without`);

  const layout = layoutOf({ brandName: 'Acme', logo });
  t.ok(layout.logo, 'a logo box');
  const box = layout.logo!;
  t.ok(box.x > W / 2 && box.y < H / 4, 'in the top-right corner');
  // The logo as the renderer places it: fitted inside the box, right-aligned, centred vertically.
  const fitted = await sharp(logo).resize(box.w, box.h, { fit: 'inside' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const region = {
    x: box.x + box.w - fitted.info.width,
    y: box.y + Math.round((box.h - fitted.info.height) / 2),
    w: fitted.info.width,
    h: fitted.info.height,
  };
  const logoPx = { data: fitted.data, width: fitted.info.width, height: fitted.info.height };
  t.ok(diff(px.kit, logoPx, region) < 8, `the logo's pixels are in its box (mean difference ${diff(px.kit, logoPx, region).toFixed(1)})`);
  t.ok(diff(px.kitNoLogo, logoPx, region) > 60, `a kit without a logo has none there (${diff(px.kitNoLogo, logoPx, region).toFixed(1)})`);
  t.ok(share(px.kit, '#FF00FF', 20, region) > 0.4 && share(px.kit, '#00FFFF', 20, region) > 0.4, 'both logo colours');
  t.equal(share(px.kitNoLogo, '#FF00FF', 20), 0, 'no magenta anywhere without the logo');
});

t.test("the kit's font changes the text and nothing else", async (t) => {
  const layout = layoutOf({ brandName: 'Acme', logo });
  const head = layout.headline;
  const headDiff = diff(px.kit, px.kitSerif, head);
  t.ok(headDiff > 3, `the headline differs between DejaVu Sans and DejaVu Serif (${headDiff.toFixed(2)})`);
  // Without a product image there is no card (issue 24); the 9:16 UI zones hold no text: they are the same.
  for (const zone of [
    { x: 0, y: 0, w: W, h: Math.round(H * 0.13) },
    { x: 0, y: Math.round(H * 0.81), w: W, h: H - Math.round(H * 0.81) },
  ])
    t.ok(diff(px.kit, px.kitSerif, zone) < 0.5, `the background is the same (${JSON.stringify(zone)})`);
  // The headline's ink: the same text set in a serif face has a different outline.
  const ink = (p: Pixels) => 1 - share(p, BRAND, 40, head);
  t.not(
    ink(px.kit).toFixed(4),
    ink(px.kitSerif).toFixed(4),
    `headline ink differs (${ink(px.kit).toFixed(4)} vs ${ink(px.kitSerif).toFixed(4)})`,
  );
});

t.test('the product image fills the product slot', async (t) => {
  const layout = layoutOf({ referenceImages: [product] });
  const slot = layout.slots[0];
  const expected = await sharp(product)
    .resize(slot.w, slot.h, { fit: 'cover', position: sharp.strategy.attention })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const exp = { data: expected.data, width: expected.info.width, height: expected.info.height };
  t.ok(diff(px.product, exp, slot) < 6, `the slot shows the product (${diff(px.product, exp, slot).toFixed(1)})`);
  t.ok(diff(px.plain, exp, slot) > 60, `without it a drawn stand-in does not (${diff(px.plain, exp, slot).toFixed(1)})`);
  t.ok(share(px.product, '#00C800', 20) > 0.02, 'the green stripes are in the ad');
});

t.test('a preset sets the arrangement and the tone', async (t) => {
  // Where the product's stripes are (red, green and blue, whatever the crop kept).
  const stripes = (p: Pixels) => union(['#FF0000', '#00C800', '#0000FF'].map((c) => bbox(p, c)));
  const standard = stripes(px.presetStandard);
  const flipped = stripes(px.presetFlipped);
  const want = (presetId: string, presetIndex: number) => {
    const l = layoutOf({ referenceImages: [product], presetId, presetIndex });
    return { slot: l.slots[0], headline: l.headline, arrangement: l.arrangement };
  };
  const a = want('studio-white', 0);
  const b = want('marble-luxe', 1);
  t.equal(a.arrangement, 'standard');
  t.equal(b.arrangement, 'flipped');
  near(t, standard, a.slot, 3, 'studio-white: the product where the standard layout puts it');
  near(t, flipped, b.slot, 3, 'marble-luxe: the product where the flipped layout puts it');
  t.ok(
    flipped.y + flipped.h < b.headline.y + 2 && standard.y > a.headline.y + a.headline.h - 2,
    'product above the headline in one, below it in the other',
  );
  t.ok(standard.y - flipped.y > 100, `the product moved up by ${standard.y - flipped.y}px`);

  // Tone: "studio white" is light, "black friday noir" dark (no brand kit to override them).
  const corner = { x: 0, y: 0, w: 20, h: 20 };
  const lum = (p: Pixels) => {
    let s = 0;
    for (let y = 0; y < corner.h; y++)
      for (let x = 0; x < corner.w; x++)
        s += p.data[(y * p.width + x) * 3] + p.data[(y * p.width + x) * 3 + 1] + p.data[(y * p.width + x) * 3 + 2];
    return s / (corner.w * corner.h * 3);
  };
  t.ok(lum(px.presetStandard) > 200, `studio-white background is light (${lum(px.presetStandard).toFixed(0)})`);
  t.ok(lum(px.presetDark) < 50, `black-friday-noir background is dark (${lum(px.presetDark).toFixed(0)})`);
});

t.test('a catalog avatar is the presenter disc of a static ad', async (t) => {
  const layout = layoutOf({ avatarImage: portrait });
  const disc = layout.avatar!;
  t.equal(layout.avatarShape, 'disc');
  const svg = await readFile(new URL('avatars/maya-lifestyle.svg', PREVIEWS_DIR_URL));
  // The presenter is the whole card (an illustrated person in a room, no name band).
  const face = await sharp(svg).resize(disc.w, disc.h, { fit: 'cover', position: 'centre' }).removeAlpha().raw().toBuffer();
  // The square inscribed in the disc (inside the ring).
  const inner = shrink(disc, 0.36);
  const crop = await sharp(face, { raw: { width: disc.w, height: disc.h, channels: 3 } })
    .extract({ left: inner.x - disc.x, top: inner.y - disc.y, width: inner.w, height: inner.h })
    .raw()
    .toBuffer();
  const exp = { data: crop, width: inner.w, height: inner.h };
  t.ok(diff(px.catalogAvatar, exp, inner) < 8, `the avatar's face is in the disc (${diff(px.catalogAvatar, exp, inner).toFixed(1)})`);
  t.ok(diff(px.plain, exp, inner) > 40, `not without the avatar (${diff(px.plain, exp, inner).toFixed(1)})`);
});

t.test('a video ad composes the avatar as a presenter disc too', async (t) => {
  // The still every video ad animates (the renderer's composer; the UGC test below goes through a whole video).
  const job = {
    generationId: 'video-ad-avatar',
    type: 'video_ad' as const,
    output: 'video' as const,
    prompt: PROMPT,
    title: 'Video ad',
    templateSlug: VIDEO_TEMPLATE,
    aspectRatio: '9:16',
    width: 480,
    height: 854,
    referenceImages: [],
    generateAudio: false,
  };
  const [withAvatar, without] = await Promise.all([composeAd({ ...job, avatarImage: portrait }), composeAd(job)]);
  const disc = withAvatar.layout.avatar!;
  t.equal(withAvatar.layout.avatarShape, 'disc');
  const inner = shrink(disc, 0.36);
  const face = await sharp(portrait)
    .resize(disc.w, disc.h, { fit: 'cover', position: 'centre' })
    .extract({ left: inner.x - disc.x, top: inner.y - disc.y, width: inner.w, height: inner.h })
    .removeAlpha()
    .raw()
    .toBuffer();
  const exp = { data: face, width: inner.w, height: inner.h };
  const asPixels = async (a: typeof withAvatar) =>
    pixels(
      await sharp(a.pixels, { raw: { width: 480, height: 854, channels: 4 } })
        .png()
        .toBuffer(),
    );
  t.ok(diff(await asPixels(withAvatar), exp, inner) < 8, 'the portrait is in the disc');
  t.ok(diff(await asPixels(without), exp, inner) > 40, 'and not without the avatar');
});

t.test("a custom avatar's portrait is the picture of a UGC video", async (t) => {
  const frame = px.ugcAvatar;
  t.same([frame.width, frame.height], [480, 854]);
  // The portrait is shown whole (issue 24: no side cut off), placed by its face box.
  const face = await faceBox(portrait, DEFAULT_PIXEL_LIMITS);
  t.ok(face, 'a face is found in the portrait');
  const layout = computeLayout({
    type: 'ugc_ad',
    templateSlug: 'unboxing-ugc',
    width: 480,
    height: 854,
    referenceImages: [],
    brandName: undefined,
    avatarName: 'Pat',
    avatarImage: portrait,
    portraitShape: { aspect: 1, face },
  });
  const pic = layout.portrait!;
  t.equal(layout.avatarShape, 'fill');
  t.same([pic.w, pic.h], [480, 480], 'the square portrait whole across the frame');
  // The stored portrait is the face-centred square crop of the upload (the whole square here).
  const stored = await sharp(portrait).resize(pic.w, pic.h, { fit: 'cover', position: 'centre' }).removeAlpha().raw().toBuffer();
  // Compare the band between the headline and the captions (no overlays there at t = 0: the mouth is closed before the first caption).
  const y0 = Math.max(layout.headline.y + layout.headline.h, pic.y) + 4;
  const band = { x: pic.x, y: y0, w: pic.w, h: Math.min(pic.y + pic.h, layout.caption.y - 4) - y0 };
  const crop = await sharp(stored, { raw: { width: pic.w, height: pic.h, channels: 3 } })
    .extract({ left: 0, top: band.y - pic.y, width: band.w, height: band.h })
    .raw()
    .toBuffer();
  const exp = { data: crop, width: band.w, height: band.h };
  t.ok(diff(frame, exp, band) < 14, `the portrait fills the picture (${diff(frame, exp, band).toFixed(1)})`);
  t.ok(diff(px.ugc, exp, band) > 40, `not without the avatar (${diff(px.ugc, exp, band).toFixed(1)})`);
  t.ok(share(frame, '#F0C090', 30, band) > 0.2, 'skin tone of the portrait present');
});

t.test("a custom reference's colours make the palette when there is no brand kit", async (t) => {
  const got = share(px.reference, REF_COLOUR, 24);
  t.ok(got > 0.2, `reference colour covers ${(got * 100).toFixed(1)}%`);
  t.ok(share(px.plain, REF_COLOUR, 24) < 0.01, 'and not without the reference');
});

t.test('inputs that cannot apply stay a 400 naming the field', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ type: 'ai_model', model_slug: 'flux-image', prompt: 'x', avatar_id: 'maya-lifestyle' }, 'body.avatar_id'],
    [{ type: 'ai_model', model_slug: 'flux-image', prompt: 'x', preset_id: 'studio-white' }, 'body.preset_id'],
    [
      { type: 'ai_model', model_slug: 'flux-image', prompt: 'x', custom_reference_inspiration_id: reference.id },
      'body.custom_reference_inspiration_id',
    ],
    [{ ...base, preset_id: 'black-friday-noir' }, 'body.preset_id'],
    [{ ...base, duration: 5 }, 'body.duration'],
  ];
  for (const [body, field] of cases) {
    const res = await api('POST', '/generations', body);
    t.equal(res.status, 400, `${field}: ${res.text}`);
    t.ok(JSON.stringify(res.body.error).includes(field), `names ${field}`);
  }
});

t.test("an analysed reference: its palette colours the ad, its subject's place arranges it", async (t) => {
  const got = share(px.analysed, ANALYSED_COLOUR, 24);
  t.ok(
    got > 0.2,
    `the analysed palette's first colour covers ${(got * 100).toFixed(1)}% (the stored image is orange: the analysis is what is used)`,
  );
  t.ok(share(px.analysed, REF_COLOUR, 24) < 0.01, 'not the raw image colour');
  const want = layoutOf({ referenceImages: [product], referenceSubject: SUBJECT });
  t.equal(want.arrangement, 'flipped');
  const stripes = union(['#FF0000', '#00C800', '#0000FF'].map((c) => bbox(px.analysed, c)));
  near(t, stripes, want.slots[0], 3, 'the product where the subject is: above the headline');
  t.ok(stripes.y + stripes.h < want.headline.y + 2, 'product above the headline');
});

t.test("a custom reference's subject position arranges the ad when no preset does", async (t) => {
  const at = (subject: { x: number; y: number; width: number; height: number } | null, presetId?: string) =>
    layoutOf({ referenceImages: [product], referenceSubject: subject, presetId, presetIndex: presetId ? 0 : undefined });
  const top = at({ x: 0.2, y: 0.05, width: 0.6, height: 0.3 });
  const bottom = at({ x: 0.2, y: 0.55, width: 0.6, height: 0.4 });
  const small = at({ x: 0.45, y: 0.6, width: 0.2, height: 0.2 });
  t.equal(top.arrangement, 'flipped');
  t.ok(top.product.y < top.headline.y, 'subject high in the reference: the product above the headline');
  t.equal(bottom.arrangement, 'standard');
  t.ok(bottom.product.y > bottom.headline.y, 'subject low: the product below the headline');
  t.equal(small.arrangement, 'inset');
  t.ok(small.product.w < bottom.product.w, 'a small subject: a smaller product frame');
  t.equal(at(null).arrangement, 'standard', 'no subject: standard');
  t.equal(
    at({ x: 0.2, y: 0.05, width: 0.6, height: 0.3 }, 'studio-white').arrangement,
    'standard',
    'a preset decides before the reference',
  );
});
