// Reference analysis (issue 12 part 1) on the real service with workers, on media this test makes:
// a known palette (three bands in known proportions), text rendered with DejaVu that OCR must read
// back, videos with known cuts and a voice-like or silent audio track (a transcription provider
// fake answers the transcript); the recommendation order on a constructed set (the template's own
// preview, a reference that led to a completed generation); target suggestions that fetch and
// analyse image_url.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.ts';
import { deltaE, hexToLab } from '../../src/media/analysis.ts';
import { referenceStyle } from '../../src/services/references/analysis.ts';
import { startTestApp } from '../helpers/app.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reference-analysis-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

const W = 320;
const H = 568;
const BANDS = [
  { hex: '#e63946', share: 0.5 },
  { hex: '#1d3557', share: 0.3 },
  { hex: '#f1faee', share: 0.2 },
];
const svg = (body: string, w = W, h = H) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`);
let y = 0;
const bands = await sharp(
  svg(
    BANDS.map((b) => {
      const r = `<rect x="0" y="${y}" width="${W}" height="${b.share * H}" fill="${b.hex}"/>`;
      y += b.share * H;
      return r;
    }).join(''),
  ),
)
  .png()
  .toBuffer();
const textImage = await sharp(
  svg(
    `<rect width="100%" height="100%" fill="#ffffff"/>` +
      `<text x="24" y="200" font-family="DejaVu Sans" font-weight="bold" font-size="60" fill="#111111">SUMMER</text>` +
      `<text x="24" y="280" font-family="DejaVu Sans" font-weight="bold" font-size="60" fill="#111111">SALE</text>`,
  ),
)
  .png()
  .toBuffer();
// The Bold Sale Banner's catalog preview, as a user would screenshot it.
const bannerShot = await sharp(fs.readFileSync(new URL('../../spec/previews/templates/bold-sale-banner.svg', import.meta.url)))
  .resize(480)
  .png()
  .toBuffer();
// A pattern of its own (a proven reference) and a near copy of it.
const pattern = (shift: number) =>
  sharp(
    svg(
      `<rect width="100%" height="100%" fill="#2a9d8f"/><circle cx="${120 + shift}" cy="200" r="90" fill="#e9c46a"/><rect x="40" y="380" width="240" height="120" fill="#264653"/>`,
    ),
  )
    .png()
    .toBuffer();
const proven = await pattern(0);
const nearCopy = await pattern(6);

function video(name: string, segments: { color: string; seconds: number }[], audio: string): Buffer {
  const file = path.join(dir, `${name}.mp4`);
  const total = segments.reduce((s, x) => s + x.seconds, 0);
  execFileSync(FFMPEG_PATH, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...segments.flatMap((s) => ['-f', 'lavfi', '-i', `color=c=${s.color}:s=160x284:r=10:d=${s.seconds}`]),
    '-f',
    'lavfi',
    '-i',
    `${audio}:d=${total}`,
    '-filter_complex',
    `${segments.map((_, i) => `[${i}:v]`).join('')}concat=n=${segments.length}:v=1:a=0[v]`,
    '-map',
    '[v]',
    '-map',
    `${segments.length}:a`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
  return fs.readFileSync(file);
}
// Cuts at 1.0 s and 2.5 s; a 220 Hz voice-band tone whose level rises and falls four times a second (syllables).
const cutsVideo = video(
  'cuts',
  [
    { color: 'red', seconds: 1 },
    { color: 'green', seconds: 1.5 },
    { color: 'blue', seconds: 1 },
  ],
  "aevalsrc='0.5*sin(2*PI*220*t)*(0.5+0.5*sin(2*PI*4*t))':s=16000",
);
const silentVideo = video('silent', [{ color: 'gray', seconds: 2 }], 'aevalsrc=0:s=16000');

const files: Record<string, { type: string; body: Buffer }> = {
  '/cuts.mp4': { type: 'video/mp4', body: cutsVideo },
  '/silent.mp4': { type: 'video/mp4', body: silentVideo },
  '/banner.png': { type: 'image/png', body: bannerShot },
  '/text.png': { type: 'image/png', body: textImage },
};
const host = http.createServer((req, res) => {
  const f = files[req.url ?? ''];
  if (!f) return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
});
// The transcription provider (OpenAI-compatible API): the shape it requires, its answer.
const transcriptions: { auth?: string; model?: string; fileType?: string }[] = [];
const stt = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return res.writeHead(404).end();
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const form = await new Request('http://x', {
    method: 'POST',
    body: Buffer.concat(chunks),
    headers: { 'content-type': req.headers['content-type']! },
  }).formData();
  const file = form.get('file') as File | null;
  if (!file || !form.get('model')) {
    res.writeHead(400, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({ error: { message: 'file and model are required', type: 'invalid_request_error', param: null, code: null } }),
    );
  }
  transcriptions.push({ auth: req.headers.authorization, model: String(form.get('model')), fileType: file.type });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ text: 'Fresh lemons daily', language: 'english', words: [{ word: 'Fresh', start: 0.2, end: 0.6 }] }));
});
for (const s of [host, stt]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
t.teardown(() => {
  host.close();
  stt.close();
});
const port = (s: http.Server) => (s.address() as { port: number }).port;
const base = `http://127.0.0.1:${port(host)}`;

