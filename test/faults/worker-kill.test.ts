// A worker killed mid-job (kill -9 of its whole process group, as a lost machine) leaves a job that
// another worker finishes after the heartbeat expires: one charge, no refund, nothing made twice.
// Nine jobs, each on a database of its own with its own worker processes, run side by side so that
// they share the wait for the heartbeat instead of taking it in turn:
// - a video generation killed while generating;
// - a video ad made by a hosted model (Veo on the fal fake) killed while its provider job polls, and
//   a static ad (Flux on the Replicate fake) killed while its prediction polls: the next worker
//   resumes the stored job, one paid submission;
// - a video ad killed while compositing the hosted model's footage: the footage is not asked of
//   the provider again, only the compositing runs again;
// - a faceless video killed while rendering, its last stage: the stages before it are not run again;
// - a faceless video killed while drawing its scenes, its second stage, after a scene was stored:
//   its script is not written again, the stored scenes are not drawn again and the stage finishes once;
// - a slideshow killed while its MP4 renders: its copy, slides and project are not made again;
// - an X post killed between the media upload and the tweet: one upload, one tweet;
// - a reference analysis killed while analysing its fetched video: the video is not fetched again.
// A stage that finished before the kill must not run again. The evidence is what the pipeline leaves
// behind: each finished stage's stored output (its entry in the stage state, its media rows to the
// microsecond, its stored objects' ETag and modification time) is the same after the second worker
// as before it, and the stage runner's record of the stages' runs (state `runs`,
// src/kernel/stages.ts) still says the finished stages ran in the first attempt only, while the
// interrupted stage and those after it ran in the last.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { media } from '../../src/db/schema/index.ts';
import type { StageRun } from '../../src/kernel/stages.ts';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { connectAccount } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import type { ModelOutput } from '../../src/pipelines/generation/template.ts';
import { png, type Seen, startFake } from '../engines/fakes/common.ts';
import { type FalFake, startFalFake } from '../engines/fakes/fal.ts';
import { type ReplicateFake, startReplicateFake } from '../engines/fakes/replicate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connect } from '../mcp/helpers.ts';
import { fakeX } from '../social/fakes.ts';

const root = path.resolve(import.meta.dirname, '../..');
t.jobs = 9;

/** An API app (no workers) on a fresh database, and a way to start worker processes for it. */
async function setup(t: Test, env: Record<string, string> = {}): Promise<{ api: TestApp; worker: () => ChildProcess }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-recovery-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const api = await startTestApp(t, { DATA_DIR: dataDir, JOB_HEARTBEAT_SECONDS: '10', ...env });
  const worker = () => {
    const child = spawn(process.execPath, ['src/worker-main.ts'], {
      cwd: root,
      detached: true, // its own process group, so ffmpeg dies with it
      env: {
        ...process.env,
        ...api.s3?.env, // the API's bucket under TEST_STORAGE=s3
        DATABASE_URL: api.databaseUrl,
        DATA_DIR: dataDir, // the same media folder and secrets.key
        MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
        JOB_HEARTBEAT_SECONDS: '10',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: 'ignore',
    });
    t.teardown(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    });
    return child;
  };
  return { api, worker };
}

/** kill -9 of the worker's whole process group (its ffmpeg included), as a lost machine. */
function kill(child: ChildProcess): void {
  process.kill(-child.pid!, 'SIGKILL');
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms: number, every = 100) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

async function ledger(api: TestApp, orgId: string) {
  const rows = await api.service.ctx.sql`select reason, delta from credit_ledger where org_id = ${orgId} order by id`;
  return rows.map((l) => [l.reason, l.delta]);
}

/** A media row of the workspace and its stored object, as written. */
interface Made {
  kind: string;
  key: string;
  bytes: number;
  /** To the microsecond. */
  createdAt: string;
  object: { bytes: number; etag: string; modified: string } | undefined;
}

/** The workspace's media rows and their stored objects (ETag and modification time), by media id. */
async function madeSoFar(api: TestApp, orgId: string): Promise<Map<string, Made>> {
  const { sql, storage } = api.service.ctx;
  const rows = await sql<{ id: string; kind: string; key: string; bytes: number; created: string }[]>`
    select id, kind, storage_key as key, size_bytes::int as bytes, created_at::text as created
    from media where org_id = ${orgId} order by id`;
  const made = new Map<string, Made>();
  for (const r of rows) {
    const o = await storage.stat(r.key);
    const object = o && { bytes: o.bytes, etag: o.etag, modified: o.lastModified.toISOString() };
    made.set(r.id, { kind: r.kind, key: r.key, bytes: r.bytes, createdAt: r.created, object });
  }
  return made;
}

