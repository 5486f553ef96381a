// The breaking-change gate: the contract (spec/openapi.yaml) against the last released one
// (spec/released/openapi-<version>.json), classified by api-smart-diff (OpenAPI 3.0/3.1 rules:
// JSON Schema 2020-12 `type` arrays, `const`, `$ref`), with these explicit rules on top:
//
// - Compared operation by operation with every local $ref inlined. api-smart-diff compares a
//   shared component once and reuses that result wherever the component is referenced, so a
//   change to a schema used in both requests and responses (an enum, say) came out breaking in
//   some responses and non-breaking in others. Inlined, each use is judged in its own place;
//   comparing only the operations whose text changed keeps that fast.
// - A property made required in a request body is breaking even when the schema had no
//   `required` list before (api-smart-diff classifies a new `required` list as non-breaking).
// - A removed 501 response whose body was `not_implemented` is not breaking: the capability
//   landed, and no client can depend on being refused.
// - A changed `const` is breaking in requests and responses alike (api-smart-diff treats it as an
//   enum of one and calls a response's new value non-breaking; clients switch on such values).
// - A changed `type` is judged by the sets of types (a 3.1 `type` array or one name; an integer
//   is a number): a request may only widen them, a response may only narrow them. api-smart-diff
//   calls a response's `integer` becoming `string` non-breaking.
// - A property removed from a closed request schema (`additionalProperties: false`) is breaking:
//   clients still sending it get 400 (api-smart-diff calls a removed request property non-breaking).
// - A value added to an enum in a response is not breaking: the contract says clients accept
//   unknown enum values (info.description, "Compatibility"); api-smart-diff calls it breaking.
// - A nullable value written as a `oneOf` or `anyOf` of one typed schema and `{type: 'null'}` is
//   compared as that schema with 'null' added to its `type`: the same values, so a field of the
//   released contract written `type: [integer, 'null']` that now names a shared schema is not a
//   change (api-smart-diff calls the added alternative breaking in a response).
// - Examples and tags are annotations; a new top-level `webhooks` entry is an addition.
// - Vendor extensions (`x-…`: MCP tool tables, body limits, rate-limit names) are left out: they
//   are not part of what an HTTP client or a generator reads.
// - An operation that was pending in the released contract (it declared its 501 not_implemented,
//   the only answer it gave) may change freely; removing it is still breaking.
// - Only breaking changes fail the gate, and only while `info.version`'s major equals the
//   released one; raising the major allows them (they are still listed).
import { apiCompare } from 'api-smart-diff';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
export type ChangeType = 'breaking' | 'non-breaking' | 'annotation' | 'unclassified' | 'deprecated';

export interface Change {
  type: ChangeType;
  action: 'add' | 'remove' | 'replace' | 'rename';
  /** Where: `GET /generations/{id}` for an operation's change, `document` for the rest. */
  operation: string;
  /** JSON path inside the document, e.g. paths./generations/{id}.get.responses.200.content.application/json.schema.properties.progress */
  path: string;
  /** What changed, in words (api-smart-diff's annotation, or the rule that reclassified it). */
  description: string;
  /** Why an explicit rule of this gate changed api-smart-diff's classification, if one did. */
  rule?: string;
}

export interface GateResult {
  releasedVersion: string;
  version: string;
  majorRaised: boolean;
  changes: Change[];
  breaking: Change[];
  /** True when the contract may ship: no breaking change, or the major version was raised. */
  ok: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The document without vendor extensions (`x-…` keys), at any depth. */
export function stripExtensions(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripExtensions);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.startsWith('x-'))
      .map(([k, x]) => [k, stripExtensions(x)]),
  );
}

/** The document with every local $ref replaced by a copy of its target (a $ref inside its own target is kept). */
export function inlineRefs(doc: JsonObject): JsonObject {
  const target = (ref: string): Json =>
    ref
      .slice(2)
      .split('/')
      .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((node, key) => (isObject(node) || Array.isArray(node) ? ((node as Record<string, Json>)[key] ?? null) : null), doc);
  const walk = (v: Json, stack: string[]): Json => {
    if (Array.isArray(v)) return v.map((x) => walk(x, stack));
    if (!isObject(v)) return v;
    const ref = v.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/') && !stack.includes(ref)) {
      const resolved = target(ref);
      if (isObject(resolved)) {
        const { $ref: _, ...siblings } = v;
        return walk({ ...resolved, ...siblings }, [...stack, ref]);
      }
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, stack)]));
  };
  // Components are reached through the $refs; only the security schemes are kept as they are.
  const { components, ...rest } = doc;
  const schemes = isObject(components) ? components.securitySchemes : undefined;
  return walk({ ...rest, ...(schemes ? { components: { securitySchemes: schemes } } : {}) }, []) as JsonObject;
}

