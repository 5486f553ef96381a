// POST /oauth/register: RFC 7591 dynamic client registration, limited per client IP (each
// registration stores a client).
import type { FastifyInstance } from 'fastify';
import { OAUTH_LIMITS, waitText } from '../services/oauth/oauth-limits.ts';
import { OAuthError, registerClient } from '../services/oauth/oauth.ts';
import { FORM_LIMIT, limited, sendOAuthError, type OAuthServer } from './http.ts';

export function registerRegistration(app: FastifyInstance, { ctx, limiter }: OAuthServer): void {
  app.post('/oauth/register', { bodyLimit: FORM_LIMIT }, async (req, reply) => {
    try {
      const decision = await limiter(OAUTH_LIMITS.register).consume(req.ip);
      if (!decision.allowed) {
        limited(reply, decision.retryAfterSeconds);
        throw new OAuthError(
          'temporarily_unavailable',
          `Too many client registrations from this address; retry in ${waitText(decision.retryAfterSeconds)}`,
          429,
        );
      }
      const client = await registerClient(ctx.db, req.body);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(client));
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      throw err;
    }
  });
}