/**
 * The media stored before the kill are kept as they were written (rows and objects: none written
 * again), and the job added `added` (kinds, in id order) and nothing else.
 */
function checkKept(t: Test, before: Map<string, Made>, after: Map<string, Made>, added: string[]) {
  t.ok(before.size > 0, `${before.size} media stored before the kill`);
  t.same(
    Object.fromEntries([...before.keys()].map((id) => [id, after.get(id)])),
    Object.fromEntries(before),
    'the media stored before the kill are kept as written (rows, objects, times)',
  );
  t.same(
    [...after].filter(([id]) => !before.has(id)).map(([, m]) => m.kind),
    added,
    `after the kill only ${added.join(', ') || 'nothing'} was made`,
  );
}

/**
 * The stage runner's record after the job finished, against its record at the kill: each stage of
 * `finished` ran once, in attempt 1, and its record is unchanged; `interrupted` (running at the
 * kill) and the stages after it finished in the last attempt, once (the interrupted one had started
 * in attempt 1).
 */
function checkRuns(
  t: Test,
  atKill: Record<string, StageRun>,
  end: Record<string, StageRun>,
  stages: { finished: string[]; interrupted: string; after: string[]; attempts: number },
) {
  const { finished, interrupted, after, attempts } = stages;
  for (const name of finished) {
    t.same(atKill[name]?.attempts, [1], `${name}: ran in attempt 1`);
    t.ok(atKill[name]?.finishedAt, `${name}: finished before the kill`);
    t.same(end[name], atKill[name], `${name}: not run again (its record is unchanged)`);
  }
  t.same(atKill[interrupted]?.attempts, [1], `${interrupted}: started in attempt 1`);
  t.notOk(atKill[interrupted]?.finishedAt, `${interrupted}: not finished at the kill`);
  t.same(end[interrupted]?.attempts, [1, attempts], `${interrupted}: started again in attempt ${attempts}`);
  t.ok(end[interrupted]?.finishedAt, `${interrupted}: finished`);
  for (const name of after) {
    t.notOk(atKill[name], `${name}: not started before the kill`);
    t.same(end[name]?.attempts, [attempts], `${name}: ran once, in attempt ${attempts}`);
    t.ok(end[name]?.finishedAt, `${name}: finished`);
  }
}

t.test('a video generation killed while generating is finished by another worker', async (t) => {
  const { api, worker } = await setup(t);
  const sql = api.service.ctx.sql;
  const row = async (id: string) =>
    (await sql`select status, attempts from generations where id = ${id}`)[0] as { status: string; attempts: number };
  const ws = await api.workspace({ credits: 5000 });
  const models = (await api.request('GET', '/api/v1/models')).body;
  const vt = models.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'low');
  const res = await api.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'video_ad',
      template_slug: vt.slug,
      quality_tier: 'low',
      duration: Math.min(...tier.duration_options),
      prompt: 'A render cut short',
    },
  });
  t.equal(res.status, 200);
  const id = res.body.generations[0].id;
  const charged = res.body.credits_deducted;

  const first = worker();
  await until('the first worker starts the job', async () => (await row(id)).attempts >= 1, 60_000, 20);
  kill(first);
  t.equal((await row(id)).status, 'generating', 'killed while still generating');

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  const done = await api.request('GET', `/api/v1/generations/${id}`, { key: ws.key });
  t.equal(done.body.output.content_type, 'video/mp4');
  t.equal((await fetch(done.body.url)).status, 200);
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 5000],
      ['generation_charge', -charged],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});

