// Editor exports: POST /editor/videos/{id}/exports, GET and DELETE …/exports/{export_id}.
import { defineHandlers } from '../../handlers.ts';
import { queueExport } from './request.ts';
import { cancelExport, getExport } from './rows.ts';

export const handlers = defineHandlers({
  exportEditorVideo: ({ ctx, auth, path, body }) => queueExport(ctx, auth.orgId, path.id, body),
  getEditorVideoExport: ({ ctx, auth, path }) => getExport(ctx, auth.orgId, path.id, path.export_id),
  cancelEditorVideoExport: ({ ctx, auth, path }) => cancelExport(ctx, auth.orgId, path.id, path.export_id),
});
