// GET and POST /reference-inspirations (seed 4.7, 4.8).
import { createReference, listReferences } from '../services/references/references.ts';
import { defineHandlers } from './types.ts';

export const handlers = defineHandlers({
  listReferenceInspirations: ({ ctx, auth, query }) => listReferences(ctx, auth.orgId, query),
  createReferenceInspiration: ({ ctx, auth, body, headers }) => createReference(ctx, auth.orgId, body, headers['idempotency-key']),
});