t.test('a faceless video killed while rendering is finished from its stored scenes', async (t) => {
  const { api, worker } = await setup(t);
  const sql = api.service.ctx.sql;
  const row = async (id: number) =>
    (await sql`select status, stage, attempts, artifacts from faceless_videos where video_id = ${id}`)[0] as {
      status: string;
      stage: string | null;
      attempts: number;
      artifacts: any;
    };
  const ws = await api.workspace({ credits: 100 });
  const res = await api.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script: 'Tea is calm. Coffee is loud. Pick your mood today.', duration: '12' },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.video_id as number;

  const first = worker();
  await until('the first worker reaches the render', async () => (await row(id)).stage === 'render', 90_000, 20);
  kill(first);
  const scenes = (await row(id)).artifacts.scenes;
  t.equal((await row(id)).status, 'generating', 'killed while still generating');
  const atKill = (await row(id)).artifacts;
  const madeAtKill = await madeSoFar(api, ws.orgId);

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.same(final.artifacts.scenes, scenes, 'the scenes of the first attempt were kept');
  const finished = ['script', 'scenes', 'voiceover', 'captions'];
  for (const stage of finished) t.same(final.artifacts[stage], atKill[stage], `${stage}: its stored output is unchanged`);
  checkRuns(t, atKill.runs, final.artifacts.runs, { finished, interrupted: 'render', after: [], attempts: final.attempts });
  checkKept(t, madeAtKill, await madeSoFar(api, ws.orgId), ['video']);
  const video = await api.request('GET', `/api/v1/videos/${id}`, { key: ws.key });
  t.match(video.body, { status: 'completed', progress: 100 });
  t.equal((await fetch(video.body.url)).status, 200);
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 100],
      ['faceless_video_charge', -40],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});

t.test('a faceless video killed while drawing its scenes keeps its script and draws its scenes once', async (t) => {
  const { api, worker } = await setup(t);
  const sql = api.service.ctx.sql;
  const row = async (id: number) =>
    (await sql`select status, stage, attempts, artifacts from faceless_videos where video_id = ${id}`)[0] as {
      status: string;
      stage: string | null;
      attempts: number;
      artifacts: any;
    };
  const scenesStored = async (orgId: string) =>
    (await sql`select count(*)::int as n from media where org_id = ${orgId} and kind = 'image'`)[0].n as number;
  const ws = await api.workspace({ credits: 100 });
  // Seven sentences, seven scenes (drawn two at a time): the worker is killed with some stored.
  const script =
    'Wake up early. Drink a glass of water. Stretch for one minute. Write down three tasks. ' +
    'Start with the hardest one. Take a short walk at noon. Go to sleep on time.';
  const res = await api.request('POST', '/api/v1/faceless-videos', { key: ws.key, body: { script, duration: '12' } });
  t.equal(res.status, 200, res.text);
  const id = res.body.video_id as number;

  const first = worker();
  await until(
    'the first worker stores a scene',
    async () => (await row(id)).stage === 'scenes' && (await scenesStored(ws.orgId)) >= 1,
    90_000,
    20,
  );
  kill(first);
  const atKill = await row(id);
  t.equal(atKill.status, 'generating', 'killed while still generating');
  t.equal(atKill.stage, 'scenes', 'killed in the scenes stage');
  t.ok(atKill.artifacts.script, 'the script was stored before the kill');
  t.notOk('scenes' in atKill.artifacts, 'the scenes stage had not stored its output');
  const madeAtKill = await madeSoFar(api, ws.orgId);
  t.ok(madeAtKill.size >= 1 && madeAtKill.size < 7, `killed mid-way through the scenes: ${madeAtKill.size} of 7 stored`);

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.same(final.artifacts.script, atKill.artifacts.script, 'script: its stored output is unchanged');
  checkRuns(t, atKill.artifacts.runs, final.artifacts.runs, {
    finished: ['script'],
    interrupted: 'scenes',
    after: ['voiceover', 'captions', 'render'],
    attempts: final.attempts,
  });
  // The resumed stage draws only the scenes the first worker did not store, under the ids derived
  // from the video's: the rows and objects stored before the kill are kept, and each scene has one.
  const made = await madeSoFar(api, ws.orgId);
  const sceneIds: string[] = final.artifacts.scenes.mediaIds;
  t.equal(sceneIds.length, 7, 'seven scenes');
  // Images: one per scene, and the overlay (caption scrim and brand, fixed over the panning scenes).
  const overlayId: string = final.artifacts.scenes.overlayId;
  t.ok(overlayId, 'the overlay is recorded with the scenes');
  t.same(
    [...made].filter(([, m]) => m.kind === 'image').map(([mid]) => mid),
    [...sceneIds, overlayId].sort(),
    'one media row per scene and the overlay: those of the stored output',
  );
  t.same(
    [...madeAtKill].map(([mid, m]) => [mid, m.key, m.createdAt, m.object]),
    [...madeAtKill].map(([mid]) => [mid, made.get(mid)?.key, made.get(mid)?.createdAt, made.get(mid)?.object]),
    'the scenes stored before the kill keep their rows and objects (not drawn again)',
  );
  t.same(
    [...made.values()].map((m) => m.kind).sort(),
    ['audio', 'image', 'image', 'image', 'image', 'image', 'image', 'image', 'image', 'video', 'voice'],
    'seven scenes, the overlay, the music bed, the MP4 and the voiceover: each made once',
  );
  const video = await api.request('GET', `/api/v1/videos/${id}`, { key: ws.key });
  t.match(video.body, { status: 'completed', progress: 100 });
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 100],
      ['faceless_video_charge', -40],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});

