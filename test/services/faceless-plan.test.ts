// The pure parts of the faceless pipeline: script parts, the speech-rate fit, caption cues from
// word timings, scene start times, the timeline (scenes back to back from 0, a pan on each, the
// voiceover, one captions item) and the price rule.
import t from 'tap';
import {
  captionCues,
  facelessTimeline,
  fitSpeed,
  narrationEnd,
  partsFromScript,
  partStarts,
} from '../../src/pipelines/faceless-video/plan.ts';
import { facelessPrice, parseLanguage } from '../../src/pipelines/faceless-video/request.ts';

t.test('a script becomes at most seven parts: hook, beats, call to action', async (t) => {
  const parts = partsFromScript('One. Two! Three? Four. Five. Six. Seven. Eight. Nine.');
  t.equal(parts.length, 7);
  t.equal(parts[0].role, 'hook');
  t.equal(parts.at(-1)!.role, 'cta');
  t.equal(parts.map((p) => p.text).join(' '), 'One. Two! Three? Four. Five. Six. Seven. Eight. Nine.', 'no word lost');
  t.same(
    partsFromScript('No punctuation at all').map((p) => p.text),
    ['No punctuation at all'],
  );
});

t.test('the speech rate is corrected to end the narration just before the video ends, within the bounds', async (t) => {
  t.equal(fitSpeed(9500, 1, 10_000), 1, 'already fits (ends 0.5 s before the end)');
  t.equal(fitSpeed(4600, 1, 5000), 1, 'a 5 s video: ends 0.4 s before the end');
  t.equal(fitSpeed(28_900, 1, 30_000) === 1, false, 'a tail over 1 s is corrected');
  t.ok(Math.abs(fitSpeed(8000, 1, 10_000) - 8 / 9.5) < 1e-9, 'too short (80 %): slower, to end 0.5 s before the end');
  t.ok(Math.abs(fitSpeed(24_000, 1, 30_000) - 24 / 29.5) < 1e-9, 'too short at 30 s: to end 0.5 s before the end');
  t.ok(Math.abs(fitSpeed(12_000, 1, 10_000) - 12 / 9.5) < 1e-9, 'too long: faster');
  t.equal(fitSpeed(40_000, 1, 10_000), 1.6, 'never faster than 1.6 from speed 1');
  t.equal(fitSpeed(2000, 1, 10_000), 0.8, 'never slower than 0.8 from speed 1');
  t.ok(Math.abs(fitSpeed(27_000, 0.9, 30_000) - (0.9 * 27_000) / 29_500) < 1e-9, 'a measured synthesis: the tempo corrects it');
  t.equal(fitSpeed(10_000, 0.9, 30_000), 0.8, 'never slower than 0.8 in all');
  // An 8 s narration ending at 7.21 s "fitted" the 90 % window, but its first word comes about 0.1 s in: 88.9 % spoken.
  t.ok(
    Math.abs(fitSpeed(7210, 1.6, 8000) - (1.6 * 7210) / 7500) < 1e-9,
    'an end that leaves under 90 % spoken after the lead-in is refitted',
  );
  t.ok(narrationEnd(8000).min >= 0.9 * 8000 + 200, "the window counts the first word's lead-in");
  const end = narrationEnd(30_000);
  t.ok(30_000 - end.min <= 1500 && end.min >= 0.9 * 30_000, 'the window leaves no tail over 1.5 s and covers 90 %');
});

const words = ['Cold', 'brew', 'is', 'smooth.', 'Make', 'it', 'tonight.', 'Drink', 'it', 'tomorrow', 'morning', 'early.'].map(
  (text, i) => ({
    text,
    startMs: i * 400 + (i >= 4 ? 300 : 0) + (i >= 7 ? 300 : 0),
    endMs: i * 400 + 350 + (i >= 4 ? 300 : 0) + (i >= 7 ? 300 : 0),
  }),
);
const parts = partsFromScript('Cold brew is smooth. Make it tonight. Drink it tomorrow morning early.');

t.test('caption cues: at most four words, broken at sentence ends, timed by the words', async (t) => {
  const cues = captionCues(parts, words);
  t.same(
    cues.map((c) => c.text),
    ['Cold brew is smooth.', 'Make it tonight.', 'Drink it tomorrow morning', 'early.'],
  );
  t.equal(cues[0].startMs, words[0].startMs);
  t.equal(cues[1].words![0].startMs, words[4].startMs, 'each word keeps its time');
  for (let i = 0; i + 1 < cues.length; i++) t.ok(cues[i].endMs <= cues[i + 1].startMs, 'cues never overlap');
  t.same(partStarts(parts, words), [0, words[4].startMs, words[7].startMs], 'scenes change where their sentence starts');
});

t.test('the timeline covers the duration from 0 with scenes that pan', async (t) => {
  const cues = captionCues(parts, words);
  const tl = facelessTimeline({
    width: 1080,
    height: 1920,
    durationSeconds: 6,
    sceneMediaIds: ['a', 'b', 'c'],
    sceneStartsMs: partStarts(parts, words),
    voice: { mediaId: 'v', durationMs: 5000 },
    cues,
  });
  const scenes = tl.items.filter((i) => i.type === 'image');
  t.equal(scenes[0].from_seconds, 0);
  for (let i = 0; i + 1 < scenes.length; i++)
    t.equal(scenes[i].from_seconds + scenes[i].duration_seconds, scenes[i + 1].from_seconds, 'back to back');
  t.equal(scenes.at(-1)!.from_seconds + scenes.at(-1)!.duration_seconds, 6, 'to the end');
  t.ok(scenes.every((s) => s.animation?.enter?.type === 'pan'));
  t.match(
    tl.items.find((i) => i.type === 'audio'),
    { media_id: 'v', audio_role: 'voiceover', duration_seconds: 5 },
  );
  t.match(
    tl.items.find((i) => i.type === 'captions'),
    { from_seconds: 0, duration_seconds: 6, captions: cues },
  );
});

t.test('price: the voice credits per started 30 seconds; languages by name or tag', async (t) => {
  t.equal(facelessPrice(40, 5), 40);
  t.equal(facelessPrice(40, 30), 40);
  t.equal(facelessPrice(40, 31), 80);
  t.equal(facelessPrice(50, 180), 300);
  t.same(parseLanguage('Spanish'), { code: 'es', locale: 'es' });
  t.same(parseLanguage('en_gb'), { code: 'en', locale: 'en-GB' });
  t.equal(parseLanguage('not a language'), undefined);
});
