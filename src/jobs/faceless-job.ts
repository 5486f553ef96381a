// The faceless video job: script → scenes → voiceover → captions → render, each stage reported
// as stage + percent of the whole, and each stage's output stored on the row (artifacts) before
// the next starts, so a re-run after a crash resumes after the last finished stage. Stored
// objects and media rows have ids derived from the video id, so a stage that ran twice writes the
// same rows and keys again (no orphans). The render is the editor's timeline renderer on the
// timeline that becomes the video's editor project. A failure that no retry follows marks the
// video `error` and refunds it once (defineJob's onTerminalFailure).
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { media, mediaTranscripts } from '../db/schema/index.ts';
import { FfmpegError, inputArgs, probe, runFfmpeg } from '../media/ffmpeg.ts';
import { fetchCheckedMedia } from '../media/fetch-media.ts';
import { renderMusicBed } from '../media/music-bed.ts';
import { engineFor } from '../engines/index.ts';
import type { RenderMedia } from '../engines/render/types.ts';
import { SpeechFailed, type SpokenWord } from '../engines/speech/types.ts';
import { jobFolder } from '../media/work-folder.ts';
import { WriterFailed } from '../engines/write/types.ts';
import { facelessMusicKey, facelessSceneKey, facelessVideoKey, facelessVoiceoverKey } from '../storage/keys.ts';
import type { CaptionEntry } from '../services/editor/model.ts';
import {
  completeFaceless,
  facelessProgress,
  failFaceless,
  saveArtifacts,
  startFacelessAttempt,
  type FacelessRow,
  type FacelessStage,
} from '../services/faceless/faceless.ts';
import { captionCues, captionTop, facelessTimeline, fitSpeed, partsFromScript, partStarts, type NarrationPart } from '../services/faceless/plan.ts';
import { WORDS_PER_SECOND } from '../services/faceless/requests.ts';
import { defineJob, JobFailure, type FailureDetail, type JobTools, type RunningJob } from './define-job.ts';
import { QUEUES } from './queue.ts';

export interface FacelessJobData {
  videoId: number;
}

/** What each stage stored (faceless_videos.artifacts). */
export interface FacelessArtifacts {
  script?: { parts: NarrationPart[]; writer: string };
  scenes?: { mediaIds: string[] };
  voiceover?: { mediaId: string; durationMs: number; speed: number; words: SpokenWord[] };
  captions?: { cues: CaptionEntry[]; sceneStartsMs: number[]; music?: { mediaId: string; durationMs: number } };
  /** Seconds each stage took on the attempt that finished it. */
  timings?: Partial<Record<FacelessStage, number>>;
}

