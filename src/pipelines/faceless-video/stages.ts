// The faceless video job: script → scenes (drawn, stock photos or an image model's pictures:
// FACELESS_SCENE_SOURCE) → voiceover → captions → render, run by the kernel's
// stage runner (src/kernel/stages.ts): each stage reported as stage + percent of the whole, and
// each stage's output stored on the row (artifacts) before the next starts, so a re-run after a
// crash resumes at the first unfinished stage. Stored
// objects and media rows have ids derived from the video id, so a stage that ran twice writes the
// same rows and keys again (no orphans). The render is the editor's timeline renderer on the
// timeline that becomes the video's editor project. A failure that no retry follows marks the
// video `error` and refunds it once (defineJob's onTerminalFailure).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { and, eq, inArray } from 'drizzle-orm';
import { media, mediaTranscripts } from '../../db/schema/index.ts';
import { FfmpegError, inputArgs, probe, runFfmpeg } from '../../media/ffmpeg.ts';
import { fetchCheckedMedia } from '../../media/fetch-media.ts';
import { storeMusicBed } from '../music-bed.ts';
import { engineFor } from '../../engines/index.ts';
import { ProviderError, type ProviderJobRef } from '../../engines/generation.ts';
import { choosePicture, makePicture } from '../../engines/image/model-picture.ts';
import { itemJob, itemState, type ItemState } from '../../kernel/item-state.ts';
import type { RenderMedia } from '../../engines/render/types.ts';
import { retimeSpeech } from '../../engines/speech/retime.ts';
import { timedSpeech } from '../../engines/speech/timings.ts';
import { SpeechFailed, type SpokenWord, type TimingSource } from '../../engines/speech/types.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { WriterFailed } from '../../engines/write/types.ts';
import {
  facelessClipKey,
  facelessMusicKey,
  facelessOverlayKey,
  facelessSceneKey,
  facelessVideoKey,
  facelessVoiceoverKey,
} from '../../storage/keys.ts';
import { CLIP_SCENE_SOURCES } from '../../config.ts';
import type { CaptionEntry } from '../../services/editor/model.ts';
import {
  completeFaceless,
  facelessResource,
  mapLimit,
  stableUuid,
  startFacelessAttempt,
  type FacelessRow,
  type FacelessStage,
} from './rows.ts';
import {
  captionCues,
  captionTop,
  facelessTimeline,
  fitSpeed,
  onScreenTitle,
  partsFromScript,
  partStarts,
  scenePrompt,
  scriptSeconds,
  type NarrationPart,
} from './plan.ts';
import { addSceneTransitions } from '../../engines/render/transitions.ts';
import { narrationSpans, pannedBox, timelineManifest } from '../../engines/render/manifest.ts';
import { overlayTexts, sceneTexts } from '../../engines/local/scene.ts';
import type { SceneText } from '../../engines/image/types.ts';
import type { MediaManifest, PlacedText } from '../../media/quality/manifest.ts';
import type { Item } from '../../services/editor/model.ts';
import { makeClips, overlayIdOf, overlayInput, storeOverlay, type ClipsOutput } from './clips.ts';
import { WORDS_PER_SECOND } from './plan.ts';
import type { FacelessSpec } from './request.ts';
import { findStockPhoto, type SceneSource } from './stock-scenes.ts';
import type { StockEngine } from '../../engines/stock/types.ts';
import { findAiModel, findVoice } from '../../services/catalog/catalog-data.ts';
import { discardIfCanceled, runCancelable } from '../../kernel/cancelable.ts';
import { runStages, type StageContext, type Stages } from '../../kernel/stages.ts';
import { JobFailure, type FailureDetail, type JobTools, type RunningJob } from '../../jobs/define-job.ts';

export interface FacelessJobData {
  videoId: number;
}

