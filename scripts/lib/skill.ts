// Renders the agent instructions served at GET /api/v1/skill.md, read from the spec (and the
// catalog's prices), with every description given whole (never cut). When the whole contract fits
// SKILL_MAX_BYTES it is one page, `skill.md`. Otherwise `skill.md` is an index of at most
// SKILL_INDEX_MAX_BYTES (how to connect, the spec's own prose: credits, polling, idempotency,
// rate limits; the prices; create → poll → download; every page with its operations and tools;
// the error codes and retry rules) linking one page per area (`skill/<area>.md`, generated as
// `skill-<area>.md`, served by GET /api/v1/skill/{area}.md), each complete for its area and at
// most SKILL_MAX_BYTES: every operation (its MCP tools, scopes, whole description, one line per
// field with nested objects and union shapes such as the 19 edit operations, an example request)
// and every MCP-only tool of the area. A nested shape used again on a page is named, not repeated.
import type { Json, JsonObject, McpOnlyToolIndexEntry, OperationIndex, OperationIndexEntry } from './codegen.ts';
import { resolveRef } from './codegen.ts';

/** The most a page of the instructions may weigh (bytes); generation fails above it. */
export const SKILL_MAX_BYTES = 40 * 1024;
/** The most the index (`skill.md` when the contract needs more than one page) may weigh. */
export const SKILL_INDEX_MAX_BYTES = 24 * 1024;
/** Where the MCP adapter is mounted (src/mcp/index.ts), relative to the deployment's origin. */
export const MCP_PATH = '/mcp';

/** An area page: the operations of some spec tags and some MCP-only tools. */
export interface SkillArea {
  name: string;
  title: string;
  tags: string[];
  tools: string[];
}

/**
 * The pages, in the index's order. An operation whose tag, or an MCP-only tool whose name, no
 * area lists goes to the last area, so nothing is ever left out.
 */
export const SKILL_AREAS: SkillArea[] = [
  { name: 'generations', title: 'Generations and the catalog', tags: ['catalog', 'generations'], tools: [] },
  { name: 'slideshows', title: 'Slideshows', tags: ['slideshows'], tools: [] },
  { name: 'videos', title: 'Faceless videos', tags: ['videos'], tools: [] },
  { name: 'references', title: 'Reference inspirations', tags: ['references'], tools: [] },
  { name: 'editor', title: 'Editor', tags: ['editor'], tools: ['list_editor_sound_effects', 'upload_editor_media_from_url'] },
  {
    name: 'assets',
    title: 'Workspace assets',
    tags: ['assets'],
    tools: ['create_workspace_asset', 'delete_workspace_asset', 'recommend_voice'],
  },
  {
    name: 'social',
    title: 'Social publishing',
    tags: [],
    tools: ['list_social_accounts', 'publish_media_to_social', 'get_social_publication', 'list_social_publications'],
  },
  { name: 'webhooks', title: 'Webhooks', tags: ['webhooks'], tools: [] },
  { name: 'account', title: 'Account, contract and health', tags: ['meta', 'health'], tools: ['get_workspace'] },
];

/** The generated file of an area page (generated/ is flat). */
export const skillPageFile = (area: string) => `skill-${area}.md`;
/** An area page's link, relative to skill.md. */
const pageLink = (area: string) => `skill/${area}.md`;

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

interface RenderState {
  /** Component shapes already described on this page → where (`add_text.style`). */
  shapes: Map<string, string>;
  /** `name|meaning` of the fields already explained on this page: a field said again gets its type only. */
  said: Set<string>;
}

const newState = (): RenderState => ({ shapes: new Map(), said: new Set() });

