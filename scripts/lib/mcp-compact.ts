// The compact, portable form of the MCP tool table (generated/mcp-tools.json): what tools/list
// answers must fit an agent's context and every mainstream MCP client. Pure functions over the
// self-contained schemas codegen.ts inlines from the spec:
//   - input schemas in the portable subset: no `type` arrays (split into `anyOf` branches with the
//     same meaning), no `$ref`, no boolean or untyped subschemas; descriptions trimmed, each one
//     said once per tool, `examples` dropped;
//   - output schemas as a shallow summary of the result's top-level fields (types and enums),
//     which every real result and the error envelope satisfy;
//   - tool descriptions trimmed to what the tool returns, what it costs and how to poll.
// The advertised input schema may be looser than the contract (a dropped pattern, a summarised
// nested shape); the executor still validates every call with the full generated validators, so
// the arguments accepted are exactly those REST accepts.
import type { Json, JsonObject } from '../../src/operations/operation-index.ts';

/** The budgets the generator holds the table to (bytes of JSON as tools/list sends it). */
export const MCP_LIST_MAX_BYTES = 64 * 1024;
export const MCP_TOOL_MAX_BYTES = 16 * 1024;
/**
 * Bytes of MCP_LIST_MAX_BYTES the table leaves for what the server adds to listed tools at run
 * time: the MCP Apps links (`_meta.ui.resourceUri` and the older `_meta["ui/resourceUri"]`) of the
 * tools with an inline preview (src/mcp/apps.ts), some 105 bytes each, and the task tools'
 * listing (src/mcp/tools.ts taskListing: `execution`, some 38 bytes each, and two status schemas).
 * test/mcp/tool-list.test.ts measures the list on the wire, additions included.
 */
export const MCP_LIST_RESERVED_BYTES = 1024;

