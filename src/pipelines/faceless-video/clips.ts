// The clips stage of a faceless video (FACELESS_SCENE_SOURCE stock_video or video_model): a clip
// per scene, a licensed stock clip found for its text or the video model FACELESS_VIDEO_MODEL's
// clip of its still, normalised to the video's frame and its scene's length and stored as a video
// media row per scene.
//
// Why a stage of its own, after the voiceover and captions, and not part of the scenes stage: a
// scene lasts as long as its narration takes, which is only known once the narration is spoken
// (the captions stage times the scenes from the words). Made here, each clip is asked for what it
// must cover (a stock clip at least as long as its scene is preferred; the model is asked for the
// duration option that covers the scene) and normalised once, at exactly the scene's length
// (a shorter clip looped, a longer one trimmed), so the timeline's video items need no trimming
// or looping, the editor opens clips that fit their scenes, and a re-render reads the same files.
// Made in the scenes stage, lengths would be guesses from the word count, corrected at every
// render. The scenes stage still makes every scene's still first (plain: the caption scrim and the
// brand are one overlay over the whole video, drawn here), which is the first frame an
// image-to-video model animates and what a scene shows when it gets no clip: with stock_video the
// still is a stock photo when one is found (else drawn), so a scene falls back to a photo, then a
// drawing, and the record (`sources`) says which and why.
//
// Resumable: a scene's record (`clipSources`, the stage's item state) is written before its media
// row, so a scene with a row is finished, and a scene recorded as keeping its still is not
// searched again; the video model's provider job is stored (`clipJobs`) before it is polled, so a
// resumed attempt polls it instead of paying for a second one.
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { and, eq, inArray } from 'drizzle-orm';
import { media } from '../../db/schema/index.ts';
import { engineFor } from '../../engines/index.ts';
import type { ProviderJobRef } from '../../engines/generation.ts';
import type { StockEngine } from '../../engines/stock/types.ts';
import type { OverlayInput } from '../../engines/image/types.ts';
import { chooseClip, makeClip } from '../../engines/video/model-clip.ts';
import { itemJob, itemState, type ItemState } from '../../kernel/item-state.ts';
import type { StageContext } from '../../kernel/stages.ts';
import { inputArgs, runFfmpeg, sniffFile } from '../../media/ffmpeg.ts';
import { findAiModel } from '../../services/catalog/catalog-data.ts';
import { facelessClipKey, facelessOverlayKey, facelessSceneKey } from '../../storage/keys.ts';
import { captionTop, scenePrompt } from './plan.ts';
import type { FacelessSpec } from './request.ts';
import { facelessResource, mapLimit, stableUuid, type FacelessRow } from './rows.ts';
import { findStockClip, type ClipSource } from './stock-scenes.ts';

/** What the clips stage stores: each scene's clip (a video media id, null where the scene is its still), the overlay, and where each clip came from. */
export interface ClipsOutput {
  mediaIds: (string | null)[];
  overlayId: string;
  sources: ClipSource[];
}

/** What the stage works with (the faceless attempt's). */
export interface ClipAttempt {
  ctx: AppContext;
  f: FacelessRow;
  spec: FacelessSpec;
  workDir: string;
  lastAttempt: boolean;
  /** The brand kit's logo, when it can be read (decoration: undefined otherwise). */
  logo(signal: AbortSignal): Promise<Buffer | undefined>;
  /** Whether no retry follows a failure (a provider job it leaves is canceled then). */
  final(err: unknown): boolean;
}

type Stage = StageContext<FacelessRow>;
const FPS = 30;

/** The scenes: their texts and stills (media ids), and when each starts (ms) in a video of `durationMs`. */
export interface ClipScenes {
  texts: string[];
  stillIds: string[];
  startsMs: number[];
  durationMs: number;
}

