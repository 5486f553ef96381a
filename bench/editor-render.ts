// Benchmark: exporting a 30 s 1080×1920 editor project of 10 items (four video clips with a
// cross-fade, three image overlays with animations, a title, word-timed captions and background
// music) through the API and the export worker (POST …/exports until completed: queue pickup,
// snapshot, plan, the ffmpeg run, probe, storage) against the wall time of the single ffmpeg
// command that export runs, executed bare with the same arguments. Rounds alternate which goes
// first; the median overhead ratio is printed (target ≤ 1.2).
// Usage: node bench/editor-render.ts [--rounds N]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { FFMPEG_PATH } from '../src/media/ffmpeg.ts';
import { planRender } from '../src/engines/render/ffmpeg.ts';
import type { RenderMedia } from '../src/engines/render/types.ts';
import { startService } from '../src/server.ts';
import { createApiKey } from '../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../src/services/workspaces/organizations.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const say = (s: string) => process.stdout.write(`${s}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-editor-render-'));
const ff = (args: string[]) => execFileSync(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

// Source media: 720×1280 clips with sound, 30 s of music, three overlay images.
const clips = ['testsrc2', 'smptebars', 'rgbtestsrc', 'testsrc'].map((src, k) => {
  const file = path.join(dir, `clip${k}.mp4`);
  ff([
    '-f',
    'lavfi',
    '-i',
    `${src}=s=720x1280:r=30:d=9`,
    '-f',
    'lavfi',
    '-i',
    `sine=f=${300 + 100 * k}:d=9`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
  return file;
});
const music = path.join(dir, 'music.mp3');
ff([
  '-f',
  'lavfi',
  '-i',
  'aevalsrc=0.2*sin(2*PI*220*t)*(0.6+0.4*sin(2*PI*2*t))|0.2*sin(2*PI*330*t):d=30:s=44100',
  '-c:a',
  'libmp3lame',
  '-b:a',
  '128k',
  music,
]);
const images = await Promise.all(
  ['#ff5a5f', '#00a699', '#fc642d'].map(async (c, k) => {
    const file = path.join(dir, `img${k}.png`);
    await sharp({ create: { width: 600, height: 600, channels: 4, background: c } })
      .composite([
        { input: Buffer.from(`<svg width="600" height="600"><circle cx="300" cy="300" r="200" fill="white" opacity="0.8"/></svg>`) },
      ])
      .png()
      .toFile(file);
    return file;
  }),
);

say('editor render bench: starting the service with workers (embedded PostgreSQL) …');
// Its own temporary folder: the embedded PostgreSQL (run as another user when we are root) must reach it.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-editor-render-data-'));
const config = loadConfig({ ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'error', DEMO_WORKSPACE: '0' });
const service = await startService({ config, workers: true });
try {
  const org = await createOrganization(service.ctx.db, { name: 'Bench', plan: 'paid', credits: 0 });
  const key = (await createApiKey(service.ctx.db, { orgId: org.id, scopes: ['generations:write'] })).key;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${service.address}/api/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const uploadFile = async (file: string) =>
    (await api('POST', '/editor/media', { media: { filename: path.basename(file), data: fs.readFileSync(file).toString('base64') } })).media
      .id as string;

  const p = await api('POST', '/editor/videos', { title: 'Render bench', aspect_ratio: '9:16', fps: 30 });
  const ids = {
    clips: await Promise.all(clips.map(uploadFile)),
    images: await Promise.all(images.map(uploadFile)),
    music: await uploadFile(music),
  };
  const added: string[] = [];
  for (const [k, id] of ids.clips.entries()) {
    added.push(
      (await api('POST', `/editor/videos/${p.id}/media`, { media_id: id, from_seconds: k * 7.5, duration_seconds: 7.5, fit: 'cover' })).item
        .item_id,
    );
  }
  const overlays: string[] = [];
  for (const [k, id] of ids.images.entries()) {
    overlays.push(
      (await api('POST', `/editor/videos/${p.id}/media`, { media_id: id, from_seconds: 3 + k * 8, duration_seconds: 5, fit: 'contain' }))
        .item.item_id,
    );
  }
  await api('POST', `/editor/videos/${p.id}/media`, { media_id: ids.music, from_seconds: 0, duration_seconds: 30, audio_role: 'music' });
  const words =
    'Slow mornings rich aroma and a clean cup every time this week only at the launch price so grab yours before it is gone'.split(' ');
  const cues = [];
  for (let c = 0; c < 12; c++) {
    const start = c * 2400;
    const w = words.slice((c * 2) % words.length, ((c * 2) % words.length) + 4);
    cues.push({
      text: w.join(' '),
      startMs: start,
      endMs: start + 2200,
      words: w.map((x, j) => ({ text: x, startMs: start + j * 500, endMs: start + j * 500 + 450 })),
    });
  }
  await api('PATCH', `/editor/videos/${p.id}`, {
    operations: [
      { type: 'apply_item_transition', from_item_id: added[0], to_item_id: added[1], overlap_seconds: 0.5 },
      ...overlays.map((id, k) => ({ type: 'set_item_transform', item_id: id, left: 0.25, top: 0.1 + k * 0.05, width: 0.5, height: 0.28 })),
      { type: 'set_item_animation', item_id: overlays[0], enter: { type: 'scale', duration_seconds: 0.6 }, exit: { type: 'fade' } },
      { type: 'set_item_animation', item_id: overlays[1], enter: { type: 'slide', direction: 'left' }, exit: { type: 'zoom' } },
      { type: 'set_item_animation', item_id: overlays[2], enter: { type: 'bounce' }, exit: { type: 'slide', direction: 'right' } },
      { type: 'set_audio_levels', audio_roles: ['music'], volume_db: -12, audio_fade_out_seconds: 2 },
      {
        type: 'add_text',
        text: 'Morning Ritual',
        from_seconds: 0,
        duration_seconds: 30,
        style: { top: 0.06, font_size: 84, background_color: '#00000099' },
      },
      { type: 'add_captions', from_seconds: 0.5, captions: cues, style: { font_size: 64, highlight_color: '#FFD400' } },
    ],
  });
  const video = await api('GET', `/editor/videos/${p.id}`);
  say(
    `editor render bench: ${video.width}×${video.height} ${video.fps} fps, ${video.duration_seconds} s, ${video.items.length} items, ${rounds} rounds`,
  );

  // The bare command: the very plan the worker makes, run directly.
  const mediaRows = await service.ctx
    .sql`select id, storage_key, content_type, kind, width, height, duration_seconds, has_audio from media where org_id = ${org.id}`;
  const files = new Map<string, RenderMedia>();
  const planDir = path.join(dir, 'plan');
  fs.mkdirSync(planDir);
  for (const m of mediaRows) {
    const file = path.join(planDir, `input-${m.id}${path.extname(m.storage_key)}`);
    await service.ctx.storage.copyToFile(m.storage_key, file);
    files.set(m.id, {
      path: file,
      type: m.content_type,
      kind: m.kind,
      width: m.width,
      height: m.height,
      durationSeconds: m.duration_seconds,
      hasAudio: m.has_audio,
    });
  }
  const plan = await planRender(
    { width: video.width, height: video.height, fps: video.fps, tracks: video.tracks, items: video.items, media: files },
    planDir,
    path.join(planDir, 'bare.mp4'),
  );
  const bare = async () => {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', ...plan.args], {
        stdio: ['ignore', 'ignore', 'pipe'],
        cwd: planDir,
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg ${code}: ${err}`))));
    });
    return (performance.now() - t0) / 1000;
  };
  const exported = async () => {
    const t0 = performance.now();
    const q = await api('POST', `/editor/videos/${p.id}/exports`, {});
    for (;;) {
      const r = await api('GET', `/editor/videos/${p.id}/exports/${q.id}`);
      if (r.status === 'completed') break;
      if (r.status === 'failed') throw new Error(`export failed: ${JSON.stringify(r.error)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    return (performance.now() - t0) / 1000;
  };
  const ratios: number[] = [];
  const bareTimes: number[] = [];
  const exportTimes: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? ['bare', 'export'] : ['export', 'bare'];
    const t: Record<string, number> = {};
    for (const which of order) t[which] = which === 'bare' ? await bare() : await exported();
    ratios.push(t.export / t.bare);
    bareTimes.push(t.bare);
    exportTimes.push(t.export);
    say(
      `  round ${i + 1}: ffmpeg alone ${t.bare.toFixed(2)} s | export via API + worker ${t.export.toFixed(2)} s | ratio ${(t.export / t.bare).toFixed(3)}`,
    );
  }
  const phases = await service.ctx
    .sql`select extract(epoch from started_at - created_at) as pickup, extract(epoch from completed_at - started_at) as work from editor_exports where video_id = ${p.id} order by created_at`;
  say(
    `editor render bench: export phases (s): ${phases.map((r) => `pickup ${Number(r.pickup).toFixed(2)} + render/store ${Number(r.work).toFixed(2)}`).join(' | ')}`,
  );
  const ratio = median(exportTimes) / median(bareTimes);
  say(
    `editor render bench: ffmpeg alone median ${median(bareTimes).toFixed(2)} s, export median ${median(exportTimes).toFixed(2)} s, median of per-round ratios ${median(ratios).toFixed(3)}`,
  );
  say(
    `editor render bench: RATIO ${ratio.toFixed(3)} (median export / median ffmpeg alone; target ≤ 1.2) ${ratio <= 1.2 ? 'MET' : 'NOT MET'}`,
  );
} finally {
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
