// application/json bodies, for the whole app (REST, /mcp and the OAuth JSON endpoints): Fastify's
// own parser (secure-json-parse: __proto__ and constructor.prototype refused), plus what it does
// not check:
//   - the charset: only UTF-8 (or none) is read; `charset=utf-16` and the like are 415, not
//     bytes silently decoded as UTF-8;
//   - nesting: at most JSON_MAX_DEPTH levels of arrays and objects (checked without recursion),
//     so no recursive code further on (validators, services, the MCP SDK) can overflow its stack;
//   - Unicode: no string or key with a lone UTF-16 surrogate ("\ud800" is valid JSON text but not
//     text PostgreSQL or UTF-8 can hold), named by its field.
// Refusals are ApiErrors (400 bad_request naming the field, 415 unsupported_media_type) that also
// carry `statusCode`, so error handlers of other scopes (/mcp's JSON-RPC errors) keep the status.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type FieldError } from '../errors.ts';

/** Deepest nesting of arrays and objects a JSON body may have (the body itself is level 1). */
export const JSON_MAX_DEPTH = 64;

const withStatus = (err: ApiError) => Object.assign(err, { statusCode: err.status });

/** The charset parameter of a Content-Type, lower-cased and unquoted, if any. */
function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return m ? m[2].toLowerCase() : undefined;
}

export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req: FastifyRequest, body: string, done) => {
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      const contentType = String(req.headers['content-type'])
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .slice(0, 255);
      done(
        withStatus(
          new ApiError(
            'unsupported_media_type',
            `Unsupported charset "${charset.slice(0, 40)}": JSON bodies must be UTF-8 (send charset=utf-8 or no charset)`,
            {
              content_type: contentType,
              supported_content_types: ['application/json'],
            },
          ),
        ),
        undefined,
      );
      return;
    }
    parse(req, body, (err, value) => {
      if (err) return done(err, undefined);
      const problem = jsonProblem(value);
      if (problem)
        return done(
          withStatus(new ApiError('bad_request', `Invalid request: ${problem.field} ${problem.message}`, { errors: [problem] })),
          undefined,
        );
      done(null, value);
    });
  });
}

interface Frame {
  value: object;
  depth: number;
  up: Frame | undefined;
  key: string | number | undefined;
}

const SURROGATE = 'contains a lone UTF-16 surrogate (a \\ud800-\\udfff escape that is not half of a pair); send well-formed Unicode text';

/** `body.a[2].b` of a frame (and an optional last key), shortened to fit the error schema. */
function fieldOf(frame: Frame | undefined, last?: string | number): string {
  const keys: (string | number)[] = last === undefined ? [] : [last];
  for (let f = frame; f && f.key !== undefined; f = f.up) keys.push(f.key);
  let field = 'body';
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i];
    field += typeof k === 'number' ? `[${k}]` : `.${k.toWellFormed().replace(/[\u0000-\u001f\u007f]/g, '?')}`;
    if (field.length > 200) return `${field.slice(0, 200)}…`;
  }
  return field;
}

/**
 * The first problem of a parsed JSON value: nesting deeper than JSON_MAX_DEPTH, or a string or
 * key holding a lone surrogate. Walks the value with an explicit stack (no recursion).
 */
export function jsonProblem(root: unknown): FieldError | undefined {
  if (typeof root === 'string') return root.isWellFormed() ? undefined : { field: 'body', message: SURROGATE };
  if (root === null || typeof root !== 'object') return undefined;
  const stack: Frame[] = [{ value: root, depth: 1, up: undefined, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (frame.depth > JSON_MAX_DEPTH) return { field: fieldOf(frame), message: `is nested more than ${JSON_MAX_DEPTH} levels deep` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const x: unknown = v[i];
        if (typeof x === 'string') {
          if (!x.isWellFormed()) return { field: fieldOf(frame, i), message: SURROGATE };
        } else if (x !== null && typeof x === 'object') stack.push({ value: x, depth: frame.depth + 1, up: frame, key: i });
      }
    } else {
      for (const k in v) {
        if (!k.isWellFormed()) return { field: fieldOf(frame, k), message: `(a key) ${SURROGATE}` };
        const x: unknown = (v as Record<string, unknown>)[k];
        if (typeof x === 'string') {
          if (!x.isWellFormed()) return { field: fieldOf(frame, k), message: SURROGATE };
        } else if (x !== null && typeof x === 'object') stack.push({ value: x, depth: frame.depth + 1, up: frame, key: k });
      }
    }
  }
  return undefined;
}
