// Social publishing (MCP-only tools): the workspace's connected accounts and its publications.
import { describeAccount, listAccounts, type SocialAccountRow } from '../services/social/accounts.ts';
import { listPublications, publish, requirePublication } from '../services/social/publications.ts';
import { defineHandlers } from './types.ts';

/** A connection as list_social_accounts shows it (the contract says reauthorization_required for needs_reauth). */
function toolAccount(row: SocialAccountRow) {
  const a = describeAccount(row);
  return {
    id: a.id,
    platform: a.platform,
    username: a.handle,
    display_name: a.display_name,
    avatar_url: null,
    status: a.status === 'connected' ? ('connected' as const) : ('reauthorization_required' as const),
    capabilities: a.capabilities,
  };
}

export const handlers = defineHandlers({
  list_social_accounts: async ({ ctx, auth, body }) => ({
    object: 'list' as const,
    data: (await listAccounts(ctx.db, auth.orgId, body.platform)).map(toolAccount),
  }),
  publish_media_to_social: ({ ctx, auth, body, signal }) => publish(ctx, auth.orgId, body, signal),
  get_social_publication: ({ ctx, auth, body }) => requirePublication(ctx, auth.orgId, body.id),
  list_social_publications: ({ ctx, auth, body }) => listPublications(ctx, auth.orgId, body.limit ?? 20),
});
