// The design rules of the local template ads (issue 24), over every template × aspect ratio of
// the catalog: every text the renderer placed (its MediaManifest) keeps 4 % margins and stays out
// of a 9:16 feed's UI zones, and reads at 4.5:1 or more against the pixels behind it; without a
// product image no stand-in product is drawn; a UGC ad's product card is off the face and the
// presenter's mouth moves while speaking; a video ad's frames have no black border.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { composeAd, type DrawnText } from '../../src/engines/local/ad-image.ts';
import { captionTimes, prepareVideo, spokenChunks } from '../../src/engines/local/ad-video.ts';
import { LocalProvider } from '../../src/engines/local/ads.ts';
import { computeLayout, contrast, hexToRgb, paletteFor, type Rect } from '../../src/engines/local/layout.ts';
import { mouthLevels } from '../../src/engines/local/mouth.ts';
import { resolveDimensions, type GenerationJob } from '../../src/engines/generation.ts';
import { extractFrame, runFfmpeg } from '../../src/media/ffmpeg.ts';
import { MARGIN, safeZoneFor, type PlacedText } from '../../src/media/quality/manifest.ts';
import { CATALOG_URL } from '../../src/services/catalog/catalog-data.ts';
import { catalogPresenter } from '../../src/services/catalog/presenters.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'ad-design-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const catalog = parse(readFileSync(CATALOG_URL, 'utf8')) as Record<string, { slug: string }[]>;
const presenter = await catalogPresenter('maya-lifestyle');
const product = await sharp({ create: { width: 300, height: 400, channels: 3, background: '#c0392b' } })
  .png()
  .toBuffer();
const PROMPT = 'Create an ad for our citrus sparkling water. Zero sugar, real fruit, 20% off this week.';
// Brand kits of three kinds: dark, mid-tone (neither white nor black text reaches 5:1 on it) and light.
const KITS = [
  ['#0f3d3e', '#145c5e', '#ffb300'],
  ['#1e88e5', '#0d47a1', '#ffca28'],
  ['#f5efe6', '#e0d5c1', '#c2185b'],
];

let seq = 0;
function job(type: GenerationJob['type'], slug: string, aspectRatio: string, over: Partial<GenerationJob> = {}): GenerationJob {
  const video = type !== 'static_ad';
  const dims = resolveDimensions(aspectRatio, video ? '480p' : '1K', video ? 'video' : 'image');
  return {
    generationId: `design-${++seq}`,
    type,
    output: video ? 'video' : 'image',
    prompt: PROMPT,
    title: slug,
    templateSlug: slug,
    aspectRatio,
    ...dims,
    durationSeconds: 2,
    brandColors: KITS[seq % KITS.length],
    brandName: 'Fizz & Co',
    referenceImages: seq % 2 ? [product] : [],
    generateAudio: false,
    copy: { subheadline: 'Real fruit, zero sugar', offer: '20% off this week' },
    // A catalog avatar, as the pipeline gives it: its card and its drawn mouth openings.
    ...(type === 'ugc_ad' ? { avatarImage: presenter.image, presenter, avatarName: 'Maya Lopez' } : {}),
    ...over,
  };
}

const CASES: [GenerationJob['type'], string, string[]][] = [
  ['static_ad', 'static_ads', ['1:1', '4:5', '9:16', '16:9']],
  ['video_ad', 'video_ads', ['9:16', '16:9']],
  ['ugc_ad', 'ugc_ads', ['9:16', '16:9']],
];
const jobs = CASES.flatMap(([type, section, aspects]) => catalog[section].flatMap((tpl) => aspects.map((ar) => job(type, tpl.slug, ar))));

/** Every text box keeps the margins and stays out of the UI zones. */
function checkPlacement(t: Test, what: string, W: number, H: number, texts: PlacedText[]) {
  const zone = safeZoneFor(W, H);
  const top = Math.max(MARGIN * H, (zone?.top ?? 0) * H);
  const bottom = H - Math.max(MARGIN * H, (zone?.bottom ?? 0) * H);
  const bad = texts.filter(
    (x) => x.box.x < MARGIN * W || x.box.x + x.box.w > W - MARGIN * W || x.box.y < top || x.box.y + x.box.h > bottom,
  );
  t.same(
    bad.map((x) => `${x.role} "${x.text}" ${JSON.stringify(x.box)}`),
    [],
    `${what}: ${texts.length} texts inside the margins${zone ? ' and out of the 9:16 UI zones' : ''}`,
  );
}

/**
 * The contrast of each text against the pixels behind it: the ad's pixels in its box away from
 * the glyphs (pixels of the text layer in the text's colour, grown by 2 px to leave out their
 * anti-aliased edges): the ground (background, picture, scrim, button). Returns the share of
 * ground pixels under 4.5:1.
 */
