// Benchmark: the orchestration overhead of a template made by a hosted model, with the fal and
// Replicate fakes (test/engines/fakes/) answering instantly (a job completes at its first poll), so
// that what is measured is ours: from the provider's last output (the fake serving the output file
// the adapter downloads) to the finished record (the generation's completed_at), for
//   1. a static ad (bold-sale-banner) whose hero image Flux 1.1 Pro makes on Replicate (goal < 1 s);
//   2. a video ad (product-demo-showcase, tier high, 4 s, a product photo as first frame) whose
//      footage Veo 3 Fast makes on fal (goal < 2 s plus the finishing render).
// Baselines measured in the same run, after each generation:
//   - the bare provider call: the same request made directly with the adapter the worker uses
//     (ReplicateProvider / FalProvider generate(), from the registry) against the same fake: submit,
//     poll, result, download and the output's checks;
//   - the finishing stage alone: the template's compositing stage (the local engine compositing the
//     same model output over the template, with its file copy and store) run by itself, so that the
//     overhead excluding it is visible.
// Prints median and p90 over the runs and the overhead as a ratio of the bare provider time.
// The service runs in this process with its workers (embedded PostgreSQL), as bench/faceless.ts.
// Usage: node bench/pipelines.ts [--runs N]
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { freePort } from '../src/net/ports.ts';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import type { GenerationJob } from '../src/engines/generation.ts';
import { engineFor, generationCapability } from '../src/engines/index.ts';
import type { RunningJob } from '../src/jobs/define-job.ts';
import type { GenerationRow } from '../src/pipelines/generation/rows.ts';
import { type GenerationJobData, jobOf } from '../src/pipelines/generation/stages.ts';
import { type ModelOutput, type TemplateOutputs, templateStages } from '../src/pipelines/generation/template.ts';
import { startService } from '../src/server.ts';
import { findAiModel } from '../src/services/catalog/catalog-data.ts';
import { createApiKey } from '../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../src/services/workspaces/organizations.ts';
import { type Fake, png, startFake } from '../test/engines/fakes/common.ts';
import { startFalFake } from '../test/engines/fakes/fal.ts';
import { startReplicateFake } from '../test/engines/fakes/replicate.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(values.runs);
const say = (s: string) => process.stdout.write(`${s}\n`);
const FAL_KEY = 'fal-bench-id:fal-bench-secret';
const REPLICATE_TOKEN = 'r8_bench_token';

const replicate = await startReplicateFake(REPLICATE_TOKEN, { instant: true });
const fal = await startFalFake(FAL_KEY, { instant: true });
const refs = await startFake((_req, _res, json) => json(404, {}));
refs.files.set('product.png', { type: 'image/png', bytes: await png(400, 400, '#e01010') });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pipelines-'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pipelines-data-'));

say('pipelines bench: starting the service with workers (embedded PostgreSQL), fal and Replicate fakes answering instantly …');
const port = await freePort();
const config = loadConfig({
  ...process.env,
  PORT: String(port),
  PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'error',
  DEMO_WORKSPACE: '0',
  RATE_LIMIT_GENERATIONS: '100000',
  REPLICATE_API_BASE: replicate.url,
  REPLICATE_API_TOKEN: REPLICATE_TOKEN,
  FAL_QUEUE_BASE: fal.url,
  FAL_KEY,
  PROVIDER_POLL_MS: '10',
  OUTBOUND_ALLOW_IPS: '127.0.0.1',
});
const service = await startService({ config, workers: true });
const { ctx } = service;

/** One pipeline under test: its request, the fake that makes its model output, and that output's path at the fake. */
interface Case {
  name: string;
  body: Record<string, unknown>;
  fake: Fake;
  /** The fake's output file of a provider job. */
  outputPath(jobId: string): string;
  /** The goal on the overhead, with the finishing stage's time allowed in it. */
  goal: { seconds: number; plusFinishing: boolean };
}

const cases: Case[] = [
  {
    name: 'static ad (Flux 1.1 Pro on Replicate)',
    body: { type: 'static_ad', template_slug: 'bold-sale-banner', prompt: 'Lemonade summer sale' },
    fake: replicate,
    outputPath: (id) => `/files/${id}.png`,
    goal: { seconds: 1, plusFinishing: false },
  },
  {
    name: 'video ad (Veo 3 Fast on fal)',
    body: {
      type: 'video_ad',
      template_slug: 'product-demo-showcase',
      quality_tier: 'high',
      duration: 4,
      prompt: 'A red cube spins on a white table',
      reference_image_urls: [`${refs.url}/files/product.png`],
    },
    fake: fal,
    outputPath: (id) => `/files/${id}.mp4`,
    goal: { seconds: 2, plusFinishing: true },
  },
];

