// Renders generated/skill.md, the agent instructions served at GET /api/v1/skill.md.
// The prose (auth, credits, polling, idempotency, rate limits) is the spec's info.description;
// everything specific (endpoints, scopes, fields, limits, error codes) is read from the operations.
import type { Json, JsonObject, OperationIndex, OperationIndexEntry } from './codegen.ts';
import { resolveRef } from './codegen.ts';

function deref(spec: JsonObject, node: Json): JsonObject {
  let cur = node;
  while (cur && typeof cur === 'object' && !Array.isArray(cur) && typeof cur.$ref === 'string') cur = resolveRef(spec, cur.$ref);
  return (cur ?? {}) as JsonObject;
}

const oneLine = (s: unknown) => String(s ?? '').replace(/\s+/g, ' ').trim();
const cell = (s: unknown) => oneLine(s).replace(/\|/g, '\\|');

/** A compact type-and-constraints description of a schema, e.g. `string ≤ 8000 chars`. */
export function describeSchema(spec: JsonObject, raw: Json, depth = 0): string {
  const s = deref(spec, raw);
  if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) {
    const alts = ((s.oneOf ?? s.anyOf) as Json[]).map((a) => describeSchema(spec, a, depth + 1));
    return alts.length > 6 ? `one of ${alts.length} shapes` : alts.join(' or ');
  }
  const parts: string[] = [];
  const type = Array.isArray(s.type) ? (s.type as string[]).join(' or ') : (s.type as string | undefined);
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.enum)) parts.push(`one of ${(s.enum as Json[]).map((v) => `\`${v}\``).join(', ')}`);
  else if (type === 'array' || (Array.isArray(s.type) && (s.type as string[]).includes('array'))) {
    parts.push(`array of ${depth < 2 ? describeSchema(spec, s.items ?? {}, depth + 1) : 'items'}`);
  } else if (type) parts.push(type);
  if (s.format) parts.push(`(${s.format})`);
  if (s.minLength !== undefined && s.maxLength !== undefined) parts.push(`${s.minLength}–${s.maxLength} chars`);
  else if (s.maxLength !== undefined) parts.push(`≤ ${s.maxLength} chars`);
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  if (s.maxItems !== undefined) parts.push(`${s.minItems ? `${s.minItems}–` : '≤ '}${s.maxItems} items`);
  if (s.default !== undefined) parts.push(`default \`${JSON.stringify(s.default)}\``);
  return parts.join(' ');
}

function fieldsTable(spec: JsonObject, schemaRaw: Json): string[] {
  const schema = deref(spec, schemaRaw);
  const props = (schema.properties ?? {}) as JsonObject;
  const required = new Set((schema.required ?? []) as string[]);
  const rows = Object.entries(props).map(
    ([name, p]) => `| \`${name}\` | ${cell(describeSchema(spec, p))} | ${required.has(name) ? 'yes' : ''} | ${cell(deref(spec, p).description)} |`,
  );
  if (!rows.length) return [];
  return ['| field | type and limits | required | notes |', '|---|---|---|---|', ...rows];
}

function scopeText(op: OperationIndexEntry): string {
  if (op.scopes.length === 0) return 'none (public)';
  return op.scopes.map((s) => `\`${s}\``).join(' or ');
}

/** The path as a client writes it: relative to the document's server, or from the root for operations with their own. */
const shownPath = (op: OperationIndexEntry) => (op.server === undefined ? op.path : `${op.server.replace(/\/$/, '')}${op.path}`);

