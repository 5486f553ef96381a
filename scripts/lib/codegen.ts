// The compiler from spec/openapi.yaml to the files in generated/. Pure: spec in, file contents out.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Options as AjvOptions } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { renderSkillPages, type SkillCatalog } from './skill.ts';
import {
  COMPACT_LEVELS,
  compactInput,
  mapDescriptions,
  MCP_LIST_MAX_BYTES,
  MCP_LIST_RESERVED_BYTES,
  MCP_TOOL_MAX_BYTES,
  portabilityFindings,
  restToTools,
  shallowOutput,
  toolDescription,
} from './mcp-compact.ts';
import type { ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import { CatalogDataError, schemaProblems } from '../../src/services/catalog/catalog-checks.ts';

import type {
  Json,
  JsonObject,
  McpArgRoute,
  McpMediaField,
  McpOnlyToolIndexEntry,
  McpToolEntry,
  McpToolRow,
  OperationIndex,
  OperationIndexEntry,
  ParamInfo,
} from '../../src/operations/operation-index.ts';

export type {
  IndexEntry,
  Json,
  JsonObject,
  McpArgRoute,
  McpOnlyToolIndexEntry,
  McpToolEntry,
  McpToolRow,
  OperationIndex,
  OperationIndexEntry,
  ParamInfo,
} from '../../src/operations/operation-index.ts';

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export const SCHEMA_ID = 'https://media-api.local/components';

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
    if (
      (k === 'properties' || k === '$defs' || k === 'patternProperties' || k === 'dependentSchemas') &&
      v &&
      typeof v === 'object' &&
      !Array.isArray(v)
    ) {
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
        const limit = rb['x-body-limit-bytes'];
        requestBody = {
          required: Boolean(rb.required),
          contentTypes: Object.keys((rb.content ?? {}) as JsonObject),
          limitBytes: typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? limit : null,
        };
      }
      const responses: OperationIndexEntry['responses'] = {};
      for (const [status, rRaw] of Object.entries((op.responses ?? {}) as JsonObject)) {
        const r = deref(spec, rRaw) as JsonObject;
        const types = Object.keys((r.content ?? {}) as JsonObject);
        responses[status] = { contentType: types[0] ?? null, description: String(r.description ?? '') };
      }
      const success = Object.keys(responses)
        .map(Number)
        .filter((s) => s >= 200 && s < 300);
      if (success.length === 0) throw new Error(`${operationId} declares no 2xx response`);
      const tags = (op.tags ?? []) as string[];
      const servers = (op.servers ?? item.servers) as JsonObject[] | undefined;
      const tools = (op['x-mcp-tools'] ?? null) as McpToolEntry[] | null;
      if (!Array.isArray(tools)) throw new Error(`${operationId} must declare x-mcp-tools (use [] for none)`);
      const scopes = scopesOf(op.security);
      operations.push({
        operationId,
        transport: 'http',
        method: method.toUpperCase(),
        path: p,
        routePath: routePath(p),
        ...(servers?.length ? { server: String(servers[0].url) } : {}),
        tag: tags[0] ?? 'default',
        summary: String(op.summary ?? ''),
        description: String(op.description ?? ''),
        deprecated: Boolean(op.deprecated),
        aliasOf: (op['x-alias-of'] as string | undefined) ?? null,
        rateLimit: (op['x-rate-limit'] as string | undefined) ?? null,
        scopes,
        requiresPaidPlan: scopes.length > 0,
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
  const mcpOnlyTools = mcpOnlyDeclarations(spec).map((tool) => mcpOnlyEntry(tool));
  for (const tool of mcpOnlyTools) {
    if (ids.has(tool.operationId)) throw new Error(`MCP-only tool ${tool.operationId} has the name of an operationId`);
    ids.add(tool.operationId);
  }
  const info = spec.info as JsonObject;
  return {
    title: String(info.title),
    version: String(info.version),
    operations,
    mcpOnlyTools,
  };
}

/** The spec's `x-mcp-only-tools` declarations, as written. */
export function mcpOnlyDeclarations(spec: JsonObject): JsonObject[] {
  const list = spec['x-mcp-only-tools'] ?? [];
  if (!Array.isArray(list)) throw new Error('x-mcp-only-tools must be a list');
  return list as JsonObject[];
}

/** The component a tool schema names (`{$ref: '#/components/schemas/X'}` → X), or undefined. */
function componentName(schema: Json | undefined): string | undefined {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || typeof schema.$ref !== 'string') return undefined;
  return /^#\/components\/schemas\/([A-Za-z0-9._-]+)$/.exec(schema.$ref)?.[1];
}

/**
 * An MCP-only tool as an entry of the operation index: the same shape as an operation, with no
 * method or path; its arguments are its JSON body. Its input and output schemas must name
 * components, so their types are generated (generated/mcp-only-tools.d.ts).
 */
function mcpOnlyEntry(tool: JsonObject): McpOnlyToolIndexEntry {
  const name = String(tool.name ?? '');
  if (!MCP_TOOL_NAME.test(name)) throw new Error(`MCP tool name "${name}" must match ${MCP_TOOL_NAME}`);
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    if (!componentName(tool[key]))
      throw new Error(`MCP-only tool ${name}: ${key} must be a $ref to #/components/schemas (its type is generated)`);
  }
  const scopes = tool.scopes;
  if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((x) => typeof x === 'string')) {
    throw new Error(`MCP-only tool ${name} must declare its scopes (a non-empty list; any one grants access)`);
  }
  const rateLimit = tool['x-rate-limit'];
  if (rateLimit !== undefined && typeof rateLimit !== 'string') throw new Error(`MCP-only tool ${name}: x-rate-limit must name a policy`);
  const description = String(tool.description ?? '').trim();
  return {
    operationId: name,
    transport: 'mcp',
    method: null,
    path: null,
    routePath: null,
    tag: typeof tool.tag === 'string' ? tool.tag : 'mcp',
    summary: String(tool.title ?? name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())),
    description,
    deprecated: false,
    aliasOf: null,
    rateLimit: rateLimit ?? null,
    scopes: [...(scopes as string[])],
    requiresPaidPlan: tool.requiresPaidPlan !== false,
    params: [],
    requestBody: { required: true, contentTypes: ['application/json'], limitBytes: null },
    responses: { '200': { contentType: 'application/json', description: 'The tool result.' } },
    successStatus: 200,
    mcpTools: [{ name }],
  };
}

