// add_voiceover (real local speech synthesis with word timings), generate_captions_from_items
// (exact for our voiceovers through trims and rates; a transcription provider for other audio,
// tested against a local fake of its HTTP API; a 400 naming the missing provider otherwise) and
// the built-in sound effect library.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { probe } from '../../src/media/ffmpeg.ts';
import { listSoundEffects } from '../../src/media/sound-effects.ts';
import { startTestApp } from '../helpers/app.ts';
import { addMedia, colorVideo, createProject, edit, editOk, item, upload } from './helpers.ts';

const app = await startTestApp(t);
const ws = await app.workspace();

/** A copy of a stored object in a temporary folder of this test (storage gives copies, never its paths). */
const copies = fs.mkdtempSync(path.join(os.tmpdir(), 'voice-test-'));
t.teardown(() => fs.rmSync(copies, { recursive: true, force: true }));
async function copyOut(key: string): Promise<string> {
  const file = path.join(copies, key.replace(/\//g, '_'));
  await app.service.ctx.storage.copyToFile(key, file);
  return file;
}

const TEXT = 'Meet the easiest healthy swap for soda today.';

t.test('add_voiceover synthesizes speech, stores it as voice media and places it', async (t) => {
  const p = await createProject(app, ws.key);
  const r = await editOk(
    app,
    ws.key,
    p.id,
    [{ type: 'add_voiceover', text: TEXT, voice_id: 'ava-bright', from_seconds: 0.5, volume_db: -2 }],
    { instructions: 'narrate it' },
  );
  const vo = item(r.video, r.applied_operations[0].item_ids[0]);
  t.match(vo, { type: 'audio', audio_role: 'voiceover', from_seconds: 0.5, volume_db: -2, source_start_seconds: 0, playback_rate: 1 });
  t.ok(vo.duration_seconds > 1.5 && vo.duration_seconds < 6, `a plausible speech length (${vo.duration_seconds} s)`);
  const lib = await app.request('GET', '/api/v1/editor/media?media_type=voice', { key: ws.key });
  const m = lib.body.data.find((x: { id: string }) => x.id === vo.media_id);
  t.match(m, { media_type: 'voice', content_type: 'audio/wav', has_audio: true, status: 'ready' });
  t.equal(m.duration_seconds, vo.duration_seconds);
  const file = await copyOut((await app.service.ctx.sql`select storage_key from media where id = ${vo.media_id}`)[0].storage_key);
  const pr = await probe(file);
  t.ok(pr.has_audio && Math.abs((pr.duration_seconds ?? 0) - vo.duration_seconds) < 0.05, 'a real audio file of that length');

  const fast = await editOk(app, ws.key, p.id, [
    { type: 'add_voiceover', text: TEXT, voice_id: 'marcus-narrator', voice_settings: { speed: 1.8, pitch: -3 } },
  ]);
  const quick = item(fast.video, fast.applied_operations[0].item_ids[0]);
  t.ok(
    quick.duration_seconds < vo.duration_seconds * 0.8,
    `speed 1.8 is shorter (${quick.duration_seconds} s vs ${vo.duration_seconds} s)`,
  );
  t.not(quick.track_id, vo.track_id, 'overlapping speech goes to another audio track');

  const unknown = await edit(app, ws.key, p.id, [
    { type: 'set_title', title: 'x' },
    { type: 'add_voiceover', text: 'Hi', voice_id: 'nobody-voice' },
  ]);
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.context.operation_index, 1);
  t.equal(unknown.body.error.context.field, 'body.operations[1].voice_id');
  t.equal(unknown.body.error.context.resource, 'voice');
  const voices = await app.request('GET', '/api/v1/editor/media?media_type=voice', { key: ws.key });
  t.equal(voices.body.data.length, 2, 'a refused batch leaves no voice media behind');
});

t.test('generate_captions_from_items: exact word timings of our voiceovers through trim and rate', async (t) => {
  const p = await createProject(app, ws.key);
  // The seed's example: a voiceover and its captions in one batch.
  const r = await editOk(app, ws.key, p.id, [
    { type: 'add_voiceover', text: TEXT, from_seconds: 1 },
    { type: 'generate_captions_from_items', language: 'en', style: { highlight_color: '#FFD400' } },
  ]);
  const voId = r.applied_operations[0].item_ids[0];
  const capId = r.applied_operations[1].item_ids[0];
  const cap = item(r.video, capId);
  t.match(cap, { type: 'captions', style: { highlight_color: '#FFD400' } });
  t.ok(cap.layer >= 10, 'a front layer');
  const words = cap.captions.flatMap((c: any) =>
    c.words.map((w: any) => ({ text: w.text, at: cap.from_seconds * 1000 + w.startMs, end: cap.from_seconds * 1000 + w.endMs })),
  );
  t.same(
    words.map((w: any) => w.text),
    TEXT.split(' '),
    'every word, in order',
  );
  t.ok(words[0].at >= 1000 && words[0].at < 1300, `the first word starts with the voiceover at 1 s (${words[0].at} ms)`);
  for (let k = 1; k < words.length; k++) t.ok(words[k].at >= words[k - 1].at, 'monotonic');
  t.ok(cap.captions.length >= 2, 'grouped into several cues');
  t.ok(
    cap.captions.every((c: any) => c.endMs > c.startMs && c.words.every((w: any) => w.startMs >= c.startMs - 1 && w.endMs <= c.endMs + 1)),
    'words inside their cue',
  );

  // Trim 0.6 s into the speech and play it 1.25× faster: words move to from + (t − 0.6) / 1.25.
  const trimmed = await editOk(app, ws.key, p.id, [
    { type: 'set_item_source', item_id: voId, source_start_seconds: 0.6, playback_rate: 1.25 },
    { type: 'set_item_timing', item_id: voId, duration_seconds: 1.5 },
    { type: 'generate_captions_from_items', source_item_ids: [voId], captions_item_id: capId },
  ]);
  const cap2 = item(trimmed.video, capId);
  const words2 = cap2.captions.flatMap((c: any) => c.words.map((w: any) => ({ text: w.text, at: cap2.from_seconds * 1000 + w.startMs })));
  // A word partly inside the window is kept, clipped to it.
  const expected = words
    .map((w: any) => ({ text: w.text, media: w.at - 1000, mediaEnd: w.end - 1000 }))
    .filter((w: any) => w.mediaEnd > 600 && w.media < 600 + 1500 * 1.25)
    .map((w: any) => ({ text: w.text, at: 1000 + (Math.max(600, w.media) - 600) / 1.25 }));
  t.ok(expected.length >= 3 && expected.length < words.length, `${expected.length} of ${words.length} words are in the window`);
  t.same(
    words2.map((w: any) => w.text),
    expected.map((w: any) => w.text),
    'only the words inside the trimmed window',
  );
  for (const [k, w] of words2.entries()) t.ok(Math.abs(w.at - expected[k].at) <= 2, `${w.text} at ${w.at} ms (expected ${expected[k].at})`);
  t.equal(trimmed.applied_operations[2].item_ids[0], capId, 'the captions item was replaced in place');
});

t.test('captions of other audio need a transcription provider: a 400 naming it when none is configured', async (t) => {
  const p = await createProject(app, ws.key);
  const clip = await upload(app, ws.key, 'talk.mp4', 'video/mp4', colorVideo('talk', 'gray', 2));
  const added = await addMedia(app, ws.key, p.id, { media_id: clip.media.id });
  const before = (await app.request('GET', `/api/v1/editor/videos/${p.id}`, { key: ws.key })).body;
  const res = await edit(app, ws.key, p.id, [
    { type: 'add_text', text: 'x' },
    { type: 'generate_captions_from_items', source_item_ids: [added.item.item_id] },
  ]);
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'bad_request');
  t.match(res.body.error.message, /transcription provider.*none is configured.*TRANSCRIPTION_PROVIDER_URL/);
  t.equal(res.body.error.context.provider, 'transcription');
  t.equal(res.body.error.context.operation_index, 1);
  t.equal(res.body.error.context.field, 'body.operations[1].source_item_ids[0]');
  t.same((await app.request('GET', `/api/v1/editor/videos/${p.id}`, { key: ws.key })).body, before, 'nothing changed');
  const none = await edit(app, ws.key, (await createProject(app, ws.key)).id, [{ type: 'generate_captions_from_items' }]);
  t.equal(none.status, 400, 'no audible items');
});

