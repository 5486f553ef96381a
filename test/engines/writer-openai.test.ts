// The OpenAI-compatible copy writer against a fake chat-completions server (node:http on
// 127.0.0.1:0) that enforces the real request shape (path, bearer key, JSON, model, messages,
// strict json_schema response_format) and answers with the real response and error shapes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createOpenAICompatibleWriter, retryAfterSeconds } from '../../src/engines/write/openai-compatible.ts';
import { WriterFailed, type Writer } from '../../src/engines/write/types.ts';

const KEY = 'sk-test-writer';
const MODEL = 'gpt-4o-mini';

type Reply = (req: ChatRequest) => {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  content?: string;
  refusal?: string;
  finish?: string;
  delayMs?: number;
};
interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
}

let reply: Reply = () => ({ content: '{}' });
const seen: ChatRequest[] = [];

const openaiError = (message: string, type: string, param: string | null, code: string | null) => ({
  error: { message, type, param, code },
});

/** Every object of a strict schema is closed and requires each of its properties. */
function strictProblem(schema: unknown, at = '#'): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const s = schema as Record<string, unknown>;
  if (s.type === 'object') {
    const props = Object.keys((s.properties as object) ?? {});
    if (s.additionalProperties !== false) return `${at}: additionalProperties must be false`;
    const required = (s.required as string[]) ?? [];
    for (const p of props) if (!required.includes(p)) return `${at}: property ${p} must be required`;
    for (const p of props) {
      const inner = strictProblem((s.properties as Record<string, unknown>)[p], `${at}/properties/${p}`);
      if (inner) return inner;
    }
  }
  if (s.type === 'array') return strictProblem(s.items, `${at}/items`);
  return undefined;
}

const server = http.createServer((req, res) => {
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (raw += c));
  req.on('end', async () => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return send(404, openaiError(`Unknown request URL: ${req.method} ${req.url}.`, 'invalid_request_error', null, 'unknown_url'));
    if (req.headers.authorization !== `Bearer ${KEY}`)
      return send(
        401,
        openaiError(
          'Incorrect API key provided: sk-wr***. You can find your API key at https://platform.openai.com/account/api-keys.',
          'invalid_request_error',
          null,
          'invalid_api_key',
        ),
      );
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return send(400, openaiError('Content-Type must be application/json', 'invalid_request_error', null, null));
    let body: ChatRequest;
    try {
      body = JSON.parse(raw) as ChatRequest;
    } catch {
      return send(400, openaiError('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    }
    if (typeof body.model !== 'string' || !body.model)
      return send(400, openaiError('you must provide a model parameter', 'invalid_request_error', 'model', null));
    if (
      !Array.isArray(body.messages) ||
      body.messages.length === 0 ||
      !body.messages.every((m) => ['system', 'user', 'assistant', 'developer'].includes(m?.role) && typeof m.content === 'string')
    )
      return send(400, openaiError("Invalid value for 'messages'.", 'invalid_request_error', 'messages', 'invalid_value'));
    const rf = body.response_format;
    if (
      rf?.type !== 'json_schema' ||
      typeof rf.json_schema?.name !== 'string' ||
      !/^[a-zA-Z0-9_-]{1,64}$/.test(rf.json_schema.name) ||
      rf.json_schema.strict !== true
    )
      return send(400, openaiError("Invalid value for 'response_format'.", 'invalid_request_error', 'response_format', 'invalid_value'));
    const problem = strictProblem(rf.json_schema.schema);
    if (problem)
      return send(
        400,
        openaiError(
          `Invalid schema for response_format '${rf.json_schema.name}': ${problem}.`,
          'invalid_request_error',
          'response_format',
          null,
        ),
      );
    seen.push(body);
    const r = reply(body);
    if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs));
    if (res.destroyed) return;
    if (r.status && r.status !== 200) return send(r.status, r.body, r.headers);
    send(
      200,
      {
        id: 'chatcmpl-test',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: `${body.model}-2024-07-18`,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: r.refusal ? null : (r.content ?? null), refusal: r.refusal ?? null },
            logprobs: null,
            finish_reason: r.finish ?? 'stop',
          },
        ],
        usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 },
        system_fingerprint: 'fp_test',
      },
      r.headers,
    );
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const writer = (over: { apiKey?: string; timeoutMs?: number } = {}): Writer =>
  createOpenAICompatibleWriter({
    url: `${base}/`.replace(/\/+$/, ''),
    apiKey: over.apiKey ?? KEY,
    model: MODEL,
    timeoutMs: over.timeoutMs ?? 10_000,
  });

async function failure(p: Promise<unknown>): Promise<WriterFailed> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WriterFailed) return err;
    throw err;
  }
  throw new Error('expected a WriterFailed');
}

