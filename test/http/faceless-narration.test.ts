// The narration of a faceless video written from a prompt fills the video (issue 24, part 1): its
// stored transcript's word timings span at least 90 % of the requested duration and leave no
// music-only or silent tail longer than 1.5 s, at 30 s and at another duration; the MP4 lasts the
// requested time. The script it speaks is made of whole sentences that never splice the prompt.
import { eq } from 'drizzle-orm';
import t from 'tap';
import { mediaTranscripts } from '../../src/db/schema/index.ts';
import { stableUuid } from '../../src/pipelines/faceless-video/rows.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 10_000 });
const PROMPT = 'Why embedded Rust is worth learning for firmware developers: three reasons';

async function finished(id: number): Promise<{ status: string; duration_seconds: number; error: unknown; title: string }> {
  const end = Date.now() + 240_000;
  for (;;) {
    const v = (await app.request('GET', `/api/v1/videos/${id}`, { key: ws.key })).body;
    if (v.status === 'completed' || v.status === 'error') return v;
    if (Date.now() > end) throw new Error(`video ${id} still ${v.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

for (const seconds of [30, 12]) {
  t.test(`a ${seconds} s faceless video: the narration fills at least 90 % and leaves no tail over 1.5 s`, async (t) => {
    const res = await app.request('POST', '/api/v1/faceless-videos', {
      key: ws.key,
      body: { prompt: PROMPT, duration: String(seconds), voice_id: 'ava-bright', language: 'English', aspect_ratio: '16:9' },
    });
    t.equal(res.status, 200, res.text);
    const video = await finished(res.body.video_id);
    t.equal(video.status, 'completed', JSON.stringify(video.error));
    t.ok(Math.abs(video.duration_seconds - seconds) <= seconds * 0.1, `the video lasts ${video.duration_seconds} s`);
    const [voice] = await app.service.ctx.db
      .select({ words: mediaTranscripts.words, text: mediaTranscripts.text })
      .from(mediaTranscripts)
      .where(eq(mediaTranscripts.mediaId, stableUuid(`faceless:${res.body.video_id}:voiceover`)));
    const words = voice.words as { startMs: number; endMs: number }[];
    const endMs = Math.max(...words.map((w) => w.endMs));
    const startMs = Math.min(...words.map((w) => w.startMs));
    const lengthMs = video.duration_seconds * 1000;
    t.ok((endMs - startMs) / lengthMs >= 0.9, `speech spans ${startMs}–${endMs} ms of ${lengthMs} ms (≥ 90 %)`);
    t.ok(lengthMs - endMs <= 1500, `the tail after the last word is ${lengthMs - endMs} ms (≤ 1.5 s)`);
    t.notMatch(voice.text, /\b(?:with|about|to|of) Why\b/, 'no prompt fragment spliced into a sentence');
  });
}
