// POST /faceless-videos (GET /videos/{id} answers for faceless ids through the editor module's
// getVideo, which serves the whole shared id space) and POST /videos/{id}/cancel (faceless videos).
import { createFacelessVideo } from './request.ts';
import { cancelFacelessVideo } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createFacelessVideo: ({ ctx, auth, body, headers }) => createFacelessVideo(ctx, auth.orgId, body, headers['idempotency-key']),
  cancelVideo: ({ ctx, auth, path }) => cancelFacelessVideo(ctx, auth.orgId, path.id),
});
