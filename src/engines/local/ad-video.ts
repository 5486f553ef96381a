// The local renderer's video plan: the picture and the texts composed by the image renderer as
// two layers (or a transparent text overlay over a source video), then ONE ffmpeg invocation that
// animates the picture only (Ken Burns via zoompan, never past the frame's edge; a UGC presenter
// stays still and moves its mouth with the speech: mouth shapes overlaid per frame), lays the
// texts over it unmoved, burns the captions in once (drawtext with the shipped DejaVu font, the
// brand kit's family when it names one), adds the audio (the given audio file trimmed/padded, or a
// music track from the library) and encodes H.264 (yuv420p, +faststart) / AAC into an MP4 of exactly
// width × height and the duration. The plan carries the MediaManifest of every text it placed.
// A template video ad without a presenter is kinetic typography instead (./kinetic.ts: the copy
// in beats, each word animated by libass, in the same single ffmpeg run, no captions repeating
// a beat); UGC ads and source/motion videos keep the still-and-captions path above.
//
// prepareVideo() writes the intermediate files and returns the ffmpeg arguments; the provider
// runs them through runFfmpeg, and bench/renderer.ts runs the very same arguments directly.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeFilterValue as esc, inputArgs, probe, type MediaFile } from '../../media/ffmpeg.ts';
import { renderMusicBed } from '../../media/music-bed.ts';
import { ProviderError, type GenerationJob } from '../generation.ts';
import sharp from 'sharp';
import { type FontFace, textWidth } from '../../media/fonts.ts';
import { envelopeLevels, levelSpans, mouthCanvas, mouthLevels, mouthShape, presenterMouth, type Spoken } from './mouth.ts';
import { composeAd, encodeRaw, facesFor, type ComposedAd } from './ad-image.ts';
import { rng, type AdLayout, type Rect } from './layout.ts';
import { safeZoneFor, type MediaManifest, type PlacedText } from '../../media/quality/manifest.ts';
import { kineticVideo } from './kinetic.ts';
import { adCopy } from '../write/ad-copy.ts';
import type { SpokenWord } from '../speech/types.ts';

export interface VideoSettings {
  /** x264 preset. */
  preset: string;
  crf: number;
  fps: number;
  /** The still is scaled up this much before zoompan, which smooths the pan's integer steps. */
  zoomSupersample: number;
}

export const DEFAULT_VIDEO_SETTINGS: VideoSettings = { preset: 'veryfast', crf: 21, fps: 25, zoomSupersample: 2 };

export interface VideoPlan {
  /** ffmpeg arguments after the global ones (-y, -progress …): inputs, graph, encoder, output. */
  args: string[];
  durationSeconds: number;
  frames: number;
  outPath: string;
  /** Intermediate files prepareVideo wrote (the still or overlay, caption text files). */
  files: string[];
  /** The composed first frame (still mode) or overlay (source-video mode). */
  stillPath: string;
  mode: 'still' | 'source';
  hasAudio: boolean;
  /** Every text placed (the still's texts for the whole duration, each caption line while it shows). */
  manifest: MediaManifest;
}

const fmt = (v: number) => (Math.round(v * 1000) / 1000).toString();

/** `name=k1=v1:k2=v2` with every value escaped for the filtergraph. */
function filter(name: string, opts: Record<string, string | number>): string {
  const parts = Object.entries(opts).map(([k, v]) => `${k}=${esc(String(v))}`);
  return parts.length ? `${name}=${parts.join(':')}` : name;
}