/** Keywords that do not only constrain values of their own type: a schema with one is left as written by nullableAsType. */
const NOT_TYPE_SPECIFIC = ['type', 'enum', 'const', 'oneOf', 'anyOf', 'allOf', 'not', 'if', '$ref'];

/**
 * The document with every `oneOf`/`anyOf` of a schema and `{type: 'null'}` written as that schema
 * with 'null' added to its `type` (`{type: [integer, 'null'], minimum: 1}`), at any depth. Only a
 * schema with one `type` and otherwise type-specific keywords is rewritten, so the values are the same.
 */
export function nullableAsType(v: Json): Json {
  if (Array.isArray(v)) return v.map(nullableAsType);
  if (!isObject(v)) return v;
  const out = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nullableAsType(x)])) as JsonObject;
  for (const key of ['oneOf', 'anyOf'] as const) {
    const list = out[key];
    if (!Array.isArray(list) || list.length !== 2) continue;
    const nullAt = list.findIndex((x) => isObject(x) && x.type === 'null' && Object.keys(x).length === 1);
    const other = list[1 - nullAt];
    if (nullAt < 0 || !isObject(other) || typeof other.type !== 'string') continue;
    const { [key]: _, ...siblings } = out;
    if ([...Object.keys(other), ...Object.keys(siblings)].some((k) => k !== 'type' && NOT_TYPE_SPECIFIC.includes(k)) || 'type' in siblings)
      continue;
    return { ...other, ...siblings, type: [other.type, 'null'] };
  }
  return out;
}

/**
 * The two sides of one operation without the parts that did not change (responses, request body,
 * parameters equal on both sides), so api-smart-diff compares only what changed.
 */
function changedParts(b: JsonObject, a: JsonObject, method: string): [JsonObject, JsonObject] {
  const [ob, oa] = [{ ...(b[method] as JsonObject) }, { ...(a[method] as JsonObject) }];
  const same = (x: Json | undefined, y: Json | undefined) => JSON.stringify(x) === JSON.stringify(y);
  for (const key of ['requestBody', 'parameters'] as const) {
    if (key in ob && key in oa && same(ob[key], oa[key])) {
      delete ob[key];
      delete oa[key];
    }
  }
  if (isObject(ob.responses) && isObject(oa.responses)) {
    const [rb, ra] = [{ ...ob.responses }, { ...oa.responses }];
    for (const status of Object.keys(rb)) {
      if (status in ra && same(rb[status], ra[status])) {
        delete rb[status];
        delete ra[status];
      }
    }
    [ob.responses, oa.responses] = [rb, ra];
  }
  const shared = (item: JsonObject) => Object.fromEntries(Object.entries(item).filter(([k]) => !METHODS.includes(k)));
  return [
    { ...shared(b), [method]: ob },
    { ...shared(a), [method]: oa },
  ];
}

/** Operations by `METHOD /path` (path parameters renamed to `{}` for matching), with their path item's shared parts. */
function operations(doc: JsonObject): Map<string, { label: string; path: string; method: string; item: JsonObject }> {
  const out = new Map<string, { label: string; path: string; method: string; item: JsonObject }>();
  for (const [p, rawItem] of Object.entries((doc.paths ?? {}) as JsonObject)) {
    if (!isObject(rawItem)) continue;
    const shared = Object.fromEntries(Object.entries(rawItem).filter(([k]) => !METHODS.includes(k)));
    for (const method of METHODS) {
      const op = rawItem[method];
      if (!isObject(op)) continue;
      out.set(`${method.toUpperCase()} ${p.replace(/\{[^}]*\}/g, '{}')}`, {
        label: `${method.toUpperCase()} ${p}`,
        path: p,
        method,
        item: { ...shared, [method]: op },
      });
    }
  }
  return out;
}

/** The document's top level without its paths (servers, security, security schemes, info). */
function documentShell(doc: JsonObject): JsonObject {
  const { paths: _, components, ...rest } = doc;
  const schemes = isObject(components) ? components.securitySchemes : undefined;
  return { ...rest, paths: {}, ...(schemes ? { components: { securitySchemes: schemes } } : {}) };
}

function compare(before: JsonObject, after: JsonObject, operation: string): Change[] {
  const { diffs } = apiCompare(before, after);
  return diffs.map((d) => ({
    type: d.type as ChangeType,
    action: d.action as Change['action'],
    operation,
    path: d.path.map(String).join('.'),
    description: d.description ?? '',
    // Kept for the rules below; not part of the result.
    ...({ _diff: d } as object),
  }));
}

