// Workspace assets people create, over HTTP and MCP: brand kits (colours by role, fonts from the
// published list, an uploaded logo served by signed URL), custom avatars (a portrait cropped on the
// face) and custom voices (a sample mapped to the built-in voice of its language and pitch). Bad
// input is a 400 naming the field; another workspace's ids are 404; an asset used by queued work
// cannot be deleted (409); a slideshow made with a created kit and avatar shows the kit's colour,
// its logo and the avatar's face; a faceless video with a created voice is spoken by the mapped voice.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import t from 'tap';
import { facelessVideos } from '../../src/db/schema/index.ts';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { slideGeometry } from '../../src/engines/local/slide.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';

const app = await startMcpApp(t, { MEDIA_MAX_PIXELS: '4000000', RATE_LIMIT_GENERATIONS: '1000' });
const db = app.service.ctx.db;
const ws = await app.workspace({ credits: 1000 });
const other = await app.workspace({ credits: 1000 });
const reader = await app.workspace({ scopes: ['generations:read'] });

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'assets-test-'));
t.teardown(() => fs.rm(dir, { recursive: true, force: true }));

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const solid = (background: string, width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
const SKIN = '#e0ac8c';
const portraits = new Map<number, Promise<Buffer>>();
/** A 1200×600 portrait: a skin-coloured ellipse centred at (faceX, 300) on a busy grey-green texture of 8 px blocks (made once per faceX). */
function portrait(faceX: number): Promise<Buffer> {
  let made = portraits.get(faceX);
  if (!made) portraits.set(faceX, (made = drawPortrait(faceX)));
  return made;
}
async function drawPortrait(faceX: number): Promise<Buffer> {
  const W = 1200;
  const H = 600;
  const raw = Buffer.alloc(W * H * 3);
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let by = 0; by < H; by += 8) {
    for (let bx = 0; bx < W; bx += 8) {
      const v = Math.floor(100 + rnd() * 50);
      const g = Math.min(255, v + Math.floor(rnd() * 30));
      for (let y = by; y < by + 8; y++) for (let x = bx; x < bx + 8; x++) raw.set([v, g, v], (y * W + x) * 3);
    }
  }
  const face = Buffer.from(`<svg width="${W}" height="${H}"><ellipse cx="${faceX}" cy="300" rx="130" ry="170" fill="${SKIN}"/></svg>`);
  return sharp(raw, { raw: { width: W, height: H, channels: 3 } })
    .composite([{ input: face }])
    .png()
    .toBuffer();
}
async function fetchImage(url: string) {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    bytes,
    width: info.width,
    height: info.height,
    at(x: number, y: number): [number, number, number] {
      const i = (Math.round(y) * info.width + Math.round(x)) * info.channels;
      return [data[i], data[i + 1], data[i + 2]];
    },
  };
}
const near = (got: [number, number, number], want: string, tolerance = 14) =>
  [1, 3, 5].every((i, k) => Math.abs(got[k] - parseInt(want.slice(i, i + 2), 16)) <= tolerance);
/** Centroid of the skin-coloured pixels of an image. */
function skinCentroid(img: Awaited<ReturnType<typeof fetchImage>>) {
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let y = 0; y < img.height; y += 2) {
    for (let x = 0; x < img.width; x += 2) {
      if (near(img.at(x, y), SKIN, 10)) {
        sx += x;
        sy += y;
        n++;
      }
    }
  }
  return { x: sx / n, y: sy / n, n };
}
async function tone(name: string, args: string[]): Promise<Buffer> {
  const file = path.join(dir, name);
  await runFfmpeg([...args, file], { cwd: dir });
  return fs.readFile(file);
}
const fieldsOf = (body: any): string[] => [
  body.error?.context?.field,
  ...(body.error?.context?.errors ?? []).map((e: { field: string }) => e.field),
];

const LOGO = await solid('#ffff00', 300, 120);

