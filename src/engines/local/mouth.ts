// A UGC presenter's mouth moving with the speech: per video frame a mouth shape (closed, or one
// of three openings) chosen from when the words are said (or from the loudness of the audio when
// no word timings come with it), drawn as overlays on the portrait's mouth and switched by ffmpeg
// `overlay` filters enabled over the spans of each shape. A catalog presenter (an illustrated
// person of src/services/catalog/presenters.ts) shows its own drawn mouths instead (presenterMouth).
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { inputArgs, runFfmpeg, type MediaFile } from '../../media/ffmpeg.ts';
import type { Rect } from './layout.ts';

/** A span of speech (seconds). */
export interface Spoken {
  a: number;
  b: number;
}

/** How open the mouth is per frame (0 closed … 3 wide): open through a word, its openings changing with each syllable-long step (~90 ms), closed between words. */
export function mouthLevels(words: readonly Spoken[], duration: number, fps: number): number[] {
  const frames = Math.max(1, Math.round(duration * fps));
  const levels = new Array<number>(frames).fill(0);
  const pattern = [2, 3, 1, 3, 2, 1];
  words.forEach((w, i) => {
    for (let f = Math.ceil(w.a * fps); f < Math.min(frames, w.b * fps); f++) {
      const t = f / fps;
      const step = Math.floor((t - w.a) / 0.09);
      levels[f] = w.b - t < 0.05 ? 1 : pattern[(step + i) % pattern.length];
    }
  });
  return levels;
}

/** Per opening 1–3, the time spans (seconds) it shows, from per-frame levels. */
export function levelSpans(levels: readonly number[], fps: number): Spoken[][] {
  const spans: Spoken[][] = [[], [], []];
  let f = 0;
  while (f < levels.length) {
    let g = f;
    while (g + 1 < levels.length && levels[g + 1] === levels[f]) g++;
    if (levels[f] > 0) spans[levels[f] - 1].push({ a: f / fps, b: (g + 1) / fps - 0.001 });
    f = g + 1;
  }
  return spans;
}

/** The overlay box of the mouth shapes: the mouth box grown to hold the widest opening. */
export function mouthCanvas(mouth: Rect): Rect {
  const w = Math.round(mouth.w * 1.3);
  const h = Math.round(mouth.w * 0.75);
  return { x: mouth.x + Math.round((mouth.w - w) / 2), y: mouth.y + Math.round(mouth.h / 2 - h / 2), w, h };
}

/** The PNG of opening `level` (1–3) on a canvas of mouthCanvas size: the skin over the drawn mouth, then an open mouth with teeth. */
export async function mouthShape(level: number, canvas: Rect, skin: string): Promise<Buffer> {
  const { w, h } = canvas;
  const cx = w / 2;
  const cy = h / 2;
  const mw = w * 0.34;
  const mh = (w * [0.1, 0.18, 0.26][level - 1]) / 1.3;
  const lip = Math.max(1, Math.round(w * 0.025));
  const body =
    `<defs><radialGradient id="s"><stop offset="0.7" stop-color="${skin}"/><stop offset="1" stop-color="${skin}" stop-opacity="0"/></radialGradient></defs>` +
    `<ellipse cx="${cx}" cy="${cy}" rx="${w * 0.48}" ry="${h * 0.46}" fill="url(#s)"/>` +
    `<ellipse cx="${cx}" cy="${cy}" rx="${mw}" ry="${mh}" fill="#3b0d12" stroke="#9c3b43" stroke-width="${lip}"/>` +
    (level > 1 ? `<rect x="${cx - mw * 0.6}" y="${cy - mh + lip}" width="${mw * 1.2}" height="${mh * 0.35}" fill="#f4efe8"/>` : '');
  return sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`))
    .png()
    .toBuffer();
}

/**
 * A catalog presenter's opening as an overlay: its drawn mouth region (the card's own mouth, open,
 * src/services/catalog/presenters.ts) scaled onto the mouth rect of the frame (`canvas`), where the
 * composer scaled the card's closed mouth.
 */
export async function presenterMouth(opening: Buffer, canvas: Rect): Promise<Buffer> {
  return sharp(opening).resize(canvas.w, canvas.h, { fit: 'fill' }).png().toBuffer();
}

/**
 * How open the mouth is per frame from the loudness of an audio file (decoded to 8 kHz mono by
 * ffmpeg into `dir`, which must be inside `cwd`, the job's folder): each frame's RMS against the
 * loud end of the file (its 95th percentile), closed under 15 %.
 */
export async function envelopeLevels(audio: MediaFile, dir: string, cwd: string, duration: number, fps: number): Promise<number[]> {
  const pcm = path.join(dir, 'envelope.pcm');
  await runFfmpeg([...inputArgs(audio), '-t', String(duration), '-ac', '1', '-ar', '8000', '-f', 's16le', pcm], { cwd });
  const buf = await readFile(pcm);
  await rm(pcm, { force: true });
  const per = Math.round(8000 / fps);
  const frames = Math.max(1, Math.round(duration * fps));
  const rms = Array.from({ length: frames }, (_, f) => {
    let sum = 0;
    let n = 0;
    for (let i = f * per; i < (f + 1) * per && i * 2 + 1 < buf.length; i++, n++) sum += (buf.readInt16LE(i * 2) / 32768) ** 2;
    return n ? Math.sqrt(sum / n) : 0;
  });
  const loud = [...rms].sort((a, b) => a - b)[Math.floor(rms.length * 0.95)] || 1;
  return rms.map((v) => (v / loud < 0.15 || v < 0.003 ? 0 : v / loud < 0.4 ? 1 : v / loud < 0.7 ? 2 : 3));
}
