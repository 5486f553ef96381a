// Faceless videos over MCP: create_faceless_video and get_video through the one executor (the
// same checks, price and idempotency as REST), polled to a finished MP4 that is downloaded and
// probed, its record naming the local engines that made it; bad input is an error result naming
// the field and charges nothing; another workspace's id is not found.
import { eq } from 'drizzle-orm';
import t from 'tap';
import { organizations } from '../../src/db/schema/index.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { PENDING_OPERATIONS } from '../../src/operations/pending.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 500 });
const other = await app.workspace({ credits: 500 });
const client = await connect(app, ws.key);
const stranger = await connect(app, other.key);
t.teardown(() => client.close());
t.teardown(() => stranger.close());
const credits = async (orgId: string) =>
  (await app.service.ctx.db.select({ c: organizations.credits }).from(organizations).where(eq(organizations.id, orgId)))[0].c;

t.test('the tools are served and no longer pending', async (t) => {
  const names = (await client.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('create_faceless_video') && names.includes('get_video'));
  t.notOk(PENDING_OPERATIONS.has('createFacelessVideo'));
  const tool = (await client.listTools()).tools.find((x) => x.name === 'create_faceless_video')!;
  t.match(tool.description, /GET \/videos\/\{id\}|get_video/, 'the description says how to poll');
});

t.test('bad input is an error naming the field; nothing is charged', async (t) => {
  const res = await client.callTool({
    name: 'create_faceless_video',
    arguments: { script: 'Hello there. Bye now.', duration: '6', voice_id: 'no-such-voice' },
  });
  t.equal(res.isError, true);
  t.match(res.structuredContent, { error: { code: 'not_found' } });
  t.match(JSON.stringify(res.structuredContent), /voice_id/);
  const square = await client.callTool({ name: 'create_faceless_video', arguments: { script: 'Hello there.', aspect_ratio: '1:1' } });
  t.equal(square.isError, true);
  t.match(square.structuredContent, { error: { code: 'bad_request' } });
  t.match(JSON.stringify(square.structuredContent), /aspect_ratio/);
  t.equal(await credits(ws.orgId), 500);
});

t.test('create, poll, download: a finished MP4', async (t) => {
  const args = {
    script: 'Cold brew is smooth. Make it tonight and drink it tomorrow.',
    duration: '5',
    voice_id: 'marcus-narrator',
    image_style: 'comic',
    idempotency_key: 'mcp-fv-1',
  };
  const created = await client.callTool({ name: 'create_faceless_video', arguments: args });
  t.notOk(created.isError, JSON.stringify(created.structuredContent));
  const gen = created.structuredContent as { video_id: number; credits_deducted: number; remaining_credits: number };
  t.match(gen, { object: 'faceless_video_generation', status: 'queued', credits_deducted: 45, remaining_credits: 455 });
  const again = await client.callTool({ name: 'create_faceless_video', arguments: args });
  t.match(again.structuredContent, { video_id: gen.video_id, idempotent_replay: true });
  t.equal(await credits(ws.orgId), 455, 'charged once');

  const foreign = await stranger.callTool({ name: 'get_video', arguments: { id: gen.video_id } });
  t.equal(foreign.isError, true);
  t.match(foreign.structuredContent, { error: { code: 'not_found' } });

  let video: any;
  const stages = new Set<string>();
  const end = Date.now() + 120_000;
  for (;;) {
    const res = await client.callTool({ name: 'get_video', arguments: { id: gen.video_id } });
    t.notOk(res.isError);
    video = res.structuredContent;
    if (video.stage) stages.add(video.stage);
    if (video.status === 'completed' || video.status === 'error' || Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(video.status, 'completed', JSON.stringify(video.error));
  t.ok(stages.size >= 1, `stages seen: ${[...stages].join(', ')}`);
  // No provider configured: get_video names the local engines (a given script needs no writer) and the drawn scenes.
  const local = (model: string) => ({ kind: 'local', provider: 'local', model });
  t.same(video.engines, {
    scene: local('local-scene-renderer'),
    speech: { ...local('flite+espeak-ng'), timings: 'engine' },
    render: local('ffmpeg'),
  });
  t.equal(video.scenes.length, 2, 'one scene per sentence');
  t.ok(
    video.scenes.every((s: any) => s.source === 'drawn' && s.attribution === null && typeof s.media_id === 'string'),
    'every scene drawn here',
  );
  const res = await fetch(video.url);
  t.equal(res.status, 200);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-mcp-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'v.mp4');
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const p = await probe({ path: file, type: 'video/mp4' });
  t.match(p, { width: 1080, height: 1920, video_codec: 'h264', has_audio: true });
  t.ok(Math.abs(p.duration_seconds! - 5) <= 0.5, `lasts ${p.duration_seconds}`);
  const project = await client.callTool({ name: 'get_editor_video', arguments: { id: gen.video_id } });
  t.notOk(project.isError, 'the editor opens it');
  t.match(project.structuredContent, { id: gen.video_id, status: 'ready' });
});
