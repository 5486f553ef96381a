// The webhook endpoints of a workspace (REST /webhook-endpoints and their MCP tools).
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret } from '../services/webhooks/endpoints.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  listWebhookEndpoints: ({ ctx, auth }) => listEndpoints(ctx, auth.orgId),
  createWebhookEndpoint: ({ ctx, auth, body }) => createEndpoint(ctx, auth.orgId, body),
  getWebhookEndpoint: ({ ctx, auth, path }) => getEndpoint(ctx, auth.orgId, path.id),
  deleteWebhookEndpoint: ({ ctx, auth, path }) => deleteEndpoint(ctx, auth.orgId, path.id),
  rotateWebhookEndpointSecret: ({ ctx, auth, path }) => rotateSecret(ctx, auth.orgId, path.id),
});
