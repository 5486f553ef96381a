// The transcribe engine over the OpenAI-compatible transcription API (POST {base}/audio/transcriptions,
// multipart: file, model, response_format=verbose_json, timestamp_granularities[]=word), which
// OpenAI, Groq, whisper.cpp's server and faster-whisper servers all offer. Configured by
// TRANSCRIPTION_PROVIDER_URL / _API_KEY / TRANSCRIPTION_MODEL; without a URL the registry
// (../index.ts) has no transcribe engine.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TranscriptionConfig } from '../../config.ts';
import { TranscriptionFailed, type TranscribedWord, type TranscribeEngine } from './types.ts';

interface VerboseJson {
  text?: string;
  language?: string;
  words?: { word?: string; text?: string; start?: number; end?: number; probability?: number; confidence?: number }[];
  segments?: { words?: VerboseJson['words'] }[];
}

export function createOpenAICompatibleTranscriber(config: TranscriptionConfig & { url: string }): TranscribeEngine {
  const endpoint = `${config.url}/audio/transcriptions`;
  return {
    name: new URL(config.url).host,
    async transcribe(file, opts) {
      const bytes = await fs.readFile(file);
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: opts.contentType }), path.basename(file));
      form.append('model', config.model);
      form.append('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'word');
      if (opts.language) form.append('language', opts.language.split('-')[0].toLowerCase());
      const signal = AbortSignal.any([AbortSignal.timeout(config.timeoutMs), ...(opts.signal ? [opts.signal] : [])]);
      let res: Response;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          body: form,
          headers: config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {},
          signal,
        });
      } catch (err) {
        throw new TranscriptionFailed(`the transcription provider could not be reached: ${(err as Error).message}`, true);
      }
      if (!res.ok) {
        const body = (await res.text().catch(() => '')).slice(0, 300);
        throw new TranscriptionFailed(
          `the transcription provider answered HTTP ${res.status}${body ? `: ${body}` : ''}`,
          res.status >= 500 || res.status === 429,
          res.status,
        );
      }
      let json: VerboseJson;
      try {
        json = (await res.json()) as VerboseJson;
      } catch {
        throw new TranscriptionFailed('the transcription provider answered with invalid JSON', true);
      }
      const raw = json.words ?? (json.segments ?? []).flatMap((s) => s.words ?? []);
      const words: TranscribedWord[] = [];
      for (const w of raw) {
        const text = (w.word ?? w.text ?? '').trim();
        if (!text || typeof w.start !== 'number' || typeof w.end !== 'number') continue;
        const startMs = Math.max(0, Math.round(w.start * 1000));
        const conf = w.probability ?? w.confidence;
        words.push({
          text,
          startMs,
          endMs: Math.max(startMs + 1, Math.round(w.end * 1000)),
          ...(typeof conf === 'number' ? { confidence: Math.max(0, Math.min(1, conf)) } : {}),
        });
      }
      return { text: json.text?.trim() ?? words.map((w) => w.text).join(' '), language: json.language ?? null, words };
    },
  };
}
