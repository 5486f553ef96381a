// Inline previews (MCP Apps): the `ui://` resource linked from get_video, get_generation,
// get_slideshow and get_editor_video, rendered by a minimal MCP Apps host page (./apps-host.js,
// the ext-apps host side, bundled here with esbuild) in headless Chromium (from npm,
// ../helpers/browser.ts) for outputs really made by the local engines (a slideshow, a faceless
// video, a static ad): the videos play (currentTime advances, readyState, decoded frames), the
// slides are listed and loaded, the generated image is shown, the slideshow's editor timeline is
// drawn, a hostile title stays text, a URL of another origin is neither shown nor requested, no
// request leaves the page's origin (every request of the browser is intercepted) and no CSP
// violation happens (securitypolicyviolation events of every frame, and the console).
//
// One origin, as in production behind a reverse proxy: the host page's server serves the page and
// passes every other path (/mcp, /media) to the service, whose PUBLIC_BASE_URL it is.
import http from 'node:http';
import { forward, listenLocal } from '../helpers/local-server.ts';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import type { Frame, Page } from 'playwright-core';
import t from 'tap';
import { PREVIEW_URI } from '../../src/mcp/apps.ts';
import { startTestApp } from '../helpers/app.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { connect } from './helpers.ts';

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title></head>
<body><h1>Host</h1><script type="module" src="/host/host.js"></script></body></html>`;

const bundle = await build({
  entryPoints: [new URL('./apps-host.js', import.meta.url).pathname],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  write: false,
  logLevel: 'silent',
});
const hostJs = bundle.outputFiles[0].text;

/** Where the host server passes everything but the host page (set once the service runs). */
const upstream = { url: '' };

async function hostServer(): Promise<string> {
  const server = http.createServer((req, res) => {
    if (req.url === '/host/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HOST_PAGE);
    if (req.url === '/host/host.js') return res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(hostJs);
    forward(req, res, upstream.url);
  });
  return listenLocal(t, server);
}

const origin = await hostServer();
const app = await startTestApp(t, { PUBLIC_BASE_URL: origin, RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
upstream.url = app.url;
const ws = await app.workspace({ credits: 500 });
const client = await connect({ ...app, url: origin }, ws.key);
t.teardown(() => client.close());

const TITLE = 'Water <img src=/x onerror="parent.pwned=1"> & "friends"';

/** Calls `create` and then `get` with the id it returns (`idOf`) until the record is finished. */
async function finished(create: string, args: Record<string, unknown>, get: string, idOf: (created: any) => unknown): Promise<any> {
  const created = await client.callTool({ name: create, arguments: args });
  if (created.isError) throw new Error(JSON.stringify(created.structuredContent));
  const id = idOf(created.structuredContent);
  const end = Date.now() + 120_000;
  for (;;) {
    const record = (await client.callTool({ name: get, arguments: { id } })).structuredContent as any;
    if (['completed', 'error', 'failed'].includes(record.status) || Date.now() > end) return record;
    await new Promise((r) => setTimeout(r, 250));
  }
}

// Real outputs of the local engines, made while the browser starts.
const made = Promise.all([
  finished(
    'create_slideshow',
    { prompt: 'Three reasons to drink water', title: TITLE, slide_count: 3 },
    'get_slideshow',
    (c) => c.slideshow_id,
  ),
  finished('create_faceless_video', { script: 'Water keeps you sharp. Drink a glass now.', duration: '5' }, 'get_video', (c) => c.video_id),
  finished(
    'create_generation',
    { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'A glass of water' },
    'get_generation',
    (c) => c.generations[0].id,
  ),
]);

// The browser: every request is intercepted (anything off the origin is recorded and aborted), and
// every frame reports its CSP violations to the console, where they are collected with its errors.
const context = await launchBrowser(t);
const offOrigin: string[] = [];
const requested: string[] = [];
await context.route('**/*', (route) => {
  const url = route.request().url();
  requested.push(url);
  if (new URL(url).origin !== origin) {
    offOrigin.push(url);
    return route.abort('blockedbyclient');
  }
  return route.continue();
});
await context.addInitScript(
  `document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI + ' at ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber + ' ' + e.sample), true);`,
);
const page: Page = context.pages()[0] ?? (await context.newPage());
const problems: string[] = [];
page.on('console', (m) => {
  if (m.type() === 'error' || /Content Security Policy|CSP violation/i.test(m.text())) problems.push(m.text());
});
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
await page.goto(`${origin}/host/#key=${encodeURIComponent(ws.key)}`);

interface Shown {
  uri: string;
  mimeType: string;
  csp: { resourceDomains?: string[]; connectDomains?: string[] };
}

