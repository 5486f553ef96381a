// A fake of OpenAI's Images API (https://platform.openai.com/docs/api-reference/images) for
// gpt-image-1, refusing what the real one refuses: a key not sent as `Authorization: Bearer …`,
// a size the model does not make, `response_format` (gpt-image-1 always answers b64_json), a
// missing prompt, an edit that is not multipart or has no `image[]` file. Errors are
// {"error": {message, type, param, code}}; 429 carries Retry-After.
// Behaviour by words in the prompt: "throttle" (first request 429), "forbidden" (moderation_blocked).
import { png, startFake, type Fake } from './common.ts';

const SIZES = ['1024x1024', '1536x1024', '1024x1536', 'auto'];
const err = (message: string, type: string, param: string | null, code: string | null) => ({ error: { message, type, param, code } });

export async function startOpenAiFake(key: string): Promise<Fake> {
  const throttled = new Set<string>();
  return startFake(async (req, res, json) => {
    if (req.headers.authorization !== `Bearer ${key}`) {
      return json(
        401,
        err(
          'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
          'invalid_request_error',
          null,
          'invalid_api_key',
        ),
      );
    }
    const edit = req.path === '/v1/images/edits';
    if (req.method !== 'POST' || (req.path !== '/v1/images/generations' && !edit))
      return json(404, err(`Invalid URL (${req.method} ${req.path})`, 'invalid_request_error', null, null));
    const ct = String(req.headers['content-type'] ?? '');
    if (edit && !ct.startsWith('multipart/form-data'))
      return json(
        400,
        err(
          "Invalid Content-Type header (application/json), expected multipart/form-data. (HINT: If you're using curl, you can pass -F 'key=value' to send data with multipart/form-data.)",
          'invalid_request_error',
          null,
          null,
        ),
      );
    if (!edit && !ct.startsWith('application/json'))
      return json(400, err('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    // One shape for both: multipart fields are lists.
    const field = (k: string) => (edit ? req.body?.[k]?.[0] : req.body?.[k]);
    if (field('model') !== 'gpt-image-1')
      return json(400, err(`Invalid value for 'model' = ${field('model')}.`, 'invalid_request_error', 'model', 'invalid_value'));
    if (typeof field('prompt') !== 'string' || !field('prompt'))
      return json(400, err("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
    if (field('response_format') !== undefined)
      return json(400, err("Unknown parameter: 'response_format'.", 'invalid_request_error', 'response_format', 'unknown_parameter'));
    const size = field('size') ?? 'auto';
    if (!SIZES.includes(size))
      return json(
        400,
        err(
          `Invalid value: '${size}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.`,
          'invalid_request_error',
          'size',
          'invalid_value',
        ),
      );
    const format = field('output_format') ?? 'png';
    if (!['png', 'jpeg', 'webp'].includes(format))
      return json(400, err(`Invalid value: '${format}'.`, 'invalid_request_error', 'output_format', 'invalid_value'));
    if (edit) {
      const images = req.body?.['image[]'] ?? req.body?.image;
      if (!Array.isArray(images) || !images.length || typeof images[0] === 'string')
        return json(400, err("Missing required parameter: 'image'.", 'invalid_request_error', 'image', 'missing_required_parameter'));
    }
    const prompt: string = field('prompt');
    if (/throttle/.test(prompt) && !throttled.has(prompt)) {
      throttled.add(prompt);
      return json(
        429,
        err(
          'Rate limit reached for gpt-image-1 in organization org-fake on images per minute (IPM): Limit 5, Used 5, Requested 1. Please try again in 1s.',
          'requests',
          null,
          'rate_limit_exceeded',
        ),
        { 'retry-after': '1' },
      );
    }
    if (/forbidden/.test(prompt)) {
      return json(
        400,
        err(
          'Your request was rejected as a result of our safety system. Your request may contain content that is not allowed by our safety system.',
          'image_generation_user_error',
          null,
          'moderation_blocked',
        ),
      );
    }
    const [w, h] = (size === 'auto' ? '1024x1024' : size).split('x').map(Number);
    const bytes = await png(w, h, edit ? '#ff8800' : '#22aa55');
    return json(200, {
      created: Math.floor(Date.now() / 1000),
      data: [{ b64_json: bytes.toString('base64') }],
      usage: { total_tokens: 100, input_tokens: 50, output_tokens: 50 },
    });
  });
}
