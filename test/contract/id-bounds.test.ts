// Ids at and past the edges of what they can name, wherever the served contract takes one. The
// test reads GET /openapi.json and the MCP tools/list and finds every integer and every UUID a
// request carries: path and query parameters, JSON and multipart body fields at any depth (array
// items and each branch of a oneOf too) and every tool's arguments, MCP-only tools included. Each
// integer gets 0, -1, 2147483648 (one past a 32-bit column) and 9007199254740993 (past 2^53−1, the
// contract's largest id, and not even a JavaScript integer); each UUID the nil UUID and an
// upper-case one. The rest of each request is otherwise valid (the spec's example with this
// workspace's own ids, or the smallest value the schema allows), and a control workspace shows those
// bases succeed, so the probed value is what is judged.
//
// Expected: no answer is a 5xx. An id (an integer named id or *_id, or a UUID) answers 400 when the
// contract's bounds refuse it and 404 otherwise (400 or 404 when the base request does not use the
// field: it may not apply there), in the error envelope (REST: app.request checks every answer
// against the spec; MCP: an isError result whose structured content is the envelope). An integer
// that is not an id answers 400 outside its bounds and must only not fault inside them. Every
// integer id of the contract takes its bounds from the one schema IntegerId. Nothing is charged.
// MCP delete_workspace_asset, whose id is a string, refuses a brand kit id as REST does; a brand
// kit whose id is past 2^31 works end to end.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { ValidateFunction } from 'ajv';
import responseValidators from '../../generated/response-validators.cjs';
import { creditLedger, organizations } from '../../src/db/schema/index.ts';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors.ts';
import { startTestApp } from '../helpers/app.ts';

type Json = any;
type Schema = Record<string, any>;

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '100000', RATE_LIMIT_MEDIA_IMPORTS: '100000' });
const errorEnvelope = (responseValidators as unknown as Record<string, ValidateFunction>).ErrorResponse;