t.test('a slideshow killed while its MP4 renders keeps its slides and timeline', async (t) => {
  const { api, worker } = await setup(t);
  const sql = api.service.ctx.sql;
  const row = async (id: string) =>
    (await sql`select status, stage, attempts, project_version, copy::text, state from slideshows where id = ${id}`)[0] as {
      status: string;
      stage: string | null;
      attempts: number;
      project_version: number | null;
      copy: string | null;
      state: { runs: Record<string, StageRun> };
    };
  /** What the slides and project stages wrote: the slides' rows and the project's timeline. */
  const slidesAndProject = async (id: string, videoId: number) => ({
    slides: await sql`select index, media_id, text, created_at::text from slideshow_slides where slideshow_id = ${id} order by index`,
    project: await sql`select version, timeline::text from editor_videos where video_id = ${videoId}`,
  });
  const ws = await api.workspace({ credits: 1000 });
  const res = await api.request('POST', '/api/v1/slideshows', {
    key: ws.key,
    body: { prompt: 'Four ways to keep plants alive', slide_count: 4, aspect_ratio: '9:16', generate_text_overlays: true },
  });
  t.equal(res.status, 200);
  const id = res.body.slideshow_id;

  const first = worker();
  await until('the first worker reaches the video stage', async () => (await row(id)).stage === 'video', 90_000, 20);
  kill(first);
  const before = await row(id);
  t.equal(before.status, 'generating', 'killed while still generating');
  t.ok(before.project_version, 'the project was filled before the kill');
  const [items] = await sql`select json_array_length(timeline->'items') as n from editor_videos where video_id = ${res.body.video_id}`;
  const writtenAtKill = await slidesAndProject(id, res.body.video_id);
  const madeAtKill = await madeSoFar(api, ws.orgId);

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.equal(final.project_version, before.project_version, 'the project was not filled again');
  t.ok(before.copy, 'the copy was written before the kill');
  t.equal(final.copy, before.copy, 'copy: its stored output is unchanged');
  t.same(await slidesAndProject(id, res.body.video_id), writtenAtKill, 'slides and project: their rows are unchanged');
  checkRuns(t, before.state.runs, final.state.runs, {
    finished: ['copy', 'slides', 'project'],
    interrupted: 'video',
    after: [],
    attempts: final.attempts,
  });
  checkKept(t, madeAtKill, await madeSoFar(api, ws.orgId), ['video']);
  const [after] = await sql`select json_array_length(timeline->'items') as n from editor_videos where video_id = ${res.body.video_id}`;
  t.equal(after.n, items.n, 'no timeline item added twice');
  t.equal(items.n, 13, 'four image items, a headline and a body text item per slide, and the music');
  const [{ n: slides }] = await sql`select count(*)::int as n from slideshow_slides where slideshow_id = ${id}`;
  t.equal(slides, 4);
  const [{ n: images }] = await sql`select count(*)::int as n from media where org_id = ${ws.orgId} and kind = 'image'`;
  t.equal(images, 4, 'each slide stored once');
  const done = await api.request('GET', `/api/v1/slideshows/${id}`, { key: ws.key });
  t.equal(done.body.slides.length, 4);
  t.equal((await fetch(done.body.video_url)).status, 200);
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 1000],
      ['slideshow_charge', -40],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});

