// The drizzle schema, one module per domain; drizzle-kit reads this index.
export * from './core.ts';
export * from './generations.ts';
export * from './mcp.ts';
export * from './editor.ts';
export * from './webhooks.ts';
export * from './slideshows.ts';
export * from './faceless.ts';
export * from './social.ts';
