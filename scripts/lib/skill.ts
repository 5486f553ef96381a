// Renders generated/skill.md, the agent instructions served at GET /api/v1/skill.md: everything an
// agent needs to work from it alone, read from the spec (and the catalog's prices), at most
// SKILL_MAX_BYTES. In order: how to connect (REST with an API key; the MCP endpoint with OAuth 2.1
// or an API key, from the security schemes), the spec's own prose (info.description: credits,
// polling, idempotency, rate limits), the prices, every operation once (its MCP tool, scopes, a
// trimmed description, one line per field with nested objects, union shapes such as the 19 edit
// operations, and one example request), the MCP-only tools the same way, then the error codes
// once with the retry rules. A nested shape used again is named, not repeated.
import type { Json, JsonObject, OperationIndex, OperationIndexEntry } from './codegen.ts';
import { resolveRef } from './codegen.ts';
import { trimText } from './mcp-compact.ts';

/** The most skill.md may weigh (bytes); generation fails above it. */
// 40 KiB for about 50 operations and tools: types and limits with one-line meanings of the top-level
// fields take most of it; nested fields keep their types and limits (and meanings when there is room).
export const SKILL_MAX_BYTES = 40 * 1024;
/** Where the MCP adapter is mounted (src/mcp/index.ts), relative to the deployment's origin. */
export const MCP_PATH = '/mcp';

const NEEDED = /\bpoll|\bcosts?\b|\bfree\b|\bconfirm\b/i;

/**
 * What an operation does, costs and how to wait for it: its first sentences up to `max`, then
 * up to two later sentences about price, polling or confirmation (each up to 170 characters)
 * whatever `max` is.
 */
