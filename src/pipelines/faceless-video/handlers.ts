// POST /faceless-videos (GET /videos/{id} answers for faceless ids through the editor module's
// getVideo, which serves the whole shared id space).
import { createFacelessVideo } from './request.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createFacelessVideo: ({ ctx, auth, body, headers }) => createFacelessVideo(ctx, auth.orgId, body, headers['idempotency-key']),
});
