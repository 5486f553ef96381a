// A paid generation, queued with an idempotency key (a retry of the same request never charges
// twice) and polled until it completes.
//   MEDIA_API_BASE_URL=… MEDIA_API_KEY=… node sdk/examples/generation.ts [template_slug]
import { randomUUID } from 'node:crypto';
import { createGeneration, getGeneration, listModels } from '../src/index.ts';
import { connect, runIfMain } from './connect.ts';

export async function generation(templateSlug?: string, pollEveryMs = 1000, timeoutMs = 5 * 60_000) {
  const client = connect();
  // throwOnError: a non-2xx answer throws its parsed body (the ErrorResponse envelope) instead.
  const slug = templateSlug ?? (await listModels({ client, throwOnError: true })).data.static_ads[0].slug;

  const idempotencyKey = randomUUID();
  const request = {
    client,
    throwOnError: true as const,
    headers: { 'Idempotency-Key': idempotencyKey },
    body: { type: 'static_ad' as const, template_slug: slug, prompt: 'Fresh lemonade, 20% off this weekend', aspect_ratio: '1:1' },
  };
  const { data: batch } = await createGeneration(request);
  // The same request again (as after a timeout): the stored answer, no second charge.
  const { data: replay } = await createGeneration(request);

  const id = batch.generations[0].id;
  const deadline = Date.now() + timeoutMs;
  let polls = 0;
  for (;;) {
    const { data: g } = await getGeneration({ client, throwOnError: true, path: { id } });
    polls++;
    if (g.status !== 'generating') {
      return {
        id,
        status: g.status,
        url: g.url,
        output: g.output,
        error: g.error,
        credits_deducted: batch.credits_deducted,
        replay: { idempotent_replay: replay.idempotent_replay ?? false, same_id: replay.generations[0].id === id, credits_deducted: replay.credits_deducted },
        polls,
      };
    }
    if (Date.now() > deadline) throw new Error(`generation ${id} still generating after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollEveryMs));
  }
}

runIfMain(import.meta, () => generation(process.argv[2], Number(process.env.POLL_EVERY_MS ?? 1000)));
