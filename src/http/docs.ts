// GET /docs: the API reference for people, rendered in the browser by Scalar
// (@scalar/fastify-api-reference) from the very document the service serves at
// /api/v1/openapi.json (absolute server URL from PUBLIC_BASE_URL, so "Test request" calls this
// deployment). At the service root like the health probes: a page, not an API resource, and
// outside the contract like /mcp and the OAuth pages.
//
// Everything the page loads comes from this server: the plugin serves Scalar's bundled script at
// /docs/js/scalar.js (its `cdn` option left unset, so the HTML's <script src> is that relative
// path and never jsDelivr), the default web fonts are turned off (they come from fonts.scalar.com),
// and so are telemetry, the developer toolbar and the "Ask AI"/MCP extras (Scalar's services).
// The Content-Security-Policy makes that a rule the browser enforces:
//   default-src 'none'            nothing that is not allowed below
//   script-src 'self' 'sha256-…'  the bundled script, and the page's one inline start-up script by
//                                 its hash (no 'unsafe-inline', no 'unsafe-eval': Scalar needs neither)
//   style-src 'self' 'unsafe-inline'  Scalar injects its stylesheet as a <style> element and its
//                                 components set style attributes (a nonce cannot cover attributes)
//   img-src 'self' data:, font-src 'self' data:  icons and images inlined in the bundle
//   connect-src 'self' <PUBLIC_BASE_URL's origin>  the document, and "Test request" calls
//   base-uri/form-action 'none', frame-ancestors 'none'
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';

export const DOCS_PREFIX = '/docs';

/** The `sha256-…` CSP sources of the inline scripts of an HTML page. */
function inlineScriptHashes(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)) {
    out.push(`'sha256-${createHash('sha256').update(m[1], 'utf8').digest('base64')}'`);
  }
  return out;
}

export function docsPolicy(html: string, publicBaseUrl: string): string {
  const api = new URL(publicBaseUrl).origin;
  return [
    "default-src 'none'",
    `script-src 'self' ${inlineScriptHashes(html).join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${api}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function registerDocs(app: FastifyInstance, ctx: AppContext, openApiUrl: string): void {
  app.register(async (scope) => {
    // The page is the same for every request: its policy is computed once, from its inline script.
    let policy: { html: string; value: string } | undefined;
    scope.addHook('onSend', async (req, reply, payload) => {
      const type = String(reply.getHeader('content-type') ?? '');
      if (type.startsWith('text/html') && typeof payload === 'string') {
        if (policy?.html !== payload) policy = { html: payload, value: docsPolicy(payload, ctx.config.publicBaseUrl) };
        reply.header('content-security-policy', policy.value);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
        reply.header('cache-control', 'no-cache');
      } else if (req.url.split('?')[0].endsWith('/js/scalar.js')) {
        reply.header('cache-control', 'public, max-age=3600');
        reply.header('x-content-type-options', 'nosniff');
      }
      return payload;
    });
    // Scalar's plugin carries its whole browser bundle (several MB) as a string in its own module:
    // loading it cost every process about 0.2 s of CPU at start-up, API nodes, workers and CLI runs
    // alike, for a page few requests ask for. So it is loaded on the first request for the page,
    // into a Fastify instance of its own (same router options), and the page's requests are handed
    // to it; anything it does not serve is this app's 404.
    let pages: Promise<FastifyInstance> | undefined;
    const forward = async (req: FastifyRequest, reply: FastifyReply) => {
      pages ??= docsPages(openApiUrl).catch((err) => {
        pages = undefined;
        throw err;
      });
      const res = await (await pages).inject({
        method: req.method as 'GET' | 'HEAD',
        url: req.url,
        headers: { host: req.headers.host ?? 'localhost' },
      });
      if (res.statusCode === 404) return reply.callNotFound();
      reply.code(res.statusCode);
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
      // Text as a string: the policy hook above reads the page's inline script from it.
      return reply.send(String(res.headers['content-type'] ?? '').startsWith('text/') ? res.body : res.rawPayload);
    };
    scope.get(`${DOCS_PREFIX}/`, { logLevel: 'warn' }, forward);
    scope.get(`${DOCS_PREFIX}/js/scalar.js`, { logLevel: 'warn' }, forward);
  });
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

async function docsPages(openApiUrl: string): Promise<FastifyInstance> {
  const { default: fastifyApiReference } = await import('@scalar/fastify-api-reference');
  const pages = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  await pages.register(fastifyApiReference, {
    routePrefix: DOCS_PREFIX,
    configuration: {
      url: openApiUrl,
      pageTitle: 'Media Generation and Editing API reference',
      withDefaultFonts: false,
      telemetry: false,
      showDeveloperTools: 'never',
      mcp: { disabled: true },
      agent: { disabled: true },
      // Every operation listed in the sidebar from the start, not only the first tag's.
      defaultOpenAllTags: true,
    },
  });
  await pages.ready();
  return pages;
}
