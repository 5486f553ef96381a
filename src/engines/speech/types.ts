// The speech capability: text → a WAV file, with its duration and each word's timing (so the
// captions of our voiceovers are exact, not transcribed). Engine: eSpeak NG (./espeak.ts), chosen
// by the registry (../index.ts).
import type { components } from '../../../generated/openapi.d.ts';

/** A word spoken and when (the contract's CaptionWord; synthesis knows no confidence). */
export type SpokenWord = Omit<components['schemas']['CaptionWord'], 'confidence'>;

export interface Speech {
  /** The WAV file written (22.05 kHz mono PCM). */
  file: string;
  durationMs: number;
  words: SpokenWord[];
}

export interface SpeechOptions {
  /** eSpeak NG voice: language[+variant], e.g. en-us+f3. */
  voice: string;
  /** Speaking rate multiplier, 1 = 175 words per minute. */
  speed?: number;
  /** Pitch shift in semitones (about 4 eSpeak pitch units per semitone around 50). */
  pitch?: number;
  timeoutMs?: number;
}

/** The synthesizer could not make the audio (it failed to start, crashed, timed out or refused the text). */
export class SpeechFailed extends Error {
  override name = 'SpeechFailed';
}

export interface SpeechEngine {
  readonly name: string;
  /** Synthesizes `text` into `outFile`; resolves with the duration and per-word timings. */
  synthesize(text: string, outFile: string, opts: SpeechOptions): Promise<Speech>;
}
