// A minimal MCP Apps host page for test/mcp/apps.test.ts (browser code, bundled with esbuild by the
// test): it speaks MCP to /mcp of its own origin with fetch, finds the tool's `ui://` resource in
// tools/list, reads it, renders it as a host should — in a sandboxed frame (scripts only, an
// opaque origin) under the CSP the resource declares — and hands the view the tool input and
// result through the ext-apps host side (AppBridge over PostMessageTransport).
import { AppBridge, getToolUiResourceUri, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const KEY = new URLSearchParams(location.hash.slice(1)).get('key');
let nextId = 0;

async function rpc(method, params) {
  const res = await fetch('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${KEY}`,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

const init = rpc('initialize', {
  protocolVersion: '2025-11-25',
  capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
  clientInfo: { name: 'apps-test-host', version: '1.0.0' },
});

/** The frame's policy from the resource's declared csp, as the extension maps it (none declared: nothing from the network). */
function frameCsp(csp = {}) {
  const resources = (csp.resourceDomains ?? []).join(' ');
  const connect = (csp.connectDomains ?? []).join(' ') || "'none'";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `media-src data: ${resources}`,
    `font-src ${resources || "'none'"}`,
    `connect-src ${connect}`,
    "frame-src 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const escapeAttribute = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** Calls `tool`, renders its preview and hands it the result (or `override`, a result of the host's own). */
async function showPreview(tool, args, override) {
  await init;
  const listed = (await rpc('tools/list', {})).tools.find((t) => t.name === tool);
  const uri = getToolUiResourceUri(listed);
  if (!uri) throw new Error(`${tool} links no ui:// resource`);
  const content = (await rpc('resources/read', { uri })).contents[0];
  const result = override ?? (await rpc('tools/call', { name: tool, arguments: args }));

  document.getElementById('preview')?.remove();
  const frame = document.createElement('iframe');
  frame.id = 'preview';
  frame.title = 'Preview';
  frame.sandbox = 'allow-scripts';
  frame.width = '640';
  frame.height = '900';
  const policy = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(frameCsp(content._meta?.ui?.csp))}">`;
  frame.srcdoc = content.text.replace(/<head>/i, `<head>${policy}`);
  document.body.append(frame);

  const bridge = new AppBridge(null, { name: 'apps-test-host', version: '1.0.0' }, {});
  const ready = new Promise((resolve) => {
    bridge.oninitialized = async () => {
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result);
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  await ready;
  return { uri, mimeType: content.mimeType, csp: content._meta?.ui?.csp, result };
}

window.showPreview = showPreview;
