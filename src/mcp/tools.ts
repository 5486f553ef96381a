// The MCP tool table (generated/mcp-tools.json, derived from the spec by `npm run generate`) and
// the one way a tool call runs: every tool becomes an OperationCall for the one executor. A
// REST-derived tool calls its operation (arguments split back into path, query, header and body
// by the table's routes); an MCP-only tool calls its own entry of the operation index (its
// arguments are the body). ApiErrors become tool results with `isError: true` and the envelope as
// structured content, never protocol errors; its fields are named as the tool's arguments
// (`prompt`, `id`, `idempotency_key`), not as REST locations (`body.prompt`).
import { isUtf8 } from 'node:buffer';
import type { CallToolResult, ResourceLink, Tool } from '@modelcontextprotocol/server';
import toolsJson from '../../generated/mcp-tools.json' with { type: 'json' };
import type { Logger } from '../context.ts';
import { ApiError } from '../errors.ts';
import { entriesById, operationsById, type Executor, type OperationCall } from '../operations/executor.ts';
import type { McpToolRow } from '../operations/operation-index.ts';
import type { Reply } from '../handlers.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/outage.ts';
import { mcpToolCalls } from '../metrics.ts';
import { uiToolMeta } from './apps.ts';

export type { McpToolRow };

export const MCP_TOOLS: McpToolRow[] = (toolsJson as unknown as { tools: McpToolRow[] }).tools;
export const TOOLS_BY_NAME = new Map(MCP_TOOLS.map((t) => [t.name, t]));

/** What tools/list answers: the same objects every time (the preview tools link their ui:// resource, ./apps.ts). */
export const LISTED_TOOLS: Tool[] = MCP_TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
  annotations: t.annotations,
  ...uiToolMeta(t.name),
}));

/** Whether `scopes` may call the tool (any one of its scopes; none needed for public tools). */
export const toolAllowed = (tool: McpToolRow, scopes: string[]) => tool.scopes.length === 0 || tool.scopes.some((s) => scopes.includes(s));

/** Tool arguments → the call of the executor: an MCP-only tool's entry, or the REST operation's path, query, headers and body. */
export function toOperationCall(tool: McpToolRow, args: Record<string, unknown>, auth: AuthContext): OperationCall {
  if (tool.operationId === null) {
    if (!entriesById.has(tool.name)) throw new Error(`MCP-only tool ${tool.name} is not in the operation index`);
    // Validated in place (defaults filled in): a copy, so the message the client sent is left as it was.
    return {
      operationId: tool.name,
      authorization: undefined,
      auth,
      path: {},
      query: {},
      headers: {},
      body: { ...args },
      contentType: 'application/json',
    };
  }
  const op = operationsById.get(tool.operationId);
  if (!op) throw new Error(`MCP tool ${tool.name} names unknown operation ${tool.operationId}`);
  const path: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  const headers: Record<string, unknown> = {};
  let body: Record<string, unknown> | undefined;
  let whole: unknown;
  for (const [k, v] of Object.entries({ ...args, ...tool.fixed })) {
    if (v === undefined) continue;
    const route = tool.routes[k];
    if (route === 'path') path[k] = v;
    else if (route === 'query') query[k] = v;
    else if (route === 'body') (body ??= {})[k] = v;
    else if (route === 'body:whole') whole = v;
    else if (route?.startsWith('header:')) headers[route.slice('header:'.length).toLowerCase()] = v;
    // Unknown arguments are refused as unknown fields, as REST refuses them.
    else if (op.requestBody) (body ??= {})[k] = v;
    else query[k] = v;
  }
  const hasBody = op.requestBody !== null;
  return {
    operationId: op.operationId,
    authorization: undefined,
    auth,
    path,
    query,
    headers,
    body: hasBody ? (whole ?? body ?? {}) : undefined,
    contentType: hasBody ? 'application/json' : undefined,
  };
}

/** A pre-serialised JSON reply: its value (deep-frozen) and, when they are valid UTF-8, its bytes. */
export interface JsonBytes {
  value: unknown;
  bytes: Buffer | undefined;
}

