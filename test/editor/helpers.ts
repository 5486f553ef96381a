// Shared fixtures of the editor tests: small real media files made with ffmpeg/sharp, and
// shortcuts to create projects, upload media and apply edits over HTTP.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import type { TestApp } from '../helpers/app.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'editor-fixtures-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

function ffmpeg(args: string[]): void {
  execFileSync(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
}

/** A solid-colour H.264/AAC MP4 (a tone on the audio track), `seconds` long. */
export function colorVideo(
  name: string,
  color: string,
  seconds: number,
  opts: { width?: number; height?: number; audio?: boolean; tone?: number } = {},
): Buffer {
  const file = path.join(dir, `${name}.mp4`);
  const size = `${opts.width ?? 320}x${opts.height ?? 240}`;
  const audio = opts.audio ?? true;
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `color=c=${color}:s=${size}:r=30:d=${seconds}`,
    ...(audio ? ['-f', 'lavfi', '-i', `sine=f=${opts.tone ?? 440}:d=${seconds}:sample_rate=48000`] : []),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-shortest'] : []),
    file,
  ]);
  return fs.readFileSync(file);
}

/** A sine tone as MP3. */
export function tone(name: string, seconds: number, freq = 660): Buffer {
  const file = path.join(dir, `${name}.mp3`);
  ffmpeg(['-f', 'lavfi', '-i', `sine=f=${freq}:d=${seconds}:sample_rate=44100`, '-c:a', 'libmp3lame', '-b:a', '96k', file]);
  return fs.readFileSync(file);
}

export async function colorPng(color: string, width = 64, height = 64): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
}

export const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

export async function createProject(app: TestApp, key: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await app.request('POST', '/api/v1/editor/videos', {
    key,
    body: { title: 'Test project', aspect_ratio: '9:16', fps: 30, ...body },
  });
  if (res.status !== 200) throw new Error(`create project: ${res.status} ${res.text}`);
  return res.body;
}

export async function upload(
  app: TestApp,
  key: string,
  filename: string,
  type: string,
  bytes: Buffer,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await app.request('POST', '/api/v1/editor/media', {
    key,
    body: { media: { filename, content_type: type, data: bytes.toString('base64') }, ...extra },
  });
  if (res.status !== 200) throw new Error(`upload ${filename}: ${res.status} ${res.text}`);
  return res.body;
}

export async function addMedia(app: TestApp, key: string, videoId: number, body: Record<string, unknown>): Promise<any> {
  const res = await app.request('POST', `/api/v1/editor/videos/${videoId}/media`, { key, body });
  if (res.status !== 200) throw new Error(`add media: ${res.status} ${res.text}`);
  return res.body;
}

export async function edit(app: TestApp, key: string, videoId: number, operations: unknown[], extra: Record<string, unknown> = {}) {
  return app.request('PATCH', `/api/v1/editor/videos/${videoId}`, { key, body: { operations, ...extra } });
}

export async function editOk(
  app: TestApp,
  key: string,
  videoId: number,
  operations: unknown[],
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await edit(app, key, videoId, operations, extra);
  if (res.status !== 200) throw new Error(`edit: ${res.status} ${res.text}`);
  return res.body;
}

export const item = (video: any, id: string) => video.items.find((i: any) => i.item_id === id);

/** Queues an export and polls it until it is completed or failed (2 minutes at most); every status seen is kept. */
export async function exportAndWait(app: TestApp, key: string, id: number, body?: Record<string, unknown>) {
  const q = await app.request('POST', `/api/v1/editor/videos/${id}/exports`, { key, body });
  if (q.status !== 200) throw new Error(`export: ${q.status} ${q.text}`);
  const seen = new Set<string>();
  const deadline = Date.now() + 120_000;
  for (;;) {
    const r = await app.request('GET', `/api/v1/editor/videos/${id}/exports/${q.body.id}`, { key });
    seen.add(r.body.status);
    if (r.body.status === 'completed' || r.body.status === 'failed') return { queued: q.body, done: r.body, seen };
    if (Date.now() > deadline) throw new Error('export timed out');
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Downloads a (signed) media URL into this file's fixture folder; returns the local path. */
export async function download(url: string, name: string): Promise<string> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`download ${url}: ${res.status}`);
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}
