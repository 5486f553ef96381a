// External work an edit may need (synthesized speech, built-in sound effects, files from URLs,
// transcriptions), done once per request and remembered: PATCH applies its operations twice
// (first on a snapshot, outside any lock, to do the slow work; then for real under the project's
// row lock, where everything is remembered) and commits the media rows it created in the same
// transaction as the edit. A failed edit deletes the files it stored.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import type { Db, Tx } from '../../db/client.ts';
import { customVoices, media, mediaTranscripts } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import { ensureSoundEffect, SOUND_EFFECTS_BY_ID } from '../../media/sound-effects.ts';
import { timedSpeech } from '../../engines/speech/timings.ts';
import { engineFor } from '../../engines/index.ts';
import { SpeechFailed, type SpokenWord } from '../../engines/speech/types.ts';
import { TranscriptionFailed } from '../../engines/transcribe/types.ts';
import { fetchMediaBytes } from '../../media/fetch-media.ts';
import { editorMediaKey, soundEffectKey } from '../../storage/keys.ts';
import { findVoice, loadCatalogData } from '../catalog/catalog-data.ts';
import {
  discardStored,
  ingest,
  receiveBuffer,
  tempPath,
  URL_IMPORT_MAX_BYTES,
  type EditorMediaType,
  type MediaInsert,
  type MediaRow,
} from './media.ts';

export interface MediaInfo {
  id: string;
  kind: 'image' | 'video' | 'audio' | 'voice';
  source: MediaInsert['source'];
  status: 'processing' | 'completed' | 'failed';
  contentType: string;
  storageKey: string;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  hasAudio: boolean | null;
  filename: string | null;
}

/** A word and its timing on its media (the contract's CaptionWord). */
export type TimedWord = components['schemas']['CaptionWord'];

interface PendingTranscript {
  source: 'synthesis' | 'transcription';
  language: string | null;
  text: string;
  words: TimedWord[];
}

/** What edits need to know of a media row (stored or about to be). */
export const mediaInfo = (r: MediaRow | (MediaInsert & { id: string })): MediaInfo => ({
  id: r.id,
  kind: r.kind,
  source: r.source,
  status: r.status ?? 'completed',
  contentType: r.contentType,
  storageKey: r.storageKey,
  width: r.width ?? null,
  height: r.height ?? null,
  durationSeconds: r.durationSeconds ?? null,
  hasAudio: r.hasAudio ?? null,
  filename: r.filename ?? null,
});

export class EditResources {
  readonly ctx: AppContext;
  readonly orgId: string;
  /** The connection lookups use: the pool while preparing, the transaction when applying. */
  db: Db | Tx;
  /** Media created by this request (stored files, rows not yet inserted). */
  private readonly created = new Map<string, MediaInsert & { id: string }>();
  /** Media of this request the current run of the operations refers to. */
  readonly used = new Set<string>();
  private readonly cache = new Map<string, MediaInfo | null>();
  private readonly transcripts = new Map<string, TimedWord[] | null>();
  private readonly newTranscripts = new Map<string, PendingTranscript>();
  private readonly memo = new Map<string, Promise<unknown>>();
  /** Aborted when the client went away: downloads stop. */
  private readonly signal: AbortSignal | undefined;

  constructor(ctx: AppContext, orgId: string, signal?: AbortSignal) {
    this.ctx = ctx;
    this.orgId = orgId;
    this.db = ctx.db;
    this.signal = signal;
  }

