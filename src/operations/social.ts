// Social accounts (MCP-only tool list_social_accounts): the workspace's connected accounts. Publishing
// is the social-publication pipeline's (src/pipelines/social-publication/handlers.ts).
import { describeAccount, listAccounts, type SocialAccountRow } from '../services/social/accounts.ts';
import { defineHandlers } from '../handlers.ts';

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
});