const TYPE_KEYWORDS: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format', 'contentEncoding', 'contentMediaType'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains', 'unevaluatedItems'],
  object: [
    'properties',
    'required',
    'additionalProperties',
    'patternProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
    'dependentRequired',
    'dependentSchemas',
    'unevaluatedProperties',
  ],
};
TYPE_KEYWORDS.integer = TYPE_KEYWORDS.number;
const MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];
const LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const ONE_KEYWORDS = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];
/** Keywords that let a schema be a bare boolean (`additionalProperties: false`). */
const BOOLEAN_OK = new Set(['additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'items', 'propertyNames']);
/** Keywords that constrain a value (a schema without any accepts anything). */
const CONSTRAINING = new Set([
  'type',
  'enum',
  'const',
  ...Object.values(TYPE_KEYWORDS).flat(),
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'additionalItems',
  '$ref',
  '$dynamicRef',
]);

/** Every JSON type: `anyOf` these accepts any value, as an untyped schema does. */
const ANY_TYPE: Json[] = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const matchesType = (value: Json, type: string) =>
  type === 'null'
    ? value === null
    : type === 'integer'
      ? Number.isInteger(value)
      : type === 'array'
        ? Array.isArray(value)
        : type === 'object'
          ? isObj(value)
          : typeof value === type;

/**
 * `{type: [A, B], ...}` → `{anyOf: [{type: A, <A's keywords>}, {type: B, <B's keywords>}], ...}`:
 * the same set of values (type-specific keywords only ever apply to their type), one type each.
 */
export function splitTypeArray(node: JsonObject): JsonObject {
  const types = node.type;
  if (!Array.isArray(types)) return node;
  if (types.length === 1) return { ...node, type: types[0] };
  const typed = new Set(types.flatMap((t) => TYPE_KEYWORDS[t as string] ?? []));
  const outer: JsonObject = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'type' && !typed.has(k) && k !== 'enum' && k !== 'const') outer[k] = v;
  const branches = (types as string[]).flatMap((t) => {
    const b: JsonObject = { type: t };
    for (const k of TYPE_KEYWORDS[t] ?? []) if (k in node) b[k] = node[k];
    if (Array.isArray(node.enum)) {
      const values = node.enum.filter((v) => matchesType(v, t));
      if (values.length === 0) return [];
      if (t !== 'null') b.enum = values;
    }
    if ('const' in node) {
      if (!matchesType(node.const, t)) return [];
      if (t !== 'null') b.const = node.const;
    }
    return [b];
  });
  if (branches.length === 1) return { ...outer, ...branches[0] };
  if (Array.isArray(outer.anyOf)) return { ...outer, allOf: [...((outer.allOf as Json[]) ?? []), { anyOf: branches }] };
  return { ...outer, anyOf: branches };
}

/** The first sentences of `text` that fit in `max` characters (at least the first, cut at a word). */
export function trimText(text: string, max: number, keep?: RegExp): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  // Sentences end at . ! ? followed by a space and a capital, digit, quote or backtick (not after e.g.).
  const sentences = flat.split(/(?<=[.!?])(?<!\b(?:e\.g|i\.e|etc|vs)\.)\s+(?=[A-Z0-9`"(])/);
  // The first sentence always leads (cut at a word when it alone is too long); later ones follow
  // while they fit, and a sentence the reader needs (`keep`: how to poll) may run a little over.
  const first = sentences[0];
  if (first.length > max) {
    const space = first.lastIndexOf(' ', max - 1);
    return `${first.slice(0, space > max / 2 ? space : max - 1)}…`;
  }
  let out = first;
  for (const s of sentences.slice(1)) {
    const next = `${out} ${s}`;
    if (next.length <= max || (keep?.test(s) && next.length <= max + Math.min(200, max / 2))) out = next;
  }
  return out;
}

/** A pattern that only refuses control characters (`^[^\u0000-\u001F\u007F]*$`): left to the server. */
const CONTROL_ONLY = /^\^\[\^(?:\\u00[0-9A-Fa-f]{2}(?:-\\u00[0-9A-Fa-f]{2})?|\\[tnr])+\]\*\$$/;

export interface CompactOptions {
  /** Longest description kept on a top-level argument. */
  topDescription: number;
  /** Longest description kept deeper down (0: none). */
  nestedDescription: number;
  /** Depth (top-level arguments are 1) below which descriptions are dropped. */
  descriptionDepth: number;
  /** Whether `pattern`s are kept (the server checks them either way). */
  patterns: boolean;
  /** Longest tool description (trimmed by toolDescription: what it returns, costs and how to poll stay). */
  toolDescription: number;
}

export const COMPACT_LEVELS: CompactOptions[] = [
  { topDescription: 200, nestedDescription: 160, descriptionDepth: 6, patterns: true, toolDescription: 400 },
  { topDescription: 160, nestedDescription: 120, descriptionDepth: 4, patterns: false, toolDescription: 400 },
  { topDescription: 140, nestedDescription: 80, descriptionDepth: 3, patterns: false, toolDescription: 400 },
  { topDescription: 120, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  { topDescription: 90, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  { topDescription: 64, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  { topDescription: 48, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  { topDescription: 32, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  // Arguments without descriptions (their names, types and enums stay), the tool's description still whole.
  { topDescription: 0, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 400 },
  // Last: the largest tools' own descriptions said more briefly.
  { topDescription: 32, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 320 },
  { topDescription: 32, nestedDescription: 0, descriptionDepth: 1, patterns: false, toolDescription: 260 },
];

/** Subschemas at least this large (bytes of JSON) are written once per tool; a repeat points at the first. */
export const SHAPE_ONCE_BYTES = 240;

const withoutDescriptions = (node: Json): Json =>
  Array.isArray(node)
    ? node.map(withoutDescriptions)
    : isObj(node)
      ? Object.fromEntries(
          Object.entries(node)
            .filter(([k]) => k !== 'description')
            .map(([k, v]) => [k, withoutDescriptions(v)]),
        )
      : node;

/** The type(s) a schema admits, as a portable stand-in keeps them; undefined when not plain. */
function typeOnly(node: JsonObject): JsonObject | undefined {
  if (typeof node.type === 'string') return { type: node.type };
  const branches = (node.oneOf ?? node.anyOf) as Json[] | undefined;
  if (!Array.isArray(branches) || !branches.every((b) => isObj(b) && typeof b.type === 'string')) return undefined;
  const types = [...new Set(branches.map((b) => (b as JsonObject).type as string))];
  return types.length === 1 ? { type: types[0] } : { anyOf: types.map((t) => ({ type: t })) };
}

/** A readable name of a branch of a union: its discriminating `const` (`type=add_text`), else its index. */
function branchLabel(branch: Json, i: number): string {
  if (isObj(branch) && isObj(branch.properties)) {
    for (const [name, p] of Object.entries(branch.properties)) if (isObj(p) && typeof p.const === 'string') return `${name}=${p.const}`;
  }
  return `#${i + 1}`;
}

interface CompactState {
  /** Descriptions already written in this tool. */
  seen: Set<string>;
  /** Large subschemas already written in this tool (key: their JSON without descriptions) → where. */
  shapes: Map<string, string>;
}

/**
 * An input schema in the portable subset, trimmed: `type` arrays split, descriptions trimmed and
 * said once per tool (a repeated one is dropped), a large subschema written once per tool (a
 * repeat keeps its type and says where the shape is), `examples`, `title` and
 * control-character-only patterns dropped.
 */
export function compactInput(
  node: Json,
  opts: CompactOptions,
  depth = 0,
  state: CompactState = { seen: new Set(), shapes: new Map() },
  where = '',
  keyword?: string,
): Json {
  // A bare boolean where a schema object is expected: the object form of the same schema.
  if (typeof node === 'boolean' && !(keyword !== undefined && BOOLEAN_OK.has(keyword))) return node ? { anyOf: ANY_TYPE } : { not: {} };
  if (!isObj(node)) return Array.isArray(node) ? node.map((n) => compactInput(n, opts, depth, state, where)) : node;
  const src = { ...splitTypeArray(node) };
  // A schema that constrains nothing (any value): the same set of values, spelled with types.
  if (keyword !== 'not' && !Object.keys(src).some((k) => CONSTRAINING.has(k)) && !('if' in src && ('then' in src || 'else' in src)))
    src.anyOf = ANY_TYPE;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'examples' || k === 'title' || k === 'readOnly' || k === 'writeOnly' || k === '$comment') continue;
    if (k === 'pattern' && typeof v === 'string' && (!opts.patterns || CONTROL_ONLY.test(v))) continue;
    // Bounds that say nothing to a reader: the largest safe integer, the length of a uuid.
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'maxLength' && src.format === 'uuid') continue;
    if (k === 'description') {
      const max = depth <= 1 ? opts.topDescription : depth <= opts.descriptionDepth ? opts.nestedDescription : 0;
      if (max === 0 || typeof v !== 'string') continue;
      const text = trimText(v, max);
      if (depth > 1 && state.seen.has(text)) continue;
      state.seen.add(text);
      out[k] = text;
      continue;
    }
    if (MAP_KEYWORDS.includes(k) && isObj(v)) {
      out[k] = Object.fromEntries(
        Object.entries(v).map(([name, s]) => [
          name,
          compactInput(s, opts, depth + 1, state, k === 'properties' ? (where ? `${where}.${name}` : name) : where, k),
        ]),
      );
      continue;
    }
    if (LIST_KEYWORDS.includes(k) && Array.isArray(v)) {
      out[k] = v.map((s, i) =>
        compactInput(s, opts, depth, state, k === 'prefixItems' ? `${where}[${i}]` : `${where}(${branchLabel(s, i)})`, k),
      );
      continue;
    }
    if (ONE_KEYWORDS.includes(k) && (isObj(v) || Array.isArray(v) || typeof v === 'boolean')) {
      out[k] = compactInput(v, opts, k === 'items' ? depth + 1 : depth, state, k === 'items' ? `${where}[]` : where, k);
      continue;
    }
    out[k] = v;
  }
  if (depth > 1) {
    const key = JSON.stringify(withoutDescriptions(out));
    const first = state.shapes.get(key);
    const stand = typeOnly(out);
    if (first !== undefined && stand && key.length >= SHAPE_ONCE_BYTES) return { ...stand, description: `Same shape as ${first}.` };
    if (first === undefined && key.length >= SHAPE_ONCE_BYTES) state.shapes.set(key, where);
  }
  return out;
}