export function renderSkill(spec: JsonObject, index: OperationIndex): string {
  const info = spec.info as JsonObject;
  const server = ((spec.servers ?? []) as JsonObject[])[0]?.url ?? '';
  const errorSchema = deref(spec, ((spec.components as JsonObject).schemas as JsonObject).ErrorResponse);
  const inner = deref(spec, ((errorSchema.properties as JsonObject)?.error ?? {}) as Json);
  const codes = (deref(spec, ((inner.properties as JsonObject)?.code ?? {}) as Json).enum ?? []) as string[];
  const paths = spec.paths as JsonObject;
  const out: string[] = [];
  out.push(`# ${info.title} — agent instructions`, '');
  out.push(`API version ${info.version}. Generated from the OpenAPI document; the contract itself is at \`GET ${server}/openapi.json\`.`, '');
  if (info.description) out.push(String(info.description).trim(), '');

  out.push('## Endpoints', '', `All paths are relative to \`${server}\` unless shown from the root (the health probes).`, '');
  out.push('| method | path | scopes | summary |', '|---|---|---|---|');
  for (const op of index.operations) {
    out.push(`| ${op.method} | \`${shownPath(op)}\` | ${scopeText(op)} | ${cell(op.summary)}${op.deprecated ? ' (deprecated)' : ''} |`);
  }
  out.push('');

  for (const op of index.operations) {
    const raw = deref(spec, (deref(spec, paths[op.path]) as JsonObject)[op.method.toLowerCase()] as Json);
    out.push(`### ${op.method} ${shownPath(op)} — \`${op.operationId}\``, '');
    if (op.deprecated) out.push(`**Deprecated**${op.aliasOf ? `: use \`${op.aliasOf}\` instead` : ''}.`, '');
    out.push(
      `Scopes: ${scopeText(op)}.${op.rateLimit ? ` Rate-limited per workspace (policy \`${op.rateLimit}\`; see the RateLimit headers).` : ''}${op.mcpTools.length ? ` MCP tool${op.mcpTools.length > 1 ? 's' : ''}: ${op.mcpTools.map((t) => `\`${t.name}\``).join(', ')}.` : ''}`,
      '',
    );
    if (op.description) out.push(op.description.trim(), '');
    if (op.params.length) {
      out.push('| parameter | in | type and limits | required | notes |', '|---|---|---|---|---|');
      for (const p of op.params) out.push(`| \`${p.name}\` | ${p.in} | ${cell(describeSchema(spec, p.schema))} | ${p.required ? 'yes' : ''} | ${cell(p.description)} |`);
      out.push('');
    }
    if (raw.requestBody) {
      const content = (deref(spec, raw.requestBody).content ?? {}) as JsonObject;
      for (const [type, media] of Object.entries(content)) {
        out.push(`Request body (\`${type}\`):`, '');
        const rows = fieldsTable(spec, ((media as JsonObject).schema ?? {}) as Json);
        out.push(...(rows.length ? rows : [describeSchema(spec, ((media as JsonObject).schema ?? {}) as Json)]), '');
      }
    }
    const statuses = Object.entries(op.responses).map(([s, r]) => `${s} ${oneLine(r.description)}`);
    out.push(`Responses: ${statuses.join('; ')}.`, '');
  }

  out.push('## Errors and retries', '');
  out.push('Every error has the body `{"error": {"code", "message", "retryable", "context"}}`. `context` names the failing fields (`context.errors[].field`) or the numbers involved (`credits_required`, `credits_available`).', '');
  out.push(`Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`, '');
  out.push(
    '- `retryable` is true exactly for 429 and 5xx responses.',
    '- On 429 `rate_limited`, wait for `Retry-After` seconds (or until `X-RateLimit-Reset`, Unix milliseconds), then retry paid requests with the same idempotency key.',
    '- On 5xx, retry with exponential backoff and the same idempotency key.',
    '- Do not retry `bad_request`, `forbidden`, `payment_required`, `insufficient_credits` or `idempotency_conflict` without changing the request. Unknown body fields are refused with 400 and named, so fix the field and resend.',
    '',
  );
  out.push('## Limits', '');
  out.push(
    '- Field limits are enforced exactly as listed in the tables above (lengths, ranges, item counts, enums); an out-of-range value is a 400 naming the field, never silently clamped.',
    '- Generation requests are rate limited per workspace; every response of a limited operation carries `RateLimit`, `RateLimit-Policy`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.',
    '- Credits are computed by the server from the catalog (`GET /models`) and deducted atomically before work is queued; a request that needs more than the balance is refused with 402 `insufficient_credits` and nothing is charged.',
    '',
  );
  return `${out.join('\n')}\n`;
}