/** What each stage stores (faceless_videos.artifacts), under its name. */
export interface FacelessOutputs {
  script: { parts: NarrationPart[]; writer: string };
  /**
   * sources: where each scene's picture came from, with a stock photo's attribution or the image
   * model's record (FACELESS_SCENE_SOURCE stock_photo, image_model, stock_video or video_model).
   */
  /**
   * overlayId: the caption scrim and brand laid over every scene, and brandTexts: the texts on it;
   * texts: the texts each scene's still has, as the scene engine drew them (null where not known:
   * a scene drawn by an attempt that did not keep them).
   */
  scenes: { mediaIds: string[]; sources?: SceneSource[]; overlayId?: string; brandTexts?: SceneText[]; texts?: (SceneText[] | null)[] };
  /**
   * `engine` spoke it (its `model`, null for the local one), and `timings` says where the word
   * timings came from (engine, transcribed or estimated); absent on videos voiced before they were recorded.
   */
  voiceover: {
    mediaId: string;
    durationMs: number;
    speed: number;
    words: SpokenWord[];
    engine?: string;
    model?: string | null;
    timings?: TimingSource;
  };
  captions: { cues: CaptionEntry[]; sceneStartsMs: number[]; music?: { mediaId: string; durationMs: number } };
  /** Each scene's clip and the overlay (FACELESS_SCENE_SOURCE stock_video or video_model only; clips.ts). */
  clips?: ClipsOutput;
  /** The stored MP4 the video completes with, and what it shows (for the media quality checker). */
  render: { storageKey: string; bytes: number; durationSeconds: number; manifest?: MediaManifest };
}

/** faceless_videos.artifacts: the finished stages' outputs, and the seconds each stage took on the attempt that finished it. */
export type FacelessArtifacts = Partial<FacelessOutputs> & { timings?: Partial<Record<FacelessStage, number>> };

const FPS = 30;
const REFERENCE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

async function fetchReference(ctx: AppContext, url: string, field: string, signal: AbortSignal): Promise<Buffer> {
  const { bytes } = await fetchCheckedMedia(ctx.fetcher, url, {
    maxBytes: 20 * 1024 * 1024,
    timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
    signal,
    types: REFERENCE_TYPES,
    refuse: (r) =>
      r.reason === 'fetch'
        ? new JobFailure(
            {
              code: 'input_unavailable',
              message: `${field} ${url} ${r.error.message}`,
              retryable: r.error.retryable,
              context: { field, url, reason: r.error.reason },
            },
            r.error.retryable,
          )
        : new JobFailure({
            code: 'input_unavailable',
            message: `${field} ${url} is ${('mime' in r && r.mime) || 'not a recognised image'}; PNG, JPEG or WebP only`,
            retryable: false,
            context: { field, url },
          }),
  });
  return bytes;
}

/** What the stages of one attempt work with. */
interface Attempt {
  ctx: AppContext;
  f: FacelessRow;
  spec: FacelessSpec;
  workDir: string;
  /** No attempt follows this one (a provider job it leaves unfinished is canceled). */
  lastAttempt: boolean;
}

type Stage = StageContext<FacelessRow>;

/** The video lasts the requested duration, or the narration plus a breath if that is longer. */
const videoSeconds = (spec: FacelessSpec, voiceover: FacelessOutputs['voiceover']) =>
  Math.max(spec.durationSeconds, Math.ceil((voiceover.durationMs + 300) / 100) / 10);

/**
 * The stages in order, each spanning `weight` points of the whole progress: script 0–5, scenes
 * 5–25, voiceover 25–40, captions 40–45, render 45–99; with clips (FACELESS_SCENE_SOURCE
 * stock_video or video_model) scenes 5–20, voiceover 20–30, captions 30–35, clips 35–60, render 60–99.
 */
function facelessStages(a: Attempt): Stages<FacelessRow, FacelessOutputs> {
  const clips = CLIP_SCENE_SOURCES.has(a.ctx.config.facelessSceneSource);
  return [
    { name: 'script', weight: 5, run: (s) => writeScript(a, s) },
    { name: 'scenes', weight: clips ? 15 : 20, run: (s, done) => drawScenes(a, s, done.script) },
    { name: 'voiceover', weight: clips ? 10 : 15, run: (s, done) => speak(a, s, done.script) },
    { name: 'captions', weight: 5, run: (s, done) => timeCaptions(a, s, done.script, done.voiceover) },
    ...(clips ? [{ name: 'clips' as const, weight: 25, run: (s: Stage, done: FacelessOutputs) => clipScenes(a, s, done) }] : []),
    { name: 'render', weight: clips ? 39 : 54, run: (s, done) => render(a, s, done) },
  ];
}

