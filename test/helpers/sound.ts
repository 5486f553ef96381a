// The sound of a delivered MP4, as 16 kHz mono samples (decoded by our ffmpeg), for tests that
// listen for a fake's tone in a rendered video; and the loudest moment of a file's audio, for
// tests that an output has sound or no audio stream at all (never a silent track).
import { spawn, spawnSync } from 'node:child_process';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';

/** The audio's peak level in dBFS (ffmpeg volumedetect's max_volume; -Infinity for digital silence), or null without an audio stream. */
export function maxVolume(file: string): number | null {
  const out = spawnSync(FFMPEG_PATH, ['-hide_banner', '-nostats', '-i', file, '-vn', '-af', 'volumedetect', '-f', 'null', '-'], {
    encoding: 'utf8',
  });
  if (!/Stream #\S+: Audio/.test(out.stderr)) return null;
  const m = /max_volume: (-?[\d.]+|-inf) dB/.exec(out.stderr);
  return !m || m[1] === '-inf' ? Number.NEGATIVE_INFINITY : Number(m[1]);
}

/** A level below this (dBFS peak) is a silent track. */
export const SILENT_DB = -60;

/** The MP4 at `url`'s sound as 16 kHz mono 16-bit samples. */
export async function soundOf(url: string): Promise<Int16Array> {
  const mp4 = Buffer.from(await (await fetch(url)).arrayBuffer());
  return new Promise((resolve, reject) => {
    // biome-ignore format: ffmpeg's arguments read best as option-value pairs
    const child = spawn(FFMPEG_PATH, [
      '-hide_banner', '-loglevel', 'error', '-f', 'mp4', '-i', 'pipe:0',
      '-vn', '-ac', '1', '-ar', '16000', '-f', 's16le', 'pipe:1',
    ]);
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg exited ${code}`));
      const all = Buffer.concat(out);
      resolve(new Int16Array(all.buffer.slice(all.byteOffset, all.byteOffset + (all.length & ~1))));
    });
    child.stdin.end(mp4);
  });
}
