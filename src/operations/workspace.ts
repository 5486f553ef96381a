// The caller's workspace (MCP-only tool get_workspace): organization, plan, credits and scopes;
// its credit balance and ledger (GET /credits, GET /credits/transactions).
import { getCreditBalance, listCreditTransactions } from '../services/billing/ledger.ts';
import { getWorkspace } from '../services/workspaces/organizations.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  get_workspace: ({ ctx, auth }) => getWorkspace(ctx.db, auth),
  getCreditBalance: ({ ctx, auth }) => getCreditBalance(ctx, auth.orgId),
  listCreditTransactions: ({ ctx, auth, query }) => listCreditTransactions(ctx, auth.orgId, query),
});