const app = await startTestApp(
  t,
  {
    OUTBOUND_ALLOW_IPS: '127.0.0.1',
    TRANSCRIPTION_PROVIDER_URL: `http://127.0.0.1:${port(stt)}/v1`,
    TRANSCRIPTION_PROVIDER_API_KEY: 'stt-key',
  },
  { workers: true },
);
const ws = await app.workspace({ credits: 5000, scopes: ['generations:read', 'generations:write'] });

async function waitFor(id: string) {
  for (let i = 0; i < 600; i++) {
    const res = await app.request('GET', '/api/v1/reference-inspirations?limit=20', { key: ws.key });
    const ref = res.body.data.find((r: any) => r.id === id);
    if (ref && ref.status !== 'processing') return ref;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`reference ${id} did not finish`);
}
async function save(body: Record<string, unknown>) {
  const res = await app.request('POST', '/api/v1/reference-inspirations', { key: ws.key, body });
  if (res.status !== 200) throw new Error(`save: ${res.status} ${res.text}`);
  t.same(
    res.body.media.map((m: any) => m.analysis),
    res.body.media.map(() => null),
    'no analysis while processing',
  );
  const ready = await waitFor(res.body.id);
  if (ready.status !== 'ready') throw new Error(`reference ${res.body.id}: ${JSON.stringify(ready.error)}`);
  return ready;
}
const inline = (name: string, bytes: Buffer) => ({ filename: `${name}.png`, data: bytes.toString('base64') });
const closeTo = (hex: string, palette: { hex: string }[]) => Math.min(...palette.map((p) => deltaE(hexToLab(hex), hexToLab(p.hex))));

