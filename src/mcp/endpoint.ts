// POST /mcp: MCP over Streamable HTTP on the official SDK v2 (@modelcontextprotocol/server), stateless:
// every request gets a new SDK Server from one factory, any API node answers any request, and
// GET/DELETE (the 2025 session stream and session end) answer 405. One endpoint serves
//   - the 2026-07-28 revision (no handshake: `server/discover`, the per-request `_meta` envelope,
//     the routing headers, `ttlMs`/`cacheScope` on cacheable results) through the SDK's
//     createMcpHandler, and
//   - the 2025 revisions (2025-11-25, 2025-06-18 and older, with the initialize handshake) through
//     the SDK's WebStandardStreamableHTTPServerTransport in its stateless JSON mode, chosen with
//     the SDK's own isLegacyRequest (the composition its documentation gives for a legacy leg
//     that is not the built-in SSE one: our 2025 answers stay application/json, as before).
// A Host or Origin of another site is refused first (403, ./rebinding.ts). The bearer token is
// resolved before the SDK sees the request (401 challenge), and a tools/call the token's scopes do
// not allow is refused with a 403 challenge. The Fastify request is handed to the SDK as a
// web-standard Request with the body Fastify parsed; the SDK's Response is sent with its status and headers (a JSON body as one buffer, sendAnswer).
import { readFileSync } from 'node:fs';
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type CallToolResult,
  type McpRequestContext,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { mcpAnswerCacheHits, mcpToolCalls } from '../metrics.ts';
import { operationIndex } from '../operations/executor.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { registerPreviewResources } from './apps.ts';
import { BearerError, cachedBearer, insufficientScope, MCP_PATH, mcpUrls, resolveBearer } from './auth.ts';
import { LISTED_TOOLS, runTool, toolAllowed, TOOLS_BY_NAME, type ToolDeps } from './tools.ts';
import { rebindingProblem, rebindingRules } from './rebinding.ts';
import { CACHED_TOOL, cachedAnswer, cacheKey, keepAnswer } from './answer-cache.ts';
import { waitWithProgress } from './progress.ts';
import { TASK_TOOLS } from './task-tools.ts';
import { registerTaskMethods, TASK_CAPABILITIES, taskCreated, TaskServer, wantsTask, type Era } from './task-wire.ts';

const INSTRUCTIONS = [
  `Tools of the ${operationIndex.title} (contract version ${operationIndex.version}); each mirrors a REST operation or an MCP-only capability.`,
  'Start with get_workspace (plan, credits, scopes) and list_generation_catalog / list_workspace_assets (what can be generated and with which assets).',
  'Paid tools deduct credits before queueing; pass an idempotency_key so a retry never charges twice.',
  'Work is asynchronous. Clients with tasks (the io.modelcontextprotocol/tasks extension, or params.task on 2025-11-25) get a task from the six tools that start long work: follow it with tasks/get (its final result carries the media as resource links), cancel queued work with tasks/cancel (refunded in full).',
  'Without tasks, send a progressToken to wait with progress notifications, or poll get_generation, get_slideshow or get_video every few seconds until the status is completed (or ready), error, failed or canceled.',
  'Errors are tool results with isError and {error: {code, message, retryable, context}}; retry only when retryable is true.',
].join(' ');

const jsonRpcError = (code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });

function sendBearerError(reply: FastifyReply, err: BearerError) {
  return reply
    .code(err.status)
    .header('www-authenticate', err.challenge)
    .header('cache-control', 'no-store')
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(err.apiError.toJSON()));
}

/**
 * The server's icon (./icon.svg: shapes only, no script, no external reference) as a data: URI,
 * so it is served from our own origin, within the initialize result, and no client fetches it
 * from anywhere else.
 */
export const SERVER_ICON = {
  src: `data:image/svg+xml;base64,${readFileSync(new URL('./icon.svg', import.meta.url)).toString('base64')}`,
  mimeType: 'image/svg+xml',
  sizes: ['any'],
};

// What every per-request Server is built from (the SDK only reads them).
const SERVER_INFO = { name: 'media-api', title: operationIndex.title, version: operationIndex.version, icons: [SERVER_ICON] };

/**
 * How long a 2026-07-28 client may reuse a tools/list result, and by whom: the list is the same
 * for every caller (scopes decide what a call may do, not what is listed) and changes only with a
 * deployment of another contract version, so shared caches may keep it for five minutes.
 */
export const TOOLS_LIST_CACHE = { ttlMs: 5 * 60_000, cacheScope: 'public' } as const;

const SERVER_OPTIONS = {
  capabilities: { tools: { listChanged: false }, ...TASK_CAPABILITIES },
  instructions: INSTRUCTIONS,
  cacheHints: { 'tools/list': TOOLS_LIST_CACHE },
};

/** The caller, carried to the factory in the SDK's pass-through AuthInfo. */
const authInfoOf = (auth: AuthContext, token: string): AuthInfo => ({ token, clientId: auth.keyId, scopes: auth.scopes, extra: { auth } });
const callerOf = (info: AuthInfo | undefined) => info?.extra?.auth as AuthContext;

