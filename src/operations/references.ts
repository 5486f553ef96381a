// GET /reference-inspirations (seed 4.7, 4.8). Saving one (POST) is the reference-analysis
// pipeline's (src/pipelines/reference-analysis/handlers.ts).
import { listReferences } from '../services/references/references.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  listReferenceInspirations: ({ ctx, auth, query }) => listReferences(ctx, auth.orgId, query),
});
