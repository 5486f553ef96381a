// The Streamable HTTP transport of POST /mcp, for a stateless server answering with JSON: what
// the SDK's StreamableHTTPServerTransport does with `sessionIdGenerator: undefined` and
// `enableJsonResponse: true`, without its Node ↔ Web (hono) request/response conversion, SSE
// machinery and re-validation of outgoing messages. The SDK's `Server` does the protocol handling
// (initialize, tools/list, tools/call, ping, notifications, JSON-RPC errors), except for a body
// that is one plain tools/call or tools/list, which answerPost's `direct` hook (./direct.ts)
// answers the same way without a Server; this file owns the HTTP rules the SDK transport
// enforced, in the same order, with the same status codes and messages
// (@modelcontextprotocol/sdk 1.x, server/webStandardStreamableHttp.js, handlePostRequest):
//   1. Accept must list both application/json and text/event-stream (substring test) → else 406;
//   2. Content-Type must be application/json (parsed media type) → else 415;
//   3. a batch may hold at most MAX_BATCH_SIZE messages → else 400 (-32600); an empty batch is an
//      Invalid Request too (JSON-RPC 2.0 §6) → 400 (-32600), where the SDK transport answered 202;
//   4. every message must be a JSON-RPC message (JSONRPCMessageSchema) → else 400 (-32700);
//   5. an initialize request must come alone → else 400 (-32600); other bodies must carry a
//      supported MCP-Protocol-Version header, if any → else 400 (-32000);
//   6. notifications and responses only → delivered, then 202 with no body;
//   7. otherwise every message is delivered and the answer is the response (one request) or the
//      array of responses in request order (several), once all are ready.
// Unparseable JSON never gets here: Fastify refuses it (400, -32700) in the scope's error handler.
// The answer is written on the Fastify reply (answerPost): the refusals above as JSON-RPC errors
// with `id: null`, 202 with no body, or 200 `application/json`. A tool result whose structured
// content is a reply the executor pre-serialised (the catalog) is written with those very bytes
// in place of a second JSON.stringify of the value (see `preserialized`).
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';

/** An HTTP answer of the transport itself (the JSON-RPC error bodies have `id: null`). */
export interface HttpRefusal {
  status: number;
  body: string;
}

const refusal = (status: number, code: number, message: string): HttpRefusal => ({
  status,
  body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
});

export const NOT_ACCEPTABLE = 'Not Acceptable: Client must accept both application/json and text/event-stream';
export const UNSUPPORTED_MEDIA_TYPE = 'Unsupported Media Type: Content-Type must be application/json';

/** The messages of a POST body that passed the transport's checks. */
export interface AcceptedPost {
  messages: JSONRPCMessage[];
  /** False when the body holds only notifications and responses (answered 202). */
  hasRequests: boolean;
}

/**
 * A header as the Fetch API's `Headers.get` reads it (what the SDK transport saw): every
 * occurrence joined with ", ". Node keeps only the first Content-Type, so it is read from the
 * raw headers; a repeated one is then refused, as the SDK refused it.
 */
function fetchHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toLowerCase() === name)
      value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