const MAX_ID = 9007199254740991;
const INTEGER_PROBES = ['0', '-1', '2147483648', '9007199254740993'];
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const uuidProbes = () => [NIL_UUID, randomUUID().toUpperCase()];
/** Stands for the probed value in a JSON body until it is serialised (9007199254740993 has no JavaScript number). */
const SENTINEL = '\u0000probe\u0000';
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const doc: Json = (await app.request('GET', '/api/v1/openapi.json')).body;
const isObject = (x: unknown): x is Record<string, any> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** The target of a local $ref of the served document. */
function lookup(ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce((node: Json, k: string) => node?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** A schema with its $refs followed (siblings such as description kept). */
function resolve(node: Json): Schema {
  let cur = node ?? {};
  const seen = new Set<string>();
  while (isObject(cur) && typeof cur.$ref === 'string' && !seen.has(cur.$ref)) {
    seen.add(cur.$ref);
    const { $ref, ...siblings } = cur;
    cur = { ...lookup($ref), ...siblings };
  }
  return cur;
}

const types = (s: Schema): string[] => [].concat(s.type ?? []);
const idName = (name: string) => name === 'id' || /_ids?$/.test(name);

// ------------------------------------------------------------------ where the integers and UUIDs are

interface Step {
  kind: 'prop' | 'item' | 'branch';
  /** prop: the property; the others: unused. */
  name?: string;
  /** prop: the object holding the property; item: the array; branch: the branch's schema. */
  schema: Schema;
}

interface Target {
  label: string;
  steps: Step[];
  kind: 'integer' | 'uuid';
  /** An id: a UUID, or an integer named id or *_id. */
  id: boolean;
  leaf: Schema;
}

/** Every integer and UUID inside `raw` (properties, array items, allOf/oneOf/anyOf branches), with the steps that reach it. */
function targets(raw: Json, label = '', name = '', steps: Step[] = [], refs: string[] = []): Target[] {
  if (!isObject(raw)) return [];
  if (typeof raw.$ref === 'string' && refs.includes(raw.$ref)) return [];
  const s = resolve(raw);
  const nextRefs = typeof raw.$ref === 'string' ? [...refs, raw.$ref] : refs;
  const out: Target[] = [];
  if (types(s).includes('integer')) out.push({ label, steps, kind: 'integer', id: idName(name), leaf: s });
  else if (s.format === 'uuid') out.push({ label, steps, kind: 'uuid', id: true, leaf: s });
  for (const part of s.allOf ?? []) out.push(...targets(part, label, name, steps, nextRefs));
  for (const key of ['oneOf', 'anyOf'] as const) {
    (s[key] ?? []).forEach((branch: Json, i: number) => {
      const b = resolve(branch);
      const tag = typeof branch.$ref === 'string' ? branch.$ref.split('/').pop() : `${key}[${i}]`;
      out.push(...targets(branch, `${label}(${tag})`, name, [...steps, { kind: 'branch', schema: b }], nextRefs));
    });
  }
  for (const [prop, sub] of Object.entries<Json>(s.properties ?? {})) {
    out.push(...targets(sub, label ? `${label}.${prop}` : prop, prop, [...steps, { kind: 'prop', name: prop, schema: s }], nextRefs));
  }
  if (s.items) out.push(...targets(s.items, `${label}[]`, name, [...steps, { kind: 'item', schema: s }], nextRefs));
  return out;
}

// ------------------------------------------------------------------ otherwise valid requests

const STRING_CANDIDATES = ['Probe', 'https://media-api.invalid/probe.png', 'probe', 'p', '1', '#FFFFFF', 'en'];

/** The smallest value `raw` allows: const, default, example, first enum value, required properties only, minItems items. */
function minimal(raw: Json): Json {
  const s = resolve(raw);
  if ('const' in s) return structuredClone(s.const);
  if (s.default !== undefined) return structuredClone(s.default);
  if (Array.isArray(s.examples) && s.examples.length) return structuredClone(s.examples[0]);
  if (s.example !== undefined) return structuredClone(s.example);
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.allOf)
    return s.allOf.map(minimal).reduce((a: Json, b: Json) => (isObject(a) && isObject(b) ? { ...a, ...b } : (b ?? a)), undefined);
  if (s.oneOf || s.anyOf) return minimal((s.oneOf ?? s.anyOf)[0]);
  const type = types(s).find((x) => x !== 'null') ?? (s.properties ? 'object' : 'string');
  if (type === 'object') return Object.fromEntries((s.required ?? []).map((k: string) => [k, minimal(s.properties?.[k] ?? {})]));
  if (type === 'array') return Array.from({ length: s.minItems ?? 0 }, () => minimal(s.items ?? {}));
  if (type === 'integer' || type === 'number') return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
  if (type === 'boolean') return false;
  if (s.format === 'uuid') return randomUUID();
  if (s.format === 'uri') return 'https://media-api.invalid/probe.png';
  if (s.format === 'date-time') return new Date().toISOString();
  const pattern = s.pattern ? new RegExp(s.pattern, 'u') : undefined;
  const text = STRING_CANDIDATES.find((c) => !pattern || pattern.test(c)) ?? 'Probe';
  return text.padEnd(s.minLength ?? 0, text);
}

/** Whether `value` holds something at `steps`: the base already uses the field a probe changes. */
function has(value: Json, steps: Step[]): boolean {
  if (!steps.length) return value !== undefined;
  const [step, ...rest] = steps;
  if (step.kind === 'prop') return isObject(value) && has(value[step.name!], rest);
  if (step.kind === 'item') return Array.isArray(value) && value.some((x) => has(x, rest));
  return matches(value, step.schema) && has(value, rest);
}

/** Whether `value` is an instance of the oneOf branch `branch` (every const property equal). */
const matches = (value: Json, branch: Schema) =>
  isObject(value) &&
  Object.entries<Json>(branch.properties ?? {}).every(([k, p]) => !('const' in resolve(p)) || value[k] === resolve(p).const);

// An upload's video_id applies only with add_to_editor (the spec says so): without it the id is
// not used, so it is probed with add_to_editor set.
const COMPANIONS: Record<string, Record<string, Json>> = { video_id: { add_to_editor: true } };

/**
 * `base` with the value at `steps` set to `value`: missing objects are made minimal, an array
 * becomes one item (the first of the branch the next step names, else a minimal one), a value of
 * another oneOf branch is replaced by a minimal one of the branch.
 */
function place(base: Json, steps: Step[], value: Json): Json {
  const root: Json = { v: structuredClone(base) };
  let holder: Json = root;
  let key: string | number = 'v';
  let owner: Schema | undefined;
  steps.forEach((step, i) => {
    const next = steps[i + 1];
    if (step.kind === 'prop') {
      if (!isObject(holder[key])) holder[key] = minimal(step.schema);
      holder = holder[key];
      key = step.name!;
      owner = step.schema;
    } else if (step.kind === 'item') {
      const list: Json[] = Array.isArray(holder[key]) ? holder[key] : [];
      const pick = list.find((x) => next?.kind !== 'branch' || matches(x, next.schema)) ?? list[0] ?? minimal(step.schema.items ?? {});
      holder[key] = [structuredClone(pick)];
      holder = holder[key];
      key = 0;
    } else if (!matches(holder[key], step.schema)) holder[key] = minimal(step.schema);
  });
  holder[key] = value;
  for (const [k, v] of Object.entries(COMPANIONS[String(key)] ?? {})) if (owner?.properties?.[k]) holder[k] = v;
  return root.v;
}

// ------------------------------------------------------------------ workspaces

interface Workspace {
  key: string;
  orgId: string;
  kit: number;
  video: number;
  media: string;
}

async function prepare(credits: number): Promise<Workspace> {
  const { key, orgId } = await app.workspace({ credits, scopes: ['generations:read', 'generations:write', 'social:read', 'social:write'] });
  const kit = await app.request('POST', '/api/v1/brand-kits', { key, body: { name: 'Probe kit' } });
  const video = await app.request('POST', '/api/v1/editor/videos', { key, body: { title: 'Probe video' } });
  const media = await app.request('POST', '/api/v1/editor/media', {
    key,
    body: { media: { filename: 'dot.png', content_type: 'image/png', data: `data:image/png;base64,${PNG_BASE64}` } },
  });
  if (kit.status !== 200 || video.status !== 200 || media.status !== 200)
    throw new Error(`setup failed: ${kit.text} ${video.text} ${media.text}`);
  return { key, orgId, kit: kit.body.id, video: video.body.id, media: media.body.media.id };
}

// The workspace every id is probed in: its balance must not move. The control workspace takes the
// unprobed bases and the integers that are not ids at values their bounds allow (those may do
// real, paid work).
const probed = await prepare(100_000);
const control = await prepare(100_000);

/** The ids of `w` in place of the example's: its brand kit, editor video and media; other ids, the idempotency key and the version guard left out (optional, and they would name what this workspace lacks or change under the probes). */
function realise(body: Json, schema: Schema, w: Workspace): Json {
  if (!isObject(body)) return body;
  const real: Record<string, Json> = { brand_kit_id: w.kit, video_id: w.video, media_id: w.media };
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) {
    const prop = resolve(schema.properties?.[k]);
    if (k in real) out[k] = real[k];
    else if (k === 'idempotency_key' || k === 'expected_version') continue;
    else if (
      !(schema.required ?? []).includes(k) &&
      (prop.format === 'uuid' || resolve(prop.items).format === 'uuid' || (types(prop).includes('integer') && idName(k)))
    )
      continue;
    else out[k] = v;
  }
  return out;
}