  private once<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = fn();
      this.memo.set(key, p);
      // A failure is not remembered: the second run reports it again from scratch.
      p.catch(() => this.memo.delete(key));
    }
    return p;
  }

  /** Library media of the workspace (or created by this request), or undefined. */
  async media(id: string): Promise<MediaInfo | undefined> {
    const mine = this.created.get(id);
    if (mine) {
      this.used.add(id);
      return mediaInfo(mine);
    }
    if (!this.cache.has(id)) {
      const [row] = await this.db
        .select()
        .from(media)
        .where(and(eq(media.id, id), eq(media.orgId, this.orgId)));
      this.cache.set(id, row ? mediaInfo(row) : null);
    }
    return this.cache.get(id) ?? undefined;
  }

  /** Loads the media of many ids at once into the cache (one query). */
  async preload(ids: Iterable<string>): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.cache.has(id) && !this.created.has(id));
    if (!missing.length) return;
    const rows = await this.db
      .select()
      .from(media)
      .where(and(inArray(media.id, missing), eq(media.orgId, this.orgId)));
    for (const id of missing) this.cache.set(id, null);
    for (const r of rows) this.cache.set(r.id, mediaInfo(r));
  }

  private adopt(row: MediaInsert & { id: string }): MediaInfo {
    this.created.set(row.id, row);
    this.used.add(row.id);
    return mediaInfo(row);
  }

  /** Synthesized speech stored as voice media, with exact word timings. */
  async voiceover(
    opIndex: number,
    text: string,
    voiceId: string | undefined,
    settings: { speed?: number; pitch?: number; volume_db?: number } | undefined,
    field: string,
  ): Promise<MediaInfo> {
    const key = `voiceover:${opIndex}:${JSON.stringify([text, voiceId, settings])}`;
    const row = await this.once(key, async () => {
      const { espeak: voice, catalogVoice } = await this.voiceOf(voiceId, field);
      const id = randomUUID();
      const raw = await tempPath(this.ctx, 'voiceover');
      const out = `${raw}.wav`;
      try {
        // The configured speech engine in the catalog voice; its word timings from the engine, a
        // transcription or an estimate (timedSpeech).
        const speech = await timedSpeech(engineFor('speech', this.ctx), engineFor('transcribe', this.ctx), text, `${raw}-raw.wav`, {
          voice,
          catalogVoice,
          speed: settings?.speed,
          pitch: settings?.pitch,
        }).catch((err: unknown) => {
          if (err instanceof SpeechFailed)
            // A provider's outage or rate limit is worth a retry (503); anything else is ours (500).
            throw new ApiError(err.retryable ? 'service_unavailable' : 'server_error', `Speech synthesis failed: ${err.message}`);
          throw err;
        });
        const gain = settings?.volume_db ?? 0;
        // Resampled to 48 kHz stereo (the mixer's format), with the voice's gain applied.
        await runFfmpeg(
          [
            ...inputArgs({ path: speech.file, type: 'audio/wav' }),
            '-af',
            `volume=${gain}dB`,
            '-ar',
            '48000',
            '-ac',
            '2',
            '-c:a',
            'pcm_s16le',
            out,
          ],
          {
            cwd: path.dirname(speech.file),
          },
        );
        const storageKey = editorMediaKey(this.orgId, id, 'wav');
        const stored = await this.ctx.storage.put(storageKey, { file: out }, 'audio/wav');
        const row: MediaInsert & { id: string } = {
          id,
          orgId: this.orgId,
          kind: 'voice',
          status: 'completed',
          source: 'voiceover',
          title: `Voiceover: ${text.replace(/\s+/g, ' ').slice(0, 80)}`,
          filename: `voiceover-${id.slice(0, 8)}.wav`,
          contentType: 'audio/wav',
          sizeBytes: stored.bytes,
          storageKey,
          width: null,
          height: null,
          durationSeconds: speech.durationMs / 1000,
          hasAudio: true,
          indexedText: text,
        };
        this.newTranscripts.set(id, { source: 'synthesis', language: voice.split('+')[0], text, words: speech.words as SpokenWord[] });
        this.transcripts.set(id, speech.words);
        return row;
      } finally {
        await fs.rm(out, { force: true });
        await fs.rm(`${raw}-raw.wav`, { force: true });
      }
    });
    return this.adopt(row);
  }

  /** The voice: its eSpeak voice, and the catalog voice a hosted engine maps to one of its own. */
  private async voiceOf(
    voiceId: string | undefined,
    field: string,
  ): Promise<{ espeak: string; catalogVoice: { id: string; gender?: string; language?: string } }> {
    const of = (v: { id: string; espeak_voice: string; gender: string; locale: string[] }) => ({
      espeak: v.espeak_voice,
      catalogVoice: { id: v.id, gender: v.gender, language: v.locale[0]?.split('-')[0] },
    });
    if (!voiceId) return of(loadCatalogData().voices[0]);
    const builtIn = findVoice(voiceId);
    if (builtIn) return of(builtIn);
    if (/^[0-9a-f-]{36}$/i.test(voiceId)) {
      const [clone] = await this.db
        .select()
        .from(customVoices)
        .where(and(eq(customVoices.id, voiceId), eq(customVoices.orgId, this.orgId), eq(customVoices.status, 'ready')));
      if (clone) {
        // A custom clone is approximated by the built-in voice of its language and gender.
        const lang = (clone.locale[0] ?? 'en-US').toLowerCase();
        const match = loadCatalogData().voices.find((v) => v.locale.some((l) => l.toLowerCase() === lang) && v.gender === clone.gender);
        return {
          espeak: match?.espeak_voice ?? `${lang.split('-')[0]}${clone.gender === 'male' ? '+m3' : '+f3'}`,
          catalogVoice: { id: clone.id, gender: clone.gender ?? undefined, language: lang.split('-')[0] },
        };
      }
    }
    throw new ApiError('not_found', `Voice ${voiceId} is not a voice of this workspace (see GET /assets voices)`, {
      resource: 'voice',
      field,
      errors: [{ field, message: 'is not a built-in voice or a ready custom voice of this workspace' }],
    });
  }

  /** A built-in sound effect as workspace media (one row per workspace, sharing the stored file). */
  async soundEffect(sfxId: string, field: string): Promise<MediaInfo> {
    const def = SOUND_EFFECTS_BY_ID.get(sfxId);
    if (!def) {
      throw new ApiError('not_found', `Sound effect ${sfxId} is not in the built-in library (see the list_editor_sound_effects tool)`, {
        resource: 'sound_effect',
        field,
        errors: [{ field, message: 'is not a built-in sound effect id' }],
      });
    }
    const storageKey = await this.once(`sfx-file:${sfxId}`, () => ensureSoundEffect(this.ctx.storage, sfxId));
    for (const row of this.created.values()) if (row.storageKey === storageKey) return this.adopt(row);
    const [existing] = await this.db
      .select()
      .from(media)
      .where(and(eq(media.orgId, this.orgId), eq(media.storageKey, storageKey)))
      .limit(1);
    if (existing) return mediaInfo(existing);
    const size = await this.ctx.storage.size(storageKey);
    return this.adopt({
      id: randomUUID(),
      orgId: this.orgId,
      kind: 'audio',
      status: 'completed',
      source: 'sound_effect',
      title: def.name,
      filename: `${def.id}.wav`,
      contentType: 'audio/wav',
      sizeBytes: size,
      storageKey: soundEffectKey(def.id),
      width: null,
      height: null,
      durationSeconds: def.duration_seconds,
      hasAudio: true,
      indexedText: [def.category, ...def.tags].join(' '),
    });
  }

  /** A file from a direct HTTPS URL (guarded client), stored as library media. */
  async fromUrl(url: string, field: string, mediaType: EditorMediaType | undefined, filename?: string): Promise<MediaInfo> {
    const row = await this.once(`url:${url}:${mediaType}`, async () => {
      const got = await fetchMedia(this.ctx, url, field, this.signal);
      const received = await receiveBuffer(this.ctx, got);
      const { row } = await ingest(this.ctx, received, {
        orgId: this.orgId,
        filename: filename ?? urlFilename(url),
        mediaType,
        source: 'url',
        field,
      });
      return row;
    });
    return this.adopt(row);
  }

  /** Word timings of a media file (ms from its start): exact for our voiceovers, else transcribed. */
  async words(m: MediaInfo, language: string | undefined, field: string): Promise<TimedWord[]> {
    if (this.transcripts.has(m.id) && this.transcripts.get(m.id)) return this.transcripts.get(m.id)!;
    const [row] = await this.db.select().from(mediaTranscripts).where(eq(mediaTranscripts.mediaId, m.id));
    if (row) {
      const words = row.words as TimedWord[];
      this.transcripts.set(m.id, words);
      return words;
    }
    const p = engineFor('transcribe', this.ctx);
    if (!p) {
      throw new ApiError(
        'bad_request',
        `Invalid request: ${m.filename ?? m.id} is not a voiceover made by add_voiceover, so its captions need a transcription provider, and none is configured on this server (TRANSCRIPTION_PROVIDER_URL is unset)`,
        {
          provider: 'transcription',
          field,
          errors: [
            {
              field,
              message:
                'needs a transcription provider (speech-to-text), and none is configured; only voiceovers made by add_voiceover can be captioned',
            },
          ],
        },
      );
    }
    return this.once(`transcribe:${m.id}:${language ?? ''}`, async () => {
      const base = await tempPath(this.ctx, 'transcribe');
      const file = `${base}.wav`;
      const source = `${base}-source${path.extname(m.storageKey)}`;
      try {
        // A copy of the stored media, read with the demuxer of its sniffed type.
        await this.ctx.storage.copyToFile(m.storageKey, source);
        await runFfmpeg(
          [...inputArgs({ path: source, type: m.contentType }), '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', file],
          { cwd: path.dirname(source) },
        );
        const t = await p.transcribe(file, { contentType: 'audio/wav', language }).catch((err: unknown) => {
          if (err instanceof TranscriptionFailed) {
            throw new ApiError(
              err.retryable ? 'server_error' : 'bad_request',
              `Transcription of ${m.filename ?? m.id} failed: ${err.message}`,
              {
                provider: p.name,
                field,
                ...(err.retryable ? {} : { errors: [{ field, message: `could not be transcribed: ${err.message}` }] }),
              },
            );
          }
          throw err;
        });
        this.transcripts.set(m.id, t.words);
        this.newTranscripts.set(m.id, { source: 'transcription', language: t.language ?? language ?? null, text: t.text, words: t.words });
        return t.words;
      } finally {
        await fs.rm(file, { force: true });
        await fs.rm(source, { force: true });
      }
    });
  }

  /** Inserts the media (and transcripts) this run used; returns the storage keys it did not use. */
  async commit(tx: Tx): Promise<void> {
    const rows = [...this.created.values()].filter((r) => this.used.has(r.id));
    if (rows.length) await tx.insert(media).values(rows);
    const transcripts = [...this.newTranscripts.entries()].filter(([id]) => rows.some((r) => r.id === id) || this.cache.get(id));
    if (transcripts.length) {
      await tx
        .insert(mediaTranscripts)
        .values(
          transcripts.map(([mediaId, t]) => ({
            mediaId,
            orgId: this.orgId,
            source: t.source,
            language: t.language,
            text: t.text,
            words: t.words,
          })),
        )
        .onConflictDoNothing();
    }
  }

  /** Storage keys of files this request stored that no committed row refers to. */
  orphanKeys(committed: boolean): string[] {
    return [...this.created.values()]
      .filter((r) => (!committed || !this.used.has(r.id)) && r.source !== 'sound_effect')
      .map((r) => r.storageKey);
  }

  async discard(committed: boolean): Promise<void> {
    await discardStored(this.ctx, this.orphanKeys(committed));
  }
}

/**
 * A file from a direct HTTPS URL, while the client waits: bounded by URL_IMPORT_MAX_BYTES and the
 * fetcher's deadline (OUTBOUND_FETCH_TIMEOUT_MS), cancelled when `signal` aborts (the client hung
 * up). Any refusal is a 400 naming `field`, thrown before anything is stored.
 */
export async function fetchMedia(ctx: AppContext, url: string, field: string, signal?: AbortSignal): Promise<Buffer> {
  const problem = ctx.fetcher.precheck(url, { httpsOnly: true });
  if (problem) throw badRequest(`Invalid request: ${field} ${problem}`, [{ field, message: problem }]);
  return fetchMediaBytes(ctx.fetcher, url, {
    httpsOnly: true,
    maxBytes: URL_IMPORT_MAX_BYTES,
    signal,
    refuse: (r) => badRequest(`Invalid request: ${field} ${r.message}`, [{ field, message: r.message }], { reason: r.code }),
  });
}

export function urlFilename(url: string): string {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return last.replace(/[\u0000-\u001F\u007F/\\]/g, '_').slice(0, 255) || 'download';
  } catch {
    return 'download';
  }
}
