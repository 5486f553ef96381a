// The speech engine over fal's queue API (../hosted/fal.ts: submit, status, result, cancel past
// the deadline), for the TTS endpoint FAL_SPEECH_MODEL names, with FAL_KEY and FAL_QUEUE_BASE:
//   fal-ai/kokoro/<language>     {prompt, voice, speed 0.1–5}          → {audio: File} (WAV)
//     https://fal.ai/models/fal-ai/kokoro/american-english/llms.txt (voices af_heart … am_santa)
//   fal-ai/elevenlabs/tts/<model> {text, voice, speed 0.7–1.2}        → {audio: File} (MP3)
//     https://fal.ai/models/fal-ai/elevenlabs/tts/multilingual-v2/llms.txt (voices by name: Rachel …)
// (output File {url, content_type, file_name, file_size}, as the generated endpoint types of
// carlosdp/fal-rs fal/src/endpoints/fal_ai/{kokoro,elevenlabs/tts}/… say). The audio URL is
// fetched through the guarded client and checked (sniffed as WAV or MP3, decoded by our ffmpeg
// to 22.05 kHz mono). Neither answer times its words: they are estimated over the audio (timings
// 'estimated'), and ./timings.ts replaces them by a transcription when a transcribe engine is
// configured. (fal's ElevenLabs endpoints take `timestamps: true`, but the shape of what they
// answer with it is not documented on the model pages, so it is not asked for.)
// Errors are fal's (readError of ../hosted/fal.ts: content_policy_violation → content_rejected),
// as SpeechFailed; a 429 is waited out in place as Retry-After says (twice, at most 30 s each,
// like the other hosted speech engines); each chunk has SPEECH_TIMEOUT_MS from submit to result
// (past it the request is canceled at fal and the attempt fails as retryable: a narration is
// cheap to ask again, and the speech stage keeps no provider job to resume).
// Voices: FAL_SPEECH_VOICES (catalog voice → the endpoint's voice; ./voices.ts), else by gender
// for the endpoints with known voices (Kokoro American and British English, ElevenLabs), else
// none (the endpoint's default voice).
import path from 'node:path';
import type { FalSpeechConfig, ProviderEndpoint } from '../../config.ts';
import { fetchMediaBytes } from '../../media/fetch-media.ts';
import type { GuardedFetcher } from '../../net/guarded-fetch.ts';
import { ProviderError } from '../generation.ts';
import { falCompleted, falOutput, falQueueApi, falSubmit } from '../hosted/fal.ts';
import type { HostedApi } from '../hosted/hosted.ts';
import { decodeSpeech, speakInChunks } from './hosted-speech.ts';
import { estimateWords } from './timings.ts';
import { SpeechFailed, type SpeechEngine, type SpeechOptions } from './types.ts';
import { providerVoice, type GenderDefaults } from './voices.ts';
import { SPEECH_SAMPLE_RATE } from './wav.ts';

/** Characters per request: eleven_v3's limit, the smallest of fal's ElevenLabs endpoints (Kokoro's pages state none). */
export const FAL_SPEECH_MAX_INPUT = 5000;
const TYPES = ['audio/wav', 'audio/mpeg'];
const MAX_AUDIO_BYTES = 200 * 1024 * 1024;

/** How an endpoint family takes a text, a voice and a speed. */
interface Family {
  input(text: string, voice: string | undefined, speed: number): Record<string, unknown>;
}
const KOKORO: Family = {
  input: (prompt, voice, speed) => ({ prompt, ...(voice ? { voice } : {}), speed: Math.min(5, Math.max(0.1, speed)) }),
};
const ELEVENLABS: Family = {
  input: (text, voice, speed) => ({ text, ...(voice ? { voice } : {}), speed: Math.min(1.2, Math.max(0.7, speed)) }),
};