t.test('an X post killed between upload and tweet is posted once by another worker', async (t) => {
  const X = await fakeX(t);
  const { api, worker } = await setup(t, { SOCIAL_API_BASE_X: X.url });
  const sql = api.service.ctx.sql;
  const ws = await api.workspace({ scopes: ['social:write'] });
  const tok = X.grant();
  const cipher = tokenCipher(await loadTokenKey(api.service.ctx.config));
  const acc = await connectAccount(api.service.ctx.db, cipher, {
    orgId: ws.orgId,
    platform: 'x',
    handle: 'killed',
    accessToken: tok.access,
    refreshToken: tok.refresh,
    platformAccountId: '42',
  });
  const id = randomUUID();
  const key = `editor-media/${ws.orgId}/${id}.mp4`;
  const bytes = 5 * 1024 * 1024 + 777;
  await api.service.ctx.storage.put(key, Buffer.alloc(bytes, 7), 'video/mp4');
  await api.service.ctx.db.insert(media).values({
    id,
    orgId: ws.orgId,
    kind: 'video',
    source: 'upload',
    contentType: 'video/mp4',
    sizeBytes: bytes,
    storageKey: key,
    width: 1280,
    height: 720,
    durationSeconds: 15,
    hasAudio: true,
  });

  const client = await connect(api, ws.key);
  t.teardown(() => client.close());
  const res = await client.callTool({
    name: 'publish_media_to_social',
    arguments: { account_ids: [acc.id], media_id: id, caption: 'survives a crash' },
  });
  t.notOk(res.isError, JSON.stringify(res.structuredContent));
  const pubId = (res.structuredContent as { id: string }).id;

  // POST /2/tweets hangs at the fake: the worker is killed while waiting for it.
  X.state.hangNextTweet = true;
  const first = worker();
  await until('the first worker reaches POST /2/tweets', () => X.state.tweetAttempts === 1, 90_000);
  const [mid] = await sql<
    { status: string; state: any }[]
  >`select status, state from social_publication_targets where publication_id = ${pubId}`;
  t.equal(mid.status, 'publishing');
  t.match(mid.state, { media: [{ id: /^\d+$/, next_segment: 2, finalized: true, ready: true }] }, 'the upload was stored before the tweet');
  kill(first);

  worker();
  await until(
    'another worker publishes it',
    async () => {
      const [r] = await sql<{ status: string }[]>`select status from social_publication_targets where publication_id = ${pubId}`;
      return r.status === 'published' || r.status === 'failed';
    },
    150_000,
  );
  const get = await client.callTool({ name: 'get_social_publication', arguments: { id: pubId } });
  const pub = get.structuredContent as { status: string; results: { post_id: string }[] };
  t.equal(pub.status, 'published', JSON.stringify(pub));
  t.equal(X.state.uploads.size, 1, 'one upload');
  t.same(
    [...X.state.uploads.values()][0].segments.map((s) => s.index),
    [0, 1],
    'each segment once',
  );
  t.equal(X.state.tweets.length, 1, 'one tweet');
  t.equal(X.state.tweetAttempts, 2, 'the hung attempt and the resumed one');
  t.equal(pub.results[0].post_id, X.state.tweets[0].id);
});