// ---------------------------------------------------------------------------------------------
// The MCP tool table (generated/mcp-tools.json): one row per tool named in `x-mcp-tools` of an
// operation, plus the `x-mcp-only-tools`. Schemas are self-contained JSON Schema (every $ref
// inlined, no $schema, no OpenAPI-only keywords), as popular MCP clients require, then made
// compact and portable (scripts/lib/mcp-compact.ts): the list within MCP_LIST_MAX_BYTES (less the
// MCP_LIST_RESERVED_BYTES the server adds at run time), each tool within MCP_TOOL_MAX_BYTES, or
// generation fails.
// ---------------------------------------------------------------------------------------------

export const MCP_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// JSON Schema keeps the standard formats; OpenAPI's own (int32, int64, float, double, byte,
// binary, password) are type hints a JSON Schema validator would reject as unknown.
const JSON_SCHEMA_FORMATS = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);
const ANNOTATION_KEYS = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

/** Inlines every component $ref and drops what is not JSON Schema. Refuses cycles. */
export function toToolSchema(spec: JsonObject, node: Json, stack: string[] = []): Json {
  if (Array.isArray(node)) return node.map((n) => toToolSchema(spec, n, stack));
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (stack.includes(ref)) throw new Error(`MCP tool schemas must be finite: circular $ref ${[...stack, ref].join(' → ')}`);
    const target = toToolSchema(spec, resolveRef(spec, ref), [...stack, ref]) as JsonObject;
    const siblings = Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$ref'));
    const rest = toToolSchema(spec, siblings, stack) as JsonObject;
    if (Object.keys(rest).every((k) => ANNOTATION_KEYS.has(k))) return { ...target, ...rest };
    return { allOf: [target], ...rest };
  }
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (
      k === 'example' ||
      k === 'xml' ||
      k === 'externalDocs' ||
      k === 'discriminator' ||
      k === '$schema' ||
      k === '$id' ||
      k.startsWith('x-')
    )
      continue;
    if (k === 'format' && typeof v === 'string' && !JSON_SCHEMA_FORMATS.has(v)) continue;
    if (
      (k === 'properties' || k === 'patternProperties' || k === '$defs' || k === 'dependentSchemas') &&
      v &&
      typeof v === 'object' &&
      !Array.isArray(v)
    ) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toToolSchema(spec, s, stack)]));
      continue;
    }
    if (k === 'examples' || k === 'default' || k === 'const' || k === 'enum' || k === 'required') {
      out[k] = clone(v);
      continue;
    }
    out[k] = toToolSchema(spec, v, stack);
  }
  return out;
}

