// Social publishing (MCP-only tools): publish media to connected accounts, read, list and cancel publications.
import { defineHandlers } from '../../handlers.ts';
import { publish } from './request.ts';
import { cancelPublication, listPublications, requirePublication } from './rows.ts';

export const handlers = defineHandlers({
  publish_media_to_social: ({ ctx, auth, body, signal }) => publish(ctx, auth.orgId, body, signal),
  get_social_publication: ({ ctx, auth, body }) => requirePublication(ctx, auth.orgId, body.id),
  cancel_social_publication: ({ ctx, auth, body }) => cancelPublication(ctx, auth.orgId, body.id),
  list_social_publications: ({ ctx, auth, body }) => listPublications(ctx, auth.orgId, body.limit ?? 20),
});