const SCRIPT = {
  title: 'Cold brew',
  hook: 'You have been making coffee wrong.',
  beats: ['Cold brew steeps for 18 hours.', 'It has less acid.', 'It keeps for a week.'],
  call_to_action: 'Order yours today.',
  scenes: ['a', 'b', 'c', 'd', 'e'],
};
const slidesOf = (n: number) => ({
  title: 'Cold brew',
  slides: Array.from({ length: n }, (_, i) => ({
    role: i === 0 ? 'hook' : i === n - 1 ? 'cta' : 'body',
    heading: `Heading ${i}`,
    body: i === 0 ? '' : `Body ${i}.`,
  })),
});

t.test('script: the request shape, and the answer mapped', async (t) => {
  seen.length = 0;
  reply = () => ({ content: JSON.stringify(SCRIPT) });
  const w = writer();
  t.equal(w.name, `127.0.0.1:${(server.address() as AddressInfo).port}`);
  const s = await w.writeScript({
    prompt: 'Our cold brew',
    language: 'es-MX',
    targetSeconds: 30,
    wordsPerSecond: 2.5,
    styles: ['watercolor'],
  });
  t.same(s, {
    title: 'Cold brew',
    language: 'es',
    hook: SCRIPT.hook,
    beats: SCRIPT.beats,
    callToAction: SCRIPT.call_to_action,
    scenes: SCRIPT.scenes,
  });
  t.equal(seen.length, 1);
  const req = seen[0];
  t.equal(req.model, MODEL);
  t.same(
    req.messages.map((m) => m.role),
    ['system', 'user'],
  );
  t.match(req.messages[0].content, /Spanish/);
  t.match(req.messages[0].content, /75 words/);
  t.match(req.messages[1].content, /Our cold brew/);
  t.match(req.messages[1].content, /watercolor/);
  t.equal(req.response_format.json_schema.name, 'faceless_script');
});

t.test('slides: exact count, roles by position, lengths clipped', async (t) => {
  seen.length = 0;
  const answer = slidesOf(6);
  answer.slides[2].role = 'cta';
  answer.slides[3].heading = 'H'.repeat(100);
  answer.slides[4].body = 'word '.repeat(80);
  reply = () => ({ content: JSON.stringify(answer) });
  const c = await writer().writeSlides({ prompt: 'Our cold brew', productContext: 'Brewed 18 hours.', language: 'Deutsch', slideCount: 6 });
  t.equal(c.slides.length, 6);
  t.same(
    c.slides.map((s) => s.role),
    ['hook', 'body', 'body', 'body', 'body', 'cta'],
  );
  t.ok(c.slides[3].heading.length <= 60);
  t.ok(c.slides[4].body.length <= 200);
  t.equal(c.language, 'de');
  t.match(seen[0].messages[0].content, /German/);
  t.match(seen[0].messages[0].content, /exactly 6 slides/);
  t.match(seen[0].messages[1].content, /Brewed 18 hours\./);
  t.equal(seen[0].response_format.json_schema.name, 'slideshow_copy');
});

t.test('wrong slide count and malformed answers fail without retry', async (t) => {
  reply = () => ({ content: JSON.stringify(slidesOf(5)) });
  let e = await failure(writer().writeSlides({ prompt: 'x', language: 'en', slideCount: 6 }));
  t.equal(e.retryable, false);
  t.match(e.message, /5 slides, 6 were asked for/);

  reply = () => ({ content: '{"title": "x", "slides": [' });
  e = await failure(writer().writeSlides({ prompt: 'x', language: 'en', slideCount: 3 }));
  t.equal(e.retryable, false);
  t.match(e.message, /not JSON/);

  reply = () => ({ content: JSON.stringify({ ...SCRIPT, beats: ['only one'] }) });
  e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.equal(e.retryable, false);
  t.match(e.message, /does not match the requested shape: \/beats/);

  reply = () => ({ content: JSON.stringify({ ...SCRIPT, hook: '   ' }) });
  e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.match(e.message, /\/hook/);

  reply = () => ({ content: '{"title":"x","hook":"h","beats":["a","b","c"],"call_to_action":"c","scen', finish: 'length' });
  e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.equal(e.retryable, false);
  t.match(e.message, /finish_reason "length"/);
});

t.test('a refusal fails without retry, carrying its text', async (t) => {
  reply = () => ({ refusal: "I'm sorry, I can't help with that request." });
  const e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.equal(e.retryable, false);
  t.match(e.message, /refused: I'm sorry, I can't help with that request\./);
});

t.test('401 with a wrong key: not retryable, with the provider message', async (t) => {
  const e = await failure(
    writer({ apiKey: 'sk-wrong' }).writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }),
  );
  t.equal(e.status, 401);
  t.equal(e.retryable, false);
  t.match(e.message, /refused our credentials: Incorrect API key provided.*\(invalid_api_key\)/);
});