function lowContrastShare(full: Buffer, textLayer: Buffer, W: number, x: DrawnText): number {
  const ink = hexToRgb(x.colour);
  const { w, h } = x.box;
  const glyph = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let i = 0; i < w; i++) {
      const o = ((x.box.y + y) * W + x.box.x + i) * 4;
      const near = Math.abs(textLayer[o] - ink[0]) + Math.abs(textLayer[o + 1] - ink[1]) + Math.abs(textLayer[o + 2] - ink[2]) < 90;
      if (textLayer[o + 3] > 0 && near)
        for (let dy = -2; dy <= 2; dy++)
          for (let dx = -2; dx <= 2; dx++) if (y + dy >= 0 && y + dy < h && i + dx >= 0 && i + dx < w) glyph[(y + dy) * w + i + dx] = 1;
    }
  let ground = 0;
  let low = 0;
  for (let y = 0; y < h; y++)
    for (let i = 0; i < w; i++) {
      if (glyph[y * w + i]) continue;
      const o = ((x.box.y + y) * W + x.box.x + i) * 4;
      ground++;
      const hex = `#${[full[o], full[o + 1], full[o + 2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
      if (contrast(x.colour, hex) < 4.5) low++;
    }
  return ground ? low / ground : 0;
}

/** The ad as shown: the picture with the text layer over it (RGBA). */
async function flatten(pixels: Buffer, texts: Buffer, W: number, H: number): Promise<Buffer> {
  const raw = { width: W, height: H, channels: 4 as const };
  return sharp(pixels, { raw })
    .composite([{ input: texts, raw }])
    .raw()
    .toBuffer();
}

t.test('every text of every template × aspect fits the safe area and reads at 4.5:1', async (t) => {
  for (const j of jobs) {
    const what = `${j.templateSlug} ${j.aspectRatio}${j.referenceImages.length ? ' +image' : ''}`;
    const ad = await composeAd(j, 'full', { split: true });
    const { width: W, height: H } = j;
    t.equal(ad.manifest.width, W);
    const roles = ad.texts.map((x) => x.role);
    for (const role of ['headline', 'subheadline', 'offer', 'cta', 'brand']) t.ok(roles.includes(role), `${what}: the ${role} is drawn`);
    checkPlacement(t, what, W, H, ad.manifest.texts);
    const full = await flatten(ad.pixels, ad.textPixels!, W, H);
    for (const x of ad.texts) {
      const share = lowContrastShare(full, ad.textPixels!, W, x);
      t.ok(share <= 0.02, `${what}: ${x.role} "${x.text}" in ${x.colour}: ${(share * 100).toFixed(1)} % of its ground under 4.5:1`);
    }
    if (j.output === 'video') {
      const plan = await prepareVideo(j, work, path.join(work, `${j.generationId}.mp4`));
      const captions = plan.manifest.texts.filter((x) => x.role === 'caption');
      // A kinetic video ad shows every line of its copy as a beat of its own: nothing left to caption.
      if (j.type === 'video_ad') t.same(captions, [], `${what}: no captions under the beats`);
      else t.ok(captions.length > 0 && captions.every((x) => x.toSeconds! > x.fromSeconds!), `${what}: timed captions in the manifest`);
      checkPlacement(t, `${what} video`, W, H, plan.manifest.texts);
      // Captions once: no caption line of three words or more repeats the headline the picture shows.
      const plain = (x: string) =>
        x
          .toLowerCase()
          .replace(/[^\p{L}\p{N}]+/gu, ' ')
          .trim();
      const head = plain(ad.headline);
      const repeated = captions.filter((x) => x.text.split(/\s+/).length >= 3 && head.includes(plain(x.text)));
      t.same(
        repeated.map((x) => x.text),
        [],
        `${what}: no caption repeats the headline`,
      );
    }
  }
});

t.test('without a product image no stand-in product is drawn', async (t) => {
  for (const slug of catalog.static_ads.map((x) => x.slug)) {
    const j = job('static_ad', slug, '4:5', { referenceImages: [], brandColors: KITS[0] });
    const layout = computeLayout(j);
    t.same(layout.slots, [], `${slug}: no product slot`);
    // The picture without its texts: only the gradient and texture, no card and nothing in the accent colour (the stand-in's).
    const plate = await composeAd(j, 'plate');
    const accent = hexToRgb(paletteFor(j).accent);
    let card = 0;
    let accented = 0;
    for (let o = 0; o < plate.pixels.length; o += 4) {
      const [r, g, b] = [plate.pixels[o], plate.pixels[o + 1], plate.pixels[o + 2]];
      if (r > 240 && g > 240 && b > 240) card++;
      if (Math.abs(r - accent[0]) + Math.abs(g - accent[1]) + Math.abs(b - accent[2]) < 40) accented++;
    }
    t.equal(card, 0, `${slug}: no white card`);
    t.equal(accented, 0, `${slug}: no shape in the accent colour`);
  }
});

const overlap = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

t.test("a UGC ad's product card sits beside the face, never over it", async (t) => {
  for (const slug of catalog.ugc_ads.map((x) => x.slug))
    for (const ar of ['9:16', '16:9']) {
      const ad = await composeAd(job('ugc_ad', slug, ar, { referenceImages: [product] }));
      const { face, slots } = ad.layout;
      t.ok(face && slots.length === 1, `${slug} ${ar}: a face and a product slot`);
      t.notOk(
        overlap(ad.layout.product, face!),
        `${slug} ${ar}: card ${JSON.stringify(ad.layout.product)} off the face ${JSON.stringify(face)}`,
      );
      // The texts keep off the head (the face box and the hair above it).
      const head = { ...face!, y: face!.y - Math.round(face!.h * 0.7), h: Math.round(face!.h * 1.7) };
      t.ok(ad.texts.length >= 4, `${slug} ${ar}: texts drawn`);
      for (const x of ad.texts)
        t.notOk(overlap(x.box, head), `${slug} ${ar}: ${x.role} ${JSON.stringify(x.box)} off the head ${JSON.stringify(head)}`);
    }
});

const provider = new LocalProvider({ video: { preset: 'ultrafast' } });

t.test("a UGC presenter's mouth moves while speaking and rests in silence", async (t) => {
  const words = [
    { text: 'Glowing', startMs: 300, endMs: 800 },
    { text: 'skin', startMs: 850, endMs: 1200 },
    { text: 'fast.', startMs: 1250, endMs: 1700 },
  ];
  const j = job('ugc_ad', 'talking-head-review', '9:16', { spokenWords: words, durationSeconds: 2.4, referenceImages: [] });
  const res = await provider.generate(j, { workDir: work });
  const { layout } = await composeAd(j, 'plate');
  const m = layout.mouth!;
  t.ok(m, 'the layout knows where the mouth is');
  const levels = mouthLevels(
    words.map((w) => ({ a: w.startMs / 1000, b: w.endMs / 1000 })),
    2.4,
    25,
  );
  const open = levels.indexOf(3);
  const region = async (sec: number) =>
    sharp(await extractFrame(res.path, sec))
      .extract({ left: m.x, top: m.y, width: m.w, height: m.h })
      .removeAlpha()
      .raw()
      .toBuffer();
  const [speaking, silent, before] = await Promise.all([region(open / 25 + 0.01), region(2.1), region(0.1)]);
  const diff = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length;
  t.ok(diff(speaking, silent) > 20, `mouth region differs between speaking and silence (${diff(speaking, silent).toFixed(1)})`);
  t.ok(diff(before, silent) < 6, `and rests the same before and after (${diff(before, silent).toFixed(1)})`);
  // The open mouth is the avatar's own drawn one (its widest face), scaled onto the mouth, not a drawn ellipse.
  const drawn = await sharp(presenter.openings[2]).resize(m.w, m.h, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const closed = await sharp(presenter.image)
    .resize(layout.portrait!.w, layout.portrait!.h, { fit: 'cover' })
    .extract({ left: m.x - layout.portrait!.x, top: m.y - layout.portrait!.y, width: m.w, height: m.h })
    .removeAlpha()
    .raw()
    .toBuffer();
  t.ok(diff(speaking, drawn) < 12, `speaking shows the presenter's drawn open mouth (${diff(speaking, drawn).toFixed(1)})`);
  t.ok(diff(silent, closed) < 12, `silence shows the card's closed mouth (${diff(silent, closed).toFixed(1)})`);
});