// The spec's examples of these edit items of the example project (itm_clip_1), which this test's
// empty project lacks: their base is an edit any project takes.
const BODY_OVERRIDES: Record<string, Json> = {
  applyEditorEdits: { operations: [{ type: 'set_title', title: 'Probed' }] },
  applyEditorEditsViaPost: { operations: [{ type: 'set_title', title: 'Probed' }] },
};

// Bases of the MCP-only tools (they have no request examples); the rest use minimal().
const MCP_ONLY_BASES = (w: Workspace): Record<string, Json> => ({
  publish_media_to_social: { account_ids: [randomUUID()], caption: 'Probe' },
  recommend_voice: { script: 'A short narration to rank the voices for.' },
  upload_editor_media_from_url: { url: 'https://media-api.invalid/probe.png', add_to_editor: true, video_id: w.video },
});

// Bases that cannot succeed here, and what they answer instead (asserted). Their probes still say
// something: an id outside the contract's bounds must be refused before anything else is looked
// at, and no value may fault.
const BASE_EXCEPTIONS: Record<string, { status: number; why: string }> = {
  // No social account is connected in this test (the social tests connect fakes).
  publish_media_to_social: { status: 404, why: 'its account id names no connected account' },
  // The URL's host never resolves (.invalid): the fetch fails after video_id was checked.
  upload_editor_media_from_url: { status: 400, why: 'its URL cannot be fetched' },
  // No export exists: only the two path ids are probed, each answering 404 on its own.
  getEditorVideoExport: { status: 404, why: 'its export id names no export' },
  cancelEditorVideoExport: { status: 404, why: 'its export id names no export' },
  get_editor_video_export: { status: 404, why: 'its export id names no export' },
  cancel_editor_video_export: { status: 404, why: 'its export id names no export' },
};