/** Steps 1–5 above: the messages to deliver, or the HTTP refusal to send. */
export function checkPost(req: IncomingMessage, body: unknown): AcceptedPost | HttpRefusal {
  const accept = headerValue(req.headers.accept);
  // A comma-separated list: the SDK's substring test, kept as is.
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return refusal(406, -32000, NOT_ACCEPTABLE);
  if (!isJsonContentType(fetchHeader(req, 'content-type') ?? null)) return refusal(415, -32000, UNSUPPORTED_MEDIA_TYPE);
  // Fastify parsed the body; a JSON content type with no parsed body is unreadable JSON.
  if (body === undefined) return refusal(400, -32700, 'Parse error: Invalid JSON');
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
    return refusal(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
  }
  if (Array.isArray(body) && body.length === 0) return refusal(400, -32600, 'Invalid Request: a batch must hold at least one message');
  let messages: JSONRPCMessage[];
  try {
    messages = Array.isArray(body) ? body.map(parseMessage) : [parseMessage(body)];
  } catch {
    return refusal(400, -32700, 'Parse error: Invalid JSON-RPC message');
  }
  // Only a message whose method is "initialize" can pass InitializeRequestSchema.
  const initializing = messages.some((m) => (m as { method?: unknown }).method === 'initialize' && isInitializeRequest(m));
  if (initializing) {
    if (messages.length > 1) return refusal(400, -32600, 'Invalid Request: Only one initialization request is allowed');
  } else {
    const version = headerValue(req.headers['mcp-protocol-version']);
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      const message = `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
      return refusal(400, -32000, message);
    }
  }
  return { messages, hasRequests: messages.some(isRequest) };
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const isJsonObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype;

/**
 * A request JSONRPCRequestSchema (strict: jsonrpc "2.0", a string or safe-integer id, a string
 * method, optional object params) certainly accepts, in the common plain form: no other members
 * and no params._meta (whose schema is left to zod). Such a body is used as it is.
 */
function isPlainRequest(m: unknown): m is JSONRPCMessage {
  if (!isJsonObject(m) || m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id)) return false;
  for (const k in m) if (!REQUEST_KEYS.has(k)) return false;
  const params = m.params;
  return params === undefined || (isJsonObject(params) && !Object.hasOwn(params, '_meta'));
}

/** One message of the body, as JSONRPCMessageSchema parses it (throws when it is none). */
const parseMessage = (m: unknown): JSONRPCMessage => (isPlainRequest(m) ? m : JSONRPCMessageSchema.parse(m));

export const isRefusal = (x: AcceptedPost | HttpRefusal): x is HttpRefusal => 'status' in x;

/**
 * Of messages JSONRPCMessageSchema accepted (requests, notifications, results, errors), the
 * requests: a method and an id (what isJSONRPCRequest tells, without a second schema parse).
 */
const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } => 'method' in m && 'id' in m;

/** Outgoing messages come from the SDK's Protocol: a response has a result or an error. */
const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id?: RequestId } => 'result' in m || 'error' in m;

/**
 * One POST's transport (never reused: like the SDK's stateless transport, one per request and
 * per Server). `deliver` hands the messages to the connected Server and resolves with the
 * responses to its requests, in request order, once every request has one.
 */
export class StatelessJsonTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  sessionId?: string = undefined;

  #started = false;
  #closed = false;
  #used = false;
  /** Request id → its response (undefined while pending); insertion order is request order. */
  #responses = new Map<RequestId, JSONRPCMessage | undefined>();
  #waiting = 0;
  #settle?: { resolve: (responses: JSONRPCMessage[]) => void; reject: (err: Error) => void };
  /** Request id → the JSON bytes of its result's structuredContent (see `preserialized`). */
  #json = new Map<RequestId, { value: object; bytes: Buffer }>();

  async start(): Promise<void> {
    if (this.#started) throw new Error('Transport already started');
    this.#started = true;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#responses.clear();
    const settle = this.#settle;
    this.#settle = undefined;
    settle?.reject(new Error('Transport closed before every response was ready'));
    this.onclose?.();
  }

  /** Delivers the messages; resolves with the responses to the requests among them ([] if none). */
  deliver(messages: JSONRPCMessage[], extra: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    if (this.#used) throw new Error('Stateless transport cannot be reused across requests. Create a new transport per request.');
    this.#used = true;
    if (this.#closed) return Promise.reject(new Error('Transport closed'));
    for (const m of messages) if (isRequest(m)) this.#responses.set(m.id, undefined);
    this.#waiting = this.#responses.size;
    const done =
      this.#waiting === 0 ? Promise.resolve([]) : new Promise<JSONRPCMessage[]>((resolve, reject) => (this.#settle = { resolve, reject }));
    try {
      for (const m of messages) this.onmessage?.(m, extra);
    } catch (err) {
      this.#settle = undefined;
      this.#responses.clear();
      return Promise.reject(err);
    }
    return done;
  }

  /**
   * The exact JSON text (UTF-8) of `value`, the structuredContent the tools/call handler of request
   * `id` returned (such as the catalog bytes the executor serialised once), so `encode` writes
   * those bytes instead of stringifying the value again. Used only if the result the Server sends
   * still holds that very content (same keys, identical values; `value` is deep-frozen).
   */
  preserialized(id: RequestId, value: object, bytes: Buffer): void {
    this.#json.set(id, { value, bytes });
  }

  /**
   * The HTTP body of the responses, in chunks to write in order: one response as an object,
   * several as an array (as the SDK transport answered).
   */
  encode(responses: JSONRPCMessage[]): (string | Buffer)[] {
    const parts: (string | Buffer)[] = [];
    const array = responses.length !== 1;
    let text = array ? '[' : '';
    for (let i = 0; i < responses.length; i++) {
      if (i > 0) text += ',';
      const m = responses[i] as JSONRPCMessage & { id?: RequestId; result?: Record<string, unknown> };
      const json = m.result !== undefined && m.id !== undefined ? this.#json.get(m.id) : undefined;
      const spliced = json && splice(m, json.value);
      if (spliced) {
        parts.push(text + spliced[0], json.bytes);
        text = spliced[1];
      } else {
        text += JSON.stringify(m);
      }
    }
    if (array) text += ']';
    parts.push(text);
    return parts;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isResponse(message)) {
      const id = message.id;
      if (id === undefined) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      if (!this.#responses.has(id)) throw new Error(`No connection established for request ID: ${String(id)}`);
      // A repeated id in a batch: the latest response while waiting, as the SDK kept it.
      if (this.#responses.get(id) === undefined) this.#waiting--;
      this.#responses.set(id, message);
      if (this.#waiting === 0) {
        const responses = [...this.#responses.values()] as JSONRPCMessage[];
        this.#responses.clear();
        const settle = this.#settle;
        this.#settle = undefined;
        settle?.resolve(responses);
      }
      return;
    }
    // Notifications and server-to-client requests: a JSON answer cannot carry them (the SDK's JSON
    // mode drops those related to a pending request), and a stateless server has no standalone
    // stream for the others.
    const related = options?.relatedRequestId;
    if (related !== undefined && !this.#responses.has(related))
      throw new Error(`No connection established for request ID: ${String(related)}`);
  }
}

// The placeholder of the structured content: JSON.stringify writes it as the text MARK_TEXT, which
// only a "structuredContent" member holding exactly "\u0000" can produce (in a string, the quotes
// would be escaped). If that text is not found exactly once, the message is stringified whole.
const MARK = '\u0000';
const MARK_TEXT = '"structuredContent":"\\u0000"';
const MARK_KEY = '"structuredContent":'.length;

/**
 * JSON.stringify(m) split around the value of m.result.structuredContent (the text before it and
 * the text after it), when that value still holds `value`'s content; undefined otherwise.
 */
function splice(m: JSONRPCMessage, value: object): [string, string] | undefined {
  const result = (m as { result?: unknown }).result;
  if (!isPlainObject(m) || !isPlainObject(result) || !sameEntries(result.structuredContent, value)) return undefined;
  const text = JSON.stringify({ ...m, result: { ...result, structuredContent: MARK } });
  const at = text.indexOf(MARK_TEXT);
  if (at < 0 || text.indexOf(MARK_TEXT, at + 1) >= 0) return undefined;
  return [text.slice(0, at + MARK_KEY), text.slice(at + MARK_TEXT.length)];
}

/** An object JSON.stringify serialises as its own enumerable keys (no toJSON, no special class). */
const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype && !Object.hasOwn(x, 'toJSON');

/** Whether `a` is `b` or a shallow copy of it (the Server validates results into copies). */
function sameEntries(a: unknown, b: object): boolean {
  if (a === b) return true;
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]] !== b[kb[i]]) return false;
  return true;
}

/** What the SDK transport passed with each message: the request's headers and URL (built when read). */
class RequestInfo {
  readonly headers: FastifyRequest['headers'];
  #req: FastifyRequest;
  #url: URL | undefined;
  constructor(req: FastifyRequest) {
    this.#req = req;
    this.headers = req.headers;
  }
  get url(): URL {
    return (this.#url ??= new URL(this.#req.url, `${this.#req.protocol}://${this.#req.host}`));
  }
}

// Bytes, so Fastify adds no charset parameter: `application/json`, as the SDK transport sent it.
const sendJson = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).header('content-type', 'application/json').send(Buffer.from(body));