t.test('video ads: no black border in the first and last frames', async (t) => {
  for (const ar of ['9:16', '16:9']) {
    const j = job('video_ad', 'cinematic-brand-story', ar, { referenceImages: [product], brandColors: KITS[1], durationSeconds: 2 });
    const res = await provider.generate(j, { workDir: work });
    for (const sec of [0, 1.95]) {
      const { data, info } = await sharp(await extractFrame(res.path, sec))
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const lum = (x: number, y: number) => {
        const o = (y * info.width + x) * 3;
        return (data[o] + data[o + 1] + data[o + 2]) / 3;
      };
      const row = (y: number) => Array.from({ length: info.width }, (_, x) => lum(x, y)).reduce((a, b) => a + b) / info.width;
      const col = (x: number) => Array.from({ length: info.height }, (_, y) => lum(x, y)).reduce((a, b) => a + b) / info.height;
      const edges = [row(0), row(info.height - 1), col(0), col(info.width - 1)];
      t.ok(
        edges.every((v) => v > 24),
        `${ar} at ${sec} s: edge rows and columns are not black (${edges.map((v) => v.toFixed(0)).join(', ')})`,
      );
    }
  }
});

t.test('captions appear once: the headline the picture shows is not captioned again', async (t) => {
  const prompt = 'A friendly review of our vitamin C face serum: glowing skin in two weeks, light texture, no sticky feel.';
  const plain = (x: string) =>
    x
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  for (const type of ['ugc_ad'] as const) {
    const j = job(type, 'talking-head-review', '9:16', {
      prompt,
      copy: undefined,
      durationSeconds: 6,
    });
    const plan = await prepareVideo(j, work, path.join(work, `${j.generationId}.mp4`));
    const headline = plan.manifest.texts.find((x) => x.role === 'headline')!.text;
    const captions = plan.manifest.texts.filter((x) => x.role === 'caption').map((x) => x.text);
    t.ok(captions.length > 0, `${type}: captioned (${captions.join(' / ')})`);
    t.same(
      captions.filter((c) => c.split(' ').length >= 3 && plain(headline).includes(plain(c))),
      [],
      `${type}: no caption line repeats the headline "${headline}"`,
    );
  }
});