const isObjectSchema = (s: JsonObject) => s.type === 'object' || (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === 'object');

/**
 * The output schema of a tool: a shallow summary of its success object (top-level fields, their
 * types and enums; src: scripts/lib/mcp-compact.ts), which the error envelope of an `isError`
 * result satisfies too (clients such as the TypeScript SDK validate structuredContent against the
 * output schema on errors as well). None when the success body is not an object.
 */
function toolOutputSchema(spec: JsonObject, schema: Json | undefined): McpToolRow['outputSchema'] {
  if (!schema) return undefined;
  const s = toToolSchema(spec, schema) as JsonObject;
  return shallowOutput(s) as McpToolRow['outputSchema'];
}

/** The MCP tool annotations a spec declaration must give: all four, each a boolean. */
export const MCP_ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/**
 * The `x-mcp-annotations` declared on an operation or an MCP-only tool (src: spec/openapi.yaml
 * header), as written: refused when missing, when a key is missing or unknown, or not a boolean.
 * (The spec lint checks the same, spec/spectral.mjs; this keeps the generator from guessing.)
 */
export function declaredAnnotations(owner: string, value: Json | undefined): McpToolRow['annotations'] {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${owner} must declare x-mcp-annotations {${MCP_ANNOTATION_KEYS.join(', ')}}`);
  const unknown = Object.keys(value).filter((k) => !(MCP_ANNOTATION_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`${owner}: unknown key(s) in x-mcp-annotations: ${unknown.join(', ')}`);
  for (const k of MCP_ANNOTATION_KEYS)
    if (typeof value[k] !== 'boolean') throw new Error(`${owner}: x-mcp-annotations.${k} must be true or false`);
  return Object.fromEntries(MCP_ANNOTATION_KEYS.map((k) => [k, value[k]])) as McpToolRow['annotations'];
}

/**
 * The media URL fields of a result schema: every property marked `x-mcp-media` (src:
 * spec/openapi.yaml header), found through $refs, unions, objects and arrays (`[]` in the path).
 */
export function mediaFields(spec: JsonObject, schema: Json | undefined): McpMediaField[] {
  const found = new Map<string, McpMediaField>();
  const walk = (node: Json | undefined, path: string, refs: string[]) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    if (typeof node.$ref === 'string') {
      if (!refs.includes(node.$ref)) walk(resolveRef(spec, node.$ref), path, [...refs, node.$ref]);
      return;
    }
    for (const k of ['allOf', 'anyOf', 'oneOf'])
      if (Array.isArray(node[k])) for (const branch of node[k] as Json[]) walk(branch, path, refs);
    if (node.items) walk(node.items, `${path}[]`, refs);
    if (!node.properties || typeof node.properties !== 'object') return;
    for (const [name, prop] of Object.entries(node.properties as JsonObject)) {
      const at = path ? `${path}.${name}` : name;
      const mark = (deref(spec, prop) as JsonObject)['x-mcp-media'];
      if (mark !== undefined) found.set(at, mediaMark(at, mark));
      walk(prop, at, refs);
    }
  };
  walk(schema, '', []);
  return [...found.values()];
}

function mediaMark(path: string, mark: Json): McpMediaField {
  const m = (mark ?? {}) as JsonObject;
  const unknown = Object.keys(m).filter((k) => k !== 'mimeType' && k !== 'mimeTypeField');
  if (unknown.length || (typeof m.mimeType !== 'string') === (typeof m.mimeTypeField !== 'string'))
    throw new Error(`x-mcp-media of ${path}: give exactly one of mimeType and mimeTypeField`);
  return typeof m.mimeType === 'string' ? { path, mimeType: m.mimeType } : { path, mimeTypeField: String(m.mimeTypeField) };
}

/** Header parameter → tool argument name: `Idempotency-Key` → `idempotency_key`. */
export const headerArgName = (header: string) => header.toLowerCase().replace(/-/g, '_');

function checkToolRow(row: McpToolRow) {
  if (!MCP_TOOL_NAME.test(row.name)) throw new Error(`MCP tool name "${row.name}" must match ${MCP_TOOL_NAME}`);
  if (!isObjectSchema(row.inputSchema)) throw new Error(`MCP tool ${row.name}: inputSchema must be an object schema`);
  const text = JSON.stringify([row.inputSchema, row.outputSchema ?? {}]);
  if (text.includes('"$ref"') || text.includes('"$schema"')) throw new Error(`MCP tool ${row.name}: schema is not self-contained`);
}

export function buildMcpTools(
  spec: JsonObject,
  index: OperationIndex,
  listBudget = MCP_LIST_MAX_BYTES - MCP_LIST_RESERVED_BYTES,
): McpToolRow[] {
  const rows: McpToolRow[] = [];
  const paths = spec.paths as JsonObject;
  for (const op of index.operations) {
    if (op.mcpTools.length === 0) continue;
    const raw = deref(spec, (deref(spec, paths[op.path]) as JsonObject)[op.method.toLowerCase()] as JsonObject);
    const properties: { [name: string]: JsonObject } = {};
    const required: string[] = [];
    const routes: Record<string, McpArgRoute> = {};
    const add = (name: string, schema: JsonObject, route: McpArgRoute, isRequired: boolean) => {
      if (name in routes)
        throw new Error(`${op.operationId}: MCP tool argument "${name}" comes from two places (${routes[name]} and ${route})`);
      properties[name] = schema;
      routes[name] = route;
      if (isRequired) required.push(name);
    };
    const param = (p: ParamInfo) => {
      const s = toToolSchema(spec, p.schema) as JsonObject;
      return p.description && !s.description ? { ...s, description: p.description } : s;
    };
    for (const where of ['path', 'query'] as const)
      for (const p of op.params.filter((x) => x.in === where)) add(p.name, param(p), where, p.required);
    let closed = true;
    if (op.requestBody) {
      const rb = deref(spec, raw.requestBody as Json) as JsonObject;
      const schema = jsonContent(rb.content);
      if (schema) {
        const body = toToolSchema(spec, schema) as JsonObject;
        const merge = isObjectSchema(body) && body.properties && !body.oneOf && !body.anyOf && !body.allOf;
        if (merge) {
          const req = new Set(op.requestBody.required ? ((body.required ?? []) as string[]) : []);
          const headerArgs = new Set(op.params.filter((p) => p.in === 'header').map((p) => headerArgName(p.name)));
          for (const [name, s] of Object.entries(body.properties as JsonObject)) {
            // A body field that repeats a header (idempotency_key) is sent as the header instead.
            if (headerArgs.has(name)) continue;
            add(name, s as JsonObject, 'body', req.has(name));
          }
          if (body.additionalProperties !== false) closed = false;
        } else {
          add('body', body, 'body:whole', op.requestBody.required);
        }
      }
    }
    for (const p of op.params.filter((x) => x.in === 'header')) add(headerArgName(p.name), param(p), `header:${p.name}`, p.required);

    const success = deref(spec, (raw.responses as JsonObject)[String(op.successStatus)]) as JsonObject;
    const outputSchema = toolOutputSchema(spec, jsonContent(success.content));
    const media = mediaFields(spec, jsonContent(success.content));
    const annotations = declaredAnnotations(op.operationId, raw['x-mcp-annotations']);
    for (const tool of op.mcpTools) {
      const fixed = (tool.fixed ?? {}) as JsonObject;
      const props = { ...properties };
      for (const k of Object.keys(fixed)) {
        if (!(k in routes))
          throw new Error(`MCP tool ${tool.name}: fixed argument "${k}" is not a parameter or body field of ${op.operationId}`);
        delete props[k];
      }
      const inputSchema: McpToolRow['inputSchema'] = { type: 'object', properties: props };
      const req = required.filter((r) => !(r in fixed));
      if (req.length) inputSchema.required = req;
      if (closed) inputSchema.additionalProperties = false;
      const title = op.summary || tool.name;
      const row: McpToolRow = {
        name: tool.name,
        title,
        description: String(tool.description ?? op.description ?? op.summary).trim(),
        inputSchema,
        ...(outputSchema ? { outputSchema } : {}),
        annotations: { ...annotations },
        operationId: op.operationId,
        fixed: clone(fixed),
        scopes: [...op.scopes],
        requiresPaidPlan: op.scopes.length > 0,
        routes: { ...routes },
        media,
      };
      checkToolRow(row);
      rows.push(row);
    }
  }
  const declarations = new Map(mcpOnlyDeclarations(spec).map((d) => [String(d.name), d]));
  for (const entry of index.mcpOnlyTools) {
    const name = entry.operationId;
    const tool = declarations.get(name)!;
    const inputSchema = toToolSchema(spec, tool.inputSchema) as McpToolRow['inputSchema'];
    const outputSchema = toolOutputSchema(spec, tool.outputSchema);
    const title = entry.summary;
    const row: McpToolRow = {
      name,
      title,
      description: entry.description,
      inputSchema,
      ...(outputSchema ? { outputSchema } : {}),
      annotations: declaredAnnotations(`MCP-only tool ${name}`, tool['x-mcp-annotations']),
      operationId: null,
      fixed: {},
      scopes: [...entry.scopes],
      requiresPaidPlan: entry.requiresPaidPlan,
      routes: Object.fromEntries(Object.keys((inputSchema.properties ?? {}) as JsonObject).map((k) => [k, 'tool' as const])),
      media: mediaFields(spec, tool.outputSchema),
    };
    checkToolRow(row);
    rows.push(row);
  }
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.name)) throw new Error(`MCP tool ${r.name} is declared twice`);
    seen.add(r.name);
  }
  // A REST operation with exactly one tool is named by its tool in the tool texts.
  const toolOf = new Map<string, string>();
  for (const op of index.operations) if (op.mcpTools.length === 1) toolOf.set(`${op.method} ${op.path}`, op.mcpTools[0].name);
  const named = rows.map((r) => ({
    ...r,
    description: restToTools(r.description, toolOf),
    inputSchema: mapDescriptions(r.inputSchema, (d) => restToTools(d, toolOf)) as McpToolRow['inputSchema'],
  }));
  return compactRows(named, listBudget);
}

/** A row as tools/list lists it (src/mcp/tools.ts LISTED_TOOLS), and its size in bytes of JSON. */
export const listedTool = (r: McpToolRow) => ({
  name: r.name,
  title: r.title,
  description: r.description,
  inputSchema: r.inputSchema,
  ...(r.outputSchema ? { outputSchema: r.outputSchema } : {}),
  annotations: r.annotations,
});
const listedBytes = (r: McpToolRow) => Buffer.byteLength(JSON.stringify(listedTool(r)));

/**
 * The table made compact and portable (scripts/lib/mcp-compact.ts): each tool at the first level
 * of trimming that fits MCP_TOOL_MAX_BYTES, then the largest tools' input schemas trimmed further
 * while the list is over MCP_LIST_MAX_BYTES; then result schemas another tool already lists (a
 * cancel tool's is its get tool's) said in words, largest first ("Result: as get_generation."
 * with an output schema of `{type: "object"}`); and only then, if it still is over, the largest
 * tools' own descriptions. Refuses a table that still does not fit or that is not portable.
 */
function compactRows(full: McpToolRow[], listBudget: number): McpToolRow[] {
  /** Tool index → the earlier tool whose result schema it has, for those said in words. */
  const sharedWith = new Map<number, string>();
  const at = (r: McpToolRow, level: number, i: number): McpToolRow => {
    const row = {
      ...r,
      description: toolDescription(r.description, COMPACT_LEVELS[level].toolDescription),
      inputSchema: compactInput(r.inputSchema, COMPACT_LEVELS[level]) as McpToolRow['inputSchema'],
    };
    const other = sharedWith.get(i);
    return other ? { ...row, description: `${row.description} Result: as ${other}.`, outputSchema: { type: 'object' } } : row;
  };
  const levels = full.map((r, i) => {
    let level = 0;
    while (level < COMPACT_LEVELS.length - 1 && listedBytes(at(r, level, i)) > MCP_TOOL_MAX_BYTES) level++;
    return level;
  });
  const out = full.map((r, i) => at(r, levels[i], i));
  const total = () => Buffer.byteLength(JSON.stringify({ tools: out.map(listedTool) }));
  const trimTo = (ceiling: number) => {
    while (total() > listBudget) {
      const order = out.map((r, i) => [listedBytes(r), i] as const).sort((a, b) => b[0] - a[0]);
      const next = order.find(([, i]) => levels[i] < ceiling);
      if (!next) break;
      levels[next[1]]++;
      out[next[1]] = at(full[next[1]], levels[next[1]], next[1]);
    }
  };
  // Input schemas first (the levels that keep the tool's description whole), then shared result
  // schemas, then descriptions.
  trimTo(COMPACT_LEVELS.filter((l) => l.toolDescription === COMPACT_LEVELS[0].toolDescription).length - 1);
  // The tool that keeps a shared schema: the first read-only one (get_generation, whose status a
  // task tool's listing reads), else the first.
  const firstWith = new Map<string, string>();
  const key = (r: McpToolRow) => JSON.stringify(r.outputSchema);
  for (const readOnly of [true, false])
    for (const r of full)
      if (r.outputSchema && !!r.annotations.readOnlyHint === readOnly && !firstWith.has(key(r))) firstWith.set(key(r), r.name);
  const repeats = full.flatMap((r, i) => (r.outputSchema && firstWith.get(key(r)) !== r.name ? [i] : []));
  const outputBytes = (i: number) => Buffer.byteLength(JSON.stringify(full[i].outputSchema));
  for (const i of repeats.sort((a, b) => outputBytes(b) - outputBytes(a))) {
    if (total() <= listBudget) break;
    sharedWith.set(i, firstWith.get(key(full[i]))!);
    out[i] = at(full[i], levels[i], i);
  }
  trimTo(COMPACT_LEVELS.length - 1);
  for (const r of out) {
    if (listedBytes(r) > MCP_TOOL_MAX_BYTES)
      throw new Error(
        `MCP tool ${r.name} is ${listedBytes(r)} bytes in tools/list, over ${MCP_TOOL_MAX_BYTES}: shorten its schema or description in the spec`,
      );
    const findings = [
      ...portabilityFindings(r.inputSchema).map((f) => `inputSchema${f.path} ${f.rule}`),
      ...portabilityFindings(r.outputSchema ?? { type: 'object' }).map((f) => `outputSchema${f.path} ${f.rule}`),
    ];
    if (findings.length) throw new Error(`MCP tool ${r.name}: schema is not portable: ${findings.slice(0, 5).join('; ')}`);
  }
  if (total() > listBudget)
    throw new Error(`tools/list is ${total()} bytes, over ${listBudget}: shorten tool schemas or descriptions in the spec`);
  return out;
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

function standalone(
  spec: JsonObject,
  schemas: Record<string, JsonObject>,
  options: AjvOptions,
  log: (m: string) => void,
  label: string,
): string {
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
  let code = standaloneCode.default(ajv, refs);
  if (options.coerceTypes) code = strictNumberCoercion(code);
  return `// Generated by scripts/generate.ts from spec/openapi.yaml. Do not edit.\n${code}\n`;
}

