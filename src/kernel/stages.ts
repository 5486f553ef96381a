// The stage runner. A pipeline's job is an ordered list of named stages, each `{ name, weight,
// run(ctx, done) → output }`. Each stage's output is stored before the next starts (in the
// resource's jsonb state column under the stage's name, or by the stage itself in rows of its own:
// `stored` then reads it back), so an attempt resumes at the first unfinished stage and a finished
// stage never runs again. Progress comes from the list: a stage spans `weight` percentage points
// after the stages before it; its start and end are written at once (the stage is visible while
// it runs), and `report(fraction)` reports its way through it.
// Where the resource has a state column, the runner also keeps its record of the stages' runs
// there, under `runs` (stage name → StageRun): the attempts that started each stage and when it
// last started and finished. It is written when a stage starts and when it finishes, so after a
// crash it tells which stage was interrupted, in which attempt, and that the finished ones ran once.
// A stage that calls an engine says so (`madeBy(capability)`, or for an image model the stage
// chose, `madeBy('image', use)`): the record of its finished run names each engine
// (`engines`: capability → kind, provider, model; src/engines/engine-use.ts),
// beside the seconds it took (`timings`), so a record can say which engines made it. A finished
// stage made by a hosted engine is a paid provider call completed (`markPaid`: a cancel of the
// running work then refunds nothing); so is a hosted provider job whose result came back
// (src/engines/resumable.ts, through the JobStore's `paid`). Nothing is written once the resource
// is no longer running (canceled): every write is conditional on its status.
import type { AppContext } from '../context.ts';
import type { EngineUse } from '../engines/engine-use.ts';
import { engineUseFor, type RecordCapability } from '../engines/index.ts';
import type { JobTools } from '../jobs/define-job.ts';
import type { Resource } from './resource.ts';

export interface StageContext<Row> {
  app: AppContext;
  /** The resource's row, as the attempt started it. */
  row: Row;
  signal: AbortSignal;
  /** Reports `fraction` (0–1) of this stage as progress of the whole (at most once a second: JobTools). */
  report(fraction: number): void;
  /** Records that the stage's work is made by the engine the registry gives for `capability` here (none: nothing recorded). */
  madeBy(capability: RecordCapability): void;
  /**
   * Records the image or video model the stage had make its pictures or clips (the catalog's engine
   * for it: src/engines/image/model-picture.ts, src/engines/video/model-clip.ts).
   */
  madeBy(capability: 'image' | 'video', use: EngineUse): void;
}

export interface Stage<Row, Outputs, K extends keyof Outputs & string = keyof Outputs & string> {
  name: K;
  /** Percentage points of the whole progress the stage spans (a list's weights add up to at most 100). */
  weight: number;
  /** The fraction of the stage reported when it starts (default 0). */
  startAt?: number;
  /**
   * For a stage that stores its output itself (inside `run`, in columns or rows of its own): the
   * output an earlier attempt stored, or undefined. Without it the runner stores the output in the
   * resource's state column (a resource without one runs the stage on every attempt).
   */
  stored?(ctx: AppContext, row: Row): Promise<Outputs[K] | undefined> | Outputs[K] | undefined;
  /** The stage's work; `done` holds the outputs of the stages before it. Safe to run twice. */
  run(ctx: StageContext<Row>, done: Outputs): Promise<Outputs[K]>;
}

/** An ordered list of stages, one per key of `Outputs`. */
export type Stages<Row, Outputs> = readonly { [K in keyof Outputs & string]: Stage<Row, Outputs, K> }[keyof Outputs & string][];

/** The runner's record of one stage (in the state column under `runs`, by stage name). */
export interface StageRun {
  /** The attempts (the resource's attempt counter) that started the stage, in order. */
  attempts: number[];
  /** When the stage last started (ISO 8601). */
  startedAt: string;
  /** When it finished, in the last of `attempts`; absent while it has not. */
  finishedAt?: string;
  /**
   * The engines the finished run was made by (StageContext.madeBy), by capability; absent when it
   * called none (or ran before engines were recorded). The seconds it took are `timings[stage]`.
   */
  engines?: Partial<Record<RecordCapability | 'image' | 'video', EngineUse>>;
}

export interface StagesRun<Outputs> {
  outputs: Outputs;
  /** Seconds each stage took on the attempt that ran it (kept in the state column across attempts). */
  timings: Record<string, number>;
}

/**
 * Runs the stages an earlier attempt did not finish, in order, and returns every stage's output.
 * `row` is the resource's row as `start` returned it (its id and state column are read from it).
 */
export async function runStages<Row extends object, Outputs>(
  ctx: AppContext,
  resource: Resource<any, any>,
  row: Row,
  stages: Stages<Row, Outputs>,
  tools: JobTools,
): Promise<StagesRun<Outputs>> {
  const id = resource.idOf(row);
  const state = resource.stateOf(row);
  const timings: Record<string, number> = { ...((state?.timings as Record<string, number> | undefined) ?? {}) };
  const runs: Record<string, StageRun> = { ...((state?.runs as Record<string, StageRun> | undefined) ?? {}) };
  const attempt = resource.attemptOf(row);
  const outputs: Record<string, unknown> = {};
  let end = 0;
  for (const stage of stages) {
    const start = end;
    end += stage.weight;
    const stored = stage.stored ? await stage.stored(ctx, row) : state?.[stage.name];
    if (stored !== undefined && stored !== null) {
      outputs[stage.name] = stored;
      continue;
    }
    tools.signal.throwIfAborted();
    const at = (fraction: number) => start + stage.weight * Math.max(0, Math.min(1, fraction));
    // A stage's start and end go to the job's reporting and are written at once (JobTools writes at
    // most once a second), so the stage is visible as soon as it runs.
    const mark = async (percent: number) => {
      tools.progress(stage.name, percent);
      if (percent < 100) await resource.progress(ctx, id, stage.name, percent);
    };
    // Recorded before the stage shows: a stage seen running has its start recorded.
    const before = runs[stage.name]?.attempts ?? [];
    runs[stage.name] = { attempts: [...before, attempt ?? before.length + 1], startedAt: new Date().toISOString() };
    if (state) await resource.saveState(ctx, id, { runs });
    await mark(at(stage.startAt ?? 0));
    const t0 = performance.now();
    const engines: StageRun['engines'] = {};
    const madeBy = (capability: RecordCapability | 'image' | 'video', given?: EngineUse) => {
      const use = capability === 'image' || capability === 'video' ? given : engineUseFor(capability, ctx);
      if (use) engines[capability] = use;
    };
    const out = await stage.run(
      { app: ctx, row, signal: tools.signal, report: (fraction) => tools.progress(stage.name, at(fraction)), madeBy },
      outputs as Outputs,
    );
    await mark(at(1));
    timings[stage.name] = Math.round(performance.now() - t0) / 1000;
    runs[stage.name] = {
      ...runs[stage.name],
      finishedAt: new Date().toISOString(),
      ...(Object.keys(engines).length ? { engines } : {}),
    };
    if (state) await resource.saveState(ctx, id, { ...(stage.stored ? {} : { [stage.name]: out }), timings, runs });
    // A stage a hosted engine made has completed a paid provider call (the cancel refund rule).
    const hosted = Object.values(engines).find((use) => use?.kind === 'hosted');
    if (hosted) await resource.markPaid(ctx, id, hosted.provider);
    outputs[stage.name] = out;
  }
  return { outputs: outputs as Outputs, timings };
}