// ------------------------------------------------------------------ the REST operations

interface RestOp {
  name: string;
  method: string;
  /** The URL path of the operation, with {name} placeholders. */
  path: string;
  params: Schema[];
  /** Each media type's schema and the spec's examples of it. */
  bodies: { contentType: string; schema: Schema; examples: Json[] }[];
  mcpTools: { name: string; fixed?: Record<string, Json> }[];
}

const serverPath = (servers: Json) => (servers?.[0]?.url ? new URL(servers[0].url).pathname.replace(/\/$/, '') : '');

const restOps: RestOp[] = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
  Object.entries<Json>(item)
    .filter(([method, op]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method) && op.operationId)
    .map(([method, op]) => {
      const requestBody = resolve(op.requestBody);
      return {
        name: op.operationId,
        method: method.toUpperCase(),
        path: `${serverPath(op.servers ?? item.servers ?? doc.servers)}${path}`,
        params: [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve),
        bodies: Object.entries<Json>(requestBody.content ?? {}).map(([contentType, media]) => ({
          contentType,
          schema: resolve(media.schema),
          examples: media.example !== undefined ? [media.example] : Object.values<Json>(media.examples ?? {}).map((e) => resolve(e).value),
        })),
        mcpTools: op['x-mcp-tools'] ?? [],
      };
    }),
);

/** The operation's path parameters and JSON body (from its example number `pick`) for workspace `w`, before any probe. */
function restBase(op: RestOp, w: Workspace, pick = 0) {
  const path: Record<string, Json> = {};
  for (const p of op.params.filter((x) => x.in === 'path')) {
    const s = resolve(p.schema);
    path[p.name] = types(s).includes('integer')
      ? op.path.includes('/brand-kits/')
        ? w.kit
        : w.video
      : s.format === 'uuid'
        ? randomUUID()
        : minimal(s);
  }
  const query: Record<string, Json> = {};
  for (const p of op.params.filter((x) => x.in === 'query' && x.required)) query[p.name] = minimal(p.schema);
  const json = op.bodies.find((b) => b.contentType === 'application/json');
  const body = json ? (BODY_OVERRIDES[op.name] ?? realise(json.examples[pick] ?? minimal(json.schema), json.schema, w)) : undefined;
  return { path, query, body };
}

/** Sends one request: its status (an MCP error result's is its code's), error envelope, and what is wrong with the answer's form. */
type Send = () => Promise<{ status: number; envelope?: Json; problem?: string }>;

const fill = (path: string, values: Record<string, Json>) =>
  path.replace(/\{([^}]+)\}/g, (_, n: string) => encodeURIComponent(String(values[n])));
const serialise = (body: Json, literal: string) => JSON.stringify(body).replace(JSON.stringify(SENTINEL), literal);

function restJson(op: RestOp, w: Workspace, path: Record<string, Json>, query: Record<string, Json>, body: Json, literal = ''): Send {
  return async () => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const url = `${fill(op.path, path)}${qs ? `?${qs}` : ''}`;
    const res =
      body === undefined
        ? await app.request(op.method, url, { key: w.key })
        : await app.request(op.method, url, { key: w.key, raw: serialise(body, literal), contentType: 'application/json' });
    return { status: res.status, envelope: res.status >= 400 ? res.body : undefined };
  };
}

function restMultipart(op: RestOp, w: Workspace, path: Record<string, Json>, fields: Record<string, Json>): Send {
  return async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from(PNG_BASE64, 'base64')], { type: 'image/png' }), 'dot.png');
    for (const [k, v] of Object.entries(fields)) if (k !== 'file') form.append(k, isObject(v) ? JSON.stringify(v) : String(v));
    const encoded = new Request('http://x/', { method: 'POST', body: form });
    const raw = new Uint8Array(await encoded.arrayBuffer());
    const res = await app.request(op.method, fill(op.path, path), { key: w.key, raw, contentType: encoded.headers.get('content-type')! });
    return { status: res.status, envelope: res.status >= 400 ? res.body : undefined };
  };
}

// ------------------------------------------------------------------ MCP