t.test('400 from the provider: not retryable', async (t) => {
  reply = () => ({
    status: 400,
    body: openaiError(
      "This model's maximum context length is 128000 tokens.",
      'invalid_request_error',
      'messages',
      'context_length_exceeded',
    ),
  });
  const e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.equal(e.status, 400);
  t.equal(e.retryable, false);
  t.match(e.message, /context_length_exceeded/);
});

t.test('429: retryable, with the provider-asked wait', async (t) => {
  reply = () => ({
    status: 429,
    headers: { 'retry-after': '7' },
    body: openaiError(
      'Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3, Requested 1.',
      'requests',
      null,
      'rate_limit_exceeded',
    ),
  });
  let e = await failure(writer().writeSlides({ prompt: 'x', language: 'en', slideCount: 3 }));
  t.equal(e.status, 429);
  t.equal(e.retryable, true);
  t.equal(e.retryAfterSeconds, 7);
  t.match(e.message, /rate limiting us: Rate limit reached/);

  reply = () => ({
    status: 429,
    headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
    body: openaiError('Rate limit reached', 'tokens', null, 'rate_limit_exceeded'),
  });
  e = await failure(writer().writeSlides({ prompt: 'x', language: 'en', slideCount: 3 }));
  t.equal(e.retryAfterSeconds, 2, 'retry-after-ms rounds up to whole seconds');

  reply = () => ({ status: 429, body: openaiError('You exceeded your current quota.', 'insufficient_quota', null, 'insufficient_quota') });
  e = await failure(writer().writeSlides({ prompt: 'x', language: 'en', slideCount: 3 }));
  t.equal(e.retryAfterSeconds, undefined);

  t.equal(
    retryAfterSeconds(new Headers({ 'retry-after': new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString() }), Date.UTC(2030, 0, 1)),
    30,
    'an HTTP date',
  );
});

t.test('5xx and an unreachable provider are retryable', async (t) => {
  reply = () => ({ status: 503, body: openaiError('The server is overloaded or not ready yet.', 'server_error', null, null) });
  let e = await failure(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  t.equal(e.status, 503);
  t.equal(e.retryable, true);

  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  e = await failure(
    createOpenAICompatibleWriter({ url: `http://127.0.0.1:${port}/v1`, apiKey: KEY, model: MODEL, timeoutMs: 5000 }).writeScript({
      prompt: 'x',
      language: 'en',
      targetSeconds: 20,
      wordsPerSecond: 2.5,
    }),
  );
  t.equal(e.retryable, true);
  t.match(e.message, /could not be reached/);
});

t.test('a timeout is retryable; the caller’s abort is its own', async (t) => {
  reply = () => ({ content: JSON.stringify(SCRIPT), delayMs: 2000 });
  const started = performance.now();
  const e = await failure(writer({ timeoutMs: 1000 }).writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }));
  const took = performance.now() - started;
  t.equal(e.retryable, true);
  t.match(e.message, /did not answer within 1000 ms/);
  t.ok(took >= 900 && took < 1900, `gave up after ${Math.round(took)} ms, before the answer came`);

  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('job canceled')), 200);
  await t.rejects(writer().writeScript({ prompt: 'x', language: 'en', targetSeconds: 20, wordsPerSecond: 2.5 }, controller.signal), {
    message: 'job canceled',
  });
});

t.test('the fake holds requests to the real shape (so the tests above can fail)', async (t) => {
  const good = {
    model: MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'x',
        strict: true,
        schema: { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' } } },
      },
    },
  };
  const post = (body: unknown, auth = `Bearer ${KEY}`) =>
    fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify(body),
    });
  reply = () => ({ content: '{"a":"b"}' });
  t.equal((await post(good)).status, 200);
  t.equal((await post(good, 'Bearer nope')).status, 401);
  t.equal((await post({ ...good, response_format: { type: 'json_object' } })).status, 400);
  t.equal(
    (
      await post({
        ...good,
        response_format: { ...good.response_format, json_schema: { ...good.response_format.json_schema, strict: false } },
      })
    ).status,
    400,
  );
  const open = { ...good.response_format.json_schema, schema: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } };
  const loose = await post({ ...good, response_format: { type: 'json_schema', json_schema: open } });
  t.equal(loose.status, 400);
  t.match(((await loose.json()) as { error: { message: string } }).error.message, /additionalProperties/);
  const optional = { ...good.response_format.json_schema, schema: { ...good.response_format.json_schema.schema, required: [] } };
  t.equal((await post({ ...good, response_format: { type: 'json_schema', json_schema: optional } })).status, 400);
  t.equal((await post({ ...good, messages: [{ role: 'user' }] })).status, 400);
});