// AJV coerces any string JavaScript reads as a number: "Infinity" and "1e309" become Infinity
// (which then passes minimum/maximum, as AJV checks limits only on finite numbers), "0x10" 16,
// " 12" 12. Parameters are decimal: only plain decimal text is coerced (an integer without
// leading zeros or a sign on zero; a number may have a fraction), anything else stays a string
// and fails its type check (400 naming the parameter). Every coercion site AJV writes is
// rewritten, or generation fails, so an AJV upgrade cannot silently bring the loose form back.
const DECIMAL_INTEGER = String.raw`/^(?:0|-?[1-9][0-9]*)$/`;
const DECIMAL_NUMBER = String.raw`/^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/`;

export function strictNumberCoercion(code: string): string {
  const sites = code.match(/(data\d*) == \+\1/g)?.length ?? 0;
  let rewritten = 0;
  const out = code
    .replace(/\(dataType(\d*) === "string" && (data\d*) && \2 == \+\2 && !\(\2 % 1\)\)/g, (_m, t: string, d: string) => {
      rewritten++;
      return `(dataType${t} === "string" && ${DECIMAL_INTEGER}.test(${d}) && isFinite(+${d}))`;
    })
    .replace(/\(dataType(\d*) == "string" && (data\d*) && \2 == \+\2\)/g, (_m, t: string, d: string) => {
      rewritten++;
      return `(dataType${t} == "string" && ${DECIMAL_NUMBER}.test(${d}) && isFinite(+${d}))`;
    });
  if (rewritten !== sites)
    throw new Error(`strictNumberCoercion: rewrote ${rewritten} of ${sites} numeric coercions; AJV's generated code changed`);
  return out;
}

