// The compiler from spec/openapi.yaml to the files in generated/. Pure: spec in, file contents out.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Options as AjvOptions } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { renderSkill } from './skill.ts';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export const SCHEMA_ID = 'https://media-api.local/components';

export interface ParamInfo {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  array: boolean;
  schema: JsonObject;
  description?: string;
}

export interface McpToolEntry {
  name: string;
  description?: string;
  fixed?: JsonObject;
}

export interface OperationIndexEntry {
  operationId: string;
  method: string;
  path: string;
  routePath: string;
  tag: string;
  summary: string;
  description: string;
  deprecated: boolean;
  aliasOf: string | null;
  /** Any one of these scopes grants access; empty means no authentication. */
  scopes: string[];
  params: ParamInfo[];
  requestBody: { required: boolean; contentTypes: string[] } | null;
  responses: Record<string, { contentType: string | null; description: string }>;
  successStatus: number;
  mcpTools: McpToolEntry[];
}

export interface OperationIndex {
  title: string;
  version: string;
  operations: OperationIndexEntry[];
  mcpOnlyTools: JsonObject[];
}

const clone = <T>(v: T): T => structuredClone(v);

/** Resolves a local `#/components/...` reference inside the spec. */
export function resolveRef(spec: JsonObject, ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, got ${ref}`);
  let node: Json = spec;
  for (const part of ref.slice(2).split('/')) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !(key in node)) {
      throw new Error(`Unresolvable $ref ${ref}`);
    }
    node = (node as JsonObject)[key];
  }
  return node;
}

function deref<T extends Json>(spec: JsonObject, node: T): T {
  let cur: Json = node;
  const seen = new Set<string>();
  while (cur && typeof cur === 'object' && !Array.isArray(cur) && typeof cur.$ref === 'string') {
    if (seen.has(cur.$ref)) throw new Error(`Circular $ref ${cur.$ref}`);
    seen.add(cur.$ref);
    cur = resolveRef(spec, cur.$ref);
  }
  return cur as T;
}

/**
 * Turns an OpenAPI 3.1 schema into one AJV compiles in strict mode: drops the OpenAPI-only
 * annotations (`example`, `xml`, `externalDocs`, `x-*`) and points component refs at the
 * shared components schema.
 */
export function toAjvSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toAjvSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'example' || k === 'xml' || k === 'externalDocs' || k.startsWith('x-')) continue;
    if (k === '$ref' && typeof v === 'string') {
      const m = /^#\/components\/schemas\/(.+)$/.exec(v);
      if (!m) throw new Error(`Schema $ref must point at #/components/schemas, got ${v}`);
      out.$ref = `${SCHEMA_ID}#/$defs/${m[1]}`;
      continue;
    }
    // `properties`, `$defs`, `patternProperties` map names to schemas: keep every name.
    if ((k === 'properties' || k === '$defs' || k === 'patternProperties' || k === 'dependentSchemas') && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toAjvSchema(s)]));
      continue;
    }
    // AJV derives the discriminator mapping from each branch's `const`; it refuses an explicit one.
    if (k === 'discriminator' && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = { propertyName: (v as JsonObject).propertyName };
      continue;
    }
    if (k === 'examples' || k === 'default' || k === 'const' || k === 'enum') {
      out[k] = clone(v);
      continue;
    }
    out[k] = toAjvSchema(v);
  }
  return out;
}

function routePath(p: string): string {
  return p.replace(/\{([^}]+)\}/g, ':$1');
}

function scopesOf(security: Json | undefined): string[] {
  if (!Array.isArray(security)) throw new Error('Every operation must declare `security` (use [] for public operations)');
  const scopes = new Set<string>();
  for (const req of security) {
    for (const list of Object.values(req as JsonObject)) for (const s of list as string[]) scopes.add(s);
  }
  return [...scopes];
}

