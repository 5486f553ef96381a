// The media quality checker on videos and their sound (src/media/quality/check.ts), made with the
// bundled ffmpeg: a good two-scene video passes every check; black bars uncovered by a pan, two
// identical consecutive scenes, narration that stops at 70 % and a silent audio track each FAIL
// their check, while the checks their defect does not concern still pass. Narration is also heard
// (no manifest): eSpeak speech counts, a music bed alone does not.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { synthesizeSpeech } from '../../src/engines/speech/espeak.ts';
import { renderMusicBed } from '../../src/media/music-bed.ts';
import { stopOcr } from '../../src/media/ocr.ts';
import { type CheckName, checkMedia, type QualityReport } from '../../src/media/quality/check.ts';
import type { MediaManifest, PlacedText } from '../../src/media/quality/manifest.ts';
import { speechSpans } from '../../src/media/quality/sample.ts';
import { ffmpeg, inDir, poster, slideVideo } from './quality-fixtures.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-video-'));
const at = inDir(dir);
t.teardown(async () => {
  await stopOcr();
  fs.rmSync(dir, { recursive: true, force: true });
});

const W = 720;
const H = 900;
const rows = (r: QualityReport, check: CheckName) => r.rows.filter((row) => row.check === check);
const failed = (r: QualityReport) => r.rows.filter((row) => !row.pass).map((row) => `${row.check} ${row.subject}: ${row.detail}`);
const round2 = (v: number) => Math.round(v * 100) / 100;
const during = (texts: PlacedText[], from: number, to: number) => texts.map((x) => ({ ...x, fromSeconds: from, toSeconds: to }));

let sceneA: MediaManifest;
let sceneB: MediaManifest;
t.before(async () => {
  sceneA = await poster(at('a.png'), {
    width: W,
    height: H,
    background: 'url(#g)',
    gradient: ['#1d2b64', '#f8cdda'],
    pattern: 'circles',
    texts: [{ text: 'Fresh citrus water', px: 64, color: '#ffffff', x: 72, y: 120, maxWidth: 560, scrim: 'rgba(10,12,30,0.78)' }],
  });
  sceneB = await poster(at('b.png'), {
    width: W,
    height: H,
    background: 'url(#g)',
    gradient: ['#ffb347', '#b33939'],
    pattern: 'stripes',
    texts: [{ text: 'Zero sugar', px: 72, color: '#111111', x: 72, y: 600, role: 'subheadline', scrim: '#ffffff' }],
  });
});

/** The manifest of a+b, 3 s each, narrated over `narration`. */
const twoScenes = (narration?: MediaManifest['narration']): MediaManifest => ({
  width: W,
  height: H,
  texts: [...during(sceneA.texts, 0, 3), ...during(sceneB.texts, 3, 6)],
  sceneStarts: [0, 3],
  requestedSeconds: 6,
  ...(narration ? { narration } : {}),
});

t.test('a good video passes every check, within seconds', async (t) => {
  await slideVideo(at('good.mp4'), [at('a.png'), at('b.png')], 3, 'sine=f=220');
  const started = Date.now();
  const r = await checkMedia(at('good.mp4'), twoScenes([{ fromSeconds: 0.2, toSeconds: 5.8 }]));
  t.ok(Date.now() - started < 30_000, `checked in ${Date.now() - started} ms`);
  t.same(failed(r), [], 'nothing fails');
  t.equal(r.kind, 'video');
  t.equal(rows(r, 'text-readback').length, 2, 'each text read in its own scene');
  t.ok((rows(r, 'scene-distinct')[0].value as number) >= 10);
  t.match(rows(r, 'silent-audio')[0], { pass: true, detail: 'the track has sound' });
  t.match(rows(r, 'narration-coverage')[0], { pass: true, value: '93.3 %' });
  // Without a manifest the scenes are found by their cut.
  const cut = await checkMedia(at('good.mp4'));
  t.match(rows(cut, 'scene-distinct')[0], { pass: true, subject: '2 scenes' });
  // Bounded: with maxTexts 1 only the first text is read; the other gets the geometric checks.
  const bounded = await checkMedia(at('good.mp4'), twoScenes(), { maxTexts: 1 });
  t.equal(rows(bounded, 'text-readback').length, 1);
  t.match(rows(bounded, 'text-fit')[1], { pass: true, detail: /pixels not looked at: 1 of 2 texts are/ });
});

