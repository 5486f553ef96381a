// CORS: bearer keys only, never cookies, so any origin may call the API (the spec declares `*`).
import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

export function registerCors(app: FastifyInstance): void {
  app.register(fastifyCors, {
    origin: '*',
    credentials: false,
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposedHeaders: [
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
      'WWW-Authenticate',
      'Mcp-Session-Id',
    ],
    maxAge: 600,
  });
}
