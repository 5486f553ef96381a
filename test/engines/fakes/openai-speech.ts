// A fake of OpenAI's audio API (and of self-hosted servers that speak it, such as Kokoro-FastAPI):
//   POST /v1/audio/speech          JSON {model, input, voice, response_format?, speed?, instructions?}
//                                  → the audio file (wav at 24 kHz, mp3 or raw pcm, as OpenAI answers);
//   POST /v1/audio/transcriptions  multipart {file, model, response_format, timestamp_granularities[]}
//                                  → verbose_json {task, language, duration, text, words[{word, start, end}]}.
// Shapes and limits from the API reference (https://platform.openai.com/docs/api-reference/audio/createSpeech,
// .../createTranscription) and the official SDK (openai/openai-node src/resources/audio/speech.ts,
// transcriptions.ts): input at most 4096 characters, speed 0.25–4.0, the SDK's voices and models.
// Refuses what the real one refuses, with its error body {error: {message, type, param, code}}:
// a key not sent as `Authorization: Bearer …` when the fake has one (401; the message echoes the
// key sent, which the real API masks: our adapter must not repeat it), a body that is not JSON,
// an unknown model or voice, a missing input, an input over 4096 characters, a speed out of
// range, an unknown response_format (400). Input containing "throttle" is answered 429 with
// Retry-After: 1 the first time, "always-throttle" every time.
// The speech is ./tone.ts's: a 1000 Hz burst per word. The transcription "listens" for bursts in
// the uploaded WAV and labels them with the words of the texts spoken since the last
// transcription, as Whisper would: lower case, punctuation kept, the second word misheard.
import { bursts, toneBytes, toneSpeech, wavSamples } from './tone.ts';
import { startFake, type Fake } from './common.ts';

export const OPENAI_TONE_HZ = 1000;
export const OPENAI_SAMPLE_RATE = 24000;
const MODELS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15'];
const VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
const err = (message: string, type: string, param: string | null, code: string | null) => ({ error: { message, type, param, code } });
const invalid = (message: string, param: string | null, code: string | null) => err(message, 'invalid_request_error', param, code);

export interface OpenAiSpeechFake extends Fake {
  /** Transcriptions answer 500 while set. */
  failTranscriptions: boolean;
}

export async function startOpenAiSpeechFake(key?: string): Promise<OpenAiSpeechFake> {
  const throttled = new Set<string>();
  let pending: string[] = [];
  const fake: OpenAiSpeechFake = Object.assign(
    await startFake(async (req, res, json) => {
      if (key && req.headers.authorization !== `Bearer ${key}`) {
        const sent = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        return json(
          401,
          invalid(
            `Incorrect API key provided: ${sent}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            null,
            'invalid_api_key',
          ),
        );
      }
      if (req.method === 'POST' && req.path === '/v1/audio/transcriptions') return transcribe();
      if (req.method !== 'POST' || req.path !== '/v1/audio/speech')
        return json(404, invalid(`Invalid URL (${req.method} ${req.path})`, null, null));
      const b = req.body;
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json') || !b || typeof b !== 'object' || Buffer.isBuffer(b))
        return json(400, invalid('We could not parse the JSON body of your request.', null, null));
      if (!MODELS.includes(b.model)) return json(400, invalid(`Invalid value for 'model' = ${b.model}.`, 'model', 'invalid_value'));
      if (typeof b.input !== 'string' || !b.input)
        return json(400, invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter'));
      if (b.input.length > 4096)
        return json(
          400,
          invalid(
            `Invalid 'input': string too long. Expected a string with maximum length 4096, but got a string with length ${b.input.length} instead.`,
            'input',
            'string_above_max_length',
          ),
        );
      if (!VOICES.includes(b.voice))
        return json(
          400,
          invalid(
            `Invalid value: '${b.voice}'. Supported values are: ${VOICES.map((v) => `'${v}'`).join(', ')}.`,
            'voice',
            'invalid_value',
          ),
        );
      const speed = b.speed ?? 1;
      if (typeof speed !== 'number' || speed < 0.25 || speed > 4)
        return json(
          400,
          invalid(
            `Invalid 'speed': expected a number between 0.25 and 4.0, but got ${JSON.stringify(speed)} instead.`,
            'speed',
            'invalid_value',
          ),
        );
      const format = b.response_format ?? 'mp3';
      if (!FORMATS.includes(format)) return json(400, invalid(`Invalid value: '${format}'.`, 'response_format', 'invalid_value'));
      if (/throttle/.test(b.input) && (/always-throttle/.test(b.input) || !throttled.has(b.input))) {
        throttled.add(b.input);
        return json(
          429,
          err(
            `Rate limit reached for ${b.model} in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.`,
            'requests',
            null,
            'rate_limit_exceeded',
          ),
          { 'retry-after': '1' },
        );
      }
      if (!['wav', 'mp3', 'pcm'].includes(format)) return json(501, invalid(`The fake does not encode ${format}.`, null, null));
      pending.push(b.input);
      const bytes = await toneBytes(toneSpeech(b.input, OPENAI_SAMPLE_RATE, OPENAI_TONE_HZ), format);
      const type = { wav: 'audio/wav', mp3: 'audio/mpeg', pcm: 'audio/pcm' }[format as 'wav'];
      res.writeHead(200, { 'content-type': type, 'content-length': bytes.length }).end(bytes);

      function transcribe() {
        if (fake.failTranscriptions)
          return json(500, err('The server had an error while processing your request.', 'server_error', null, null));
        const b2 = req.body;
        const file = b2?.file?.[0];
        if (!file?.bytes) return json(400, invalid("Missing required parameter: 'file'.", 'file', 'missing_required_parameter'));
        if (typeof b2?.model?.[0] !== 'string')
          return json(400, invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'));
        const audio = wavSamples(file.bytes);
        if (!audio)
          return json(400, invalid('The audio file could not be decoded or its format is not supported.', 'file', 'invalid_value'));
        const heard = bursts(audio.pcm, audio.sampleRate);
        const texts = pending.join(' ').match(/\S+/g) ?? [];
        pending = [];
        const said = texts.map((w, i) => (i === 1 ? 'what' : w.toLowerCase()));
        const wantWords = b2?.response_format?.[0] === 'verbose_json' && (b2?.['timestamp_granularities[]'] ?? []).includes('word');
        const words = said.slice(0, heard.length).map((w, i) => ({ word: ` ${w}`, start: heard[i][0] / 1000, end: heard[i][1] / 1000 }));
        return json(200, {
          task: 'transcribe',
          language: 'english',
          duration: audio.pcm.length / audio.sampleRate,
          text: said.join(' '),
          ...(wantWords ? { words } : {}),
        });
      }
    }),
    { failTranscriptions: false },
  );
  return fake;
}