const dts = (names: string[]) =>
  `// Generated by scripts/generate.ts from spec/openapi.yaml. Do not edit.\n` +
  `import type { ValidateFunction } from 'ajv';\n` +
  `declare const validators: {\n${names.map((n) => `  ${JSON.stringify(n)}: ValidateFunction;\n`).join('')}};\n` +
  `export = validators;\n`;

export async function buildArtifacts(spec: JsonObject, log: (m: string) => void, catalog?: SkillCatalog): Promise<Record<string, string>> {
  const index = buildIndex(spec);
  log(`${index.operations.length} operations, ${index.mcpOnlyTools.length} MCP-only tools`);

  const bodies: Record<string, JsonObject> = {};
  const params: Record<string, JsonObject> = {};
  const responses: Record<string, JsonObject> = {};
  // Declared response headers: only the test suite checks them, so they live in a file of their own
  // that the service never loads (they are most of the validators' code).
  const responseHeaders: Record<string, JsonObject> = {};
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
      responseHeaders[`${op.operationId}__${status}__headers`] = {
        type: 'object',
        properties: headerProps,
        required: requiredHeaders,
        additionalProperties: true,
      };
    }
  }
  // The envelope on its own, for responses outside any operation (unknown routes).
  responses.ErrorResponse = { $ref: `${SCHEMA_ID}#/$defs/ErrorResponse` };
  // MCP-only tools: their arguments are their body (the executor validates them with mcp__<name>).
  for (const tool of mcpOnlyDeclarations(spec)) {
    bodies[`mcp__${tool.name}`] = toAjvSchema(tool.inputSchema) as JsonObject;
    responses[`mcp__${tool.name}`] = toAjvSchema(tool.outputSchema) as JsonObject;
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
    'response-header-validators.cjs': standalone(
      spec,
      responseHeaders,
      { useDefaults: false, coerceTypes: 'array', removeAdditional: false },
      log,
      'response headers',
    ),
    'response-header-validators.d.cts': dts(Object.keys(responseHeaders)),
    // The same request validators stopping at the first error (allErrors off): linear in the input,
    // and an array over its maxItems fails before any of its items is looked at. The executor runs
    // these first and the all-errors ones above only on small inputs (src/operations/validate.ts).
    'request-validators-fast.cjs': standalone(
      spec,
      bodies,
      { useDefaults: true, coerceTypes: false, removeAdditional: false, allErrors: false },
      log,
      'request (first error)',
    ),
    'request-validators-fast.d.cts': dts(Object.keys(bodies)),
    'param-validators-fast.cjs': standalone(
      spec,
      params,
      { useDefaults: true, coerceTypes: 'array', removeAdditional: false, allErrors: false },
      log,
      'params (first error)',
    ),
    'param-validators-fast.d.cts': dts(Object.keys(params)),
    // Responses: validated exactly as sent, nothing filled in.
    'response-validators.cjs': standalone(spec, responses, { useDefaults: false, coerceTypes: false }, log, 'response'),
    'response-validators.d.cts': dts(Object.keys(responses)),
    ...renderSkillPages(spec, index, catalog),
    // The input and output types of the MCP-only tools, by tool name, for their handlers.
    'mcp-only-tools.d.ts': mcpOnlyToolTypes(spec),
    // The values of the string enums of components/schemas, for code that needs them at run time.
    'enums.ts': enumValues(spec),
    // The MCP tool table the /mcp endpoint serves (src/mcp/tools.ts).
    'mcp-tools.json': `${JSON.stringify({ tools: buildMcpTools(spec, index) }, null, 2)}\n`,
  };
}