const major = (version: string) => Number(/^(\d+)/.exec(version)?.[1] ?? NaN);

const get = (node: Json | undefined, path: (string | number)[]): Json | undefined =>
  path.reduce<Json | undefined>((n, k) => (isObject(n) ? n[k as string] : Array.isArray(n) ? n[k as number] : undefined), node);

/** A response that is the 501 `not_implemented` envelope (by its example's code or its description). */
function isNotImplemented(response: Json | undefined): boolean {
  const json = get(response, ['content', 'application/json']);
  const codes = [
    get(json, ['example', 'error', 'code']),
    ...Object.values((get(json, ['examples']) ?? {}) as JsonObject).map((e) => get(e, ['value', 'error', 'code'])),
  ];
  return codes.includes('not_implemented') || /^not_implemented\b/.test(String(get(response, ['description']) ?? ''));
}

/** api-smart-diff's classification with this gate's explicit rules applied (see the file header). */
function reclassify(
  change: Change & { _diff?: { path: (string | number)[]; before?: Json; after?: Json } },
  before: JsonObject,
  after: JsonObject,
): Change {
  const { _diff: d, ...c } = change;
  if (!d) return c;
  const p = d.path;
  const inRequest = (p.includes('requestBody') || p.includes('parameters')) && !p.includes('responses');
  const inResponse = p.includes('responses');
  // The schema keyword `type` (not a property named type), or an entry of a `type` array.
  const typeAt =
    p[p.length - 1] === 'type' ? p.length - 1 : p[p.length - 2] === 'type' && typeof p[p.length - 1] === 'number' ? p.length - 2 : -1;
  if (typeAt > 0 && p[typeAt - 1] !== 'properties' && (inRequest || inResponse)) {
    const typePath = p.slice(0, typeAt + 1);
    const types = (v: Json | undefined) => new Set((Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String));
    const [was, now] = [types(get(before, typePath)), types(get(after, typePath))];
    // Every type of `a` is accepted by `b` (an integer is a number).
    const within = (a: Set<string>, b: Set<string>) => [...a].every((x) => b.has(x) || (x === 'integer' && b.has('number')));
    const safe = was.size > 0 && now.size > 0 && (inRequest ? within(was, now) : within(now, was));
    const type: ChangeType = safe ? 'non-breaking' : 'breaking';
    if (type !== c.type)
      return { ...c, type, rule: inRequest ? 'a request type may only be widened' : 'a response type may only be narrowed' };
    return c;
  }
  // paths.<p>.<method>.responses.<status>
  if (
    c.action === 'remove' &&
    p.length === 5 &&
    p[0] === 'paths' &&
    p[3] === 'responses' &&
    p[4] === '501' &&
    isNotImplemented(get(before, p))
  ) {
    return { ...c, type: 'non-breaking', rule: 'a removed 501 not_implemented response is a capability landing, not a break' };
  }
  if (
    inRequest &&
    c.action === 'remove' &&
    p[p.length - 2] === 'properties' &&
    c.type !== 'breaking' &&
    get(after, p.slice(0, -2)) !== undefined &&
    get(get(after, p.slice(0, -2)), ['additionalProperties']) === false
  ) {
    return { ...c, type: 'breaking', rule: 'a field removed from a closed request schema is refused (400) when clients still send it' };
  }
  if (inResponse && c.action === 'add' && p[p.length - 2] === 'enum' && typeof p[p.length - 1] === 'number' && c.type === 'breaking') {
    return { ...c, type: 'non-breaking', rule: 'clients accept unknown enum values in responses (info.description, Compatibility)' };
  }
  if ((p.includes('examples') || p.includes('example') || p[0] === 'tags') && c.type !== 'annotation') {
    return { ...c, type: 'annotation', rule: 'examples and tags are documentation' };
  }
  if (p[0] === 'webhooks' && c.action === 'add' && c.type === 'unclassified') {
    return { ...c, type: 'non-breaking', rule: 'a new webhook is an addition' };
  }
  if (p[p.length - 1] === 'const' && c.action === 'replace' && c.type !== 'breaking') {
    return { ...c, type: 'breaking', rule: 'a changed const value is breaking' };
  }
  // A property made required in a request body, the schema's first `required` entry included.
  const last = p[p.length - 1];
  const parentKey = p[p.length - 2];
  if (inRequest && p.includes('requestBody') && c.action === 'add' && c.type !== 'breaking') {
    if (parentKey === 'required' && typeof last === 'number') {
      return { ...c, type: 'breaking', rule: 'a new required request field is breaking' };
    }
    if (last === 'required' && Array.isArray(d.after) && d.after.length > 0) {
      return { ...c, type: 'breaking', rule: 'a new required request field is breaking' };
    }
  }
  return c;
}

