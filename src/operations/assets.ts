import { workspaceAssets } from '../services/assets.ts';
import { defineHandlers } from './types.ts';

export const handlers = defineHandlers({
  listAssets: ({ ctx, auth }) => workspaceAssets(ctx.db, auth.orgId, ctx.config.publicBaseUrl),
});
