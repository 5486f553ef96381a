// Inline previews (MCP Apps, the io.modelcontextprotocol/ui extension of @modelcontextprotocol/ext-apps):
// one `ui://` resource, a self-contained HTML page that shows the record a tool returns — a player
// for videos, a gallery for images and slides, the editor timeline (read-only) — linked from the
// tools that read those records through their `_meta.ui.resourceUri` (and the older
// `_meta["ui/resourceUri"]` key), as the extension specifies. The host reads the resource, renders
// it in a sandboxed frame and hands it the tool result.
//
// The page needs nothing from anywhere else: the ext-apps App class (its dependency-free bundle),
// the view (./apps/view.js) and its style (./apps/view.css) are inline; the media it shows are the
// signed /media URLs of this service. Its policy is strict twice over: the resource declares the
// media origin as its only resource domain and no connect domain (hosts build the frame's CSP from
// that), and the page carries its own CSP meta allowing only its own script and style (by hash),
// images and media from the media origin, and nothing else.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import { ResourceNotFoundError, type Resource, type Server } from '@modelcontextprotocol/server';

export const PREVIEW_URI = 'ui://media-api/preview.html';

/** The tools whose results the preview shows. */
const PREVIEW_TOOLS = new Set(['get_generation', 'get_video', 'get_slideshow', 'get_editor_video']);

/** What a tool of tools/list carries to link its preview (nothing for other tools). */
export function uiToolMeta(tool: string): { _meta?: Record<string, unknown> } {
  if (!PREVIEW_TOOLS.has(tool)) return {};
  return { _meta: { ui: { resourceUri: PREVIEW_URI }, [RESOURCE_URI_META_KEY]: PREVIEW_URI } };
}

const read = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');

/**
 * The ext-apps App class as inline module code: its browser bundle with every dependency
 * (app-with-deps.js), whose closing `export {…}` becomes a binding of the App class. Zod (inside
 * the bundle) is told to compile no code before the bundle runs: the App constructor says so too,
 * but the bundle builds its schemas first, and each one probes `new Function` (a CSP violation
 * under a policy without 'unsafe-eval') unless zod's shared config already has `jitless`.
 */
function appClassSource(): string {
  const file = createRequire(import.meta.url).resolve('@modelcontextprotocol/ext-apps/app-with-deps');
  const bundle = readFileSync(file, 'utf8');
  const exports = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(bundle);
  const local = exports && /(?:^|,)\s*([\w$]+)\s+as\s+App\s*(?:,|$)/.exec(exports[1])?.[1];
  if (!exports || !local) throw new Error(`${file}: no "export {… as App}" at its end`);
  return `globalThis.__zod_globalConfig = { jitless: true };\n${bundle.slice(0, exports.index)}\nconst McpApp = ${local};\n`;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page for media served from `mediaOrigin` (the origin of PUBLIC_BASE_URL). */
function previewHtml(mediaOrigin: string): string {
  const script = `${appClassSource()}${read('./apps/view.js')}`;
  const style = read('./apps/view.css');
  // Inline text ends at the first closing tag of its element.
  if (/<\/script|<!--/i.test(script) || /<\/style/i.test(style)) throw new Error('the preview script or style closes its element');
  const origin = escapeAttribute(mediaOrigin);
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    `img-src ${origin}`,
    `media-src ${origin}`,
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    `<meta name="media-origin" content="${origin}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Media preview</title>',
    `<style>${style}</style>`,
    '</head>',
    '<body>',
    '<main id="view" aria-live="polite"><p>Waiting for the result…</p></main>',
    `<script type="module">${script}</script>`,
    '</body>',
    '</html>',
  ].join('\n');
}

/** The resource's UI metadata: the frame's policy (the media origin only) and no extra permission. */
const uiMeta = (mediaOrigin: string) => ({ ui: { csp: { resourceDomains: [mediaOrigin], connectDomains: [] }, prefersBorder: true } });

const pages = new Map<string, string>();

function previewResource(publicBaseUrl: string): Resource {
  return {
    uri: PREVIEW_URI,
    name: 'media-preview',
    title: 'Media preview',
    description: 'Inline preview of get_video, get_generation, get_slideshow and get_editor_video results (MCP Apps).',
    mimeType: RESOURCE_MIME_TYPE,
    _meta: uiMeta(new URL(publicBaseUrl).origin),
  };
}

/** resources/read of the preview (its HTML built once per media origin). */
function readPreview(publicBaseUrl: string) {
  const origin = new URL(publicBaseUrl).origin;
  let text = pages.get(origin);
  if (!text) pages.set(origin, (text = previewHtml(origin)));
  return { contents: [{ uri: PREVIEW_URI, mimeType: RESOURCE_MIME_TYPE, text, _meta: uiMeta(origin) }] };
}

/**
 * Declares the resources capability on a per-request SDK Server and answers resources/list,
 * resources/templates/list (part of the capability: no templates here, the preview's URI is fixed)
 * and resources/read, on every revision the Server speaks. Another URI is the SDK's
 * resource-not-found error (ResourceNotFoundError: -32602 with `data.uri` on every revision, as
 * 2026-07-28 requires).
 */
export function registerPreviewResources(server: Server, publicBaseUrl: string): void {
  server.registerCapabilities({ resources: { listChanged: false } });
  server.setRequestHandler('resources/list', () => ({ resources: [previewResource(publicBaseUrl)] }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', (request) => {
    if (request.params.uri !== PREVIEW_URI) throw new ResourceNotFoundError(request.params.uri);
    return readPreview(publicBaseUrl);
  });
}