function deepFreeze<T>(x: T): T {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

// Pre-serialised JSON replies (the catalog) are parsed once per distinct content: the last one is
// kept as a private copy of its bytes and compared byte for byte with each new reply, so a reply
// with other content is parsed afresh, never answered from this copy.
let last: { text: string | undefined; bytes: Buffer | undefined; parsed: JsonBytes } | undefined;

function parseJsonReply(body: unknown): JsonBytes {
  if (typeof body === 'string') {
    if (last?.text === body) return last.parsed;
    const bytes = body.isWellFormed() ? Buffer.from(body, 'utf8') : undefined;
    const parsed = { value: deepFreeze(JSON.parse(body)), bytes };
    last = { text: body, bytes, parsed };
    return parsed;
  }
  const buf = body as Buffer;
  if (last?.bytes?.equals(buf)) return last.parsed;
  const copy = Buffer.from(buf);
  const parsed = { value: deepFreeze(JSON.parse(copy.toString('utf8'))), bytes: isUtf8(copy) ? copy : undefined };
  last = { text: undefined, bytes: parsed.bytes, parsed };
  return parsed;
}

/** The reply's body as a value, with its JSON bytes when the executor pre-serialised it. */
function replyBody(out: Reply): JsonBytes {
  if (!out.raw) return { value: out.body, bytes: undefined };
  if (!/json/.test(out.contentType))
    return { value: Buffer.isBuffer(out.body) ? out.body.toString('utf8') : String(out.body), bytes: undefined };
  return parseJsonReply(out.body);
}

const SUMMARY_FIELDS = ['id', 'status', 'url', 'credits_deducted', 'remaining_credits', 'credits', 'plan', 'idempotent_replay'];

/** A short text for clients that show text only: kind, id, status, counts, credits, URL. */
export function summarize(tool: string, body: unknown): string {
  if (body === null || typeof body !== 'object') return `${tool}: ${String(body).slice(0, 500)}`;
  const b = body as Record<string, unknown>;
  let text = '';
  const add = (part: string) => (text = text === '' ? part : `${text}; ${part}`);
  if (typeof b.object === 'string') add(b.object);
  for (const k of SUMMARY_FIELDS) {
    const v = b[k];
    if (v !== undefined && v !== null && typeof v !== 'object') add(`${k} ${String(v).slice(0, 300)}`);
  }
  for (const k of Object.keys(b)) {
    const v = b[k];
    if (!Array.isArray(v)) continue;
    // The id (else slug) of the first five items, as Array#join writes them.
    let ids = '';
    let n = 0;
    for (let i = 0; i < v.length && i < 5; i++) {
      const x = v[i];
      const id = x && typeof x === 'object' ? ((x as Record<string, unknown>).id ?? (x as Record<string, unknown>).slug) : undefined;
      if (id === undefined) continue;
      const s = id === null ? '' : String(id);
      ids = n === 0 ? s : `${ids}, ${s}`;
      n++;
    }
    add(`${v.length} ${k}${n ? ` (${ids}${v.length > n ? ', …' : ''})` : ''}`);
  }
  return `${tool}: ${text || 'done'}. Full result in structuredContent.`;
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Each value at `segments` (`slides[]` is every item of `slides`), with the object holding it and its path. */
function visitPath(node: unknown, segments: string[], at: string, each: (holder: Obj, value: unknown, path: string) => void): void {
  if (!isObj(node)) return;
  const [segment, ...rest] = segments;
  const many = segment.endsWith('[]');
  const key = many ? segment.slice(0, -2) : segment;
  const value = node[key];
  if (!many) {
    if (rest.length === 0) each(node, value, `${at}${key}`);
    else visitPath(value, rest, `${at}${key}.`, each);
    return;
  }
  if (!Array.isArray(value)) return;
  value.forEach((item, i) => {
    if (rest.length === 0) each(node, item, `${at}${key}[${i}]`);
    else visitPath(item, rest, `${at}${key}[${i}].`, each);
  });
}

/**
 * The result's media (the tool's `media` fields, spec `x-mcp-media`) as resource_link content
 * items: the signed URL, a name (the record's kind and id, and the field) and the MIME type.
 */
export function mediaLinks(tool: McpToolRow, body: Obj): ResourceLink[] {
  const links: ResourceLink[] = [];
  for (const field of tool.media) {
    visitPath(body, field.path.split('.'), '', (holder, url, path) => {
      if (typeof url !== 'string' || url === '') return;
      let mimeType = field.mimeType;
      if (field.mimeTypeField)
        visitPath(holder, field.mimeTypeField.split('.'), '', (_h, v) => {
          if (typeof v === 'string') mimeType = v;
        });
      const kind = holder.object ?? body.object ?? tool.name;
      const id = holder.id ?? body.id;
      const name = [kind, id, path].filter((x) => typeof x === 'string' || typeof x === 'number').join(' ');
      links.push({ type: 'resource_link', uri: url, name, ...(mimeType ? { mimeType } : {}) });
    });
  }
  return links;
}

export function successResult(tool: McpToolRow, body: unknown): CallToolResult {
  const text = summarize(tool.name, body);
  if (!isObj(body)) return { content: [{ type: 'text', text }] };
  return { content: [{ type: 'text', text }, ...mediaLinks(tool, body)], structuredContent: body };
}

/**
 * A field as the executor names it (`body.prompt`, `body.operations[2].item_id`, `path.id`,
 * `query.limit`, `header.idempotency-key`, an MCP-only tool's `arguments.script`) → as the tool's
 * caller named it: the argument (`prompt`, `operations[2].item_id`, `id`, `limit`,
 * `idempotency_key`, `script`). A whole-body argument keeps its name (`body.x`); the whole call is
 * `arguments`. Anything else is left as it is.
 */
export function toolFieldName(tool: McpToolRow, field: string): string {
  const m = /^(body|path|query|header|arguments)(?:\.(.+))?$/s.exec(field);
  if (!m) return field;
  const [, where, rest] = m;
  if (where === 'header') {
    if (rest === undefined) return field;
    const name = /^[^.[]+/.exec(rest)![0];
    const arg = Object.entries(tool.routes).find(
      ([, r]) => r.startsWith('header:') && r.slice('header:'.length).toLowerCase() === name.toLowerCase(),
    )?.[0];
    return `${arg ?? name.toLowerCase().replace(/-/g, '_')}${rest.slice(name.length)}`;
  }
  if (where === 'body') {
    const whole = Object.entries(tool.routes).find(([, r]) => r === 'body:whole')?.[0];
    if (whole) return rest === undefined ? whole : `${whole}.${rest}`;
  }
  return rest ?? 'arguments';
}

/** The envelope of an error with every field named as the tool's arguments (context.field, context.errors[].field and the message). */
export function toolErrorEnvelope(tool: McpToolRow | undefined, err: ApiError) {
  const envelope = err.toJSON();
  if (!tool) return envelope;
  const ctx = envelope.error.context as { field?: unknown; errors?: unknown };
  const renamed = new Map<string, string>();
  const rename = (f: unknown) => {
    if (typeof f !== 'string') return f;
    const to = toolFieldName(tool, f);
    if (to !== f) renamed.set(f, to);
    return to;
  };
  const context: Record<string, unknown> = { ...ctx };
  if ('field' in ctx) context.field = rename(ctx.field);
  if (Array.isArray(ctx.errors))
    context.errors = ctx.errors.map((e) =>
      e && typeof e === 'object' && 'field' in e ? { ...e, field: rename((e as { field: unknown }).field) } : e,
    );
  let message = envelope.error.message;
  // Longest first, each as a whole name (not the start of a longer one).
  for (const [from, to] of [...renamed].sort((a, b) => b[0].length - a[0].length)) {
    message = message.replace(new RegExp(`(?<![\\w.\\]])${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w\\-])`, 'g'), to);
  }
  return { error: { ...envelope.error, message, context } };
}

export function errorResult(err: ApiError, tool?: McpToolRow): CallToolResult {
  const envelope = toolErrorEnvelope(tool, err);
  const e = envelope.error;
  return {
    isError: true,
    content: [{ type: 'text', text: `Error ${e.code}${e.retryable ? ' (retryable)' : ''}: ${e.message}` }],
    structuredContent: envelope as unknown as Record<string, unknown>,
  };
}

// The results of pre-serialised replies (the catalog), made once per tool and content: the value
// is deep-frozen and shared, so its result is too (frozen, answered to every caller alike).
const sharedResults = new WeakMap<object, Map<string, CallToolResult>>();

function sharedResult(tool: McpToolRow, value: object): CallToolResult {
  let byTool = sharedResults.get(value);
  if (!byTool) sharedResults.set(value, (byTool = new Map()));
  let result = byTool.get(tool.name);
  if (!result) byTool.set(tool.name, (result = deepFreeze(successResult(tool, value))));
  return result;
}

export interface ToolDeps {
  executor: Executor;
  log: Logger;
}

/**
 * Runs one tool call; never throws for ApiErrors (they are results). When the structured content
 * is a reply the executor serialised already (the catalog), `onJson` gets that value and its bytes.
 */
export async function runTool(...args: Parameters<typeof callTool>): Promise<CallToolResult> {
  const result = await callTool(...args);
  // By tool and outcome (src/metrics.ts): "success", or the error code of the result.
  const code = result.isError ? (result.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code : undefined;
  mcpToolCalls.inc({ tool: args[1].name, outcome: result.isError ? (typeof code === 'string' ? code : 'error') : 'success' });
  return result;
}

async function callTool(
  deps: ToolDeps,
  tool: McpToolRow,
  args: Record<string, unknown>,
  auth: AuthContext,
  onJson?: (value: object, bytes: Buffer) => void,
  /** Aborted when the client went away (its outbound fetches stop). */
  signal?: AbortSignal,
): Promise<CallToolResult> {
  try {
    const out = await deps.executor.execute({ ...toOperationCall(tool, args, auth), signal });
    const { value, bytes } = replyBody(out);
    if (!bytes) return successResult(tool, value);
    const result = sharedResult(tool, value as object);
    if (onJson && result.structuredContent === value) onJson(value as object, bytes);
    return result;
  } catch (err) {
    if (err instanceof ApiError) return errorResult(err, tool);
    if (isDatabaseUnavailable(err)) return errorResult(databaseUnavailable());
    deps.log.error(
      { err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, tool: tool.name },
      'unhandled error in MCP tool',
    );
    return errorResult(new ApiError('server_error', 'Unexpected server error; retry with backoff and the same idempotency key'));
  }
}