t.test('a configured transcription provider (OpenAI-compatible API, local fake) captions other audio', async (t) => {
  const calls: { auth: string | undefined; fields: Record<string, string>; fileBytes: number; fileType: string }[] = [];
  const fake = http.createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return res.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const form = await new Request('http://x', {
      method: 'POST',
      body,
      headers: { 'content-type': req.headers['content-type']! },
    }).formData();
    const file = form.get('file') as File;
    calls.push({
      auth: req.headers.authorization,
      fields: Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string')) as Record<string, string>,
      fileBytes: file.size,
      fileType: file.type,
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        text: 'Fresh lemons daily',
        language: 'english',
        words: [
          { word: 'Fresh', start: 0.2, end: 0.6, probability: 0.98 },
          { word: 'lemons', start: 0.6, end: 1.1 },
          { word: 'daily', start: 1.3, end: 1.8 },
        ],
      }),
    );
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  t.teardown(() => fake.close());
  const withProvider = await startTestApp(t, {
    TRANSCRIPTION_PROVIDER_URL: `http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`,
    TRANSCRIPTION_PROVIDER_API_KEY: 'stt-secret',
    TRANSCRIPTION_MODEL: 'whisper-large-v3',
  });
  const own = await withProvider.workspace();
  const p = await createProject(withProvider, own.key);
  const clip = await upload(withProvider, own.key, 'talk.mp4', 'video/mp4', colorVideo('talk2', 'gray', 3));
  const added = await addMedia(withProvider, own.key, p.id, { media_id: clip.media.id, from_seconds: 2 });
  const r = await editOk(withProvider, own.key, p.id, [
    { type: 'set_item_source', item_id: added.item.item_id, source_start_seconds: 0.5 },
    { type: 'set_item_timing', item_id: added.item.item_id, duration_seconds: 2.5 },
    { type: 'generate_captions_from_items', language: 'en-US' },
  ]);
  t.equal(calls.length, 1, 'one transcription request');
  t.equal(calls[0].auth, 'Bearer stt-secret');
  t.match(calls[0].fields, {
    model: 'whisper-large-v3',
    response_format: 'verbose_json',
    'timestamp_granularities[]': 'word',
    language: 'en',
  });
  t.equal(calls[0].fileType, 'audio/wav');
  t.ok(calls[0].fileBytes > 1000, 'the audio was sent');
  const cap = item(r.video, r.applied_operations[2].item_ids[0]);
  const words = cap.captions.flatMap((c: any) => c.words.map((w: any) => [w.text, Math.round(cap.from_seconds * 1000 + w.startMs)]));
  // Placed at 2 s, trimmed 0.5 s: media time m lands at 2000 + (m − 500) ms; "Fresh" (200 ms) is cut off at its start.
  t.same(words, [
    ['Fresh', 2000],
    ['lemons', 2100],
    ['daily', 2800],
  ]);
  t.equal(cap.captions[0].confidence !== undefined, true, 'confidence carried over');
  // The transcript is kept: captioning the same media again asks the provider nothing.
  await editOk(withProvider, own.key, p.id, [{ type: 'generate_captions_from_items', captions_item_id: cap.item_id }]);
  t.equal(calls.length, 1, 'cached transcript reused');
});

t.test('the built-in sound effect library is real audio, searchable for the MCP tool', async (t) => {
  const all = await listSoundEffects(app.service.ctx.storage);
  t.ok(all.length >= 12, `${all.length} effects`);
  t.ok(new Set(all.map((s) => s.category)).size >= 5, 'several categories');
  const whoosh = await listSoundEffects(app.service.ctx.storage, { query: 'whoosh' });
  t.same(whoosh.map((s) => s.id).sort(), ['whoosh-long', 'whoosh-short']);
  t.same((await listSoundEffects(app.service.ctx.storage, { category: 'impact' })).map((s) => s.id).sort(), ['boom', 'thud']);
  const res = await fetch(whoosh[0].preview_url);
  t.equal(res.status, 200);
  const file = await copyOut(`sound-effects/${whoosh[0].id}.wav`);
  const pr = await probe(file);
  t.ok(pr.has_audio && Math.abs((pr.duration_seconds ?? 0) - whoosh[0].duration_seconds) < 0.05, 'duration as listed');
});