/**
 * generated/enums.ts: every string enum of components/schemas as a constant list, in the spec's
 * order (`<Schema>Values`), checked against its type in openapi.d.ts. The types only describe an
 * enum; code that lists, loops over or checks its values imports these.
 */
function enumValues(spec: JsonObject): string {
  const schemas = ((spec.components as JsonObject | undefined)?.schemas ?? {}) as JsonObject;
  const rows = Object.entries(schemas).flatMap(([name, raw]) => {
    const schema = raw as JsonObject;
    if (schema.type !== 'string' || !Array.isArray(schema.enum)) return [];
    const doc = typeof schema.description === 'string' ? `/** ${schema.description.replace(/\*\//g, '*\\/')} */\n` : '';
    return [
      `${doc}export const ${name}Values = ${JSON.stringify(schema.enum)} as const satisfies readonly components['schemas']['${name}'][];\n`,
    ];
  });
  return (
    `// Generated by scripts/generate.ts from spec/openapi.yaml (the string enums of components/schemas). Do not edit.\n` +
    `import type { components } from './openapi.d.ts';\n\n${rows.join('\n')}`
  );
}

/** generated/mcp-only-tools.d.ts: each MCP-only tool's input and output as the generated component types. */
function mcpOnlyToolTypes(spec: JsonObject): string {
  const rows = mcpOnlyDeclarations(spec).map((tool) => {
    const type = (key: 'inputSchema' | 'outputSchema') => `components['schemas']['${componentName(tool[key])}']`;
    return `  ${String(tool.name)}: {\n    input: ${type('inputSchema')};\n    output: ${type('outputSchema')};\n  };\n`;
  });
  return (
    `// Generated by scripts/generate.ts from spec/openapi.yaml (x-mcp-only-tools). Do not edit.\n` +
    `import type { components } from './openapi.d.ts';\n\n` +
    `/** The MCP-only tools by name: the types of their arguments (input) and of their result (output). */\n` +
    `export interface McpOnlyTools {\n${rows.join('')}}\n`
  );
}