t.test('brand kits: create with a logo, get, list, update, tenant 404s', async (t) => {
  const res = await app.request('POST', '/api/v1/brand-kits', {
    key: ws.key,
    body: {
      name: 'Acme',
      colors: { primary: '#123456', accent: '#ffcc00' },
      fonts: ['DejaVu Serif', 'DejaVu Sans'],
      logo: dataUrl('image/png', LOGO),
    },
  });
  t.equal(res.status, 200, res.text);
  const kit = res.body;
  t.match(kit, {
    kit_name: 'Acme',
    brand_id: 1,
    kit_data: { colors: ['#123456', '#FFCC00'], primary_color: '#123456', fonts: ['DejaVu Serif', 'DejaVu Sans'] },
  });
  const logo = await fetchImage(kit.logo_url);
  t.same([logo.width, logo.height], [300, 120], 'the signed logo URL serves the logo');
  t.ok(near(logo.at(10, 10), '#ffff00'));

  const got = await app.request('GET', `/api/v1/brand-kits/${kit.id}`, { key: reader.key });
  t.equal(got.status, 404, 'a reader of another workspace does not see it');
  const mine = await app.request('GET', `/api/v1/brand-kits/${kit.id}`, { key: ws.key });
  t.equal(mine.status, 200);
  t.equal(mine.body.kit_name, 'Acme');
  const listed = await app.request('GET', '/api/v1/assets', { key: ws.key });
  t.same(
    listed.body.brand_kits.map((k: { id: number }) => k.id),
    [kit.id],
    'GET /assets lists it',
  );
  t.ok(listed.body.brand_kits[0].logo_url);

  const upd = await app.request('PATCH', `/api/v1/brand-kits/${kit.id}`, {
    key: ws.key,
    body: { name: 'Acme 2', colors: { primary: '#00AA00', background: '#FFFFFF' } },
  });
  t.equal(upd.status, 200, upd.text);
  t.match(upd.body, { kit_name: 'Acme 2', kit_data: { colors: ['#00AA00', '#FFFFFF'], fonts: ['DejaVu Serif', 'DejaVu Sans'] } });
  t.notOk('accent_color' in upd.body.kit_data, 'colours replace the whole set');
  t.ok(upd.body.logo_url, 'the logo is kept');
  const noLogo = await app.request('PATCH', `/api/v1/brand-kits/${kit.id}`, { key: ws.key, body: { logo: null } });
  t.equal(noLogo.body.logo_url, null);
  t.equal((await fetch(upd.body.logo_url)).status, 404, 'the removed logo is gone from storage');

  for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
    const r = await app.request(method, `/api/v1/brand-kits/${kit.id}`, { key: other.key, body });
    t.equal(r.status, 404, `${method} from another workspace`);
    t.match(r.body.error, { code: 'not_found', context: { resource: 'brand_kit', field: 'path.id' } });
  }
  const del = await app.request('DELETE', `/api/v1/brand-kits/${kit.id}`, { key: ws.key });
  t.same(del.body, { object: 'brand_kit', id: kit.id, deleted: true });
  t.equal((await app.request('GET', `/api/v1/brand-kits/${kit.id}`, { key: ws.key })).status, 404);
});

t.test('brand kit validation: 400 naming the field, nothing stored', async (t) => {
  const big = await solid('#ff0000', 2100, 2000);
  const cases: [string, Record<string, unknown>, string][] = [
    ['a colour that is not #RRGGBB', { name: 'K', colors: { primary: 'red' } }, 'body.colors.primary'],
    ['an unknown role', { name: 'K', colors: { shadow: '#000000' } }, 'body.colors.shadow'],
    ['a font the renderers do not have', { name: 'K', fonts: ['Comic Sans MS'] }, 'body.fonts[0]'],
    [
      'a text file named as a PNG',
      { name: 'K', logo: dataUrl('image/png', Buffer.from('just some text, not a picture at all')) },
      'body.logo',
    ],
    ['an image over the pixel limit', { name: 'K', logo: dataUrl('image/png', big) }, 'body.logo'],
    ['a logo over 5 MB', { name: 'K', logo: Buffer.alloc(5 * 1024 * 1024 + 10, 1).toString('base64') }, 'body.logo'],
    ['a blank name', { name: '   ' }, 'body.name'],
  ];
  for (const [what, body, field] of cases) {
    const res = await app.request('POST', '/api/v1/brand-kits', { key: ws.key, body });
    t.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
    t.ok(fieldsOf(res.body).includes(field), `${what} names ${field} (${fieldsOf(res.body)})`);
  }
  const bigRes = await app.request('POST', '/api/v1/brand-kits', { key: ws.key, body: { name: 'K', logo: dataUrl('image/png', big) } });
  t.match(bigRes.body.error.message, /pixels/);
  const listed = await app.request('GET', '/api/v1/assets', { key: ws.key });
  t.same(listed.body.brand_kits, [], 'nothing was created');
  const [{ n }] = await app.service.ctx.sql`select count(*)::int as n from brand_kits where org_id = ${ws.orgId}`;
  t.equal(n, 0);
});