/** A field's meaning, whole, once per page for the same field name and text. */
function meaning(state: RenderState, name: string, description: unknown): string {
  const text = oneLine(description);
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
    nested(spec, p, head, () => meaning(state, name, deref(spec, p).description), indent, where ? `${where}.${name}` : name, state, out);
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
  if (!branches) {
    fieldLines(spec, s, `${indent}  `, path, state, out);
    return;
  }
  const by = branchName(branches[0])?.split(':')[0];
  out.push(`${indent}  One of${by ? ` (by ${code(by)})` : ''}:`);
  for (const b of branches) {
    const label = branchName(b);
    const text = oneLine(b.description);
    out.push(`${indent}  - ${label ? code(label.split(': ')[1]) : 'shape'}${text ? ` — ${text}` : ''}`);
    const rest = {
      ...b,
      properties: Object.fromEntries(Object.entries(b.properties as JsonObject).filter(([k]) => !label || k !== label.split(':')[0])),
    };
    fieldLines(spec, rest, `${indent}    `, label ? label.split(': ')[1] : path, state, out);
  }
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

function pricesSection(catalog: SkillCatalog | undefined, where: string): string[] {
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
  out.push(`- Other prices are stated with each operation ${where} (\`Costs …\` or \`Free\`).`, '');
  return out;
}

/** What every page is rendered from: the spec's parts, read once. */
interface Doc {
  spec: JsonObject;
  index: OperationIndex;
  catalog?: SkillCatalog;
  info: JsonObject;
  /** The document's server (`/api/v1`). */
  server: string;
  /** info.description, one line per paragraph. */
  paragraphs: string[];
  /** Error statuses every authenticated operation may answer: said once, not per operation. */
  common: string[];
}

const lead = (p: string) => /^\*\*([^*]+)\.\*\*/.exec(p)?.[1]?.toLowerCase();

function docOf(spec: JsonObject, index: OperationIndex, catalog?: SkillCatalog): Doc {
  const info = spec.info as JsonObject;
  const authed = index.operations.filter((o) => o.scopes.length > 0);
  return {
    spec,
    index,
    catalog,
    info,
    server: String(((spec.servers ?? []) as JsonObject[])[0]?.url ?? ''),
    paragraphs: String(info.description ?? '')
      .trim()
      .split(/\n\s*\n/)
      .map(oneLine)
      .filter(Boolean),
    common: Object.keys(authed[0]?.responses ?? {}).filter((st) => !st.startsWith('2') && authed.every((o) => st in o.responses)),
  };
}

/** How to connect: REST with an API key, /mcp with OAuth 2.1 or an API key (from the security schemes). */
function connectSection(doc: Doc): string[] {
  const { spec, server } = doc;
  const schemes = ((spec.components ?? {}) as JsonObject).securitySchemes ?? {};
  const out = ['## Connect', ''];
  out.push(`- **REST**: every path below is under \`<origin>${server}\` (the health probes under the origin). JSON in, JSON out.`);
  for (const [name, raw] of Object.entries(schemes as JsonObject)) {
    const s = deref(spec, raw);
    if (s.type === 'http') out.push(`- **API key** (\`${name}\`): ${oneLine(s.description)}`);
  }
  out.push(
    `- **MCP**: \`POST <origin>${MCP_PATH}\`, the remote MCP endpoint (Streamable HTTP, stateless JSON-RPC \`tools/list\`, \`tools/call\`, and tasks for long work: Polling below). Each operation names its tool, whose arguments are the operation's path, query and body fields side by side (\`Idempotency-Key\` → \`idempotency_key\`). Connect either way:`,
  );
  out.push(`  1. API key as bearer: \`Authorization: Bearer <API key>\` on \`${MCP_PATH}\`, as for REST.`);
  for (const [name, raw] of Object.entries(schemes as JsonObject)) {
    const s = deref(spec, raw);
    if (s.type !== 'oauth2') continue;
    const flow = deref(spec, ((s.flows ?? {}) as JsonObject).authorizationCode as Json);
    const scopes = Object.entries((flow.scopes ?? {}) as JsonObject)
      .map(([k, v]) => `${code(k)} ${oneLine(v)}`)
      .join('; ');
    out.push(
      `  2. OAuth 2.1 (\`${name}\`): ${oneLine(s.description)} Authorize at \`${flow.authorizationUrl}\`, token at \`${flow.tokenUrl}\`. Scopes: ${scopes}`,
    );
  }
  out.push('');
  return out;
}

/** The spec's prose, paragraph by paragraph, but for **Errors.** (the Errors section) and **Authentication.** (said by Connect). */
const proseSection = (doc: Doc) =>
  doc.paragraphs.filter((p) => lead(p) !== 'errors' && lead(p) !== 'authentication').flatMap((p) => [p, '']);

function errorsSection(doc: Doc): string[] {
  const components = (doc.spec.components ?? {}) as JsonObject;
  const envelope = deref(doc.spec, (components.schemas as JsonObject).ErrorResponse as Json);
  const inner = deref(doc.spec, (envelope.properties as JsonObject)?.error as Json);
  const codeSchema = deref(doc.spec, (inner.properties as JsonObject)?.code as Json);
  const out = ['## Errors and retries', ''];
  const errorsProse = doc.paragraphs.find((p) => lead(p) === 'errors');
  out.push(
    `${errorsProse ?? 'Every error uses one envelope: `{"error": {"code", "message", "retryable", "context"}}`.'} Over MCP an error is a result with \`isError: true\` and the envelope as structured content.`,
    '',
  );
  out.push(`${oneLine(codeSchema.description)}`, '');
  const unnamed = ((codeSchema.enum ?? []) as string[]).filter((c) => !new RegExp(`\\b${c}\\b`).test(String(codeSchema.description ?? '')));
  if (unnamed.length) out.push(`Other codes: ${unnamed.map((c) => code(c)).join(', ')}.`, '');
  if (doc.common.length)
    out.push(`Every operation that needs a key may answer ${doc.common.join(', ')}; the other statuses are named with each operation.`, '');
  out.push(
    '- `context.errors[]` names each failing field (`body.prompt`, `query.limit`, `path.id`; over MCP the argument: `prompt`, `limit`, `id`); a 404 has `context.resource` and `context.field`.',
    '- Retry only when `retryable` is true. On 429 wait `Retry-After` seconds (or until `X-RateLimit-Reset`, Unix ms; over MCP `context.retry_after_seconds`); on 5xx back off exponentially. Resend paid requests with the same idempotency key: nothing is charged twice.',
    '- Otherwise change the request: 400 fix the named fields (limits are enforced exactly as listed, never clamped; unknown fields are refused); 402 top up credits or subscribe; 403 use a key with the scope; 409 `idempotency_conflict` use a new key or wait for the first request.',
    '',
  );
  return out;
}

const toolsOf = (op: OperationIndexEntry) => op.mcpTools.map((t) => code(t.name)).join(', ');

/** An operation's fields: parameters, then the body (another media type: only what differs). */
function operationFields(doc: Doc, op: OperationIndexEntry, raw: JsonObject, state: RenderState): string[] {
  const { spec } = doc;
  const lines: string[] = [];
  for (const p of op.params) {
    if (p.name === 'idempotency-key') {
      lines.push(`- \`Idempotency-Key\` (header; MCP \`idempotency_key\`) — see Idempotency.`);
      continue;
    }
    const head = `- ${code(p.name)} (${p.in}) ${describeSchema(spec, p.schema)}${p.required ? ' *' : ''}`;
    const text = () => meaning(state, p.name, p.description ?? deref(spec, p.schema).description);
    nested(spec, p.schema, head, text, '', `${op.operationId}.${p.name}`, state, lines);
  }
  if (!raw.requestBody) return lines;
  const content = (deref(spec, raw.requestBody as Json).content ?? {}) as JsonObject;
  const [type, media] = Object.entries(content)[0] ?? [];
  if (!type || !isObj(media)) return lines;
  lines.push(`Body (\`${type}\`):`);
  const before = lines.length;
  fieldLines(spec, media.schema as Json, '', op.operationId, state, lines);
  if (lines.length === before) lines.push(`- ${describeSchema(spec, media.schema as Json)}`);
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
  return lines;
}

/** `Example: \`METHOD path\` body → statuses (with what a success returns), also the other errors.` */
function exampleLine(doc: Doc, op: OperationIndexEntry, raw: JsonObject): string {
  const { spec } = doc;
  const pathValues = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const p = op.params.find((x) => x.in === 'path' && x.name === name);
    return String(sampleValue(spec, p?.schema));
  });
  const query = op.params
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(sampleValue(spec, p.schema)))}`);
  // Under the document's server like the headings (Connect says where that is); other servers in full.
  const target = `${op.server === undefined ? '' : op.server.replace(/\/$/, '')}${pathValues}${query.length ? `?${query.join('&')}` : ''}`;
  let example = '';
  const [type, media] = Object.entries((deref(spec, raw.requestBody as Json).content ?? {}) as JsonObject)[0] ?? [];
  if (type?.includes('json') && isObj(media)) example = ` \`${JSON.stringify(bodyExample(spec, media))}\``;
  const success = Object.entries(op.responses).filter(([s]) => s.startsWith('2'));
  const errors = Object.keys(op.responses).filter((s) => !s.startsWith('2') && !(op.scopes.length > 0 && doc.common.includes(s)));
  const answers = `${success.map(([s, r]) => (r.description ? `${s} (${oneLine(r.description)})` : s)).join(', ')}${errors.length ? `; also ${errors.join(', ')}` : ''}`;
  return `Example: \`${op.method} ${target}\`${example} → ${answers}`;
}