/** The clips stage (clips.ts) over the scenes, timed by the captions stage. */
function clipScenes(a: Attempt, s: Stage, done: FacelessOutputs): Promise<ClipsOutput> {
  return makeClips(
    {
      ...a,
      logo: (signal) => brandLogo(a, signal),
      final: (err) => !describeFailure(err).retry,
    },
    s,
    {
      texts: done.script.parts.map((p) => p.scene),
      stillIds: done.scenes.mediaIds,
      startsMs: done.captions.sceneStartsMs,
      durationMs: videoSeconds(a.spec, done.voiceover) * 1000,
    },
  );
}

export async function runFaceless(ctx: AppContext, job: RunningJob<FacelessJobData>, tools: JobTools): Promise<void> {
  const f = await startFacelessAttempt(ctx, job.data.videoId);
  if (!f) return; // completed or failed already: a repeated delivery has nothing to do
  tools.annotate({ credits_refunded: f.credits });
  const spec = f.spec;
  const workDir = await jobFolder(ctx.config.dataDir, `faceless-${f.videoId}`);
  try {
    const stages = facelessStages({ ctx, f, spec, workDir, lastAttempt: job.lastAttempt });
    // Canceled while it runs: noticed within a second, its engines stopped (src/kernel/cancelable.ts).
    await runCancelable(ctx, facelessResource, f.videoId, tools, async (tools) => {
      const { outputs } = await runStages(ctx, facelessResource, f, stages, tools);
      const done = await completeFaceless(ctx, f, {
        storageKey: outputs.render.storageKey,
        bytes: outputs.render.bytes,
        width: spec.width,
        height: spec.height,
        durationSeconds: outputs.render.durationSeconds,
        hasAudio: true,
        fps: FPS,
        timeline: timelineOf(spec, outputs),
      });
      if (!done) await discardIfCanceled(ctx, facelessResource, f.videoId, [outputs.render.storageKey]);
    });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** A given script is read as written; a prompt goes to the copy writer, sized to a little less than the duration (the last scene holds after the call to action). */
async function writeScript({ ctx, spec }: Attempt, s: Stage): Promise<FacelessOutputs['script']> {
  if (spec.script) return { parts: partsFromScript(spec.script), writer: 'given' };
  const writer = engineFor('write', ctx);
  s.madeBy('write');
  const written = await writer
    .writeScript(
      {
        prompt: spec.prompt ?? '',
        title: spec.title,
        language: spec.locale,
        // Sized to end where the speech-rate fit aims (narrationEnd): sped up a little is fine, slowed down drags.
        targetSeconds: scriptSeconds(spec.durationSeconds),
        wordsPerSecond: WORDS_PER_SECOND,
        styles: [spec.imageStyle, ...spec.aiStyles, ...spec.fluxStyles],
      },
      s.signal,
    )
    .catch((err: unknown) => {
      if (err instanceof WriterFailed) {
        throw new JobFailure(
          {
            code: err.retryable ? 'provider_unavailable' : 'provider_error',
            message: `The script writer failed: ${err.message}`,
            retryable: err.retryable,
            context: err.status ? { status: err.status } : {},
          },
          err.retryable,
        );
      }
      throw err;
    });
  const texts = [written.hook, ...written.beats, written.callToAction];
  const parts: NarrationPart[] = texts
    .map((text, i) => ({
      role: i === 0 ? ('hook' as const) : i === texts.length - 1 ? ('cta' as const) : ('beat' as const),
      text: text.trim(),
      scene: written.scenes[i] ?? text,
      ...(written.titles?.[i] ? { title: written.titles[i] } : {}),
    }))
    .filter((p) => /[\p{L}\p{N}]/u.test(p.text));
  return { parts, writer: writer.name };
}

/** The brand kit's logo is decoration: a logo that cannot be read or fetched is left out (logged). */
async function brandLogo({ ctx, f, spec }: Attempt, signal: AbortSignal): Promise<Buffer | undefined> {
  if (spec.brandKit?.logoKey) {
    return ctx.storage.readBuffer(spec.brandKit.logoKey).catch((err: unknown) => {
      ctx.log.warn({ video: f.videoId, err: String(err) }, 'the brand kit logo could not be read; scenes are drawn without it');
      return undefined;
    });
  }
  if (!spec.brandKit?.logoUrl) return undefined;
  return fetchReference(ctx, spec.brandKit.logoUrl, 'brand_kit.logo_url', signal).catch((err: unknown) => {
    ctx.log.warn({ video: f.videoId, err: String(err) }, 'the brand kit logo could not be fetched; scenes are drawn without it');
    return undefined;
  });
}

/**
 * One scene per narration part, two at a time, each stored as a media row with an id derived from
 * the video's. With FACELESS_SCENE_SOURCE=stock_photo each scene is a stock photo found for its
 * text when there is one (stock-scenes.ts), else drawn; with image_model each is a picture of
 * FACELESS_IMAGE_MODEL made from its description (drawn when no engine here makes the model).
 * Where each came from is recorded per scene in the state (`sceneSources`) before its row is
 * written, so a resumed attempt has the record of the scenes it skips; a model scene's provider
 * job is kept in `sceneJobs` before polling, so a resumed attempt polls it instead of paying again.
 */
async function drawScenes(a: Attempt, s: Stage, script: FacelessOutputs['script']): Promise<FacelessOutputs['scenes']> {
  const { ctx, f, spec } = a;
  const refs = new Map<number, Buffer>();
  const refFor = async (i: number): Promise<Buffer | undefined> => {
    if (!spec.referenceUrls.length) return undefined;
    const k = i % spec.referenceUrls.length;
    if (!refs.has(k)) refs.set(k, await fetchReference(ctx, spec.referenceUrls[k], `reference_image_urls[${k}]`, s.signal));
    return refs.get(k);
  };
  const source = ctx.config.facelessSceneSource;
  // stock_video: a scene without a clip shows a stock photo, so its still is one when found.
  const stock = source === 'stock_photo' || source === 'stock_video' ? engineFor('stock', ctx) : undefined;
  const recorded = source !== 'image';
  s.madeBy('scene');
  if (stock) s.madeBy('stock');
  const sources = itemState<SceneSource>(ctx, facelessResource, f, 'sceneSources');
  const jobs = itemState<ProviderJobRef>(ctx, facelessResource, f, 'sceneJobs');
  const drawnTexts = itemState<SceneText[]>(ctx, facelessResource, f, 'sceneTexts');
  const ids = script.parts.map((_part, i) => stableUuid(`faceless:${f.videoId}:scene:${i}`));
  const overlayId = overlayIdOf(f.videoId);
  // A scene's row is written after its object is stored, so a scene with a row is finished: an
  // attempt resumed after a crash draws only the scenes the earlier one did not.
  const stored = await storedMedia(ctx, f, [...ids, overlayId]);
  // The overlay (caption scrim and brand, fixed over the panning scenes) is stored first; scenes
  // finished before it existed have them drawn in and no overlay.
  const overlayStored = stored.delete(overlayId);
  const overlay = overlayStored || stored.size === 0 ? { overlayId } : {};
  const output = (mediaIds: string[], brandTexts?: SceneText[]): FacelessOutputs['scenes'] => ({
    mediaIds,
    ...(recorded ? { sources: mediaIds.map((_id, i) => sources.get(i) ?? { source: 'drawn' as const }) } : {}),
    ...overlay,
    ...(brandTexts ? { brandTexts } : {}),
    texts: mediaIds.map((_id, i) => drawnTexts.get(i) ?? null),
  });
  if (stored.size === ids.length) return output(ids);
  const logo = await brandLogo(a, s.signal);
  if (overlay.overlayId && !overlayStored) await storeOverlay(a, overlayId, logo);
  const brandTexts = overlay.overlayId ? await overlayTexts(overlayInput(spec, logo)) : undefined;
  // Every reference is fetched (and checked) before any scene is drawn.
  for (let k = 0; k < Math.min(spec.referenceUrls.length, script.parts.length); k++) await refFor(k);
  let drawn = stored.size;
  s.report(drawn / ids.length);
  const mediaIds = await mapLimit(script.parts, 2, async (part, i) => {
    const id = ids[i];
    if (stored.has(id)) return id;
    const { jpeg, texts, source } = await sceneImage(a, s, i, script.parts.length, {
      text: part.scene,
      words: onScreenTitle(part) ?? part.text,
      logo,
      reference: await refFor(i),
      stock,
      jobs,
    });
    const key = facelessSceneKey(f.orgId, f.videoId, i);
    const object = await ctx.storage.put(key, jpeg, 'image/jpeg');
    if (source) await sources.set(i, source);
    await drawnTexts.set(i, texts);
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
        sizeBytes: object.bytes,
        storageKey: key,
        width: spec.width,
        height: spec.height,
        indexedText: part.scene,
      })
      .onConflictDoNothing();
    s.report(++drawn / script.parts.length);
    return id;
  });
  return output(mediaIds, brandTexts);
}

