// The local renderer makes real media: every output is checked as a file (magic bytes, sharp
// metadata, ffprobe, decoded pixels and frames). Inputs (reference images, audio, a source
// video) are generated here. Videos are kept small except where the test is about the size.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { escapeFilterValue, extractFrame, FfmpegError, FFMPEG_PATH, FFPROBE_PATH, probe, runFfmpeg } from '../../src/media/ffmpeg.ts';
import { LocalProvider } from '../../src/engines/local/ads.ts';
import { FONT_BOLD as FONT_FILE } from '../../src/media/fonts.ts';
import { computeLayout, paletteFor } from '../../src/engines/local/layout.ts';
import { groundsFor, planBeats } from '../../src/engines/local/kinetic.ts';
import { headlineFrom } from '../../src/engines/write/ad-copy.ts';
import { maxVolume, SILENT_DB } from '../helpers/sound.ts';
import { ProviderError, resolveDimensions, type GenerationJob, type ImageFormat } from '../../src/engines/generation.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'providers-local-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const BRAND = ['#1e88e5', '#0d47a1', '#ffca28'];
const solid = (colour: string, w = 400, h = 300) =>
  sharp({ create: { width: w, height: h, channels: 3, background: colour } })
    .png()
    .toBuffer();
const RED = await solid('#ff0000');
const GREEN = await solid('#00c800', 300, 500);

let seq = 0;
function job(over: Partial<GenerationJob>): GenerationJob {
  const aspectRatio = over.aspectRatio ?? '1:1';
  const output = over.output ?? 'image';
  const dims = resolveDimensions(aspectRatio, output === 'video' ? '720p' : '1K', output);
  return {
    generationId: `gen-${++seq}`,
    type: 'static_ad',
    output,
    prompt: 'Create a summer sale ad for our new running shoes with 30% off. Light, fast and made for every day.',
    title: 'Product Spotlight',
    templateSlug: 'product-spotlight',
    aspectRatio,
    ...dims,
    brandColors: BRAND,
    brandName: 'Stride',
    referenceImages: [RED],
    generateAudio: false,
    ...over,
  };
}

const provider = new LocalProvider();

/** stats() of a region (sharp's stats() ignores extract, so the region is cut out first). */
async function regionStats(file: string | Buffer, r: { x: number; y: number; w: number; h: number }) {
  const cut = await sharp(file).extract({ left: r.x, top: r.y, width: r.w, height: r.h }).removeAlpha().png().toBuffer();
  return sharp(cut).stats();
}

/** Mean colour of the size×size square centred on (x, y). */
async function rgbAt(file: string | Buffer, x: number, y: number, size = 3): Promise<number[]> {
  const left = Math.max(0, x - Math.floor(size / 2));
  const top = Math.max(0, y - Math.floor(size / 2));
  const stats = await regionStats(file, { x: left, y: top, w: size, h: size });
  return stats.channels.slice(0, 3).map((c) => Math.round(c.mean));
}
const hex = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
function near(t: Test, got: number[], want: number[], tol: number, what: string) {
  const diff = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
  t.ok(diff <= tol, `${what}: got rgb(${got.join(',')}) want rgb(${want.join(',')}) ±${tol}`);
}

const MAGIC: Record<ImageFormat, (b: Buffer) => boolean> = {
  png: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpeg: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  webp: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};