/** The path as a client writes it: under the document's server, or from the root for operations with their own. */
const shownPath = (op: OperationIndexEntry) => (op.server === undefined ? op.path : `${op.server.replace(/\/$/, '')}${op.path}`);

/** One operation: heading (method, path, operationId, MCP tools, scopes), whole description, fields, example. */
function operationSection(doc: Doc, op: OperationIndexEntry, state: RenderState): string[] {
  const paths = doc.spec.paths as JsonObject;
  const raw = deref(doc.spec, deref(doc.spec, paths[op.path] as Json)[op.method.toLowerCase()] as Json);
  const tags = [op.mcpTools.length ? `tool ${toolsOf(op)}` : '', scopeText(op.scopes), op.rateLimit ? 'rate-limited' : ''].filter(Boolean);
  const out = [`### ${op.method} ${shownPath(op)} · \`${op.operationId}\` · ${tags.join(' · ')}`, ''];
  if (op.deprecated) out.push(`**Deprecated**${op.aliasOf ? `: the same as \`${op.aliasOf}\`; use that instead` : ''}.`, '');
  if (!op.description) out.push(`${oneLine(op.summary)}.`, '');
  if (op.aliasOf) return out;
  if (op.mcpTools.length > 1) {
    for (const t of op.mcpTools) if (t.description) out.push(`- \`${t.name}\`: ${oneLine(t.description)}`);
    out.push('');
  }
  if (op.description) out.push(oneLine(op.description), '');
  const lines = operationFields(doc, op, raw, state);
  if (lines.length) out.push(...lines, '');
  out.push(exampleLine(doc, op, raw), '');
  return out;
}