async function mcp(w: Workspace, method: string, params: Json, literal = ''): Promise<Json> {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${w.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: serialise({ jsonrpc: '2.0', id: 1, method, params }, literal),
  });
  const text = await res.text();
  if (res.status !== 200) return { transportStatus: res.status, text };
  return JSON.parse(text);
}

function toolCall(w: Workspace, name: string, args: Json, literal = ''): Send {
  return async () => {
    const msg = await mcp(w, 'tools/call', { name, arguments: args }, literal);
    if (msg.transportStatus)
      return { status: msg.transportStatus, problem: `HTTP ${msg.transportStatus}: ${String(msg.text).slice(0, 200)}` };
    if (msg.error) return { status: 500, problem: `JSON-RPC error ${JSON.stringify(msg.error).slice(0, 200)}` };
    const result = msg.result;
    if (!result.isError) return { status: 200 };
    const envelope = result.structuredContent;
    if (!errorEnvelope(envelope as unknown))
      return { status: 500, envelope, problem: `not the error envelope: ${JSON.stringify(envelope).slice(0, 300)}` };
    return { status: ERROR_STATUS[envelope.error.code as ErrorCode], envelope };
  };
}

const toolList: Json[] = (await mcp(probed, 'tools/list', {})).result.tools;

/** The arguments of tool `tool` (of REST operation `op`'s example `pick`, or MCP-only when undefined) for workspace `w`, before any probe. */
function toolBase(tool: Json, op: RestOp | undefined, w: Workspace, pick = 0): Json {
  if (!op) return MCP_ONLY_BASES(w)[tool.name] ?? minimal(tool.inputSchema);
  const { path, query, body } = restBase(op, w, pick);
  const all = { ...path, ...query, ...(isObject(body) ? body : {}) };
  return Object.fromEntries(Object.entries(all).filter(([k]) => k in (tool.inputSchema.properties ?? {})));
}

// ------------------------------------------------------------------ the probes

/** 400; 404; 400 or 404 (an id the base does not use may not apply to it); anything but a fault. */
type Expect = 'refused' | 'not_found' | 'refused_or_not_found' | 'no_fault';

interface Probe {
  /** The operation or tool, the probed field and the value. */
  label: string;
  expect: Expect;
  send: Send;
}

const inBounds = (s: Schema, text: string) => {
  const n = Number(text);
  return Number.isSafeInteger(n) && (s.minimum === undefined || n >= s.minimum) && (s.maximum === undefined || n <= s.maximum);
};

interface Value {
  /** As it goes into a path, a query or a form field. */
  text: string;
  /** As it goes into JSON. */
  literal: string;
  expect: Expect;
  w: Workspace;
}

/**
 * The values to send to `target`, what each must answer and the workspace each goes to. An id the
 * contract's bounds allow names nothing here: 404 where the base uses the field (`used`), else
 * 400 or 404 (an ai_model's video input sent with a static ad is refused as not applying).
 */
function probeValues(target: Target, used: boolean): Value[] {
  const unknown: Expect = used ? 'not_found' : 'refused_or_not_found';
  if (target.kind === 'uuid') return uuidProbes().map((u) => ({ text: u, literal: JSON.stringify(u), expect: unknown, w: probed }));
  return INTEGER_PROBES.map((text): Value => {
    const allowed = inBounds(target.leaf, text);
    // An integer that is not an id, at a value its bounds allow, is ordinary input: it may succeed
    // (and be charged), so it goes to the control workspace and only must not fault.
    if (!target.id && allowed) return { text, literal: text, expect: 'no_fault', w: control };
    return { text, literal: text, expect: allowed ? unknown : 'refused', w: probed };
  });
}

const multipartBase = (op: RestOp, contentType: string, w: Workspace) =>
  realise(minimal(op.bodies.find((b) => b.contentType === contentType)!.schema), {}, w);

/** The example a probe of `target` starts from: the first that uses it, else the first. */
const examplePick = (count: number, uses: (i: number) => boolean) =>
  Math.max(0, Array.from({ length: count }, (_, i) => i).findIndex(uses));
const jsonExamples = (op: RestOp) => op.bodies.find((b) => b.contentType === 'application/json')?.examples.length ?? 0;