t.test('resolveDimensions', async (t) => {
  t.same(resolveDimensions('9:16', '720p', 'video'), { width: 720, height: 1280 });
  t.same(resolveDimensions('16:9', '1080p', 'video'), { width: 1920, height: 1080 });
  t.same(resolveDimensions('1:1', '1K', 'image'), { width: 1024, height: 1024 });
  t.same(resolveDimensions('4:5', '1K', 'image'), { width: 820, height: 1024 });
  t.same(resolveDimensions('9:16', '1K', 'image'), { width: 576, height: 1024 });
  t.same(resolveDimensions('16:9', '2K', 'image'), { width: 2048, height: 1152 });
  t.same(resolveDimensions('16:9', '4K', 'image'), { width: 3840, height: 2160 });
  t.same(resolveDimensions('4:5', '1080p', 'image'), { width: 1080, height: 1350 });
  t.same(resolveDimensions('9:16', '480p', 'video'), { width: 480, height: 854 });
  t.same(resolveDimensions('1:1', undefined, 'image'), { width: 1024, height: 1024 }, 'image default 1K');
  t.same(resolveDimensions('9:16', undefined, 'video'), { width: 720, height: 1280 }, 'video default 720p');
  for (const [ar, res] of [
    ['9:16', '720p'],
    ['4:5', '1K'],
    ['16:9', '2K'],
    ['3:2', '1080p'],
  ]) {
    const d = resolveDimensions(ar, res, 'image');
    t.ok(d.width % 2 === 0 && d.height % 2 === 0, `${ar} ${res} even`);
  }
  t.throws(() => resolveDimensions('auto', '1K', 'image'), /aspect ratio "auto"/);
  t.throws(() => resolveDimensions('wide', '1K', 'image'), /Unknown aspect ratio/);
  t.throws(() => resolveDimensions('1:10', '1K', 'image'), /Unknown aspect ratio/);
  t.throws(() => resolveDimensions('1:1', '8K', 'image'), /Unknown resolution "8K"/);
  t.throws(() => resolveDimensions('1:1', '1K', 'audio' as 'image'), /Unknown output kind/);
});

t.test('headline from the prompt', async (t) => {
  t.equal(headlineFrom('Create a summer sale ad for our new running shoes. More text.', 'X'), 'Summer sale: our new running shoes');
  t.equal(headlineFrom('Make an ad for fresh coffee beans', 'X'), 'Fresh coffee beans');
  t.equal(headlineFrom('', 'Bold Sale Banner'), 'Bold Sale Banner');
});

t.test('static ads: PNG, JPEG and WebP at exact sizes with brand colour and the reference in the frame', async (t) => {
  // The ad is composed from the aspect ratio alone and then encoded in the format alone
  // (renderAdImage), so every aspect ratio once and every format at least once cover the pairs.
  const cases = [
    ['png', '1:1'],
    ['jpeg', '4:5'],
    ['webp', '9:16'],
    ['png', '16:9'],
    ['jpeg', '16:9'],
  ] as const;
  for (const [format, aspectRatio] of cases) {
    const j = job({ aspectRatio, imageFormat: format });
    const res = await provider.generate(j, { workDir: work });
    const buf = readFileSync(res.path);
    const what = `${format} ${aspectRatio}`;
    t.ok(MAGIC[format](buf), `${what}: magic bytes`);
    const meta = await sharp(buf).metadata();
    t.equal(meta.format, format, `${what}: sharp format`);
    t.same([meta.width, meta.height], [j.width, j.height], `${what}: ${j.width}×${j.height}`);
    t.same([res.width, res.height, res.bytes], [j.width, j.height, buf.length], `${what}: result describes the file`);
    t.equal(res.contentType, `image/${format}`);
    t.equal(path.extname(res.path), format === 'jpeg' ? '.jpg' : `.${format}`);
    const tol = format === 'png' ? 0 : 10;
    near(t, await rgbAt(buf, 3, 3), hex(BRAND[0]), tol, `${what}: top-left corner is the brand colour`);
    const slot = computeLayout(j).slots[0];
    near(
      t,
      await rgbAt(buf, slot.x + Math.floor(slot.w / 2), slot.y + Math.floor(slot.h / 2), 5),
      [255, 0, 0],
      tol + 4,
      `${what}: product frame shows the reference`,
    );
  }
});