/** One MCP-only tool: whole description, scopes, its arguments as fields, an example call. */
function toolSection(doc: Doc, tool: McpOnlyToolIndexEntry, state: RenderState): string[] {
  const declarations = (doc.spec['x-mcp-only-tools'] ?? []) as JsonObject[];
  const d = declarations.find((x) => x.name === tool.operationId) ?? {};
  const out = [`### \`${tool.operationId}\``, '', `${oneLine(tool.description)} Scope ${scopeText(tool.scopes)}.`, ''];
  const lines: string[] = [];
  fieldLines(doc.spec, d.inputSchema as Json, '', tool.operationId, state, lines);
  if (lines.length) out.push(...lines, '');
  out.push(`Example: \`${JSON.stringify({ name: tool.operationId, arguments: sampleValue(doc.spec, d.inputSchema as Json) })}\``, '');
  return out;
}

const OPERATIONS_INTRO =
  "Each once: method and path, operationId, MCP tool, scopes, what it does, its fields (one line each: name, type and limits (a string's limits are its length), `*` if required, meaning; nested fields indented; `a|b` lists the allowed values) and an example request with what it answers.";

/** The operations and MCP-only tools given, each with a fresh page state. */
function operationsSections(doc: Doc, ops: OperationIndexEntry[], tools: McpOnlyToolIndexEntry[], note: string): string[] {
  const state = newState();
  const out: string[] = [];
  if (ops.length) out.push('## Operations', '', `${OPERATIONS_INTRO}${note}`, '', ...ops.flatMap((op) => operationSection(doc, op, state)));
  if (tools.length)
    out.push(
      '## MCP-only tools',
      '',
      `Tools of \`${MCP_PATH}\` with no REST operation; their arguments are listed as fields.`,
      '',
      ...tools.flatMap((tool) => toolSection(doc, tool, state)),
    );
  return out;
}