/** One run's figures, in seconds. */
interface Run {
  /** POST → completed_at (queue pickup, inputs, first frame, provider, finishing). */
  wall: number;
  /** The fake's first submission → its output file served. */
  providerInPipeline: number;
  /** The output file served → completed_at: the orchestration overhead. */
  overhead: number;
  /** The compositing stage as the job measured it (state.timings). */
  jobCompositing: number;
  /** The bare adapter call against the fake. */
  bare: number;
  /** The compositing stage run alone over the same model output. */
  finishing: number;
}

async function waitFinished(id: string) {
  for (;;) {
    const [g] = await ctx.sql`
      select id, org_id, type, status, spec, credits, state, error,
        extract(epoch from created_at) * 1000 as created_ms, extract(epoch from completed_at) * 1000 as completed_ms
      from generations where id = ${id}`;
    if (g.status === 'error') throw new Error(`generation ${id} failed: ${JSON.stringify(g.error)}`);
    if (g.status === 'completed') return g;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The request the worker sent the model, as the generating stage built it, for the same call made directly. */
function bareRequest(g: GenerationRow, seenBody: any): GenerationJob {
  const by = g.spec.madeBy!;
  const variant = findAiModel(by.modelSlug)!.variants.find((v) => v.id === by.variantId)!;
  const input = seenBody.input ?? seenBody; // Replicate's {input}, fal's input itself
  const image = typeof input.image_url === 'string' ? input.image_url : input.input_image;
  return {
    ...jobOf(ctx, g, {}),
    generationId: randomUUID(),
    type: 'ai_model',
    modelSlug: by.modelSlug,
    variantId: by.variantId,
    prompt: input.prompt,
    referenceImages: typeof image === 'string' ? [Buffer.from(image.split(',')[1], 'base64')] : [],
    logo: undefined,
    providerModel: variant.provider,
  };
}

/** The bare provider call: the adapter the worker uses, directly, against the same fake. */
async function bareProvider(g: GenerationRow, seenBody: unknown): Promise<number> {
  const job = bareRequest(g, seenBody);
  const variant = findAiModel(job.modelSlug!)!.variants.find((v) => v.id === job.variantId)!;
  const engine = engineFor(generationCapability(g.spec.output, variant.input_mode), {
    config: ctx.config,
    fetcher: ctx.fetcher,
    model: job.providerModel,
  });
  const workDir = fs.mkdtempSync(path.join(dir, 'bare-'));
  const t0 = performance.now();
  await engine.generate(job, { workDir, signal: AbortSignal.timeout(120_000) });
  const seconds = (performance.now() - t0) / 1000;
  fs.rmSync(workDir, { recursive: true, force: true });
  return seconds;
}

/** The template's compositing stage alone, over the same model output (a copy of the generation, its own storage keys). */
async function finishingAlone(g: GenerationRow, made: ModelOutput, fake: Fake, outputPath: string): Promise<number> {
  const copy: GenerationRow = { ...g, id: randomUUID() };
  const bytes = Buffer.from(await (await fetch(`${fake.url}${outputPath}`)).arrayBuffer());
  const modelKey = `bench/${copy.id}-model-output${path.extname(outputPath)}`;
  await ctx.storage.put(modelKey, bytes, made.contentType);
  const workDir = fs.mkdtempSync(path.join(dir, 'finish-'));
  // The compositing stage does not use the job (only the generating stage resumes its provider job).
  const job = { id: copy.id, data: { generationId: copy.id }, attempt: 1, lastAttempt: true } as RunningJob<GenerationJobData>;
  const stage = templateStages(ctx, copy, job, workDir).find((s) => s.name === 'compositing')!;
  const t0 = performance.now();
  const out = await stage.run(
    { app: ctx, row: copy, signal: AbortSignal.timeout(120_000), report: () => {}, madeBy: () => {} },
    // The outputs of the stages before it: the model's, stored under this run's key.
    { generating: { ...made, storageKey: modelKey } } as TemplateOutputs,
  );
  const seconds = (performance.now() - t0) / 1000;
  await ctx.storage.delete(modelKey);
  await ctx.storage.delete(out.storageKey);
  fs.rmSync(workDir, { recursive: true, force: true });
  return seconds;
}

async function runOnce(c: Case, key: string): Promise<Run> {
  const seenBefore = c.fake.seen.length;
  const res = await fetch(`${service.address}/api/v1/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(c.body),
  });
  if (res.status !== 200) throw new Error(`POST /generations: ${res.status} ${await res.text()}`);
  const id = ((await res.json()) as { generations: { id: string }[] }).generations[0].id;
  const row = await waitFinished(id);
  const g: GenerationRow = { id: row.id, orgId: row.org_id, type: row.type, status: row.status, spec: row.spec, credits: row.credits };
  const made = row.state.generating as ModelOutput;
  const seen = c.fake.seen.slice(seenBefore);
  const submission = seen.find((s) => s.method === 'POST')!;
  const served = seen.find((s) => s.path === c.outputPath(made.providerJobId!));
  if (!served) throw new Error(`the fake did not serve the output of ${made.providerJobId}`);
  const completed = Number(row.completed_ms);
  const run = {
    wall: (completed - Number(row.created_ms)) / 1000,
    providerInPipeline: (served.at - submission.at) / 1000,
    overhead: (completed - served.at) / 1000,
    jobCompositing: Number(row.state.timings?.compositing ?? Number.NaN),
    bare: 0,
    finishing: 0,
  };
  run.bare = await bareProvider(g, submission.body);
  run.finishing = await finishingAlone(g, made, c.fake, c.outputPath(made.providerJobId!));
  return run;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => sorted(xs)[Math.max(0, Math.ceil(xs.length * 0.9) - 1)];
const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;

try {
  const org = await createOrganization(ctx.db, { name: 'Bench', plan: 'paid', credits: 10_000_000 });
  const key = (await createApiKey(ctx.db, { orgId: org.id, scopes: ['generations:read', 'generations:write'] })).key;
  const results: { c: Case; runs: Run[] }[] = [];
  for (const c of cases) {
    say(`pipelines bench: ${c.name}: a warm-up run, then ${runs} runs …`);
    await runOnce(c, key);
    const done: Run[] = [];
    for (let i = 0; i < runs; i++) done.push(await runOnce(c, key));
    results.push({ c, runs: done });
  }

  const rows: [string, (r: Run) => number][] = [
    ['POST → finished record (wall)', (r) => r.wall],
    ['provider part in the pipeline (submit → output served)', (r) => r.providerInPipeline],
    ['bare provider call (adapter generate() alone)', (r) => r.bare],
    ['overhead: output served → finished record', (r) => r.overhead],
    ['finishing stage alone (same model output)', (r) => r.finishing],
    ["the job's compositing stage (as it measured it)", (r) => r.jobCompositing],
    ['overhead excluding the finishing stage alone', (r) => r.overhead - r.finishing],
    ["overhead excluding the job's compositing stage", (r) => r.overhead - r.jobCompositing],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const col = Math.max(...results.map(({ c }) => c.name.length)) + 3;
  say('');
  say(`pipelines bench: ${runs} runs each, median / p90; the fakes answer instantly (a job completes at its first poll)`);
  say(`${''.padEnd(width)}${results.map(({ c }) => c.name.padEnd(col)).join('')}`);
  for (const [label, f] of rows) {
    say(`${label.padEnd(width)}${results.map(({ runs: rs }) => `${ms(median(rs.map(f)))} / ${ms(p90(rs.map(f)))}`.padEnd(col)).join('')}`);
  }
  const ratio = (rs: Run[]) => median(rs.map((r) => r.overhead / r.bare));
  say(
    `${'RATIO overhead / bare provider (median)'.padEnd(width)}${results.map(({ runs: rs }) => ratio(rs).toFixed(1).padEnd(col)).join('')}`,
  );
  for (const { c, runs: rs } of results) {
    const measured = median(rs.map((r) => (c.goal.plusFinishing ? r.overhead - r.finishing : r.overhead)));
    const what = c.goal.plusFinishing ? 'overhead excluding the finishing stage' : 'overhead';
    say(
      `pipelines bench: ${c.name}: ${what} median ${ms(measured)} (goal < ${c.goal.seconds} s${c.goal.plusFinishing ? ' plus the finishing render' : ''}) ${measured < c.goal.seconds ? 'MET' : 'NOT MET'}`,
    );
  }
  say(
    `pipelines bench: load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} on ${os.cpus().length} cores (other work on the machine slows every figure)`,
  );
} finally {
  await service.stop();
  await Promise.all([replicate.close(), fal.close(), refs.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
