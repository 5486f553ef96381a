// What the image-model tests of slideshows and faceless videos share (test/jobs/*-image-model.test.ts):
// the environment that points SLIDESHOW_IMAGE_MODEL and FACELESS_IMAGE_MODEL at Flux on the
// Replicate fake, polling a resource over HTTP, the share of an image's pixels near a colour, and
// a job attempt stopped once the model's jobs are submitted (a worker killed while it polls).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { TestApp } from './app.ts';

/** The environment of a deployment whose image models are Flux on the Replicate fake at `url`. */
export const imageModelEnv = (url: string, token: string) => ({
  OUTBOUND_ALLOW_IPS: '127.0.0.1',
  RATE_LIMIT_GENERATIONS: '1000',
  REPLICATE_API_BASE: url,
  REPLICATE_API_TOKEN: token,
  PROVIDER_POLL_MS: '40',
  SLIDESHOW_IMAGE_MODEL: 'flux-image',
  FACELESS_SCENE_SOURCE: 'image_model',
  FACELESS_IMAGE_MODEL: 'flux-image',
});
export const FLUX = { kind: 'hosted', provider: 'replicate', model: 'black-forest-labs/flux-1.1-pro' };
/** The Replicate fake's picture. */
export const BLUE: [number, number, number] = [0x2a, 0x7f, 0xff];

/** Completed or failed. */
export const finished = (b: any) => b.status === 'completed' || b.status === 'error';

/** GET `url` until `done` holds for its body. */
export async function poll(a: TestApp, key: string, url: string, done: (b: any) => boolean = finished): Promise<any> {
  const end = Date.now() + 180_000;
  for (;;) {
    const res = await a.request('GET', url, { key });
    if (done(res.body)) return res.body;
    if (Date.now() > end) throw new Error(`${url} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The share of pixels of a region (fractions of the image) near `rgb`. */
export async function share(img: Buffer, rgb: readonly number[], box = { x: 0, y: 0, w: 1, h: 1 }, tol = 90): Promise<number> {
  const meta = await sharp(img).metadata();
  const region = {
    left: Math.round(box.x * meta.width!),
    top: Math.round(box.y * meta.height!),
    width: Math.round(box.w * meta.width!),
    height: Math.round(box.h * meta.height!),
  };
  const { data } = await sharp(img).extract(region).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let i = 0; i < data.length; i += 3) {
    if (Math.abs(data[i] - rgb[0]) + Math.abs(data[i + 1] - rgb[1]) + Math.abs(data[i + 2] - rgb[2]) < tol) n++;
  }
  return n / (data.length / 3);
}

export const bytesOf = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

/** The tools of a job run directly (no queue). */
export function tools(signal: AbortSignal) {
  return { signal, progress() {}, annotate() {} };
}

/** Runs an attempt and stops it (a worker killed) once `submitted` holds and the job ids had time to be stored. */
export async function cutOff(run: (signal: AbortSignal) => Promise<void>, submitted: () => boolean): Promise<void> {
  const abort = new AbortController();
  const attempt = run(abort.signal).catch((err: unknown) => err);
  const end = Date.now() + 60_000;
  while (!submitted()) {
    if (Date.now() > end) throw new Error('the model jobs were never submitted');
    await new Promise((r) => setTimeout(r, 20));
  }
  // Let the job ids be stored (they are, before the first poll), then stop the worker.
  await new Promise((r) => setTimeout(r, 200));
  abort.abort(new Error('worker killed'));
  await attempt;
}

/** The MP4 at `url` saved in `dir` as `name`; its path. */
export async function saveMp4(url: string, dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, await bytesOf(url));
  return file;
}
