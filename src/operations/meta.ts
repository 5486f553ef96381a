// The published contract: GET /openapi.json and GET /skill.md, both compiled from the spec.
import { readFileSync } from 'node:fs';
import { defineHandlers, Reply } from './types.ts';

const openapiJson = readFileSync(new URL('../../generated/openapi.json', import.meta.url));
const skillMd = readFileSync(new URL('../../generated/skill.md', import.meta.url));

export const handlers = defineHandlers({
  getOpenApiDocument: () => new Reply({ body: openapiJson, raw: true, headers: { 'cache-control': 'public, max-age=300' } }),
  getSkill: () =>
    new Reply({ body: skillMd, raw: true, contentType: 'text/markdown; charset=utf-8', headers: { 'cache-control': 'public, max-age=300' } }),
});