/**
 * The JSON-RPC answer, written in its chunks (a pre-serialised body is not copied into a new
 * buffer) on the raw response, with the headers Fastify's hooks have set (CORS).
 */
function sendChunks(reply: FastifyReply, chunks: (string | Buffer)[]) {
  if (reply.raw.destroyed) {
    reply.hijack(); // the client went away while the answer was made
    return;
  }
  const buffers = chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c));
  let length = 0;
  for (const b of buffers) length += b.length;
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v;
  headers['content-type'] = 'application/json';
  headers['content-length'] = length;
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, headers);
  if (buffers.length === 1) return void res.end(buffers[0]);
  res.cork();
  for (const b of buffers) res.write(b);
  res.end();
}

/**
 * Answers one POST of Streamable HTTP (the caller already authenticated): the HTTP checks, then a
 * fresh transport connected to the Server `newServer` builds for it, the messages delivered, and
 * 202 (nothing to answer) or 200 with the JSON response(s). A client that goes away first gets
 * its Server closed, which aborts the running handlers (as the SDK transport's close did).
 */
export async function answerPost(
  req: FastifyRequest,
  reply: FastifyReply,
  newServer: (transport: StatelessJsonTransport) => Server,
  onError: (err: unknown) => void,
  direct?: (body: unknown, signal: AbortSignal) => Promise<(string | Buffer)[]> | undefined,
): Promise<unknown> {
  const post = checkPost(req.raw, req.body);
  if (isRefusal(post)) return sendJson(reply, post.status, post.body);
  // A message the caller answers without an SDK Server (./direct.ts), once the HTTP rules passed;
  // `gone` aborts when the client goes away first, as closing the Server does below.
  const gone = new AbortController();
  const onGone = () => gone.abort();
  const answer = direct?.(req.body, gone.signal);
  if (answer) {
    reply.raw.once('close', onGone);
    try {
      return sendChunks(reply, await answer);
    } catch (err) {
      return failed(reply, err, onError);
    } finally {
      reply.raw.off('close', onGone);
    }
  }
  const transport = new StatelessJsonTransport();
  const server = newServer(transport);
  await server.connect(transport);
  const extra: MessageExtraInfo = { requestInfo: new RequestInfo(req) };
  if (!post.hasRequests) {
    await transport.deliver(post.messages, extra);
    return reply.code(202).send();
  }
  let answered = false;
  const onClose = () => {
    if (!answered) server.close().catch(() => {});
  };
  reply.raw.once('close', onClose);
  try {
    const responses = await transport.deliver(post.messages, extra);
    answered = true;
    reply.raw.off('close', onClose);
    return sendChunks(reply, transport.encode(responses));
  } catch (err) {
    answered = true;
    reply.raw.off('close', onClose);
    return failed(reply, err, onError);
  }
}

/** A POST whose answer could not be made: 500 (-32603), unless the client is gone already. */
function failed(reply: FastifyReply, err: unknown, onError: (err: unknown) => void) {
  if (reply.raw.destroyed || !reply.raw.socket || reply.raw.socket.destroyed) {
    reply.hijack(); // nobody left to answer
    return undefined;
  }
  onError(err);
  return sendJson(reply, 500, JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }));
}
