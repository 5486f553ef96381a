// The music library and the music bed: moods that sound different (tempo, key, level over time),
// chosen from the request's words, a bed of the requested length whose level dips under the
// narration's phrases (ducking baked into the file) by at least 6 dB against the same bed without
// narration, and comes back between them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { chooseMood, duckGain, MOODS, phrases, renderMusicBed, type Mood } from '../../src/media/music-bed.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'music-bed-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The interleaved 16-bit samples of a WAV the bed wrote. */
function samples(file: string): Int16Array {
  const wav = fs.readFileSync(file);
  const data = wav.indexOf(Buffer.from('data'));
  return new Int16Array(wav.buffer.slice(wav.byteOffset + data + 8, wav.byteOffset + wav.length - ((wav.length - data - 8) % 2)));
}

/** RMS of [from, to) seconds of stereo 48 kHz samples. */
function rms(pcm: Int16Array, from: number, to: number): number {
  let sum = 0;
  let k = 0;
  for (let i = Math.round(from * 48000) * 2; i < Math.round(to * 48000) * 2; i++, k++) sum += pcm[i] * pcm[i];
  return Math.sqrt(sum / k);
}

const db = (ratio: number) => 20 * Math.log10(ratio);

async function bed(name: string, opts: Partial<Parameters<typeof renderMusicBed>[1]> & { seconds: number }): Promise<Int16Array> {
  const out = path.join(dir, `${name}.wav`);
  await renderMusicBed(out, { words: [], ...opts });
  return samples(out);
}

t.test('phrases merge words across short gaps; the gain dips inside them', async (t) => {
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
  t.equal(duckGain([], 1), 1);
  t.ok(duckGain([[1000, 2000]], 1.5) < 0.5, 'ducked inside the phrase');
  t.equal(duckGain([[1000, 2000]], 3), 1, 'back to full after it');
});

t.test('the bed is ducked while the voice speaks: at least 6 dB under the same bed without a voice', async (t) => {
  const voiced = await bed('voiced', { seconds: 8, mood: 'upbeat', words: [{ startMs: 4000, endMs: 5500 }] });
  const plain = await bed('plain', { seconds: 8, mood: 'upbeat' });
  t.ok(Math.abs(voiced.length / 2 / 48000 - 8) < 0.05, `${voiced.length / 2 / 48000} s of stereo 48 kHz`);
  const under = db(rms(voiced, 4.2, 5.4) / rms(plain, 4.2, 5.4));
  t.ok(under <= -6, `under the voice: ${under.toFixed(1)} dB against the bed alone`);
  t.ok(rms(voiced, 6.2, 6.5) > 500, 'audible again after the phrase');
  t.ok(Math.abs(db(rms(voiced, 6.2, 6.5) / rms(plain, 6.2, 6.5))) < 0.5, 'at its full level after the phrase');
});

t.test('every mood is music of its own: audible, and two moods differ', async (t) => {
  const beds = new Map<Mood, Int16Array>();
  for (const mood of MOODS) beds.set(mood, await bed(mood, { seconds: 10, mood }));
  for (const [mood, pcm] of beds) t.ok(rms(pcm, 1, 9) > 1000, `${mood} is audible (rms ${rms(pcm, 1, 9).toFixed(0)})`);
  // Their loudness over time (100 ms windows, in dB) tells tempo and arrangement apart.
  const contour = (pcm: Int16Array) => Array.from({ length: 80 }, (_, i) => db(rms(pcm, 1 + i / 10, 1.1 + i / 10) + 1));
  const distance = (a: number[], b: number[]) => Math.sqrt(a.reduce((s, v, i) => s + (v - b[i]) ** 2, 0) / a.length);
  const [calm, upbeat, dramatic] = [contour(beds.get('calm')!), contour(beds.get('upbeat')!), contour(beds.get('dramatic')!)];
  t.ok(distance(calm, upbeat) > 2, `calm and upbeat differ (${distance(calm, upbeat).toFixed(1)} dB apart)`);
  t.ok(distance(upbeat, dramatic) > 2, `upbeat and dramatic differ (${distance(upbeat, dramatic).toFixed(1)} dB apart)`);
  // The music moves: the level of a track changes over time (beats, chords), unlike a held pad.
  const spread = (c: number[]) => Math.max(...c) - Math.min(...c);
  t.ok(spread(upbeat) > 6, `upbeat has a pulse (${spread(upbeat).toFixed(1)} dB between loud and quiet moments)`);
});

t.test('the same request makes the same music; the mood follows the words', async (t) => {
  const a = await bed('a', { seconds: 3, prompt: 'a calm yoga routine' });
  const b = await bed('b', { seconds: 3, prompt: 'a calm yoga routine' });
  t.ok(Buffer.from(a.buffer).equals(Buffer.from(b.buffer)), 'deterministic');
  t.equal(chooseMood('A calm morning yoga routine for better sleep'), 'calm');
  t.equal(chooseMood('Launch party for our new energy drink, summer sale'), 'upbeat');
  t.equal(chooseMood('Why embedded Rust is taking over: a tech explainer for software teams'), 'corporate');
  t.equal(chooseMood('The dark secret of a crime mystery'), 'dramatic');
  t.equal(chooseMood('A toy for kids and their pets'), 'playful');
  t.equal(chooseMood('An epic journey through nature'), 'cinematic');
  t.equal(chooseMood('Lemon water', 'watercolor'), 'calm', 'no cue words: the image style leans');
  t.equal(chooseMood('Lemon water', 'dramatic'), 'dramatic', 'a mood named as the style');
  t.equal(chooseMood('Lemon water'), 'upbeat', 'otherwise upbeat');
});
