// The timeline renderer's motion, transitions and caption styles, rendered by the bundled ffmpeg
// 4.1 (no xfade) and looked at frame by frame: panning stills and every transition kind never
// uncover the canvas (no black border rows or columns), a cross-fade's middle frame is a blend of
// both scenes, a slide shows the outgoing scene on the left and the incoming one on the right,
// and each caption style draws the spoken word differently.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { renderTimeline } from '../../src/engines/render/ffmpeg.ts';
import { timelineTexts } from '../../src/engines/render/manifest.ts';
import { addSceneTransitions } from '../../src/engines/render/transitions.ts';
import type { RenderMedia } from '../../src/engines/render/types.ts';
import { extractFrame, FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { baseItem, type Item } from '../../src/services/editor/model.ts';
import validators from '../../generated/request-validators.cjs';

const W = 180;
const H = 320;
const FPS = 25;
const COLOURS = ['#D03030', '#30B040', '#3050D0', '#D0A020'];

let dir = '';
const media = new Map<string, RenderMedia>();
t.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'render-motion-'));
  for (const [i, c] of COLOURS.entries()) {
    // A coloured still with a light stripe: edges stay far from black.
    const file = path.join(dir, `s${i}.png`);
    await sharp({ create: { width: W, height: H, channels: 3, background: c } })
      .composite([{ input: { create: { width: W, height: 20, channels: 3, background: '#EEEEEE' } }, left: 0, top: 150 }])
      .png()
      .toFile(file);
    media.set(`m${i}`, { path: file, type: 'image/png', kind: 'image', width: W, height: H, durationSeconds: null, hasAudio: null });
  }
});
t.teardown(() => fs.rm(dir, { recursive: true, force: true }));

const track = { track_id: 'trk_1', type: 'image' as const, name: 'Scenes', order: 0, muted: false, locked: false, hidden: false };

/** Four panned scenes of `seconds` (1.5) back to back (one pan direction each), with the pipelines' transitions. */
function scenes(types?: ('fade' | 'slide' | 'zoom')[], seconds = 1.5): Item[] {
  const dirs = ['up', 'left', 'down', 'right'] as const;
  const items = COLOURS.map((_c, i) =>
    baseItem({
      item_id: `itm_${i}`,
      track_id: track.track_id,
      type: 'image',
      media_id: `m${i}`,
      from_seconds: Math.round(i * seconds * 1000) / 1000,
      duration_seconds: seconds,
      animation: { enter: { type: 'pan', direction: dirs[i], duration_seconds: seconds }, exit: null },
    }),
  );
  addSceneTransitions(items, types);
  return items;
}

async function render(items: Item[], name: string, fps = FPS): Promise<string> {
  const out = path.join(dir, `${name}.mp4`);
  await renderTimeline({ width: W, height: H, fps, tracks: [track as any], items, media }, path.join(dir), out, { quality: 'draft' });
  return out;
}

