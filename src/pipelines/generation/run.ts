// The generation job's work (job.ts): the stages of its kind on the kernel's stage runner, then
// completion. A template made by its catalog model (spec.madeBy) runs template.ts's two stages;
// everything else the one render of stages.ts, after a script and a voice when a local UGC ad's
// presenter speaks (narration.ts: the mouth moves with the words, the captions are what is said).
// Work canceled while it runs stops within about a second (src/kernel/cancelable.ts).
import fs from 'node:fs/promises';
import type { AppContext } from '../../context.ts';
import type { JobTools, RunningJob } from '../../jobs/define-job.ts';
import { discardIfCanceled, runCancelable } from '../../kernel/cancelable.ts';
import { runStages, type Stages } from '../../kernel/stages.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { completeGeneration, generationResource, startAttempt, type GenerationRow, type StoredOutput } from './rows.ts';
import { type GenerationJobData, render } from './stages.ts';
import { templateStages } from './template.ts';
import { type ScriptOutput, speakScript, type VoiceOutput, writeScript } from './narration.ts';

/** The generation's stages: the rendering's output is stored where the generation completes from it. */
interface GenerationOutputs {
  /** A speaking presenter only: what it says, and its voice. */
  script?: ScriptOutput;
  voice?: VoiceOutput;
  rendering: StoredOutput;
}

/** A UGC ad the local engine renders with sound and no sound of the customer's: its presenter speaks. */
const presenterSpeaks = (g: GenerationRow) => g.type === 'ugc_ad' && g.spec.generateAudio && !g.spec.audio;

export async function runGeneration(ctx: AppContext, job: RunningJob<GenerationJobData>, tools: JobTools): Promise<void> {
  const g = await startAttempt(ctx, job.data.generationId);
  if (!g) return; // already completed or failed: a repeated delivery has nothing to do
  tools.annotate({ credits_refunded: g.credits });
  const workDir = await jobFolder(ctx.config.dataDir, `gen-${g.id}`);
  try {
    // Canceled while it runs (POST /generations/{id}/cancel): noticed within a second, its engines
    // stopped (the provider's job canceled, ffmpeg killed), nothing written after (cancelable.ts).
    await runCancelable(ctx, generationResource, g.id, tools, (tools) => generate(ctx, g, job, tools, workDir));
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** The generation's stages, then its completion (the outputs of one canceled meanwhile discarded). */
async function generate(ctx: AppContext, g: GenerationRow, job: RunningJob<GenerationJobData>, tools: JobTools, workDir: string) {
  if (g.spec.madeBy) {
    // A template made by its catalog model: the model's part, then the finishing render (template.ts).
    const { outputs } = await runStages(ctx, generationResource, g, templateStages(ctx, g, job, workDir), tools);
    // The outputs are stored: the work folder goes before the completion commits, so a completed
    // generation never has a folder left behind (the caller's finally covers failures).
    await fs.rm(workDir, { recursive: true, force: true });
    const intermediate = [outputs.generating.storageKey, outputs.voice?.storageKey];
    if (!(await completeGeneration(ctx, g, outputs.compositing)))
      await discardIfCanceled(ctx, generationResource, g.id, [outputs.compositing.storageKey]);
    for (const key of intermediate) if (key) await ctx.storage.delete(key).catch(() => {});
    return;
  }
  // One stage: its resume point is the hosted provider's job (saveProviderJob), not its output.
  // A presenter that speaks (a local UGC ad with sound) first gets its words and voice (narration.ts).
  const stages: Stages<GenerationRow, GenerationOutputs> = [
    ...(presenterSpeaks(g)
      ? ([
          { name: 'script', weight: 5, run: (s) => writeScript(ctx, g, s) },
          { name: 'voice', weight: 15, run: (s, done) => speakScript(ctx, g, s, workDir, done.script!) },
        ] satisfies Stages<GenerationRow, GenerationOutputs>)
      : []),
    { name: 'rendering', weight: 80, run: (stage, done) => render(ctx, g, job, workDir, stage, done.voice) },
  ];
  const { outputs } = await runStages(ctx, generationResource, g, stages, tools);
  await fs.rm(workDir, { recursive: true, force: true });
  if (!(await completeGeneration(ctx, g, outputs.rendering)))
    await discardIfCanceled(ctx, generationResource, g.id, [outputs.rendering.storageKey]);
  if (outputs.voice) await ctx.storage.delete(outputs.voice.storageKey).catch(() => {});
}
