// Answers of the one MCP tool whose answer is the same for every caller and constant for the life
// of the process: list_generation_catalog (the catalog is serialised once per process, as its REST
// GET is: src/operations/catalog.ts). The SDK serialises its 40 KB answer for every call (most of
// the call's cost); an identical request (the same revision, the same headers the SDK reads, the
// same params, the JSON-RPC id aside) is answered with the bytes the SDK answered the first time,
// the id put back. Only a 200 JSON answer that ends with its id is kept; anything else (a refusal,
// an error, an event stream) is answered by the SDK every time. The caller is authenticated, its
// scopes and the request's Host and Origin checked, before the cache is consulted, as before the SDK.
import type { FastifyRequest } from 'fastify';

/** The tool whose answers are kept. */
export const CACHED_TOOL = 'list_generation_catalog';
/** Distinct requests kept (clients differ by their 2026-07-28 envelope): least recently used first out. */
const MAX_ENTRIES = 256;
/** The request headers the SDK's answer depends on. */
const KEY_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'accept', 'content-type'];

interface Kept {
  status: number;
  headers: [string, string][];
  /** The answer up to its id (`…,"id":`); the id and the closing brace follow. */
  head: Buffer;
}

export interface CachedAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

const kept = new Map<string, Kept>();

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown } };

/** The cache key of a request that may be answered from the cache, with its id; undefined for any other. */
export function cacheKey(req: FastifyRequest): { key: string; id: string | number } | undefined {
  const body = req.body as Message | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body) || body.method !== 'tools/call' || body.params?.name !== CACHED_TOOL)
    return undefined;
  const { id, ...rest } = body;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const headers = KEY_HEADERS.map((h) => String(req.headers[h] ?? '')).join('\n');
  return { key: `${headers}\n${JSON.stringify(rest)}`, id };
}

const withId = (id: string | number) => Buffer.from(`${JSON.stringify(id)}}`);

/** The kept answer of the request, with its own id. */
export function cachedAnswer(key: string, id: string | number): CachedAnswer | undefined {
  const hit = kept.get(key);
  if (!hit) return undefined;
  kept.delete(key);
  kept.set(key, hit); // most recently used last
  return { status: hit.status, headers: hit.headers, body: Buffer.concat([hit.head, withId(id)]) };
}

/** Keeps a 200 JSON answer of the request that ends with its id. */
export function keepAnswer(key: string, id: string | number, status: number, headers: Headers, body: Buffer): void {
  if (status !== 200 || !headers.get('content-type')?.startsWith('application/json')) return;
  const tail = withId(id);
  const idAt = body.length - tail.length;
  if (idAt <= 0 || !body.subarray(idAt).equals(tail) || !body.subarray(0, idAt).toString('latin1').endsWith('"id":')) return;
  // A tool error (an isError result) is answered afresh every time.
  if (body.includes('"isError":true')) return;
  if (kept.size >= MAX_ENTRIES) kept.delete(kept.keys().next().value as string);
  // The length is the new answer's own (ids differ in length).
  const keptHeaders = [...headers].filter(([name]) => name !== 'content-length');
  kept.set(key, { status, headers: keptHeaders, head: Buffer.from(body.subarray(0, idAt)) });
}