t.test('avatars: the portrait is cropped square on the face; rename, list, delete, 404s', async (t) => {
  for (const faceX of [930, 270]) {
    const res = await app.request('POST', '/api/v1/avatars', {
      key: ws.key,
      body: { name: `Face at ${faceX}`, image: (await portrait(faceX)).toString('base64') },
    });
    t.equal(res.status, 200, res.text);
    t.match(res.body, { name: `Face at ${faceX}`, isCustom: true });
    const img = await fetchImage(res.body.imageUrl);
    t.same([img.width, img.height], [600, 600], 'a square of the shorter side');
    const c = skinCentroid(img);
    t.ok(c.n > 5000, `the face is in the crop (${c.n} skin samples)`);
    t.ok(Math.abs(c.x - 300) < 90 && Math.abs(c.y - 300) < 60, `the face is near the centre (${Math.round(c.x)}, ${Math.round(c.y)})`);
    await app.request('DELETE', `/api/v1/avatars/${res.body.id}`, { key: ws.key });
  }
  const res = await app.request('POST', '/api/v1/avatars', {
    key: ws.key,
    body: { name: 'Founder', image: dataUrl('image/png', await portrait(930)) },
  });
  const id = res.body.id;
  const renamed = await app.request('PATCH', `/api/v1/avatars/${id}`, { key: ws.key, body: { name: 'Our founder' } });
  t.equal(renamed.body.name, 'Our founder');
  const listed = await app.request('GET', '/api/v1/assets', { key: ws.key });
  t.same(
    listed.body.avatars.filter((a: { isCustom: boolean }) => a.isCustom).map((a: { name: string }) => a.name),
    ['Our founder'],
  );
  for (const [method, body] of [['PATCH', { name: 'x' }], ['DELETE']] as const) {
    const r = await app.request(method, `/api/v1/avatars/${id}`, { key: other.key, body });
    t.equal(r.status, 404);
    t.match(r.body.error.context, { resource: 'avatar', field: 'path.id' });
  }
  const bad = await app.request('POST', '/api/v1/avatars', {
    key: ws.key,
    body: { name: 'Audio', image: (await tone('a.wav', ['-f', 'lavfi', '-i', 'sine=duration=1', '-f', 'wav'])).toString('base64') },
  });
  t.equal(bad.status, 400);
  t.ok(fieldsOf(bad.body).includes('body.image'), 'audio as a portrait names body.image');
  t.match(bad.body.error.message, /PNG, JPEG or WebP/);
});

