// A template generation made by the model its catalog names (made_by, hosted here): two stages on
// the kernel's stage runner instead of the one local render.
//   generating   the model makes the picture: a static ad's hero image (from the prompt, or an
//                edit of the reference image), a video tier's footage (from its first frame: the
//                first reference image, else the avatar's portrait, else the template's picture
//                without texts). Its provider job id is stored before polling (a retry resumes
//                it, never pays twice); what it made is stored (model-outputs/) with the
//                provider, model, job id and seconds it took, before the next stage starts.
//   compositing  the local engines finish it: the template's headline, brand line, logo and CTA
//                composited over the hero picture; over the footage the same overlay, captions,
//                and the model's own sound (or the music bed when it made none and audio is on).
// A narrated template (its model driven by a voice: a talking avatar, OmniHuman) first writes its
// script and speaks it (narration.ts): the voice drives the model, is the ad's sound, and its
// word timings time the captions.
// The stored model output is removed once the generation completes (the orphan sweep takes
// what a crash leaves).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import type { GenerationJob, ProviderModel } from '../../engines/generation.ts';
import { engineFor, generationCapability } from '../../engines/index.ts';
import { probe } from '../../media/ffmpeg.ts';
import type { RunningJob } from '../../jobs/define-job.ts';
import type { StageContext, Stages } from '../../kernel/stages.ts';
import { findAiModel, findTemplate, type RawAiVariant } from '../../services/catalog/catalog-data.ts';
import { generationModelOutputKey, generationOutputKey } from '../../storage/keys.ts';
import { providerJobIdOf, type GenerationRow, type StoredOutput } from './rows.ts';
import { engineGone, type GenerationJobData, gatherInputs, generateResumably, jobOf } from './stages.ts';
import { speakScript, writeScript, type ScriptOutput, type VoiceOutput } from './narration.ts';
import { comfyuiMakes } from '../../engines/selfhosted/comfyui.ts';

/** What the model made, stored, and the record of the call (for reconciling provider bills). */
export interface ModelOutput {
  storageKey: string;
  contentType: string;
  hasAudio: boolean;
  provider: string;
  model: string;
  providerJobId: string | null;
  seconds: number;
}

export interface TemplateOutputs {
  /** A narrated template (a model driven by a voice) only: what is said, and the voice saying it (narration.ts). */
  script?: ScriptOutput;
  voice?: VoiceOutput;
  generating: ModelOutput;
  compositing: StoredOutput;
}

/** Whether the template's model is driven by a voice (a talking avatar): it is narrated first. */
const narrated = (g: GenerationRow) => {
  const by = g.spec.madeBy;
  return Boolean(
    by &&
      findAiModel(by.modelSlug)
        ?.variants.find((v) => v.id === by.variantId)
        ?.input_mode.includes('audio'),
  );
};

/** A stored file copied into `dir` (the folder of the engine that reads it). */
async function fetchStored(ctx: AppContext, key: string, dir: string, name: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await ctx.storage.copyToFile(key, file);
  return file;
}

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4' };

/**
 * The variant made_by names and what makes it on this worker, as the generation was priced: its
 * hosted model (keyed here), or ComfyUI (configured for it here); else the generation fails,
 * refunded.
 */
function madeByModel(ctx: AppContext, g: GenerationRow): { variant: RawAiVariant; model?: ProviderModel; modelName?: string } {
  const by = g.spec.madeBy!;
  const label = g.spec.engine!;
  const variant = findAiModel(by.modelSlug)?.variants.find((v) => v.id === by.variantId);
  if (variant && label.kind === 'self_hosted' && comfyuiMakes(ctx.config, variant.model, g.spec.output))
    return { variant, modelName: variant.model };
  const model = variant?.provider;
  if (!variant || !model || label.kind !== 'hosted' || !ctx.config.provider[model.name]?.key) throw engineGone(label);
  return { variant, model };
}

/** The model's prompt: the request's, with the template's style, and no text in frame (the layout sets the words). */
function modelPrompt(g: GenerationRow): string {
  const { spec } = g;
  const preset = spec.presetId ? findTemplate(spec.templateSlug!)?.presets.find((p) => p.id === spec.presetId) : undefined;
  const style = `Style: ${spec.title}${preset ? `, ${preset.label}` : ''}.`;
  const frame =
    spec.output === 'video'
      ? 'An advertising video shot, no text, captions or logos in frame.'
      : 'An advertising photograph with no text, lettering or logos in it; keep calm space for a headline at the top and a button at the bottom.';
  return [spec.prompt.trim(), style, frame].filter(Boolean).join('\n\n');
}

/** The images the model starts from: all references (an image-list model), else one first frame. */
async function startImages(
  ctx: AppContext,
  g: GenerationRow,
  variant: RawAiVariant,
  base: GenerationJob,
  workDir: string,
): Promise<Buffer[]> {
  if (!variant.input_mode.includes('image')) return [];
  if (base.referenceImages.length) return variant.provider?.image_list ? base.referenceImages : base.referenceImages.slice(0, 1);
  if (base.avatarImage) return [base.avatarImage];
  // The template's picture without its texts, made by the local engine.
  const plate = await engineFor('image', ctx).generate(
    { ...base, output: 'image', imageFormat: 'png', textless: true, generationId: `${g.id}-plate` },
    { workDir: path.join(workDir, 'plate') },
  );
  return [await fs.readFile(plate.path)];
}

