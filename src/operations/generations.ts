// POST /generations and GET /generations/{id}.
import { createGenerationBatch, getGeneration } from '../services/generations/generations.ts';
import { defineHandlers } from './types.ts';

export const handlers = defineHandlers({
  createGeneration: ({ ctx, auth, body, headers }) => createGenerationBatch(ctx, auth.orgId, body, headers['idempotency-key']),
  getGeneration: ({ ctx, auth, path }) => getGeneration(ctx, auth.orgId, path.id),
});
