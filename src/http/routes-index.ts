// Which methods a path answers to, for the 405 of a known path asked with a wrong method.
// Every route the app registers (the spec's operations, /mcp, OAuth, media) is recorded by an
// onRoute hook; the not-found handler asks this index before answering 404.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

interface Pattern {
  re: RegExp;
  methods: Set<string>;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A Fastify route URL (`/api/v1/editor/videos/:id`, `/preview/voices/:id.wav`, `/media/*`) as a regular expression. */
function toRegExp(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((segment) =>
      segment
        .split(/(:[A-Za-z0-9_]+|\*)/)
        .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : escapeRe(part)))
        .join(''),
    )
    .join('/');
  return new RegExp(`^${body}/?$`);
}

export interface RoutesIndex {
  /** The methods (with HEAD where GET is) of the routes matching `pathname`, sorted; empty when none. */
  allowed(pathname: string): string[];
}

/** Records every route registered on `app` from now on (call before any route is added). */
export function indexRoutes(app: FastifyInstance): RoutesIndex {
  const patterns = new Map<string, Pattern>();
  app.addHook('onRoute', (route) => {
    // The CORS preflight answers OPTIONS on every path: not a sign that a path exists.
    if (route.url === '*' || route.url === '/*') return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'OPTIONS');
    if (!methods.length) return;
    let p = patterns.get(route.url);
    if (!p) patterns.set(route.url, (p = { re: toRegExp(route.url), methods: new Set() }));
    for (const m of methods) p.methods.add(m);
    if (p.methods.has('GET')) p.methods.add('HEAD');
  });
  return {
    allowed(pathname) {
      const out = new Set<string>();
      for (const p of patterns.values()) if (p.re.test(pathname)) for (const m of p.methods) out.add(m);
      return [...out].sort();
    },
  };
}

/** The error for a request no route answers: 405 with Allow when the path exists with other methods, else 404. */
export function noRouteError(index: RoutesIndex, method: string, url: string): ApiError {
  const pathname = url.split('?')[0];
  const allowed = index.allowed(pathname);
  if (allowed.length && !allowed.includes(method)) {
    return new ApiError(
      'method_not_allowed',
      `${method} is not allowed on ${pathname}; use ${allowed.join(', ')}`,
      { method, path: pathname, allowed_methods: allowed },
      { allow: allowed.join(', ') },
    );
  }
  return new ApiError('not_found', `No route ${method} ${pathname}`, { resource: 'route', field: 'path', method, path: pathname });
}