/** Which of the media ids have a row already (a row is written after its object is stored: that media is finished). */
async function storedMedia(ctx: AppContext, f: FacelessRow, ids: string[]): Promise<Set<string>> {
  const rows = await ctx.db
    .select({ id: media.id })
    .from(media)
    .where(and(eq(media.orgId, f.orgId), inArray(media.id, ids)));
  return new Set(rows.map((r) => r.id));
}

/** What a scene's picture is made from: a stock photo, the image model's picture, or nothing (drawn); and its record. */
async function scenePhoto(
  a: Attempt,
  s: Stage,
  i: number,
  opts: { text: string; stock?: StockEngine; jobs: ItemState<ProviderJobRef> },
): Promise<{ photo?: Buffer; source?: SceneSource }> {
  const { ctx, f, spec } = a;
  if (opts.stock) {
    const found = await findStockPhoto(ctx, opts.stock, { text: opts.text, width: spec.width, height: spec.height, signal: s.signal });
    if (found.source.fallback) ctx.log.info({ video: f.videoId, scene: i, ...found.source }, 'no stock photo for the scene; it is drawn');
    return found;
  }
  // video_model: the still the model animates is the image model's picture when one is configured.
  const source = ctx.config.facelessSceneSource;
  const slug = source === 'image_model' || source === 'video_model' ? ctx.config.facelessImageModel : undefined;
  const model = slug ? findAiModel(slug) : undefined;
  if (!slug || !model) return {};
  const chosen = choosePicture(ctx, slug, model, false);
  if ('fallback' in chosen) {
    const { reason, requires } = chosen.fallback;
    ctx.log.info({ video: f.videoId, scene: i, model: slug, reason, requires }, 'no engine makes the image model here; the scene is drawn');
    return { source: { source: 'drawn', fallback: reason, requires } };
  }
  s.madeBy('image', chosen.engine.use);
  const made = await makePicture(
    chosen.engine,
    slug,
    {
      variant: chosen.variant,
      key: `faceless:${f.videoId}:scene:${i}`,
      prompt: scenePrompt(spec, opts.text, 'still'),
      aspectRatio: spec.aspectRatio,
      width: spec.width,
      height: spec.height,
      brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors } : undefined,
      maxInputPixels: ctx.config.mediaMaxPixels,
    },
    itemJob(opts.jobs, i, (err) => a.lastAttempt || !describeFailure(err).retry),
    { workDir: path.join(a.workDir, `scene-model-${i}`), signal: s.signal },
  );
  return { photo: made.bytes, source: { source: 'model', model: made.record } };
}

