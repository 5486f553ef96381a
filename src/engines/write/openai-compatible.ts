// The copy writer over an OpenAI-compatible chat-completions API with structured output:
//   POST {SCRIPT_PROVIDER_URL}/chat/completions
//   Authorization: Bearer {SCRIPT_PROVIDER_API_KEY}
//   {model, messages: [{role:'system',…}, {role:'user',…}],
//    response_format: {type:'json_schema', json_schema: {name, strict: true, schema}}}
// Strict mode wants every object closed (additionalProperties: false) with every property
// required, so the schemas sent carry no length bounds; the answer (choices[0].message.content, a
// JSON text) is checked here with AJV against the same shapes plus our bounds: exact slide count,
// 3–5 beats, non-empty parts. Over-long headings and bodies are clipped; a wrong count or a
// malformed answer fails without retry. Shapes follow OpenAI's documented Chat Completions API
// (refusal, finish_reason, the {error:{message,type,param,code}} body, retry-after(-ms) headers).
// The host is operator configuration, not user input: it does not go through the outbound URL guard.
import { Ajv, type ValidateFunction } from 'ajv';
import type { WriterConfig } from '../../config.ts';
import { languagePack } from './languages.ts';
import { BODY_MAX, clip, HEADING_MAX, MAX_INPUT_CHARS, MAX_SLIDES, TITLE_MAX } from './local.ts';
import {
  WriterFailed,
  type Script,
  type ScriptRequest,
  type SlideCopy,
  type SlideCopyRequest,
  type SlideText,
  type Writer,
} from './types.ts';

/** Largest answer body read from the provider. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

const str = { type: 'string' } as const;
const strings = { type: 'array', items: str } as const;

export const SCRIPT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'hook', 'beats', 'call_to_action', 'scenes'],
  properties: { title: str, hook: str, beats: strings, call_to_action: str, scenes: strings },
} as const;

export const SLIDES_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'slides'],
  properties: {
    title: str,
    slides: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['role', 'heading', 'body'],
        properties: { role: { type: 'string', enum: ['hook', 'body', 'cta'] }, heading: str, body: str },
      },
    },
  },
} as const;

const nonEmpty = { type: 'string', pattern: '\\S' } as const;
const ajv = new Ajv({ allErrors: false });
const checkScript = ajv.compile<{ title: string; hook: string; beats: string[]; call_to_action: string; scenes: string[] }>({
  ...SCRIPT_SCHEMA,
  properties: {
    ...SCRIPT_SCHEMA.properties,
    hook: nonEmpty,
    call_to_action: nonEmpty,
    beats: { type: 'array', items: nonEmpty, minItems: 3, maxItems: 5 },
  },
});
const checkSlides = ajv.compile<{ title: string; slides: { role: SlideText['role']; heading: string; body: string }[] }>({
  ...SLIDES_SCHEMA,
  properties: {
    ...SLIDES_SCHEMA.properties,
    slides: {
      ...SLIDES_SCHEMA.properties.slides,
      items: {
        ...SLIDES_SCHEMA.properties.slides.items,
        properties: { ...SLIDES_SCHEMA.properties.slides.items.properties, heading: nonEmpty },
      },
    },
  },
});

interface ChatCompletion {
  choices?: { finish_reason?: string; message?: { content?: string | null; refusal?: string | null } }[];
}

/** Seconds from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date). */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.ceil(Number(raw));
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : undefined;
}

function languageName(language: string): string {
  return languagePack(language)?.name ?? clip(language, 40);
}

/** The provider a writer talks to: its configuration, the chat-completions endpoint and its host (named in errors). */
interface Provider {
  config: WriterConfig & { url: string };
  endpoint: string;
  host: string;
}

export function createOpenAICompatibleWriter(config: WriterConfig & { url: string }): Writer {
  const provider: Provider = { config, endpoint: `${config.url}/chat/completions`, host: new URL(config.url).host };
  return {
    name: provider.host,
    writeScript: (req, signal) => writeScript(provider, req, signal),
    writeSlides: (req, signal) => writeSlides(provider, req, signal),
  };
}

