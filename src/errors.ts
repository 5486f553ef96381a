// The one error type handlers and services throw. Adapters (REST, MCP) turn it into the
// envelope {error: {code, message, retryable, context}}.

export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  invalid_api_key: 401,
  payment_required: 402,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  idempotency_conflict: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  server_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; retryable: boolean; context: Record<string, unknown> };
}

export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly context: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.context = context;
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

export interface FieldError {
  field: string;
  message: string;
}

export function badRequest(message: string, errors: FieldError[] = [], extra: Record<string, unknown> = {}): ApiError {
  return new ApiError('bad_request', message, { ...extra, errors });
}

export function notFound(what: string, id: string | number, field = 'id'): ApiError {
  return new ApiError('not_found', `${what} ${id} was not found in this workspace`, { field, id });
}