export function buildIndex(spec: JsonObject): OperationIndex {
  const operations: OperationIndexEntry[] = [];
  const ids = new Set<string>();
  const paths = (spec.paths ?? {}) as JsonObject;
  for (const [p, itemRaw] of Object.entries(paths)) {
    const item = deref(spec, itemRaw) as JsonObject;
    const shared = (item.parameters ?? []) as Json[];
    for (const method of METHODS) {
      const op = item[method] as JsonObject | undefined;
      if (!op) continue;
      const operationId = op.operationId as string;
      if (!operationId) throw new Error(`${method.toUpperCase()} ${p} has no operationId`);
      if (ids.has(operationId)) throw new Error(`Duplicate operationId ${operationId}`);
      ids.add(operationId);
      const params: ParamInfo[] = [];
      for (const raw of [...shared, ...((op.parameters ?? []) as Json[])]) {
        const prm = deref(spec, raw) as JsonObject;
        if (prm.in === 'cookie') throw new Error(`${operationId}: cookie parameters are not supported`);
        const schema = (prm.schema ?? {}) as JsonObject;
        const resolved = deref(spec, schema) as JsonObject;
        const entry: ParamInfo = {
          name: prm.in === 'header' ? (prm.name as string).toLowerCase() : (prm.name as string),
          in: prm.in as ParamInfo['in'],
          required: prm.in === 'path' ? true : Boolean(prm.required),
          array: resolved.type === 'array',
          schema,
        };
        if (typeof prm.description === 'string') entry.description = prm.description;
        const dup = params.findIndex((x) => x.in === entry.in && x.name === entry.name);
        if (dup >= 0) params[dup] = entry;
        else params.push(entry);
      }
      let requestBody: OperationIndexEntry['requestBody'] = null;
      if (op.requestBody) {
        const rb = deref(spec, op.requestBody) as JsonObject;
        requestBody = { required: Boolean(rb.required), contentTypes: Object.keys((rb.content ?? {}) as JsonObject) };
      }
      const responses: OperationIndexEntry['responses'] = {};
      for (const [status, rRaw] of Object.entries((op.responses ?? {}) as JsonObject)) {
        const r = deref(spec, rRaw) as JsonObject;
        const types = Object.keys((r.content ?? {}) as JsonObject);
        responses[status] = { contentType: types[0] ?? null, description: String(r.description ?? '') };
      }
      const success = Object.keys(responses).map(Number).filter((s) => s >= 200 && s < 300);
      if (success.length === 0) throw new Error(`${operationId} declares no 2xx response`);
      const tags = (op.tags ?? []) as string[];
      const tools = (op['x-mcp-tools'] ?? null) as McpToolEntry[] | null;
      if (!Array.isArray(tools)) throw new Error(`${operationId} must declare x-mcp-tools (use [] for none)`);
      operations.push({
        operationId,
        method: method.toUpperCase(),
        path: p,
        routePath: routePath(p),
        tag: tags[0] ?? 'default',
        summary: String(op.summary ?? ''),
        description: String(op.description ?? ''),
        deprecated: Boolean(op.deprecated),
        aliasOf: (op['x-alias-of'] as string | undefined) ?? null,
        scopes: scopesOf(op.security),
        params,
        requestBody,
        responses,
        successStatus: Math.min(...success),
        mcpTools: tools.map((t) => ({ ...t })),
      });
    }
  }
  for (const op of operations) {
    if (op.aliasOf && !ids.has(op.aliasOf)) throw new Error(`${op.operationId} is x-alias-of unknown operation ${op.aliasOf}`);
  }
  const info = spec.info as JsonObject;
  return {
    title: String(info.title),
    version: String(info.version),
    operations,
    mcpOnlyTools: ((spec['x-mcp-only-tools'] ?? []) as JsonObject[]).map(clone),
  };
}

function paramsSchema(params: ParamInfo[], where: ParamInfo['in']): JsonObject {
  const sel = params.filter((p) => p.in === where);
  const properties: JsonObject = {};
  for (const p of sel) properties[p.name] = toAjvSchema(p.schema);
  return {
    type: 'object',
    properties,
    required: sel.filter((p) => p.required).map((p) => p.name),
    // Unknown query parameters are refused like unknown body fields; headers are open.
    additionalProperties: where === 'header',
  };
}

function jsonContent(content: Json | undefined): JsonObject | undefined {
  if (!content || typeof content !== 'object' || Array.isArray(content)) return undefined;
  for (const [type, media] of Object.entries(content)) {
    if (type === 'application/json' || type.endsWith('+json')) return ((media as JsonObject).schema ?? {}) as JsonObject;
  }
  return undefined;
}

function makeAjv(extra: AjvOptions) {
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    allowUnionTypes: true,
    discriminator: true,
    code: { source: true, esm: false, lines: true },
    ...extra,
  });
  addFormats.default(ajv);
  return ajv;
}

function standalone(spec: JsonObject, schemas: Record<string, JsonObject>, options: AjvOptions, log: (m: string) => void, label: string): string {
  const ajv = makeAjv(options);
  const components = (spec.components ?? {}) as JsonObject;
  ajv.addSchema({ $id: SCHEMA_ID, $defs: toAjvSchema((components.schemas ?? {}) as Json) } as JsonObject);
  const refs: Record<string, string> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const id = `${SCHEMA_ID}/${label}/${name}`;
    try {
      ajv.addSchema({ ...schema, $id: id });
      ajv.getSchema(id); // compile now so a bad schema names its operation
    } catch (err) {
      throw new Error(`${label} schema ${name} does not compile: ${(err as Error).message}`);
    }
    refs[name] = id;
  }
  log(`${label}: ${Object.keys(refs).length} validators`);
  const code = standaloneCode.default(ajv, refs);
  return `// Generated by scripts/generate.ts from spec/openapi.yaml. Do not edit.\n${code}\n`;
}

