// The speech engine over the OpenAI audio API, `POST {base}/audio/speech` (JSON {model, input,
// voice, response_format, speed}, `Authorization: Bearer <key>`; the answer is the audio file),
// which OpenAI and self-hosted servers such as Kokoro-FastAPI offer. Shapes and limits from the
// API reference (https://platform.openai.com/docs/api-reference/audio/createSpeech) and the
// official SDK (openai/openai-node src/resources/audio/speech.ts): input at most 4096 characters
// (longer text is spoken in sentence chunks, concatenated), speed 0.25–4.0, voices alloy, ash,
// ballad, coral, echo, fable, onyx, nova, sage, shimmer, verse, marin, cedar.
// Configured by SPEECH_PROVIDER_URL / _API_KEY (optional: self-hosted servers need none),
// SPEECH_MODEL, SPEECH_RESPONSE_FORMAT (wav or mp3, decoded by our ffmpeg), SPEECH_TIMEOUT_MS and
// SPEECH_VOICES (catalog voice → provider voice; ./voices.ts).
// The API times no words: they are estimated over the audio's voiced stretches (timings
// 'estimated'); ./timings.ts replaces them by a transcription when a transcribe engine is configured.
import path from 'node:path';
import type { SpeechProviderConfig } from '../../config.ts';
import { decodeSpeech, postSpeech, speakInChunks } from './hosted-speech.ts';
import { estimateWords } from './timings.ts';
import type { SpeechEngine } from './types.ts';
import { providerVoice, type GenderDefaults } from './voices.ts';
import { SPEECH_SAMPLE_RATE } from './wav.ts';

/** The API's longest input, in characters. */
export const OPENAI_SPEECH_MAX_INPUT = 4096;
/** OpenAI's voices by gender, when SPEECH_VOICES names none: nova, onyx, and the neutral alloy. */
const DEFAULT_VOICES: GenderDefaults = { female: 'nova', male: 'onyx', default: 'alloy' };
const TYPES = { wav: ['audio/wav'], mp3: ['audio/mpeg'] } as const;

interface OpenAiErrorBody {
  error?: { message?: string; type?: string; code?: string | null };
}

/** OpenAI's error body {error: {message, type, param, code}}; a moderation refusal is a content-policy one. */
function readError(body: unknown): { message?: string; contentPolicy?: boolean } {
  const e = (body as OpenAiErrorBody | undefined)?.error;
  if (!e || typeof e !== 'object') return {};
  const message = typeof e.message === 'string' ? e.message : undefined;
  return { message, contentPolicy: e.code === 'moderation_blocked' || e.code === 'content_policy_violation' };
}

export function createOpenAICompatibleSpeech(config: SpeechProviderConfig & { url: string }): SpeechEngine {
  const label = `the speech provider ${new URL(config.url).host}`;
  return {
    name: 'openai-compatible',
    async synthesize(text, outFile, opts) {
      const voice = providerVoice(config.voices, DEFAULT_VOICES, opts);
      const speed = Math.min(4, Math.max(0.25, opts.speed ?? 1));
      const dir = path.dirname(outFile);
      const spoken = await speakInChunks(text, outFile, OPENAI_SPEECH_MAX_INPUT, async (input) => {
        const bytes = await postSpeech({
          label,
          url: `${config.url}/audio/speech`,
          headers: { accept: 'application/octet-stream', ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) },
          json: { model: config.model, input, voice, response_format: config.responseFormat, speed },
          timeoutMs: config.timeoutMs,
          signal: opts.signal,
          secret: config.apiKey,
          readError,
        });
        return { pcm: await decodeSpeech(bytes, TYPES[config.responseFormat], dir, label, opts.signal) };
      });
      return {
        file: outFile,
        durationMs: spoken.durationMs,
        words: estimateWords(text, spoken.pcm, SPEECH_SAMPLE_RATE),
        timings: 'estimated',
        model: config.model,
      };
    },
  };
}