async function generating(
  ctx: AppContext,
  g: GenerationRow,
  job: RunningJob<GenerationJobData>,
  workDir: string,
  s: StageContext<GenerationRow>,
  inputs: () => Promise<Partial<GenerationJob>>,
  voice: VoiceOutput | undefined,
): Promise<ModelOutput> {
  const { variant, model, modelName } = madeByModel(ctx, g);
  const base = jobOf(ctx, g, await inputs());
  const request: GenerationJob = {
    ...base,
    type: 'ai_model',
    modelSlug: g.spec.madeBy!.modelSlug,
    variantId: g.spec.madeBy!.variantId,
    prompt: modelPrompt(g),
    referenceImages: await startImages(ctx, g, variant, base, workDir),
    // The layout draws the logo; the model gets the kit's guidance in its prompt only.
    logo: undefined,
    providerModel: model,
  };
  const engine = engineFor(generationCapability(g.spec.output, variant.input_mode), {
    config: ctx.config,
    fetcher: ctx.fetcher,
    model,
    modelName,
  });
  const t0 = performance.now();
  const modelDir = path.join(workDir, 'model');
  await fs.mkdir(modelDir, { recursive: true });
  // A talking avatar is driven by the voice.
  if (voice) request.audio = { path: await fetchStored(ctx, voice.storageKey, modelDir, 'voice.wav'), type: 'audio/wav' };
  const made = await generateResumably(ctx, g, job, engine, request, {
    workDir: modelDir,
    signal: s.signal,
    onProgress: s.report,
  });
  const key = generationModelOutputKey(g.orgId, g.id, EXT[made.contentType] ?? 'bin');
  await ctx.storage.put(key, { file: made.path }, made.contentType);
  return {
    storageKey: key,
    contentType: made.contentType,
    hasAudio: Boolean(made.hasAudio),
    provider: model?.name ?? 'comfyui',
    model: model?.model ?? variant.model,
    providerJobId: await providerJobIdOf(ctx, g.id),
    seconds: Math.round(performance.now() - t0) / 1000,
  };
}

async function compositing(
  ctx: AppContext,
  g: GenerationRow,
  workDir: string,
  s: StageContext<GenerationRow>,
  made: ModelOutput,
  inputs: () => Promise<Partial<GenerationJob>>,
  voice: VoiceOutput | undefined,
): Promise<StoredOutput> {
  // Inside the folder the finishing render reads from (its inputs must be files of its folder).
  const finishDir = path.join(workDir, 'finish');
  await fs.mkdir(finishDir, { recursive: true });
  const file = path.join(finishDir, `model-output.${EXT[made.contentType] ?? 'bin'}`);
  await ctx.storage.copyToFile(made.storageKey, file);
  const base = jobOf(ctx, g, await inputs());
  const video = g.spec.output === 'video';
  const hasAudio = video && (await probe(file, { signal: s.signal })).has_audio;
  // The narration is the sound of a narrated ad, and its words time the captions.
  const narration = voice && { path: await fetchStored(ctx, voice.storageKey, finishDir, 'voice.wav'), type: 'audio/wav' };
  const finish: GenerationJob = video
    ? {
        ...base,
        sourceVideo: { path: file, type: made.contentType },
        motionVideo: undefined,
        // The model's own sound; the music bed only when it made none and audio is on.
        audio: narration ?? (hasAudio ? { path: file, type: made.contentType } : undefined),
        generateAudio: g.spec.generateAudio && !hasAudio && !narration,
        spokenWords: voice?.words,
      }
    : { ...base, heroImage: file };
  const result = await engineFor(g.spec.output, ctx).generate(finish, {
    workDir: finishDir,
    signal: s.signal,
    onProgress: s.report,
  });
  const ext = EXT[result.contentType] ?? 'bin';
  const stored = await ctx.storage.put(generationOutputKey(g.orgId, g.id, ext), { file: result.path }, result.contentType);
  return {
    storageKey: stored.key,
    contentType: result.contentType,
    bytes: stored.bytes,
    width: result.width,
    height: result.height,
    durationSeconds: result.durationSeconds,
    hasAudio: video ? Boolean(narration) || hasAudio || g.spec.generateAudio : undefined,
    manifest: result.manifest,
  };
}

/** The two stages: the model's part weighs most (its provider job), the finishing render the rest. */
export function templateStages(
  ctx: AppContext,
  g: GenerationRow,
  job: RunningJob<GenerationJobData>,
  workDir: string,
): Stages<GenerationRow, TemplateOutputs> {
  let gathered: Promise<Partial<GenerationJob>> | undefined;
  const inputs = () => (gathered ??= gatherInputs(ctx, g, workDir, undefined));
  const model: Stages<GenerationRow, TemplateOutputs> = [
    { name: 'generating', weight: 65, run: (s, done) => generating(ctx, g, job, workDir, s, inputs, done.voice) },
    { name: 'compositing', weight: 25, run: (s, done) => compositing(ctx, g, workDir, s, done.generating, inputs, done.voice) },
  ];
  if (!narrated(g)) return model;
  return [
    { name: 'script', weight: 3, run: (s) => writeScript(ctx, g, s) },
    { name: 'voice', weight: 7, run: (s, done) => speakScript(ctx, g, s, workDir, done.script!) },
    ...model,
  ];
}