async function pixels(file: string, at: number) {
  const png = await extractFrame({ path: file, type: 'video/mp4' }, at);
  return sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

t.test('pans and every transition never uncover the canvas: no black border row or column in any sampled frame', async (t) => {
  const file = await render(scenes(), 'motion');
  for (let at = 0.02; at < 6; at += 0.12) {
    const { data, info } = await pixels(file, at);
    const dark = (x: number, y: number) => {
      const i = (y * info.width + x) * 3;
      return data[i] + data[i + 1] + data[i + 2] < 60;
    };
    const row = (y: number) => Array.from({ length: info.width }, (_, x) => dark(x, y)).filter(Boolean).length;
    const col = (x: number) => Array.from({ length: info.height }, (_, y) => dark(x, y)).filter(Boolean).length;
    const border = [row(0), row(info.height - 1), col(0), col(info.width - 1)];
    t.ok(
      border.every((n) => n === 0),
      `t=${at.toFixed(2)} s: dark pixels on the top, bottom, left, right edges ${border.join(', ')}`,
    );
  }
});

t.test('every frame of items drawn in pieces (a fade in, a zoom exit) covers the canvas, none lost at the cuts', async (t) => {
  // Scenes of 4.997 s, starts and cuts off the frame grid as a narration's timings leave them:
  // the second fades in; the third zooms in and leaves with a zoom of its own.
  const items = scenes(['fade', 'zoom'], 4.997).slice(0, 3);
  items[2].animation = { ...items[2].animation!, exit: { type: 'zoom', duration_seconds: 0.4 } };
  // At 30 fps (the pipelines' rate) over stills whose own time base is 1/25.
  const rate = 30;
  const file = await render(items, 'pieces', rate);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    // The frames around the cuts (4.997 + 0.5 s, 9.994 + 0.5 s and the closing zoom at 14.591 s), quarter size.
    const child = spawn(FFMPEG_PATH, [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      `scale=${W / 4}:${H / 4}`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ]);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg ${code}`))));
  });
  const [w, h] = [W / 4, H / 4];
  const size = w * h * 3;
  const frames = raw.length / size;
  const end = Math.max(...items.map((i) => i.from_seconds + i.duration_seconds));
  t.ok(Math.abs(frames - end * rate) <= 1, `every frame of the ${end} s timeline (${frames})`);
  const uncovered: number[] = [];
  for (let k = 0; k < frames; k++) {
    const frame = raw.subarray(k * size, (k + 1) * size);
    // A quarter down the frame, the darkest pixel: the canvas (black) never shows there (the zoom exit ends on black: its last frames are exempt).
    let darkest = 765;
    for (let x = 0; x < w; x++) {
      const i = ((h / 4) * w + x) * 3;
      darkest = Math.min(darkest, frame[i] + frame[i + 1] + frame[i + 2]);
    }
    if (darkest < 60 && k < frames - 0.4 * rate) uncovered.push(k);
  }
  t.same(uncovered, [], 'no frame shows the black canvas (a piece starting a frame late would)');
});

t.test('a cross-fade blends both scenes; a slide shows both side by side; a zoom blends them', async (t) => {
  const file = await render(scenes(['fade', 'slide', 'zoom']), 'transitions');
  const at = async (time: number, x: number, y: number) => {
    const { data, info } = await pixels(file, time);
    const i = (y * info.width + x) * 3;
    return [data[i], data[i + 1], data[i + 2]];
  };
  // Scene 2 starts at 1.5 s and fades in over 0.5 s on top of scene 1 (red → green).
  const [r, g] = await at(1.76, 90, 60);
  t.ok(r > 70 && g > 70, `mid cross-fade: red ${r} and green ${g} both show`);
  const [r0, g0] = await at(1.2, 90, 60);
  t.ok(r0 > 170 && g0 < 90, `before the transition only the outgoing scene (${r0}, ${g0})`);
  // Scene 3 slides in from the right at 3 s over scene 2 (green ← blue).
  const left = await at(3.06, 8, 60);
  const right = await at(3.06, W - 8, 60);
  t.ok(left[1] > 120 && left[2] < 120, `mid slide: the outgoing scene on the left (${left})`);
  t.ok(right[2] > 120 && right[1] < 120, `mid slide: the incoming scene on the right (${right})`);
  // Scene 4 zooms in at 4.5 s, fading in over scene 3 (blue → amber).
  const [zr, , zb] = await at(4.76, 90, 60);
  t.ok(zr > 70 && zb > 60, `mid zoom: red ${zr} (amber) and blue ${zb} both show`);
});

const STYLES = ['karaoke', 'highlight', 'pop', 'bounce'] as const;

/** A captions item with three timed words, in a caption style. */
function captions(style: (typeof STYLES)[number]): Item {
  return baseItem({
    item_id: 'itm_cap',
    track_id: 'trk_2',
    type: 'captions',
    from_seconds: 0,
    duration_seconds: 3,
    layer: 10,
    transform: { left: 0.05, top: 0.6, width: 0.9, height: 0.2, opacity: 1 },
    style: { font_size: 30, color: '#FFFFFF', highlight_color: '#FFD400', stroke_width: 2, caption_style: style },
    captions: [
      {
        text: 'Cold crisp fizz',
        startMs: 0,
        endMs: 3000,
        words: [
          { text: 'Cold', startMs: 0, endMs: 1000 },
          { text: 'crisp', startMs: 1000, endMs: 2000 },
          { text: 'fizz', startMs: 2000, endMs: 3000 },
        ],
      },
    ],
  });
}

t.test('each caption style draws the spoken word its own way, and the contract accepts each', async (t) => {
  const bg = baseItem({ item_id: 'itm_bg', track_id: track.track_id, type: 'image', media_id: 'm2', from_seconds: 0, duration_seconds: 3 });
  const frames = new Map<string, Buffer>();
  for (const style of STYLES) {
    const file = await render([bg, captions(style)], `captions-${style}`);
    frames.set(style, (await pixels(file, 1.6)).data);
    const op = { type: 'add_captions', captions: captions(style).captions, style: captions(style).style };
    t.ok(validators.applyEditorEdits({ operations: [op] }), `${style}: a valid add_captions style`);
    t.ok(
      validators.createFacelessVideo({ prompt: 'Why sparkling water', caption_style: style }),
      `${style}: a valid faceless caption_style`,
    );
  }
  t.notOk(validators.createFacelessVideo({ prompt: 'Why sparkling water', caption_style: 'wobble' }), 'an unknown style is refused');
  const gen = { type: 'generate_captions_from_items', source_item_ids: ['itm_1'], style: { caption_style: 'bounce' } };
  t.ok(validators.applyEditorEdits({ operations: [gen] }), 'generate_captions_from_items takes a caption style');
  const diff = (a: Buffer, b: Buffer) => {
    let n = 0;
    for (let i = 0; i < a.length; i += 3)
      if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 90) n++;
    return n;
  };
  for (const [i, a] of STYLES.entries())
    for (const b of STYLES.slice(i + 1)) {
      const n = diff(frames.get(a)!, frames.get(b)!);
      t.ok(n > 40, `${a} and ${b} differ at the second word (${n} pixels)`);
    }
  // The word being spoken is in the highlight colour in every style (karaoke fills it as it is spoken).
  for (const style of STYLES) {
    const px = frames.get(style)!;
    let yellow = 0;
    for (let i = 0; i < px.length; i += 3) if (px[i] > 200 && px[i + 1] > 170 && px[i + 2] < 80) yellow++;
    t.ok(yellow > 30, `${style}: the spoken word is highlighted (${yellow} pixels)`);
  }
});

t.test("each caption style's manifest names the colours its words are filled with and a box holding every drawn glyph", async (t) => {
  // A plain blue ground: nothing in it near the words' colours.
  const plain = path.join(dir, 'plain.png');
  await sharp({ create: { width: W, height: H, channels: 3, background: '#3050D0' } })
    .png()
    .toFile(plain);
  media.set('plain', { path: plain, type: 'image/png', kind: 'image', width: W, height: H, durationSeconds: null, hasAudio: null });
  const bg = baseItem({
    item_id: 'itm_bg',
    track_id: track.track_id,
    type: 'image',
    media_id: 'plain',
    from_seconds: 0,
    duration_seconds: 3,
  });
  for (const style of STYLES) {
    const item = captions(style);
    const [placed] = await timelineTexts([item], { width: W, height: H });
    t.same([placed.color, ...(placed.colors ?? [])], ['#FFFFFF', '#FFD400'], `${style}: the text and highlight colours, not the outline`);
    const file = await render([bg, item], `manifest-${style}`);
    // 'crisp' is spoken at 1.5 s: both colours show.
    const { data, info } = await pixels(file, 1.5);
    const fills = [placed.color, ...(placed.colors ?? [])].map((c) => [1, 3, 5].map((k) => Number.parseInt(c!.slice(k, k + 2), 16)));
    let [x0, y0, x1, y1] = [Infinity, Infinity, -1, -1];
    for (let y = 0; y < info.height; y++)
      for (let x = 0; x < info.width; x++) {
        const i = (y * info.width + x) * 3;
        if (!fills.some((f) => Math.hypot(data[i] - f[0], data[i + 1] - f[1], data[i + 2] - f[2]) < 60)) continue;
        [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
      }
    const b = placed.box;
    t.ok(x1 > x0, `${style}: words drawn`);
    t.ok(
      x0 >= b.x - 1 && y0 >= b.y - 1 && x1 <= b.x + b.w + 1 && y1 <= b.y + b.h + 1,
      `${style}: glyphs ${x0},${y0}–${x1},${y1} inside the box ${JSON.stringify(b)}`,
    );
    t.ok(b.h <= y1 - y0 + 1 + 30, `${style}: the box (${b.h} px tall) is the words', not the whole band`);
  }
});
