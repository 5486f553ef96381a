// A faceless video's narration written by the local writer and spoken by the local voice fills the
// video (issue 24): planned to the duration (scriptSeconds × WORDS_PER_SECOND), spoken at the rate
// the pipeline predicts, then fitted once by tempo (fitSpeed, as the voiceover stage does), it
// covers at least 90 % of a 15, 30 or 60 s video and leaves at most 1.5 s after it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { localSpeech } from '../../src/engines/speech/local.ts';
import { writeLocalScript } from '../../src/engines/write/local.ts';
import { fitSpeed, scriptSeconds, WORDS_PER_SECOND } from '../../src/pipelines/faceless-video/plan.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faceless-narration-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

const PROMPTS = [
  'Three reasons embedded Rust is winning firmware teams over',
  'How to brew better coffee at home in four steps',
  'Why sparkling water is the easiest healthy swap for soda: zero sugar, real fizz, and it keeps you hydrated all day.',
];

for (const seconds of [15, 30, 60])
  for (const [k, prompt] of PROMPTS.entries())
    t.test(`${seconds} s: "${prompt.slice(0, 30)}…" is narrated over ≥ 90 % with a tail ≤ 1.5 s`, async (t) => {
      const s = writeLocalScript({ prompt, language: 'en', targetSeconds: scriptSeconds(seconds), wordsPerSecond: WORDS_PER_SECOND });
      const text = [s.hook, ...s.beats, s.callToAction].join(' ');
      const targetMs = seconds * 1000;
      const speed = fitSpeed((text.split(/\s+/).length / WORDS_PER_SECOND) * 1000, 1, targetMs);
      const speech = await localSpeech.synthesize(text, path.join(dir, `${seconds}-${k}.wav`), { voice: 'en-us+f3', speed });
      // The voiceover stage's one correction: a tempo change to where fitSpeed puts the end.
      const endMs = (speech.durationMs * speed) / fitSpeed(speech.durationMs, speed, targetMs);
      t.ok(endMs >= 0.9 * targetMs, `ends at ${(endMs / 1000).toFixed(1)} s of ${seconds} s`);
      t.ok(targetMs - endMs <= 1500, `tail ${((targetMs - endMs) / 1000).toFixed(1)} s`);
      t.ok(endMs <= targetMs, 'ends inside the video');
    });