/**
 * The SDK Server of one request in `era`'s form: tools/list and tools/call, the latter as the
 * authenticated caller (a long tool answered with a task when the client asked for tasks), the
 * task methods (./task-wire.ts) and the preview resources (./apps.ts) for media served from
 * `publicBaseUrl`.
 */
function createServer(ctx: AppContext, deps: ToolDeps, auth: AuthContext, era: Era): Server {
  const server = new TaskServer(SERVER_INFO, SERVER_OPTIONS);
  registerPreviewResources(server, ctx.config.publicBaseUrl);
  registerTaskMethods(server, era, { ctx, deps, auth });
  server.setRequestHandler('tools/list', () => ({ tools: LISTED_TOOLS }));
  server.setRequestHandler('tools/call', async (request, rctx) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    // 2025-11-25: a task asked of a tool that does not run as one is refused before anything runs.
    if (era === 'legacy' && request.params.task !== undefined && !TASK_TOOLS.has(tool.name))
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `Tool ${tool.name} does not run as a task (its execution.taskSupport is forbidden)`,
      );
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    // rctx.mcpReq.signal is aborted when the client goes away (the request's signal, below).
    const result = await runTool(deps, tool, args, auth, undefined, rctx.mcpReq.signal);
    if (!result.isError && TASK_TOOLS.has(tool.name)) {
      // A task answer is no CallToolResult; TaskServer passes it on as it is.
      if (wantsTask(era, tool.name, request.params, rctx))
        return (await taskCreated(era, ctx, auth, tool.name, result)) as unknown as CallToolResult;
      const ended = await waitForWork(ctx, deps, auth, tool.name, result, rctx);
      if (ended) return server.projectCallToolResult(ended, tool.outputSchema ?? undefined);
    }
    return server.projectCallToolResult(result, tool.outputSchema ?? undefined);
  });
  return server;
}

/** A long call's final result when its client waits with a progress token (./progress.ts); undefined to answer at once. */
function waitForWork(ctx: AppContext, deps: ToolDeps, auth: AuthContext, tool: string, queued: CallToolResult, rctx: ServerContext) {
  const progressToken = rctx.mcpReq._meta?.progressToken;
  const waitMs = ctx.config.mcpToolWaitSeconds * 1000;
  if (progressToken === undefined || waitMs === 0) return undefined;
  const notify = (n: { method: 'notifications/progress'; params: Record<string, unknown> }) => rctx.mcpReq.notify(n as never);
  return waitWithProgress({ ctx, deps, auth, tool, queued, progressToken, notify, signal: rctx.mcpReq.signal, waitMs });
}

/**
 * Whether a 2025-era request is a long call that will wait with progress notifications: its
 * answer is then an event stream (the notifications, then the result) instead of one JSON body.
 */
function streamsProgress(body: unknown, waitSeconds: number): boolean {
  if (waitSeconds === 0 || !body || typeof body !== 'object' || Array.isArray(body)) return false;
  const msg = body as { method?: unknown; params?: { name?: unknown; task?: unknown; _meta?: { progressToken?: unknown } } };
  return (
    msg.method === 'tools/call' &&
    typeof msg.params?.name === 'string' &&
    TASK_TOOLS.has(msg.params.name) &&
    msg.params.task === undefined &&
    msg.params._meta?.progressToken !== undefined
  );
}

/** The first tools/call of the request whose tool the token's scopes do not allow. */
function scopeProblem(body: unknown, auth: AuthContext, resourceMetadata: string): BearerError | undefined {
  for (const msg of Array.isArray(body) ? body : [body]) {
    if (!msg || typeof msg !== 'object' || (msg as { method?: unknown }).method !== 'tools/call') continue;
    const name = (msg as { params?: { name?: unknown } }).params?.name;
    const tool = typeof name === 'string' ? TOOLS_BY_NAME.get(name) : undefined;
    if (tool && !toolAllowed(tool, auth.scopes)) return insufficientScope(resourceMetadata, tool.scopes, auth.scopes, tool.name);
  }
  return undefined;
}

/** The Fastify request as a web-standard Request (headers as sent, repeated ones joined), aborted when the client goes away. */
function webRequest(req: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  if (req.host) headers.set('host', req.host); // X-Forwarded-Host with TRUST_PROXY, as the rebinding check saw it
  return new Request(new URL(req.url, `${req.protocol}://${req.host}`), { method: req.method, headers, signal });
}

/**
 * A 2025-era request: a Server from the same factory on the SDK's stateless transport, JSON
 * answers (an event stream for a long call that waits with progress notifications).
 */