t.test('a reference analysis killed while analysing is finished without fetching its media again', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-reference-kill-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Two seconds of colour with a voice-band tone (speech for the transcription provider).
  const clipFile = path.join(dir, 'clip.mp4');
  // biome-ignore format: ffmpeg's arguments read best as option-value pairs
  execFileSync(FFMPEG_PATH, [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', 'color=c=teal:s=160x284:r=10:d=2',
    '-f', 'lavfi', '-i', "aevalsrc='0.5*sin(2*PI*220*t)*(0.5+0.5*sin(2*PI*4*t))':s=16000:d=2",
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clipFile,
  ]);
  const clip = fs.readFileSync(clipFile);
  let fetches = 0;
  const host = http.createServer((req, res) => {
    if (req.url !== '/clip.mp4') return res.writeHead(404).end('missing');
    fetches++;
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clip.length }).end(clip);
  });
  // The transcription provider: the first call is held until its worker dies; later ones answer.
  let transcriptions = 0;
  const stt = http.createServer(async (req, res) => {
    for await (const _ of req);
    if (transcriptions++ === 0) return; // held: the worker is killed while it waits
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ text: 'Fresh lemons daily', language: 'english' }));
  });
  for (const s of [host, stt]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    host.closeAllConnections();
    stt.closeAllConnections();
    host.close();
    stt.close();
  });
  const port = (s: http.Server) => (s.address() as { port: number }).port;
  const { api, worker } = await setup(t, {
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
    TRANSCRIPTION_PROVIDER_URL: `http://127.0.0.1:${port(stt)}/v1`,
    TRANSCRIPTION_PROVIDER_API_KEY: 'stt-key',
  });
  const sql = api.service.ctx.sql;
  const row = async (id: string) =>
    (await sql`select status, state, media_ids from reference_inspirations where id = ${id}`)[0] as {
      status: string;
      state: any;
      media_ids: string[];
    };
  const ws = await api.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const res = await api.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `http://127.0.0.1:${port(host)}/clip.mp4` },
  });
  t.equal(res.status, 200, res.text);
  const id = res.body.id as string;

  const first = worker();
  await until('the first worker is analysing (the transcription is under way)', () => transcriptions >= 1, 90_000, 20);
  kill(first);
  const atKill = await row(id);
  t.equal(atKill.status, 'processing', 'killed while still processing');
  t.equal(fetches, 1, 'the video was fetched once before the kill');
  const fetched: { id: string; storageKey: string }[] = atKill.state.fetch;
  t.equal(fetched?.length, 1, 'the fetch stage had stored its output');
  const objectAtKill = await api.service.ctx.storage.stat(fetched[0].storageKey);
  t.ok(objectAtKill, 'the fetched video is stored');

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'processing', 150_000);
  const final = await row(id);
  t.equal(final.status, 'ready');
  t.equal(fetches, 1, 'the second worker did not fetch the video again');
  t.equal(transcriptions, 2, 'the analysis ran again: one more transcription');
  t.notOk('fetch' in final.state || 'analyse' in final.state, 'the outputs left the state for the rows on completion');
  const attempts = final.state.runs.analyse.attempts.at(-1);
  checkRuns(t, atKill.state.runs, final.state.runs, { finished: ['fetch'], interrupted: 'analyse', after: [], attempts });
  const made = await madeSoFar(api, ws.orgId);
  t.same([...made.keys()], [fetched[0].id], 'one media row: the video the first worker stored');
  t.same(final.media_ids, [fetched[0].id]);
  const object = made.get(fetched[0].id)?.object;
  t.same(
    object && [object.etag, object.modified],
    [objectAtKill?.etag, objectAtKill?.lastModified.toISOString()],
    'its stored object is the one written before the kill',
  );
  const list = await api.request('GET', '/api/v1/reference-inspirations?limit=20', { key: ws.key });
  t.match(
    list.body.data.find((r: { id: string }) => r.id === id),
    { status: 'ready', media: [{ analysis: { transcript: 'Fresh lemons daily' } }] },
  );
  t.same(
    (await ledger(api, ws.orgId)).map(([reason]) => reason),
    ['initial_grant', 'reference_charge'],
    'one charge, no refund',
  );
  void second;
});

// ---------------------------------------------------------------------------------------------
// Templates made by a hosted model (made_by): the generating stage's provider job is stored before
// it is polled, so a worker killed while it polls leaves a job the next worker resumes instead of
// paying for a second submission; a worker killed while compositing leaves the stored model output,
// which the next worker composites again without asking the provider for it.

const FAL_KEY = 'fal-key-id:fal-key-secret';
const REPLICATE_TOKEN = 'r8_test_token';

/**
 * The fal and Replicate fakes (test/engines/fakes/), a host for a product photo, all in this
 * process, and the variables that point the API app and its worker processes at them.
 */
async function hostedFakes(t: Test) {
  const fal = await startFalFake(FAL_KEY);
  const replicate = await startReplicateFake(REPLICATE_TOKEN);
  const refs = await startFake((_req, _res, json) => json(404, {}));
  refs.files.set('product.png', { type: 'image/png', bytes: await png(400, 400, '#e01010') });
  t.teardown(() => Promise.all([fal.close(), replicate.close(), refs.close()]));
  const env = {
    FAL_QUEUE_BASE: fal.url,
    FAL_KEY,
    REPLICATE_API_BASE: replicate.url,
    REPLICATE_API_TOKEN: REPLICATE_TOKEN,
    PROVIDER_POLL_MS: '50',
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
  };
  return { fal, replicate, productUrl: `${refs.url}/files/product.png`, env };
}