/** Scene `i`'s length in seconds. */
const sceneSeconds = (sc: ClipScenes, i: number) =>
  Math.max(0.1, ((i + 1 < sc.startsMs.length ? sc.startsMs[i + 1] : sc.durationMs) - sc.startsMs[i]) / 1000);

/** A clip per scene, two at a time, and the overlay; a scene finished by an earlier attempt is skipped. */
export async function makeClips(a: ClipAttempt, s: Stage, scenes: ClipScenes): Promise<ClipsOutput> {
  const { ctx, f } = a;
  const sources = itemState<ClipSource>(ctx, facelessResource, f, 'clipSources');
  const jobs = itemState<ProviderJobRef>(ctx, facelessResource, f, 'clipJobs');
  const ids = scenes.texts.map((_t, i) => stableUuid(`faceless:${f.videoId}:clip:${i}`));
  const overlayId = overlayIdOf(f.videoId);
  const stored = new Set(
    (
      await ctx.db
        .select({ id: media.id })
        .from(media)
        .where(and(eq(media.orgId, f.orgId), inArray(media.id, [...ids, overlayId])))
    ).map((r) => r.id),
  );
  const stock = ctx.config.facelessSceneSource === 'stock_video' ? engineFor('stock', ctx) : undefined;
  if (stock) s.madeBy('stock');
  s.madeBy('scene');
  if (!stored.has(overlayId)) await storeOverlay(a, overlayId, await a.logo(s.signal));
  let done = 0;
  const mediaIds = await mapLimit(scenes.texts, 2, async (text, i) => {
    const kept = sources.get(i);
    if (stored.has(ids[i]) || kept?.source === 'still') return stored.has(ids[i]) ? ids[i] : null;
    const seconds = sceneSeconds(scenes, i);
    const made = await sceneClip(a, s, { i, text, seconds, stillId: scenes.stillIds[i], stock, jobs });
    await sources.set(i, made.source);
    if (made.file) await storeClip(a, ids[i], i, made.file, seconds, s.signal);
    s.report(++done / scenes.texts.length);
    return made.file ? ids[i] : null;
  });
  s.madeBy('render');
  return { mediaIds, overlayId, sources: mediaIds.map((_id, i) => sources.get(i) ?? { source: 'still' }) };
}

interface SceneRequest {
  i: number;
  text: string;
  seconds: number;
  stillId: string;
  stock?: StockEngine;
  jobs: ItemState<ProviderJobRef>;
}

/** Scene `i`'s clip as a file in the work folder (a stock clip, or the video model's), or none and why. */
async function sceneClip(a: ClipAttempt, s: Stage, r: SceneRequest): Promise<{ file?: string; source: ClipSource }> {
  const { ctx, f, spec, workDir } = a;
  if (r.stock) {
    const found = await findStockClip(ctx, r.stock, {
      text: r.text,
      width: spec.width,
      height: spec.height,
      seconds: r.seconds,
      workDir,
      signal: s.signal,
    });
    if (!found.file) ctx.log.info({ video: f.videoId, scene: r.i, ...found.source }, 'no stock clip for the scene; it keeps its still');
    return found;
  }
  const slug = ctx.config.facelessVideoModel;
  const model = slug ? findAiModel(slug) : undefined;
  if (!slug || !model) return { source: { source: 'still' } };
  const chosen = chooseClip(ctx, slug, model);
  if ('fallback' in chosen) {
    const { reason, requires } = chosen.fallback;
    ctx.log.info(
      { video: f.videoId, scene: r.i, model: slug, reason, requires },
      'no engine makes the video model here; the scene keeps its still',
    );
    return { source: { source: 'still', fallback: reason, requires } };
  }
  s.madeBy('video', chosen.engine.use);
  const still = chosen.variant.input_mode.includes('image')
    ? await ctx.storage.readBuffer(facelessSceneKey(f.orgId, f.videoId, r.i))
    : undefined;
  const made = await makeClip(
    chosen.engine,
    slug,
    {
      variant: chosen.variant,
      key: `faceless:${f.videoId}:clip:${r.i}`,
      prompt: scenePrompt(spec, r.text, 'clip'),
      aspectRatio: spec.aspectRatio,
      width: spec.width,
      height: spec.height,
      seconds: r.seconds,
      image: still,
      brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors } : undefined,
      maxInputPixels: ctx.config.mediaMaxPixels,
    },
    itemJob(r.jobs, r.i, (err) => a.lastAttempt || a.final(err)),
    { workDir: path.join(workDir, `clip-model-${r.i}`), signal: s.signal },
  );
  return { file: made.path, source: { source: 'model_video', model: made.record } };
}