t.test('a text shown at another time than the manifest says fails its read-back', async (t) => {
  await slideVideo(at('good2.mp4'), [at('a.png'), at('b.png')], 3);
  const wrong = { ...twoScenes(), texts: [...during(sceneA.texts, 3, 6), ...during(sceneB.texts, 0, 3)] };
  const r = await checkMedia(at('good2.mp4'), wrong);
  t.same(
    rows(r, 'text-readback').map((x) => x.pass),
    [false, false],
  );
});

t.test('black bars a pan uncovers fail uncovered-canvas; full frames and a dark design pass', async (t) => {
  const encode = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    "color=c=black:s=640x360:d=4:r=25[bg];testsrc2=s=640x360:d=4:r=25[fg];[bg][fg]overlay=x='t*40':y=0",
    ...encode,
    at('pan.mp4'),
  ]);
  const pan = await checkMedia(at('pan.mp4'));
  t.match(rows(pan, 'uncovered-canvas')[0], { pass: false, detail: /left bar of/ });
  t.ok((rows(pan, 'uncovered-canvas')[0].value as number) >= 6, `${rows(pan, 'uncovered-canvas')[0].value} frames with a bar`);
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=s=640x360:d=4:r=25', ...encode, at('full.mp4')]);
  t.same(failed(await checkMedia(at('full.mp4'))), []);
  const dark = await poster(at('dark.png'), {
    width: W,
    height: H,
    background: '#000000',
    pattern: 'none',
    texts: [{ text: 'Midnight edition', px: 56, color: '#ffffff', x: 100, y: 400 }],
  });
  await slideVideo(at('dark.mp4'), [at('dark.png')], 3);
  t.same(failed(await checkMedia(at('dark.mp4'), { ...dark, texts: during(dark.texts, 0, 3) })), [], 'black around a headline is a design');
});

t.test('two identical consecutive scenes fail scene-distinct', async (t) => {
  await slideVideo(at('same.mp4'), [at('a.png'), at('a.png'), at('b.png')], 2, 'sine=f=330');
  const m: MediaManifest = {
    ...twoScenes(),
    texts: [...during(sceneA.texts, 0, 4), ...during(sceneB.texts, 4, 6)],
    sceneStarts: [0, 2, 4],
  };
  const r = await checkMedia(at('same.mp4'), m);
  t.same(failed(r), ['scene-distinct 3 scenes: alike: scenes 1→2: 0 bits']);
});

t.test('narration that stops at 70 % fails coverage and tail', async (t) => {
  await slideVideo(at('short.mp4'), [at('a.png'), at('b.png')], 3, 'sine=f=220:d=4.2,apad');
  const r = await checkMedia(at('short.mp4'), twoScenes([{ fromSeconds: 0, toSeconds: 4.2 }]));
  t.same(
    failed(r).map((x) => x.split(' ')[0]),
    ['narration-coverage', 'narration-tail'],
  );
  t.match(rows(r, 'narration-coverage')[0], { value: '70 %' });
  t.match(rows(r, 'narration-tail')[0], { value: 1.8 });
  // Without narration expected, the same file has nothing to answer for.
  t.same(failed(await checkMedia(at('short.mp4'))), []);
});