const dts = (names: string[]) =>
  `// Generated by scripts/generate.ts from spec/openapi.yaml. Do not edit.\n` +
  `import type { ValidateFunction } from 'ajv';\n` +
  `declare const validators: {\n${names.map((n) => `  ${JSON.stringify(n)}: ValidateFunction;\n`).join('')}};\n` +
  `export = validators;\n`;

export async function buildArtifacts(spec: JsonObject, log: (m: string) => void): Promise<Record<string, string>> {
  const index = buildIndex(spec);
  log(`${index.operations.length} operations, ${index.mcpOnlyTools.length} MCP-only tools`);

  const bodies: Record<string, JsonObject> = {};
  const params: Record<string, JsonObject> = {};
  const responses: Record<string, JsonObject> = {};
  const paths = spec.paths as JsonObject;
  for (const op of index.operations) {
    const raw = deref(spec, (deref(spec, paths[op.path]) as JsonObject)[op.method.toLowerCase()] as JsonObject);
    if (raw.requestBody) {
      const schema = jsonContent((deref(spec, raw.requestBody) as JsonObject).content);
      if (schema) bodies[`${op.operationId}`] = toAjvSchema(schema) as JsonObject;
    }
    for (const where of ['path', 'query', 'header'] as const) {
      params[`${op.operationId}__${where}`] = paramsSchema(op.params, where);
    }
    for (const [status, rRaw] of Object.entries(raw.responses as JsonObject)) {
      const r = deref(spec, rRaw) as JsonObject;
      const content = r.content as JsonObject | undefined;
      let schema = jsonContent(content);
      if (!schema && content) {
        const first = Object.values(content)[0] as JsonObject | undefined;
        schema = (first?.schema as JsonObject | undefined) ?? { type: 'string' };
      }
      responses[`${op.operationId}__${status}`] = schema ? (toAjvSchema(schema) as JsonObject) : { type: 'null' };
      // Declared response headers, checked (as strings coerced to their types) by the test suite.
      const headerProps: JsonObject = {};
      const requiredHeaders: string[] = [];
      for (const [name, hRaw] of Object.entries((r.headers ?? {}) as JsonObject)) {
        const h = deref(spec, hRaw) as JsonObject;
        headerProps[name.toLowerCase()] = toAjvSchema((h.schema ?? {}) as Json);
        if (h.required) requiredHeaders.push(name.toLowerCase());
      }
      params[`${op.operationId}__${status}__headers`] = { type: 'object', properties: headerProps, required: requiredHeaders, additionalProperties: true };
    }
  }
  // The envelope on its own, for responses outside any operation (unknown routes).
  responses.Error = { $ref: `${SCHEMA_ID}#/$defs/Error` };
  for (const tool of index.mcpOnlyTools) {
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      if (tool[key]) (key === 'inputSchema' ? bodies : responses)[`mcp__${tool.name}`] = toAjvSchema(tool[key]) as JsonObject;
    }
  }

  const types = astToString(await openapiTS(structuredClone(spec) as never, { alphabetize: false, exportType: false }));

  return {
    'openapi.json': `${JSON.stringify(spec, null, 2)}\n`,
    'openapi.d.ts': `// Generated by scripts/generate.ts (openapi-typescript) from spec/openapi.yaml. Do not edit.\n${types}`,
    'operations.json': `${JSON.stringify(index, null, 2)}\n`,
    // Bodies: no coercion, no removal of unknown fields; defaults are filled in.
    'request-validators.cjs': standalone(spec, bodies, { useDefaults: true, coerceTypes: false, removeAdditional: false }, log, 'request'),
    'request-validators.d.cts': dts(Object.keys(bodies)),
    // Parameters (and response headers) arrive as strings: coerce to the declared type ("array" wraps a single value).
    'param-validators.cjs': standalone(spec, params, { useDefaults: true, coerceTypes: 'array', removeAdditional: false }, log, 'params'),
    'param-validators.d.cts': dts(Object.keys(params)),
    // Responses: validated exactly as sent, nothing filled in.
    'response-validators.cjs': standalone(spec, responses, { useDefaults: false, coerceTypes: false }, log, 'response'),
    'response-validators.d.cts': dts(Object.keys(responses)),
    'skill.md': renderSkill(spec, index),
  };
}
