// The job engine drains a backlog at worker speed: a worker with a free slot takes the next
// waiting job at once (not at its next poll), and a quick image never waits behind a long video
// render (images and videos have queues of their own). Timings come from pg-boss's own records
// (created_on, started_on, completed_on), bounds are generous.
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';

// Two image slots and one video slot whatever the machine, so the bounds below hold anywhere.
const app = await startTestApp(t, { IMAGE_CONCURRENCY: '2', VIDEO_CONCURRENCY: '1', RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const sql = app.service.ctx.sql;
const STATIC = 'bold-sale-banner';

interface JobTimes {
  id: string;
  output: string;
  created: number;
  started: number | null;
  completed: number | null;
  state: string;
}

/** pg-boss's timestamps of the jobs of these generations (ms since the epoch). */
async function jobTimes(ids: string[]): Promise<JobTimes[]> {
  const rows = await sql`
    select g.id, g.spec->>'output' as output, j.state,
           extract(epoch from j.created_on) * 1000 as created,
           extract(epoch from j.started_on) * 1000 as started,
           extract(epoch from j.completed_on) * 1000 as completed
      from generations g join pgboss.job j on j.id = g.job_id::uuid
     where g.id = any(${ids}::uuid[])`;
  return rows.map((r) => ({
    id: r.id,
    output: r.output,
    state: r.state,
    created: Number(r.created),
    started: r.started === null ? null : Number(r.started),
    completed: r.completed === null ? null : Number(r.completed),
  }));
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const statuses = async (ids: string[]) =>
  (await sql`select id, status from generations where id = any(${ids}::uuid[])`) as unknown as { id: string; status: string }[];

t.test('one request for 10 static ads: all done at worker speed, no job waits for a poll', async (t) => {
  const ws = await app.workspace({ credits: 100_000 });
  const sent = Date.now();
  const res = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: STATIC, request_count: 10, prompt: 'Drain me' },
  });
  t.equal(res.status, 200);
  const ids: string[] = res.body.generations.map((g: { id: string }) => g.id);
  t.equal(ids.length, 10);
  // A worker woken once per 30 s poll would need minutes; a draining one needs a few seconds.
  await until(
    'all 10 generations to finish',
    async () => ((await statuses(ids)).every((g) => g.status !== 'generating') ? true : undefined),
    20_000,
  );
  const took = Date.now() - sent;
  t.ok(took < 20_000, `all 10 finished in ${took} ms`);
  t.same(
    (await statuses(ids)).map((g) => g.status),
    Array(10).fill('completed'),
    'every generation completed',
  );

  // With C slots, the k-th job to start (k ≥ C) needed the (k−C)-th completion to free a slot:
  // it must start right after that completion, not at a later poll.
  const jobs = await until(
    'pg-boss to record every completion',
    async () => {
      const j = await jobTimes(ids);
      return j.every((x) => x.completed !== null && x.started !== null) ? j : undefined;
    },
    10_000,
  );
  const C = 2;
  const starts = jobs.map((j) => j.started!).sort((a, b) => a - b);
  const completions = jobs.map((j) => j.completed!).sort((a, b) => a - b);
  const gaps = starts.slice(C).map((s, k) => s - completions[k]);
  const worst = Math.max(...gaps);
  t.ok(
    worst < 2000,
    `a waiting job starts within 2 s of a slot freeing (worst gap ${worst.toFixed(0)} ms; gaps ${gaps.map((g) => g.toFixed(0)).join(', ')})`,
  );
  t.ok(starts[0] - Math.min(...jobs.map((j) => j.created)) < 2000, 'the first job starts at once (woken by the notification)');
});

// Four images (twice the image slots) behind the high tier's shortest video: the video is still
// several times the images' work, as ten images behind its longest one were, at half the render.
t.test('a video render queued first does not hold up 4 images queued after it', async (t) => {
  const ws = await app.workspace({ credits: 100_000 });
  const models = (await app.request('GET', '/api/v1/models')).body;
  const vt = models.video_ads[0];
  const tier = vt.quality_tiers.find((q: { id: string }) => q.id === 'high');
  const video = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: {
      type: 'video_ad',
      template_slug: vt.slug,
      quality_tier: 'high',
      duration: Math.min(...tier.duration_options),
      resolution: '1080p',
      prompt: 'A long render',
    },
  });
  t.equal(video.status, 200);
  const videoId: string = video.body.generations[0].id;
  // The video has started rendering: the single video slot is busy.
  await until('the video to start', async () => ((await jobTimes([videoId]))[0]?.started ? true : undefined), 10_000);
  const images = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: STATIC, request_count: 4, prompt: 'Behind a video' },
  });
  t.equal(images.status, 200);
  const imageIds: string[] = images.body.generations.map((g: { id: string }) => g.id);

  await until(
    'the images to finish',
    async () => ((await statuses(imageIds)).every((g) => g.status !== 'generating') ? true : undefined),
    60_000,
  );
  const videoDone = (await statuses([videoId]))[0].status !== 'generating';
  t.notOk(videoDone, 'every image finished while the video was still rendering');
  const jobs = await until(
    'pg-boss to record the image completions',
    async () => {
      const j = await jobTimes(imageIds);
      return j.every((x) => x.completed !== null) ? j : undefined;
    },
    10_000,
  );
  t.ok(jobs.every((j) => j.output === 'image'));
  const firstPickup = Math.min(...jobs.map((j) => j.started! - j.created));
  t.ok(firstPickup < 2000, `the first image was picked up in ${firstPickup.toFixed(0)} ms although the video holds the video slot`);

  const final = await until(
    'the video to finish',
    async () => {
      const [g] = await statuses([videoId]);
      return g.status === 'generating' ? undefined : g;
    },
    150_000,
  );
  t.equal(final.status, 'completed', 'the video completes too');
  // (That every image finished first is asserted on the generations above; pg-boss records a job's
  // completion a moment after its handler returns, so its timestamps cannot order a near tie.)
});
