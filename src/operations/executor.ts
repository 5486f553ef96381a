// The operation executor: the one path every call takes, whether it came over REST or MCP, for
// REST operations and MCP-only tools alike (both are entries of the generated operation index):
// authenticate → scope → plan → validate parameters and body (generated AJV validators; an
// MCP-only tool's arguments with its `mcp__<name>` validator) → rate limit → handler. A call that
// fails validation is refused once the rate limit has counted it; a replay of a completed paid
// request (same idempotency key, same body) is answered from its stored response before the rate
// limit, and counts nothing. Errors are thrown as ApiError; the adapters render them.
import type { ErrorObject } from 'ajv';
import indexJson from '../../generated/operations.json' with { type: 'json' };
import type { AppContext } from '../context.ts';
import { ApiError, badRequest, type FieldError } from '../errors.ts';
import { storedReplay } from '../services/billing/charged-command.ts';
import { authenticate, type AuthContext } from '../services/workspaces/api-keys.ts';
import { bodyValidatorName, type IndexEntry, type OperationIndex, type OperationIndexEntry } from './operation-index.ts';
import { Reply, type AnyHandler } from '../handlers.ts';
import { MAX_FIELD_ERRORS, validate } from './validate.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/outage.ts';
import { StorageUnavailable } from '../storage/index.ts';

export type { ParamInfo } from './operation-index.ts';
/** A REST operation of the index. */
export type OperationInfo = OperationIndexEntry;

export const operationIndex = indexJson as unknown as OperationIndex;

/** The REST operations by operationId. */
export const operationsById = new Map(operationIndex.operations.map((o) => [o.operationId, o]));

/** Everything the executor runs, by operationId or MCP-only tool name. */
export const entriesById = new Map<string, IndexEntry>(
  [...operationIndex.operations, ...operationIndex.mcpOnlyTools].map((o) => [o.operationId, o]),
);

export interface OperationCall {
  /** The operationId, or the name of an MCP-only tool (its arguments are the JSON body). */
  operationId: string;
  authorization: string | undefined;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
  /** Media type of the body as sent (without parameters), or undefined when there is none. */
  contentType: string | undefined;
  /**
   * Caller already authenticated by the adapter (MCP resolves OAuth access tokens and API keys
   * itself): `authorization` is then ignored, while scope and plan are still checked here.
   */
  auth?: AuthContext;
  /** Aborted when the caller went away; handlers pass it to the work they wait on (outbound fetches). */
  signal?: AbortSignal;
}

const pointerToField = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');

const join = (base: string, name: string) => (base ? `${base}.${name}` : name);

/**
 * AJV errors → [{field, message}] with field as `<location>.<path>` (`body.prompt`,
 * `body.operations[2].item_id`, `query.limit`, `path.id`, `header.idempotency-key`);
 * combinator noise (oneOf/anyOf/if) is dropped when more specific errors exist.
 */
