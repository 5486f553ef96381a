// Workspace assets (GET /assets) and the voices among them ranked for a script (MCP-only tool recommend_voice).
import { workspaceAssets } from '../services/assets/assets.ts';
import { recommendVoices } from '../services/assets/voice-recommendations.ts';
import { defineHandlers } from './types.ts';

export const handlers = defineHandlers({
  listAssets: ({ ctx, auth }) => workspaceAssets(ctx.db, auth.orgId, ctx.config.publicBaseUrl),
  recommend_voice: ({ ctx, auth, body }) => recommendVoices(ctx, auth.orgId, body),
});