/** Scene `i`'s JPEG: over a stock photo or the image model's picture when the configuration asks for one and it is found or made, else drawn; and where it came from. */
async function sceneImage(
  a: Attempt,
  s: Stage,
  i: number,
  count: number,
  opts: { text: string; words: string; logo?: Buffer; reference?: Buffer; stock?: StockEngine; jobs: ItemState<ProviderJobRef> },
): Promise<{ jpeg: Buffer; texts: SceneText[]; source?: SceneSource }> {
  const { ctx, f, spec } = a;
  const { photo, source } = await scenePhoto(a, s, i, opts);
  const { jpeg, texts } = await engineFor('scene', ctx).renderScene({
    width: spec.width,
    height: spec.height,
    index: i,
    count,
    seed: `${f.videoId}`,
    text: opts.words,
    style: spec.imageStyle,
    aiStyles: spec.aiStyles,
    fluxStyles: spec.fluxStyles,
    brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors, logo: opts.logo } : undefined,
    reference: opts.reference,
    photo,
    maxInputPixels: ctx.config.mediaMaxPixels,
    captionTop: captionTop(spec.width, spec.height),
    // The scrim and brand are one overlay over the whole video (storeOverlay), not moving with the scene.
    plain: true,
  });
  return { jpeg, texts, source };
}

