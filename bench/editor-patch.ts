// Benchmark: PATCH /editor/videos/{id} with 20 operations on a project of 200 items, over HTTP
// against the real service (API process on embedded PostgreSQL), one client, sequential
// requests: median and p99 latency (target: median under 20 ms). Every PATCH takes the project's
// row lock, applies the 20 operations to the whole timeline document, writes it and the history
// row in one transaction and returns the whole project.
// Usage: node bench/editor-patch.ts [--requests N]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startService } from './lib/servers.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '300' } } });
const requests = Number(values.requests);
const say = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-editor-'));
say('editor PATCH bench: starting the service (API only, embedded PostgreSQL) …');
const service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'error' });
const creds = JSON.parse(fs.readFileSync(path.join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
const pgPort = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
const dbUrl = `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${pgPort}/media_api`;
const admin = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['src/cli/admin.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: dbUrl },
  });
  return JSON.parse(stdout);
};

try {
  const org = await admin('org', 'create', '--name', 'Bench');
  const key = (await admin('key', 'create', '--org', org.id, '--scopes', 'generations:write')).key;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${service.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json as any;
  };

  // A 200-item project: 60 images on 6 tracks, 140 text overlays.
  const project = await api('POST', '/api/v1/editor/videos', { title: 'Bench project', aspect_ratio: '9:16' });
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
  const media = await api('POST', '/api/v1/editor/media', { media: { filename: 'tile.png', data: png.toString('base64') } });
  for (let k = 0; k < 60; k++) {
    await api('POST', `/api/v1/editor/videos/${project.id}/media`, {
      media_id: media.media.id,
      from_seconds: (k % 10) * 3,
      duration_seconds: 3,
      fit: 'contain',
    });
  }
  for (let batch = 0; batch < 2; batch++) {
    await api('PATCH', `/api/v1/editor/videos/${project.id}`, {
      operations: Array.from({ length: 70 }, (_, k) => ({
        type: 'add_text',
        text: `Overlay ${batch * 70 + k}`,
        from_seconds: ((batch * 70 + k) % 30) * 1,
        duration_seconds: 2,
      })),
    });
  }
  let video = await api('GET', `/api/v1/editor/videos/${project.id}`);
  say(
    `editor PATCH bench: project ${project.id} with ${video.items.length} items on ${video.tracks.length} tracks; ${requests} PATCHes of 20 operations`,
  );
  const images = video.items.filter((i: any) => i.type === 'image').map((i: any) => i.item_id);
  const texts = video.items.filter((i: any) => i.type === 'text').map((i: any) => i.item_id);

  const opsFor = (n: number) => {
    const img = (k: number) => images[(n * 7 + k) % images.length];
    const txt = (k: number) => texts[(n * 11 + k) % texts.length];
    return [
      { type: 'set_item_timing', item_id: img(0), duration_seconds: 2 + (n % 5) * 0.1 },
      { type: 'set_item_transform', item_id: img(1), left: 0.1, top: 0.1 + (n % 7) * 0.05, width: 0.5, height: 0.3 },
      {
        type: 'set_item_animation',
        item_id: img(2),
        enter: { type: 'fade', duration_seconds: 0.3 },
        exit: n % 2 ? null : { type: 'slide', direction: 'left' },
      },
      { type: 'set_item_layer_order', item_id: img(3), position: n % 2 ? 'forward' : 'backward' },
      { type: 'update_text', item_id: txt(0), text: `Edited ${n}`, style: { font_size: 50 + (n % 20) } },
      { type: 'update_text', item_id: txt(1), style: { color: n % 2 ? '#FFD400' : '#FFFFFF' } },
      { type: 'set_item_transform', item_id: txt(2), opacity: 0.5 + (n % 5) * 0.1 },
      { type: 'set_item_timing', item_id: txt(3), from_seconds: (n % 20) * 0.5 },
      { type: 'set_item_animation', item_id: txt(4), enter: { type: 'scale' } },
      { type: 'set_title', title: `Bench project ${n}` },
      { type: 'set_item_transform', item_id: img(4), opacity: 0.9 },
      { type: 'set_item_timing', item_id: img(5), from_seconds: (n % 9) * 3 },
      { type: 'update_text', item_id: txt(5), style: { align: n % 2 ? 'left' : 'center' } },
      { type: 'set_item_animation', item_id: txt(6), exit: { type: 'fade' } },
      { type: 'set_item_layer_order', item_id: txt(7), position: 'front' },
      { type: 'add_text', text: `Added ${n}`, from_seconds: n % 25, duration_seconds: 1.5 },
      { type: 'set_item_transform', item_id: img(6), left: (n % 3) * 0.2 },
      { type: 'update_text', item_id: txt(8), text: `Line ${n}` },
      { type: 'set_item_timing', item_id: txt(9), duration_seconds: 1 + (n % 3) * 0.5 },
      { type: 'set_item_animation', item_id: img(7), enter: null },
    ];
  };

  // Warm-up, then keep the project at 200 items: each measured PATCH adds one text, the next removes it.
  for (let n = 0; n < 20; n++) {
    const r = await api('PATCH', `/api/v1/editor/videos/${project.id}`, { operations: opsFor(n) });
    const added = r.applied_operations[15].item_ids[0];
    await api('PATCH', `/api/v1/editor/videos/${project.id}`, { operations: [{ type: 'remove_item', item_id: added }] });
  }
  const times: number[] = [];
  for (let n = 0; n < requests; n++) {
    const ops = opsFor(n + 100);
    const t0 = performance.now();
    const r = await api('PATCH', `/api/v1/editor/videos/${project.id}`, { instructions: `bench edit ${n}`, operations: ops });
    times.push(performance.now() - t0);
    await api('PATCH', `/api/v1/editor/videos/${project.id}`, {
      operations: [{ type: 'remove_item', item_id: r.applied_operations[15].item_ids[0] }],
    });
  }
  video = await api('GET', `/api/v1/editor/videos/${project.id}`);
  const size = Buffer.byteLength(JSON.stringify(video));
  const median = pct(times, 50);
  say(`editor PATCH bench: ${video.items.length} items after the run, response ${(size / 1024).toFixed(0)} KiB`);
  say(
    `editor PATCH bench: latency median ${median.toFixed(2)} ms, p90 ${pct(times, 90).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`,
  );
  say(`editor PATCH bench: MEDIAN ${median.toFixed(2)} ms (target < 20 ms) ${median < 20 ? 'MET' : 'NOT MET'}`);
} finally {
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