/** A scalar property of a result as the summary shows it: its type (or types) and short enum; undefined for objects, arrays and anything not plain. */
function shallowProperty(node: Json): JsonObject | undefined {
  if (!isObj(node)) return undefined;
  const s = splitTypeArray(node);
  const scalar = (t: unknown) => t === 'string' || t === 'integer' || t === 'number' || t === 'boolean';
  if (scalar(s.type)) {
    // A const or a short enum says the type already (the values are of it): the type is left out.
    if ('const' in s) return { const: s.const };
    if (Array.isArray(s.enum) && s.enum.length <= 8 && !s.enum.includes(null)) return { enum: s.enum };
    return { type: s.type as string };
  }
  const branches = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (Array.isArray(branches) && !s.allOf && !(s.anyOf && s.oneOf)) {
    const types = new Set<string>();
    for (const b of branches) {
      const t = isObj(b) ? splitTypeArray(b).type : undefined;
      if (typeof t !== 'string' || !(scalar(t) || t === 'null')) return undefined;
      types.add(t);
    }
    const list = [...types];
    return list.length === 1 ? { type: list[0] } : { anyOf: list.map((t) => ({ type: t })) };
  }
  return undefined;
}

/**
 * The shallow summary of a result schema: `{type: object, properties: {name: {type} | {enum} |
 * {const}}}` for its scalar top-level fields (ids, status, url, credits; objects and arrays are
 * left to the tool description), no `required` and no `additionalProperties`, so every real result
 * and the error envelope of an isError result validate against it. Given for every tool (MCP
 * clients check structuredContent against it); undefined only for a result that is not an object.
 */
