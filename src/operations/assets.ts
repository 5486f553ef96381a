// Workspace assets: GET /assets, the brand kits, custom avatars and custom voices people create,
// and the voices among them ranked for a script (MCP-only tool recommend_voice).
import { workspaceAssets } from '../services/assets/assets.ts';
import { recommendVoices } from '../services/assets/voice-recommendations.ts';
import {
  assetDeps,
  createAvatar,
  createBrandKit,
  createVoice,
  deleteAvatar,
  deleteBrandKit,
  deleteVoice,
  getBrandKit,
  getVoice,
  updateAvatar,
  updateBrandKit,
} from '../services/assets/workspace-assets.ts';
import { ApiError, badRequest } from '../errors.ts';
import { fieldErrors, invalid } from './executor.ts';
import { validate } from './validate.ts';

/** The fields of each kind of create_workspace_asset (as POST /brand-kits, /avatars, /voices take them) and those it needs. */
const KIND_FIELDS = {
  brand_kit: { allowed: ['name', 'colors', 'fonts', 'logo'], required: ['name'] },
  avatar: { allowed: ['name', 'image'], required: ['name', 'image'] },
  voice: { allowed: ['name', 'language', 'sample'], required: ['name', 'language', 'sample'] },
} as const;
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  listAssets: ({ ctx, auth }) => workspaceAssets(ctx.db, auth.orgId, ctx.config.publicBaseUrl, ctx.storage),
  recommend_voice: ({ ctx, auth, body }) => recommendVoices(ctx, auth.orgId, body),
  createBrandKit: ({ ctx, auth, body }) => createBrandKit(assetDeps(ctx), auth.orgId, body),
  getBrandKit: ({ ctx, auth, path }) => getBrandKit(assetDeps(ctx), auth.orgId, path.id),
  updateBrandKit: ({ ctx, auth, path, body }) => updateBrandKit(assetDeps(ctx), auth.orgId, path.id, body),
  deleteBrandKit: ({ ctx, auth, path }) => deleteBrandKit(assetDeps(ctx), auth.orgId, path.id),
  createAvatar: ({ ctx, auth, body }) => createAvatar(assetDeps(ctx), auth.orgId, body),
  updateAvatar: ({ ctx, auth, path, body }) => updateAvatar(assetDeps(ctx), auth.orgId, path.id, body),
  deleteAvatar: ({ ctx, auth, path }) => deleteAvatar(assetDeps(ctx), auth.orgId, path.id),
  createVoice: ({ ctx, auth, body }) => createVoice(assetDeps(ctx), auth.orgId, body),
  getVoice: ({ ctx, auth, path }) => getVoice(assetDeps(ctx), auth.orgId, path.id),
  deleteVoice: ({ ctx, auth, path }) => deleteVoice(assetDeps(ctx), auth.orgId, path.id),
  create_workspace_asset: ({ ctx, auth, body }) => {
    const { kind, ...fields } = body;
    const spec = KIND_FIELDS[kind];
    const errors = [
      ...Object.keys(fields)
        .filter((f) => !(spec.allowed as readonly string[]).includes(f))
        .map((f) => ({ field: `body.${f}`, message: `does not apply to kind ${kind} (its fields: ${spec.allowed.join(', ')})` })),
      ...spec.required.filter((f) => !(f in fields)).map((f) => ({ field: `body.${f}`, message: `is required for kind ${kind}` })),
    ];
    if (errors.length) throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);
    const deps = assetDeps(ctx);
    if (kind === 'brand_kit') return createBrandKit(deps, auth.orgId, fields);
    if (kind === 'avatar') return createAvatar(deps, auth.orgId, fields as { name: string; image: string });
    return createVoice(deps, auth.orgId, fields as { name: string; language: string; sample: string });
  },
  delete_workspace_asset: ({ ctx, auth, body }) => {
    const deps = assetDeps(ctx);
    const deleted =
      body.kind === 'brand_kit'
        ? deleteBrandKit(deps, auth.orgId, brandKitIdArgument(body.id))
        : body.kind === 'avatar'
          ? deleteAvatar(deps, auth.orgId, body.id)
          : deleteVoice(deps, auth.orgId, body.id);
    // The services name the REST path parameter; here the id is the tool's argument `id`.
    return deleted.catch((err: unknown) => {
      if (err instanceof ApiError && err.context.field === 'path.id') err.context.field = 'id';
      throw err;
    });
  },
});

/**
 * A brand kit id given as the tool's string argument, read as DELETE /brand-kits/{id} reads its
 * path: by that operation's own parameter validator, so "01", "+1", " 1", "1e0", 0 and ids past
 * 2^53−1 are refused as there (400 naming `id`), and an id in range that names no kit is 404.
 */
function brandKitIdArgument(id: string): number {
  const path: Record<string, unknown> = { id };
  const { errors, firstOnly } = validate('params', 'deleteBrandKit__path', path);
  if (errors) throw invalid(fieldErrors('arguments', errors), firstOnly);
  return path.id as number;
}
