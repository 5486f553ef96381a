// Real media for the media quality checker's tests (test/media/quality*.test.ts): posters drawn with
// sharp and the bundled DejaVu fonts (as the local renderers draw text), videos and sound made by
// the bundled ffmpeg, each with the manifest a renderer would return for it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { FONT_BOLD } from '../../src/media/fonts.ts';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { type MediaManifest, manifestPathOf, type PlacedText, type SafeZone } from '../../src/media/quality/manifest.ts';

const run = promisify(execFile);

export interface TextSpec {
  text: string;
  px: number;
  color: string;
  x: number;
  y: number;
  /** Wrap width; the box the renderer claims is this wide when `claimWidth` is set (overflow). */
  maxWidth?: number;
  claimWidth?: number;
  role?: string;
  /** A dark panel behind the text (rgba), padded by 0.4 × px. */
  scrim?: string;
  /** One word in another colour (a karaoke caption's current word). */
  highlight?: { word: string; color: string };
}

export interface PosterSpec {
  width: number;
  height: number;
  /** An SVG fill for the whole canvas (a colour or `url(#g)` of the gradient below). */
  background: string;
  gradient?: [string, string];
  /** A busy pattern (circles and stripes) so scenes differ and scrims have something to cover. */
  pattern?: 'circles' | 'stripes' | 'none';
  texts: TextSpec[];
  safeZone?: SafeZone;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The text as pango markup, its highlighted word in its own colour. */
const highlighted = (t: TextSpec) =>
  t.highlight
    ? esc(t.text).replace(esc(t.highlight.word), `<span foreground="${t.highlight.color}">${esc(t.highlight.word)}</span>`)
    : esc(t.text);

async function textLayer(t: TextSpec): Promise<{ input: Buffer; width: number; height: number }> {
  const img = sharp({
    text: {
      text: `<span foreground="${t.color}">${highlighted(t)}</span>`,
      fontfile: FONT_BOLD,
      font: `DejaVu Sans Bold ${t.px}px`,
      rgba: true,
      ...(t.maxWidth ? { width: t.maxWidth } : {}),
      dpi: 72,
    },
  });
  const { data, info } = await img.png().toBuffer({ resolveWithObject: true });
  return { input: data, width: info.width, height: info.height };
}

function backgroundSvg(p: PosterSpec): string {
  const { width: w, height: h } = p;
  const shapes =
    p.pattern === 'circles'
      ? [0.2, 0.5, 0.8]
          .map((f, i) => `<circle cx="${w * f}" cy="${h * (0.3 + 0.2 * i)}" r="${w * 0.18}" fill="#ffffff" fill-opacity="0.25"/>`)
          .join('')
      : p.pattern === 'stripes'
        ? Array.from(
            { length: 8 },
            (_, i) => `<rect x="${(i * w) / 8}" y="0" width="${w / 16}" height="${h}" fill="#000000" fill-opacity="0.3"/>`,
          ).join('')
        : '';
  const grad = p.gradient
    ? `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${p.gradient[0]}"/><stop offset="1" stop-color="${p.gradient[1]}"/></linearGradient></defs>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${grad}<rect width="${w}" height="${h}" fill="${p.background}"/>${shapes}</svg>`;
}

/** Draws a poster into `file` and returns the manifest of what was drawn where. */
export async function poster(file: string, p: PosterSpec): Promise<MediaManifest> {
  const layers: OverlayOptions[] = [];
  const texts: PlacedText[] = [];
  for (const t of p.texts) {
    const layer = await textLayer(t);
    const fits = Math.min(layer.width, p.width - t.x);
    if (t.scrim) {
      const pad = Math.round(t.px * 0.4);
      const sw = Math.min(fits + 2 * pad, p.width - t.x + pad);
      const sh = layer.height + 2 * pad;
      layers.push({
        input: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${sw}" height="${sh}"><rect width="${sw}" height="${sh}" rx="${pad}" fill="${t.scrim}"/></svg>`,
        ),
        left: t.x - pad,
        top: t.y - pad,
      });
    }
    // A line longer than the canvas is cut at its edge, as an overflowing renderer would cut it.
    const input =
      fits < layer.width
        ? await sharp(layer.input).extract({ left: 0, top: 0, width: fits, height: layer.height }).toBuffer()
        : layer.input;
    layers.push({ input, left: t.x, top: t.y });
    texts.push({
      text: t.text,
      role: t.role ?? 'headline',
      color: t.color,
      ...(t.highlight ? { colors: [t.highlight.color] } : {}),
      box: { x: t.x, y: t.y, w: t.claimWidth ?? layer.width, h: layer.height },
    });
  }
  await sharp(Buffer.from(backgroundSvg(p)))
    .composite(layers)
    .png()
    .toFile(file);
  return { width: p.width, height: p.height, texts, ...(p.safeZone ? { safeZone: p.safeZone } : {}) };
}

/** Runs the bundled ffmpeg (tests build their media with it directly). */
export async function ffmpeg(args: string[]): Promise<void> {
  await run(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args]);
}

/** A video of still images (`seconds` each) with optional sound: a lavfi source, or a file. */
export async function slideVideo(file: string, images: string[], seconds: number, audio?: string | { file: string }): Promise<void> {
  const inputs = images.flatMap((img) => ['-loop', '1', '-t', String(seconds), '-i', img]);
  const concat = `${images.map((_, i) => `[${i}:v]setsar=1,fps=25,format=yuv420p[v${i}]`).join(';')};${images.map((_, i) => `[v${i}]`).join('')}concat=n=${images.length}:v=1:a=0[v]`;
  const total = images.length * seconds;
  await ffmpeg([
    ...inputs,
    ...(typeof audio === 'string' ? ['-f', 'lavfi', '-t', String(total), '-i', audio] : audio ? ['-i', audio.file] : []),
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    ...(audio ? ['-map', `${images.length}:a`, '-c:a', 'aac', '-b:a', '64k'] : []),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-t',
    String(total),
    file,
  ]);
}

/** Writes a manifest next to a file (FILE.media.json), as `npm run check:media` reads it. */
export function writeManifest(file: string, manifest: MediaManifest): void {
  fs.writeFileSync(manifestPathOf(file), JSON.stringify(manifest, null, 2));
}

export const inDir = (dir: string) => (name: string) => path.join(dir, name);
