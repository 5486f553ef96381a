// The speech capability: text → a WAV file, with its duration and each word's timing. Engines,
// chosen by the registry (../index.ts): ElevenLabs (./elevenlabs.ts) and eSpeak NG (./espeak.ts)
// time words themselves; fal's TTS endpoints (./fal.ts) and an OpenAI-compatible server
// (./openai-compatible.ts) do not, so their words are estimated from the audio, and ./timings.ts replaces them by a transcription of the
// audio when a transcribe engine is configured. `timings` says which.
import type { components } from '../../../generated/openapi.d.ts';
import { ProviderError } from '../generation.ts';

/** A word spoken and when (the contract's CaptionWord; synthesis knows no confidence). */
export type SpokenWord = Omit<components['schemas']['CaptionWord'], 'confidence'>;

/** Where word timings came from: the synthesizer itself, a transcription of its audio, or an estimate over the audio. */
export type TimingSource = 'engine' | 'transcribed' | 'estimated';

export interface Speech {
  /** The WAV file written (22.05 kHz mono PCM). */
  file: string;
  durationMs: number;
  /** The whitespace tokens of the text that hold a letter or digit, in order, each timed. */
  words: SpokenWord[];
  timings: TimingSource;
  /** The provider's model that spoke, when the engine has one (tts-1, eleven_multilingual_v2). */
  model?: string;
}

/** The catalog voice a narration is spoken in (a built-in voice or a workspace clone), for engines with voices of their own. */
export interface CatalogVoice {
  id: string;
  gender?: string;
  /** ISO 639-1 code of the text. */
  language?: string;
}

export interface SpeechOptions {
  /** eSpeak NG voice: language[+variant], e.g. en-us+f3. */
  voice: string;
  /** The catalog voice: hosted engines map its id (SPEECH_VOICES, ELEVENLABS_VOICES, FAL_SPEECH_VOICES), else its gender, to a voice of theirs. */
  catalogVoice?: CatalogVoice;
  /** Speaking rate multiplier, 1 = 175 words per minute. */
  speed?: number;
  /** Pitch shift in semitones (about 4 eSpeak pitch units per semitone around 50). */
  pitch?: number;
  timeoutMs?: number;
  /** Stops a hosted request (the job was stopped). */
  signal?: AbortSignal;
}

/**
 * The synthesizer could not make the audio (it failed to start, crashed, timed out or refused the
 * text; a hosted one answered an error). A ProviderError: `retryable` and `code` (render_failed
 * for the local synthesizer; provider_rate_limited, provider_unauthorized, provider_rejected,
 * provider_unavailable, timeout, content_rejected, provider_invalid_output for a hosted one).
 */
export class SpeechFailed extends ProviderError {
  constructor(message: string, opts: Partial<ConstructorParameters<typeof ProviderError>[1]> = {}) {
    super(message, { retryable: true, code: 'render_failed', ...opts });
    this.name = 'SpeechFailed';
  }
}

export interface SpeechEngine {
  readonly name: string;
  /** Synthesizes `text` into `outFile`; resolves with the duration and per-word timings. */
  synthesize(text: string, outFile: string, opts: SpeechOptions): Promise<Speech>;
}