/** The narration spoken by the speech engine, its words timed (timedSpeech); a SpeechFailed becomes the job's failure with its code and retryability. */
async function narrate(ctx: AppContext, spec: FacelessSpec, text: string, raw: string, speed: number, signal: AbortSignal) {
  const engine = engineFor('speech', ctx);
  // The catalog voice, for engines with voices of their own (a clone is known by its eSpeak voice's variant).
  const catalogVoice = { id: spec.voice.id, gender: findVoice(spec.voice.id)?.gender, language: spec.language };
  const speech = await timedSpeech(engine, engineFor('transcribe', ctx), text, raw, {
    voice: spec.voice.espeak,
    catalogVoice,
    speed,
    timeoutMs: 120_000,
    signal,
  }).catch((err: unknown) => {
    if (err instanceof SpeechFailed) {
      const context = { ...(err.status ? { status: err.status } : {}), ...(err.retryAfterMs ? { retry_after_ms: err.retryAfterMs } : {}) };
      throw new JobFailure(
        { code: err.code, message: `Speech synthesis failed: ${err.message}`, retryable: err.retryable, context },
        err.retryable,
      );
    }
    throw err;
  });
  return { engine, speech };
}

/**
 * The narration: the speaking rate from the word count, then one correction from the measured
 * length as a tempo change (atempo keeps the pitch; the word timings scale exactly): one synthesis.
 * Stored as a voice media row with its transcript.
 */
async function speak(
  { ctx, f, spec, workDir }: Attempt,
  s: Stage,
  script: FacelessOutputs['script'],
): Promise<FacelessOutputs['voiceover']> {
  const targetMs = spec.durationSeconds * 1000;
  const text = script.parts.map((p) => p.text).join(' ');
  const raw = path.join(workDir, 'voice-raw.wav');
  const words = text.split(/\s+/).length;
  const speed = fitSpeed((words / WORDS_PER_SECOND) * 1000, 1, targetMs);
  const { engine, speech } = await narrate(ctx, spec, text, raw, speed, s.signal);
  s.madeBy('speech');
  if (speech.timings === 'transcribed') s.madeBy('transcribe');
  s.report(0.6);
  // 48 kHz stereo, the mixer's format.
  const out = path.join(workDir, 'voice.wav');
  const {
    words: timed,
    durationMs,
    tempo: scaled,
  } = await retimeSpeech(speech, fitSpeed(speech.durationMs, speed, targetMs) / speed, out, {
    cwd: workDir,
    signal: s.signal,
  });
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
  return {
    mediaId: id,
    durationMs,
    speed: Math.round(speed * scaled * 1000) / 1000,
    words: timed,
    engine: engine.name,
    model: speech.model ?? null,
    timings: speech.timings,
  };
}

/** The caption cues and scene starts from the word timings, and the music bed, ducked under the words, timed here too. */
async function timeCaptions(
  { ctx, f, spec, workDir }: Attempt,
  s: Stage,
  script: FacelessOutputs['script'],
  voiceover: FacelessOutputs['voiceover'],
): Promise<FacelessOutputs['captions']> {
  const durationSeconds = videoSeconds(spec, voiceover);
  const music = await storeMusicBed(ctx, {
    orgId: f.orgId,
    mediaId: stableUuid(`faceless:${f.videoId}:music`),
    key: facelessMusicKey(f.orgId, f.videoId),
    title: `Music bed: ${spec.title}`,
    workDir,
    bed: { seconds: durationSeconds, prompt: spec.prompt ?? spec.title, style: spec.imageStyle, words: voiceover.words, signal: s.signal },
  });
  return {
    cues: captionCues(script.parts, voiceover.words),
    sceneStartsMs: partStarts(script.parts, voiceover.words),
    music,
  };
}

