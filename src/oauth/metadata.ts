// The well-known documents:
//   GET /.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata of the /mcp resource (the
//                                                    MCP endpoint's 401 challenge points here)
//   GET /.well-known/oauth-authorization-server      RFC 8414 metadata of this server
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.json' with { type: 'json' };
import { SCOPES } from '../services/workspaces/api-keys.ts';
import type { OAuthServer } from './http.ts';

const sendJson = (reply: FastifyReply, body: string) =>
  reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(body);

export function registerMetadata(app: FastifyInstance, { urls }: OAuthServer): void {
  const protectedResource = JSON.stringify({
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: (openapi as { info: { title: string } }).info.title,
    resource_documentation: urls.docs,
  });
  const prm = async (_req: FastifyRequest, reply: FastifyReply) => sendJson(reply, protectedResource);
  app.get('/.well-known/oauth-protected-resource', prm);
  app.get('/.well-known/oauth-protected-resource/mcp', prm);

  const authMethods = ['none', 'client_secret_basic', 'client_secret_post'];
  const serverMetadata = JSON.stringify({
    issuer: urls.issuer,
    authorization_endpoint: urls.authorize,
    token_endpoint: urls.token,
    registration_endpoint: urls.register,
    revocation_endpoint: urls.revoke,
    scopes_supported: SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: urls.docs,
  });
  app.get('/.well-known/oauth-authorization-server', async (_req, reply) => sendJson(reply, serverMetadata));
}