const title = (doc: Doc) => `${doc.info.title} — agent instructions`;
const intro = (doc: Doc) =>
  `API version ${doc.info.version}. ${oneLine(doc.info.summary)} Generated from the OpenAPI contract (\`GET ${doc.server}/openapi.json\`)`;

/** The whole contract on one page. */
function renderSinglePage(doc: Doc): string {
  const out = [`# ${title(doc)}`, '', `${intro(doc)}; this page alone is enough to use the API.`, ''];
  out.push(...connectSection(doc), ...proseSection(doc), ...pricesSection(doc.catalog, 'below'));
  out.push(...operationsSections(doc, doc.index.operations, doc.index.mcpOnlyTools, ''), ...errorsSection(doc));
  return `${out.join('\n')}\n`;
}

/** Each area's operations and MCP-only tools, in the index's order; what no area names goes to the last. */
export function areasOf(index: OperationIndex): { area: SkillArea; ops: OperationIndexEntry[]; tools: McpOnlyToolIndexEntry[] }[] {
  const last = SKILL_AREAS[SKILL_AREAS.length - 1];
  const byTag = (op: OperationIndexEntry) => SKILL_AREAS.find((a) => a.tags.includes(op.tag)) ?? last;
  const byTool = (t: McpOnlyToolIndexEntry) => SKILL_AREAS.find((a) => a.tools.includes(t.operationId)) ?? last;
  return SKILL_AREAS.map((area) => ({
    area,
    ops: index.operations.filter((op) => byTag(op) === area),
    tools: index.mcpOnlyTools.filter((t) => byTool(t) === area),
  })).filter((a) => a.ops.length + a.tools.length > 0);
}

/** Paid work (the operations taking an idempotency key) → the GET that follows it → its media. */
function flowSection(doc: Doc, areas: ReturnType<typeof areasOf>): string[] {
  const ops = doc.index.operations;
  const creates = ops.filter((o) => o.params.some((p) => p.name === 'idempotency-key'));
  if (!creates.length) return [];
  const pollOf = (c: OperationIndexEntry) => {
    const gets = ops.filter((o) => o.method === 'GET' && o.tag === c.tag);
    return gets.find((o) => o.path.startsWith(`${c.path}/{`)) ?? gets.find((o) => o.path.includes('{id}')) ?? gets[0];
  };
  const name = (o: OperationIndexEntry) => `${o.mcpTools.length ? `${code(o.mcpTools[0].name)}, ` : ''}\`${o.method} ${shownPath(o)}\``;
  const page = (o: OperationIndexEntry) => areas.find((a) => a.ops.includes(o))!.area.name;
  const out = ['## Create → poll → download', ''];
  out.push(
    'Paid work is queued, then followed until it ends. 1. Create it with an `Idempotency-Key` (Credits and Idempotency above): the answer has the id, `credits_deducted` and `remaining_credits`. 2. Poll the GET of that id every few seconds (Polling above) until it is completed, ready, failed, error or canceled (over MCP, a task instead: Polling above). 3. Download: a finished record carries signed URLs of its media, which expire; GET the record again for fresh ones. Each line links the page with every field of both calls.',
    '',
  );
  for (const c of creates) {
    const poll = pollOf(c);
    out.push(`- ${name(c)} → ${poll ? name(poll) : 'its status'}: [${page(c)}](${pageLink(page(c))})`);
  }
  out.push('');
  return out;
}