t.test('several references are tiled; text is drawn; same input gives the same bytes', async (t) => {
  const j = job({ aspectRatio: '9:16', referenceImages: [RED, GREEN] });
  const a = await provider.generate(j, { workDir: work });
  const layout = computeLayout(j);
  t.equal(layout.slots.length, 2);
  const centre = (i: number) =>
    [layout.slots[i].x + Math.floor(layout.slots[i].w / 2), layout.slots[i].y + Math.floor(layout.slots[i].h / 2)] as const;
  near(t, await rgbAt(a.path, ...centre(0), 5), [255, 0, 0], 0, 'first reference in slot 0');
  near(t, await rgbAt(a.path, ...centre(1), 5), [0, 200, 0], 0, 'second reference in slot 1');
  // The headline band holds text: its pixels are not uniform.
  const h = layout.headline;
  const stats = await regionStats(a.path, h);
  t.ok(
    stats.channels.some((c) => c.max - c.min > 120),
    'headline band has text',
  );
  const c = layout.cta as NonNullable<typeof layout.cta>;
  near(t, await rgbAt(a.path, c.x + Math.floor(c.w / 2), c.y + 3, 1), hex(BRAND[2]), 0, 'CTA button in the accent colour');

  const b = await provider.generate({ ...j, generationId: 'again' }, { workDir: work });
  t.ok(readFileSync(a.path).equals(readFileSync(b.path)), 'deterministic');
});

t.test('without a brand kit the palette comes from the prompt', async (t) => {
  const j1 = job({ brandColors: undefined, brandName: undefined, prompt: 'Handmade ceramic mugs for slow mornings' });
  const j2 = job({ brandColors: undefined, brandName: undefined, prompt: 'Neon gaming keyboard with clicky switches' });
  const p1 = paletteFor(j1);
  const p2 = paletteFor(j2);
  t.not(p1.primary, p2.primary, 'different prompts, different palettes');
  t.same(paletteFor(j1), p1, 'stable');
  const r1 = await provider.generate(j1, { workDir: work });
  near(t, await rgbAt(r1.path, 3, 3), hex(p1.primary), 0, 'corner in the derived primary colour');
  // No reference image: no stand-in product (issue 24): no image slots, no card, the type takes the space.
  const layout0 = computeLayout({ ...j1, referenceImages: [] });
  t.same(layout0.slots, [], 'no product slots without a product image');
  t.equal(layout0.pictured, false, 'a typographic poster');
});

t.test('every layout kind and the AI-model image output render', async (t) => {
  const kinds: Partial<GenerationJob>[] = [
    { templateSlug: 'bold-sale-banner' },
    { templateSlug: 'before-after-split', referenceImages: [RED, GREEN] },
    { templateSlug: 'testimonial-quote', aspectRatio: '16:9' },
    { templateSlug: 'feature-callout-grid', referenceImages: [RED, GREEN, RED] },
    { type: 'ugc_ad', templateSlug: 'unboxing-ugc', avatarName: 'Mia Jones' },
    { type: 'ai_model', templateSlug: undefined, modelSlug: 'flux-image', title: 'Flux Image', aspectRatio: '4:5', imageFormat: 'webp' },
  ];
  for (const over of kinds) {
    const j = job({ aspectRatio: '9:16', ...over });
    const layout = computeLayout(j);
    const res = await provider.generate(j, { workDir: work });
    const meta = await sharp(res.path).metadata();
    const what = `${layout.kind}`;
    t.same([meta.width, meta.height, meta.format], [j.width, j.height, j.imageFormat ?? 'png'], `${what}: size and format`);
    near(t, await rgbAt(res.path, 3, 3), hex(BRAND[0]), j.imageFormat === 'webp' ? 10 : 0, `${what}: brand corner`);
    if (layout.kind === 'model' || layout.kind === 'ugc') {
      const s = layout.slots[0];
      near(
        t,
        await rgbAt(res.path, s.x + Math.floor(s.w / 2), s.y + Math.floor(s.h / 2), 5),
        [255, 0, 0],
        14,
        `${what}: reference in the frame`,
      );
    }
  }
});

t.test('an undecodable reference image is a non-retryable ProviderError', async (t) => {
  const err = await provider.generate(job({ referenceImages: [Buffer.from('not an image')] }), { workDir: work }).catch((e) => e);
  t.ok(err instanceof ProviderError);
  t.equal(err.retryable, false);
  t.equal(err.code, 'invalid_reference_image');
});

