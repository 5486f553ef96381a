// Hostile media cannot make the renderer read another workspace's files (security issue, point 1).
// The attack: an ID3 tag longer than file-type's 4,100-byte window, then an HLS playlist naming a
// victim's stored file, then silent MP3 frames. Sniffed as audio/mpeg and probed as a 3 s MP3, it
// was accepted; the export renderer's ffmpeg then opened it as HLS and played the victim's tone.
// Defended at every depth: the upload is refused (a playlist inside; not plain MP3 all the way
// through), and, should such a file be stored anyway (older data), every render reads it with its
// sniffed demuxer from a copy in the job's own folder, so the victim's audio never comes out.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { startTestApp } from '../helpers/app.ts';
import { addMedia, createProject, dataUrl, download, exportAndWait, upload } from '../editor/helpers.ts';

// A web server on loopback serving an SVG that names a local file (sharp would read SVG).
const svgServer = http.createServer((_req, res) => {
  res
    .writeHead(200, { 'content-type': 'image/png' })
    .end(
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64"><image xlink:href="file:///etc/passwd" width="64" height="64"/></svg>',
    );
});
await new Promise<void>((r) => svgServer.listen(0, '127.0.0.1', r));
t.teardown(() => svgServer.close());
const svgUrl = `http://127.0.0.1:${(svgServer.address() as { port: number }).port}/logo.png`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1' }, { workers: true });
const victim = await app.workspace({ credits: 1000 });
const attacker = await app.workspace({ credits: 1000 });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'media-isolation-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

// The exports are about their audio: a small, slow frame is enough (the frame size and fps are inputs of the project).
const SMALL = { aspect_ratio: '1:1', width: 160, height: 160, fps: 10 };

const ff = (args: string[]) => execFileSync(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** Mean volume in dB of the audio of `file`, decoded with its container forced (volumedetect, on stderr). */
function detect(file: string, format: string): number {
  const r = spawnSync(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-f', format, '-i', file, '-af', 'volumedetect', '-f', 'null', '-'], {
    encoding: 'utf8',
  });
  const m = /mean_volume: (-?[\d.]+|-inf) dB/.exec(r.stderr);
  if (!m) throw new Error(`no mean_volume in: ${r.stderr}`);
  return m[1] === '-inf' ? -Infinity : Number(m[1]);
}

/** The polyglot: ID3v2 (6,000 bytes of padding), an HLS playlist naming `target`, silent MP3 frames. */
function polyglot(target: string): Buffer {
  const silent = path.join(work, 'silent.mp3');
  if (!fs.existsSync(silent))
    ff([
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=44100:cl=mono',
      '-t',
      '3',
      '-c:a',
      'libmp3lame',
      '-b:a',
      '32k',
      '-id3v2_version',
      '0',
      '-write_xing',
      '0',
      silent,
    ]);
  const pad = 6000;
  const size = Buffer.from([(pad >> 21) & 0x7f, (pad >> 14) & 0x7f, (pad >> 7) & 0x7f, pad & 0x7f]);
  const id3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0]), size, Buffer.alloc(pad)]);
  const playlist = Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:3.0,\n${target}\n#EXT-X-ENDLIST\n`);
  return Buffer.concat([id3, playlist, fs.readFileSync(silent)]);
}

// The victim's media: a loud 1 kHz tone, stored under the victim's workspace.
const toneFile = path.join(work, 'tone.wav');
ff(['-f', 'lavfi', '-i', 'sine=f=1000:d=3:sample_rate=48000', '-ac', '1', toneFile]);
const victimMedia = (await upload(app, victim.key, 'tone.wav', 'audio/wav', fs.readFileSync(toneFile))).media;
const [{ storage_key: victimKey }] = await app.service.ctx.sql`select storage_key from media where id = ${victimMedia.id}`;
const mediaRoot = path.join(app.service.ctx.config.dataDir, 'media');
const targets = {
  relative: `../${victim.orgId}/${path.basename(victimKey)}`,
  absolute: path.join(mediaRoot, victimKey),
};

t.test('control: an export of the tone itself is loud, so a leak would be measured', async (t) => {
  const p = await createProject(app, victim.key, SMALL);
  await addMedia(app, victim.key, p.id, { media_id: victimMedia.id, from_seconds: 0 });
  const { done } = await exportAndWait(app, victim.key, p.id, { quality: 'draft' });
  t.equal(done.status, 'completed');
  const level = detect(await download(done.url, 'control.mp4'), 'mov');
  t.ok(level > -35, `the tone comes out at ${level} dB`);
});