/** The timeline the video is rendered from and that becomes its editor project (the same every time for the same stored stages). */
function timelineOf(spec: FacelessSpec, done: Pick<FacelessOutputs, 'scenes' | 'voiceover' | 'captions' | 'clips'>) {
  const tl = facelessTimeline({
    width: spec.width,
    height: spec.height,
    durationSeconds: videoSeconds(spec, done.voiceover),
    sceneMediaIds: done.scenes.mediaIds,
    sceneStartsMs: done.captions.sceneStartsMs,
    voice: { mediaId: done.voiceover.mediaId, durationMs: done.voiceover.durationMs },
    cues: done.captions.cues,
    music: done.captions.music,
    clips: done.clips?.mediaIds,
    overlayMediaId: done.clips?.overlayId ?? done.scenes.overlayId,
  });
  // Scenes change with a transition (cross-fade, slide, zoom in turn); the captions mark the spoken word in the asked style.
  addSceneTransitions(tl.items.filter((i) => i.layer === 0 && (i.type === 'image' || i.type === 'video')));
  for (const item of tl.items)
    if (item.type === 'captions' && spec.captionStyle) item.style = { ...item.style, caption_style: spec.captionStyle };
  return tl;
}

/** The timeline rendered to MP4 by the editor's timeline renderer, from the stored scenes, voiceover and music. */
async function render({ ctx, f, spec, workDir }: Attempt, s: Stage, done: FacelessOutputs): Promise<FacelessOutputs['render']> {
  const { scenes, voiceover, captions } = done;
  const timeline = timelineOf(spec, done);
  const files = new Map<string, RenderMedia>();
  for (const [i, id] of scenes.mediaIds.entries()) {
    const file = path.join(workDir, `scene-${i + 1}.jpg`);
    await ctx.storage.copyToFile(facelessSceneKey(f.orgId, f.videoId, i), file);
    files.set(id, {
      path: file,
      type: 'image/jpeg',
      kind: 'image',
      width: spec.width,
      height: spec.height,
      durationSeconds: null,
      hasAudio: null,
    });
  }
  if (done.clips) await clipFiles(ctx, f, spec, done.clips, workDir, files);
  else if (scenes.overlayId) await overlayFile(ctx, f, spec, scenes.overlayId, workDir, files);
  const voiceFile = path.join(workDir, 'voiceover.wav');
  await ctx.storage.copyToFile(facelessVoiceoverKey(f.orgId, f.videoId), voiceFile);
  files.set(voiceover.mediaId, {
    path: voiceFile,
    type: 'audio/wav',
    kind: 'voice',
    width: null,
    height: null,
    durationSeconds: voiceover.durationMs / 1000,
    hasAudio: true,
  });
  if (captions.music) {
    const musicFile = path.join(workDir, 'music.wav');
    await ctx.storage.copyToFile(facelessMusicKey(f.orgId, f.videoId), musicFile);
    files.set(captions.music.mediaId, {
      path: musicFile,
      type: 'audio/wav',
      kind: 'audio',
      width: null,
      height: null,
      durationSeconds: captions.music.durationMs / 1000,
      hasAudio: true,
    });
  }
  const out = path.join(workDir, 'video.mp4');
  s.madeBy('render');
  await engineFor('render', ctx).render(
    { width: spec.width, height: spec.height, fps: FPS, tracks: timeline.tracks, items: timeline.items, media: files },
    workDir,
    out,
    {
      quality: 'standard',
      signal: s.signal,
      onProgress: s.report,
    },
  );
  const probed = await probe({ path: out, type: 'video/mp4' }, { signal: s.signal });
  const key = facelessVideoKey(f.orgId, f.videoId);
  const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
  const manifest = await facelessManifest(f, spec, done, timeline.items);
  return { storageKey: key, bytes: stored.bytes, durationSeconds: probed.duration_seconds ?? videoSeconds(spec, voiceover), manifest };
}

/**
 * What the video shows, for the media quality checker: the brand on the overlay, each drawn
 * scene's big type (where its pan takes it, while the scene shows), the caption cues, the scene
 * starts and the narration's spans.
 */
