// POST /mcp: MCP over Streamable HTTP with the official SDK (@modelcontextprotocol/sdk 1.x),
// stateless: every request gets a new SDK Server and a new transport (a stateless transport must
// not be reused), any API node answers any request, and GET/DELETE (the session stream and
// session end) answer 405. A Host or Origin of another site is refused first (403,
// ./rebinding.ts). The bearer token is resolved before the SDK sees the request (401 challenge),
// and a tools/call the token's scopes do not allow is refused with a 403 challenge.
// The transport (./transport.ts) is the SDK transport's stateless JSON mode minus its Node ↔ Web
// conversion and SSE machinery: it takes the body Fastify parsed, keeps the SDK transport's HTTP
// rules (406, 415, 400, 202) and answers on the Fastify reply; the SDK Server does the protocol,
// except for a body that is one plain tools/call or tools/list, answered by ./direct.ts the way
// the Server would (and tested against it) without building a Server for it.
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { operationIndex } from '../operations/executor.ts';
import type { AuthContext } from '../services/workspaces/api-keys.ts';
import { registerPreviewResources } from './apps.ts';
import { answerDirect, directRequest } from './direct.ts';
import { BearerError, cachedBearer, insufficientScope, MCP_PATH, mcpUrls, resolveBearer } from './auth.ts';
import { LISTED_TOOLS, runTool, toolAllowed, TOOLS_BY_NAME, type ToolDeps } from './tools.ts';
import { rebindingProblem, rebindingRules } from './rebinding.ts';
import { answerPost, type StatelessJsonTransport } from './transport.ts';

const INSTRUCTIONS = [
  `Tools of the ${operationIndex.title} (contract version ${operationIndex.version}); each mirrors a REST operation or an MCP-only capability.`,
  'Start with get_workspace (plan, credits, scopes) and list_generation_catalog / list_workspace_assets (what can be generated and with which assets).',
  'Paid tools deduct credits before queueing; pass an idempotency_key so a retry never charges twice.',
  'Work is asynchronous: poll get_generation, get_slideshow or get_video every few seconds until the status is completed (or ready), error or failed.',
  'Errors are tool results with isError and {error: {code, message, retryable, context}}; retry only when retryable is true.',
].join(' ');

// One validator for every per-request Server (the SDK would otherwise build an Ajv per request;
// this server validates nothing with it: it sends no elicitation requests).
const jsonSchemaValidator = new AjvJsonSchemaValidator();

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
const SERVER_OPTIONS = { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator };

// A JSON-RPC error for the SDK Server to answer: it sends a thrown error's `code` and `message`,
// and an McpError's message carries "MCP error <code>: " before the text (which SDK clients add
// once more), where the specification shows the text alone ("Unknown tool: …").
const protocolError = (code: number, message: string) => Object.assign(new Error(message), { code });

/**
 * The SDK Server of one POST: tools/list and tools/call, the latter as the authenticated caller,
 * and the preview resources (./apps.ts) for media served from `publicBaseUrl`.
 */
function createServer(deps: ToolDeps, auth: AuthContext, transport: StatelessJsonTransport, publicBaseUrl: string): Server {
  const server = new Server(SERVER_INFO, SERVER_OPTIONS);
  registerPreviewResources(server, publicBaseUrl);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return runTool(
      deps,
      tool,
      (request.params.arguments ?? {}) as Record<string, unknown>,
      auth,
      (value, bytes) => transport.preserialized(extra.requestId, value, bytes),
      extra.signal, // aborted when answerPost closes the Server (the client went away)
    );
  });
  return server;
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

export function registerMcpEndpoint(app: FastifyInstance, ctx: AppContext, deps: ToolDeps): void {
  const urls = mcpUrls(ctx.config.publicBaseUrl);
  const rules = rebindingRules(ctx.config);

  // DNS-rebinding protection, before the body is read and the bearer token looked at (./rebinding.ts).
  app.addHook('onRequest', async (req, reply) => {
    const problem = rebindingProblem(rules, req);
    if (problem) return reply.code(403).header('content-type', 'application/json; charset=utf-8').send(jsonRpcError(-32000, problem));
  });

  app.post(MCP_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    let auth = cachedBearer(ctx, req.headers.authorization);
    if (!auth) {
      try {
        auth = await resolveBearer(ctx, req.headers.authorization);
      } catch (err) {
        if (err instanceof BearerError) return sendBearerError(reply, err);
        throw err;
      }
    }
    const refused = scopeProblem(req.body, auth, urls.resourceMetadata);
    if (refused) return sendBearerError(reply, refused);

    return answerPost(
      req,
      reply,
      (transport) => createServer(deps, auth, transport, ctx.config.publicBaseUrl),
      (err) => ctx.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'MCP request failed'),
      (body, signal) => {
        const request = directRequest(body);
        return request && answerDirect(request, deps, auth, signal);
      },
    );
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
