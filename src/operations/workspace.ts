// The caller's workspace (MCP-only tool get_workspace): organization, plan, credits and scopes.
import { getWorkspace } from '../services/workspaces/organizations.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  get_workspace: ({ ctx, auth }) => getWorkspace(ctx.db, auth),
});