t.test('voices: mapped by language and pitch; validation of the sample; 404s', async (t) => {
  const low = await tone('low.wav', ['-f', 'lavfi', '-i', 'sine=frequency=110:duration=4', '-f', 'wav']);
  const high = await tone('high.mp3', ['-f', 'lavfi', '-i', 'sine=frequency=240:duration=4', '-f', 'mp3']);
  const a = await app.request('POST', '/api/v1/voices', {
    key: ws.key,
    body: { name: 'Deep', language: 'en-US', sample: low.toString('base64') },
  });
  t.equal(a.status, 200, a.text);
  const b = await app.request('POST', '/api/v1/voices', {
    key: ws.key,
    body: { name: 'Bright', language: 'en-US', sample: dataUrl('audio/mpeg', high) },
  });
  t.equal(b.status, 200, b.text);
  t.match(a.body, {
    object: 'custom_voice',
    status: 'ready',
    source: 'custom_clone',
    locale: ['en-US'],
    base_voice: 'marcus-narrator',
    gender: 'male',
  });
  t.match(b.body, { status: 'ready', base_voice: 'ava-bright', gender: 'female' });
  t.ok(Math.abs(a.body.pitch_hz - 110) < 5, `low pitch ${a.body.pitch_hz}`);
  t.ok(Math.abs(b.body.pitch_hz - 240) < 8, `high pitch ${b.body.pitch_hz}`);
  t.not(a.body.base_voice, b.body.base_voice, 'a low and a high sample map to different voices');
  const sample = await fetch(a.body.preview_url);
  t.equal(sample.status, 200, 'the sample is served by signed URL');
  const de = await app.request('POST', '/api/v1/voices', {
    key: ws.key,
    body: { name: 'Tief', language: 'de', sample: low.toString('base64') },
  });
  t.equal(de.body.base_voice, 'felix-de', 'the language picks among that language’s voices');

  const listed = await app.request('GET', '/api/v1/assets', { key: ws.key });
  const clones = listed.body.voices.filter((v: { source: string }) => v.source === 'custom_clone').map((v: { id: string }) => v.id);
  t.same(clones, [a.body.id, b.body.id, de.body.id]);

  const short = await tone('short.wav', ['-f', 'lavfi', '-i', 'sine=frequency=150:duration=1', '-f', 'wav']);
  // 90 s is well past the 60 s limit (a 10-minute one cost 2.5 s of CPU to encode and proved the same).
  const long = await tone('long.mp3', [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=150:duration=90',
    '-ar',
    '8000',
    '-ac',
    '1',
    '-b:a',
    '8k',
    '-f',
    'mp3',
  ]);
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['a 1-second sample', { name: 'S', language: 'en', sample: short.toString('base64') }, 'body.sample', /3 to 60 seconds/],
    ['a 90-second sample', { name: 'S', language: 'en', sample: long.toString('base64') }, 'body.sample', /3 to 60 seconds/],
    ['an image as a sample', { name: 'S', language: 'en', sample: LOGO.toString('base64') }, 'body.sample', /WAV, MP3 or M4A/],
    ['a WAV declared as MP3', { name: 'S', language: 'en', sample: dataUrl('audio/mpeg', low) }, 'body.sample', /declared/],
    ['a language no voice speaks', { name: 'S', language: 'sw', sample: low.toString('base64') }, 'body.language', /language/],
    [
      'silence',
      {
        name: 'S',
        language: 'en',
        sample: (await tone('silence.wav', ['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '4', '-f', 'wav'])).toString('base64'),
      },
      'body.sample',
      /voiced/,
    ],
  ];
  for (const [what, body, field, message] of cases) {
    const res = await app.request('POST', '/api/v1/voices', { key: ws.key, body });
    t.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
    t.ok(fieldsOf(res.body).includes(field), `${what} names ${field}`);
    t.match(res.body.error.message, message, what);
  }
  for (const method of ['GET', 'DELETE']) {
    const r = await app.request(method, `/api/v1/voices/${a.body.id}`, { key: other.key });
    t.equal(r.status, 404);
    t.match(r.body.error.context, { resource: 'voice', field: 'path.id' });
  }
});

t.test('a faceless video with a created voice is spoken by the mapped voice; queued work keeps its assets', async (t) => {
  const ws2 = await app.workspace({ credits: 1000 });
  const low = await tone('low2.wav', ['-f', 'lavfi', '-i', 'sine=frequency=100:duration=4', '-f', 'wav']);
  const voice = (
    await app.request('POST', '/api/v1/voices', { key: ws2.key, body: { name: 'Deep', language: 'en-US', sample: low.toString('base64') } })
  ).body;
  const kit = (
    await app.request('POST', '/api/v1/brand-kits', {
      key: ws2.key,
      body: { name: 'K', colors: { primary: '#223344' }, logo: LOGO.toString('base64') },
    })
  ).body;
  const q = await app.request('POST', '/api/v1/faceless-videos', {
    key: ws2.key,
    body: { script: 'Hello there. Bye now.', duration: '6', voice_id: voice.id, brand_kit_id: kit.id },
  });
  t.equal(q.status, 200, q.text);
  const [row] = await db.select().from(facelessVideos).where(eq(facelessVideos.videoId, q.body.video_id));
  t.match(
    row.spec,
    { voice: { id: voice.id, espeak: 'en-us+m3' }, brandKit: { id: kit.id, colors: ['#223344'] } },
    'the job speaks with the mapped built-in voice',
  );
  t.ok((row.spec as { brandKit: { logoKey?: string } }).brandKit.logoKey, 'and reads the uploaded logo from storage');

  // The queued video (no workers here) uses the voice and the kit: they cannot be deleted yet.
  for (const url of [`/api/v1/voices/${voice.id}`, `/api/v1/brand-kits/${kit.id}`]) {
    const res = await app.request('DELETE', url, { key: ws2.key });
    t.equal(res.status, 409, res.text);
    t.match(res.body.error, {
      code: 'conflict',
      retryable: false,
      context: { field: 'path.id', used_by: `faceless video ${q.body.video_id}` },
    });
  }
  // Nor can the kit's logo be replaced or removed: the job reads the one it was charged with.
  for (const logo of [LOGO.toString('base64'), null]) {
    const res = await app.request('PATCH', `/api/v1/brand-kits/${kit.id}`, { key: ws2.key, body: { logo } });
    t.equal(res.status, 409, res.text);
    t.match(res.body.error, {
      code: 'conflict',
      message: /change its logo once that job has finished/,
      context: { used_by: `faceless video ${q.body.video_id}` },
    });
  }
  t.equal((await fetch(kit.logo_url)).status, 200, 'the logo the job reads is still stored');
  const recoloured = await app.request('PATCH', `/api/v1/brand-kits/${kit.id}`, { key: ws2.key, body: { colors: { primary: '#445566' } } });
  t.equal(recoloured.status, 200, 'colours can change: the job has its own copy');
  // Once it has ended (here: marked failed), they can.
  await db.update(facelessVideos).set({ status: 'error' }).where(eq(facelessVideos.videoId, q.body.video_id));
  t.equal((await app.request('DELETE', `/api/v1/voices/${voice.id}`, { key: ws2.key })).status, 200, 'deleted once the work finished');
  t.equal((await app.request('DELETE', `/api/v1/brand-kits/${kit.id}`, { key: ws2.key })).status, 200);
  t.equal((await fetch(voice.preview_url)).status, 404, 'the sample is gone from storage');
});

t.test('over MCP: create and delete each kind; errors name the argument', async (t) => {
  const client = await connect(app, ws.key);
  t.teardown(() => client.close());
  const names = (await client.listTools()).tools.map((x) => x.name);
  for (const n of ['create_workspace_asset', 'delete_workspace_asset', 'list_workspace_assets']) t.ok(names.includes(n), `${n} is listed`);
  const kit = await client.callTool({
    name: 'create_workspace_asset',
    arguments: {
      kind: 'brand_kit',
      name: 'Tool kit',
      colors: { primary: '#010203' },
      fonts: ['DejaVu Sans Mono'],
      logo: LOGO.toString('base64'),
    },
  });
  t.notOk(kit.isError, JSON.stringify(kit.structuredContent));
  t.match(kit.structuredContent, { kit_name: 'Tool kit', kit_data: { colors: ['#010203'], fonts: ['DejaVu Sans Mono'] } });
  const kitId = (kit.structuredContent as { id: number }).id;
  const badFont = await client.callTool({
    name: 'create_workspace_asset',
    arguments: { kind: 'brand_kit', name: 'K', fonts: ['Papyrus'] },
  });
  t.equal(badFont.isError, true);
  t.match(JSON.stringify(badFont.structuredContent), /fonts/);
  const wrongKind = await client.callTool({ name: 'create_workspace_asset', arguments: { kind: 'avatar', name: 'K', sample: 'AAAA' } });
  t.equal(wrongKind.isError, true);
  t.match(JSON.stringify(wrongKind.structuredContent), /sample[^"]*"[^}]*does not apply/);
  t.match(JSON.stringify(wrongKind.structuredContent), /image[^"]*"[^}]*is required/);
  const avatar = await client.callTool({
    name: 'create_workspace_asset',
    arguments: { kind: 'avatar', name: 'Tool face', image: (await portrait(900)).toString('base64') },
  });
  t.notOk(avatar.isError, JSON.stringify(avatar.structuredContent));
  t.match(avatar.structuredContent, { name: 'Tool face', isCustom: true });
  const voice = await client.callTool({
    name: 'create_workspace_asset',
    arguments: {
      kind: 'voice',
      name: 'Tool voice',
      language: 'en',
      sample: (await tone('mcp.wav', ['-f', 'lavfi', '-i', 'sine=frequency=220:duration=3.5', '-f', 'wav'])).toString('base64'),
    },
  });
  t.match(voice.structuredContent, { status: 'ready', base_voice: 'ava-bright' });
  const shortVoice = await client.callTool({
    name: 'create_workspace_asset',
    arguments: {
      kind: 'voice',
      name: 'S',
      language: 'en',
      sample: (await tone('mcp-short.wav', ['-f', 'lavfi', '-i', 'sine=duration=1', '-f', 'wav'])).toString('base64'),
    },
  });
  t.equal(shortVoice.isError, true);
  t.match(JSON.stringify(shortVoice.structuredContent), /3 to 60 seconds/);
  for (const [kind, id] of [
    ['brand_kit', String(kitId)],
    ['avatar', (avatar.structuredContent as { id: string }).id],
    ['voice', (voice.structuredContent as { id: string }).id],
  ]) {
    const stranger = await connect(app, other.key);
    const theirs = await stranger.callTool({ name: 'delete_workspace_asset', arguments: { kind, id } });
    await stranger.close();
    t.equal(theirs.isError, true, `${kind}: another workspace cannot delete it`);
    t.match(theirs.structuredContent, { error: { code: 'not_found', context: { field: 'id' } } });
    const del = await client.callTool({ name: 'delete_workspace_asset', arguments: { kind, id } });
    t.match(del.structuredContent, { object: kind, deleted: true }, `${kind} deleted`);
  }
});

t.test('a slideshow made with a created brand kit and avatar shows the kit colour, its logo and the face', async (t) => {
  const renderApp = await startMcpApp(t, { GENERATION_RETRY_LIMIT: '0' }, { workers: true });
  const rws = await renderApp.workspace({ credits: 1000 });
  const kit = (
    await renderApp.request('POST', '/api/v1/brand-kits', {
      key: rws.key,
      body: { name: 'Acme', colors: { primary: '#123456', secondary: '#FFCC00' }, logo: LOGO.toString('base64') },
    })
  ).body;
  const avatar = (
    await renderApp.request('POST', '/api/v1/avatars', {
      key: rws.key,
      body: { name: 'Founder', image: (await portrait(930)).toString('base64') },
    })
  ).body;
  const q = await renderApp.request('POST', '/api/v1/slideshows', {
    key: rws.key,
    body: { prompt: 'Three reasons to drink water', slide_count: 3, aspect_ratio: '1:1', brand_kit_id: kit.id, avatar_id: avatar.id },
  });
  t.equal(q.status, 200, q.text);
  if (q.status !== 200) return;
  let body: any;
  const deadline = Date.now() + 120_000;
  for (;;) {
    body = (await renderApp.request('GET', `/api/v1/slideshows/${q.body.slideshow_id}`, { key: rws.key })).body;
    if (body.status === 'completed' || body.status === 'error' || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(body.status, 'completed', JSON.stringify(body.error));
  // Square (the smallest frame) rather than 4:5: the kit and the avatar are drawn the same on any frame.
  const g = slideGeometry(1080, 1080);
  const img = await fetchImage(body.slides[0].image_url);
  t.same([img.width, img.height], [1080, 1080]);
  t.ok(near(img.at(5, 5), '#123456'), `the kit's primary colour is the background (${img.at(5, 5)})`);
  t.ok(near(img.at(g.logo.x + g.logo.w - 10, g.logo.y + 10), '#ffff00'), 'the uploaded logo is drawn');
  t.ok(near(img.at(g.avatar.cx, g.avatar.cy), SKIN, 20), `the avatar's face is in its circle (${img.at(g.avatar.cx, g.avatar.cy)})`);
});
