// POST /slideshows, GET /slideshows, GET /slideshows/{id} and POST /slideshows/{id}/cancel (MCP
// create_slideshow, list_slideshows, get_slideshow, cancel_slideshow).
import { createSlideshow } from './request.ts';
import { listSlideshows } from './list.ts';
import { cancelSlideshow, getSlideshow } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createSlideshow: ({ ctx, auth, body, headers }) => createSlideshow(ctx, auth.orgId, body, headers['idempotency-key']),
  getSlideshow: ({ ctx, auth, path }) => getSlideshow(ctx, auth.orgId, path.id),
  listSlideshows: ({ ctx, auth, query }) => listSlideshows(ctx, auth.orgId, query),
  cancelSlideshow: ({ ctx, auth, path }) => cancelSlideshow(ctx, auth.orgId, path.id),
});