/** Calls `tool` in the host page, which renders its preview; the preview's frame. */
async function preview(tool: string, args: Record<string, unknown>, override?: unknown): Promise<{ shown: Shown; frame: Frame }> {
  const shown = (await page.evaluate(
    `window.showPreview(${JSON.stringify(tool)}, ${JSON.stringify(args)}, ${JSON.stringify(override)})`,
  )) as Shown;
  const frame = await (await page.waitForSelector('iframe#preview')).contentFrame();
  if (!frame) throw new Error('no preview frame');
  return { shown, frame };
}

const [slideshow, faceless, generation] = await made;

/** Polls an expression in the frame (evaluated by the browser's debugger protocol, which the page's CSP does not govern, unlike waitForFunction's eval). */
async function until(frame: Frame, expression: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await frame.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Plays the frame's video until its time passes `seconds`: its state then. */
async function plays(frame: Frame, seconds: number) {
  await frame.locator('video').waitFor();
  await frame.evaluate(`document.querySelector('video').play()`);
  await until(frame, `document.querySelector('video').currentTime > ${seconds}`);
  return (await frame.evaluate(
    `(() => { const v = document.querySelector('video'); return { readyState: v.readyState, time: v.currentTime, error: v.error && v.error.code, width: v.videoWidth }; })()`,
  )) as { readyState: number; time: number; error: number | null; width: number };
}

t.test('the four tools link the preview resource; it is listed with its policy', async (t) => {
  const tools = (await client.listTools()).tools;
  for (const name of ['get_generation', 'get_video', 'get_slideshow', 'get_editor_video']) {
    const tool = tools.find((x) => x.name === name)!;
    t.same(tool._meta, { ui: { resourceUri: PREVIEW_URI }, 'ui/resourceUri': PREVIEW_URI }, name);
  }
  t.notOk(tools.find((x) => x.name === 'create_slideshow')!._meta, 'other tools link nothing');
  const { resources } = await client.listResources();
  t.match(resources, [
    { uri: PREVIEW_URI, mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: { resourceDomains: [origin], connectDomains: [] } } } },
  ]);
  const read = await client.readResource({ uri: PREVIEW_URI });
  const html = (read.contents[0] as { text: string }).text;
  const markup = html.replace(/(<script type="module">)[\s\S]*?(<\/script>)/, '$1$2');
  t.equal(markup.match(/<script/g)?.length, 1, 'one script, inline');
  t.notMatch(
    markup,
    /<script[^>]+src=|<link|<iframe|<object|<embed|<img|<video|@import|url\(/i,
    'nothing loaded from elsewhere: no script src, link, frame, media or style import',
  );
  const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
  t.match(
    policy,
    new RegExp(
      `^default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'; img-src ${origin}; media-src ${origin}; connect-src 'none'; base-uri 'none'; form-action 'none'$`,
    ),
    'its own policy: its script and style by hash, media of the origin, nothing else',
  );
  const missing = await client.readResource({ uri: 'ui://media-api/nothing.html' }).catch((e: Error) => e);
  t.match(String(missing), /-32602.*Resource not found: ui:\/\/media-api\/nothing\.html/);
  t.same((await client.listResourceTemplates()).resourceTemplates, [], 'resources/templates/list: part of the capability, none');
});

t.test('on 2026-07-28 (the SDK v2 client, no handshake) the same links, listing and page', async (t) => {
  const v2 = new ModernClient({ name: 'apps-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await v2.connect(new ModernTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ws.key}` } } }));
  t.teardown(() => v2.close());
  t.equal(v2.getNegotiatedProtocolVersion(), '2026-07-28');
  const tools = (await v2.listTools()).tools;
  for (const name of ['get_generation', 'get_video', 'get_slideshow', 'get_editor_video']) {
    t.same(tools.find((x) => x.name === name)!._meta, { ui: { resourceUri: PREVIEW_URI }, 'ui/resourceUri': PREVIEW_URI }, name);
  }
  const { resources } = await v2.listResources();
  t.match(resources, [{ uri: PREVIEW_URI, mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: { resourceDomains: [origin] } } } }]);
  const legacy = await client.readResource({ uri: PREVIEW_URI });
  const read = await v2.readResource({ uri: PREVIEW_URI });
  t.equal((read.contents[0] as { text: string }).text, (legacy.contents[0] as { text: string }).text, 'the page both revisions read');
  const missing = await v2.readResource({ uri: 'ui://media-api/nothing.html' }).catch((e: Error) => e);
  t.match(missing, { code: -32602, data: { uri: 'ui://media-api/nothing.html' } });
  const templates = await v2.listResourceTemplates();
  t.same(templates.resourceTemplates, [], 'resources/templates/list: none');
  t.match(templates, { ttlMs: Number, cacheScope: /^(public|private)$/ }, 'with its caching hints, as every 2026-07-28 list');
});