/** What a provider fake saw: every paid submission, and one job's status polls and output fetches. */
interface Traffic {
  submissions: Seen[];
  polls: Seen[];
  /** The job's result and its output file (fal), or its output file (Replicate: the output URL comes with the poll). */
  fetches: Seen[];
}

function falTraffic(fal: FalFake, id: string): Traffic {
  return {
    submissions: fal.seen.filter((s) => s.method === 'POST'),
    polls: fal.seen.filter((s) => s.path.endsWith(`/requests/${id}/status`)),
    fetches: fal.seen.filter((s) => s.path.endsWith(`/requests/${id}`) || s.path === `/files/${id}.mp4`),
  };
}

function replicateTraffic(replicate: ReplicateFake, id: string): Traffic {
  return {
    submissions: replicate.seen.filter((s) => s.method === 'POST' && s.path.endsWith('/predictions')),
    polls: replicate.seen.filter((s) => s.method === 'GET' && s.path === `/v1/predictions/${id}`),
    fetches: replicate.seen.filter((s) => s.path === `/files/${id}.png`),
  };
}

/** A template generation's row: its stage state (outputs, runs) and the provider job it stored. */
async function templateRow(api: TestApp, id: string) {
  const [row] = await api.service.ctx.sql`select status, attempts, state, provider_job from generations where id = ${id}`;
  return row as { status: string; attempts: number; state: any; provider_job: { provider: string; id: string } | null };
}

/** POST /generations for a fresh workspace: the generation's id and the credits charged. */
async function createGeneration(t: Test, api: TestApp, body: Record<string, unknown>) {
  const ws = await api.workspace({ credits: 1000 });
  const res = await api.request('POST', '/api/v1/generations', { key: ws.key, body });
  t.equal(res.status, 200, res.text);
  return { ws, id: res.body.generations[0].id as string, charged: res.body.credits_deducted as number };
}

/** The completed generation's output is the finishing render of the model's picture or footage, stored once. */
async function checkComposited(t: Test, api: TestApp, key: string, id: string, expect: Record<string, unknown>) {
  const done = await api.request('GET', `/api/v1/generations/${id}`, { key });
  t.match(done.body, { status: 'completed', output: expect }, 'completed with the composited output');
  t.equal((await fetch(done.body.url)).status, 200);
  const { state } = await templateRow(api, id);
  const [out] = await api.service.ctx
    .sql`select m.storage_key as key from generations g join media m on m.id = g.output_media_id where g.id = ${id}`;
  t.equal(out.key, state.compositing.storageKey, "the output is the compositing stage's");
  t.notOk(await api.service.ctx.storage.stat(state.generating.storageKey), "the model's output is removed once composited");
}

const veoAd = (productUrl: string) => ({
  type: 'video_ad',
  template_slug: 'product-demo-showcase',
  quality_tier: 'high',
  duration: 4,
  prompt: 'A red cube spins on a white table',
  reference_image_urls: [productUrl],
});
const veoOutput = { content_type: 'video/mp4', width: 1080, height: 1920 };

/**
 * A template generation whose model `provider` holds its job in progress: the first worker is
 * killed while it polls the job it stored, the job is released, and a second worker resumes it.
 */