async function serveLegacy(server: Server, request: Request, authInfo: AuthInfo, parsedBody: unknown, stream: boolean) {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream });
  await server.connect(transport);
  const teardown = () => void server.close().catch(() => {});
  request.signal.addEventListener('abort', teardown, { once: true });
  const done = () => {
    request.signal.removeEventListener('abort', teardown);
    teardown();
  };
  let answer: Response;
  try {
    answer = await transport.handleRequest(request, { authInfo, parsedBody });
  } catch (err) {
    done();
    throw err;
  }
  // A JSON answer is whole when the SDK returns it: no handler of the exchange is left running, and
  // the per-request Server and transport are simply dropped. close() would only run the SDK's
  // connection teardown for nothing (it builds a ConnectionClosed SdkError, stack trace included,
  // for handlers already finished): about 4% of the CPU of a ping.
  if (!answer.body || !answer.headers.get('content-type')?.startsWith('text/event-stream')) {
    request.signal.removeEventListener('abort', teardown);
    return answer;
  }
  // An event stream is answered while the call still runs: the server closes once it has ended.
  const body = answer.body.pipeThrough(new TransformStream({ flush: done }));
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * Sends the SDK's web Response. A JSON answer (complete once the SDK returns it) goes out as one
 * buffer with its length, instead of through Fastify's reader of a web stream, which writes it
 * chunked; an event stream is passed on as the stream it is.
 */
async function sendAnswer(reply: FastifyReply, answer: Response, keep?: (body: Buffer) => void) {
  if (!answer.body || !answer.headers.get('content-type')?.startsWith('application/json')) return reply.send(answer);
  const body = Buffer.from(await answer.arrayBuffer());
  keep?.(body);
  return sendBytes(reply, answer.status, answer.headers, body);
}

function sendBytes(reply: FastifyReply, status: number, headers: Iterable<[string, string]>, body: Buffer) {
  reply.code(status);
  for (const [name, value] of headers) reply.header(name, value);
  return reply.send(body);
}

/** The bearer token's caller, or the refusal already sent. */
async function caller(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<AuthContext | undefined> {
  const cached = cachedBearer(ctx, req.headers.authorization);
  if (cached) return cached;
  try {
    return await resolveBearer(ctx, req.headers.authorization);
  } catch (err) {
    if (err instanceof BearerError) {
      sendBearerError(reply, err);
      return undefined;
    }
    throw err;
  }
}

export function registerMcpEndpoint(app: FastifyInstance, ctx: AppContext, deps: ToolDeps): void {
  const urls = mcpUrls(ctx.config.publicBaseUrl);
  const rules = rebindingRules(ctx.config);
  // Refusals of the SDK (an unsupported revision, a bad envelope) are the client's; a 500 is logged below.
  const onerror = (err: Error) => ctx.log.info({ err: { message: err.message } }, 'MCP request refused by the SDK');
  // 2026-07-28 requests; 2025-era ones never reach it (serveLegacy), hence `legacy: 'reject'`.
  const newServer = (auth: AuthContext, era: Era) => createServer(ctx, deps, auth, era);
  const modern = createMcpHandler((c: McpRequestContext) => newServer(callerOf(c.authInfo), 'modern'), { legacy: 'reject', onerror });
  app.addHook('onClose', () => modern.close());

  // DNS-rebinding protection, before the body is read and the bearer token looked at (./rebinding.ts).
  app.addHook('onRequest', async (req, reply) => {
    const problem = rebindingProblem(rules, req);
    if (problem) return reply.code(403).header('content-type', 'application/json; charset=utf-8').send(jsonRpcError(-32000, problem));
  });

  app.post(MCP_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    const auth = await caller(ctx, req, reply);
    if (!auth) return reply;
    const refused = scopeProblem(req.body, auth, urls.resourceMetadata);
    if (refused) return sendBearerError(reply, refused);
    // The catalog's answer to an identical request (./answer-cache.ts).
    const cacheable = cacheKey(req);
    const hit = cacheable && cachedAnswer(cacheable.key, cacheable.id);
    if (hit) {
      mcpToolCalls.inc({ tool: CACHED_TOOL, outcome: 'success' });
      mcpAnswerCacheHits.inc();
      return sendBytes(reply, hit.status, hit.headers, hit.body);
    }

    const gone = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.once('close', onClose);
    const request = webRequest(req, gone.signal);
    const authInfo = authInfoOf(auth, '');
    const answer = (await isLegacyRequest(request, req.body))
      ? await serveLegacy(newServer(auth, 'legacy'), request, authInfo, req.body, streamsProgress(req.body, ctx.config.mcpToolWaitSeconds))
      : await modern.fetch(request, { authInfo, parsedBody: req.body });
    if (answer.status >= 500) ctx.log.error({ status: answer.status, url: req.url }, 'MCP request failed');
    const keep = cacheable && ((body: Buffer) => keepAnswer(cacheable.key, cacheable.id, answer.status, answer.headers, body));
    return sendAnswer(reply, answer, keep || undefined);
  });

  // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
  app.get(MCP_PATH, async (_req, reply) => sendNotAllowed(reply));
  app.delete(MCP_PATH, async (_req, reply) => sendNotAllowed(reply));
}

export const sendNotAllowed = (reply: FastifyReply) =>
  reply
    .code(405)
    .header('allow', 'POST')
    .header('content-type', 'application/json; charset=utf-8')
    .send(jsonRpcError(-32000, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC messages with POST'));