// ---------------------------------------------------------------------------------------------
// The catalog data files (spec/catalog.yaml, voices.yaml, avatars.yaml) and their JSON Schema
// (spec/catalog-data.schema.yaml): one AJV standalone validator per document, the document types
// (openapi-typescript over the schema's $defs), and the documents checked with those validators.
// Independent of the OpenAPI artifacts above.
// ---------------------------------------------------------------------------------------------

export const CATALOG_SCHEMA_ID = 'https://media-api.local/catalog-data';

/** A data file, the $defs entry that describes it, and its parsed content. */
export interface CatalogDataFile {
  file: string;
  definition: string;
  data: unknown;
}

/** JSON Schema → the OpenAPI dialect openapi-typescript reads: `$defs` become component schemas. */
function catalogSchemaAsComponents(schema: JsonObject): JsonObject {
  const defs = JSON.parse(JSON.stringify(schema.$defs ?? {}).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  // Validation-only keywords that would only clutter the types.
  const strip = (n: Json): Json =>
    Array.isArray(n)
      ? n.map(strip)
      : n && typeof n === 'object'
        ? Object.fromEntries(
            Object.entries(n)
              .filter(([k]) => !['discriminator', 'contains', 'minContains', 'maxContains'].includes(k))
              .map(([k, v]) => [k, strip(v)]),
          )
        : n;
  return { openapi: '3.1.0', info: { title: 'catalog data', version: '1' }, paths: {}, components: { schemas: strip(defs) } };
}

/**
 * generated/catalog-validators.cjs (+ .d.cts) and generated/catalog-data.d.ts from the schema.
 * Every given file is validated with the generated validator module itself; any problem fails
 * generation with a CatalogDataError naming file and JSON path.
 */
export async function buildCatalogArtifacts(
  schema: JsonObject,
  files: CatalogDataFile[],
  log: (m: string) => void,
): Promise<Record<string, string>> {
  if (schema.$id !== CATALOG_SCHEMA_ID) throw new Error(`the catalog data schema must have $id ${CATALOG_SCHEMA_ID}`);
  const ajv = makeAjv({ useDefaults: false, coerceTypes: false, removeAdditional: false });
  try {
    ajv.addSchema(schema);
  } catch (err) {
    throw new Error(`catalog data schema does not compile: ${(err as Error).message}`);
  }
  const refs: Record<string, string> = {};
  for (const { definition } of files) {
    refs[definition] = `${CATALOG_SCHEMA_ID}#/$defs/${definition}`;
    try {
      if (!ajv.getSchema(refs[definition])) throw new Error('no such $defs entry');
    } catch (err) {
      throw new Error(`catalog data schema ${definition} does not compile: ${(err as Error).message}`);
    }
  }
  const code = `// Generated by scripts/generate.ts from spec/catalog-data.schema.yaml. Do not edit.\n${standaloneCode.default(ajv, refs)}\n`;
  log(`catalog data: ${Object.keys(refs).length} validators`);

  // Validate with exactly the module being written.
  const mod = { exports: {} as Record<string, ValidateFunction> };
  new Function('module', 'exports', 'require', code)(mod, mod.exports, createRequire(import.meta.url));
  const problems = files.flatMap(({ file, definition, data }) => {
    const validate = mod.exports[definition];
    return validate(data) ? [] : schemaProblems(file, data, validate.errors ?? []);
  });
  if (problems.length) throw new CatalogDataError(problems);

  const types = astToString(await openapiTS(catalogSchemaAsComponents(schema) as never, { alphabetize: false, exportType: false }));
  return {
    'catalog-validators.cjs': code,
    'catalog-validators.d.cts':
      `// Generated by scripts/generate.ts from spec/catalog-data.schema.yaml. Do not edit.\n` +
      `import type { ValidateFunction } from 'ajv';\n` +
      `declare const validators: {\n${Object.keys(refs)
        .map((n) => `  ${JSON.stringify(n)}: ValidateFunction;\n`)
        .join('')}};\n` +
      `export = validators;\n`,
    'catalog-data.d.ts': `// Generated by scripts/generate.ts (openapi-typescript) from spec/catalog-data.schema.yaml. Do not edit.\n${types}`,
  };
}