export function shallowOutput(schema: Json | undefined): JsonObject | undefined {
  if (!isObj(schema)) return undefined;
  const s = splitTypeArray(schema);
  let props: Record<string, Json> | undefined;
  if (s.type === 'object' && isObj(s.properties) && !s.oneOf && !s.anyOf) props = s.properties;
  else {
    // A union of object shapes: the fields every branch declares with the same summary.
    const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
    if (!Array.isArray(branches) || !branches.every((b) => isObj(b) && b.type === 'object' && isObj(b.properties))) return undefined;
    const all = branches.map((b) => (b as JsonObject).properties as JsonObject);
    props = {};
    for (const [name, p] of Object.entries(all[0])) {
      const first = JSON.stringify(shallowProperty(p));
      if (first !== undefined && all.every((o) => name in o && JSON.stringify(shallowProperty(o[name])) === first)) props[name] = p;
    }
  }
  const properties: JsonObject = {};
  for (const [name, p] of Object.entries(props)) {
    // The error envelope's `error` (an object) must pass too: a scalar `error` is left out.
    const summary = name === 'error' ? undefined : shallowProperty(p);
    if (summary) properties[name] = summary;
  }
  return { type: 'object', properties };
}

export interface PortabilityFinding {
  path: string;
  rule: 'type-union' | 'ref' | 'boolean-schema' | 'untyped-schema';
}

/**
 * The portability problems the MCP Inspector CLI reports (`--strict`): `type` arrays, `$ref`
 * (any, here: the table is self-contained), bare boolean subschemas, and subschemas without any
 * constraining keyword. The generator refuses a table with any.
 */
export function portabilityFindings(node: Json, path = '', keyword?: string): PortabilityFinding[] {
  if (typeof node === 'boolean') return keyword !== undefined && BOOLEAN_OK.has(keyword) ? [] : [{ path, rule: 'boolean-schema' }];
  if (!isObj(node)) return [];
  const out: PortabilityFinding[] = [];
  if (Array.isArray(node.type)) out.push({ path, rule: 'type-union' });
  if ('$ref' in node) out.push({ path, rule: 'ref' });
  const constrains = Object.keys(node).some((k) => CONSTRAINING.has(k)) || ('if' in node && ('then' in node || 'else' in node));
  if (!constrains && keyword !== 'not') out.push({ path, rule: 'untyped-schema' });
  for (const k of MAP_KEYWORDS) {
    if (isObj(node[k]))
      for (const [name, s] of Object.entries(node[k] as JsonObject)) out.push(...portabilityFindings(s, `${path}.${k}.${name}`, k));
  }
  for (const k of LIST_KEYWORDS) {
    if (Array.isArray(node[k]))
      (node[k] as Json[]).forEach((s, i) => {
        out.push(...portabilityFindings(s, `${path}.${k}[${i}]`, k));
      });
  }
  for (const k of ONE_KEYWORDS) if (k in node) out.push(...portabilityFindings(node[k], `${path}.${k}`, k));
  return out;
}

/** A tool's description: the spec's text trimmed, keeping what it returns, costs and how to poll. */
export function toolDescription(text: string, max = 400): string {
  return trimText(text, max, /\bpoll|\breturns?\b|\bcosts?\b|\bfree\b|\bconfirm\b/i);
}

/**
 * REST operations named in a text (`poll GET /generations/{id}`) → the MCP tool that runs them
 * (`poll get_generation`), for operations with exactly one tool; others are left as written.
 */
export function restToTools(text: string, tools: Map<string, string>): string {
  return text.replace(
    /(?<![/\w])(GET|POST|PUT|PATCH|DELETE) (\/[A-Za-z0-9_{}/.-]*[A-Za-z0-9_}])/g,
    (m, method: string, path: string) => tools.get(`${method} ${path}`) ?? m,
  );
}

/** Every `description` in a schema passed through `f`. */
export function mapDescriptions(node: Json, f: (s: string) => string): Json {
  if (Array.isArray(node)) return node.map((n) => mapDescriptions(n, f));
  if (!isObj(node)) return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === 'description' && typeof v === 'string'
        ? f(v)
        : MAP_KEYWORDS.includes(k) && isObj(v)
          ? Object.fromEntries(Object.entries(v).map(([n, x]) => [n, mapDescriptions(x, f)]))
          : k === 'enum' || k === 'const' || k === 'default' || k === 'examples' || k === 'required'
            ? v
            : mapDescriptions(v, f),
    ]),
  );
}
