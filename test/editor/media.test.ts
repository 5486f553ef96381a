// The editor media library: JSON (base64 and data URL) and multipart uploads with the real type
// sniffed and probed, every refusal (wrong magic bytes, unsupported type, file:// and local
// paths, oversize, SSRF addresses) leaving nothing stored, add_to_editor, the list filters,
// adding media by id or HTTPS URL, and the packing rule.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { addMedia, colorPng, colorVideo, createProject, dataUrl, tone, upload } from './helpers.ts';

// A local HTTPS host for "direct HTTPS URL" media (its self-signed certificate is trusted by this
// process only; the guarded client is told to allow 127.0.0.1, as in every test).
const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
const song = tone('song', 3, 523);
const files: Record<string, { type: string; body: Buffer }> = {
  '/song.mp3': { type: 'audio/mpeg', body: song },
  '/clip.mp4': { type: 'video/mp4', body: colorVideo('remote', 'blue', 2) },
  '/notes.txt': { type: 'text/plain', body: Buffer.from('just text, not media') },
};
const host = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, (req, res) => {
  const f = files[req.url ?? ''];
  if (!f) return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length });
  res.end(f.body);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `https://127.0.0.1:${(host.address() as { port: number }).port}`;

const app = await startTestApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1', EDITOR_UPLOAD_MAX_BYTES: String(2 * 1024 * 1024) });
const ws = await app.workspace();

