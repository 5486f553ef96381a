// A narrated template (its model is driven by a voice: a talking avatar): before the model, two
// stages make what it speaks.
//   script  the copy writer (write) turns the prompt into a spoken script sized to the duration:
//           a hook, beats and a call to action;
//   voice   the speech engine says it in a voice of the presenter's gender, its word timings from
//           the engine, a transcription or an estimate (timedSpeech), fitted to the duration
//           (tempo, then silence to the end) and stored before the model is asked.
// The voice drives the model (generating) and is the finished ad's sound; its words time the
// captions (compositing).
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { ProviderError } from '../../engines/generation.ts';
import { engineFor } from '../../engines/index.ts';
import { retimeSpeech } from '../../engines/speech/retime.ts';
import { timedSpeech } from '../../engines/speech/timings.ts';
import type { SpokenWord, TimingSource } from '../../engines/speech/types.ts';
import { WriterFailed } from '../../engines/write/types.ts';
import type { StageContext } from '../../kernel/stages.ts';
import { findPublicAvatar, voiceForGender } from '../../services/catalog/catalog-data.ts';
import { generationModelOutputKey } from '../../storage/keys.ts';
import type { GenerationRow } from './rows.ts';

/** Words a presenter says per second at speed 1 (the local voices speak about 2.5–3). */
const WORDS_PER_SECOND = 2.6;

export interface ScriptOutput {
  text: string;
  /** The writer that wrote it (local, or the chat server's host). */
  writer: string;
}

export interface VoiceOutput {
  storageKey: string;
  durationMs: number;
  words: SpokenWord[];
  voiceId: string;
  engine: string;
  model: string | null;
  timings: TimingSource;
}

/** The spoken script: hook, beats and call to action, sized to a little less than the duration. */
export async function writeScript(ctx: AppContext, g: GenerationRow, s: StageContext<GenerationRow>): Promise<ScriptOutput> {
  const writer = engineFor('write', ctx);
  const seconds = g.spec.durationSeconds ?? 10;
  const script = await writer
    .writeScript(
      {
        // The prompt is the topic (the template's title would become it otherwise).
        prompt: g.spec.prompt.trim() || g.spec.title,
        language: 'English',
        targetSeconds: Math.max(3, seconds - 1.5),
        wordsPerSecond: WORDS_PER_SECOND,
        // A UGC ad's presenter talks to camera in the template's format.
        presenterTemplate: g.type === 'ugc_ad' ? (g.spec.templateSlug ?? undefined) : undefined,
      },
      s.signal,
    )
    .catch((err: unknown) => {
      if (err instanceof WriterFailed)
        throw new ProviderError(`The script could not be written: ${err.message}`, { retryable: err.retryable, code: 'script_failed' });
      throw err;
    });
  return { text: fitted([script.hook, ...script.beats, script.callToAction], seconds), writer: writer.name };
}

/** Most words a presenter can say in `seconds` (at the fastest tempo the voice is fitted to, with a breath to spare). */
const maxWords = (seconds: number) => Math.floor(WORDS_PER_SECOND * 1.4 * Math.max(1, seconds - 0.5));

/**
 * The script's sentences, beats dropped from the end until it can be said within the duration
 * (the hook and the call to action stay): a writer may run over its size by a sentence, and a
 * short ad must not end on a sentence cut off.
 */
export function fitted(parts: string[], seconds: number): string {
  const count = (xs: string[]) => xs.join(' ').split(/\s+/).filter(Boolean).length;
  const kept = [...parts];
  while (kept.length > 2 && count(kept) > maxWords(seconds)) kept.splice(kept.length - 2, 1);
  return kept.join(' ');
}

/** The script spoken in the presenter's voice, fitted to the duration and stored. */
export async function speakScript(
  ctx: AppContext,
  g: GenerationRow,
  s: StageContext<GenerationRow>,
  workDir: string,
  script: ScriptOutput,
): Promise<VoiceOutput> {
  const targetMs = (g.spec.durationSeconds ?? 10) * 1000;
  const gender = g.spec.avatar ? findPublicAvatar(g.spec.avatar.id)?.gender : undefined;
  const voice = voiceForGender(gender);
  const words = script.text.split(/\s+/).filter(Boolean).length;
  // Spoken at a pace that fills about 92 % of the duration (0.8–1.6 times the voice's own).
  const speed = Math.max(0.8, Math.min(1.6, ((words / WORDS_PER_SECOND) * 1000) / (targetMs * 0.92)));
  const raw = path.join(workDir, 'voice-raw.wav');
  const engine = engineFor('speech', ctx);
  const speech = await timedSpeech(engine, engineFor('transcribe', ctx), script.text, raw, {
    voice: voice.espeak_voice,
    catalogVoice: { id: voice.id, gender: voice.gender, language: 'en' },
    speed,
    timeoutMs: 120_000,
    signal: s.signal,
  });
  s.report(0.7);
  // Longer than the duration: sped up (at most 1.5×); then silence to the end.
  const out = path.join(workDir, 'voice.wav');
  const fitted = await retimeSpeech(speech, Math.max(1, speech.durationMs / (targetMs * 0.97)), out, {
    cwd: workDir,
    signal: s.signal,
    lengthMs: targetMs,
  });
  const key = generationModelOutputKey(g.orgId, g.id, 'wav');
  await ctx.storage.put(key, { file: out }, 'audio/wav');
  return {
    storageKey: key,
    durationMs: fitted.durationMs,
    words: fitted.words,
    voiceId: voice.id,
    engine: engine.name,
    model: speech.model ?? null,
    timings: speech.timings,
  };
}
