// The faceless job after a crash: an attempt cut off in the render stage (its ffmpeg killed)
// leaves the script, scenes, voiceover and captions stored; the next attempt resumes after them
// (same scene and voice media, nothing written twice) and completes.
import { and, eq } from 'drizzle-orm';
import t from 'tap';
import { facelessVideos, media } from '../../src/db/schema/index.ts';
import { facelessJob } from '../../src/pipelines/faceless-video/job.ts';
import { startTestApp } from '../helpers/app.ts';

// No workers: the test runs the job's attempts itself.
const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' });
const ctx = app.service.ctx;

t.test('an attempt killed while rendering resumes after its stored stages', async (t) => {
  const ws = await app.workspace({ credits: 100 });
  const res = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws.key,
    body: { script: 'One fact to know. Two facts, and you are done.', duration: '5' },
  });
  t.equal(res.status, 200, res.text);
  const videoId = res.body.video_id as number;

  // Attempt 1: aborted as soon as the render stage reports progress.
  const abort = new AbortController();
  const stagesSeen: string[] = [];
  const tools = (signal: AbortSignal) => ({
    signal,
    progress(stage: string) {
      if (stagesSeen.at(-1) !== stage) stagesSeen.push(stage);
      if (stage === 'render') abort.abort(new Error('worker killed'));
    },
    annotate() {},
  });
  await t.rejects(
    facelessJob.declaration.run(ctx, { id: 'attempt-1', data: { videoId }, attempt: 1, lastAttempt: false }, tools(abort.signal)),
  );
  const [mid] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(mid.status, 'generating');
  const stored = mid.artifacts as Record<string, any>;
  t.ok(stored.script && stored.scenes && stored.voiceover && stored.captions, `stored stages: ${Object.keys(stored).join(', ')}`);
  t.equal(stored.scenes.mediaIds.length, 2, 'one scene per sentence');
  const mediaBefore = await ctx.db.select({ id: media.id, createdAt: media.createdAt }).from(media).where(eq(media.orgId, ws.orgId));
  t.equal(mediaBefore.length, 5, 'two scenes, the overlay (caption scrim and brand), the voiceover and the music bed');

  // Attempt 2: resumes at the render.
  const resumed: string[] = [];
  await facelessJob.declaration.run(
    ctx,
    { id: 'attempt-2', data: { videoId }, attempt: 2, lastAttempt: false },
    { signal: new AbortController().signal, progress: (stage) => void (resumed.at(-1) !== stage && resumed.push(stage)), annotate() {} },
  );
  t.same(
    resumed.filter((s) => s !== 'render'),
    [],
    `the second attempt only renders (stages reported: ${resumed.join(', ')})`,
  );
  const [done] = await ctx.db.select().from(facelessVideos).where(eq(facelessVideos.videoId, videoId));
  t.equal(done.status, 'completed');
  t.equal(done.attempts, 2);
  t.same((done.artifacts as Record<string, any>).scenes, stored.scenes, 'the same scene media');
  const mediaAfter = await ctx.db.select({ id: media.id, kind: media.kind }).from(media).where(eq(media.orgId, ws.orgId));
  t.equal(mediaAfter.length, 6, 'the stored media plus the MP4, nothing twice');
  t.equal(mediaAfter.filter((m) => m.kind === 'video').length, 1);

  // A repeated delivery of the finished job does nothing.
  await facelessJob.declaration.run(
    ctx,
    { id: 'attempt-3', data: { videoId }, attempt: 3, lastAttempt: true },
    { signal: new AbortController().signal, progress() {}, annotate() {} },
  );
  const [still] = await ctx.db
    .select()
    .from(facelessVideos)
    .where(and(eq(facelessVideos.videoId, videoId), eq(facelessVideos.status, 'completed')));
  t.equal(still.attempts, 2);
  const video = await app.request('GET', `/api/v1/videos/${videoId}`, { key: ws.key });
  t.match(video.body, { status: 'completed', progress: 100 });
});