/** The endpoints' own voices by gender, where their pages list them. */
const DEFAULT_VOICES: Record<string, GenderDefaults> = {
  'fal-ai/kokoro/american-english': { female: 'af_heart', male: 'am_adam', default: 'af_heart' },
  'fal-ai/kokoro/british-english': { female: 'bf_emma', male: 'bm_george', default: 'bf_emma' },
  elevenlabs: { female: 'Rachel', male: 'George', default: 'Rachel' },
};

export interface FalSpeechOptions extends FalSpeechConfig {
  model: string;
  /** FAL_QUEUE_BASE and FAL_KEY. */
  endpoint: ProviderEndpoint & { key: string };
  /** PROVIDER_POLL_MS, PROVIDER_TIMEOUT_MS. */
  pollMs: number;
  requestTimeoutMs: number;
  /** Downloads of the audio URL fal answers. */
  fetcher: GuardedFetcher;
}

/** The voice sent for these options: the operator's map, else the endpoint's default by gender, else none. */
function voiceFor(config: FalSpeechOptions, opts: SpeechOptions): string | undefined {
  const elevenlabs = config.model.startsWith('fal-ai/elevenlabs/');
  const defaults = DEFAULT_VOICES[elevenlabs ? 'elevenlabs' : config.model];
  return providerVoice(config.voices, defaults ?? { female: '', male: '', default: '' }, opts) || undefined;
}

/** A fal failure as the speech capability reports it (a job deadline is retryable: see above). */
function speechFailure(err: unknown): unknown {
  if (!(err instanceof ProviderError) || err instanceof SpeechFailed) return err;
  const { code, status, retryAfterMs } = err;
  return new SpeechFailed(err.message, { code, status, retryAfterMs, retryable: err.retryable || code === 'timeout', cause: err });
}

export function createFalSpeech(config: FalSpeechOptions): SpeechEngine {
  const label = `fal ${config.model}`;
  const family = config.model.startsWith('fal-ai/elevenlabs/') ? ELEVENLABS : KOKORO;
  const api = falQueueApi({
    baseUrl: config.endpoint.baseUrl,
    key: config.endpoint.key,
    pollMs: config.pollMs,
    requestTimeoutMs: Math.min(config.requestTimeoutMs, config.timeoutMs),
    jobTimeoutMs: config.timeoutMs,
    rateLimitWaits: 2,
    maxRetryAfterMs: 30_000,
  });
  return {
    name: 'fal',
    async synthesize(text, outFile, opts) {
      const voice = voiceFor(config, opts);
      const dir = path.dirname(outFile);
      const spoken = await speakInChunks(text, outFile, FAL_SPEECH_MAX_INPUT, async (chunk) => {
        const url = await audioUrl(api, config.model, family.input(chunk, voice, opts.speed ?? 1), opts.signal).catch((err: unknown) => {
          throw speechFailure(err);
        });
        const bytes = await fetchMediaBytes(config.fetcher, url, {
          maxBytes: MAX_AUDIO_BYTES,
          timeoutMs: config.timeoutMs,
          signal: opts.signal,
          refuse: ({ error }) =>
            opts.signal?.aborted
              ? opts.signal.reason
              : new SpeechFailed(`${label} audio ${url} ${error.message}`, {
                  code: 'provider_error',
                  retryable: error.retryable || error.reason === 'network',
                  cause: error,
                }),
        });
        return { pcm: await decodeSpeech(bytes, TYPES, dir, label, opts.signal) };
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

/** One request through the queue: submitted, polled to completion, its result's audio URL. */
async function audioUrl(api: HostedApi, model: string, input: Record<string, unknown>, signal: AbortSignal | undefined): Promise<string> {
  const ref = await falSubmit(api, model, input, signal);
  await falCompleted(api, ref, { signal });
  const out = (await falOutput(api, ref, signal)) as { audio?: { url?: unknown } };
  const url = out.audio?.url;
  if (typeof url !== 'string' || !url)
    throw new SpeechFailed(`fal request ${ref.id} completed without an audio URL`, { code: 'provider_invalid_output', retryable: false });
  return url;
}
