// The speech engine over ElevenLabs' text-to-speech with timestamps:
// `POST {base}/v1/text-to-speech/{voice_id}/with-timestamps?output_format=mp3_44100_128` with the
// `xi-api-key` header and JSON {text, model_id, voice_settings?, previous_text?}, answering
// {audio_base64, alignment: {characters, character_start_times_seconds,
// character_end_times_seconds}, normalized_alignment}. Shapes from the official SDK
// (elevenlabs/elevenlabs-js: src/api/resources/textToSpeech/client/Client.ts convertWithTimestamps,
// BodyTextToSpeechFullWithTimestamps, AudioWithTimestampsResponse, CharacterAlignmentResponseModel,
// VoiceSettings) and the API reference (https://elevenlabs.io/docs/api-reference/text-to-speech/convert-with-timestamps).
// Word timings come from the character alignment of the text sent (timings 'engine').
// Configured by ELEVENLABS_API_KEY, ELEVENLABS_API_BASE, ELEVENLABS_MODEL, ELEVENLABS_VOICES
// (catalog voice → voice id; ./voices.ts) and SPEECH_TIMEOUT_MS.
import path from 'node:path';
import type { ElevenLabsConfig } from '../../config.ts';
import { decodeSpeech, postSpeech, speakInChunks } from './hosted-speech.ts';
import { alignWords, estimateWords, type TimedWord } from './timings.ts';
import { SpeechFailed, type SpeechEngine } from './types.ts';
import { providerVoice, type GenderDefaults } from './voices.ts';
import { SPEECH_SAMPLE_RATE } from './wav.ts';

/** Characters per request: the smallest limit of the current models (eleven_v3; multilingual_v2 takes 10,000). */
export const ELEVENLABS_MAX_INPUT = 5000;
const OUTPUT_FORMAT = 'mp3_44100_128';
/** Premade voices the API reference's examples use: Rachel (21m00Tcm4TlvDq8ikWAM) and George (JBFqnCBsd6RMkjVDRZzb). */
const DEFAULT_VOICES: GenderDefaults = { female: '21m00Tcm4TlvDq8ikWAM', male: 'JBFqnCBsd6RMkjVDRZzb', default: '21m00Tcm4TlvDq8ikWAM' };

interface Alignment {
  characters?: unknown;
  character_start_times_seconds?: unknown;
  character_end_times_seconds?: unknown;
}

/**
 * ElevenLabs' error bodies: {detail: {status, message}} (401, 400, 429 …) or FastAPI's validation
 * list {detail: [{loc, msg, type}]} (422).
 */
function readError(body: unknown): { message?: string; contentPolicy?: boolean } {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (Array.isArray(detail)) {
    const msgs = detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`);
    return { message: msgs.join('; ') };
  }
  if (detail && typeof detail === 'object') {
    const { status, message } = detail as { status?: string; message?: string };
    return {
      message: [status, message].filter(Boolean).join(': ') || undefined,
      contentPolicy: /moderation|content_policy|terms_of_service|tos_violation/i.test(status ?? ''),
    };
  }
  return typeof detail === 'string' ? { message: detail } : {};
}

/** The words of an alignment: runs of non-space characters, from the first one's start to the last one's end. */
export function alignedWords(alignment: Alignment | null | undefined): TimedWord[] | undefined {
  const chars = alignment?.characters;
  const starts = alignment?.character_start_times_seconds;
  const ends = alignment?.character_end_times_seconds;
  if (!Array.isArray(chars) || !Array.isArray(starts) || !Array.isArray(ends)) return undefined;
  if (starts.length !== chars.length || ends.length !== chars.length) return undefined;
  const words: TimedWord[] = [];
  let open: TimedWord | undefined;
  chars.forEach((c, i) => {
    if (typeof c !== 'string' || /^\s*$/.test(c)) {
      open = undefined;
      return;
    }
    const [s, e] = [Math.round(Number(starts[i]) * 1000), Math.round(Number(ends[i]) * 1000)];
    if (!Number.isFinite(s) || !Number.isFinite(e)) return;
    if (open) Object.assign(open, { text: open.text + c, endMs: Math.max(open.endMs, e) });
    else words.push((open = { text: c, startMs: s, endMs: Math.max(s + 1, e) }));
  });
  return words;
}

export function createElevenLabsSpeech(config: ElevenLabsConfig & { key: string }): SpeechEngine {
  const label = 'ElevenLabs';
  return {
    name: 'elevenlabs',
    async synthesize(text, outFile, opts) {
      const voiceId = providerVoice(config.voices, DEFAULT_VOICES, opts);
      const url = `${config.baseUrl}/v1/text-to-speech/${encodeURIComponent(voiceId)}/with-timestamps?output_format=${OUTPUT_FORMAT}`;
      // The API's speed setting spans 0.7–1.2; the caller's tempo pass does the rest.
      const speed = Math.min(1.2, Math.max(0.7, opts.speed ?? 1));
      const dir = path.dirname(outFile);
      let timed = true;
      const spoken = await speakInChunks(text, outFile, ELEVENLABS_MAX_INPUT, async (chunk, i, chunks) => {
        const answer = await postSpeech({
          label,
          url,
          headers: { 'xi-api-key': config.key, accept: 'application/json' },
          json: {
            text: chunk,
            model_id: config.model,
            ...(speed !== 1 ? { voice_settings: { speed } } : {}),
            ...(i > 0 ? { previous_text: chunks[i - 1] } : {}),
            ...(i < chunks.length - 1 ? { next_text: chunks[i + 1] } : {}),
          },
          timeoutMs: config.timeoutMs,
          signal: opts.signal,
          secret: config.key,
          readError,
        });
        const json = parseAnswer(answer);
        const heard = alignedWords(json.alignment);
        if (!heard) timed = false;
        return { pcm: await decodeSpeech(Buffer.from(json.audio_base64, 'base64'), ['audio/mpeg'], dir, label, opts.signal), heard };
      });
      const words = timed ? alignWords(text, spoken.heard, spoken.durationMs) : undefined;
      return {
        file: outFile,
        durationMs: spoken.durationMs,
        words: words ?? estimateWords(text, spoken.pcm, SPEECH_SAMPLE_RATE),
        timings: words ? 'engine' : 'estimated',
        model: config.model,
      };
    },
  };
}

function parseAnswer(body: Buffer): { audio_base64: string; alignment?: Alignment | null } {
  let json: { audio_base64?: unknown; alignment?: Alignment | null } | undefined;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  if (typeof json?.audio_base64 !== 'string' || !json.audio_base64) {
    throw new SpeechFailed('ElevenLabs answered without audio_base64', { code: 'provider_invalid_output', retryable: true });
  }
  return json as { audio_base64: string; alignment?: Alignment | null };
}
