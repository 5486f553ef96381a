// The direct path of POST /mcp: a body that is ONE plain `tools/call` of a known tool or ONE plain
// `tools/list` is answered here, without building a per-request SDK Server. Everything else
// (initialize, ping, notifications, batches, unknown tools or methods, params with `_meta` or
// `task`, anything the SDK's schemas might refuse or read differently) still goes through the
// SDK `Server` (./endpoint.ts), which stays the reference: test/mcp/direct.test.ts sends each
// request both ways and requires the same answer.
//
// Why: on a stateless endpoint every message pays for a new Server (a Protocol with its handler
// maps, an AbortController per request) and for five zod parses of messages the HTTP layer has
// already parsed as JSON (message classification in Protocol.connect, the request schema twice,
// the result schema). On the catalog call that was about as much CPU as the whole REST request;
// it is what kept `npm run bench:mcp` under its target (see bench/mcp.ts).
//
// What is kept identical to the SDK Server (@modelcontextprotocol/sdk 1.x, shared/protocol.js
// `_onrequest` and server/index.js `setRequestHandler` for tools/call):
//   - only requests its schemas certainly accept come here: `params` holds `name` (a string naming
//     a listed tool) and optionally `arguments` (a JSON object) and nothing else — no `_meta`
//     (progress tokens, related tasks) and no `task` (task augmentation);
//   - the answer is `{"result": …, "jsonrpc": "2.0", "id": <the request's id>}`, with the result our
//     handler returns (runTool: content + structuredContent [+ isError]), whose shape the SDK
//     would have validated against CallToolResultSchema — test/mcp/direct.test.ts checks every
//     result of the suite against that schema instead;
//   - `tools/list` with no params, empty params or only a string `cursor` (this server has one
//     page; the SDK handler ignored the cursor too) answers the same tool list, serialised once.
import type { CallToolResult, JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { LISTED_TOOLS, runTool, TOOLS_BY_NAME, type McpToolRow, type ToolDeps } from './tools.ts';

/** A message the direct path answers. */
export type DirectRequest =
  | { method: 'tools/call'; id: RequestId; tool: McpToolRow; args: Record<string, unknown> }
  | { method: 'tools/list'; id: RequestId };

const isJsonObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype;

/**
 * The direct request `body` is, or undefined when the SDK Server must answer it. `body` is the
 * parsed POST body after the transport's checks (checkPost): a JSON-RPC message or an array.
 */
export function directRequest(body: unknown): DirectRequest | undefined {
  if (!isJsonObject(body) || body.jsonrpc !== '2.0') return undefined;
  const id = body.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  for (const k in body) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return undefined;
  const params = body.params;
  if (params !== undefined && !isJsonObject(params)) return undefined;
  if (body.method === 'tools/call') {
    if (!params) return undefined;
    for (const k in params) if (k !== 'name' && k !== 'arguments') return undefined;
    const tool = typeof params.name === 'string' ? TOOLS_BY_NAME.get(params.name) : undefined;
    const args = params.arguments === undefined ? {} : params.arguments;
    if (!tool || !isJsonObject(args)) return undefined;
    return { method: 'tools/call', id: id as RequestId, tool, args };
  }
  if (body.method === 'tools/list') {
    if (params) for (const k in params) if (k !== 'cursor' || typeof params.cursor !== 'string') return undefined;
    return { method: 'tools/list', id: id as RequestId };
  }
  return undefined;
}

// `{"tools":[…]}`, the tools/list result (hundreds of kilobytes of schemas), serialised once.
let listJson: Buffer | undefined;
const toolList = () => (listJson ??= Buffer.from(JSON.stringify({ tools: LISTED_TOOLS })));

const RESULT_OPEN = '{"result":';
const closing = (id: RequestId) => `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

/**
 * Answers a direct request as the caller `auth`: the JSON-RPC response as chunks of its UTF-8
 * text, to write in order. Pre-serialised structured content (the catalog bytes the executor
 * keeps) is written as those bytes, not serialised again.
 */
export async function answerDirect(
  request: DirectRequest,
  deps: ToolDeps,
  auth: AuthContext,
  signal?: AbortSignal,
): Promise<(string | Buffer)[]> {
  if (request.method === 'tools/list') return [RESULT_OPEN, toolList(), closing(request.id)];
  let json: { value: object; bytes: Buffer } | undefined;
  const result = await runTool(deps, request.tool, request.args, auth, (value, bytes) => (json = { value, bytes }), signal);
  const head = json && resultHead(result, json.value);
  if (head) return [head, json!.bytes, `}${closing(request.id)}`];
  return [JSON.stringify({ result, jsonrpc: '2.0', id: request.id } as JSONRPCMessage)];
}

// Results whose structured content is pre-serialised are shared and frozen (runTool): the text
// before their structured content is made once per result.
const heads = new WeakMap<object, Buffer>();

/** `{"result":{"content":[…],"structuredContent":` when `result` is exactly content + `value`. */
function resultHead(result: CallToolResult, value: object): Buffer | undefined {
  if (result.structuredContent !== value) return undefined;
  let head = heads.get(result);
  if (head) return head;
  const keys = Object.keys(result);
  if (keys.length !== 2 || keys[0] !== 'content' || keys[1] !== 'structuredContent') return undefined;
  head = Buffer.from(`${RESULT_OPEN}{"content":${JSON.stringify(result.content)},"structuredContent":`);
  if (Object.isFrozen(result)) heads.set(result, head);
  return head;
}