t.test('the polyglot upload is refused with 400 and nothing is stored', async (t) => {
  for (const [how, target] of Object.entries(targets)) {
    const bytes = polyglot(target);
    const before = await app.service.ctx.sql`select count(*)::int as n from media where org_id = ${attacker.orgId}`;
    const json = await app.request('POST', '/api/v1/editor/media', {
      key: attacker.key,
      body: { media: { filename: 'song.mp3', content_type: 'audio/mpeg', data: bytes.toString('base64') } },
    });
    t.equal(json.status, 400, `${how}: JSON upload refused`);
    t.equal(json.body.error.code, 'bad_request');
    t.match(json.body.error.message, /not a plain audio\/mpeg file/);
    t.match(json.body.error.context.errors, [{ field: 'body.media.data' }]);
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'audio/mpeg' }), 'song.mp3');
    const multi = await fetch(`${app.url}/api/v1/editor/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${attacker.key}` },
      body: form,
    });
    t.equal(multi.status, 400, `${how}: multipart upload refused`);
    const dataUrlUpload = await app.request('POST', '/api/v1/editor/media', {
      key: attacker.key,
      body: { media: { filename: 'song.mp3', data: dataUrl('audio/mpeg', bytes) } },
    });
    t.equal(dataUrlUpload.status, 400, `${how}: data URL upload refused`);
    const after = await app.service.ctx.sql`select count(*)::int as n from media where org_id = ${attacker.orgId}`;
    t.equal(after[0].n, before[0].n, 'no media row');
  }
  const leftovers = fs.existsSync(path.join(mediaRoot, 'editor-media', attacker.orgId))
    ? fs.readdirSync(path.join(mediaRoot, 'editor-media', attacker.orgId))
    : [];
  t.same(leftovers, [], 'no stored file');
});

t.test("a polyglot already in storage: the export reads it as MP3 from its own folder, never the victim's file", async (t) => {
  for (const [how, target] of Object.entries(targets)) {
    // As if stored before uploads were checked: the row and file written directly.
    const id = randomUUID();
    const key = `editor-media/${attacker.orgId}/${id}.mp3`;
    const bytes = polyglot(target);
    await app.service.ctx.storage.put(key, bytes, 'audio/mpeg');
    await app.service.ctx
      .sql`insert into media (id, org_id, kind, status, source, filename, content_type, size_bytes, storage_key, duration_seconds, has_audio)
      values (${id}, ${attacker.orgId}, 'audio', 'completed', 'upload', 'song.mp3', 'audio/mpeg', ${bytes.length}, ${key}, 3, true)`;
    // Proof that the stored file is the attack: the bundled ffmpeg, left to guess, plays the victim's tone.
    const stored = path.join(mediaRoot, key);
    const guessed = spawnSync(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-i', stored, '-af', 'volumedetect', '-f', 'null', '-'], {
      encoding: 'utf8',
      cwd: path.dirname(stored),
    });
    const leaked = /mean_volume: (-?[\d.]+) dB/.exec(guessed.stderr);
    t.ok(leaked && Number(leaked[1]) > -35, `${how}: unguarded ffmpeg reads the victim's tone (${leaked?.[1]} dB)`);

    const p = await createProject(app, attacker.key, SMALL);
    await addMedia(app, attacker.key, p.id, { media_id: id, from_seconds: 0 });
    const { done } = await exportAndWait(app, attacker.key, p.id, { quality: 'draft' });
    t.equal(done.status, 'completed', `${how}: the export renders`);
    const level = detect(await download(done.url, `attack-${how}.mp4`), 'mov');
    t.ok(level < -60, `${how}: the export is silent (${level} dB), the victim's tone is not in it`);
  }
});

t.test("a polyglot already in storage: an audio-driven generation reads it as MP3, never the victim's file", async (t) => {
  const id = randomUUID();
  const key = `editor-media/${attacker.orgId}/${id}.mp3`;
  const bytes = polyglot(targets.absolute);
  await app.service.ctx.storage.put(key, bytes, 'audio/mpeg');
  await app.service.ctx
    .sql`insert into media (id, org_id, kind, status, source, filename, content_type, size_bytes, storage_key, duration_seconds, has_audio)
    values (${id}, ${attacker.orgId}, 'audio', 'completed', 'upload', 'voice.mp3', 'audio/mpeg', ${bytes.length}, ${key}, 3, true)`;
  const q = await app.request('POST', '/api/v1/generations', {
    key: attacker.key,
    body: {
      type: 'ai_model',
      model_slug: 'talking-avatar',
      variant_id: 'hedra-character',
      prompt: 'A presenter',
      audio_media_id: id,
      duration: 5,
      resolution: '480p',
      generate_audio: false,
    },
  });
  t.equal(q.status, 200, q.text);
  const gid = q.body.generations[0].id;
  const deadline = Date.now() + 120_000;
  let g: any;
  for (;;) {
    g = (await app.request('GET', `/api/v1/generations/${gid}`, { key: attacker.key })).body;
    if (g.status !== 'generating' || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  const level = detect(await download(g.url, 'attack-generation.mp4'), 'mov');
  t.ok(level < -60, `the generated video's audio is silent (${level} dB), the victim's tone is not in it`);
});

t.test(
  'a reference image URL serving SVG (which sharp would render, external references and all) fails the generation, refunded',
  async (t) => {
    const ws = await app.workspace({ credits: 200 });
    const q = await app.request('POST', '/api/v1/generations', {
      key: ws.key,
      body: { type: 'static_ad', template_slug: 'bold-sale-banner', reference_image_urls: [svgUrl] },
    });
    t.equal(q.status, 200, q.text);
    const gid = q.body.generations[0].id;
    let g: any;
    for (let i = 0; i < 300; i++) {
      g = (await app.request('GET', `/api/v1/generations/${gid}`, { key: ws.key })).body;
      if (g.status !== 'generating') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.equal(g.status, 'error');
    t.match(g.error, { code: 'input_unavailable', retryable: false, message: /PNG, JPEG or WebP only/ });
    const [row] = await app.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`;
    t.equal(row.credits, 200, 'refunded');
  },
);
