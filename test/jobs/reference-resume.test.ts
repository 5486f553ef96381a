// The reference analysis job after an attempt that failed once its URL media were fetched: the
// transcription provider has an outage (HTTP 503, retryable) during the analysis of a video. The
// next attempt resumes at the analysis with the media the fetch stage stored (the URL is not
// fetched again, nothing is stored twice) and completes once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import t from 'tap';
import { media, referenceInspirations } from '../../src/db/schema/index.ts';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { referenceAnalysisJob } from '../../src/pipelines/reference-analysis/job.ts';
import { startTestApp } from '../helpers/app.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reference-resume-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
// Two seconds of colour with a voice-band tone whose level rises and falls (speech to transcribe).
const clipFile = path.join(dir, 'clip.mp4');
execFileSync(FFMPEG_PATH, [
  '-hide_banner',
  '-loglevel',
  'error',
  '-y',
  '-f',
  'lavfi',
  '-i',
  'color=c=red:s=160x284:r=10:d=2',
  '-f',
  'lavfi',
  '-i',
  "aevalsrc='0.5*sin(2*PI*220*t)*(0.5+0.5*sin(2*PI*4*t))':s=16000:d=2",
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-pix_fmt',
  'yuv420p',
  '-c:a',
  'aac',
  '-shortest',
  clipFile,
]);
const clip = fs.readFileSync(clipFile);

let fetches = 0;
const host = http.createServer((req, res) => {
  if (req.url !== '/clip.mp4') return res.writeHead(404).end('missing');
  fetches++;
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clip.length }).end(clip);
});
// The transcription provider: an outage on its first call, then an answer.
let transcriptions = 0;
const stt = http.createServer(async (req, res) => {
  for await (const _ of req);
  if (transcriptions++ === 0) return res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ text: 'Fresh lemons daily', language: 'english' }));
});
for (const s of [host, stt]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
t.teardown(() => {
  host.close();
  stt.close();
});
const port = (s: http.Server) => (s.address() as { port: number }).port;

// No workers: the test runs the job's attempts itself.
const app = await startTestApp(t, {
  OUTBOUND_ALLOW_IPS: '127.0.0.1',
  TRANSCRIPTION_PROVIDER_URL: `http://127.0.0.1:${port(stt)}/v1`,
  TRANSCRIPTION_PROVIDER_API_KEY: 'stt-key',
});
const ctx = app.service.ctx;
const tools = () => ({ signal: new AbortController().signal, progress() {}, annotate() {} });

t.test('an attempt failed in the analysis resumes without fetching the URL media again', async (t) => {
  const ws = await app.workspace({ credits: 100, scopes: ['generations:read', 'generations:write'] });
  const res = await app.request('POST', '/api/v1/reference-inspirations', {
    key: ws.key,
    body: { template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `http://127.0.0.1:${port(host)}/clip.mp4` },
  });
  t.equal(res.status, 200, res.text);
  const referenceId = res.body.id as string;
  const run = (attempt: number) =>
    referenceAnalysisJob.declaration.run(
      ctx,
      { id: `attempt-${attempt}`, data: { referenceId }, attempt, lastAttempt: attempt === 3 },
      tools(),
    );

  // Attempt 1: the URL media are fetched and stored, then the transcription provider fails.
  await t.rejects(run(1), /HTTP 503/);
  t.equal(fetches, 1, 'attempt 1 fetched the video once');
  const [mid] = await ctx.db.select().from(referenceInspirations).where(eq(referenceInspirations.id, referenceId));
  t.equal(mid.status, 'processing');
  const stored = (mid.state as { fetch?: { storageKey: string }[] }).fetch;
  t.equal(stored?.length, 1, 'the fetch stage kept what it stored');
  t.ok(stored && (await ctx.storage.readBuffer(stored[0].storageKey)).equals(clip), 'the stored object is the video');

  // Attempt 2: resumes at the analysis with the stored media.
  await run(2);
  t.equal(fetches, 1, 'the second attempt did not fetch the video again');
  t.equal(transcriptions, 2);
  const [done] = await ctx.db.select().from(referenceInspirations).where(eq(referenceInspirations.id, referenceId));
  t.equal(done.status, 'ready');
  const rows = await ctx.db.select().from(media).where(eq(media.orgId, ws.orgId));
  t.equal(rows.length, 1, 'one media row');
  t.same(done.mediaIds, [rows[0].id]);
  t.equal(rows[0].storageKey, stored?.[0].storageKey, 'the media row holds the object attempt 1 stored');
  const runs = (done.state as { runs: Record<string, { attempts: number[]; finishedAt?: string }> }).runs;
  t.same(runs.fetch.attempts, [1], 'fetch ran once');
  t.same(runs.analyse.attempts, [1, 2], 'analyse started in both attempts');
  t.ok(runs.analyse.finishedAt);
  t.same(Object.keys(done.state as object).sort(), ['runs', 'timings'], 'the state keeps only the record once ready');
  t.ok((done.analysis as unknown[]).length === 1, 'the analysis is in its column');

  // A repeated delivery of the finished job does nothing.
  await run(3);
  t.equal(fetches, 1);
  t.equal(transcriptions, 2);
  const list = await app.request('GET', '/api/v1/reference-inspirations?limit=20', { key: ws.key });
  t.equal(list.status, 200, list.text);
  t.match(
    list.body.data.find((r: { id: string }) => r.id === referenceId),
    { status: 'ready', media: [{ analysis: { transcript: 'Fresh lemons daily' } }] },
  );
  t.equal((await ctx.db.select().from(media).where(eq(media.orgId, ws.orgId))).length, 1, 'still one media row');
});
