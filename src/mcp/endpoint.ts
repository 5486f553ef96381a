// POST /mcp: MCP over Streamable HTTP with the official SDK (@modelcontextprotocol/sdk 1.x),
// stateless: every request gets a new Server and a new transport (a stateless transport must
// not be reused), any API node answers any request, and GET/DELETE (the session stream and
// session end) answer 405. The bearer token is resolved before the SDK sees the request (401
// challenge), a tools/call the token's scopes do not allow is refused with a 403 challenge, and
// the Fastify reply is hijacked before the SDK writes the raw response.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { operationIndex } from '../operations/executor.ts';
import type { AuthContext } from '../services/api-keys.ts';
import { BearerError, insufficientScope, MCP_PATH, mcpUrls, resolveBearer } from './auth.ts';
import { LISTED_TOOLS, runTool, toolAllowed, TOOLS_BY_NAME, type ToolDeps } from './tools.ts';

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

function createServer(deps: ToolDeps, auth: AuthContext): Server {
  const server = new Server(
    { name: 'media-api', title: operationIndex.title, version: operationIndex.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return runTool(deps, tool, (request.params.arguments ?? {}) as Record<string, unknown>, auth);
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

  app.post(MCP_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    let auth: AuthContext;
    try {
      auth = await resolveBearer(ctx, req.headers.authorization);
    } catch (err) {
      if (err instanceof BearerError) return sendBearerError(reply, err);
      throw err;
    }
    const refused = scopeProblem(req.body, auth, urls.resourceMetadata);
    if (refused) return sendBearerError(reply, refused);

    // From here the SDK writes the raw response: keep what Fastify's hooks set (CORS), then hijack.
    reply.hijack();
    const res = reply.raw;
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) res.setHeader(k, v as string);
    const server = createServer(deps, auth);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, res, req.body);
    } catch (err) {
      ctx.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'MCP request failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(jsonRpcError(ErrorCode.InternalError, 'Internal server error'));
      } else if (!res.writableEnded) res.end();
    }
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
