// Editor projects, the editor media library and timeline edits; plus GET /videos and GET /videos/{id}
// (the shared integer id space of faceless and editor videos) and the editor's MCP-only tools
// (the sound effect library, media imported from a URL). Exports are the editor-export pipeline's
// (src/pipelines/editor-export/handlers.ts).
import { listSoundEffects } from '../media/sound-effects.ts';
import { listEditorMedia } from '../services/editor/media.ts';
import {
  addEditorMedia,
  applyEditorEdits,
  createEditorVideo,
  getEditorVideo,
  getVideoStatus,
  listEditorVideos,
} from '../services/editor/projects.ts';
import { listVideos } from '../services/editor/video-list.ts';
import { importEditorMediaFromUrl, uploadJson, uploadMultipart } from '../services/editor/uploads.ts';
import { MultipartBody } from '../handlers.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  createEditorVideo: ({ ctx, auth, body }) => createEditorVideo(ctx, auth.orgId, body),
  listEditorVideos: ({ ctx, auth, query }) => listEditorVideos(ctx, auth.orgId, query),
  getEditorVideo: ({ ctx, auth, path }) => getEditorVideo(ctx, auth.orgId, path.id),
  // The deprecated POST …/edits alias (applyEditorEditsViaPost) is bound to this same handler.
  applyEditorEdits: ({ ctx, auth, path, body, signal }) => applyEditorEdits(ctx, auth.orgId, path.id, body, signal),
  addEditorMedia: ({ ctx, auth, path, body, signal }) => addEditorMedia(ctx, auth.orgId, path.id, body, signal),
  listEditorMedia: ({ ctx, auth, query }) => listEditorMedia(ctx, auth.orgId, query),
  uploadEditorMedia: ({ ctx, auth, body }) => {
    const raw: unknown = body;
    return raw instanceof MultipartBody ? uploadMultipart(ctx, auth.orgId, raw.parts()) : uploadJson(ctx, auth.orgId, body);
  },
  getVideo: ({ ctx, auth, path }) => getVideoStatus(ctx, auth.orgId, path.id),
  listVideos: ({ ctx, auth, query }) => listVideos(ctx, auth.orgId, query),
  list_editor_sound_effects: async ({ ctx, body }) => ({ object: 'list', data: await listSoundEffects(ctx.storage, body) }),
  upload_editor_media_from_url: ({ ctx, auth, body, signal }) => importEditorMediaFromUrl(ctx, auth.orgId, body, signal),
});
