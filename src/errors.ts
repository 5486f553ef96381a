// The one error type handlers and services throw. Adapters (REST, MCP) turn it into the
// envelope {error: {code, message, retryable, context}}.
import type { components } from '../generated/openapi.d.ts';

export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  invalid_api_key: 401,
  payment_required: 402,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  server_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
  engine_unavailable: 400,
} as const satisfies Record<ErrorEnvelope['error']['code'], number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The contract's error envelope (ErrorResponse). */
export type ErrorEnvelope = components['schemas']['ErrorResponse'];

export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly context: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(escapeControls(message, true, MAX_ERROR_MESSAGE));
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.context = escapeContext(context) as Record<string, unknown>;
    this.headers = headers;
  }

  /** retryable is true exactly for 429 and 5xx (seed section 7, rule 1). */
  get retryable(): boolean {
    return isRetryableStatus(this.status);
  }

  toJSON(): ErrorEnvelope {
    return { error: { code: this.code, message: this.message, retryable: this.retryable, context: this.context } };
  }
}

/**
 * Control characters never reach an error as sent (the contract's patterns forbid them in
 * messages and fields): each is replaced by its escape `\u001f`. A message keeps tab, line feed
 * and carriage return (its pattern allows them); every other string of an error keeps none.
 */
export function escapeControls(text: string, keepWhitespace = false, maxLength = Infinity): string {
  const re = keepWhitespace ? /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g : /[\u0000-\u001F\u007F]/g;
  const out = text.replace(re, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out.length > maxLength ? `${out.slice(0, maxLength - 1)}…` : out;
}

/**
 * The contract's longest strings of an error (ErrorResponse.message; ErrorContext.field and
 * FieldError.field; FieldError.message): text from the request, longer once escaped, is cut to them.
 */
export const MAX_ERROR_MESSAGE = 2000;
const MAX_FIELD = 500;
const MAX_FIELD_MESSAGE = 1000;

/** escapeControls over every string (keys included) of an error's context, at any depth. */
function escapeContext(value: unknown, depth = 0, key = ''): unknown {
  if (typeof value === 'string') return escapeControls(value, false, key === 'message' ? MAX_FIELD_MESSAGE : MAX_FIELD);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => escapeContext(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeControls(k, false, MAX_FIELD), escapeContext(v, depth + 1, k)]));
}

/** One failing field of a bad_request (the contract's FieldError). */
export type FieldError = components['schemas']['FieldError'];

export function badRequest(message: string, errors: FieldError[] = [], extra: Record<string, unknown> = {}): ApiError {
  return new ApiError('bad_request', message, { ...extra, errors });
}

/**
 * The 404 of a resource that does not exist (or not in this workspace). Every 404 has this context
 * shape: `resource` (the spec's ErrorContext.resource enum) and `field` (where the id was sent:
 * `path.id`, `body.brand_kit_id`, …).
 */
export function notFound(what: string, id: string | number, resource: string, field = 'path.id'): ApiError {
  return new ApiError('not_found', `${what} ${id} was not found in this workspace`, { resource, field });
}
