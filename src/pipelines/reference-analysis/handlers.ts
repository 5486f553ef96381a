// POST /reference-inspirations (seed 4.8): save a reference, analysed by the job.
import { defineHandlers } from '../../handlers.ts';
import { createReference } from './request.ts';

export const handlers = defineHandlers({
  createReferenceInspiration: ({ ctx, auth, body, headers }) => createReference(ctx, auth.orgId, body, headers['idempotency-key']),
});