t.test('the slideshow: slides listed, the carousel video plays, the title stays text', async (t) => {
  t.equal(slideshow.status, 'completed', JSON.stringify(slideshow.error));
  const { shown, frame } = await preview('get_slideshow', { id: slideshow.id });
  t.match(shown, { uri: PREVIEW_URI, mimeType: 'text/html;profile=mcp-app', csp: { resourceDomains: [origin] } });
  const slides = frame.getByRole('list', { name: 'Slides' }).getByRole('listitem');
  await slides.first().waitFor();
  t.equal(await slides.count(), 3, 'three slides listed');
  const loaded = (await frame.evaluate(
    `Promise.all([...document.querySelectorAll('.gallery img')].map((i) => i.decode().then(() => i.naturalWidth, () => 0)))`,
  )) as number[];
  t.equal(loaded.length, 3);
  t.ok(
    loaded.every((w) => w > 0),
    `every slide image loaded (${loaded.join(', ')})`,
  );
  t.equal(await frame.getByRole('heading', { level: 1 }).textContent(), TITLE, 'the title as text');
  t.equal(await frame.evaluate(`document.querySelectorAll('h1 *').length`), 0, 'no element made of it');
  t.equal(await page.evaluate('window.pwned'), undefined);

  const video = frame.locator('video');
  await video.waitFor();
  t.equal(await video.getAttribute('aria-label'), 'Carousel video');
  const state = await plays(frame, 0.5);
  t.ok(state.readyState >= 2, `the video has data (readyState ${state.readyState})`);
  t.ok(state.time > 0.5, `it plays (currentTime ${state.time})`);
  t.equal(state.error, null);
  t.ok(state.width > 0, 'frames decoded');
});

t.test('get_video: the player plays a faceless video', async (t) => {
  t.equal(faceless.status, 'completed', JSON.stringify(faceless.error));
  const { frame } = await preview('get_video', { id: faceless.id });
  const state = await plays(frame, 0.5);
  t.ok(state.readyState >= 2 && state.time > 0.5 && state.width > 0, `it plays (${JSON.stringify(state)})`);
  t.equal(await frame.getByRole('heading', { level: 1 }).textContent(), faceless.title || `Video ${faceless.id}`);
});

t.test('get_video of an editor project points at its timeline', async (t) => {
  const { frame } = await preview('get_video', { id: slideshow.video_id });
  await frame.getByText('get_editor_video').waitFor();
  t.equal(await frame.locator('video').count(), 0);
});

t.test('get_generation: the image in a gallery', async (t) => {
  t.equal(generation.status, 'completed', JSON.stringify(generation.error));
  const { frame } = await preview('get_generation', { id: generation.id });
  const images = frame.getByRole('list', { name: 'Generated image' }).getByRole('img');
  await images.first().waitFor();
  t.equal(await images.count(), 1);
  const width = await frame.evaluate(
    `document.querySelector('.gallery img').decode().then(() => document.querySelector('.gallery img').naturalWidth)`,
  );
  t.equal(width, generation.output.width, 'the image loaded at its size');
});

t.test('get_editor_video: the timeline, read-only', async (t) => {
  const project = (await client.callTool({ name: 'get_editor_video', arguments: { id: slideshow.video_id } })).structuredContent as any;
  const { frame } = await preview('get_editor_video', { id: slideshow.video_id });
  const timeline = frame.getByRole('list', { name: 'Timeline (read-only)' });
  await timeline.waitFor();
  t.equal(await timeline.locator('.track').count(), project.tracks.length, 'one lane per track');
  t.equal(await timeline.locator('.item').count(), project.items.length, 'every item placed');
  t.equal(await frame.locator('input, button, [contenteditable]').count(), 0, 'nothing to edit');
});

t.test('a media URL of another origin is not shown and not requested', async (t) => {
  const foreign = {
    content: [],
    structuredContent: { object: 'video', id: 1, status: 'completed', title: 'x', url: 'https://media.example.test/v.mp4' },
  };
  const { frame } = await preview('get_video', { id: 1 }, foreign);
  await frame.getByText('not served from this service').waitFor();
  t.equal(await frame.locator('video').count(), 0);
});

t.test('nothing left the origin and no CSP violation', async (t) => {
  t.same(offOrigin, [], 'no request off the origin');
  t.ok(
    requested.some((u) => u.startsWith(`${origin}/media/`)),
    'the media came from the origin',
  );
  t.same(problems, [], 'no CSP violation, no error');
});

t.test('the violation detector works: a fetch from the view is refused and reported', async (t) => {
  const frame = await (await page.waitForSelector('iframe#preview')).contentFrame();
  const outcome = await frame!.evaluate(`fetch('${origin}/mcp').then(() => 'fetched', () => 'refused')`);
  t.equal(outcome, 'refused', 'connect-src none');
  await new Promise((r) => setTimeout(r, 200));
  t.ok(
    problems.some((p) => /CSP violation: connect-src/.test(p)),
    problems.join('\n'),
  );
});