// ---------------------------------------------------------------------------------------
// Video
// ---------------------------------------------------------------------------------------

/** Top-level MP4 boxes in order (to see +faststart: moov before mdat). */
function topBoxes(buf: Buffer): string[] {
  const out: string[] = [];
  let off = 0;
  while (off + 8 <= buf.length) {
    let size = buf.readUInt32BE(off);
    const type = buf.subarray(off + 4, off + 8).toString('latin1');
    if (size === 1) size = Number(buf.readBigUInt64BE(off + 8));
    out.push(type);
    if (size < 8) break;
    off += size;
  }
  return out;
}

function ffprobeStreams(file: string): Promise<Array<{ codec_type: string; pix_fmt?: string; channels?: number }>> {
  return new Promise((resolve, reject) => {
    const p = spawn(FFPROBE_PATH, ['-v', 'error', '-print_format', 'json', '-show_streams', file]);
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out).streams) : reject(new Error(`ffprobe ${code}`))));
  });
}

t.test('video ad: H.264/AAC MP4, 720×1280, 3 s, kinetic beats, progress', async (t) => {
  const fractions: number[] = [];
  const j = job({
    type: 'video_ad',
    output: 'video',
    templateSlug: 'product-demo-showcase',
    aspectRatio: '9:16',
    durationSeconds: 3,
    generateAudio: true,
  });
  t.same([j.width, j.height], [720, 1280]);
  const res = await provider.generate(j, { workDir: work, onProgress: (f) => fractions.push(f) });
  const info = await probe(res.path);
  t.equal(info.video_codec, 'h264');
  t.equal(info.audio_codec, 'aac');
  t.ok(info.has_audio && info.has_video);
  t.match(info.format, /mp4/);
  t.same([info.width, info.height], [720, 1280]);
  t.ok(Math.abs((info.duration_seconds ?? 0) - 3) <= 0.15, `duration ${info.duration_seconds} ≈ 3`);
  t.same([res.width, res.height, res.contentType], [720, 1280, 'video/mp4']);
  const buf = readFileSync(res.path);
  t.equal(res.bytes, buf.length);
  const boxes = topBoxes(buf);
  t.ok(boxes.indexOf('moov') >= 0 && boxes.indexOf('moov') < boxes.indexOf('mdat'), `faststart: ${boxes.join(',')}`);
  const streams = await ffprobeStreams(res.path);
  t.equal(streams.find((s) => s.codec_type === 'video')?.pix_fmt, 'yuv420p');
  t.equal(streams.find((s) => s.codec_type === 'audio')?.channels, 2);
  t.ok((maxVolume(res.path) ?? -200) > SILENT_DB, `the music bed is heard (peak ${maxVolume(res.path)} dB)`);

  // A kinetic ad (src/engines/local/kinetic.ts): it opens on its first beat's ground, the brand
  // colour darkened to 5:1 under white type, and shows the copy as beats, not captions.
  const first = await extractFrame(res.path, 0);
  const ground = groundsFor(j, planBeats(j, 3))[0].from;
  near(t, await rgbAt(first, 4, 4), hex(ground), 12, 'first frame is the first beat (its ground in the corner)');
  const frame = await extractFrame(res.path, 1);
  const st = await sharp(frame).stats();
  t.ok(
    st.channels.slice(0, 3).some((c) => c.max - c.min > 100 && c.stdev > 20),
    'frame at 1 s has content',
  );
  const roles = res.manifest!.texts.map((x) => x.role);
  t.ok(roles.includes('headline') && roles.includes('cta'), 'the headline and the CTA are placed');
  t.notOk(roles.includes('caption'), 'no captions under the beats');

  t.ok(fractions.length >= 3, `progress reported (${fractions.length} calls)`);
  t.ok(
    fractions.every((f, i) => i === 0 || f > fractions[i - 1]),
    'fractions increase',
  );
  t.ok(
    fractions.every((f) => f >= 0 && f <= 1),
    'fractions within 0..1',
  );
  t.equal(fractions.at(-1), 1, 'ends at 1');
  t.same(
    readdirSync(work).filter((f) => f.startsWith('.')),
    [],
    'scratch files removed',
  );
});

