// A fake of ElevenLabs' text to speech with timestamps:
//   POST /v1/text-to-speech/{voice_id}/with-timestamps?output_format=…  header xi-api-key,
//   JSON {text, model_id?, voice_settings?, previous_text?, next_text?, …}
//   → {audio_base64, alignment: {characters, character_start_times_seconds,
//      character_end_times_seconds}, normalized_alignment}.
// Shapes from the official SDK (elevenlabs/elevenlabs-js: src/api/resources/textToSpeech/client/
// Client.ts convertWithTimestamps, BodyTextToSpeechFullWithTimestamps,
// TextToSpeechConvertWithTimestampsRequestOutputFormat, AudioWithTimestampsResponse,
// CharacterAlignmentResponseModel, HttpValidationError, VoiceSettings) and the API reference
// (https://elevenlabs.io/docs/api-reference/text-to-speech/convert-with-timestamps). Refuses what
// the real one refuses: no or another xi-api-key (401 {detail: {status: "invalid_api_key",
// message}}), a body that is not JSON or has no text, an unknown output_format, voice settings out
// of range (422, FastAPI's {detail: [{loc, msg, type}]}), an unknown voice (404 voice_not_found)
// or model (400 model_not_found), a text over the model's character limit (400). Text containing
// "throttle" is answered 429 {detail: {status: "too_many_concurrent_requests"}} with
// Retry-After: 1 the first time, "always-throttle" every time.
// The audio is ./tone.ts's (a 700 Hz burst per word) in the format asked, and the alignment is
// that audio's own character times.
import { toneBytes, toneSpeech } from './tone.ts';
import { startFake, type Fake } from './common.ts';

export const ELEVENLABS_TONE_HZ = 700;
/** Premade voices (the SDK's examples' ids). */
export const ELEVENLABS_VOICES = ['21m00Tcm4TlvDq8ikWAM', 'JBFqnCBsd6RMkjVDRZzb', 'EXAVITQu4vr4xnSDxMaL'];
const MODELS: Record<string, number> = { eleven_multilingual_v2: 10_000, eleven_flash_v2_5: 40_000, eleven_v3: 5_000 };
const FORMATS = ['mp3_22050_32', 'mp3_44100_64', 'mp3_44100_128', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'wav_22050', 'wav_44100'];
const validation = (loc: (string | number)[], msg: string, type: string) => ({ detail: [{ loc, msg, type }] });

export async function startElevenLabsFake(key: string): Promise<Fake> {
  const throttled = new Set<string>();
  return startFake(async (req, _res, json) => {
    if (req.headers['xi-api-key'] !== key) return json(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    const m = /^\/v1\/text-to-speech\/([^/]+)\/with-timestamps$/.exec(req.path);
    if (req.method !== 'POST' || !m) return json(404, { detail: 'Not Found' });
    const format = req.query.get('output_format') ?? 'mp3_44100_128';
    if (!FORMATS.includes(format))
      return json(422, validation(['query', 'output_format'], `Input should be ${FORMATS.map((f) => `'${f}'`).join(', ')}`, 'enum'));
    const b = req.body;
    if (!b || typeof b !== 'object' || Buffer.isBuffer(b)) return json(422, validation(['body'], 'Field required', 'missing'));
    if (typeof b.text !== 'string') return json(422, validation(['body', 'text'], 'Field required', 'missing'));
    const speed = b.voice_settings?.speed;
    if (speed !== undefined && (typeof speed !== 'number' || speed < 0.7 || speed > 1.2))
      return json(422, validation(['body', 'voice_settings', 'speed'], 'Input should be between 0.7 and 1.2', 'value_error'));
    const voice = decodeURIComponent(m[1]);
    if (!ELEVENLABS_VOICES.includes(voice))
      return json(404, { detail: { status: 'voice_not_found', message: `A voice with voice_id ${voice} does not exist.` } });
    const model = b.model_id ?? 'eleven_multilingual_v2';
    if (!(model in MODELS))
      return json(400, { detail: { status: 'model_not_found', message: `A model with model ID ${model} does not exist.` } });
    if (b.text.length > MODELS[model])
      return json(400, {
        detail: {
          status: 'max_character_limit_exceeded',
          message: `You are sending ${b.text.length} characters in a single request, over the limit of ${MODELS[model]} characters.`,
        },
      });
    if (/throttle/.test(b.text) && (/always-throttle/.test(b.text) || !throttled.has(b.text))) {
      throttled.add(b.text);
      return json(
        429,
        {
          detail: {
            status: 'too_many_concurrent_requests',
            message:
              'Too many concurrent requests. Your current subscription is associated with a maximum of 2 concurrent requests (running in parallel).',
          },
        },
        { 'retry-after': '1' },
      );
    }
    const [codec, rate] = format.split('_');
    const tone = toneSpeech(b.text, Number(rate), ELEVENLABS_TONE_HZ);
    const audio = await toneBytes(tone, codec as 'mp3' | 'pcm' | 'wav');
    const alignment = {
      characters: tone.chars.map((c) => c.c),
      character_start_times_seconds: tone.chars.map((c) => Math.round(c.start * 1000) / 1000),
      character_end_times_seconds: tone.chars.map((c) => Math.round(c.end * 1000) / 1000),
    };
    return json(200, { audio_base64: audio.toString('base64'), alignment, normalized_alignment: alignment });
  });
}
