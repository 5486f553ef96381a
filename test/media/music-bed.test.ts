// The faceless music bed: a pad of the requested length whose level dips under the narration's
// phrases (ducking baked into the file) and comes back between them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { duckExpression, phrases, renderMusicBed } from '../../src/media/music-bed.ts';

t.test('phrases merge words across short gaps', async (t) => {
  t.same(
    phrases([
      { startMs: 0, endMs: 300 },
      { startMs: 500, endMs: 800 },
      { startMs: 2000, endMs: 2300 },
    ]),
    [
      [0, 800],
      [2000, 2300],
    ],
  );
  t.equal(duckExpression([]), '1');
});

t.test('the bed is ducked while the voice speaks', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'music-bed-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const out = path.join(dir, 'bed.wav');
  await renderMusicBed(out, { seconds: 6, style: 'cinematic', words: [{ startMs: 2000, endMs: 3000 }], cwd: dir });
  const wav = fs.readFileSync(out);
  const data = wav.indexOf(Buffer.from('data'));
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + data + 8, wav.byteOffset + wav.length - ((wav.length - data - 8) % 2)));
  t.ok(Math.abs(pcm.length / 2 / 48000 - 6) < 0.05, `${pcm.length / 2 / 48000} s of stereo 48 kHz`);
  const rms = (from: number, to: number) => {
    let sum = 0;
    let k = 0;
    for (let i = Math.round(from * 48000) * 2; i < Math.round(to * 48000) * 2; i++, k++) sum += pcm[i] * pcm[i];
    return Math.sqrt(sum / k);
  };
  const speaking = rms(2.3, 2.8);
  const between = rms(3.8, 4.3);
  t.ok(between > 500, `the bed is audible between phrases (rms ${between.toFixed(0)})`);
  t.ok(speaking < between * 0.5, `ducked under the voice: ${speaking.toFixed(0)} vs ${between.toFixed(0)}`);
});