/** Words wrapped into lines of at most `maxChars` (a longer word is cut with an ellipsis). */
function wrapWords(text: string, maxChars: number): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  const lines: string[] = [];
  let cur = '';
  for (const w0 of words) {
    const w = w0.length > maxChars ? `${w0.slice(0, Math.max(1, maxChars - 1))}…` : w0;
    if (!cur) cur = w;
    else if (cur.length + 1 + w.length <= maxChars) cur += ` ${w}`;
    else {
      lines.push(cur);
      cur = w;
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

/** Caption lines of the ad copy (one caption per line of it), grouped into timed chunks of at most two lines. */
export function captionChunks(text: string, maxChars: number, maxChunks: number): string[][] {
  const chunks: string[][] = [];
  /** Whether each chunk goes on with the line of the one before. */
  const goesOn: boolean[] = [];
  for (const line of (text || '').split('\n')) {
    const lines = wrapWords(line, maxChars);
    for (let i = 0; i < lines.length; i += 2) {
      chunks.push(lines.slice(i, i + 2));
      goesOn.push(i > 0);
    }
  }
  const max = Math.max(1, maxChunks);
  if (chunks.length > max) {
    chunks.length = max;
    // Whole lines dropped need no ellipsis; a line cut short does.
    if (!goesOn[max]) return chunks;
    const last = chunks[max - 1];
    const end = last[last.length - 1];
    last[last.length - 1] = end.length + 1 <= maxChars ? `${end}…` : `${end.slice(0, maxChars - 1)}…`;
  }
  return chunks;
}

/** The shortest time a spoken caption chunk shows (seconds), where the next one leaves room. */
const MIN_CAPTION_S = 1;
/** A caption's fade-in (seconds): at most this, and at most a fifth of the time it shows. */
const CAPTION_FADE_S = 0.25;
/** A spoken chunk starting less than this before the ad's end (cut off with the audio) is not captioned. */
const MIN_CAPTION_END_S = 0.3;

/** Wrapped lines, two lines split where they are most even (no word alone on the second line). */
function balanced(text: string, maxChars: number): string[] {
  const lines = wrapWords(text, maxChars);
  if (lines.length !== 2) return lines;
  const words = text.split(' ');
  let best = lines;
  for (let i = 1; i < words.length; i++) {
    const pair = [words.slice(0, i).join(' '), words.slice(i).join(' ')];
    if (pair[0].length > maxChars || pair[1].length > maxChars) continue;
    if (Math.max(pair[0].length, pair[1].length) < Math.max(best[0].length, best[1].length)) best = pair;
  }
  return best;
}

/** A word cut to fit a caption line. */
const shortWord = (w: string, maxChars: number) => (w.length > maxChars ? `${w.slice(0, Math.max(1, maxChars - 1))}…` : w);

/**
 * Spoken words as caption chunks of at most two lines, each shown from its first word's start to
 * its last word's end (a short gap is bridged, so captions do not flicker between phrases).
 */
export function spokenChunks(words: readonly SpokenWord[], maxChars: number): { lines: string[]; a: number; b: number }[] {
  const groups: SpokenWord[][] = [];
  let group: SpokenWord[] = [];
  let lines: string[] = [];
  let cur = '';
  const flush = () => {
    if (group.length) groups.push(group);
    group = [];
    lines = [];
    cur = '';
  };
  for (const word of words) {
    const w = shortWord(word.text, maxChars);
    if (cur && cur.length + 1 + w.length > maxChars) {
      if (lines.length === 1) flush();
      else {
        lines.push(cur);
        cur = '';
      }
    }
    group.push(word);
    cur = cur ? `${cur} ${w}` : w;
    // A sentence ends a chunk.
    if (/[.!?]$/.test(word.text)) flush();
  }
  flush();
  // No widow: a sentence's last word alone takes the word before it from the chunk before.
  for (let i = 1; i < groups.length; i++) {
    const prev = groups[i - 1];
    if (groups[i].length === 1 && prev.length > 2 && !/[.!?]$/.test(prev.at(-1)!.text)) groups[i].unshift(prev.pop()!);
  }
  const out = groups.map((g) => ({
    lines: balanced(g.map((x) => shortWord(x.text, maxChars)).join(' '), maxChars),
    a: g[0].startMs / 1000,
    b: g.at(-1)!.endMs / 1000,
  }));
  for (let i = 0; i + 1 < out.length; i++) if (out[i + 1].a - out[i].b < 0.4) out[i].b = out[i + 1].a - 0.02;
  // A chunk said quickly (a last word alone) stays up long enough to read, until the next one starts.
  for (let i = 0; i < out.length; i++) {
    const next = out[i + 1]?.a ?? Infinity;
    out[i].b = Math.max(out[i].b, Math.min(out[i].a + MIN_CAPTION_S, next - 0.02));
  }
  return out;
}

/** A caption chunk: its lines and when it shows (seconds). */
export interface TimedChunk {
  lines: string[];
  a: number;
  b: number;
}

/** The caption chunks of the job: each spoken chunk while it is said (a narrated ad), else the caption text spread evenly. */
export function captionTimes(job: GenerationJob, duration: number, maxChars: number): TimedChunk[] {
  const start = Math.min(0.5, duration * 0.1);
  const end = Math.max(start + 0.5, duration - 0.15);
  const maxChunks = Math.max(1, Math.floor((end - start) / 1.4));
  // Words the ad's end cuts off (said in its last moments) get no caption that would flash for a frame.
  if (job.spokenWords?.length) return spokenChunks(job.spokenWords, maxChars).filter((c) => c.a < duration - MIN_CAPTION_END_S);
  return captionChunks(unshown(job), maxChars, maxChunks).map((lines, i, all) => {
    const slot = (end - start) / all.length;
    return { lines, a: start + i * slot, b: start + i * slot + slot - 0.05 };
  });
}

const plain = (x: string) =>
  x
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** The caption text without the words the picture already shows: a headline taken from its start is not captioned again. */
export function unshown(job: GenerationJob): string {
  const { headline, captions } = adCopy(job);
  const head = plain(headline.replace(/…$/, '')).split(' ').filter(Boolean);
  const words = captions.split(/\s+/).filter(Boolean);
  const same = head.length > 0 && head.every((w, i) => words[i] !== undefined && plain(words[i]) === w);
  const rest = same ? words.slice(head.length).join(' ') : captions;
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}

/** One caption line as drawn: its font size (smaller when the line is too wide for the band) and box. */
async function captionLine(
  text: string,
  face: FontFace,
  fs: number,
  band: Rect,
  y: number,
  border: number,
): Promise<{ fs: number; box: Rect }> {
  const room = band.w - 2 * border;
  let w = await textWidth(text, face, fs);
  let size = fs;
  if (w > room) {
    size = Math.max(8, Math.floor((fs * room) / w));
    w = await textWidth(text, face, size);
  }
  return { fs: size, box: { x: band.x + Math.round((band.w - w) / 2), y, w, h: Math.round(size * 1.17) } };
}

/** drawtext filters for the captions (one per line, each with its own box, fading in), and each line as placed. */
async function captionFilters(
  job: GenerationJob,
  layout: AdLayout,
  duration: number,
  dir: string,
  files: string[],
): Promise<{ filters: string[]; placed: PlacedText[]; chunks: TimedChunk[] }> {
  const fs = Math.max(12, Math.round(layout.unit * 0.052));
  const band = layout.caption;
  const border = Math.max(2, Math.round(fs * 0.28));
  const timed = captionTimes(job, duration, Math.max(8, Math.floor((band.w - 2 * border) / (fs * 0.62))));
  const lineStep = Math.round(fs * 1.22) + 2 * border;
  const out: string[] = [];
  const placed: PlacedText[] = [];
  // Captions in the brand kit's text font (its second, else its first).
  const face = facesFor(job).bodyFace;
  const fontfile = face.file;
  for (let i = 0; i < timed.length; i++) {
    const { a, lines } = timed[i];
    const b = Math.min(timed[i].b, duration);
    const y0 = band.y + Math.max(0, band.h - lines.length * lineStep);
    for (let j = 0; j < lines.length; j++) {
      const file = path.join(dir, `caption-${i}-${j}.txt`);
      await writeFile(file, lines[j], 'utf8');
      files.push(file);
      const line = await captionLine(lines[j], face, fs, band, y0 + j * lineStep + border, border);
      placed.push({ text: lines[j], box: line.box, role: 'caption', fromSeconds: a, toSeconds: b });
      out.push(
        filter('drawtext', {
          fontfile,
          textfile: file,
          expansion: 'none',
          fontsize: line.fs,
          fontcolor: 'white',
          box: 1,
          boxcolor: 'black@0.62',
          boxborderw: border,
          x: line.box.x,
          y: line.box.y,
          enable: `between(t,${fmt(a)},${fmt(b)})`,
          alpha: `min(1,(t-${fmt(a)})/${fmt(Math.max(0.01, Math.min(CAPTION_FADE_S, (b - a) / 5)))})`,
        }),
      );
    }
  }
  return { filters: out, placed, chunks: timed };
}

/**
 * Writes the intermediates of `job` into `scratchDir` and returns the one ffmpeg command that
 * renders `outPath`.
 */
export async function prepareVideo(
  job: GenerationJob,
  scratchDir: string,
  outPath: string,
  settings: VideoSettings = DEFAULT_VIDEO_SETTINGS,
): Promise<VideoPlan> {
  const duration = checkedDuration(job);
  const { width: W, height: H } = job;
  const fps = settings.fps;
  const frames = Math.max(1, Math.round(duration * fps));
  const files: string[] = [];
  const baseVideo = job.sourceVideo ?? job.motionVideo;
  const mode: VideoPlan['mode'] = baseVideo ? 'source' : 'still';
  await checkInputs(job, baseVideo);

  if (mode === 'still' && isKinetic(job)) return prepareKinetic(job, duration, frames, scratchDir, outPath, files, settings);
  const ad = await composeAd(job, mode === 'still' ? 'full' : 'overlay', { split: mode === 'still' });
  const stillPath = path.join(scratchDir, mode === 'still' ? 'still.png' : 'overlay.png');
  await encodeRaw(ad, mode === 'still')
    .png({ compressionLevel: 1 })
    .toFile(stillPath);
  files.push(stillPath);

  const inputs: string[] = [];
  const graph: string[] = [];
  const captions = await captionFilters(job, ad.layout, duration, scratchDir, files);
  const tail = [...captions.filters, filter('format', { pix_fmts: 'yuv420p' })].join(',');
  if (mode === 'still') {
    const textPath = path.join(scratchDir, 'texts.png');
    await encodeRaw(ad, false, ad.textPixels).png({ compressionLevel: 1 }).toFile(textPath);
    files.push(textPath);
    const talking = ad.layout.mouth ? await mouthInputs(job, ad, captions.chunks, duration, fps, scratchDir, files) : null;
    if (talking)
      inputs.push(...inputArgs({ path: stillPath, type: 'image/png' }, ['-loop', '1', '-framerate', String(fps), '-t', fmt(duration)]));
    else inputs.push(...inputArgs({ path: stillPath, type: 'image/png' }));
    inputs.push(...inputArgs({ path: textPath, type: 'image/png' }), ...(talking?.inputs ?? []));
    // The picture moves (or talks); the texts lie still over it.
    const picture = talking ? `[0:v]${filter('setsar', { r: 1 })}${talking.overlays}` : `[0:v]${kenBurns(job, frames, settings)}`;
    graph.push(`${picture}[pic]`, `[pic][1:v]${filter('overlay', { x: 0, y: 0, eof_action: 'repeat' })},${tail}[v]`);
  } else {
    inputs.push(...inputArgs(baseVideo as MediaFile, ['-stream_loop', '-1']), ...inputArgs({ path: stillPath, type: 'image/png' }));
    graph.push(
      `[0:v]${filter('scale', { w: W, h: H, force_original_aspect_ratio: 'increase' })},${filter('crop', { w: W, h: H })},` +
        `${filter('setsar', { r: 1 })},${filter('fps', { fps })}[base]`,
    );
    graph.push(`[base][1:v]${filter('overlay', { x: 0, y: 0, eof_action: 'repeat' })},${tail}[v]`);
  }
  const manifest = videoManifest(ad, captions.placed, duration);

  const hasAudio = await addAudio(job, duration, scratchDir, files, inputs, graph);
  const args = [...inputs, '-filter_complex', graph.join(';'), ...encodeArgs(settings, hasAudio, duration, outPath)];
  return { args, durationSeconds: duration, frames, outPath, files, stillPath, mode, hasAudio, manifest };
}

/** A template video ad without a presenter: kinetic typography (./kinetic.ts) rather than a still. */
export const isKinetic = (job: GenerationJob) => job.type === 'video_ad' && !job.avatarImage;

/**
 * The kinetic ad's plan: the beats' grounds and product image as segments, the type drawn by one
 * `ass` filter, the audio. No captions: every line of the copy is a beat of its own.
 */
async function prepareKinetic(
  job: GenerationJob,
  duration: number,
  frames: number,
  scratchDir: string,
  outPath: string,
  files: string[],
  settings: VideoSettings,
): Promise<VideoPlan> {
  const kinetic = await kineticVideo(job, duration, settings.fps, scratchDir, files, {
    firstInput: 0,
    supersample: settings.zoomSupersample,
  });
  const inputs = [...kinetic.inputs];
  const graph = [...kinetic.segments, `${kinetic.picture},${filter('format', { pix_fmts: 'yuv420p' })}[v]`];
  const hasAudio = await addAudio(job, duration, scratchDir, files, inputs, graph);
  const safeZone = safeZoneFor(job.width, job.height);
  const manifest: MediaManifest = {
    width: job.width,
    height: job.height,
    texts: kinetic.texts,
    ...(safeZone ? { safeZone } : {}),
    sceneStarts: kinetic.sceneStarts,
    requestedSeconds: duration,
  };
  const args = [...inputs, '-filter_complex', graph.join(';'), ...encodeArgs(settings, hasAudio, duration, outPath)];
  return {
    args,
    durationSeconds: duration,
    frames,
    outPath,
    files,
    stillPath: files.find((f) => f.endsWith('.png'))!,
    mode: 'still',
    hasAudio,
    manifest,
  };
}

/**
 * The audio (the given file, else a track of the music library in the mood of the prompt,
 * src/media/music-bed.ts) as the next input and its chain in `graph`; whether there is any.
 */
async function addAudio(
  job: GenerationJob,
  duration: number,
  dir: string,
  files: string[],
  inputs: string[],
  graph: string[],
): Promise<boolean> {
  let audio = job.audio;
  if (!audio && job.generateAudio) {
    const bed = path.join(dir, 'music.wav');
    await renderMusicBed(bed, { seconds: duration, prompt: `${job.prompt} ${job.templateSlug ?? ''}`, words: [] });
    files.push(bed);
    audio = { path: bed, type: 'audio/wav' };
  }
  if (!audio) return false;
  const index = inputs.filter((a) => a === '-i').length;
  inputs.push(...inputArgs(audio));
  graph.push(audioTrack(index, duration));
  return true;
}

/** The still's texts (shown throughout) and the caption lines (each while it shows). */
function videoManifest(ad: ComposedAd, captions: PlacedText[], duration: number): MediaManifest {
  const still = ad.texts.map(({ text, box, role }) => ({ text, box, role, fromSeconds: 0, toSeconds: duration }));
  return { ...ad.manifest, texts: [...still, ...captions], requestedSeconds: duration };
}

/**
 * The talking presenter: the mouth shapes as inputs and the overlay chain that shows, per frame,
 * the shape the speech asks for (the spoken words' timings, else each caption line's words
 * spread over the time it shows). Null when nothing is said.
 */
async function mouthInputs(
  job: GenerationJob,
  ad: ComposedAd,
  chunks: TimedChunk[],
  duration: number,
  fps: number,
  dir: string,
  files: string[],
) {
  const spans = levelSpans(await speechLevels(job, chunks, duration, fps, dir), fps);
  if (spans.every((s) => s.length === 0)) return null;
  // A catalog presenter's mouth region is replaced whole by its drawn openings; a photo gets drawn ones.
  const drawn = job.presenter?.openings;
  const canvas = drawn ? ad.layout.mouth! : mouthCanvas(ad.layout.mouth!);
  const skin = drawn ? '' : await skinNear(ad, ad.layout.face!);
  const inputs: string[] = [];
  let overlays = '';
  for (let level = 1; level <= 3; level++) {
    if (spans[level - 1].length === 0) continue;
    const file = path.join(dir, `mouth-${level}.png`);
    await writeFile(file, drawn ? await presenterMouth(drawn[level - 1], canvas) : await mouthShape(level, canvas, skin));
    files.push(file);
    inputs.push(...inputArgs({ path: file, type: 'image/png' }));
    const enable = spans[level - 1].map((s) => `between(t,${fmt(s.a)},${fmt(s.b)})`).join('+');
    overlays += `[m${level}];[m${level}][${1 + inputs.filter((a) => a === '-i').length}:v]${filter('overlay', { x: canvas.x, y: canvas.y, eof_action: 'repeat', enable })}`;
  }
  return { inputs, overlays };
}

/**
 * The mouth's opening per frame: from the spoken words' timings; else from the loudness of the
 * given audio; else (a silent ad) from each caption line's words spread over the time it shows.
 */
async function speechLevels(job: GenerationJob, chunks: TimedChunk[], duration: number, fps: number, dir: string): Promise<number[]> {
  if (job.spokenWords?.length)
    return mouthLevels(
      job.spokenWords.map((w) => ({ a: w.startMs / 1000, b: w.endMs / 1000 })),
      duration,
      fps,
    );
  // The scratch folder lies in the job's folder, where the audio file is.
  if (job.audio) return envelopeLevels(job.audio, dir, path.dirname(dir), duration, fps);
  return mouthLevels(
    chunks.flatMap((c) => spreadWords(c.lines.join(' '), c.a, c.b)),
    duration,
    fps,
  );
}

/** A caption's words spread evenly over [a, b] by their length, with short pauses between them. */
function spreadWords(text: string, a: number, b: number): Spoken[] {
  const words = text.split(/\s+/).filter(Boolean);
  const total = words.reduce((n, w) => n + w.length + 1, 0);
  const out: Spoken[] = [];
  let t = a;
  for (const w of words) {
    const len = ((b - a) * (w.length + 1)) / total;
    out.push({ a: t, b: t + len * 0.85 });
    t += len;
  }
  return out;
}

/** The skin colour of the face (the mean of a patch on the cheek beside the mouth) in the composed picture. */
async function skinNear(ad: ComposedAd, face: Rect): Promise<string> {
  const { width: W, height: H } = ad.layout;
  const s = Math.max(2, Math.round(face.w * 0.08));
  const left = Math.min(W - s, Math.max(0, face.x + Math.round(face.w * 0.25)));
  const top = Math.min(H - s, Math.max(0, face.y + Math.round(face.h * 0.55)));
  const { data } = await sharp(ad.pixels, { raw: { width: W, height: H, channels: 4 } })
    .extract({ left, top, width: s, height: s })
    .resize(1, 1)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return `#${[data[0], data[1], data[2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** The job's duration (default 5 s), refused outside 0.5–120 s, as its dimensions when odd or under 16. */
function checkedDuration(job: GenerationJob): number {
  const duration = job.durationSeconds ?? 5;
  if (!(duration >= 0.5 && duration <= 120)) {
    throw new ProviderError(`video duration must be between 0.5 and 120 seconds, got ${duration}`, {
      retryable: false,
      code: 'invalid_duration',
    });
  }
  const { width: W, height: H } = job;
  if (W % 2 || H % 2 || W < 16 || H < 16) {
    throw new ProviderError(`video dimensions must be even and at least 16, got ${W}×${H}`, {
      retryable: false,
      code: 'invalid_dimensions',
    });
  }
  return duration;
}

/** The source video has a video stream and the audio file an audio stream, or a non-retryable error naming which. */
async function checkInputs(job: GenerationJob, baseVideo: MediaFile | undefined): Promise<void> {
  if (baseVideo) {
    const info = await probe(baseVideo).catch((err: Error) => {
      throw new ProviderError(`source video could not be read: ${err.message}`, {
        retryable: false,
        code: 'invalid_source_video',
        cause: err,
      });
    });
    if (!info.has_video) throw new ProviderError('source video has no video stream', { retryable: false, code: 'invalid_source_video' });
  }
  if (job.audio) {
    const info = await probe(job.audio).catch((err: Error) => {
      throw new ProviderError(`audio file could not be read: ${err.message}`, { retryable: false, code: 'invalid_audio', cause: err });
    });
    if (!info.has_audio) throw new ProviderError('audio file has no audio stream', { retryable: false, code: 'invalid_audio' });
  }
}

/** The still's animation: a gentle push-in (seeded by the prompt) that keeps the headline and CTA in frame. */
function kenBurns(job: GenerationJob, frames: number, settings: VideoSettings): string {
  const { width: W, height: H } = job;
  const rand = rng(`kenburns:${job.prompt}|${job.templateSlug ?? job.modelSlug ?? ''}`);
  const dz = 0.06 + rand() * 0.05;
  const px = [0.4, 0.5, 0.6][Math.floor(rand() * 3)];
  const py = [0.4, 0.5, 0.6][Math.floor(rand() * 3)];
  const ss = Math.max(1, settings.zoomSupersample);
  const last = Math.max(1, frames - 1);
  const steps = [
    ss > 1 ? filter('scale', { w: W * ss, h: H * ss, flags: 'bicubic' }) : null,
    filter('zoompan', {
      z: `1+${fmt(dz)}*(0.5-0.5*cos(PI*on/${last}))`,
      x: `(iw-iw/zoom)*${px}`,
      y: `(ih-ih/zoom)*${py}`,
      d: frames,
      s: `${W}x${H}`,
      fps: settings.fps,
    }),
    filter('setsar', { r: 1 }),
  ].filter((s): s is string => s !== null);
  return steps.join(',');
}

/** The given audio (input `idx`) as 48 kHz stereo, trimmed or padded to the duration, faded out at the end. */
function audioTrack(idx: number, duration: number): string {
  const fadeOut = Math.min(0.3, duration / 4);
  return (
    `[${idx}:a]${filter('aresample', { osr: 48000 })},${filter('aformat', { sample_fmts: 'fltp', channel_layouts: 'stereo' })},apad,` +
    `${filter('atrim', { start: 0, end: fmt(duration) })},asetpts=PTS-STARTPTS,${filter('afade', { t: 'out', st: fmt(duration - fadeOut), d: fmt(fadeOut) })}[a]`
  );
}

/** The output half of the arguments: H.264 (and AAC when there is audio) of exactly the duration into an MP4. */
function encodeArgs(settings: VideoSettings, hasAudio: boolean, duration: number, outPath: string): string[] {
  const fps = settings.fps;
  return [
    '-map',
    '[v]',
    ...(hasAudio ? ['-map', '[a]'] : ['-an']),
    '-c:v',
    'libx264',
    '-preset',
    settings.preset,
    '-crf',
    String(settings.crf),
    '-profile:v',
    'high',
    '-pix_fmt',
    'yuv420p',
    '-r',
    String(fps),
    '-g',
    String(fps * 2),
    ...(hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2'] : []),
    '-movflags',
    '+faststart',
    '-t',
    fmt(duration),
    '-f',
    'mp4',
    outPath,
  ];
}