/** Share of the whole progress each stage ends at. */
const STAGE_END: Record<FacelessStage, number> = { script: 5, scenes: 25, voiceover: 40, captions: 45, render: 99 };
const STAGE_START: Record<FacelessStage, number> = { script: 0, scenes: 5, voiceover: 25, captions: 40, render: 45 };
const FPS = 30;
const REFERENCE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** A UUID derived from a name (stable ids for rows a re-run writes again). */
function stableUuid(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

class Stages {
  readonly timings: Partial<Record<FacelessStage, number>>;
  private readonly ctx: AppContext;
  private readonly f: FacelessRow;
  private readonly tools: JobTools;
  constructor(ctx: AppContext, f: FacelessRow, tools: JobTools, timings: Partial<Record<FacelessStage, number>> | undefined) {
    this.ctx = ctx;
    this.f = f;
    this.tools = tools;
    this.timings = { ...(timings ?? {}) };
  }
  /** Reports `fraction` (0–1) of `stage` as a percent of the whole. */
  report(stage: FacelessStage, fraction: number) {
    this.tools.progress(stage, STAGE_START[stage] + (STAGE_END[stage] - STAGE_START[stage]) * Math.max(0, Math.min(1, fraction)));
  }
  /** Runs a stage unless its output is stored; stores what it returns. */
  async run<K extends keyof FacelessArtifacts>(
    stage: FacelessStage,
    key: K,
    stored: FacelessArtifacts[K] | undefined,
    work: () => Promise<NonNullable<FacelessArtifacts[K]>>,
  ): Promise<NonNullable<FacelessArtifacts[K]>> {
    if (stored) return stored;
    // The stage is visible at once (a new stage is written immediately).
    await facelessProgress(this.ctx, this.f.videoId, stage, STAGE_START[stage]);
    const t0 = performance.now();
    const out = await work();
    this.report(stage, 1);
    this.timings[stage] = Math.round(performance.now() - t0) / 1000;
    await saveArtifacts(this.ctx, this.f.videoId, { [key]: out, timings: this.timings });
    return out;
  }
}

async function fetchReference(ctx: AppContext, url: string, field: string, signal: AbortSignal): Promise<Buffer> {
  const { bytes } = await fetchCheckedMedia(ctx.fetcher, url, {
    maxBytes: 20 * 1024 * 1024,
    timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
    signal,
    types: REFERENCE_TYPES,
    refuse: (r) =>
      r.reason === 'fetch'
        ? new JobFailure({ code: 'input_unavailable', message: `${field} ${url} ${r.error.message}`, retryable: r.error.retryable, context: { field, url, reason: r.error.reason } }, r.error.retryable)
        : new JobFailure({ code: 'input_unavailable', message: `${field} ${url} is ${('mime' in r && r.mime) || 'not a recognised image'}; PNG, JPEG or WebP only`, retryable: false, context: { field, url } }),
  });
  return bytes;
}

/** Runs `fn` over `items` with at most `limit` at once (scenes render two at a time). */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

async function runFaceless(ctx: AppContext, job: RunningJob<FacelessJobData>, tools: JobTools): Promise<void> {
  const f = await startFacelessAttempt(ctx, job.data.videoId);
  if (!f) return; // completed or failed already: a repeated delivery has nothing to do
  tools.annotate({ credits_refunded: f.credits });
  const spec = f.spec;
  const art = f.artifacts as FacelessArtifacts;
  const stages = new Stages(ctx, f, tools, art.timings);
  const workDir = await jobFolder(ctx.config.dataDir, `faceless-${f.videoId}`);
  const targetMs = spec.durationSeconds * 1000;
  try {
    // ------------------------------------------------------------------ script
    const script = await stages.run('script', 'script', art.script, async () => {
      // A given script is read as written; a prompt goes to the copy writer, sized to a little
      // less than the duration (the last scene holds after the call to action).
      if (spec.script) return { parts: partsFromScript(spec.script), writer: 'given' };
      const writer = engineFor('write', ctx);
      const written = await writer
        .writeScript(
          {
            prompt: spec.prompt ?? '',
            title: spec.title,
            language: spec.locale,
            targetSeconds: spec.durationSeconds * 0.9,
            wordsPerSecond: WORDS_PER_SECOND,
            styles: [spec.imageStyle, ...spec.aiStyles, ...spec.fluxStyles],
          },
          tools.signal,
        )
        .catch((err: unknown) => {
          if (err instanceof WriterFailed) {
            throw new JobFailure(
              { code: err.retryable ? 'provider_unavailable' : 'provider_error', message: `The script writer failed: ${err.message}`, retryable: err.retryable, context: err.status ? { status: err.status } : {} },
              err.retryable,
            );
          }
          throw err;
        });
      const texts = [written.hook, ...written.beats, written.callToAction];
      const parts: NarrationPart[] = texts
        .map((text, i) => ({ role: i === 0 ? ('hook' as const) : i === texts.length - 1 ? ('cta' as const) : ('beat' as const), text: text.trim(), scene: written.scenes[i] ?? text }))
        .filter((p) => /[\p{L}\p{N}]/u.test(p.text));
      return { parts, writer: writer.name };
    });

    // ------------------------------------------------------------------ scenes
    const scenes = await stages.run('scenes', 'scenes', art.scenes, async () => {
      const refs = new Map<number, Buffer>();
      const refFor = async (i: number): Promise<Buffer | undefined> => {
        if (!spec.referenceUrls.length) return undefined;
        const k = i % spec.referenceUrls.length;
        if (!refs.has(k)) refs.set(k, await fetchReference(ctx, spec.referenceUrls[k], `reference_image_urls[${k}]`, tools.signal));
        return refs.get(k);
      };
      // The brand kit's logo is decoration: a logo that cannot be fetched is left out (logged).
      const logo = spec.brandKit?.logoKey
        ? await ctx.storage.readBuffer(spec.brandKit.logoKey).catch((err: unknown) => {
            ctx.log.warn({ video: f.videoId, err: String(err) }, 'the brand kit logo could not be read; scenes are drawn without it');
            return undefined;
          })
        : spec.brandKit?.logoUrl
        ? await fetchReference(ctx, spec.brandKit.logoUrl, 'brand_kit.logo_url', tools.signal).catch((err: unknown) => {
            ctx.log.warn({ video: f.videoId, err: String(err) }, 'the brand kit logo could not be fetched; scenes are drawn without it');
            return undefined;
          })
        : undefined;
      // Every reference is fetched (and checked) before any scene is drawn.
      for (let k = 0; k < Math.min(spec.referenceUrls.length, script.parts.length); k++) await refFor(k);
      let done = 0;
      const mediaIds = await mapLimit(script.parts, 2, async (_part, i) => {
        const jpeg = await engineFor('scene', ctx).renderScene({
          width: spec.width,
          height: spec.height,
          index: i,
          count: script.parts.length,
          seed: `${f.videoId}`,
          style: spec.imageStyle,
          aiStyles: spec.aiStyles,
          fluxStyles: spec.fluxStyles,
          brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors, logo } : undefined,
          reference: await refFor(i),
          captionTop: captionTop(spec.width, spec.height),
        });
        const id = stableUuid(`faceless:${f.videoId}:scene:${i}`);
        const key = facelessSceneKey(f.orgId, f.videoId, i);
        const stored = await ctx.storage.put(key, jpeg, 'image/jpeg');
        await ctx.db
          .insert(media)
          .values({
            id,
            orgId: f.orgId,
            kind: 'image',
            status: 'completed',
            source: 'generation',
            title: `${spec.title} — scene ${i + 1}`,
            filename: `scene-${i + 1}.jpg`,
            contentType: 'image/jpeg',
            sizeBytes: stored.bytes,
            storageKey: key,
            width: spec.width,
            height: spec.height,
            indexedText: script.parts[i].scene,
          })
          .onConflictDoNothing();
        stages.report('scenes', ++done / script.parts.length);
        return id;
      });
      return { mediaIds };
    });

    // ------------------------------------------------------------------ voiceover
    const voiceover = await stages.run('voiceover', 'voiceover', art.voiceover, async () => {
      const text = script.parts.map((p) => p.text).join(' ');
      const raw = path.join(workDir, 'voice-raw.wav');
      // The speaking rate from the word count, then one correction from the measured length as a
      // tempo change (atempo keeps the pitch; the word timings scale exactly): one synthesis.
      const words = text.split(/\s+/).length;
      const speed = fitSpeed((words / WORDS_PER_SECOND) * 1000, 1, targetMs);
      const speech = await engineFor('speech', ctx).synthesize(text, raw, { voice: spec.voice.espeak, speed, timeoutMs: 120_000 }).catch((err: unknown) => {
        if (err instanceof SpeechFailed) throw new JobFailure({ code: 'render_failed', message: `Speech synthesis failed: ${err.message}`, retryable: true, context: {} }, true);
        throw err;
      });
      stages.report('voiceover', 0.6);
      const tempo = Math.max(0.75, Math.min(1.5, fitSpeed(speech.durationMs, speed, targetMs) / speed));
      const scaled = Math.abs(tempo - 1) > 0.02 ? tempo : 1;
      // 48 kHz stereo, the mixer's format.
      const out = path.join(workDir, 'voice.wav');
      await runFfmpeg([...inputArgs({ path: raw, type: 'audio/wav' }), ...(scaled !== 1 ? ['-af', `atempo=${scaled.toFixed(4)}`] : []), '-ar', '48000', '-ac', '2', '-c:a', 'pcm_s16le', out], {
        cwd: workDir,
        signal: tools.signal,
      });
      const timed = speech.words.map((w) => ({ text: w.text, startMs: Math.round(w.startMs / scaled), endMs: Math.round(w.endMs / scaled) }));
      const durationMs = Math.round(speech.durationMs / scaled);
      const id = stableUuid(`faceless:${f.videoId}:voiceover`);
      const key = facelessVoiceoverKey(f.orgId, f.videoId);
      const stored = await ctx.storage.put(key, { file: out }, 'audio/wav');
      await ctx.db.transaction(async (tx) => {
        await tx
          .insert(media)
          .values({
            id,
            orgId: f.orgId,
            kind: 'voice',
            status: 'completed',
            source: 'voiceover',
            title: `Voiceover: ${spec.title}`.slice(0, 200),
            filename: 'voiceover.wav',
            contentType: 'audio/wav',
            sizeBytes: stored.bytes,
            storageKey: key,
            durationSeconds: durationMs / 1000,
            hasAudio: true,
            indexedText: text,
          })
          .onConflictDoNothing();
        await tx
          .insert(mediaTranscripts)
          .values({ mediaId: id, orgId: f.orgId, source: 'synthesis', language: spec.language, text, words: timed })
          .onConflictDoNothing();
      });
      return { mediaId: id, durationMs, speed: Math.round(speed * scaled * 1000) / 1000, words: timed };
    });

    // ------------------------------------------------------------------ captions
    // The video lasts the requested duration, or the narration plus a breath if that is longer.
    const durationSeconds = Math.max(spec.durationSeconds, Math.ceil((voiceover.durationMs + 300) / 100) / 10);
    const captions = await stages.run('captions', 'captions', art.captions, async () => {
      // The music bed, ducked under the words, is timed here too.
      const bed = path.join(workDir, 'music.wav');
      await renderMusicBed(bed, { seconds: durationSeconds, style: spec.imageStyle, words: voiceover.words, cwd: workDir, signal: tools.signal });
      const id = stableUuid(`faceless:${f.videoId}:music`);
      const key = facelessMusicKey(f.orgId, f.videoId);
      const stored = await ctx.storage.put(key, { file: bed }, 'audio/wav');
      await ctx.db
        .insert(media)
        .values({
          id,
          orgId: f.orgId,
          kind: 'audio',
          status: 'completed',
          source: 'generation',
          title: `Music bed: ${spec.title}`.slice(0, 200),
          filename: 'music.wav',
          contentType: 'audio/wav',
          sizeBytes: stored.bytes,
          storageKey: key,
          durationSeconds,
          hasAudio: true,
        })
        .onConflictDoNothing();
      return {
        cues: captionCues(script.parts, voiceover.words),
        sceneStartsMs: partStarts(script.parts, voiceover.words),
        music: { mediaId: id, durationMs: Math.round(durationSeconds * 1000) },
      };
    });

    // ------------------------------------------------------------------ render
    await facelessProgress(ctx, f.videoId, 'render', STAGE_START.render);
    const t0 = performance.now();
    const timeline = facelessTimeline({
      width: spec.width,
      height: spec.height,
      durationSeconds,
      sceneMediaIds: scenes.mediaIds,
      sceneStartsMs: captions.sceneStartsMs,
      voice: { mediaId: voiceover.mediaId, durationMs: voiceover.durationMs },
      cues: captions.cues,
      music: captions.music,
    });
    const files = new Map<string, RenderMedia>();
    for (const [i, id] of scenes.mediaIds.entries()) {
      const file = path.join(workDir, `scene-${i + 1}.jpg`);
      await ctx.storage.copyToFile(facelessSceneKey(f.orgId, f.videoId, i), file);
      files.set(id, { path: file, type: 'image/jpeg', kind: 'image', width: spec.width, height: spec.height, durationSeconds: null, hasAudio: null });
    }
    const voiceFile = path.join(workDir, 'voiceover.wav');
    await ctx.storage.copyToFile(facelessVoiceoverKey(f.orgId, f.videoId), voiceFile);
    files.set(voiceover.mediaId, { path: voiceFile, type: 'audio/wav', kind: 'voice', width: null, height: null, durationSeconds: voiceover.durationMs / 1000, hasAudio: true });
    if (captions.music) {
      const musicFile = path.join(workDir, 'music.wav');
      await ctx.storage.copyToFile(facelessMusicKey(f.orgId, f.videoId), musicFile);
      files.set(captions.music.mediaId, { path: musicFile, type: 'audio/wav', kind: 'audio', width: null, height: null, durationSeconds: captions.music.durationMs / 1000, hasAudio: true });
    }
    const out = path.join(workDir, 'video.mp4');
    await engineFor('render', ctx).render({ width: spec.width, height: spec.height, fps: FPS, tracks: timeline.tracks, items: timeline.items, media: files }, workDir, out, {
      quality: 'standard',
      signal: tools.signal,
      onProgress: (fraction) => stages.report('render', fraction),
    });
    const probed = await probe({ path: out, type: 'video/mp4' }, { signal: tools.signal });
    const key = facelessVideoKey(f.orgId, f.videoId);
    const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
    stages.timings.render = Math.round(performance.now() - t0) / 1000;
    await saveArtifacts(ctx, f.videoId, { timings: stages.timings });
    await completeFaceless(ctx, f, {
      storageKey: key,
      bytes: stored.bytes,
      width: spec.width,
      height: spec.height,
      durationSeconds: probed.duration_seconds ?? durationSeconds,
      hasAudio: true,
      fps: FPS,
      timeline,
    });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  const message = err instanceof FfmpegError ? err.message.split('\n').slice(-3).join(' ') : err instanceof Error ? err.message : String(err);
  return { detail: { code: 'render_failed', message: `The faceless video failed: ${message.slice(0, 1500)}`, retryable: true, context: {} }, retry: true };
}

export const facelessJob = defineJob<FacelessJobData>({
  name: QUEUES.faceless,
  concurrency: (config) => config.facelessConcurrency,
  retry: (config) => ({ limit: config.generationRetryLimit, delay: 2, backoff: true }),
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 3600,
  deadLetter: { message: 'The faceless video was abandoned by its workers too many times' },
  run: runFaceless,
  describeFailure,
  progress: (ctx, data, percent, stage) => facelessProgress(ctx, data.videoId, stage, percent),
  onTerminalFailure: (ctx, data, detail) => failFaceless(ctx, data.videoId, detail),
});
