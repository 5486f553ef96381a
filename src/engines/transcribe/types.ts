// The transcribe capability: recorded speech → its text and each word's timing (the editor's
// generate_captions_from_items on media that is not our own voiceover; the transcript of a
// reference video). Engine: an OpenAI-compatible speech-to-text API (./openai-compatible.ts) when
// TRANSCRIPTION_PROVIDER_URL is set; there is no local one, so without it the registry
// (../index.ts) has none and callers say so.
import type { components } from '../../../generated/openapi.d.ts';

/** A word and its timing (the contract's CaptionWord). */
export type TranscribedWord = components['schemas']['CaptionWord'];

export interface Transcript {
  text: string;
  language: string | null;
  words: TranscribedWord[];
}

export interface TranscribeEngine {
  readonly name: string;
  transcribe(file: string, opts: { contentType: string; language?: string; signal?: AbortSignal }): Promise<Transcript>;
}

export class TranscriptionFailed extends Error {
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(message: string, retryable: boolean, status?: number) {
    super(message);
    this.name = 'TranscriptionFailed';
    this.retryable = retryable;
    this.status = status;
  }
}
