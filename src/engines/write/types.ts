// The write capability, the copy writer: turns a brief into the words of a faceless video's
// narration or a slideshow's slides. One interface, two engines: a local writer that works offline
// (./local.ts, the default) and an adapter for an OpenAI-compatible chat-completions API with
// structured output (./openai-compatible.ts: SCRIPT_PROVIDER_URL / SCRIPT_PROVIDER_API_KEY /
// SCRIPT_MODEL). Jobs get theirs from the registry (`engineFor('write', …)` in ../index.ts); both
// pipelines share it.

export interface ScriptRequest {
  /** The brief (POST /faceless-videos `prompt`). */
  prompt: string;
  title?: string;
  /** Language name or locale as the client sent it (e.g. English, Spanish, de-DE). */
  language: string;
  /** Target narration length in seconds; the script is sized to it at the voice's pace. */
  targetSeconds: number;
  /** Words per second the voice speaks (about 2.5–3 for the local voices). */
  wordsPerSecond: number;
  /** Visual style words the scene descriptions may use (image_style, selected_*_styles). */
  styles?: string[];
  /** A UGC template's slug: the script is a presenter talking to camera in that format (./presenter.ts). */
  presenterTemplate?: string;
}

/** A narration: a hook, three to five beats and a call to action, each one or two sentences. */
export interface Script {
  title: string;
  language: string;
  hook: string;
  beats: string[];
  callToAction: string;
  /** One short visual description per part, in order (hook, beats…, call to action). */
  scenes: string[];
  /**
   * One on-screen title per part, in order (2–6 words: the list item's name, the hook's claim, the
   * call to action). A writer may leave it out: the titles are then phrases of the parts' sentences.
   */
  titles?: string[];
}

export interface SlideCopyRequest {
  prompt: string;
  title?: string;
  productContext?: string;
  language: string;
  slideCount: number;
}

export interface SlideText {
  role: 'hook' | 'body' | 'cta';
  /** Short headline shown large on the slide (≤ 60 characters). */
  heading: string;
  /** One or two sentences under the headline (≤ 200 characters); empty for a bare hook. */
  body: string;
}

/** Copy for a carousel: exactly `slideCount` slides, the first a hook, the last a call to action. */
export interface SlideCopy {
  title: string;
  language: string;
  slides: SlideText[];
}

export interface Writer {
  /** Provider name for logs and records (`local`, or the remote host). */
  readonly name: string;
  writeScript(req: ScriptRequest, signal?: AbortSignal): Promise<Script>;
  writeSlides(req: SlideCopyRequest, signal?: AbortSignal): Promise<SlideCopy>;
}

export class WriterFailed extends Error {
  readonly retryable: boolean;
  readonly status: number | undefined;
  /** Seconds the provider asked us to wait (429 Retry-After), when it said. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, opts: { retryable: boolean; status?: number; retryAfterSeconds?: number }) {
    super(message);
    this.name = 'WriterFailed';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}