function gist(text: string, max: number): string {
  const flat = oneLine(text);
  const head = trimText(flat, max);
  const sentences = flat.split(/(?<=[.!?])(?<!\b(?:e\.g|i\.e|etc|vs)\.)\s+(?=[A-Z0-9`"(])/);
  // Later sentences only: the first one leads `head`, whole or cut.
  const extra = sentences
    .slice(1)
    .filter((x) => NEEDED.test(x) && x.length <= 170 && !head.includes(x))
    .slice(0, 2);
  return [head, ...extra].join(' ');
}

/** The catalog data files (spec/catalog.yaml, voices.yaml), for the prices; optional. */
export interface SkillCatalog {
  catalog?: JsonObject;
  voices?: JsonObject[];
}

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const oneLine = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();
const code = (v: Json) => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;

function deref(spec: JsonObject, node: Json | undefined): JsonObject {
  let cur = node;
  while (isObj(cur) && typeof cur.$ref === 'string')
    cur = { ...(resolveRef(spec, cur.$ref) as JsonObject), ...Object.fromEntries(Object.entries(cur).filter(([k]) => k !== '$ref')) };
  if (!isObj(cur)) return {};
  // `allOf: [X]` with annotations beside it (a described reference): X's keywords, then the annotations.
  if (Array.isArray(cur.allOf)) {
    const { allOf, ...rest } = cur;
    return Object.assign({}, ...allOf.map((a) => deref(spec, a)), rest) as JsonObject;
  }
  return cur;
}

/** `X or null` unions → X and whether null is allowed. */
function unwrapNull(spec: JsonObject, node: Json | undefined): { schema: JsonObject; nullable: boolean; ref?: string } {
  const raw = isObj(node) ? node : {};
  let ref = typeof raw.$ref === 'string' ? raw.$ref : undefined;
  const s = deref(spec, node);
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (Array.isArray(branches) && branches.length === 2) {
    const i = branches.findIndex((b) => deref(spec, b).type === 'null');
    if (i >= 0) {
      const other = branches[1 - i];
      if (isObj(other) && typeof other.$ref === 'string') ref = other.$ref;
      const { oneOf: _o, anyOf: _a, ...rest } = s;
      return { schema: { ...rest, ...deref(spec, other) }, nullable: true, ref };
    }
  }
  if (Array.isArray(s.type) && s.type.includes('null')) {
    const types = s.type.filter((t) => t !== 'null');
    return { schema: { ...s, type: types.length === 1 ? types[0] : types }, nullable: true, ref };
  }
  return { schema: s, nullable: false, ref };
}

const objectBranches = (spec: JsonObject, s: JsonObject): JsonObject[] | undefined => {
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (!Array.isArray(branches) || branches.length < 2) return undefined;
  const resolved = branches.map((b) => deref(spec, b));
  return resolved.every((b) => isObj(b.properties)) ? resolved : undefined;
};

/** The discriminating const of a union branch (`type: set_title`), if any. */
function branchName(b: JsonObject): string | undefined {
  for (const [name, p] of Object.entries((b.properties ?? {}) as JsonObject))
    if (isObj(p) && p.const !== undefined) return `${name}: ${String(p.const)}`;
  return undefined;
}

/**
 * A compact type-and-limits text: `string 1–200` (a string's limits are its length), `uuid`,
 * `integer 1–10 default 1`, `` `a|b` `` (the allowed values), `[uri] ≤10 items`, `… or null`.
 */
export function describeSchema(spec: JsonObject, raw: Json | undefined): string {
  const { schema: s, nullable } = unwrapNull(spec, raw);
  const parts: string[] = [];
  const format = typeof s.format === 'string' && !['int32', 'int64', 'float', 'double'].includes(s.format) ? s.format : undefined;
  if (s.const !== undefined) parts.push(`= ${code(s.const)}`);
  else if (Array.isArray(s.enum)) parts.push(code(s.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('|')));
  else {
    const branches = objectBranches(spec, s);
    const type = Array.isArray(s.type) ? s.type.join(' or ') : typeof s.type === 'string' ? s.type : undefined;
    if (branches) parts.push(`one of ${branches.length} objects`);
    else if (type === 'array') {
      const items = unwrapNull(spec, s.items as Json).schema;
      parts.push(items.properties || objectBranches(spec, items) ? 'object[]' : `[${describeSchema(spec, s.items as Json)}]`);
    } else if (type === 'string' && format) parts.push(format);
    else if (type) parts.push(type);
    else if (Array.isArray(s.oneOf ?? s.anyOf))
      parts.push(((s.oneOf ?? s.anyOf) as Json[]).map((b) => describeSchema(spec, b)).join(' or '));
    if (format && type !== 'string') parts.push(`(${format})`);
  }
  if (s.minLength !== undefined && s.maxLength !== undefined) parts.push(`${s.minLength}–${s.maxLength}`);
  else if (s.maxLength !== undefined && format !== 'uuid' && format !== 'uri') parts.push(`≤${s.maxLength}`);
  if (Array.isArray(s.enum)) {
    // The values say it all.
  } else if (s.minimum !== undefined && s.maximum !== undefined && s.maximum !== Number.MAX_SAFE_INTEGER)
    parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥${s.minimum}`);
  else if (s.maximum !== undefined && s.maximum !== Number.MAX_SAFE_INTEGER) parts.push(`≤${s.maximum}`);
  if (s.maxItems !== undefined) parts.push(s.minItems ? `${s.minItems}–${s.maxItems} items` : `≤${s.maxItems} items`);
  else if (s.minItems) parts.push(`≥${s.minItems} items`);
  if (s.default !== undefined) parts.push(`default ${code(s.default)}`);
  if (nullable) parts.push('or null');
  return parts.join(' ');
}

/** How much of each text is kept: the first level whose page fits SKILL_MAX_BYTES is used. */
interface Verbosity {
  field: number;
  /** Meanings of nested fields (inside objects, array items, edit shapes); default: as `field`. */
  nested?: number;
  branch: number;
  operation: number;
  tool: number;
  returns: number;
}

export const SKILL_LEVELS: Verbosity[] = [
  { field: 100, branch: 140, operation: 300, tool: 160, returns: 110 },
  { field: 90, branch: 110, operation: 240, tool: 130, returns: 80 },
  { field: 80, branch: 90, operation: 220, tool: 110, returns: 0 },
  { field: 70, branch: 80, operation: 180, tool: 90, returns: 0 },
  { field: 60, branch: 70, operation: 150, tool: 80, returns: 0 },
  { field: 48, branch: 56, operation: 120, tool: 70, returns: 0 },
  // Safety nets for a larger contract: shorter meanings, then types and limits only.
  { field: 32, branch: 40, operation: 90, tool: 50, returns: 0 },
  // Then meanings of top-level fields only (nested ones keep their type and limits).
  { field: 60, nested: 0, branch: 48, operation: 110, tool: 60, returns: 0 },
  { field: 44, nested: 0, branch: 40, operation: 90, tool: 50, returns: 0 },
  { field: 32, nested: 0, branch: 32, operation: 80, tool: 40, returns: 0 },
  { field: 24, nested: 0, branch: 24, operation: 70, tool: 36, returns: 0 },
  { field: 18, nested: 0, branch: 20, operation: 60, tool: 32, returns: 0 },
  { field: 0, branch: 32, operation: 80, tool: 40, returns: 0 },
];

interface RenderState {
  level: Verbosity;
  /** Component shapes already described → where (`add_text.style`). */
  shapes: Map<string, string>;
  /** `name|meaning` of the fields already explained: a field said again gets its type only. */
  said: Set<string>;
}

/** A field's meaning, once per document for the same field name and text. */
function meaning(state: RenderState, name: string, description: unknown, top: boolean): string {
  const limit = top ? state.level.field : (state.level.nested ?? state.level.field);
  if (limit === 0) return '';
  const text = trimText(oneLine(description), limit);
  if (!text || state.said.has(`${name}|${text}`)) return '';
  state.said.add(`${name}|${text}`);
  return ` — ${text}`;
}

/**
 * One line per field (`- \`name\` type limits, required — meaning`), nested objects and array
 * items indented under their field, union shapes (the edit operations) each under its name.
 */
function fieldLines(spec: JsonObject, schemaRaw: Json | undefined, indent: string, where: string, state: RenderState, out: string[]): void {
  const schema = deref(spec, schemaRaw);
  const required = new Set((schema.required ?? []) as string[]);
  for (const [name, p] of Object.entries((schema.properties ?? {}) as JsonObject)) {
    const head = `${indent}- ${code(name)} ${describeSchema(spec, p)}${required.has(name) ? ' *' : ''}`;
    nested(
      spec,
      p,
      head,
      () => meaning(state, name, deref(spec, p).description, indent === ''),
      indent,
      where ? `${where}.${name}` : name,
      state,
      out,
    );
  }
}

/** The field's line, then what is inside it: an object's fields, array items, a union's shapes. */
function nested(
  spec: JsonObject,
  p: Json,
  head: string,
  text: () => string,
  indent: string,
  where: string,
  state: RenderState,
  out: string[],
): void {
  let { schema: s, ref } = unwrapNull(spec, p);
  let path = where;
  if (s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array'))) {
    const items = unwrapNull(spec, s.items as Json);
    s = items.schema;
    ref = items.ref;
    path = `${where}[]`;
  }
  const branches = objectBranches(spec, s);
  if (!s.properties && !branches) {
    out.push(`${head}${text()}`);
    return;
  }
  if (ref && state.shapes.has(ref)) {
    out.push(`${head} — same fields as ${code(state.shapes.get(ref)!)}.`);
    return;
  }
  if (ref) state.shapes.set(ref, path);
  out.push(`${head}${text()}`);
  if (branches) {
    const by = branchName(branches[0])?.split(':')[0];
    out.push(`${indent}  One of${by ? ` (by ${code(by)})` : ''}:`);
    for (const b of branches) {
      const label = branchName(b);
      const text = trimText(oneLine(b.description), state.level.branch);
      out.push(`${indent}  - ${label ? code(label.split(': ')[1]) : 'shape'}${text ? ` — ${text}` : ''}`);
      const rest = {
        ...b,
        properties: Object.fromEntries(Object.entries(b.properties as JsonObject).filter(([k]) => !label || k !== label.split(':')[0])),
      };
      fieldLines(spec, rest, `${indent}    `, label ? label.split(': ')[1] : path, state, out);
    }
    return;
  }
  fieldLines(spec, s, `${indent}  `, path, state, out);
}

/** A plausible value for a schema: its example, default, const or first enum value, else by type. */
export function sampleValue(spec: JsonObject, raw: Json | undefined, depth = 0): Json {
  const { schema: s } = unwrapNull(spec, raw);
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  const branches = objectBranches(spec, s) ?? ((s.oneOf ?? s.anyOf) as Json[] | undefined)?.map((b) => deref(spec, b));
  if (branches?.length) return sampleValue(spec, branches[0], depth);
  switch (s.type) {
    case 'string':
      return s.format === 'uuid' ? '3f2c8a9e-6b1d-4c2e-9f1a-7d5e4b3a2c10' : s.format === 'uri' ? 'https://example.com/file.png' : 'text';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'array':
      return s.minItems && depth < 4 ? [sampleValue(spec, s.items as Json, depth + 1)] : [];
    case 'object': {
      if (depth > 4) return {};
      const req = new Set((s.required ?? []) as string[]);
      return Object.fromEntries(
        Object.entries((s.properties ?? {}) as JsonObject)
          .filter(([k]) => req.has(k))
          .map(([k, v]) => [k, sampleValue(spec, v, depth + 1)]),
      );
    }
    default:
      return null;
  }
}

/** The first example a media type declares, or one made from its schema. */
function bodyExample(spec: JsonObject, media: JsonObject): Json {
  if (media.example !== undefined) return media.example;
  if (isObj(media.examples)) {
    const first = deref(spec, Object.values(media.examples)[0]);
    if (first.value !== undefined) return first.value;
  }
  return sampleValue(spec, media.schema as Json);
}

/** The scopes that grant access; `x:read or x:write` is said as `x:read` (write includes read, as the spec says). */
function scopeText(scopes: string[]): string {
  if (scopes.length === 0) return 'none (public)';
  const shown = scopes.filter((s) => !(s.endsWith(':write') && scopes.includes(s.replace(/:write$/, ':read'))));
  return shown.map((s) => code(s)).join(' or ');
}

/** The path as a client writes it: under the document's server, or from the root for operations with their own. */
const shownPath = (op: OperationIndexEntry) => (op.server === undefined ? op.path : `${op.server.replace(/\/$/, '')}${op.path}`);

/**
 * What a generation costs in this deployment: the catalog prices below are the models'; an entry
 * whose model no engine here makes is a labelled local preview at the preview price, or refused.
 */
function previewRule(c: JsonObject | undefined): string[] {
  const p = c?.local_preview_pricing as JsonObject | undefined;
  if (!p) return [];
  return [
    `Prices below are the models'. Where a model does not run here, \`GET /models\` shows a local preview (\`engine.preview\`) at ${p.image} per image and ${p.video_per_second} per video second, or \`unavailable\` (400 \`engine_unavailable\`).`,
    '',
  ];
}

function pricesSection(catalog: SkillCatalog | undefined): string[] {
  const c = catalog?.catalog;
  if (!c && !catalog?.voices) return [];
  const out = [
    '## Prices (credits)',
    '',
    'Deducted before work is queued; `GET /models` (list_generation_catalog) always has the current prices.',
    '',
    ...previewRule(c),
  ];
  const list = (k: string) => (Array.isArray(c?.[k]) ? (c[k] as JsonObject[]) : []);
  const statics = list('static_ads').filter((t) => typeof t.credits === 'number');
  if (statics.length) out.push(`- static_ad, per output: ${statics.map((t) => `${t.slug} ${t.credits}`).join(', ')}.`);
  for (const [key, kind] of [
    ['video_ads', 'video_ad'],
    ['ugc_ads', 'ugc_ad'],
  ] as const) {
    const rows = list(key).map(
      (t) => `${t.slug} ${((t.quality_tiers ?? []) as JsonObject[]).map((q) => `${q.id} ${q.credits}/${q.default_duration}s`).join(' ')}`,
    );
    if (rows.length)
      out.push(`- ${kind}, per output by quality tier, at its default duration (other durations cost proportionally): ${rows.join('; ')}.`);
  }
  const models = list('ai_models').map(
    (m) => `${m.slug} ${((m.variants ?? []) as JsonObject[]).map((v) => `${v.id} ${v.credits}`).join(' ')}`,
  );
  if (models.length) out.push(`- ai_model, per output by variant (video variants at their default duration): ${models.join('; ')}.`);
  const slideshow = isObj(c?.slideshow_pricing) ? c.slideshow_pricing.credits_per_slide : undefined;
  if (typeof slideshow === 'number')
    out.push(
      `- slideshow, per slide: ${slideshow} (slide_count × ${slideshow}; 3 slides ${3 * slideshow}, 6 slides ${6 * slideshow}, 10 slides ${10 * slideshow}).`,
    );
  if (catalog?.voices?.length)
    out.push(
      `- faceless video, by voice (9:16/16:9): ${catalog.voices.map((v) => `${v.id} ${v.credits_9_16}/${v.credits_16_9}`).join(', ')}.`,
    );
  out.push('- Other prices are stated with each operation below (`Costs …` or `Free`).', '');
  return out;
}

export function renderSkill(spec: JsonObject, index: OperationIndex, catalog?: SkillCatalog): string {
  let text = '';
  for (const level of SKILL_LEVELS) {
    text = renderAt(spec, index, catalog, level);
    if (Buffer.byteLength(text) <= SKILL_MAX_BYTES) return text;
  }
  throw new Error(`skill.md is ${Buffer.byteLength(text)} bytes at its tersest, over ${SKILL_MAX_BYTES}: shorten descriptions in the spec`);
}

export function renderAt(spec: JsonObject, index: OperationIndex, catalog: SkillCatalog | undefined, level: Verbosity): string {
  const info = spec.info as JsonObject;
  const server = String(((spec.servers ?? []) as JsonObject[])[0]?.url ?? '');
  const components = (spec.components ?? {}) as JsonObject;
  const schemes = (components.securitySchemes ?? {}) as JsonObject;
  const paths = spec.paths as JsonObject;
  const state: RenderState = { level, shapes: new Map(), said: new Set() };
  const toolsOf = (op: OperationIndexEntry) => op.mcpTools.map((t) => code(t.name)).join(', ');
  const out: string[] = [];

  out.push(`# ${info.title} — agent instructions`, '');
  out.push(
    `API version ${info.version}. ${oneLine(info.summary)} Generated from the OpenAPI contract (\`GET ${server}/openapi.json\`); this page alone is enough to use the API.`,
    '',
  );

  out.push('## Connect', '');
  out.push(`- **REST**: every path below is under \`<origin>${server}\` (the health probes under the origin). JSON in, JSON out.`);
  for (const [name, raw] of Object.entries(schemes)) {
    const s = deref(spec, raw);
    if (s.type === 'http') out.push(`- **API key** (\`${name}\`): ${trimText(oneLine(s.description), 200)}`);
  }
  out.push(
    `- **MCP**: \`POST <origin>${MCP_PATH}\`, the remote MCP endpoint (Streamable HTTP, stateless JSON-RPC \`tools/list\`, \`tools/call\`). Each operation below names its tool, whose arguments are the operation's path, query and body fields side by side (\`Idempotency-Key\` → \`idempotency_key\`). Connect either way:`,
  );
  out.push(`  1. API key as bearer: \`Authorization: Bearer <API key>\` on \`${MCP_PATH}\`, as for REST.`);
  for (const [name, raw] of Object.entries(schemes)) {
    const s = deref(spec, raw);
    if (s.type !== 'oauth2') continue;
    const flow = deref(spec, ((s.flows ?? {}) as JsonObject).authorizationCode as Json);
    const scopes = Object.entries((flow.scopes ?? {}) as JsonObject)
      .map(([k, v]) => `${code(k)} ${oneLine(v)}`)
      .join('; ');
    out.push(
      `  2. OAuth 2.1 (\`${name}\`): ${trimText(oneLine(s.description), 380)} Authorize at \`${flow.authorizationUrl}\`, token at \`${flow.tokenUrl}\`. Scopes: ${scopes}`,
    );
  }
  out.push('');
  // The spec's prose, paragraph by paragraph; its **Errors.** paragraph goes to the Errors section,
  // and its **Authentication.** paragraph is said by Connect above (from the security schemes).
  const paragraphs = String(info.description ?? '')
    .trim()
    .split(/\n\s*\n/)
    .map(oneLine)
    .filter(Boolean);
  const lead = (p: string) => /^\*\*([^*]+)\.\*\*/.exec(p)?.[1]?.toLowerCase();
  out.push(...paragraphs.filter((p) => lead(p) !== 'errors' && lead(p) !== 'authentication').flatMap((p) => [p, '']));
  out.push(...pricesSection(catalog));

  // Error statuses every authenticated operation may answer are said once, in the Errors section.
  const authed = index.operations.filter((o) => o.scopes.length > 0);
  const common = Object.keys(authed[0]?.responses ?? {}).filter((st) => !st.startsWith('2') && authed.every((o) => st in o.responses));
  out.push(
    '## Operations',
    '',
    "Each once: method and path, operationId, MCP tool, scopes, what it does, its fields (one line each: name, type and limits (a string's limits are its length), `*` if required, meaning; nested fields indented; `a|b` lists the allowed values) and an example request.",
    '',
  );
  for (const op of index.operations) {
    const raw = deref(spec, deref(spec, paths[op.path] as Json)[op.method.toLowerCase()] as Json);
    // Heading: method, path, operationId, MCP tool(s), scopes (the summary is the description's gist).
    const tags = [op.mcpTools.length ? `tool ${toolsOf(op)}` : '', scopeText(op.scopes), op.rateLimit ? 'rate-limited' : ''].filter(
      Boolean,
    );
    out.push(`### ${op.method} ${shownPath(op)} · \`${op.operationId}\` · ${tags.join(' · ')}`, '');
    if (op.deprecated)
      out.push(`**Deprecated**${op.aliasOf ? `: the same as \`${op.aliasOf}\` (fields above); use that instead` : ''}.`, '');
    if (!op.description) out.push(`${oneLine(op.summary)}.`, '');
    if (op.aliasOf) continue;
    if (op.mcpTools.length > 1) {
      for (const t of op.mcpTools) if (t.description) out.push(`- \`${t.name}\`: ${trimText(oneLine(t.description), level.tool)}`);
      out.push('');
    }
    if (op.description) out.push(gist(op.description, level.operation), '');
    const lines: string[] = [];
    for (const p of op.params) {
      if (p.name === 'idempotency-key') {
        lines.push(`- \`Idempotency-Key\` (header; MCP \`idempotency_key\`) — see Idempotency.`);
        continue;
      }
      const head = `- ${code(p.name)} (${p.in}) ${describeSchema(spec, p.schema)}${p.required ? ' *' : ''}`;
      nested(
        spec,
        p.schema,
        head,
        () => meaning(state, p.name, p.description ?? deref(spec, p.schema).description, true),
        '',
        `${op.operationId}.${p.name}`,
        state,
        lines,
      );
    }
    let example = '';
    if (raw.requestBody) {
      const content = (deref(spec, raw.requestBody as Json).content ?? {}) as JsonObject;
      const [type, media] = Object.entries(content)[0] ?? [];
      if (type && isObj(media)) {
        lines.push(`Body (\`${type}\`):`);
        const before = lines.length;
        fieldLines(spec, media.schema as Json, '', op.operationId, state, lines);
        if (lines.length === before) lines.push(`- ${describeSchema(spec, media.schema as Json)}`);
        if (type.includes('json')) example = ` \`${JSON.stringify(bodyExample(spec, media))}\``;
        // Another media type of the same body: only what differs from the first.
        const firstProps = (deref(spec, media.schema as Json).properties ?? {}) as JsonObject;
        for (const [other, m] of Object.entries(content).slice(1)) {
          const schema = deref(spec, (m as JsonObject).schema as Json);
          const props = (schema.properties ?? {}) as JsonObject;
          const missing = Object.keys(firstProps).filter((k) => !(k in props));
          const extra = { ...schema, properties: Object.fromEntries(Object.entries(props).filter(([k]) => !(k in firstProps))) };
          lines.push(
            `Or as \`${other}\`: the same fields${missing.length ? ` except ${missing.map((k) => code(k)).join(', ')}` : ''}${Object.keys(extra.properties).length ? ', plus:' : '.'}`,
          );
          fieldLines(spec, extra, '', `${op.operationId}(${other})`, state, lines);
        }
      }
    }
    if (lines.length) out.push(...lines, '');
    const pathValues = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const p = op.params.find((x) => x.in === 'path' && x.name === name);
      return String(sampleValue(spec, p?.schema));
    });
    const query = op.params
      .filter((p) => p.in === 'query' && p.required)
      .map((p) => `${p.name}=${encodeURIComponent(String(sampleValue(spec, p.schema)))}`);
    // Under the document's server like the headings (Connect says where that is); other servers in full.
    const target = `${op.server === undefined ? '' : op.server.replace(/\/$/, '')}${pathValues}${query.length ? `?${query.join('&')}` : ''}`;
    const success = Object.entries(op.responses).filter(([s]) => s.startsWith('2'));
    const errors = Object.keys(op.responses).filter((s) => !s.startsWith('2') && !(op.scopes.length > 0 && common.includes(s)));
    const answers = `${success.map(([s, r]) => (level.returns ? `${s} (${trimText(oneLine(r.description), level.returns)})` : s)).join(', ')}${errors.length ? `; also ${errors.join(', ')}` : ''}`;
    out.push(`Example: \`${op.method} ${target}\`${example} → ${answers}.`, '');
  }

  const declarations = new Map(((spec['x-mcp-only-tools'] ?? []) as JsonObject[]).map((d) => [String(d.name), d]));
  if (index.mcpOnlyTools.length) {
    out.push('## MCP-only tools', '', `Tools of \`${MCP_PATH}\` with no REST operation; their arguments are listed as fields.`, '');
    for (const tool of index.mcpOnlyTools) {
      const d = declarations.get(tool.operationId) ?? {};
      out.push(`### \`${tool.operationId}\``, '');
      out.push(`${gist(tool.description, level.operation)} Scope ${scopeText(tool.scopes)}.`, '');
      const lines: string[] = [];
      fieldLines(spec, d.inputSchema as Json, '', tool.operationId, state, lines);
      if (lines.length) out.push(...lines, '');
      out.push(`Example: \`${JSON.stringify({ name: tool.operationId, arguments: sampleValue(spec, d.inputSchema as Json) })}\``, '');
    }
  }

  const envelope = deref(spec, (components.schemas as JsonObject).ErrorResponse as Json);
  const inner = deref(spec, (envelope.properties as JsonObject)?.error as Json);
  const codeSchema = deref(spec, (inner.properties as JsonObject)?.code as Json);
  out.push('## Errors and retries', '');
  const errorsProse = paragraphs.find((p) => lead(p) === 'errors');
  out.push(
    `${errorsProse ?? 'Every error uses one envelope: `{"error": {"code", "message", "retryable", "context"}}`.'} Over MCP an error is a result with \`isError: true\` and the envelope as structured content.`,
    '',
  );
  out.push(`${oneLine(codeSchema.description)}`, '');
  const unnamed = ((codeSchema.enum ?? []) as string[]).filter((c) => !new RegExp(`\\b${c}\\b`).test(String(codeSchema.description ?? '')));
  if (unnamed.length) out.push(`Other codes: ${unnamed.map((c) => code(c)).join(', ')}.`, '');
  if (common.length)
    out.push(`Every operation that needs a key may answer ${common.join(', ')}; the other statuses are named with each operation.`, '');
  out.push(
    '- `context.errors[]` names each failing field (`body.prompt`, `query.limit`, `path.id`; over MCP the argument: `prompt`, `limit`, `id`); a 404 has `context.resource` and `context.field`.',
    '- Retry only when `retryable` is true. On 429 wait `Retry-After` seconds (or until `X-RateLimit-Reset`, Unix ms; over MCP `context.retry_after_seconds`); on 5xx back off exponentially. Resend paid requests with the same idempotency key: nothing is charged twice.',
    '- Otherwise change the request: 400 fix the named fields (limits are enforced exactly as listed, never clamped; unknown fields are refused); 402 top up credits or subscribe; 403 use a key with the scope; 409 `idempotency_conflict` use a new key or wait for the first request.',
    '',
  );
  return `${out.join('\n')}\n`;
}