/** The probe of `target` (found in `where`: path, query or a body's media type) of `op` with `v`, from example `pick`. */
function restProbe(op: RestOp, where: string, target: Target, v: Value, pick: number): Send {
  const { path, query, body } = restBase(op, v.w, pick);
  const name = target.steps[0].name!;
  if (where === 'path') return restJson(op, v.w, { ...path, [name]: v.text }, query, body);
  if (where === 'query') return restJson(op, v.w, path, { ...query, [name]: v.text }, body);
  if (where === 'application/json') return restJson(op, v.w, path, query, place(body, target.steps, SENTINEL), v.literal);
  return restMultipart(op, v.w, path, place(multipartBase(op, where, v.w), target.steps, v.text));
}

const restTargets: { op: RestOp; where: string; target: Target }[] = [];
const probes: Probe[] = [];
const controls: { label: string; name: string; send: Send }[] = [];

for (const op of restOps) {
  const found: { where: string; target: Target }[] = [];
  for (const p of op.params.filter((x) => x.in === 'path' || x.in === 'query')) {
    for (const target of targets(p.schema, `${p.in}.${p.name}`, p.name))
      found.push({ where: p.in, target: { ...target, steps: [{ kind: 'prop', name: p.name, schema: {} }] } });
  }
  for (const b of op.bodies)
    for (const target of targets(b.schema)) found.push({ where: b.contentType, target: { ...target, label: `body.${target.label}` } });
  for (const { where, target } of found) {
    restTargets.push({ op, where, target });
    const json = where === 'application/json';
    const pick = json ? examplePick(jsonExamples(op), (i) => has(restBase(op, probed, i).body, target.steps)) : 0;
    const used = where === 'path' || where === 'query' || (json && has(restBase(op, probed, pick).body, target.steps));
    for (const v of probeValues(target, used)) {
      probes.push({
        label: `${op.method} ${op.path} ${json || where === 'path' || where === 'query' ? '' : '(multipart) '}${target.label} = ${v.text}`,
        expect: v.expect,
        send: restProbe(op, where, target, v, pick),
      });
    }
  }
  // The unprobed request succeeds: what the probes change is what they are judged on.
  if (found.some((f) => f.where !== 'path') || new Set(found.map((f) => f.target.label)).size > 1) {
    const { path, query, body } = restBase(op, control);
    const label = `${op.method} ${op.path}`;
    if (op.bodies.length === 0 || body !== undefined)
      controls.push({ label, name: op.name, send: restJson(op, control, path, query, body) });
    if (op.bodies.some((b) => b.contentType === 'multipart/form-data'))
      controls.push({
        label: `${label} (multipart)`,
        name: op.name,
        send: restMultipart(op, control, path, multipartBase(op, 'multipart/form-data', control)),
      });
  }
}

const opsByTool = new Map<string, RestOp>(restOps.flatMap((op) => op.mcpTools.map((x) => [x.name, op] as const)));
const mcpTargets: { tool: string; target: Target }[] = [];
for (const tool of toolList) {
  const op = opsByTool.get(tool.name);
  const found = targets(tool.inputSchema);
  for (const target of found) {
    mcpTargets.push({ tool: tool.name, target });
    const pick = op ? examplePick(jsonExamples(op), (i) => has(toolBase(tool, op, probed, i), target.steps)) : 0;
    for (const v of probeValues(target, has(toolBase(tool, op, probed, pick), target.steps))) {
      probes.push({
        label: `MCP ${tool.name} ${target.label} = ${v.text}`,
        expect: v.expect,
        send: toolCall(v.w, tool.name, place(toolBase(tool, op, v.w, pick), target.steps, SENTINEL), v.literal),
      });
    }
  }
  if (found.length > 1 || found.some((f) => f.label !== 'id'))
    controls.push({ label: `MCP ${tool.name}`, name: tool.name, send: toolCall(control, tool.name, toolBase(tool, op, control)) });
}

async function inBatches<T>(jobs: (() => Promise<T>)[], size = 8): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < jobs.length; i += size) out.push(...(await Promise.all(jobs.slice(i, i + size).map((j) => j()))));
  return out;
}

const balance = async (orgId: string) => {
  const db = app.service.ctx.db;
  const [org] = await db.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId));
  const entries = await db.select({ id: creditLedger.id }).from(creditLedger).where(eq(creditLedger.orgId, orgId));
  return { credits: org.credits, ledgerEntries: entries.length };
};

// ------------------------------------------------------------------ tests