t.test("with an audio file and no word timings, the mouth follows the audio's loudness", async (t) => {
  const audio = path.join(work, 'voice.wav');
  // Silence first (while a caption shows), then a tone from 1.3 s to 2.2 s.
  await runFfmpeg(['-f', 'lavfi', '-i', 'aevalsrc=if(between(t\\,1.3\\,2.2)\\,0.6*sin(2*PI*220*t)\\,0):d=2.4:s=22050', '-y', audio]);
  const j = job('ugc_ad', 'talking-head-review', '9:16', {
    audio: { path: audio, type: 'audio/wav' },
    durationSeconds: 2.4,
    referenceImages: [],
  });
  const res = await provider.generate(j, { workDir: work });
  const m = (await composeAd(j, 'plate')).layout.mouth!;
  const region = async (sec: number) =>
    sharp(await extractFrame(res.path, sec))
      .extract({ left: m.x, top: m.y, width: m.w, height: m.h })
      .removeAlpha()
      .raw()
      .toBuffer();
  const [rest, silent, loud] = await Promise.all([region(0.05), region(0.8), region(1.8)]);
  const diff = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length;
  t.ok(diff(loud, rest) > 20, `the mouth is open while the audio sounds (${diff(loud, rest).toFixed(1)})`);
  t.ok(diff(silent, rest) < 6, `and closed in its silence, though a caption shows (${diff(silent, rest).toFixed(1)})`);
});

t.test('a spoken caption said quickly (a last word alone) stays up for a second, never into the next', async (t) => {
  // The green-screen-reaction UGC ad ended on "save." said in 0.29 s: shown that long, with a
  // 0.25 s fade-in, it was half transparent while on screen (contrast 4.3:1) and unreadable.
  const words = ['Follow', 'for', 'more', 'about', 'saving', 'money.', 'Really.', 'Now.'].map((text, i) => ({
    text,
    startMs: i === 7 ? 4000 : i === 6 ? 3400 : 200 + i * 300,
    endMs: i === 7 ? 4290 : i === 6 ? 3600 : 450 + i * 300,
  }));
  const chunks = spokenChunks(words, 24);
  t.same(
    chunks.map((c) => c.lines.join(' ')),
    ['Follow for more about saving money.', 'Really.', 'Now.'],
  );
  t.ok(chunks[1].b <= chunks[2].a - 0.02 + 1e-9, 'held only until the next chunk starts');
  t.ok(chunks[1].b - chunks[1].a >= 0.58, 'held until the next chunk');
  t.ok(chunks[2].b - chunks[2].a >= 1 - 1e-9, `the last word shows ${chunks[2].b - chunks[2].a} s`);
  for (let i = 0; i + 1 < chunks.length; i++) t.ok(chunks[i].b < chunks[i + 1].a, 'chunks never overlap');
});

t.test('a word the end of the ad cuts off gets no caption that flashes for a frame', async (t) => {
  // talking-head-review 9:16: the voice ran past the 8 s ad and "Follow" began at 7.984 s.
  const spokenWords = [
    { text: 'Try', startMs: 6000, endMs: 6300 },
    { text: 'it.', startMs: 6300, endMs: 6900 },
    { text: 'Follow', startMs: 7984, endMs: 8400 },
  ];
  const chunks = captionTimes({ spokenWords } as unknown as GenerationJob, 8, 24);
  t.same(
    chunks.map((c) => c.lines.join(' ')),
    ['Try it.'],
  );
});