/** Every area page: its link, then each operation (method, path, operationId, tools) and MCP-only tool it describes. */
function pagesSection(doc: Doc, areas: ReturnType<typeof areasOf>): string[] {
  const out = [
    '## Pages',
    '',
    `Each page is complete for its area: every operation and MCP tool of it, every field with its whole meaning, an example of each call. Fetch it without a key: \`GET <origin>${doc.server}/skill/<area>.md\`.`,
    '',
  ];
  for (const { area, ops, tools } of areas) {
    out.push(`### [${area.title}](${pageLink(area.name)})`, '');
    for (const op of ops)
      out.push(`- \`${op.method} ${shownPath(op)}\` \`${op.operationId}\`${op.mcpTools.length ? ` (tool ${toolsOf(op)})` : ''}`);
    for (const t of tools) out.push(`- MCP-only tool ${code(t.operationId)}`);
    out.push('');
  }
  return out;
}

function renderIndex(doc: Doc, areas: ReturnType<typeof areasOf>): string {
  const out = [
    `# ${title(doc)}`,
    '',
    `${intro(doc)}. This page is the index: how to connect, credits, polling, idempotency, prices, the flow of paid work, errors and retries. The operations and MCP tools, with every field, are on the pages listed under Pages, one per area.`,
    '',
  ];
  out.push(...connectSection(doc), ...proseSection(doc), ...pricesSection(doc.catalog, 'on its page'));
  out.push(...flowSection(doc, areas), ...pagesSection(doc, areas), ...errorsSection(doc));
  return `${out.join('\n')}\n`;
}

function renderAreaPage(doc: Doc, area: SkillArea, ops: OperationIndexEntry[], tools: McpOnlyToolIndexEntry[]): string {
  const out = [
    `# ${title(doc)}: ${area.title}`,
    '',
    `${intro(doc)}. Part of the agent instructions: the [index](../skill.md) says how to connect (REST with an API key; \`POST <origin>${MCP_PATH}\` with OAuth 2.1 or an API key), credits, polling, idempotency, prices, errors and retries. This page is complete for its area: every operation and MCP tool of it, every field with its whole meaning.`,
    '',
  ];
  const note = doc.common.length
    ? ` Every operation that needs a key may also answer ${doc.common.join(', ')} (the index's Errors and retries).`
    : '';
  out.push(...operationsSections(doc, ops, tools, note));
  return `${out.join('\n')}\n`;
}

const bytes = (s: string) => Buffer.byteLength(s);

/**
 * The instructions as generated files: `skill.md` alone when the whole contract fits one page,
 * else `skill.md` as the index and one `skill-<area>.md` per area. Every description is whole;
 * a page over its budget fails the generation, naming it.
 */
export function renderSkillPages(spec: JsonObject, index: OperationIndex, catalog?: SkillCatalog): Record<string, string> {
  const doc = docOf(spec, index, catalog);
  const single = renderSinglePage(doc);
  if (bytes(single) <= SKILL_MAX_BYTES) return { 'skill.md': single };
  const areas = areasOf(index);
  const files: Record<string, string> = { 'skill.md': renderIndex(doc, areas) };
  if (bytes(files['skill.md']) > SKILL_INDEX_MAX_BYTES)
    throw new Error(`skill.md (the index) is ${bytes(files['skill.md'])} bytes, over ${SKILL_INDEX_MAX_BYTES}: shorten info.description`);
  for (const { area, ops, tools } of areas) {
    const text = renderAreaPage(doc, area, ops, tools);
    if (bytes(text) > SKILL_MAX_BYTES)
      throw new Error(
        `skill page ${area.name} is ${bytes(text)} bytes, over ${SKILL_MAX_BYTES}: shorten its descriptions or split the area (SKILL_AREAS in scripts/lib/skill.ts)`,
      );
    files[skillPageFile(area.name)] = text;
  }
  return files;
}
