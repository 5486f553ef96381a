// Benchmark: one brief → a finished 30 s 9:16 faceless video through MCP only (the
// create_faceless_video tool, get_video polled every 100 ms, the signed MP4 downloaded), against
// the bare ffmpeg render of the same timeline (the plan the job's render stage runs, taken from
// the video's editor project through get_editor_video, executed directly) in the same run.
// Prints the wall time, the per-stage times (as the poller saw the stages change, and as the job
// measured them), the bare render and the ratio. Goal: a finished video in under 30 s of wall
// time on a 2-core machine.
// Usage: node bench/faceless.ts [--duration S] [--prompt TEXT]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { freePort } from '../src/net/ports.ts';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config.ts';
import { FFMPEG_PATH, probe } from '../src/media/ffmpeg.ts';
import { planRender } from '../src/engines/render/ffmpeg.ts';
import type { RenderMedia } from '../src/engines/render/types.ts';
import { startService } from '../src/server.ts';
import { createApiKey } from '../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../src/services/workspaces/organizations.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '30' },
    prompt: {
      type: 'string',
      default: 'Why sparkling water is the easiest healthy swap for soda: zero sugar, real fizz, and it keeps you hydrated all day.',
    },
  },
});
const say = (s: string) => process.stdout.write(`${s}\n`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-faceless-'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-faceless-data-'));

say('faceless bench: starting the service with workers (embedded PostgreSQL) …');
// A known port: the signed media URL is built from PUBLIC_BASE_URL.
const port = await freePort();
const config = loadConfig({
  ...process.env,
  PORT: String(port),
  PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'error',
  DEMO_WORKSPACE: '0',
});
const service = await startService({ config, workers: true });
let client: Client | undefined;
try {
  const org = await createOrganization(service.ctx.db, { name: 'Bench', plan: 'paid', credits: 100_000 });
  const key = (await createApiKey(service.ctx.db, { orgId: org.id, scopes: ['generations:read', 'generations:write'] })).key;
  client = new Client({ name: 'faceless-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${service.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await client!.callTool({ name, arguments: args });
    if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.structuredContent)}`);
    return res.structuredContent as any;
  };

  // ------------------------------------------------------------------ through MCP
  const t0 = performance.now();
  const created = await call('create_faceless_video', {
    prompt: values.prompt,
    duration: values.duration,
    aspect_ratio: '9:16',
    voice_id: 'ava-bright',
    image_style: 'cinematic',
  });
  const seen: { stage: string; at: number }[] = [];
  let video: any;
  for (;;) {
    video = await call('get_video', { id: created.video_id });
    const at = (performance.now() - t0) / 1000;
    const stage = video.status === 'generating' ? (video.stage ?? 'queued') : video.status;
    if (seen.at(-1)?.stage !== stage) seen.push({ stage, at });
    if (video.status === 'completed' || video.status === 'error') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (video.status !== 'completed') throw new Error(`the video failed: ${JSON.stringify(video.error)}`);
  const mp4 = path.join(dir, 'faceless.mp4');
  fs.writeFileSync(mp4, Buffer.from(await (await fetch(video.url)).arrayBuffer()));
  const wall = (performance.now() - t0) / 1000;
  const probed = await probe({ path: mp4, type: 'video/mp4' });

  // ------------------------------------------------------------------ the bare render of the same timeline
  const project = await call('get_editor_video', { id: created.video_id });
  const ids = [...new Set((project.items as { media_id: string | null }[]).map((i) => i.media_id).filter(Boolean))] as string[];
  const rows = await service.ctx
    .sql`select id, storage_key, content_type, kind, width, height, duration_seconds, has_audio from media where id in ${service.ctx.sql(ids)}`;
  const files = new Map<string, RenderMedia>();
  const planDir = path.join(dir, 'plan');
  fs.mkdirSync(planDir);
  for (const m of rows) {
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
    { width: project.width, height: project.height, fps: project.fps, tracks: project.tracks, items: project.items, media: files },
    planDir,
    path.join(planDir, 'bare.mp4'),
  );
  const b0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', ...plan.args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: planDir,
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg ${code}: ${err}`))));
  });
  const bare = (performance.now() - b0) / 1000;

  const [row] = await service.ctx.sql`select artifacts->'timings' as timings from faceless_videos where video_id = ${created.video_id}`;
  const stagesSeen = seen
    .map((s, i) => `${s.stage} @${s.at.toFixed(2)}s${seen[i + 1] ? ` (${(seen[i + 1].at - s.at).toFixed(2)} s)` : ''}`)
    .join(' → ');
  say(
    `faceless bench: ${probed.width}×${probed.height}, ${probed.duration_seconds?.toFixed(2)} s (asked ${values.duration}), ${video.size_bytes} bytes, ${project.items.length} timeline items`,
  );
  say(`faceless bench: stages as polled: ${stagesSeen}`);
  say(
    `faceless bench: stages as measured by the job (s): ${Object.entries(row.timings as Record<string, number>)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}`,
  );
  say(`faceless bench: MCP create → poll → download wall time ${wall.toFixed(2)} s (goal < 30 s: ${wall < 30 ? 'MET' : 'NOT MET'})`);
  say(`faceless bench: bare ffmpeg render of the same timeline ${bare.toFixed(2)} s`);
  say(
    `faceless bench: load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} on ${os.cpus().length} cores (other work on the machine slows both sides)`,
  );
  say(`faceless bench: RATIO ${(wall / bare).toFixed(3)} (MCP wall time / bare render)`);
} finally {
  await client?.close().catch(() => {});
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
