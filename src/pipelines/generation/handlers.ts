// POST /generations, GET /generations, GET /generations/{id} and POST /generations/{id}/cancel.
import { createGenerationBatch } from './request.ts';
import { listGenerations } from './list.ts';
import { cancelGeneration, getGeneration } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createGeneration: ({ ctx, auth, body, headers }) => createGenerationBatch(ctx, auth.orgId, body, headers['idempotency-key']),
  getGeneration: ({ ctx, auth, path }) => getGeneration(ctx, auth.orgId, path.id),
  listGenerations: ({ ctx, auth, query }) => listGenerations(ctx, auth.orgId, query),
  cancelGeneration: ({ ctx, auth, path }) => cancelGeneration(ctx, auth.orgId, path.id),
});
