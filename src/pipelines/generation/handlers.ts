// POST /generations, GET /generations and GET /generations/{id}.
import { createGenerationBatch } from './request.ts';
import { listGenerations } from './list.ts';
import { getGeneration } from './rows.ts';
import { defineHandlers } from '../../handlers.ts';

export const handlers = defineHandlers({
  createGeneration: ({ ctx, auth, body, headers }) => createGenerationBatch(ctx, auth.orgId, body, headers['idempotency-key']),
  getGeneration: ({ ctx, auth, path }) => getGeneration(ctx, auth.orgId, path.id),
  listGenerations: ({ ctx, auth, query }) => listGenerations(ctx, auth.orgId, query),
});