t.test('heard narration: eSpeak speech to the end passes; speech then music alone fails; music alone is no narration', async (t) => {
  const speech = await synthesizeSpeech(
    'Small changes add up fast. Drink more water, sleep a little longer, and walk after lunch.',
    at('voice.wav'),
    { voice: 'en-us' },
  );
  const spoken = speech.durationMs / 1000;
  await slideVideo(at('spoken.mp4'), [at('a.png'), at('b.png')], spoken / 2, { file: at('voice.wav') });
  const full = await checkMedia(at('spoken.mp4'), undefined, { expectNarration: true });
  t.same(failed(full), [], `speech for ${spoken} s is heard as narration`);
  // The same speech, then the music bed alone for the last 30 %: as the faceless video did.
  const total = Math.round((spoken / 0.7) * 100) / 100;
  await renderMusicBed(at('bed.wav'), { seconds: total, style: 'cinematic', words: speech.words });
  await ffmpeg([
    '-i',
    at('voice.wav'),
    '-i',
    at('bed.wav'),
    '-filter_complex',
    '[0:a]apad[v];[v][1:a]amix=inputs=2:duration=longest',
    '-t',
    String(total),
    at('tail.wav'),
  ]);
  await slideVideo(at('tail.mp4'), [at('a.png'), at('b.png')], total / 2, { file: at('tail.wav') });
  const tail = await checkMedia(at('tail.mp4'), undefined, { expectNarration: true });
  t.same(
    failed(tail).map((x) => x.split(' ')[0]),
    ['narration-coverage', 'narration-tail'],
  );
  const heardTail = rows(tail, 'narration-tail')[0].value as number;
  t.ok(
    heardTail > 1.5 && heardTail <= total - spoken + 0.1,
    `music-only tail heard as ${heardTail} s (${round2(total - spoken)} s after the speech)`,
  );
  await slideVideo(at('bed.mp4'), [at('a.png'), at('b.png')], total / 2, { file: at('bed.wav') });
  // Music alone is not narration. The music library's drums and its ducking (here under words no one
  // says) put energy in the voice band now and then (an eighth of this cinematic track is taken for
  // speech), so heard narration is a fallback: the pipelines declare their narration spans in the
  // manifest instead.
  const bedOnly = rows(await checkMedia(at('bed.mp4'), undefined, { expectNarration: true }), 'narration-coverage')[0];
  t.equal(bedOnly.pass, false, 'music alone fails narration coverage');
  t.ok(Number.parseFloat(String(bedOnly.value)) < 50, `music alone heard as ${bedOnly.value} narration`);
});

t.test('a silent audio track fails; no audio stream passes', async (t) => {
  await slideVideo(at('silent.mp4'), [at('a.png'), at('b.png')], 3, 'anullsrc=r=48000:cl=stereo');
  const r = await checkMedia(at('silent.mp4'), twoScenes());
  t.same(failed(r), ['silent-audio audio: a silent audio track']);
  await slideVideo(at('mute.mp4'), [at('a.png'), at('b.png')], 3);
  t.match(rows(await checkMedia(at('mute.mp4'), twoScenes()), 'silent-audio')[0], { pass: true, value: 'no audio stream' });
  // Narration the manifest lists cannot be in a file without sound.
  const unheard = await checkMedia(at('mute.mp4'), twoScenes([{ fromSeconds: 0, toSeconds: 6 }]));
  t.match(rows(unheard, 'narration-coverage')[0], { pass: false, value: '0 %', detail: /no audio stream/ });
  // A sound file alone is checked for its track too.
  await ffmpeg(['-f', 'lavfi', '-t', '2', '-i', 'anullsrc=r=48000:cl=mono', '-c:a', 'aac', at('silent.m4a')]);
  const audio = await checkMedia(at('silent.m4a'));
  t.equal(audio.kind, 'audio');
  t.same(failed(audio), ['silent-audio audio: a silent audio track']);
});

t.test('speech spans: the music after the last sentence is not speech because one window over both is', async (t) => {
  // 100 ms voice-band levels: 5 s of syllables (loud, soft, pause), then 3 s of a steady music bed
  // that comes back up 7 dB when the speech ends (the ducking lets go).
  const syllables = Array.from({ length: 50 }, (_, i) => [-18, -24, -50, -20, -30][i % 5]);
  const music = [-29, ...Array.from({ length: 29 }, (_, i) => -22 + (i % 3))];
  const spans = speechSpans([...syllables, ...music]);
  t.ok(spans.length > 0, 'the speech is heard');
  const end = Math.max(...spans.map((s) => s.toSeconds));
  t.ok(end >= 4.9 && end <= 5.5, `speech heard to ${end} s (it ends at 5 s)`);
});
