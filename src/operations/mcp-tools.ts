// Handlers of the MCP-only tools (spec: top-level `x-mcp-only-tools`), and the path they take:
// the same steps as the operation executor (scope → plan → validate with the generated
// `mcp__<name>` validator → handler), errors thrown as ApiError. Tools whose capability lands in
// a later issue are listed in PENDING_MCP_TOOLS (pending.ts) and answer `not_implemented`.
import { eq } from 'drizzle-orm';
import type { components } from '../../generated/openapi.d.ts';
import toolsJson from '../../generated/mcp-tools.json' with { type: 'json' };
import type { AppContext } from '../context.ts';
import { organizations } from '../db/schema/index.ts';
import { ApiError } from '../errors.ts';
import type { AuthContext } from '../services/api-keys.ts';
import { listSoundEffects } from '../media/sound-effects.ts';
import { workspaceAssets } from '../services/assets.ts';
import { importEditorMediaFromUrl } from '../services/editor/uploads.ts';
import { rankVoices } from '../services/voice-recommendations.ts';
import { fieldErrors, invalid, requirePaidPlan, requireScope, type OperationInfo } from './executor.ts';
import { validate } from './validate.ts';

type Schemas = components['schemas'];

export interface McpToolInput<A> {
  args: A;
  auth: AuthContext;
  ctx: AppContext;
  tool: string;
  /** Aborted when the MCP client went away. */
  signal?: AbortSignal;
}

export type McpToolHandler<A = never, R = unknown> = (input: McpToolInput<A>) => Promise<R> | R;

/** One handler per implemented MCP-only tool, named by the spec. */
export const MCP_ONLY_HANDLERS: Record<string, McpToolHandler<never, object>> = {
  get_workspace: (async ({ auth, ctx }: McpToolInput<Schemas['GetWorkspaceInput']>): Promise<Schemas['Workspace']> => {
    const [org] = await ctx.db.select().from(organizations).where(eq(organizations.id, auth.orgId));
    if (!org) throw new ApiError('not_found', 'The workspace of this token no longer exists', { id: auth.orgId });
    return {
      object: 'workspace',
      organization: { id: org.id, name: org.name },
      plan: org.plan,
      credits: org.credits,
      scopes: auth.scopes as Schemas['Scope'][],
    };
  }) as McpToolHandler<never, object>,

  recommend_voice: (async ({ args, auth, ctx }: McpToolInput<Schemas['RecommendVoiceInput']>): Promise<Schemas['VoiceRecommendations']> => {
    const { voices } = await workspaceAssets(ctx.db, auth.orgId, ctx.config.publicBaseUrl);
    const ranked = rankVoices(voices, { script: args.script, language: args.language, style: args.style });
    return { object: 'voice_recommendations', data: ranked.slice(0, args.limit ?? 5) };
  }) as McpToolHandler<never, object>,

  list_editor_sound_effects: (async ({ args, ctx }: McpToolInput<Schemas['ListEditorSoundEffectsInput']>): Promise<Schemas['SoundEffectList']> => ({
    object: 'list',
    data: await listSoundEffects(ctx.storage, { query: args.query, category: args.category, limit: args.limit }),
  })) as McpToolHandler<never, object>,

  upload_editor_media_from_url: (async ({ args, auth, ctx, signal }: McpToolInput<Schemas['UploadEditorMediaFromUrlInput']>): Promise<Schemas['EditorMediaUpload']> =>
    importEditorMediaFromUrl(ctx, auth.orgId, args, signal)) as McpToolHandler<never, object>,
};

export interface McpOnlyToolInfo {
  name: string;
  scopes: string[];
  requiresPaidPlan: boolean;
}

/** The MCP-only tools of the generated tool table. */
export const MCP_ONLY_TOOLS: McpOnlyToolInfo[] = (toolsJson as { tools: (McpOnlyToolInfo & { operationId: string | null })[] }).tools
  .filter((t) => t.operationId === null)
  .map(({ name, scopes, requiresPaidPlan }) => ({ name, scopes, requiresPaidPlan }));

export interface McpOnlyExecutor {
  execute(name: string, args: Record<string, unknown>, auth: AuthContext, signal?: AbortSignal): Promise<object>;
}

export function createMcpOnlyExecutor(ctx: AppContext, handlers: Map<string, McpToolHandler<never, object>>): McpOnlyExecutor {
  const infos = new Map(MCP_ONLY_TOOLS.map((t) => [t.name, t]));
  return {
    async execute(name, args, auth, signal) {
      const info = infos.get(name);
      const handler = handlers.get(name);
      if (!info || !handler) throw new ApiError('not_found', `Unknown tool ${name}`);
      if (info.scopes.length > 0) requireScope({ operationId: name, scopes: info.scopes } as OperationInfo, auth);
      if (info.requiresPaidPlan) requirePaidPlan(auth);
      const input = structuredClone(args ?? {});
      const { errors, firstOnly } = validate('body', `mcp__${name}`, input);
      if (errors) throw invalid(fieldErrors('arguments', errors), firstOnly);
      return handler({ args: input as never, auth, ctx, tool: name, signal });
    },
  };
}
