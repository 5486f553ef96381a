// The contract check every test uses: each response the suite receives is validated against
// the spec's compiled response validator for its operation and status, and a status the spec
// does not declare for that operation fails the test.
import type { ValidateFunction } from 'ajv';
import responseHeaderValidators from '../../generated/response-header-validators.cjs';
import responseValidators from '../../generated/response-validators.cjs';
import { operationIndex, type OperationInfo } from '../../src/operations/executor.ts';

const validators = responseValidators as unknown as Record<string, ValidateFunction>;
const headerValidators = responseHeaderValidators as unknown as Record<string, ValidateFunction>;

const matchers = operationIndex.operations.map((op) => ({
  op,
  re: new RegExp(`^${op.server === undefined ? '/api/v1' : op.server.replace(/\/$/, '')}${op.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
}));

export function findOperation(method: string, url: string): OperationInfo | undefined {
  const pathname = new URL(url, 'http://x').pathname;
  return matchers.find((m) => m.op.method === method.toUpperCase() && m.re.test(pathname))?.op;
}

export interface ContractResult {
  ok: boolean;
  problems: string[];
  operationId: string | undefined;
}

export function checkResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): ContractResult {
  const problems: string[] = [];
  const op = findOperation(method, url);
  if (!op) {
    // Not an operation of the contract: only the envelope'd 404, 405 with Allow (a known path, another
    // method) or 413 before routing is allowed.
    if (status !== 404 && status !== 405 && status !== 413) problems.push(`${method} ${url} matches no operation but answered ${status}`);
    if (status === 405 && !/^[A-Z]+(, [A-Z]+)*$/.test(headers.allow ?? ''))
      problems.push(`${method} ${url} answered 405 without an Allow header`);
    const v = validators.ErrorResponse;
    if (!v(body)) problems.push(`unknown-route error body does not match the Error envelope: ${JSON.stringify(v.errors)}`);
    return { ok: problems.length === 0, problems, operationId: undefined };
  }
  const declared = op.responses[String(status)];
  if (!declared) {
    problems.push(
      `${op.operationId} answered ${status}, which the spec does not declare (declared: ${Object.keys(op.responses).join(', ')})`,
    );
    return { ok: false, problems, operationId: op.operationId };
  }
  const want = declared.contentType;
  const got = contentType?.split(';')[0].trim() ?? null;
  if (want !== got) problems.push(`${op.operationId} ${status}: content-type ${got} but the spec declares ${want}`);
  const v = validators[`${op.operationId}__${status}`];
  if (!v) problems.push(`no compiled validator for ${op.operationId} ${status}`);
  else if (!v(body)) problems.push(`${op.operationId} ${status} body does not match the spec: ${JSON.stringify(v.errors?.slice(0, 5))}`);
  const hv = headerValidators[`${op.operationId}__${status}__headers`];
  if (hv && !hv({ ...headers }))
    problems.push(`${op.operationId} ${status} headers do not match the spec: ${JSON.stringify(hv.errors?.slice(0, 5))}`);
  return { ok: problems.length === 0, problems, operationId: op.operationId };
}
