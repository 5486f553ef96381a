// POST /slideshows, GET /slideshows/{id} and POST /slideshows/{id}/cancel (MCP create_slideshow,
// get_slideshow, cancel_slideshow).
import { createSlideshow } from './request.ts';
import { cancelSlideshow, getSlideshow } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createSlideshow: ({ ctx, auth, body, headers }) => createSlideshow(ctx, auth.orgId, body, headers['idempotency-key']),
  getSlideshow: ({ ctx, auth, path }) => getSlideshow(ctx, auth.orgId, path.id),
  cancelSlideshow: ({ ctx, auth, path }) => cancelSlideshow(ctx, auth.orgId, path.id),
});