t.test('no audio stream when generateAudio is false (UGC, square 480p)', async (t) => {
  const { width, height } = resolveDimensions('1:1', '480p', 'video');
  const j = job({
    type: 'ugc_ad',
    output: 'video',
    templateSlug: 'unboxing-ugc',
    aspectRatio: '1:1',
    width,
    height,
    durationSeconds: 2,
    generateAudio: false,
    avatarName: 'Mia',
  });
  const res = await provider.generate(j, { workDir: work });
  const info = await probe(res.path);
  t.equal(info.has_audio, false);
  t.equal(info.audio_codec, null);
  t.same([info.width, info.height, info.video_codec], [480, 480, 'h264']);
  t.ok(Math.abs((info.duration_seconds ?? 0) - 2) <= 0.15);
});

async function ff(args: string[]) {
  await runFfmpeg(args);
}

t.test('a given audio file is used, trimmed or padded to the duration', async (t) => {
  const audio = path.join(work, 'voice.m4a');
  await ff(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1.5', '-c:a', 'aac', audio]);
  const { width, height } = resolveDimensions('16:9', '480p', 'video');
  for (const duration of [2, 1]) {
    // the file lasts 1.5 s: padded, then trimmed
    const j = job({
      type: 'ai_model',
      output: 'video',
      templateSlug: undefined,
      modelSlug: 'talking-avatar',
      aspectRatio: '16:9',
      width,
      height,
      durationSeconds: duration,
      generateAudio: false,
      audio: { path: audio, type: 'audio/mp4' },
    });
    const res = await provider.generate(j, { workDir: work });
    const info = await probe(res.path);
    t.equal(info.audio_codec, 'aac', `${duration}s: audio from the file`);
    t.same([info.width, info.height], [854, 480]);
    t.ok(Math.abs((info.duration_seconds ?? 0) - duration) <= 0.15, `${duration}s: duration ${info.duration_seconds}`);
  }
});

t.test('a source video is scaled/cropped to the frame and used as the base', async (t) => {
  const src = path.join(work, 'source.mp4');
  await ff([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=25:duration=1.2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    src,
  ]);
  const { width, height } = resolveDimensions('9:16', '480p', 'video');
  const j = job({
    type: 'ai_model',
    output: 'video',
    templateSlug: undefined,
    modelSlug: 'runway-aleph-edit',
    aspectRatio: '9:16',
    width,
    height,
    durationSeconds: 3,
    generateAudio: true,
    sourceVideo: { path: src, type: 'video/mp4' },
  });
  const res = await provider.generate(j, { workDir: work });
  const info = await probe(res.path);
  t.same([info.width, info.height, info.video_codec, info.audio_codec], [480, 854, 'h264', 'aac']);
  t.ok(Math.abs((info.duration_seconds ?? 0) - 3) <= 0.15, `duration ${info.duration_seconds} (source looped)`);
  const st = await sharp(await extractFrame(res.path, 2.5)).stats();
  t.ok(
    st.channels.slice(0, 3).every((c) => c.max - c.min > 100),
    'frame at 2.5 s shows the (looped) source',
  );

  const bad = path.join(work, 'bad.mp4');
  writeFileSync(bad, 'not a video');
  const err = await provider
    .generate({ ...j, generationId: 'badsrc', sourceVideo: { path: bad, type: 'video/mp4' } }, { workDir: work })
    .catch((e) => e);
  t.ok(err instanceof ProviderError && err.code === 'invalid_source_video' && err.retryable === false, 'unreadable source: non-retryable');
});

/** ffmpeg processes whose command line mentions `needle`. */
function ffmpegProcessesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(needle) && readlinkSync(`/proc/${d}/exe`).includes('ffmpeg')) pids.push(Number(d));
    } catch {
      // gone
    }
  }
  return pids;
}

