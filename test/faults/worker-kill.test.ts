// A worker killed mid-job (kill -9 of its whole process group, as a lost machine) leaves a job that
// another worker finishes after the heartbeat expires: one charge, no refund, nothing made twice.
// Four pipelines, each on a database of its own with its own two worker processes, run side by side
// so that they share the wait for the heartbeat instead of taking it in turn:
// - a video generation killed while generating;
// - a faceless video killed while rendering: the stored scenes are kept;
// - a slideshow killed while its MP4 renders: its slides and timeline items are not made again;
// - an X post killed between the media upload and the tweet: one upload, one tweet.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { media } from '../../src/db/schema/index.ts';
import { connectAccount } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connect } from '../mcp/helpers.ts';
import { fakeX } from '../social/fakes.ts';

const root = path.resolve(import.meta.dirname, '../..');
t.jobs = 4;

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

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.same(final.artifacts.scenes, scenes, 'the scenes of the first attempt were kept');
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

t.test('a slideshow killed while its MP4 renders keeps its slides and timeline', async (t) => {
  const { api, worker } = await setup(t);
  const sql = api.service.ctx.sql;
  const row = async (id: string) =>
    (await sql`select status, stage, attempts, project_version from slideshows where id = ${id}`)[0] as {
      status: string;
      stage: string | null;
      attempts: number;
      project_version: number | null;
    };
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

  const second = worker();
  await until('another worker completes it', async () => (await row(id)).status !== 'generating', 150_000);
  const final = await row(id);
  t.equal(final.status, 'completed');
  t.ok(final.attempts >= 2, `attempted ${final.attempts} times`);
  t.equal(final.project_version, before.project_version, 'the project was not filled again');
  const [after] = await sql`select json_array_length(timeline->'items') as n from editor_videos where video_id = ${res.body.video_id}`;
  t.equal(after.n, items.n, 'no timeline item added twice');
  t.equal(items.n, 8, 'four image items and four text items');
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
