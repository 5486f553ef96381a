// The SDK's examples (sdk/examples/*.ts), run as a user runs them (a child process with the API
// root and a key in its environment) against the real server: the catalog, a generation queued
// with an idempotency key and polled to completion by a real worker, a multipart upload of a real
// PNG, a PATCH of editor edits, and a 400 and a 404 read from the SDK's error result. Also: the
// SDK type-checks with its own tsconfig and imports nothing from outside sdk/.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';
import { tsc7 } from '../helpers/tsc.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 1000 });

async function example(name: string, args: string[] = [], key = ws.key): Promise<any> {
  const r = await run(process.execPath, [path.join(root, 'sdk/examples', `${name}.ts`), ...args], {
    cwd: root,
    env: { ...process.env, MEDIA_API_BASE_URL: `${app.url}/api/v1`, MEDIA_API_KEY: key, POLL_EVERY_MS: '200' },
    timeout: 150_000,
  }).catch((e) => e);
  if (r.code) throw new Error(`sdk/examples/${name}.ts exited with ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const credits = async () => (await app.service.ctx.sql`select credits from organizations where id = ${ws.orgId}`)[0].credits as number;

t.test('catalog.ts lists the catalog', async (t) => {
  const out = await example('catalog');
  const catalog = (await app.request('GET', '/api/v1/models', { key: ws.key })).body;
  t.same(
    { static_ads: out.static_ads, video_ads: out.video_ads, ugc_ads: out.ugc_ads, ai_models: out.ai_models },
    {
      static_ads: catalog.static_ads.length,
      video_ads: catalog.video_ads.length,
      ugc_ads: catalog.ugc_ads.length,
      ai_models: catalog.ai_models.length,
    },
  );
  t.ok(out.static_ads > 0, 'there are static-ad templates');
  t.match(out.cheapest_static_ad, { slug: String, credits: Number });
});

t.test('generation.ts queues with an idempotency key, replays without a second charge, polls to completion', async (t) => {
  const before = await credits();
  const out = await example('generation', ['bold-sale-banner']);
  t.equal(out.status, 'completed', JSON.stringify(out.error));
  t.match(out.output, { content_type: 'image/png' });
  t.match(out.url, /^http:\/\/127\.0\.0\.1:\d+\//);
  t.same(
    out.replay,
    { idempotent_replay: true, same_id: true, credits_deducted: out.credits_deducted },
    'the repeated request is the stored answer',
  );
  t.ok(out.credits_deducted > 0);
  t.equal(await credits(), before - out.credits_deducted, 'charged once');
  const file = await fetch(out.url);
  t.equal(file.status, 200);
  t.same([...Buffer.from(await file.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
});

t.test('upload.ts sends a real file as multipart/form-data and places it on a timeline', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-upload-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'logo.png');
  const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#1e40af' } })
    .png()
    .toBuffer();
  fs.writeFileSync(file, png);
  const out = await example('upload', [file]);
  t.match(out.media, { media_type: 'image', filename: 'logo.png', size_bytes: png.length, status: 'ready' });
  t.match(out.editor_item, { type: 'image', media_id: out.media.id });
  t.equal(out.version, 2);
  const video = await app.request('GET', `/api/v1/editor/videos/${out.video_id}`, { key: ws.key });
  t.equal(video.status, 200);
  t.ok(
    video.body.items.some((i: { media_id?: string }) => i.media_id === out.media.id),
    'the item is on the stored timeline',
  );
  const stored = fs.readFileSync(path.join(app.service.ctx.config.dataDir, 'media', 'editor-media', ws.orgId, `${out.media.id}.png`));
  t.same(stored, png, 'the bytes arrived intact');
});

t.test('edits.ts applies operations with PATCH', async (t) => {
  const out = await example('edits');
  t.equal(out.title, 'Summer sale');
  t.equal(out.version, out.version_before + 1);
  t.same(
    out.applied.map((a: { type: string }) => a.type),
    ['set_title', 'add_text'],
  );
  t.same(out.texts, ['20% off everything']);
  const video = await app.request('GET', `/api/v1/editor/videos/${out.id}`, { key: ws.key });
  t.match(video.body, { title: 'Summer sale', version: out.version });
});

t.test('errors.ts reads a 400 and a 404 from the ErrorResponse envelope', async (t) => {
  const before = await credits();
  const out = await example('errors');
  t.match(out.bad_request, { status: 400, code: 'bad_request', retryable: false, message: String });
  t.ok(
    out.bad_request.fields.includes('body.colour') || out.bad_request.fields.includes('body.template_slug'),
    `names the failing fields: ${out.bad_request.fields}`,
  );
  t.match(out.not_found, { status: 404, code: 'not_found', retryable: false, resource: 'generation' });
  t.equal(out.thrown_code, 'not_found', 'throwOnError throws the envelope itself');
  t.equal(await credits(), before, 'nothing charged');
});

t.test('an example with a wrong key fails with the 401 envelope it got', async (t) => {
  await t.rejects(example('edits', [], 'sk_live_wrong'), /exited with 1: \{"error":\{"code":"(invalid_api_key|unauthorized)"/);
});

t.test('the SDK type-checks on its own and imports nothing from outside sdk/', async (t) => {
  const tsc = await run(await tsc7(), ['-p', 'sdk/tsconfig.json', '--singleThreaded'], { cwd: root, maxBuffer: 16 << 20 }).catch((e) => e);
  t.equal(tsc.code ?? 0, 0, `tsc -p sdk/tsconfig.json:\n${tsc.stdout}${tsc.stderr}`);
  const files = (fs.readdirSync(path.join(root, 'sdk/src'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  t.ok(files.length > 5);
  for (const f of files) {
    const code = fs.readFileSync(path.join(root, 'sdk/src', f), 'utf8');
    for (const [, spec] of code.matchAll(/\bfrom\s+'([^']+)'/g)) {
      const target = path.resolve(path.dirname(path.join(root, 'sdk/src', f)), spec);
      t.ok(spec.startsWith('.') && target.startsWith(path.join(root, 'sdk/src')), `${f} imports ${spec}`);
    }
  }
});