t.test('images: the palette, the text OCR reads back, the layout, the hash', async (t) => {
  const ref = await save({
    template_slug: 'product-spotlight',
    media_kind: 'image',
    label: 'Bands and text',
    images: [inline('bands', bands), inline('text', textImage)],
  });
  const [a, b] = ref.media.map((m: any) => m.analysis);
  t.match(a, { kind: 'image', width: W, height: H, orientation: 'portrait', text: '', text_regions: [], phash: /^[0-9a-f]{16}$/ });
  t.equal(a.palette.length, 3, `three colours (${JSON.stringify(a.palette)})`);
  for (const [i, band] of BANDS.entries()) {
    t.ok(deltaE(hexToLab(band.hex), hexToLab(a.palette[i].hex)) < 3, `${band.hex} is colour ${i} (${a.palette[i].hex})`);
    t.ok(Math.abs(a.palette[i].proportion - band.share) < 0.03, `${band.hex} covers ${band.share} (${a.palette[i].proportion})`);
  }
  t.match(b.text, /SUMMER\s+SALE/, `OCR reads the rendered text (${JSON.stringify(b.text)})`);
  t.equal(b.text_regions.length, 2, 'a region per line');
  const [first, second] = b.text_regions;
  t.ok(
    first.x < 0.15 && first.y > 0.25 && first.y < 0.33 && first.height > 0.05 && first.height < 0.12,
    `the first line where it was drawn (${JSON.stringify(first)})`,
  );
  t.ok(second.y > first.y + first.height, 'the second below it');
  t.ok(
    b.subject && b.subject.y < first.y + 0.02 && b.subject.y + b.subject.height > second.y,
    `the subject box holds the text (${JSON.stringify(b.subject)})`,
  );
  t.not(a.phash, b.phash);
  const style = referenceStyle(ref);
  t.ok(
    style && closeTo('#e63946', style.palette) < 3 && closeTo('#ffffff', style.palette) < 6,
    'referenceStyle merges the palettes of the items',
  );
  t.same(style!.text_regions, b.text_regions);
});

t.test('videos: duration, frame rate, cuts, loudness, speech, keyframes, transcript', async (t) => {
  const ref = await save({ template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `${base}/cuts.mp4` });
  const v = ref.media[0].analysis;
  t.match(v, { kind: 'video', width: 160, height: 284, orientation: 'portrait', fps: 10, speech: true, transcript: 'Fresh lemons daily' });
  t.ok(Math.abs(v.duration_seconds - 3.5) < 0.15, `duration ${v.duration_seconds}`);
  t.equal(v.scene_cuts_seconds.length, 2, `two cuts (${v.scene_cuts_seconds})`);
  t.ok(
    Math.abs(v.scene_cuts_seconds[0] - 1) <= 0.1 && Math.abs(v.scene_cuts_seconds[1] - 2.5) <= 0.1,
    `at 1.0 s and 2.5 s (${v.scene_cuts_seconds})`,
  );
  t.ok(v.loudness_lufs > -30 && v.loudness_lufs < 0, `a loud track (${v.loudness_lufs} LUFS)`);
  t.equal(v.keyframes.length, 3, 'a keyframe per shot');
  for (const [i, colour] of ['#ff0000', '#008000', '#0000ff'].entries()) {
    t.ok(closeTo(colour, v.keyframes[i].palette) < 12, `keyframe ${i} is ${colour} (${JSON.stringify(v.keyframes[i].palette)})`);
  }
  t.equal(v.palette.length, 3, 'the video palette gathers the keyframes');
  t.match(transcriptions[0], { auth: 'Bearer stt-key', fileType: 'audio/wav' });

  const quiet = (await save({ template_slug: 'product-demo-showcase', media_kind: 'video', video_url: `${base}/silent.mp4` })).media[0]
    .analysis;
  t.match(quiet, { speech: false, scene_cuts_seconds: [], fps: 10 });
  t.ok(quiet.loudness_lufs === null || quiet.loudness_lufs <= -60, `silence is quiet (${quiet.loudness_lufs})`);
  t.equal(quiet.keyframes.length, 1);
});

