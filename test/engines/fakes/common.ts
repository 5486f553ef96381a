// What the provider fakes share: a node:http server on 127.0.0.1 that records every request
// (method, path, query, headers, parsed body) and serves output files under /files/; flat-colour
// JPEGs and MP4s for fakes that serve media.
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runFfmpeg } from '../../../src/media/ffmpeg.ts';

export interface Seen {
  method: string;
  path: string;
  /** The query string's parameters. */
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the multipart form's entries (files as Buffers). */
  body?: any;
  at: number;
}

export interface Fake {
  url: string;
  seen: Seen[];
  files: Map<string, { type: string; bytes: Buffer }>;
  close(): Promise<void>;
}

export type Handler = (
  req: Seen,
  res: http.ServerResponse,
  json: (status: number, body: unknown, headers?: Record<string, string>) => void,
) => unknown;

export async function startFake(handler: Handler): Promise<Fake> {
  const seen: Seen[] = [];
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const target = new URL(req.url ?? '/', 'http://x');
    const entry: Seen = {
      method: req.method ?? '',
      path: target.pathname,
      query: target.searchParams,
      headers: req.headers,
      at: Date.now(),
    };
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (entry.path.startsWith('/files/')) {
      seen.push(entry);
      const f = files.get(entry.path.slice(7));
      return f ? res.writeHead(200, { 'content-type': f.type }).end(f.bytes) : json(404, { detail: 'Not found.' });
    }
    const ct = String(req.headers['content-type'] ?? '');
    try {
      if (ct.startsWith('application/json')) entry.body = JSON.parse(raw.toString('utf8'));
      else if (ct.startsWith('multipart/form-data')) {
        const form = await new Response(raw, { headers: { 'content-type': ct } }).formData();
        const out: Record<string, unknown[]> = {};
        for (const [k, v] of form.entries())
          (out[k] ??= []).push(typeof v === 'string' ? v : { name: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) });
        entry.body = out;
      } else if (raw.length) entry.body = raw;
    } catch {
      entry.body = Symbol.for('unparseable');
    }
    seen.push(entry);
    try {
      await handler(entry, res, json);
    } catch (err) {
      // A fake that breaks answers as a failing server would (and says why), instead of taking the
      // test process down with it.
      process.stderr.write(`fake ${entry.method} ${entry.path} failed: ${(err as Error)?.stack ?? err}\n`);
      if (!res.headersSent) json(500, { detail: `the fake failed: ${(err as Error)?.message ?? err}` });
      else res.destroy();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    files,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** A PNG of a flat colour, the size a model would answer for the aspect ratio. */
export async function png(width: number, height: number, color = '#2a7fff'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
}

/** Width and height with the long side `long` for a 'W:H' ratio (even numbers). */
export function sizeFor(aspect: string, long: number): { width: number; height: number } {
  const [w, h] = aspect.split(':').map(Number);
  const even = (v: number) => 2 * Math.round(v / 2);
  return w >= h ? { width: long, height: even((long * h) / w) } : { width: even((long * w) / h), height: long };
}

/** A JPEG of a flat colour (what a stock provider serves, at the size its URL names). */
export async function jpeg(width: number, height: number, color: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/**
 * A silent H.264 MP4 of a flat colour (10 fps), made by our ffmpeg; with `moving`, a white bar an
 * eighth of the width wide crosses it left to right every 2 seconds (footage whose frames differ).
 */
export async function mp4(width: number, height: number, seconds: number, color: string, moving = false): Promise<Buffer> {
  const file = path.join(os.tmpdir(), `stock-fake-${randomUUID()}.mp4`);
  const src = `color=c=${color.replace('#', '0x')}:s=${width}x${height}:r=10:d=${seconds}`;
  const bar = `color=c=white:s=${2 * Math.max(1, Math.round(width / 16))}x${height}:r=10:d=${seconds}`;
  const inputs = moving ? ['-f', 'lavfi', '-i', src, '-f', 'lavfi', '-i', bar] : ['-f', 'lavfi', '-i', src];
  const graph = moving ? ['-filter_complex', "[0:v][1:v]overlay=x='(W-w)*mod(t,2)/2':y=0:shortest=1"] : [];
  await runFfmpeg([...inputs, ...graph, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', file]);
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}