async function writeScript(provider: Provider, req: ScriptRequest, signal?: AbortSignal): Promise<Script> {
  const words = Math.max(15, Math.round(req.targetSeconds * req.wordsPerSecond));
  const language = languageName(req.language);
  const system = [
    'You write narration scripts for short vertical faceless videos.',
    `Write in ${language}. Return JSON only, in the given schema: a title, a hook (one or two sentences), three to five beats (each one or two sentences), a call_to_action, and scenes: one short visual description per part in order (hook, each beat, call to action), in English, using the visual style words given.`,
    `The hook, beats and call_to_action together must be about ${words} words (${req.targetSeconds} seconds spoken at ${req.wordsPerSecond} words per second). Plain spoken text: no emoji, hashtags, stage directions or markdown.`,
  ].join('\n');
  const user = [
    req.title ? `Title: ${clip(req.title, TITLE_MAX)}` : '',
    req.styles?.length ? `Visual style: ${req.styles.join(', ')}` : '',
    `Brief:\n${req.prompt.slice(0, MAX_INPUT_CHARS)}`,
  ]
    .filter(Boolean)
    .join('\n');
  const out = await complete(provider, 'faceless_script', SCRIPT_SCHEMA, system, user, signal);
  if (!checkScript(out)) throw invalid('script', checkScript.errors);
  const parts = [out.hook, ...out.beats, out.call_to_action];
  const scenes = parts.map((p, i) => clip(out.scenes[i]?.trim() || p, 200));
  return {
    title: clip(req.title?.trim() || out.title.trim() || clip(out.hook, TITLE_MAX), TITLE_MAX),
    language: languagePack(req.language)?.code ?? req.language,
    hook: out.hook.trim(),
    beats: out.beats.map((b) => b.trim()),
    callToAction: out.call_to_action.trim(),
    scenes,
  };
}

async function writeSlides(provider: Provider, req: SlideCopyRequest, signal?: AbortSignal): Promise<SlideCopy> {
  const count = Math.trunc(req.slideCount);
  if (!(count >= 2 && count <= MAX_SLIDES))
    throw new WriterFailed(`slide count must be 2–${MAX_SLIDES}, got ${req.slideCount}`, { retryable: false });
  const language = languageName(req.language);
  const system = [
    'You write the copy of social-media carousels (slideshows).',
    `Write in ${language}. Return JSON only, in the given schema: a title and exactly ${count} slides. The first slide has role "hook", the last role "cta" (a call to action), every other slide role "body".`,
    `Each heading at most ${HEADING_MAX} characters, each body at most ${BODY_MAX} characters (one or two sentences). Use every fact of the product context, without inventing facts. No emoji, hashtags or markdown.`,
  ].join('\n');
  const user = [
    req.title ? `Title: ${clip(req.title, TITLE_MAX)}` : '',
    `Brief:\n${req.prompt.slice(0, MAX_INPUT_CHARS)}`,
    req.productContext ? `Product context:\n${req.productContext.slice(0, MAX_INPUT_CHARS)}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  const out = await complete(provider, 'slideshow_copy', SLIDES_SCHEMA, system, user, signal);
  if (!checkSlides(out)) throw invalid('slide copy', checkSlides.errors);
  if (out.slides.length !== count)
    throw new WriterFailed(`the script model wrote ${out.slides.length} slides, ${count} were asked for`, { retryable: false });
  // Roles follow position whatever the model labelled; lengths are clipped to the slide's bounds.
  const slides: SlideText[] = out.slides.map((s, i) => ({
    role: i === 0 ? 'hook' : i === count - 1 ? 'cta' : 'body',
    heading: clip(s.heading, HEADING_MAX),
    body: clip(s.body, BODY_MAX),
  }));
  return {
    title: clip(req.title?.trim() || out.title.trim() || slides[0].heading, TITLE_MAX),
    language: languagePack(req.language)?.code ?? req.language,
    slides,
  };
}

function invalid(what: string, errors: ValidateFunction['errors']): WriterFailed {
  const e = errors?.[0];
  return new WriterFailed(
    `the script model's ${what} does not match the requested shape: ${e ? `${e.instancePath || '/'} ${e.message}` : 'invalid'}`,
    { retryable: false },
  );
}

