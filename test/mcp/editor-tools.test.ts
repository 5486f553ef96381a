// The editor's MCP-only tools, now that the editor has landed: list_editor_sound_effects lists the
// built-in library, upload_editor_media_from_url imports an HTTPS URL through the guarded client.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import { colorPng } from '../editor/helpers.ts';
import { connect, startMcpApp } from './helpers.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
const png = await colorPng('red', 64, 48);
const host = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, (req, res) => {
  if (req.url !== '/logo.png') return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => host.close());
const base = `https://127.0.0.1:${(host.address() as { port: number }).port}`;

const app = await startMcpApp(t, { OUTBOUND_ALLOW_IPS: '127.0.0.1' });
const ws = await app.workspace();
const client = await connect(app, ws.key);
t.teardown(() => client.close());

t.test('list_editor_sound_effects lists the built-in library with playable previews', async (t) => {
  const all = await client.callTool({ name: 'list_editor_sound_effects', arguments: {} });
  t.notOk(all.isError, JSON.stringify(all.structuredContent));
  const data = (
    all.structuredContent as { object: string; data: { id: string; category: string; preview_url: string; duration_seconds: number }[] }
  ).data;
  t.ok(data.length >= 10, `${data.length} sound effects`);
  const first = data[0];
  const audio = await fetch(first.preview_url);
  t.equal(audio.status, 200, 'the preview URL serves the file');
  t.ok((await audio.arrayBuffer()).byteLength > 1000);
  const some = await client.callTool({ name: 'list_editor_sound_effects', arguments: { category: first.category, limit: 1 } });
  const filtered = (some.structuredContent as { data: { category: string }[] }).data;
  t.equal(filtered.length, 1);
  t.equal(filtered[0].category, first.category);
  const bad = await client.callTool({ name: 'list_editor_sound_effects', arguments: { limit: 0 } });
  t.equal(bad.isError, true);
  t.match(bad.structuredContent, { error: { code: 'bad_request' } });
});

t.test('upload_editor_media_from_url imports an HTTPS URL; private and plain-HTTP URLs are refused', async (t) => {
  const ok = await client.callTool({
    name: 'upload_editor_media_from_url',
    arguments: { url: `${base}/logo.png`, media_type: 'image', title: 'Logo' },
  });
  t.notOk(ok.isError, JSON.stringify(ok.structuredContent));
  const media = (ok.structuredContent as { media: { id: string; media_type: string; width: number; height: number } }).media;
  t.match(media, { media_type: 'image', width: 64, height: 48 });
  const [row] = await app.service.ctx.sql`select org_id, source from media where id = ${media.id}`;
  t.same([row.org_id, row.source], [ws.orgId, 'url']);
  for (const url of ['http://example.com/a.png', 'https://10.1.2.3/a.png', 'https://169.254.169.254/latest']) {
    const refused = await client.callTool({ name: 'upload_editor_media_from_url', arguments: { url, media_type: 'image' } });
    t.equal(refused.isError, true, url);
    t.match(refused.structuredContent, { error: { code: 'bad_request' } }, url);
  }
});