export function fieldErrors(where: string, errors: ErrorObject[] | null | undefined): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const specific = (errors ?? []).filter((e) => !['oneOf', 'anyOf', 'if', 'discriminator'].includes(e.keyword));
  const list = specific.length ? specific : (errors ?? []);
  for (const e of list) {
    let field = pointerToField(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = join(field, String((e.params as { missingProperty: string }).missingProperty));
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      field = join(field, String((e.params as { additionalProperty: string }).additionalProperty));
      message = 'is not a known field';
    } else if (e.keyword === 'unevaluatedProperties') {
      field = join(field, String((e.params as { unevaluatedProperty: string }).unevaluatedProperty));
      message = 'is not a known field';
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    }
    const full = field ? `${where}.${field}` : where;
    const key = `${full}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field: full, message });
  }
  return out;
}

/**
 * The 400 for failing fields: every error up to the contract's MAX_FIELD_ERRORS in context.errors,
 * the first five in the message with how many more there are. `firstOnly` says that validation
 * stopped at the first error because the input was large.
 */
export function invalid(errors: FieldError[], firstOnly = false): ApiError {
  const summary = errors
    .slice(0, 5)
    .map((e) => `${e.field} ${e.message}`)
    .join('; ');
  const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
  const stopped = firstOnly ? ' (the request is large: validation stopped at its first error)' : '';
  const left =
    errors.length > MAX_FIELD_ERRORS
      ? ` (context.errors lists the first ${MAX_FIELD_ERRORS}; ${errors.length - MAX_FIELD_ERRORS} more were left out)`
      : '';
  return badRequest(`Invalid request: ${summary}${more}${stopped}${left}`, errors.slice(0, MAX_FIELD_ERRORS));
}

/** Validates one part of a call in place; its field errors appended to `out`. Returns whether only the first error was looked for. */
function check(kind: 'body' | 'params', name: string, where: string, data: unknown, out: FieldError[]): boolean {
  const { errors, firstOnly } = validate(kind, name, data);
  if (errors) for (const e of fieldErrors(where, errors)) out.push(e);
  return firstOnly;
}

export function requireScope(op: Pick<IndexEntry, 'operationId' | 'scopes'>, auth: AuthContext): void {
  if (op.scopes.some((s) => auth.scopes.includes(s))) return;
  throw new ApiError('forbidden', `This API key lacks the scope for ${op.operationId}: needs ${op.scopes.join(' or ')}`, {
    scope: op.scopes[0],
    required_scopes: op.scopes,
    granted_scopes: auth.scopes,
  });
}

export function requirePaidPlan(auth: AuthContext): void {
  if (auth.plan !== 'paid') {
    throw new ApiError('payment_required', 'This workspace has no active paid plan; subscribe to a plan to use the API', {
      plan: auth.plan,
    });
  }
}

/** A call's validated path, query and header parameters. */
type CheckedInput = Record<'path' | 'query' | 'header', Record<string, unknown>>;

export interface Executor {
  execute(call: OperationCall): Promise<Reply>;
}

/** Every policy the contract names has its limiter, or the server does not start. */
function requireRateLimiters(ctx: AppContext): void {
  for (const entry of entriesById.values()) {
    if (entry.rateLimit && !ctx.rateLimiters[entry.rateLimit])
      throw new Error(`No rate limiter configured for policy ${entry.rateLimit} (x-rate-limit of ${entry.operationId})`);
  }
}

export function createExecutor(ctx: AppContext, handlers: Map<string, AnyHandler>): Executor {
  requireRateLimiters(ctx);
  return {
    async execute(call) {
      const op = entriesById.get(call.operationId);
      const handler = handlers.get(call.operationId);
      if (!op || !handler)
        throw new ApiError('not_found', `Unknown operation ${call.operationId}`, { resource: 'route', field: 'operation_id' });
      const auth = await retryRead(op, () => authorize(ctx, op, call));
      // Validated first, refused only once the call is counted (a refused call counts too).
      const checked = checkCall(op, call);
      const counted = await countCall(ctx, op, auth, checked, call.body);
      if ('replay' in counted) return new Reply({ status: op.successStatus, body: counted.replay });
      const limitHeaders = counted.limitHeaders;
      try {
        if ('refused' in checked) throw checked.refused;
        const out = await retryRead(op, () => run(ctx, op, handler, call, auth, checked.input));
        Object.assign(out.headers, limitHeaders);
        return out;
      } catch (err) {
        throw asApiError(ctx, op, err, limitHeaders);
      }
    },
  };
}

/**
 * A read (GET) that met a database connection PostgreSQL had just closed (a restart, an
 * administrator's pg_terminate_backend, a failover) is tried once more at once: the pool replaces
 * the connection, and the client should not get a 503 while the database is up. A database that is
 * really down fails the second try as fast, and the read is answered 503 as before. Writes are not
 * retried here: their clients retry with the same idempotency key.
 */
async function retryRead<T>(op: Pick<IndexEntry, 'method'>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (op.method !== 'GET' || !isDatabaseUnavailable(err)) throw err;
    return fn();
  }
}

/** The caller of an operation that needs one: authenticated (unless the adapter did), with the scope and plan it needs. */
async function authorize(ctx: AppContext, op: IndexEntry, call: OperationCall): Promise<AuthContext | null> {
  if (op.scopes.length === 0) return null;
  const auth = call.auth ?? (await authenticate(ctx.db, call.authorization));
  requireScope(op, auth);
  if (op.requiresPaidPlan) requirePaidPlan(auth);
  return auth;
}

/**
 * Rate-limited operations count every authenticated call and report the quota on every response,
 * errors included; but a replay of a completed paid request is answered from its stored response
 * first, counting nothing (it starts no work; a key in flight or used with another body goes on, is
 * counted, and is refused by the charged command). A call over the limit is refused here.
 */
async function countCall(
  ctx: AppContext,
  op: IndexEntry,
  auth: AuthContext | null,
  checked: CheckedCall,
  body: unknown,
): Promise<{ replay: unknown } | { limitHeaders: Record<string, string> }> {
  if (!op.rateLimit || !auth) return { limitHeaders: {} };
  const replay = 'input' in checked ? await replayOf(ctx, op, auth, checked.input, body) : undefined;
  if (replay) return { replay };
  const limiter = ctx.rateLimiters[op.rateLimit];
  if (!limiter) throw new Error(`No rate limiter configured for policy ${op.rateLimit}`);
  const decision = await limiter.consume(auth.orgId);
  if (!decision.allowed) {
    const sameKey = op.params.some((p) => p.name === 'idempotency-key') ? ' with the same idempotency key' : '';
    throw new ApiError(
      'rate_limited',
      `Too many ${op.rateLimit} requests for this workspace; retry in ${decision.retryAfterSeconds} s${sameKey}`,
      { retry_after_seconds: decision.retryAfterSeconds },
      decision.headers,
    );
  }
  return { limitHeaders: decision.headers };
}

/**
 * What the caller gets for an error of the handler (or of validation), with the rate limit's
 * headers: an ApiError as it is; storage or database unavailable: 503, retryable; anything else is
 * logged and becomes a 500.
 */
function asApiError(ctx: AppContext, op: IndexEntry, err: unknown, limitHeaders: Record<string, string>): ApiError {
  if (err instanceof ApiError) {
    Object.assign(err.headers, limitHeaders);
    return err;
  }
  // Media storage unreachable (S3 down, a full disk): 503, retryable (checked first: its cause may be a refused connection too).
  if (err instanceof StorageUnavailable) {
    ctx.log.error({ err: { message: err.message }, operation: op.operationId }, 'media storage unavailable');
    return new ApiError(
      'service_unavailable',
      'Media storage cannot be reached just now; retry shortly with the same idempotency key',
      {},
      { ...limitHeaders, 'retry-after': '5' },
    );
  }
  // The database went away (or is not back yet): 503, retryable, not a server fault.
  if (isDatabaseUnavailable(err)) return databaseUnavailable(limitHeaders);
  ctx.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, operation: op.operationId }, 'unhandled error');
  return new ApiError('server_error', 'Unexpected server error; retry with backoff and the same idempotency key', {}, limitHeaders);
}

/** The stored answer of a completed request with the call's idempotency key and body, if the operation takes a key. */
async function replayOf(ctx: AppContext, op: IndexEntry, auth: AuthContext, input: CheckedInput, body: unknown) {
  if (!op.params.some((p) => p.name === 'idempotency-key') || !body || typeof body !== 'object') return undefined;
  return storedReplay(ctx, auth.orgId, op.operationId, body, input.header['idempotency-key'] as string | undefined);
}

/** A call's parameters and body validated, or the ApiError it gets. */
type CheckedCall = { input: CheckedInput } | { refused: ApiError };

/** The call's parameters and body validated (in place, defaults filled in), or the ApiError it gets. */
function checkCall(op: IndexEntry, call: OperationCall): CheckedCall {
  try {
    return { input: validateCall(op, call) };
  } catch (err) {
    if (err instanceof ApiError) return { refused: err };
    throw err;
  }
}

/** Parameters, then the body (its media type, then its schema); every field error in one 400. */
function validateCall(op: IndexEntry, call: OperationCall): CheckedInput {
  const errors: FieldError[] = [];
  const input: Record<string, unknown> = {};
  let firstOnly = false;
  for (const where of ['path', 'query', 'header'] as const) {
    const data = { ...(where === 'path' ? call.path : where === 'query' ? call.query : call.headers) };
    firstOnly = check('params', `${op.operationId}__${where}`, where, data, errors) || firstOnly;
    input[where] = data;
  }

  const body = call.body;
  // An MCP-only tool's body is its arguments, and its errors name them so.
  const bodyField = op.transport === 'mcp' ? 'arguments' : 'body';
  if (op.requestBody) {
    const absent = body === undefined || body === null;
    if (absent && call.contentType === undefined) {
      if (op.requestBody.required) errors.push({ field: bodyField, message: `is required (${op.requestBody.contentTypes.join(' or ')})` });
    } else if (call.contentType !== undefined && !op.requestBody.contentTypes.includes(call.contentType)) {
      throw new ApiError(
        'unsupported_media_type',
        `Content-Type ${call.contentType} is not accepted here; send ${op.requestBody.contentTypes.join(' or ')}`,
        {
          content_type: call.contentType,
          supported_content_types: op.requestBody.contentTypes,
        },
      );
    } else if (call.contentType === 'application/json' || call.contentType === undefined) {
      // Validated in place: the body was parsed for this call alone; defaults are filled in.
      firstOnly = check('body', bodyValidatorName(op), bodyField, body, errors) || firstOnly;
    }
  }
  if (errors.length) throw invalid(errors, firstOnly);
  return input as CheckedInput;
}

/** The handler called with the validated input; its result as a Reply (the operation's success status unless it gave one). */
async function run(
  ctx: AppContext,
  op: IndexEntry,
  handler: AnyHandler,
  call: OperationCall,
  auth: AuthContext | null,
  input: CheckedInput,
): Promise<Reply> {
  const result = await (handler as (input: unknown) => unknown)({
    path: input.path,
    query: input.query,
    headers: input.header,
    body: call.body,
    auth,
    ctx,
    operationId: op.operationId,
    signal: call.signal,
  });
  return result instanceof Reply ? result : new Reply({ status: op.successStatus, body: result });
}