t.test('recommendations rank by likeness to the preview and to references that led to generations', async (t) => {
  // For Bold Sale Banner: a screenshot of its preview saved for another template beats the bands saved for it itself.
  const shot = await save({
    template_slug: 'product-spotlight',
    media_kind: 'image',
    label: 'Banner screenshot',
    images: [inline('shot', bannerShot)],
  });
  const own = await save({ template_slug: 'bold-sale-banner', media_kind: 'image', label: 'Bands', images: [inline('bands', bands)] });
  let res = await app.request('GET', '/api/v1/reference-inspirations?recommend=true&template_slug=bold-sale-banner', { key: ws.key });
  t.equal(res.status, 200);
  const ids = res.body.data.map((r: any) => r.reference_inspiration.id);
  t.ok(ids.indexOf(shot.id) === 0, 'the look of the preview comes first');
  t.ok(ids.indexOf(shot.id) < ids.indexOf(own.id), 'before a reference saved for the template that looks nothing like it');
  t.match(res.body.data[0].reason, /palette close \(ΔE \d+\).*the Bold Sale Banner preview/i);
  t.ok(res.body.data[0].reference_inspiration.media[0].analysis, 'the analysis is shown');

  // A reference that led to a completed generation: its near copy now ranks above the unrelated bands.
  const used = await save({
    template_slug: 'product-spotlight',
    media_kind: 'image',
    label: 'Teal circle',
    images: [inline('proven', proven)],
  });
  const copy = await save({
    template_slug: 'bold-sale-banner',
    media_kind: 'image',
    label: 'Teal circle again',
    images: [inline('copy', nearCopy)],
  });
  const gen = await app.request('POST', '/api/v1/generations', {
    key: ws.key,
    body: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Lemonade', custom_reference_inspiration_id: used.id },
  });
  t.equal(gen.status, 200, 'the generation is queued');
  const status = async () =>
    (
      await app.service.ctx
        .sql`select status from generations where org_id = ${ws.orgId} and spec->>'customReferenceInspirationId' = ${used.id}`
    )[0]?.status;
  for (let i = 0; i < 600 && (await status()) !== 'completed' && (await status()) !== 'error'; i++)
    await new Promise((r) => setTimeout(r, 100));
  t.equal(await status(), 'completed', 'the generation with the reference completed');
  res = await app.request('GET', '/api/v1/reference-inspirations?recommend=true&template_slug=product-spotlight', { key: ws.key });
  const order = res.body.data.map((r: any) => r.reference_inspiration.id);
  t.ok(order.indexOf(copy.id) < order.indexOf(own.id), 'the near copy of the proven reference ranks above the bands');
  const copyReason = res.body.data.find((r: any) => r.reference_inspiration.id === copy.id).reason;
  t.match(copyReason, /“Teal circle”, which led to a completed generation/);
  t.match(res.body.data.find((r: any) => r.reference_inspiration.id === used.id).reason, /it led to a completed generation/);
});

t.test('target suggestions fetch and analyse the media', async (t) => {
  let res = await app.request(
    'GET',
    `/api/v1/reference-inspirations?suggest_targets=true&template_category=static-ads&image_url=${encodeURIComponent(`${base}/banner.png`)}`,
    { key: ws.key },
  );
  t.equal(res.status, 200);
  t.equal(res.body.suggestions[0].template_slug, 'bold-sale-banner', 'the template whose preview the image looks like');
  t.match(res.body.suggestions[0].reason, /like its preview: palette close/);
  res = await app.request(
    'GET',
    `/api/v1/reference-inspirations?suggest_targets=true&template_category=static-ads&image_url=${encodeURIComponent(`${base}/text.png`)}`,
    { key: ws.key },
  );
  t.match(res.body.suggestions.find((s: any) => s.template_slug === 'bold-sale-banner').reason, /the text in the media says “sale”/);
  res = await app.request(
    'GET',
    `/api/v1/reference-inspirations?suggest_targets=true&image_url=${encodeURIComponent(`${base}/missing.png`)}`,
    { key: ws.key },
  );
  t.equal(res.status, 400);
  t.match(res.body.error.context.errors, [{ field: 'query.image_url[0]', message: /could not be fetched/ }]);
  res = await app.request(
    'GET',
    `/api/v1/reference-inspirations?suggest_targets=true&image_url=${encodeURIComponent(`${base}/cuts.mp4`)}`,
    { key: ws.key },
  );
  t.equal(res.status, 400, 'a video given as an image');
  t.match(res.body.error.context.errors, [{ field: 'query.image_url[0]' }]);
});