/**
 * The clip normalised by our ffmpeg: cover-scaled and cropped to the video's frame, at its frame
 * rate, looped when shorter than the scene and cut at the scene's length, H.264 without sound;
 * stored, then its media row written (the scene is finished).
 */
async function storeClip(a: ClipAttempt, id: string, i: number, file: string, seconds: number, signal: AbortSignal): Promise<void> {
  const { ctx, f, spec, workDir } = a;
  const { width: W, height: H } = spec;
  const out = path.join(workDir, `clip-${i + 1}.mp4`);
  // biome-ignore format: ffmpeg's arguments read best as option-value pairs
  await runFfmpeg([
    ...inputArgs(await sniffFile(file), ['-stream_loop', '-1']),
    '-t', seconds.toFixed(3), '-an', '-sn', '-dn',
    '-vf', `scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},setsar=1,fps=${FPS},format=yuv420p`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-movflags', '+faststart', out,
  ], { cwd: workDir, signal, expectedDurationSeconds: seconds });
  const key = facelessClipKey(f.orgId, f.videoId, i);
  const object = await ctx.storage.put(key, { file: out }, 'video/mp4');
  await ctx.db
    .insert(media)
    .values({
      id,
      orgId: f.orgId,
      kind: 'video',
      status: 'completed',
      source: 'generation',
      title: `${spec.title} — scene ${i + 1} clip`.slice(0, 200),
      filename: `clip-${i + 1}.mp4`,
      contentType: 'video/mp4',
      sizeBytes: object.bytes,
      storageKey: key,
      width: W,
      height: H,
      durationSeconds: Math.round(seconds * 1000) / 1000,
      hasAudio: false,
    })
    .onConflictDoNothing();
}

/** What the overlay of a video is drawn from. */
export const overlayInput = (spec: FacelessSpec, logo: Buffer | undefined): OverlayInput => ({
  width: spec.width,
  height: spec.height,
  style: spec.imageStyle,
  brand: spec.brandKit ? { name: spec.brandKit.name, colors: spec.brandKit.colors, logo } : undefined,
  captionTop: captionTop(spec.width, spec.height),
});

/** The overlay's media id of a faceless video. */
export const overlayIdOf = (videoId: number) => stableUuid(`faceless:${videoId}:overlay`);

/**
 * The caption scrim and the brand on a transparent PNG at the video's size, stored as an image
 * media row: laid over every scene (clip or still), it stays put while the scenes pan and change.
 */
export async function storeOverlay(a: Pick<ClipAttempt, 'ctx' | 'f' | 'spec'>, id: string, logo: Buffer | undefined): Promise<void> {
  const { ctx, f, spec } = a;
  const png = await engineFor('scene', ctx).renderOverlay(overlayInput(spec, logo));
  const key = facelessOverlayKey(f.orgId, f.videoId);
  const object = await ctx.storage.put(key, png, 'image/png');
  await ctx.db
    .insert(media)
    .values({
      id,
      orgId: f.orgId,
      kind: 'image',
      status: 'completed',
      source: 'generation',
      title: `${spec.title} — caption band`.slice(0, 200),
      filename: 'overlay.png',
      contentType: 'image/png',
      sizeBytes: object.bytes,
      storageKey: key,
      width: spec.width,
      height: spec.height,
    })
    .onConflictDoNothing();
}