t.test('the walk reaches the ids the issue names, over REST and MCP', async (t) => {
  const rest = new Set(restTargets.map((x) => `${x.op.method} ${x.op.path} ${x.target.label}`));
  for (const want of [
    'GET /api/v1/brand-kits/{id} path.id',
    'PATCH /api/v1/brand-kits/{id} path.id',
    'DELETE /api/v1/brand-kits/{id} path.id',
    'POST /api/v1/generations body.brand_kit_id',
    'POST /api/v1/slideshows body.brand_kit_id',
    'POST /api/v1/faceless-videos body.brand_kit_id',
    'GET /api/v1/videos/{id} path.id',
    'GET /api/v1/editor/videos/{id} path.id',
    'GET /api/v1/editor/videos/{id}/exports/{export_id} path.export_id',
    'PATCH /api/v1/editor/videos/{id} body.operations[](AddSoundEffectOperation).media_id',
    'POST /api/v1/editor/media body.video_id',
  ]) {
    t.ok(rest.has(want), `REST: ${want}`);
  }
  const tools = new Set(mcpTargets.map((x) => `${x.tool} ${x.target.label}`));
  for (const want of [
    'create_generation brand_kit_id',
    'create_slideshow brand_kit_id',
    'create_faceless_video brand_kit_id',
    'get_video id',
    'upload_editor_media_from_url video_id',
    'get_social_publication id',
  ]) {
    t.ok(tools.has(want), `MCP: ${want}`);
  }
  t.ok(probes.length > 300, `${probes.length} probes`);
});

t.test('every integer id of the contract takes its bounds from the one IntegerId schema', async (t) => {
  const shared = doc.components.schemas.IntegerId;
  t.match(shared, { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID }, 'IntegerId: 1 … 2^53−1');
  // Every integer named id or *_id anywhere in the document: parameters, request and response
  // schemas, MCP-only tools' inputs; a name travels into its schema's items and combinators.
  const strays: string[] = [];
  const annotations = new Set(['example', 'examples', 'enum', 'const', 'default']);
  const visit = (node: Json, where: string, name: string): void => {
    if (Array.isArray(node)) {
      node.forEach((x, i) => {
        visit(x, `${where}[${i}]`, name);
      });
      return;
    }
    if (!isObject(node) || node.$ref === '#/components/schemas/IntegerId') return;
    if (types(node).includes('integer') && idName(name)) strays.push(where);
    for (const [k, v] of Object.entries<Json>(node)) {
      if (annotations.has(k)) continue;
      if (k === 'properties' && isObject(v)) for (const [p, s] of Object.entries<Json>(v)) visit(s, `${where}.properties.${p}`, p);
      else if (k === 'schema' && typeof node.in === 'string') visit(v, `${where}.schema`, node.name);
      else visit(v, `${where}.${k}`, ['items', 'oneOf', 'anyOf', 'allOf'].includes(k) ? name : '');
    }
  };
  visit(doc, '#', '');
  t.same(strays, [], 'no integer id declares bounds of its own');
});

t.test('the unprobed requests succeed (so each probe is judged on its value)', async (t) => {
  const answers = await inBatches(controls.map((c) => c.send));
  controls.forEach((c, i) => {
    const exception = BASE_EXCEPTIONS[c.name];
    const { status, envelope } = answers[i];
    if (exception) t.equal(status, exception.status, `${c.label}: ${exception.status} (${exception.why})`);
    else t.ok(status < 300, `${c.label}: ${status} ${envelope ? JSON.stringify(envelope).slice(0, 300) : ''}`);
  });
});

t.test(
  '0, -1, 2^31, 2^53+1 and nil and upper-case UUIDs: never a 5xx; ids answer 400 or 404 in the envelope; nothing charged',
  async (t) => {
    const before = await balance(probed.orgId);
    const started = Date.now();
    const answers = await inBatches(probes.map((p) => p.send));
    const faults: string[] = [];
    const wrong: string[] = [];
    for (const [i, p] of probes.entries()) {
      const { status, envelope, problem } = answers[i];
      const said = `${status} ${envelope ? JSON.stringify(envelope.error).slice(0, 240) : ''}`;
      if (problem || status >= 500) {
        faults.push(`${p.label}: ${problem ?? said}`);
        continue;
      }
      if (p.expect === 'no_fault') continue;
      const want = p.expect === 'refused' ? [400] : p.expect === 'not_found' ? [404] : [400, 404];
      if (!want.includes(status) || !envelope?.error) wrong.push(`${p.label}: ${said} (want ${want.join(' or ')})`);
    }
    t.same(faults, [], 'no probe answered a 5xx (or outside the envelope)');
    t.same(wrong, [], 'every id outside its bounds is 400 and every other unknown id 404');
    t.same(await balance(probed.orgId), before, 'the probed workspace was charged nothing');
    t.comment(`${probes.length} probes in ${Date.now() - started} ms`);
  },
);

