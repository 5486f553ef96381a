// GET /models: the catalog of templates and AI models, serialised once per process.
import { catalogJson } from '../services/catalog/catalog.ts';
import { defineHandlers, Reply } from '../handlers.ts';

export const handlers = defineHandlers({
  listModels: ({ ctx }) =>
    new Reply({
      body: catalogJson(ctx.config.publicBaseUrl, ctx.config),
      raw: true,
      headers: { 'cache-control': 'public, max-age=60' },
    }),
});
