// DNS-rebinding protection of /mcp (MCP Streamable HTTP transport, Security warning: a server
// must validate the Origin header, and should check the Host). A page of another site whose name
// was made to resolve to this server sends that name as Host and its own origin as Origin; both
// are checked before anything else (the bearer token included), for every method of /mcp:
//   Host    its name (the port is not compared, as in the SDK's hostHeaderValidation) must be
//           PUBLIC_BASE_URL's, one of MCP_ALLOWED_HOSTS, or the address the connection came to
//           (an IP address, which rebinding cannot produce) and `localhost` when that address is a
//           loopback one (so the service answers on 127.0.0.1:PORT and localhost:PORT, and a proxy
//           that forwards to the listening address as Host keeps working);
//   Origin  when sent, exactly PUBLIC_BASE_URL's origin or one of MCP_ALLOWED_ORIGINS (`null`,
//           the origin of sandboxed and file pages, never).
// With TRUST_PROXY set, the Host is the X-Forwarded-Host the trusted proxy passed on (Fastify's
// request.host). Refused requests get 403 and a JSON-RPC error with id null, as the SDK transport's
// allowedHosts/allowedOrigins check answered.
import type { FastifyRequest } from 'fastify';
import { hostNameOf, type Config } from '../config.ts';

export interface RebindingRules {
  /** Host names (lower case, no port, no trailing dot; IPv6 in brackets). */
  hosts: ReadonlySet<string>;
  /** Serialised origins, as browsers send them. */
  origins: ReadonlySet<string>;
}

export function rebindingRules(config: Pick<Config, 'publicBaseUrl' | 'mcpAllowedHosts' | 'mcpAllowedOrigins'>): RebindingRules {
  const base = new URL(config.publicBaseUrl);
  return {
    hosts: new Set([base.hostname.replace(/\.$/, ''), ...config.mcpAllowedHosts]),
    origins: new Set([base.origin, ...config.mcpAllowedOrigins]),
  };
}

/** The names a client reaching `address` (the socket's local address) may give as Host. */
function localNames(address: string | undefined): string[] {
  if (!address) return [];
  const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
  const name = hostNameOf(ip.includes(':') ? `[${ip}]` : ip);
  if (!name) return [];
  return ip.startsWith('127.') || name === '[::1]' ? [name, 'localhost'] : [name];
}

/** Why the request's Host or Origin is refused, or undefined when both are this server's. */
export function rebindingProblem(rules: RebindingRules, req: FastifyRequest): string | undefined {
  const host = req.host;
  if (!host) return 'Missing Host header';
  // The name: an IPv6 address in brackets or everything before the port.
  const name = hostNameOf(/^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec(host)?.[1] ?? '');
  if (!name || !(rules.hosts.has(name) || localNames(req.socket.localAddress).includes(name))) return `Invalid Host header: ${host}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !rules.origins.has(origin)) return `Invalid Origin header: ${origin}`;
  return undefined;
}
