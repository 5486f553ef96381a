// A fake of Replicate's predictions API (https://replicate.com/docs/reference/http) that refuses
// what the real one refuses: a token not sent as `Authorization: Bearer …`, a model path that is
// not /v1/models/{owner}/{name}/predictions, a body without `input` or with unknown top-level
// fields, input values outside the model's schema (422 with the real "Input validation failed"
// body). It answers with prediction objects (status starting → processing → succeeded, output a
// URL on its own /files/), 429 {"title","detail","status"} with Retry-After, and POST …/cancel.
// Behaviour by words in the prompt: "throttle" (first create answers 429), "nsfw" (the prediction
// fails with the safety checker's message), "slow" (never finishes), "garbage" (the output is not an image).
// Controls: hold() keeps every prediction processing (as "slow" does) until its release() is called
// (a worker killed while it polls); `instant` makes a prediction succeed at its first poll
// (benchmarks: the provider's own time near zero).
import { randomBytes } from 'node:crypto';
import { png, sizeFor, startFake, type Fake } from './common.ts';

const MODELS = new Set(['black-forest-labs/flux-1.1-pro', 'black-forest-labs/flux-1.1-pro-ultra', 'black-forest-labs/flux-kontext-pro']);
const ASPECTS = ['1:1', '16:9', '3:2', '2:3', '4:5', '5:4', '9:16', '3:4', '4:3'];

export interface ReplicateFake extends Fake {
  predictions: Map<string, { id: string; model: string; input: any; polls: number; status: string }>;
  /** Keeps every prediction processing until the returned release() is called. */
  hold(): () => void;
}

export interface ReplicateFakeOptions {
  /** A prediction succeeds at its first poll. */
  instant?: boolean;
}

export async function startReplicateFake(token: string, options: ReplicateFakeOptions = {}): Promise<ReplicateFake> {
  const predictions: ReplicateFake['predictions'] = new Map();
  const throttled = new Set<string>();
  /** Polls a prediction needs before it succeeds. */
  const pollsNeeded = options.instant ? 1 : 2;
  let held = false;
  let fake: Fake;
  const view = (p: { id: string; model: string; input: any; status: string }, output: unknown = null, error: unknown = null) => ({
    id: p.id,
    model: p.model,
    version: 'hidden',
    input: p.input,
    logs: '',
    output,
    data_removed: false,
    error,
    status: p.status,
    created_at: new Date().toISOString(),
    urls: {
      get: `${fake.url}/v1/predictions/${p.id}`,
      cancel: `${fake.url}/v1/predictions/${p.id}/cancel`,
      web: `https://replicate.com/p/${p.id}`,
    },
  });
  fake = await startFake(async (req, res, json) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      return json(401, { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 });
    }
    const create = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(req.path);
    if (req.method === 'POST' && create) {
      const model = `${create[1]}/${create[2]}`;
      if (!MODELS.has(model)) return json(404, { title: 'Not found', detail: 'The requested resource could not be found.', status: 404 });
      const body = req.body;
      if (
        !body ||
        typeof body !== 'object' ||
        typeof body.input !== 'object' ||
        Object.keys(body).some((k) => !['input', 'webhook', 'webhook_events_filter', 'stream'].includes(k))
      ) {
        return json(422, {
          title: 'Invalid request body',
          detail: 'The request body must be a JSON object with an "input" object.',
          status: 422,
        });
      }
      const input = body.input;
      const problems: string[] = [];
      if (typeof input.prompt !== 'string' || !input.prompt) problems.push('- input: prompt is required');
      if (input.aspect_ratio !== undefined && !ASPECTS.includes(input.aspect_ratio))
        problems.push(`- input.aspect_ratio: aspect_ratio must be one of the following: ${ASPECTS.map((a) => `"${a}"`).join(', ')}`);
      if (input.seed !== undefined && !Number.isInteger(input.seed))
        problems.push('- input.seed: Invalid type. Expected: integer, given: string');
      if (input.output_format !== undefined && !['webp', 'jpg', 'png'].includes(input.output_format))
        problems.push('- input.output_format: output_format must be one of the following: "webp", "jpg", "png"');
      if (problems.length)
        return json(422, { title: 'Input validation failed', detail: problems.join('\n'), status: 422, invalid_fields: [] });
      if (/throttle/.test(input.prompt) && !throttled.has(input.prompt)) {
        throttled.add(input.prompt);
        return json(
          429,
          { title: 'Request was throttled.', detail: 'Request was throttled. Expected available in 1 second.', status: 429 },
          { 'retry-after': '1' },
        );
      }
      const p = { id: randomBytes(13).toString('hex'), model, input, polls: 0, status: 'starting' };
      predictions.set(p.id, p);
      return json(201, view(p));
    }
    const get = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(req.path);
    const p = get && predictions.get(get[1]);
    if (!get || !p) return json(404, { title: 'Not found', detail: 'The requested resource could not be found.', status: 404 });
    if (req.method === 'POST' && get[2]) {
      if (['starting', 'processing'].includes(p.status)) p.status = 'canceled';
      return json(200, view(p));
    }
    if (req.method !== 'GET' || get[2]) return json(405, { title: 'Method not allowed', detail: 'Method not allowed.', status: 405 });
    if (p.status !== 'starting' && p.status !== 'processing')
      return json(200, view(p, p.status === 'succeeded' ? `${fake.url}/files/${p.id}.png` : null));
    p.polls++;
    if (held || /slow/.test(p.input.prompt) || p.polls < pollsNeeded) {
      p.status = 'processing';
      return json(200, view(p));
    }
    if (/nsfw/.test(p.input.prompt)) {
      p.status = 'failed';
      return json(200, view(p, null, 'NSFW content detected. Try running it again, or try a different prompt.'));
    }
    const { width, height } = sizeFor(p.input.aspect_ratio ?? '1:1', 1024);
    fake.files.set(`${p.id}.png`, {
      type: 'image/png',
      bytes: /garbage/.test(p.input.prompt) ? Buffer.from('<html>not an image</html>') : await png(width, height),
    });
    p.status = 'succeeded';
    return json(200, view(p, `${fake.url}/files/${p.id}.png`));
  });
  const hold = () => {
    held = true;
    return () => {
      held = false;
    };
  };
  return Object.assign(fake, { predictions, hold });
}