async function mediaCount(a: TestApp, orgId: string): Promise<number> {
  const [row] = await a.service.ctx.sql`select count(*)::int as n from media where org_id = ${orgId}`;
  return row.n;
}
/** Names of the workspace's stored editor media, read through storage (whatever its backend). */
async function storedFiles(a: TestApp, orgId: string): Promise<string[]> {
  const names: string[] = [];
  for await (const o of a.service.ctx.storage.list(`editor-media/${orgId}/`)) names.push(path.basename(o.key));
  return names;
}
function multipart(fields: Record<string, string>, file?: { name?: string; filename: string; type: string; body: Buffer }) {
  const boundary = `----editor${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.body,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { raw: new Uint8Array(Buffer.concat(parts)), contentType: `multipart/form-data; boundary=${boundary}` };
}

t.test('JSON uploads: base64 and data URLs, probed from the real file', async (t) => {
  const png = await colorPng('#00ff00', 40, 30);
  const a = await upload(app, ws.key, 'logo.png', 'image/png', png, { title: 'Brand logo' });
  t.match(a, { object: 'editor_media_upload', editor_item: null, video_id: null, version: null });
  t.match(a.media, {
    object: 'editor_media',
    media_type: 'image',
    title: 'Brand logo',
    filename: 'logo.png',
    content_type: 'image/png',
    size_bytes: png.length,
    width: 40,
    height: 30,
    duration_seconds: null,
    has_audio: null,
    status: 'ready',
  });
  const got = await fetch(a.media.url);
  t.same(Buffer.from(await got.arrayBuffer()), png, 'the signed URL serves the bytes');

  const video = colorVideo('probe', 'red', 2.5, { width: 160, height: 90 });
  const res = await app.request('POST', '/api/v1/editor/media', {
    key: ws.key,
    body: { media: { filename: 'clip.mp4', data: dataUrl('video/mp4', video) } },
  });
  t.equal(res.status, 200);
  t.match(res.body.media, { media_type: 'video', content_type: 'video/mp4', width: 160, height: 90, has_audio: true });
  t.ok(Math.abs(res.body.media.duration_seconds - 2.5) < 0.1, 'duration probed');

  const silent = await upload(app, ws.key, 'silent.mp4', 'video/mp4', colorVideo('silent', 'blue', 1, { audio: false }));
  t.equal(silent.media.has_audio, false);
  const voice = await upload(app, ws.key, 'me.mp3', 'audio/mpeg', tone('voice', 1.5), { media_type: 'voice' });
  t.match(voice.media, { media_type: 'voice', content_type: 'audio/mpeg', width: null, height: null, has_audio: true });
});

t.test('refused uploads are 400 with a clear message, and nothing is stored', async (t) => {
  const own = await app.workspace();
  const png = await colorPng('#123456');
  const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'PNG bytes declared as MP4',
      { media: { filename: 'x.mp4', content_type: 'video/mp4', data: png.toString('base64') } },
      'body.media.content_type',
      /declared as video\/mp4 but its bytes are image\/png/,
    ],
    [
      'data URL type disagrees with the bytes',
      { media: { filename: 'x.jpg', data: dataUrl('image/jpeg', png) } },
      'body.media.data',
      /image\/jpeg but its bytes are image\/png/,
    ],
    [
      'text is not media',
      { media: { filename: 'a.txt', data: Buffer.from('hello world, plain text').toString('base64') } },
      'body.media.data',
      /not a recognised image, video or audio/,
    ],
    [
      'GIF is not supported',
      { media: { filename: 'a.gif', data: gif.toString('base64') } },
      'body.media.data',
      /image\/gif, which the editor does not support/,
    ],
    ['file:// URI', { media: { filename: 'a.png', data: 'file:///etc/passwd' } }, 'body.media.data', /local file path or file:\/\/ URI/],
    ['absolute local path', { media: { filename: 'a.png', data: '/home/me/Pictures/a.png' } }, 'body.media.data', /local file path/],
    ['Windows path', { media: { filename: 'a.png', data: 'C:\\Users\\me\\a.png' } }, 'body.media.data', /local file path/],
    [
      'an https URL is not inline data',
      { media: { filename: 'a.png', data: 'https://example.com/a.png' } },
      'body.media.data',
      /not a URL|base64/,
    ],
    ['not base64', { media: { filename: 'a.png', data: 'this is not base64 at all!' } }, 'body.media.data', /not valid base64/],
    [
      'media_type disagrees with the file',
      { media_type: 'video', media: { filename: 'a.png', data: png.toString('base64') } },
      'body.media_type',
      /media_type is video but the file is an image/,
    ],
    [
      'truncated video',
      { media: { filename: 'a.mp4', data: colorVideo('cut', 'red', 1).subarray(0, 600).toString('base64') } },
      'body.media.data',
      /could not be decoded|without/,
    ],
    [
      'over the size limit (2 MB here)',
      { media: { filename: 'big.png', data: Buffer.alloc(2.5 * 1024 * 1024, 7).toString('base64') } },
      'body.media.data',
      /larger than 2097152 bytes/,
    ],
    [
      'add_to_editor without video_id',
      { add_to_editor: true, media: { filename: 'a.png', data: png.toString('base64') } },
      'body.video_id',
      /video_id is required/,
    ],
  ];
  for (const [name, body, field, message] of cases) {
    const res = await app.request('POST', '/api/v1/editor/media', { key: own.key, body });
    t.equal(res.status, 400, name);
    t.match(res.body.error.message, message, `${name}: ${res.body.error.message}`);
    t.ok(
      res.body.error.context.errors?.some((e: { field: string }) => e.field === field),
      `${name}: names ${field} (${JSON.stringify(res.body.error.context.errors)})`,
    );
  }
  const missingProject = await app.request('POST', '/api/v1/editor/media', {
    key: own.key,
    body: { add_to_editor: true, video_id: 999999, media: { filename: 'a.png', data: png.toString('base64') } },
  });
  t.equal(missingProject.status, 404);
  t.equal(missingProject.body.error.context.field, 'body.video_id');
  t.equal(await mediaCount(app, own.orgId), 0, 'no media row');
  t.same(await storedFiles(app, own.orgId), [], 'no stored file');
});

t.test('multipart uploads stream the file part; fields are validated like JSON', async (t) => {
  const own = await app.workspace();
  const project = await createProject(app, own.key);
  const video = colorVideo('multi', 'yellow', 2);
  const form = multipart(
    {
      title: 'Streamed clip',
      media_type: 'video',
      add_to_editor: 'true',
      video_id: String(project.id),
      placement: JSON.stringify({ from_seconds: 1, duration_seconds: 1.5, fit: 'contain' }),
    },
    { filename: 'streamed.mp4', type: 'video/mp4', body: video },
  );
  const res = await app.request('POST', '/api/v1/editor/media', { key: own.key, ...form });
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.match(res.body.media, {
    title: 'Streamed clip',
    filename: 'streamed.mp4',
    media_type: 'video',
    size_bytes: video.length,
    status: 'ready',
  });
  t.match(res.body.editor_item, {
    type: 'video',
    media_id: res.body.media.id,
    from_seconds: 1,
    duration_seconds: 1.5,
    fit: 'contain',
    audio_role: 'source_video',
  });
  t.equal(res.body.video_id, project.id);
  t.equal(res.body.version, 2);
  const stored = await app.service.ctx.storage.readBuffer(`editor-media/${own.orgId}/${res.body.media.id}.mp4`);
  t.same(stored, video, 'the streamed bytes were stored intact');

  const before = await mediaCount(app, own.orgId);
  const refusals: [string, ReturnType<typeof multipart>, string][] = [
    ['wrong magic bytes', multipart({}, { filename: 'x.png', type: 'image/png', body: video }), 'body.file'],
    [
      'oversize',
      multipart({}, { filename: 'big.mp3', type: 'audio/mpeg', body: Buffer.concat([tone('big', 1), Buffer.alloc(3 * 1024 * 1024)]) }),
      'body.file',
    ],
    ['no file part', multipart({ title: 'nothing' }), 'body.file'],
    ['unknown field', multipart({ colour: 'red' }, { filename: 'a.mp4', type: 'video/mp4', body: video }), 'body.colour'],
    [
      'bad placement',
      multipart(
        { add_to_editor: 'true', video_id: String(project.id), placement: '{"fit":"stretch"}' },
        { filename: 'a.mp4', type: 'video/mp4', body: video },
      ),
      'body.placement.fit',
    ],
    ['file part under another name', multipart({}, { name: 'upload', filename: 'a.mp4', type: 'video/mp4', body: video }), 'body.upload'],
  ];
  // POST /editor/media/file (uploadEditorMediaFile) is the multipart-only alias: same checks.
  for (const url of ['/api/v1/editor/media', '/api/v1/editor/media/file']) {
    for (const [name, body, field] of refusals) {
      const r = await app.request('POST', url, { key: own.key, ...body });
      t.equal(r.status, 400, `${url} ${name}: ${r.text.slice(0, 200)}`);
      t.ok(
        r.body.error.context.errors?.some((e: { field: string }) => e.field === field),
        `${url} ${name}: names ${field} (${JSON.stringify(r.body.error.context.errors)})`,
      );
    }
  }
  t.equal(await mediaCount(app, own.orgId), before, 'no media row for any refusal');
  t.equal((await storedFiles(app, own.orgId)).length, before, 'no stored file for any refusal');
  const tmp = path.join(app.service.ctx.config.dataDir, 'tmp');
  // (The process's own temporary folder, DATA_DIR/tmp/proc-…, may remain: empty.)
  const leftovers = fs.existsSync(tmp) ? (fs.readdirSync(tmp, { recursive: true }) as string[]).filter((f) => !/^proc-[^/]+$/.test(f)) : [];
  t.same(leftovers, [], 'no temporary file left behind');

  const unauth = await app.request('POST', '/api/v1/editor/media', {
    ...multipart({}, { filename: 'a.mp4', type: 'video/mp4', body: video }),
  });
  t.equal(unauth.status, 401, 'multipart needs a key before anything is read');
  const wrongOp = await app.request('POST', '/api/v1/editor/videos', { key: own.key, ...multipart({ title: 'x' }) });
  t.equal(wrongOp.status, 415, 'multipart is only accepted where the spec says so');
});

t.test('POST /editor/media/file: the multipart-only form of the upload, for generated clients', async (t) => {
  const own = await app.workspace();
  const project = await createProject(app, own.key);
  const video = colorVideo('alias', 'green', 1);
  const form = multipart(
    {
      title: 'Via alias',
      add_to_editor: 'true',
      video_id: String(project.id),
      placement: JSON.stringify({ from_seconds: 0, fit: 'cover' }),
    },
    { filename: 'alias.mp4', type: 'video/mp4', body: video },
  );
  const res = await app.request('POST', '/api/v1/editor/media/file', { key: own.key, ...form });
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.match(res.body.media, { title: 'Via alias', filename: 'alias.mp4', media_type: 'video', size_bytes: video.length, status: 'ready' });
  t.match(res.body.editor_item, { type: 'video', media_id: res.body.media.id, fit: 'cover' });
  t.equal(res.body.video_id, project.id);
  const json = await app.request('POST', '/api/v1/editor/media/file', {
    key: own.key,
    body: { media_type: 'image', media: { filename: 'a.png', data: dataUrl('image/png', await colorPng('red')) } },
  });
  t.equal(json.status, 415, 'JSON uploads go to POST /editor/media');
  t.match(json.body.error, { code: 'unsupported_media_type', context: { supported_content_types: ['multipart/form-data'] } });
});

/** An MCP tools/call over plain JSON-RPC: the result (isError and the structured content). */
async function tool(key: string, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  if (res.status !== 200) throw new Error(`MCP ${name}: HTTP ${res.status} ${await res.text()}`);
  const { result } = (await res.json()) as { result: { isError?: boolean; structuredContent?: any } };
  return { isError: !!result.isError, body: result.structuredContent };
}

t.test('video_id and placement apply only with add_to_editor: true; a 400 naming each otherwise (JSON, multipart, MCP)', async (t) => {
  const own = await app.workspace();
  const project = await createProject(app, own.key);
  const png = (await colorPng('#abcdef')).toString('base64');
  const video = colorVideo('stray', 'purple', 1);
  const placement = { from_seconds: 0, fit: 'contain' };
  // JSON (POST /editor/media, and the MCP tool upload_editor_media, one handler).
  const json: [string, Record<string, unknown>, string[]][] = [
    ['video_id without add_to_editor', { video_id: project.id }, ['body.video_id']],
    ['video_id with add_to_editor: false', { video_id: project.id, add_to_editor: false }, ['body.video_id']],
    ['placement without add_to_editor', { placement }, ['body.placement']],
    ['both without add_to_editor', { video_id: project.id, placement }, ['body.video_id', 'body.placement']],
  ];
  for (const [name, extra, fields] of json) {
    const body = { media: { filename: 'a.png', data: png }, ...extra };
    const res = await app.request('POST', '/api/v1/editor/media', { key: own.key, body });
    t.equal(res.status, 400, `JSON ${name}: ${res.text.slice(0, 300)}`);
    t.equal(res.body.error?.code, 'bad_request');
    t.same(
      res.body.error?.context?.errors?.map((e: { field: string }) => e.field),
      fields,
      `JSON ${name}: names ${fields.join(', ')}`,
    );
    t.match(res.body.error?.message, /add_to_editor/, `JSON ${name}: says add_to_editor is what it needs`);
    const mcp = await tool(own.key, 'upload_editor_media', body);
    t.ok(mcp.isError, `MCP upload_editor_media ${name}: refused`);
    t.match(mcp.body, { error: { code: 'bad_request' } });
    t.same(
      mcp.body?.error?.context?.errors?.map((e: { field: string }) => e.field),
      fields.map((f) => f.slice('body.'.length)),
      `MCP ${name}: names the arguments`,
    );
  }
  const fromUrl = await tool(own.key, 'upload_editor_media_from_url', { url: `${base}/song.mp3`, video_id: project.id });
  t.ok(fromUrl.isError, 'upload_editor_media_from_url: video_id without add_to_editor is refused too');
  t.same(
    fromUrl.body?.error?.context?.errors?.map((e: { field: string }) => e.field),
    ['video_id'],
  );

  // Multipart (POST /editor/media and its alias POST /editor/media/file): the same refusals, and
  // an integer field read as the JSON schema reads it (the canonical decimal of an IntegerId).
  const multiparts: [string, Record<string, string>, string][] = [
    ['video_id without add_to_editor', { video_id: String(project.id) }, 'body.video_id'],
    ['video_id with add_to_editor false', { video_id: String(project.id), add_to_editor: 'false' }, 'body.video_id'],
    ['placement without add_to_editor', { placement: JSON.stringify(placement) }, 'body.placement'],
    ['video_id with a leading zero', { add_to_editor: 'true', video_id: `0${project.id}` }, 'body.video_id'],
    ['video_id with a plus sign', { add_to_editor: 'true', video_id: `+${project.id}` }, 'body.video_id'],
    ['video_id with an exponent', { add_to_editor: 'true', video_id: `${project.id}e0` }, 'body.video_id'],
    ['video_id with a fraction', { add_to_editor: 'true', video_id: `${project.id}.0` }, 'body.video_id'],
    ['video_id 0', { add_to_editor: 'true', video_id: '0' }, 'body.video_id'],
    ['video_id past 2^53-1', { add_to_editor: 'true', video_id: '9007199254740993' }, 'body.video_id'],
  ];
  for (const url of ['/api/v1/editor/media', '/api/v1/editor/media/file']) {
    for (const [name, fields, field] of multiparts) {
      const res = await app.request('POST', url, {
        key: own.key,
        ...multipart(fields, { filename: 'a.mp4', type: 'video/mp4', body: video }),
      });
      t.equal(res.status, 400, `${url} ${name}: ${res.text.slice(0, 300)}`);
      t.ok(
        res.body.error?.context?.errors?.some((e: { field: string }) => e.field === field),
        `${url} ${name}: names ${field} (${JSON.stringify(res.body.error?.context)})`,
      );
    }
  }
  t.equal(await mediaCount(app, own.orgId), 0, 'nothing was stored for any refusal');
  // The largest id the contract allows is read exactly (and names no editor video here: 404).
  const largest = await app.request('POST', '/api/v1/editor/media', {
    key: own.key,
    ...multipart({ add_to_editor: 'true', video_id: '9007199254740991' }, { filename: 'a.mp4', type: 'video/mp4', body: video }),
  });
  t.equal(largest.status, 404, largest.text.slice(0, 300));
  t.match(largest.body.error, { code: 'not_found', context: { field: 'body.video_id' } });
  const placed = await app.request('POST', '/api/v1/editor/media/file', {
    key: own.key,
    ...multipart({ add_to_editor: 'true', video_id: String(project.id) }, { filename: 'a.mp4', type: 'video/mp4', body: video }),
  });
  t.equal(placed.status, 200, placed.text.slice(0, 300));
  t.equal(placed.body.video_id, project.id, 'with add_to_editor and a canonical id the upload is placed');
});

t.test('GET /editor/media filters by type (audio includes voices), searches and pages', async (t) => {
  const own = await app.workspace();
  await upload(app, own.key, 'sunset-beach.png', 'image/png', await colorPng('#ff8800'));
  await upload(app, own.key, 'theme-song.mp3', 'audio/mpeg', tone('theme', 1));
  await upload(app, own.key, 'narration.mp3', 'audio/mpeg', tone('narr', 1), { media_type: 'voice', title: 'Founder narration' });
  await upload(app, own.key, 'clip.mp4', 'video/mp4', colorVideo('list', 'red', 1));
  const ids = async (q: string) => {
    const res = await app.request('GET', `/api/v1/editor/media${q}`, { key: own.key });
    t.equal(res.status, 200, q);
    return res.body.data.map((m: { filename: string }) => m.filename);
  };
  t.same(await ids(''), ['clip.mp4', 'narration.mp3', 'theme-song.mp3', 'sunset-beach.png'], 'newest first');
  t.same(await ids('?media_type=audio'), ['narration.mp3', 'theme-song.mp3'], 'audio includes voices');
  t.same(await ids('?media_type=voice'), ['narration.mp3'], 'voice is voice-only');
  t.same(await ids('?media_type=image'), ['sunset-beach.png']);
  t.same(await ids('?query=BEACH'), ['sunset-beach.png'], 'case-insensitive filename search');
  t.same(await ids('?query=founder'), ['narration.mp3'], 'title search');
  t.same(await ids('?query=100%25'), [], 'wildcards are literal');
  const page1 = await app.request('GET', '/api/v1/editor/media?limit=3', { key: own.key });
  t.equal(page1.body.data.length, 3);
  t.type(page1.body.next_cursor, 'string');
  const page2 = await app.request('GET', `/api/v1/editor/media?limit=3&cursor=${page1.body.next_cursor}`, { key: own.key });
  t.same(
    page2.body.data.map((m: { filename: string }) => m.filename),
    ['sunset-beach.png'],
  );
  t.equal(page2.body.next_cursor, null);
  t.equal((await app.request('GET', '/api/v1/editor/media?limit=0', { key: own.key })).status, 400);
  t.equal((await app.request('GET', '/api/v1/editor/media?cursor=bm90LWpzb24', { key: own.key })).status, 400);
  const other = await app.workspace();
  t.same((await app.request('GET', '/api/v1/editor/media', { key: other.key })).body.data, [], "another workspace's library is separate");

  // Indexed text: voiceovers are searchable by what they say.
  const p = await createProject(app, own.key);
  await app.request('PATCH', `/api/v1/editor/videos/${p.id}`, {
    key: own.key,
    body: { operations: [{ type: 'add_voiceover', text: 'Crunchy granola mornings' }] },
  });
  t.same(await ids('?query=granola'), [
    (await app.request('GET', '/api/v1/editor/media?media_type=voice&limit=1', { key: own.key })).body.data[0].filename,
  ]);
});

t.test('POST /editor/videos/{id}/media: by media_id or HTTPS url, with the packing rule', async (t) => {
  const own = await app.workspace();
  const p = await createProject(app, own.key);
  const clip = await upload(app, own.key, 'a.mp4', 'video/mp4', colorVideo('pack', 'green', 5));
  const first = await addMedia(app, own.key, p.id, { media_id: clip.media.id, from_seconds: 0, duration_seconds: 3 });
  t.match(first, {
    object: 'editor_media_addition',
    video_id: p.id,
    version: 2,
    item: { from_seconds: 0, duration_seconds: 3, fit: 'cover' },
    track: { type: 'video', order: 0 },
  });
  const after = await addMedia(app, own.key, p.id, { media_id: clip.media.id, from_seconds: 3, duration_seconds: 2 });
  t.equal(after.track.track_id, first.track.track_id, 'no overlap: packed onto the same track');
  const overlapping = await addMedia(app, own.key, p.id, { media_id: clip.media.id, from_seconds: 2, duration_seconds: 2 });
  t.not(overlapping.track.track_id, first.track.track_id, 'overlap: a new track');
  t.equal(overlapping.track.type, 'video');
  const later = await addMedia(app, own.key, p.id, { media_id: clip.media.id, from_seconds: 4, duration_seconds: 1 });
  t.equal(later.track.track_id, overlapping.track.track_id, 'the first compatible track with room');
  const explicit = await addMedia(app, own.key, p.id, {
    media_id: clip.media.id,
    track_id: first.track.track_id,
    from_seconds: 5,
    duration_seconds: 1,
  });
  t.equal(explicit.item.track_id, first.track.track_id);
  const img = await upload(app, own.key, 'a.png', 'image/png', await colorPng('#ffffff'));
  const image = await addMedia(app, own.key, p.id, { media_id: img.media.id, from_seconds: 6 });
  t.equal(image.item.duration_seconds, 5, 'images default to 5 s');
  t.equal(image.track.track_id, first.track.track_id, 'images pack onto video tracks with room');

  const fromUrl = await addMedia(app, own.key, p.id, {
    url: `${base}/song.mp3`,
    media_type: 'audio',
    audio_role: 'music',
    from_seconds: 0,
  });
  t.match(fromUrl.item, { type: 'audio', audio_role: 'music', from_seconds: 0 });
  t.ok(Math.abs(fromUrl.item.duration_seconds - 3) < 0.1, 'duration defaults to the media length');
  t.equal(fromUrl.track.type, 'audio');
  const lib = await app.request('GET', '/api/v1/editor/media?query=song', { key: own.key });
  t.match(lib.body.data[0], { filename: 'song.mp3', media_type: 'audio', content_type: 'audio/mpeg' });
  t.same(Buffer.from(await (await fetch(lib.body.data[0].url)).arrayBuffer()), song, 'fetched and stored');

  const refused: [string, Record<string, unknown>, number, string][] = [
    ['plain http', { url: `http://127.0.0.1:1/a.mp3` }, 400, 'body.url'],
    ['private address', { url: 'https://10.1.2.3/a.mp3' }, 400, 'body.url'],
    ['link-local metadata address', { url: 'https://169.254.169.254/latest/meta-data' }, 400, 'body.url'],
    ['loopback name', { url: 'https://localhost/a.mp3' }, 400, 'body.url'],
    ['IPv6 loopback', { url: 'https://[::1]/a.mp3' }, 400, 'body.url'],
    ['not media', { url: `${base}/notes.txt` }, 400, 'body.url'],
    ['media type mismatch', { url: `${base}/clip.mp4`, media_type: 'audio' }, 400, 'body.media_type'],
    ['remote 404', { url: `${base}/missing.mp3` }, 400, 'body.url'],
    ['both media_id and url', { media_id: clip.media.id, url: `${base}/song.mp3` }, 400, 'body.media_id'],
    ['neither', { from_seconds: 1 }, 400, 'body.media_id'],
    ['longer than the media', { media_id: clip.media.id, duration_seconds: 9 }, 400, 'body.duration_seconds'],
    ['incompatible track', { media_id: clip.media.id, track_id: fromUrl.track.track_id }, 400, 'body.track_id'],
    ['unknown track', { media_id: clip.media.id, track_id: 'trk_nope_1' }, 404, 'body.track_id'],
    ['unknown media', { media_id: '00000000-0000-4000-8000-000000000000' }, 404, 'body.media_id'],
  ];
  const before = await mediaCount(app, own.orgId);
  for (const [name, body, status, field] of refused) {
    const res = await app.request('POST', `/api/v1/editor/videos/${p.id}/media`, { key: own.key, body });
    t.equal(res.status, status, `${name}: ${res.text.slice(0, 200)}`);
    const fields = [res.body.error.context.field, ...(res.body.error.context.errors ?? []).map((e: { field: string }) => e.field)];
    t.ok(fields.includes(field), `${name}: names ${field} (${JSON.stringify(res.body.error.context)})`);
  }
  t.equal(await mediaCount(app, own.orgId), before, 'refused URLs store nothing');
  const missing = await app.request('POST', '/api/v1/editor/videos/987654/media', { key: own.key, body: { url: `${base}/song.mp3` } });
  t.equal(missing.status, 404, 'an unknown project is 404 before any download');
});

t.test('the guarded client refuses loopback when it is not explicitly allowed', async (t) => {
  const strict = await startTestApp(t);
  const own = await strict.workspace();
  const p = await createProject(strict, own.key);
  const res = await strict.request('POST', `/api/v1/editor/videos/${p.id}/media`, { key: own.key, body: { url: `${base}/song.mp3` } });
  t.equal(res.status, 400);
  t.match(res.body.error.message, /private, loopback/);
});
