// POST /slideshows and GET /slideshows/{id} (MCP create_slideshow, get_slideshow).
import { createSlideshow } from './request.ts';
import { getSlideshow } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createSlideshow: ({ ctx, auth, body, headers }) => createSlideshow(ctx, auth.orgId, body, headers['idempotency-key']),
  getSlideshow: ({ ctx, auth, path }) => getSlideshow(ctx, auth.orgId, path.id),
});
