// The published contract: GET /openapi.json, and the agent instructions GET /skill.md with the
// area pages it links (GET /skill/{area}.md), all compiled from the spec.
import { readdirSync, readFileSync } from 'node:fs';
import { notFound } from '../errors.ts';
import { defineHandlers, Reply } from '../handlers.ts';

const generated = new URL('../../generated/', import.meta.url);
const openapiJson = readFileSync(new URL('openapi.json', generated), 'utf8');
const skillMd = readFileSync(new URL('skill.md', generated));
/** The area pages by area (generated/skill-<area>.md); none when the whole contract fits skill.md. */
const skillPages = new Map(
  readdirSync(generated)
    .map((file) => /^skill-([a-z0-9-]+)\.md$/.exec(file))
    .filter((m) => m !== null)
    .map((m) => [m[1], readFileSync(new URL(m[0], generated))]),
);
const markdown = (body: Buffer) =>
  new Reply({ body, raw: true, contentType: 'text/markdown; charset=utf-8', headers: { 'cache-control': 'public, max-age=300' } });

type Server = { url: string; [k: string]: unknown };

/**
 * The document as served: every `servers` entry (the document's and the health probes' own)
 * made absolute against the deployment's PUBLIC_BASE_URL, so generated clients default to a base
 * URL that works (`https://api.example.com/api/v1`). The file in spec/ keeps its relative URLs.
 */
export function servedOpenApi(publicBaseUrl: string): Buffer {
  const doc = JSON.parse(openapiJson) as { servers?: Server[]; paths?: Record<string, { servers?: Server[] } & Record<string, unknown>> };
  const absolute = (servers: Server[] | undefined) =>
    servers?.map((s) =>
      /^[a-z][a-z0-9+.-]*:/i.test(s.url) ? s : { ...s, url: `${publicBaseUrl}${s.url === '/' ? '' : s.url.replace(/\/$/, '')}` },
    );
  doc.servers = absolute(doc.servers);
  for (const item of Object.values(doc.paths ?? {})) {
    if (item.servers) item.servers = absolute(item.servers);
    for (const op of Object.values(item)) {
      if (op && typeof op === 'object' && 'servers' in op)
        (op as { servers?: Server[] }).servers = absolute((op as { servers?: Server[] }).servers);
    }
  }
  return Buffer.from(JSON.stringify(doc));
}

/** One served document per base URL (a process has one): built on first use, then reused. */
const served = new Map<string, Buffer>();

export const handlers = defineHandlers({
  getOpenApiDocument: ({ ctx }) => {
    const base = ctx.config.publicBaseUrl;
    let body = served.get(base);
    if (!body) served.set(base, (body = servedOpenApi(base)));
    return new Reply({ body, raw: true, headers: { 'cache-control': 'public, max-age=300' } });
  },
  getSkill: () => markdown(skillMd),
  getSkillPage: ({ path }) => {
    const page = skillPages.get(path.area);
    if (!page) throw notFound('Agent instructions page', path.area, 'route', 'path.area');
    return markdown(page);
  },
});