async function killedWhileGenerating(
  t: Test,
  opts: { provider: 'fal' | 'replicate'; body: (productUrl: string) => Record<string, unknown>; output: Record<string, unknown> },
) {
  const fakes = await hostedFakes(t);
  const fake = opts.provider === 'fal' ? fakes.fal : fakes.replicate;
  const traffic = (jobId: string) => (opts.provider === 'fal' ? falTraffic(fakes.fal, jobId) : replicateTraffic(fakes.replicate, jobId));
  const { api, worker } = await setup(t, fakes.env);
  const { ws, id, charged } = await createGeneration(t, api, opts.body(fakes.productUrl));

  const release = fake.hold();
  const first = worker();
  await until(
    'the first worker polls the provider job it stored',
    async () => {
      const job = (await templateRow(api, id)).provider_job;
      return Boolean(job && traffic(job.id).polls.length >= 1);
    },
    90_000,
    20,
  );
  kill(first);
  const atKill = await templateRow(api, id);
  t.equal(atKill.status, 'generating', 'killed while still generating');
  t.match(atKill.provider_job, { provider: opts.provider, id: String }, 'the provider job was stored before polling');
  const jobId = atKill.provider_job!.id;
  t.equal(traffic(jobId).fetches.length, 0, 'nothing fetched before the kill: the job was still in progress');

  release();
  const secondStarted = Date.now();
  const second = worker();
  await until('another worker completes it', async () => (await templateRow(api, id)).status !== 'generating', 150_000);
  const final = await templateRow(api, id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  const seen = traffic(jobId);
  t.equal(seen.submissions.length, 1, 'one paid submission at the fake');
  t.ok(
    seen.polls.some((p) => p.at >= secondStarted),
    'the second worker polled the request id the first one stored',
  );
  const polledAfter = (opts.provider === 'fal' ? fakes.fal : fakes.replicate).seen.filter(
    (s) => s.at >= secondStarted && s.method === 'GET' && !s.path.startsWith('/files/'),
  );
  t.same(
    polledAfter.filter((s) => !s.path.includes(jobId)).map((s) => s.path),
    [],
    'and no other job',
  );
  t.equal(final.state.generating.providerJobId, jobId, "the stage's record names the resumed job");
  checkRuns(t, atKill.state.runs, final.state.runs, {
    finished: [],
    interrupted: 'generating',
    after: ['compositing'],
    attempts: final.attempts,
  });
  await checkComposited(t, api, ws.key, id, opts.output);
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
}

t.test('a video ad made by Veo on fal, killed while its provider job polls, resumes that job: one submission', (t) =>
  killedWhileGenerating(t, { provider: 'fal', body: veoAd, output: veoOutput }),
);

t.test('a static ad made by Flux on Replicate, killed while its prediction polls, resumes that prediction: one submission', (t) =>
  killedWhileGenerating(t, {
    provider: 'replicate',
    body: () => ({ type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Lemonade summer sale' }),
    output: { content_type: 'image/png', width: 1024, height: 1024 },
  }),
);

t.test('a video ad killed while compositing its Veo footage composites the stored footage again, not asking fal', async (t) => {
  const fakes = await hostedFakes(t);
  const { api, worker } = await setup(t, fakes.env);
  const { ws, id, charged } = await createGeneration(t, api, veoAd(fakes.productUrl));

  const first = worker();
  await until(
    'the first worker composites',
    async () => {
      const runs = (await templateRow(api, id)).state?.runs;
      return Boolean(runs?.compositing && !runs.compositing.finishedAt);
    },
    90_000,
    20,
  );
  kill(first);
  const atKill = await templateRow(api, id);
  t.equal(atKill.status, 'generating', 'killed while still generating');
  const made: ModelOutput = atKill.state.generating;
  t.match(made, { provider: 'fal', model: 'fal-ai/veo3/fast/image-to-video', contentType: 'video/mp4' }, "the model's footage was stored");
  t.ok(await api.service.ctx.storage.stat(made.storageKey), 'its object is stored');
  const jobId = made.providerJobId!;
  const seenAtKill = falTraffic(fakes.fal, jobId);
  t.equal(seenAtKill.submissions.length, 1, 'one submission before the kill');
  t.equal(seenAtKill.fetches.length, 2, 'its result and its footage fetched once before the kill');

  const second = worker();
  await until('another worker completes it', async () => (await templateRow(api, id)).status !== 'generating', 150_000);
  const final = await templateRow(api, id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.same(final.state.generating, made, 'generating: its stored output is unchanged');
  const seen = falTraffic(fakes.fal, jobId);
  t.equal(seen.submissions.length, 1, 'no new submission');
  t.equal(seen.polls.length, seenAtKill.polls.length, 'the job was not polled again');
  t.equal(seen.fetches.length, seenAtKill.fetches.length, 'neither its result nor its footage was fetched again');
  checkRuns(t, atKill.state.runs, final.state.runs, {
    finished: ['generating'],
    interrupted: 'compositing',
    after: [],
    attempts: final.attempts,
  });
  await checkComposited(t, api, ws.key, id, veoOutput);
  t.same(
    await ledger(api, ws.orgId),
    [
      ['initial_grant', 1000],
      ['generation_charge', -charged],
    ],
    'one charge, no refund',
  );
  process.kill(-second.pid!, 'SIGTERM');
});