t.test('MCP delete_workspace_asset refuses a brand kit id as DELETE /brand-kits/{id} does', async (t) => {
  const w = probed;
  const kit = (await app.request('POST', '/api/v1/brand-kits', { key: w.key, body: { name: 'Keep me' } })).body;
  for (const id of [
    `0${kit.id}`,
    `+${kit.id}`,
    ` ${kit.id}`,
    `${kit.id}e0`,
    `${kit.id}.0`,
    '0',
    '-1',
    '2147483648',
    '9007199254740991',
    '9007199254740993',
    '99999999999999999999',
  ]) {
    const rest = await app.request('DELETE', `/api/v1/brand-kits/${encodeURIComponent(id)}`, { key: w.key });
    const tool = await toolCall(w, 'delete_workspace_asset', { kind: 'brand_kit', id })();
    t.ok(rest.status === 400 || rest.status === 404, `REST ${JSON.stringify(id)}: ${rest.status}`);
    t.equal(tool.status, rest.status, `MCP ${JSON.stringify(id)}: ${tool.status} as REST`);
    t.equal(tool.envelope?.error?.code, rest.body.error.code, `MCP ${JSON.stringify(id)}: ${rest.body.error.code}`);
    t.equal(tool.envelope?.error?.context?.field ?? tool.envelope?.error?.context?.errors?.[0]?.field, 'id', 'names the argument id');
  }
  t.equal((await app.request('GET', `/api/v1/brand-kits/${kit.id}`, { key: w.key })).status, 200, 'the kit is still there');
  for (const kind of ['avatar', 'voice']) {
    for (const id of uuidProbes()) {
      const tool = await toolCall(w, 'delete_workspace_asset', { kind, id })();
      t.equal(tool.status, 404, `${kind} ${id}: 404`);
    }
  }
  const gone = await toolCall(w, 'delete_workspace_asset', { kind: 'brand_kit', id: String(kit.id) })();
  t.equal(gone.status, 200, 'its own id deletes it');
});

t.test('a brand kit whose id is past 2^31 is made, read, changed, listed and used (the column and its sequence are bigint)', async (t) => {
  const sql = app.service.ctx.sql;
  const [seq] =
    await sql`select data_type::text as type, max_value::text as max from pg_sequences where sequencename = 'brand_kits_id_seq'`;
  t.same(seq, { type: 'bigint', max: '9223372036854775807' }, 'the identity sequence is bigint');
  await sql`alter sequence brand_kits_id_seq restart with 2147483648`;
  const w = control;
  const kit = await app.request('POST', '/api/v1/brand-kits', { key: w.key, body: { name: 'Past 2^31', colors: { primary: '#123456' } } });
  t.equal(kit.status, 200, kit.text);
  t.equal(kit.body.id, 2147483648);
  t.equal((await app.request('GET', `/api/v1/brand-kits/${kit.body.id}`, { key: w.key })).body.kit_name, 'Past 2^31');
  t.equal(
    (await app.request('PATCH', `/api/v1/brand-kits/${kit.body.id}`, { key: w.key, body: { name: 'Renamed' } })).body.kit_name,
    'Renamed',
  );
  const assets = await app.request('GET', '/api/v1/assets', { key: w.key });
  t.ok(
    assets.body.brand_kits.some((k: { id: number }) => k.id === 2147483648),
    'listed in GET /assets',
  );
  const used = await app.request('POST', '/api/v1/faceless-videos', {
    key: w.key,
    body: { prompt: 'Three facts about water.', brand_kit_id: kit.body.id },
  });
  t.equal(used.status, 200, `a faceless video takes it as brand_kit_id: ${used.text.slice(0, 300)}`);
  const inUse = await toolCall(w, 'delete_workspace_asset', { kind: 'brand_kit', id: String(kit.body.id) })();
  t.equal(inUse.envelope?.error?.code, 'conflict', 'queued work uses it: 409 (the jsonb spec holds its id)');
  t.equal(
    (await app.request('GET', `/api/v1/brand-kits/${kit.body.id}`, { key: probed.key })).status,
    404,
    "another workspace's id is 404",
  );
});