t.test('abort kills ffmpeg', async (t) => {
  // runFfmpeg itself: the child is gone when the promise rejects.
  const ac = new AbortController();
  let pid = 0;
  const out = path.join(work, 'endless.mp4');
  const p = runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', '600', '-c:v', 'libx264', '-preset', 'ultrafast', out], {
    expectedDurationSeconds: 600,
    signal: ac.signal,
    onSpawn: (c) => (pid = c.pid ?? 0),
    onProgress: (f) => {
      if (f > 0) ac.abort();
    },
  });
  const err = await p.catch((e) => e);
  t.equal(err?.name, 'AbortError');
  t.ok(pid > 0);
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'ffmpeg process is gone');

  // Through the provider: rejects with the abort, leaves no process, no output, no scratch.
  const dir = path.join(work, 'abort');
  mkdirSync(dir);
  const ac2 = new AbortController();
  const j = job({
    generationId: 'abort-me',
    type: 'video_ad',
    output: 'video',
    aspectRatio: '9:16',
    durationSeconds: 30,
    generateAudio: true,
  });
  const seen: number[] = [];
  const err2 = await provider
    .generate(j, {
      workDir: dir,
      signal: ac2.signal,
      onProgress: (f) => {
        seen.push(f);
        if (f > 0.05 && !ac2.signal.aborted) ac2.abort();
      },
    })
    .catch((e) => e);
  t.equal(err2?.name, 'AbortError');
  t.ok(
    seen.some((f) => f > 0.05),
    'ffmpeg was running',
  );
  t.same(ffmpegProcessesWith(dir), [], 'no ffmpeg left for the job');
  t.same(readdirSync(dir), [], 'no output or scratch left');

  const pre = new AbortController();
  pre.abort();
  const err3 = await provider.generate(job({}), { workDir: work, signal: pre.signal }).catch((e) => e);
  t.equal(err3?.name, 'AbortError', 'already aborted: nothing rendered');
});

t.test('ffmpeg helpers: errors carry stderr, probe, filter escaping', async (t) => {
  const err = await runFfmpeg(['-f', 'mov', '-i', path.join(work, 'missing.mp4'), '-f', 'null', '-'], { cwd: work }).catch((e) => e);
  t.ok(err instanceof FfmpegError);
  t.equal(err.exitCode, 1);
  t.match(err.message, /missing\.mp4: No such file or directory/);
  t.match(err.stderr, /No such file/);

  // Every input has a forced format and lies in the run's own folder, or ffmpeg is not started.
  await t.rejects(runFfmpeg(['-i', path.join(work, 'missing.mp4'), '-f', 'null', '-'], { cwd: work }), /has no forced format/);
  await t.rejects(runFfmpeg(['-f', 'wav', '-i', '/etc/passwd', '-f', 'null', '-'], { cwd: work }), /not a file of this job's folder/);
  await t.rejects(
    runFfmpeg(['-f', 'wav', '-i', path.join(work, '..', 'x.wav'), '-f', 'null', '-'], { cwd: work }),
    /not a file of this job's folder/,
  );
  await t.rejects(probe(path.join(work, 'missing.mp4')), /ENOENT|no such file/i);

  // A text file in a folder with filtergraph-special characters.
  const odd = path.join(work, "we:ird, [dir]; it's");
  mkdirSync(odd);
  const text = path.join(odd, 'caption.txt');
  writeFileSync(text, "100% it's: fine, [ok]; \\ done");
  const out = path.join(odd, 'frame.png');
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'color=c=black:size=320x80',
    '-filter_complex',
    `[0:v]drawtext=textfile=${escapeFilterValue(text)}:expansion=none:fontcolor=white:fontsize=20:fontfile=${escapeFilterValue(FONT_FILE)}[v]`,
    '-map',
    '[v]',
    '-frames:v',
    '1',
    out,
  ]);
  const st = await sharp(out).stats();
  t.ok(st.channels[0].max > 200, 'text drawn from an awkward path');
  t.ok(FFMPEG_PATH.includes('ffmpeg'));
});
