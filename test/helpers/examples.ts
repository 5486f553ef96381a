// Builds a valid request for any operation from the spec itself: path ids of the declared
// type, and the request body example the spec gives (which Redocly checks against the schema).
import spec from '../../generated/openapi.json' with { type: 'json' };
import type { OperationInfo } from '../../src/operations/executor.ts';

type Obj = Record<string, any>;

const deref = (node: any): any => {
  let cur = node;
  while (cur && typeof cur === 'object' && typeof cur.$ref === 'string') {
    cur = cur.$ref
      .slice(2)
      .split('/')
      .reduce((n: Obj, k: string) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec as Obj);
  }
  return cur;
};

export function operationSpec(op: OperationInfo): Obj {
  return deref((spec as Obj).paths[op.path])[op.method.toLowerCase()];
}

export function exampleBody(op: OperationInfo): unknown {
  const raw = operationSpec(op).requestBody;
  if (!raw) return undefined;
  const media = deref(raw).content?.['application/json'];
  if (!media) return undefined;
  if (media.example !== undefined) return structuredClone(media.example);
  const first = media.examples && Object.values(media.examples)[0];
  if (first) return structuredClone(deref(first).value);
  const schema = deref(media.schema);
  if (Array.isArray(schema?.examples) && schema.examples.length) return structuredClone(schema.examples[0]);
  throw new Error(`${op.operationId}: the spec gives no request body example`);
}

export function examplePath(op: OperationInfo, ids: Record<string, string | number> = {}): string {
  const base = op.server === '/' ? '' : (op.server ?? '/api/v1');
  return `${base}${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (ids[name] !== undefined) return String(ids[name]);
    const p = op.params.find((x) => x.in === 'path' && x.name === name)!;
    const schema = deref(
      (p as Obj).schema ?? deref((operationSpec(op).parameters ?? []).map(deref).find((x: Obj) => x.name === name)?.schema),
    );
    return schema?.type === 'integer' ? '4242' : '00000000-0000-4000-8000-000000000001';
  })}`;
}

export function exampleRequest(op: OperationInfo, ids: Record<string, string | number> = {}): { path: string; body: unknown } {
  return { path: examplePath(op, ids), body: exampleBody(op) };
}