/** One structured-output chat completion: the model's answer parsed from JSON (checked by the caller). */
async function complete(
  provider: Provider,
  name: string,
  schema: object,
  system: string,
  user: string,
  signal?: AbortSignal,
): Promise<unknown> {
  const { res, text } = await post(
    provider,
    {
      model: provider.config.model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
      response_format: { type: 'json_schema', json_schema: { name, strict: true, schema } },
    },
    signal,
  );
  if (!res.ok) throw httpFailure(provider.host, res, text);
  return answerOf(provider.host, res.status, text);
}

/** POSTs `body` to the endpoint within the configured timeout; the answer's text, read up to MAX_RESPONSE_BYTES. */
async function post(provider: Provider, body: object, signal?: AbortSignal): Promise<{ res: Response; text: string }> {
  const { config, host } = provider;
  const timeout = AbortSignal.timeout(config.timeoutMs);
  const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
  try {
    const res = await fetch(provider.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: combined,
    });
    return { res, text: await readCapped(res) };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted)
      throw new WriterFailed(`the script provider ${host} did not answer within ${config.timeoutMs} ms`, { retryable: true });
    if (err instanceof WriterFailed) throw err;
    throw new WriterFailed(`the script provider ${host} could not be reached: ${(err as Error).message}`, { retryable: true });
  }
}

/** The model's answer (choices[0].message.content) parsed from a successful completion, or why there is none. */
function answerOf(host: string, status: number, text: string): unknown {
  let json: ChatCompletion;
  try {
    json = JSON.parse(text) as ChatCompletion;
  } catch {
    throw new WriterFailed(`the script provider ${host} answered HTTP ${status} with a body that is not JSON`, {
      retryable: true,
      status,
    });
  }
  const choice = json.choices?.[0];
  const message = choice?.message;
  if (message?.refusal) throw new WriterFailed(`the script model refused: ${clip(message.refusal, 300)}`, { retryable: false, status });
  if (choice?.finish_reason === 'length')
    throw new WriterFailed('the script model ran out of tokens before finishing its answer (finish_reason "length")', {
      retryable: false,
      status,
    });
  if (choice?.finish_reason === 'content_filter')
    throw new WriterFailed('the script model stopped on its content filter (finish_reason "content_filter")', {
      retryable: false,
      status,
    });
  if (typeof message?.content !== 'string')
    throw new WriterFailed('the script provider answered without choices[0].message.content', { retryable: false, status });
  try {
    return JSON.parse(message.content);
  } catch {
    throw new WriterFailed(`the script model's answer is not JSON: ${clip(message.content, 120)}`, {
      retryable: false,
      status,
    });
  }
}

function httpFailure(host: string, res: Response, text: string): WriterFailed {
  let detail = '';
  try {
    const e = (JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown } }).error;
    if (e && typeof e.message === 'string')
      detail = `${e.message}${e.code ? ` (${String(e.code)})` : e.type ? ` (${String(e.type)})` : ''}`;
  } catch {
    detail = text.slice(0, 200);
  }
  const status = res.status;
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  const what =
    status === 401 || status === 403 ? 'refused our credentials' : status === 429 ? 'is rate limiting us' : `answered HTTP ${status}`;
  return new WriterFailed(`the script provider ${host} ${what}${detail ? `: ${clip(detail, 300)}` : ''}`, {
    retryable,
    status,
    ...(status === 429 || status === 503 ? { retryAfterSeconds: retryAfterSeconds(res.headers) } : {}),
  });
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await res.body.cancel().catch(() => {});
      throw new WriterFailed(`the script provider's answer is larger than ${MAX_RESPONSE_BYTES} bytes`, {
        retryable: false,
        status: res.status,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
