// POST /slideshows and GET /slideshows/{id} (MCP create_slideshow, get_slideshow).
import { createSlideshow, getSlideshow } from '../services/slideshows/slideshows.ts';
import { defineHandlers } from './types.ts';

export const handlers = defineHandlers({
  createSlideshow: ({ ctx, auth, body, headers }) => createSlideshow(ctx, auth.orgId, body, headers['idempotency-key']),
  getSlideshow: ({ ctx, auth, path }) => getSlideshow(ctx, auth.orgId, path.id),
});
