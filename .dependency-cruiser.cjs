// The import rules of docs/ARCHITECTURE.md, checked by test/contract/architecture.test.ts (npm test)
// and `npm run lint:imports`: each layer of src/ imports only the layers below it, type-only imports
// included. Top to bottom; a folder's files may import each other.
const LAYERS = [
  // Processes: the service, the worker, the admin CLI, start-up and shutdown.
  ['entry', '^src/(main|worker-main|server|lifecycle)\\.ts$|^src/(boot|cli)/'],
  // Transports: HTTP (the REST adapter and the other routes), MCP, the OAuth authorization server.
  ['adapters', '^src/(http|mcp|oauth)/'],
  // The executor, the binder and the handlers of domains without a pipeline.
  ['operations', '^src/operations/'],
  // One folder per pipeline (request checks and price, handlers, job, stages, rows) and their list.
  ['pipelines', '^src/pipelines/'],
  // The resource lifecycle and the stage runner every pipeline uses.
  ['kernel', '^src/kernel/'],
  // Domain logic without a pipeline of its own: billing, catalog, assets, editor, references, webhooks, social, workspaces.
  ['services', '^src/services/'],
  // Capabilities and their engines (local, hosted, self-hosted) behind one registry.
  ['engines', '^src/engines/'],
  // pg-boss, defineJob and sending a job inside a transaction.
  ['jobs', '^src/jobs/'],
  // ffmpeg, probing, image analysis, captions, work folders, the guarded media fetch.
  ['media', '^src/media/'],
  // The database, stored bytes and the guarded client for user URLs.
  ['base', '^src/(db|storage|net)/'],
  // Configuration, errors, logging, metrics, the handler types, process liveness.
  ['leaf', '^src/(config|errors|logger|metrics|handlers|liveness)\\.ts$'],
];

const above = (i) => LAYERS.slice(0, i).map(([, p]) => `(${p})`).join('|');

module.exports = {
  forbidden: [
    ...LAYERS.flatMap(([name, from], i) =>
      i === 0 ? [] : [{ name: `${name}-imports-upward`, comment: `${name} may import only the layers below it (docs/ARCHITECTURE.md)`, severity: 'error', from: { path: from }, to: { path: above(i) } }],
    ),
    {
      // src/context.ts is the type of what every handler and stage is handed (AppContext): it names
      // the parts' types and imports nothing at run time, so every layer may import it.
      name: 'context-is-types-only',
      severity: 'error',
      from: { path: '^src/context\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'transports-reach-data-through-operations',
      comment: 'HTTP and MCP reach the database through operations and services, never directly',
      severity: 'error',
      from: { path: '^src/(http|mcp)/' },
      to: { path: '^src/db/(schema|client)' , dependencyTypesNot: ['type-only'] },
    },
    { name: 'no-cycles', comment: 'modules form no cycle of value imports (types may refer back)', severity: 'error', from: { path: '^src/' }, to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } } },
    { name: 'generated-is-generated', comment: 'generated/ is compiled from the spec and imports nothing of src/', severity: 'error', from: { path: '^generated/' }, to: { path: '^src/' } },
    {
      name: 'scripts-use-pure-modules',
      comment:
        'scripts/ (generate, lint, previews, the test runner) may use the pure modules of src/, never the running service; the gallery (and its matrix runner) renders through the service, as a customer would',
      severity: 'error',
      from: { path: '^scripts/', pathNot: '^scripts/(gallery|lib/media-run)\\.ts$' },
      to: { path: `${LAYERS[0][1]}|${LAYERS[1][1]}|^src/(pipelines|kernel)/` },
    },
    { name: 'src-stands-alone', comment: 'src/ never imports tests, benchmarks or scripts', severity: 'error', from: { path: '^src/' }, to: { path: '^(test|bench|scripts)/' } },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules/' },
  },
};
