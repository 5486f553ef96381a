// Errors: every non-2xx answer is the ErrorResponse envelope { error: { code, message, retryable,
// context } }. Without throwOnError the call resolves to { error, response } instead of throwing;
// `retryable` says whether the same request may be sent again (with the same idempotency key).
//   MEDIA_API_BASE_URL=… MEDIA_API_KEY=… node sdk/examples/errors.ts
import { createGeneration, getGeneration, type ErrorResponse } from '../src/index.ts';
import { connect, runIfMain } from './connect.ts';

const summary = (status: number, e: ErrorResponse) => ({
  status,
  code: e.error.code,
  message: e.error.message,
  retryable: e.error.retryable,
  fields: e.error.context.errors?.map((f) => f.field) ?? [],
  context_field: e.error.context.field ?? null,
  resource: e.error.context.resource ?? null,
});

export async function errors() {
  const client = connect();

  // 400: the body breaks the contract (no template, an unknown field); nothing is charged.
  const bad = await createGeneration({ client, body: { type: 'static_ad', prompt: '', colour: 'red' } as never });
  if (!bad.error) throw new Error('expected a 400');

  // 404: a well-formed id that is not in this workspace.
  const missing = await getGeneration({ client, path: { id: '00000000-0000-4000-8000-000000000000' } });
  if (!missing.error) throw new Error('expected a 404');

  // With throwOnError the envelope is thrown as it is (not wrapped in an Error).
  let thrown: ErrorResponse | undefined;
  try {
    await getGeneration({ client, throwOnError: true, path: { id: '00000000-0000-4000-8000-000000000000' } });
  } catch (e) {
    thrown = e as ErrorResponse;
  }

  return {
    bad_request: summary(bad.response.status, bad.error),
    not_found: summary(missing.response.status, missing.error),
    thrown_code: thrown?.error.code ?? null,
  };
}

runIfMain(import.meta, errors);