export async function facelessManifest(
  f: Pick<FacelessRow, 'videoId'>,
  spec: FacelessSpec,
  done: FacelessOutputs,
  items: Item[],
): Promise<MediaManifest> {
  const frame = { width: spec.width, height: spec.height };
  const end = videoSeconds(spec, done.voiceover);
  const scenes = items
    .filter((i) => i.layer === 0 && (i.type === 'image' || i.type === 'video'))
    .sort((a, b) => a.from_seconds - b.from_seconds);
  const extra: PlacedText[] = (done.scenes.brandTexts ?? []).map((t) => ({ ...t, fromSeconds: 0, toSeconds: end }));
  for (const [i, item] of scenes.entries()) {
    // Scenes over a stock photo or a model's picture have no big type (scene.ts).
    if (item.type !== 'image' || !done.scenes.overlayId || (done.scenes.sources?.[i]?.source ?? 'drawn') !== 'drawn') continue;
    const texts =
      done.scenes.texts?.[i] ??
      (await sceneTexts({
        ...frame,
        index: i,
        count: scenes.length,
        seed: `${f.videoId}`,
        text: onScreenTitle(done.script.parts[i]),
        style: spec.imageStyle,
        aiStyles: spec.aiStyles,
        fluxStyles: spec.fluxStyles,
        captionTop: captionTop(spec.width, spec.height),
      }));
    for (const t of texts)
      extra.push({
        ...t,
        box: pannedBox(t.box, item, frame),
        fromSeconds: item.from_seconds,
        toSeconds: item.from_seconds + item.duration_seconds,
      });
  }
  return timelineManifest({
    ...frame,
    items,
    sceneItems: scenes,
    extra,
    narration: narrationSpans(done.voiceover.words),
    requestedSeconds: spec.durationSeconds,
  });
}

/** The clips' and the overlay's files in the work folder, for the render. */
async function clipFiles(
  ctx: AppContext,
  f: FacelessRow,
  spec: FacelessSpec,
  clips: ClipsOutput,
  workDir: string,
  files: Map<string, RenderMedia>,
): Promise<void> {
  const frame = { width: spec.width, height: spec.height };
  for (const [i, id] of clips.mediaIds.entries()) {
    if (!id) continue;
    const file = path.join(workDir, `clip-${i + 1}.mp4`);
    await ctx.storage.copyToFile(facelessClipKey(f.orgId, f.videoId, i), file);
    files.set(id, { path: file, type: 'video/mp4', kind: 'video', ...frame, durationSeconds: null, hasAudio: false });
  }
  await overlayFile(ctx, f, spec, clips.overlayId, workDir, files);
}

/** The overlay's (caption scrim and brand) file in the work folder, for the render. */
async function overlayFile(
  ctx: AppContext,
  f: FacelessRow,
  spec: FacelessSpec,
  overlayId: string,
  workDir: string,
  files: Map<string, RenderMedia>,
): Promise<void> {
  const overlay = path.join(workDir, 'overlay.png');
  await ctx.storage.copyToFile(facelessOverlayKey(f.orgId, f.videoId), overlay);
  files.set(overlayId, {
    path: overlay,
    type: 'image/png',
    kind: 'image',
    width: spec.width,
    height: spec.height,
    durationSeconds: null,
    hasAudio: null,
  });
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  // The image or video model's failure (FACELESS_IMAGE_MODEL, FACELESS_VIDEO_MODEL): its code (content_rejected, timeout, ...) and retryability.
  if (err instanceof ProviderError) {
    return {
      detail: {
        code: err.code,
        message: `The model making the scenes failed: ${err.message}`.slice(0, 1500),
        retryable: err.retryable,
        context: err.status ? { status: err.status } : {},
      },
      retry: err.retryable,
    };
  }
  const message =
    err instanceof FfmpegError ? err.message.split('\n').slice(-3).join(' ') : err instanceof Error ? err.message : String(err);
  return {
    detail: { code: 'render_failed', message: `The faceless video failed: ${message.slice(0, 1500)}`, retryable: true, context: {} },
    retry: true,
  };
}
