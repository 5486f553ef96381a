// The catalog's voice samples and avatar videos (src/services/catalog/samples.ts): every
// preview_url of a built-in voice and every videoUrl of a public avatar that GET /assets gives
// serves a real file — speech in the voice's language, a 4-second H.264 video of the portrait —
// made once, with range requests, and 404 in the error envelope for anything else. Each sample
// costs a synthesis (about 1.4 s of CPU) or an encode (about 5 s), so representatives are made.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import t from 'tap';
import { AVATAR_VIDEO, sampleFor, sampleLanguage, sampleText } from '../../src/services/catalog/samples.ts';
import { catalogSampleKey as sampleKey } from '../../src/storage/keys.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { findPublicAvatar, findVoice, PREVIEWS_DIR_URL } from '../../src/services/catalog/catalog-data.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t);
const ws = await app.workspace();
const assets = (await app.request('GET', '/api/v1/assets', { key: ws.key })).body as {
  voices: { id: string; source: string; preview_url: string }[];
  avatars: { id: string; isCustom: boolean; videoUrl: string }[];
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'samples-test-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function download(url: string, name: string, init: RequestInit = {}) {
  const res = await fetch(`${app.url}${new URL(url).pathname}`, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return { res, bytes, file };
}

/** Root mean square of 16-bit PCM samples after the 44-byte WAV header, 0..1. */
function rms(wav: Buffer): number {
  let sum = 0;
  let n = 0;
  for (let i = 44; i + 1 < wav.length; i += 2, n++) sum += (wav.readInt16LE(i) / 32768) ** 2;
  return Math.sqrt(sum / Math.max(1, n));
}

// Every built-in voice's preview URL names a sample the service makes; the same code (eSpeak NG in
// a child process, then storage) makes each one, and what differs is the eSpeak voice. So one
// voice per language is synthesised and checked (other scripts than Latin included), plus the one
// voice on another synthesis method (Klatt); the others are left for the concurrency test below.
const builtIn = assets.voices.filter((v) => v.source === 'built_in');
const voiceOf = (v: { id: string }) => findVoice(v.id)!.espeak_voice;
const spoken = builtIn.filter(
  (v, i) => voiceOf(v).includes('klatt') || builtIn.findIndex((w) => sampleLanguage(voiceOf(w)) === sampleLanguage(voiceOf(v))) === i,
);
const unspoken = builtIn.filter((v) => !spoken.includes(v));

t.test('every built-in voice preview is its spoken sample', async (t) => {
  t.ok(builtIn.length >= 10);
  for (const v of builtIn)
    t.ok(sampleFor(new URL(v.preview_url).pathname.replace(/^\/static\/previews\//, '')), `${v.id}: a sample is made for it`);
  t.ok(unspoken.length > 0 && spoken.length >= 8, `spoken: ${spoken.map(voiceOf).join(', ')}`);
  for (const v of spoken) {
    const { res, bytes, file } = await download(v.preview_url, `${v.id}.wav`);
    t.equal(res.status, 200, `${v.id}: 200`);
    t.equal(res.headers.get('content-type'), 'audio/wav');
    t.match(res.headers.get('cache-control'), /max-age=86400/);
    t.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
    const p = await probe(file);
    t.equal(p.audio_codec, 'pcm_s16le');
    t.ok(p.duration_seconds! > 1.5 && p.duration_seconds! < 15, `${v.id}: a sentence long (${p.duration_seconds} s)`);
    t.ok(rms(bytes) > 0.02, `${v.id}: not silence (rms ${rms(bytes).toFixed(3)})`);
  }
});

t.test('what each voice says: its name, in its language', async (t) => {
  const ids = assets.voices.filter((v) => v.source === 'built_in').map((v) => v.id);
  const languages = new Set<string>();
  for (const id of ids) {
    const voice = findVoice(id)!;
    const text = sampleText(voice);
    t.ok(text.includes(voice.name), `${id} says its name`);
    languages.add(sampleLanguage(voice.espeak_voice));
  }
  t.match(sampleText({ name: 'Lucía', espeak_voice: 'es-419+m3' }), /^Hola, soy Lucía\./);
  t.match(sampleText({ name: 'Klaus', espeak_voice: 'de+m4' }), /^Hallo, ich bin Klaus\./);
  t.match(sampleText({ name: 'Zed', espeak_voice: 'sw+m1' }), /^Hi, I'm Zed\./, 'English where the language has no sentence');
  t.ok(languages.size >= 5, `several languages (${[...languages].join(', ')})`);
});

t.test('every public avatar has its video; its portrait rasterises; the first is rendered and checked', async (t) => {
  const avatars = assets.avatars.filter((a) => !a.isCustom);
  t.ok(avatars.length >= 5);
  // Every avatar's video URL names a sample the service makes, by the same code from the avatar's
  // own portrait (an SVG that sharp rasterises, then one zoompan and H.264 encode, about 5 s of
  // CPU). So every portrait is rasterised here (a picture, not a flat colour) and one video is
  // made in full.
  for (const a of avatars) {
    t.ok(sampleFor(new URL(a.videoUrl).pathname.replace(/^\/static\/previews\//, '')), `${a.id}: a video is made for it`);
    const svg = fileURLToPath(new URL(findPublicAvatar(a.id)!.image, PREVIEWS_DIR_URL));
    const stats = await sharp(svg).resize(72, 90, { fit: 'cover' }).stats();
    t.ok(
      stats.channels.slice(0, 3).some((c) => c.stdev > 10),
      `${a.id}: its portrait rasterises to a picture`,
    );
  }
  const rendered = [avatars[0]];
  for (const a of rendered) {
    const { res, file } = await download(a.videoUrl, `${a.id}.mp4`);
    t.equal(res.status, 200, `${a.id}: 200`);
    t.equal(res.headers.get('content-type'), 'video/mp4');
    const p = await probe(file);
    t.equal(p.video_codec, 'h264');
    t.same([p.width, p.height], [AVATAR_VIDEO.width, AVATAR_VIDEO.height]);
    t.ok(Math.abs(p.duration_seconds! - AVATAR_VIDEO.seconds) < 0.2, `${a.id}: ${p.duration_seconds} s`);
  }
  // Range requests (video players seek with them) and HEAD.
  const first = avatars[0];
  const whole = fs.readFileSync(path.join(tmp, `${first.id}.mp4`));
  const part = await download(first.videoUrl, 'part.mp4', { headers: { range: 'bytes=100-199' } });
  t.equal(part.res.status, 206);
  t.equal(part.res.headers.get('content-range'), `bytes 100-199/${whole.length}`);
  t.same(part.bytes, whole.subarray(100, 200));
  const head = await fetch(`${app.url}${new URL(first.videoUrl).pathname}`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(Number(head.headers.get('content-length')), whole.length);
});

t.test('made once: concurrent first requests share one stored object, no temporary files left', async (t) => {
  // A voice no earlier test asked for, so nothing is made for it yet.
  const voice = unspoken[0];
  const key = sampleKey(`voices/${voice.id}.wav`);
  const storage = app.service.ctx.storage;
  const list = async () => {
    const keys: string[] = [];
    for await (const o of storage.list('catalog-samples/')) keys.push(o.key);
    return keys;
  };
  const before = await list();
  t.notOk(before.includes(key), 'not made yet');
  const url = `${app.url}${new URL(voice.preview_url).pathname}`;
  const bodies = await Promise.all(Array.from({ length: 4 }, async () => Buffer.from(await (await fetch(url)).arrayBuffer())));
  t.equal(bodies[0].subarray(0, 4).toString('latin1'), 'RIFF');
  for (const b of bodies.slice(1)) t.same(b, bodies[0], 'the same bytes');
  t.same(
    (await list()).filter((k) => !before.includes(k)),
    [key],
    'one stored object more',
  );
  t.same(await storage.readBuffer(key), bodies[0], 'the bytes served are the stored ones');
  const dataDir = app.service.ctx.config.dataDir;
  const tmp = path.join(dataDir, 'tmp');
  t.same(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no work folder left');
  t.notOk(fs.existsSync(path.join(dataDir, 'samples')), 'nothing kept outside storage');
});

t.test('anything else is a 404 in the error envelope', async (t) => {
  for (const p of ['/static/previews/voices/no-such-voice.wav', '/static/previews/avatars/no-such-avatar.mp4']) {
    const res = await app.request('GET', p, { unchecked: true });
    t.equal(res.status, 404, p);
    t.match(res.body, { error: { code: 'not_found', retryable: false } });
  }
  t.equal(sampleFor('voices/../../package.json'), undefined);
  t.equal(sampleFor('avatars/chloe-beauty.wav'), undefined, 'an avatar has no voice sample');
  const svg = await app.request('GET', '/static/previews/avatars/chloe-beauty.svg', { unchecked: true });
  t.equal(svg.status, 200, 'the portraits themselves are still the static SVGs');
});