const preparedDocs = new WeakMap<JsonObject, JsonObject>();
/** The document without extensions, with its $refs inlined and nullables as type arrays, kept per document object (the documents are treated as immutable). */
function prepared(doc: JsonObject): JsonObject {
  let out = preparedDocs.get(doc);
  if (!out) preparedDocs.set(doc, (out = nullableAsType(inlineRefs(stripExtensions(doc) as JsonObject)) as JsonObject));
  return out;
}

/** Every change from `released` to `current`, classified; `ok` unless a breaking change ships without a major bump. */
export function contractDiff(released: JsonObject, current: JsonObject): GateResult {
  const before = prepared(released);
  const after = prepared(current);
  const changes: Change[] = [];
  const shell = (d: JsonObject, paths: JsonObject) => ({ openapi: d.openapi, info: d.info, paths });

  // The document's own parts (servers, security, info).
  const [shellB, shellA] = [documentShell(before), documentShell(after)];
  for (const c of compare(shellB, shellA, 'document')) changes.push(reclassify(c, shellB, shellA));

  const ops = { before: operations(before), after: operations(after) };
  for (const key of new Set([...ops.before.keys(), ...ops.after.keys()])) {
    const b = ops.before.get(key);
    const a = ops.after.get(key);
    if (b && a && JSON.stringify(b.item) === JSON.stringify(a.item)) continue;
    const label = (a ?? b)!.label;
    // Both sides keep the same path key so a change inside the operation is not seen as a new path.
    const path = (a ?? b)!.path;
    const [itemB, itemA] = b && a ? changedParts(b.item, a.item, b.method) : [b?.item, a?.item];
    const docB = shell(before, itemB ? { [path]: itemB } : {});
    const docA = shell(after, itemA ? { [path]: itemA } : {});
    // A pending operation of the released contract (its declared 501 not_implemented is all it
    // answered; src/operations/pending.ts) had no behaviour a client could rely on: whatever it
    // becomes when it lands is not a break. Removing it still is (its client function vanishes).
    const pending = b && a && isNotImplemented(get(b.item, [b.method, 'responses', '501']));
    for (const raw of compare(docB, docA, label)) {
      const c = reclassify(raw, docB, docA);
      changes.push(
        pending && c.type === 'breaking'
          ? { ...c, type: 'non-breaking', rule: 'the operation was pending (501 not_implemented) in the released contract' }
          : c,
      );
    }
  }

  const releasedVersion = String((released.info as JsonObject | undefined)?.version ?? '');
  const version = String((current.info as JsonObject | undefined)?.version ?? '');
  const majorRaised = major(version) > major(releasedVersion);
  const breaking = changes.filter((c) => c.type === 'breaking');
  return { releasedVersion, version, majorRaised, changes, breaking, ok: breaking.length === 0 || majorRaised };
}

/** One line per change: `breaking  GET /assets: [Removed] operation GET /assets (paths./assets.get)`. */
export function formatChange(c: Change): string {
  return `${c.type.padEnd(12)} ${c.operation}: ${c.description || `${c.action} ${c.path}`} (at ${c.path})${c.rule ? ` [rule: ${c.rule}]` : ''}`;
}

/** The gate's verdict in words. */
export function formatResult(r: GateResult): string {
  const lines: string[] = [];
  const count = (t: ChangeType) => r.changes.filter((c) => c.type === t).length;
  lines.push(
    `contract ${r.version} against released ${r.releasedVersion}: ${r.breaking.length} breaking, ${count('non-breaking')} non-breaking, ${count('deprecated')} deprecated, ${count('annotation')} annotation, ${count('unclassified')} unclassified change(s)`,
  );
  for (const c of r.changes.filter((x) => x.type !== 'annotation')) lines.push(`  ${formatChange(c)}`);
  if (!r.ok)
    lines.push(
      `BREAKING: ${r.breaking.length} breaking change(s) and info.version ${r.version} keeps major ${major(r.releasedVersion)}; undo them, or raise the major version (${major(r.releasedVersion) + 1}.0.0) for a new release.`,
    );
  else if (r.breaking.length) lines.push(`allowed: the major version was raised (${r.releasedVersion} -> ${r.version}).`);
  return lines.join('\n');
}
