// One Fastify route per spec operation: the request handed to the executor (which authenticates,
// validates with the generated AJV validators and runs the handler), its reply written as is.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { operationIndex, type Executor } from '../operations/executor.ts';
import type { Reply } from '../handlers.ts';
import { drainRequest, multipartBody } from './multipart.ts';

export const API_PREFIX = '/api/v1';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec operation a route serves (in its request log line). */
    operationId?: string;
  }
}

function send(reply: FastifyReply, out: Reply) {
  reply.code(out.status);
  for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
  reply.header('content-type', out.contentType);
  return reply.send(out.raw ? out.body : JSON.stringify(out.body));
}

export function registerContractRoutes(app: FastifyInstance, ctx: AppContext, executor: Executor): void {
  for (const op of operationIndex.operations) {
    app.route({
      method: op.method as 'GET',
      // Under /api/v1, or under the operation's own server (the health probes, at the root).
      url: `${op.server === undefined ? API_PREFIX : op.server.replace(/\/$/, '')}${op.routePath}`,
      config: { operationId: op.operationId },
      // Each operation's body limit is the contract's (`x-body-limit-bytes` on its request body),
      // BODY_LIMIT_BYTES where it declares none: a 300 KB body cannot reach an operation built for 16 KB.
      bodyLimit: op.requestBody?.limitBytes ?? ctx.config.bodyLimitBytes,
      handler: (req, reply) => executeOperation(executor, op.operationId, req, reply),
    });
  }
}

/** One request through the executor; aborted when the client hangs up before its answer was written (outbound fetches stop). */
async function executeOperation(executor: Executor, operationId: string, req: FastifyRequest, reply: FastifyReply) {
  const ct = req.headers['content-type'];
  const multipart = req.isMultipart();
  const hangUp = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) hangUp.abort();
  };
  reply.raw.once('close', onClose);
  try {
    const out = await executor.execute({
      operationId,
      authorization: req.headers.authorization,
      path: { ...(req.params as Record<string, unknown>) },
      query: { ...(req.query as Record<string, unknown>) },
      headers: req.headers as Record<string, unknown>,
      body: multipart ? multipartBody(req) : req.body,
      contentType: ct ? ct.split(';')[0].trim().toLowerCase() : undefined,
      signal: hangUp.signal,
    });
    return send(reply, out);
  } finally {
    reply.raw.off('close', onClose);
    if (multipart) drainRequest(req);
  }
}
