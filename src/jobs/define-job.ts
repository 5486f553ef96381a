// defineJob: one declaration per kind of job (after supabase/storage's Event classes), from which
// the engine derives everything a job needs:
//   - its queue and dead-letter queue (`<name>-dead`), created or updated at start-up;
//   - retries with backoff, the heartbeat (a killed worker's job is retried elsewhere) and the
//     expiry, as pg-boss queue settings;
//   - `concurrency` worker slots per process, each taking the next waiting job the moment it
//     finishes one (see `start` for why pg-boss alone does not);
//   - progress reporting (a stage and a percent, written at most once a second);
//   - refund on terminal failure: `onTerminalFailure` runs when the last attempt fails, when a
//     failure is not worth retrying, or when the dead-letter queue receives the job (its workers
//     were lost every time). A resource's fail (src/kernel/resource.ts) is a conditional update
//     that refunds once, so a second call (a repeated delivery) changes nothing.
// Each declaration names its queue and the version of its payload; payloads carry `$version`
// (queue.ts), and a job newer than this worker knows is left for another.
import type { JobWithMetadata, PgBoss, QueueOptions } from 'pg-boss';
import type { components } from '../../generated/openapi.d.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { deadLetterQueue, type QueueRef } from './queue.ts';
import { jobDuration, type JobOutcome } from '../metrics.ts';

export type FailureDetail = components['schemas']['FailureDetail'];

/** A setting fixed in the declaration, or read from the configuration at start-up. */
type FromConfig<T> = T | ((config: Config) => T);
const fromConfig = <T>(v: FromConfig<T>, config: Config): T => (typeof v === 'function' ? (v as (c: Config) => T)(config) : v);

/**
 * A failure a job can describe: what the resource's error object says, and whether another
 * attempt may succeed (a network hiccup, a 5xx) or not (the input is gone or refused).
 */
export class JobFailure extends Error {
  readonly detail: FailureDetail;
  readonly retry: boolean;
  constructor(detail: FailureDetail, retry = false) {
    super(detail.message);
    this.name = 'JobFailure';
    this.detail = detail;
    this.retry = retry;
  }
}

/** One delivery of a job, as its `run` sees it. */
export interface RunningJob<Data> {
  id: string;
  data: Data;
  /** 1 for the first attempt. */
  attempt: number;
  /** No retry follows this attempt. */
  lastAttempt: boolean;
}

export interface JobTools {
  /** Aborted when pg-boss gives up on this attempt (shutdown, expiry, its claim taken over). */
  signal: AbortSignal;
  /** Progress of a stage, 0–100: written at most once a second (at once on a new stage), never 100 (completion is). */
  progress(stage: string, percent: number): void;
  /** Keys added to the context of this attempt's terminal failure, should it come to that (e.g. credits_refunded). */
  annotate(context: Record<string, unknown>): void;
}

export interface JobDeclaration<Data extends object> {
  /** The queue's name (existing queued jobs are found by it: never rename a queue that has jobs). */
  name: string;
  /**
   * The version of the payload its jobs carry as `$version`. Bump it when the payload's shape
   * changes, and teach `run` to read the previous version too (jobs queued before a deploy are
   * worked after it).
   */
  version: number;
  /** Jobs of this queue one worker process runs at once. */
  concurrency: FromConfig<number>;
  /** Retries after the first attempt, the first retry's delay in seconds, and exponential backoff (capped at maxDelay seconds). */
  retry: FromConfig<{ limit: number; delay: number; backoff: boolean; maxDelay?: number }>;
  /** A job whose worker stops heartbeating this long is retried elsewhere (none: no heartbeat). */
  heartbeatSeconds?: FromConfig<number>;
  /** Longest an attempt may run; then it is aborted and retried (or dead-lettered). */
  expireInSeconds: number;
  /**
   * The dead-letter queue, for jobs whose every attempt was lost: the error its resource gets.
   * Default: one when there is an `onTerminalFailure`, with code `worker_lost`.
   */
  deadLetter?: false | { message: string };
  /** A cron schedule sending one job each time (housekeeping). */
  schedule?: string;
  run(ctx: AppContext, job: RunningJob<Data>, tools: JobTools): Promise<void>;
  /** Writes a progress report (`tools.progress`) where clients read it. */
  progress?(ctx: AppContext, data: Data, percent: number, stage: string): Promise<unknown>;
  /** Turns what `run` threw into the resource's error and whether to retry. Default: JobFailure's, else retryable. */
  describeFailure?(err: unknown): { detail: FailureDetail; retry: boolean };
  /** The job will not succeed: fail its resource and refund (idempotent: may be called again). */
  onTerminalFailure?(ctx: AppContext, data: Data, detail: FailureDetail): Promise<unknown>;
}

export interface JobDefinition<Data extends object = object> extends QueueRef {
  readonly name: string;
  /** Undefined for jobs without one. */
  readonly deadLetterQueue: string | undefined;
  readonly version: number;
  /** Creates (or brings up to date) the dead-letter queue, then the queue. */
  createQueues(boss: PgBoss, config: Config, existing: Set<string>): Promise<void>;
  /** Starts this process's worker slots (and the dead-letter worker and schedule). */
  start(boss: PgBoss, ctx: AppContext): Promise<void>;
  /** Runs one delivery as a worker slot does (what pg-boss calls). */
  handle(ctx: AppContext, job: JobWithMetadata<Data>): Promise<void>;
  readonly declaration: JobDeclaration<Data>;
}

/** A job definition of any payload (for lists of them). */
export type AnyJob = JobDefinition<any>;

/**
 * How long an idle slot waits between looks at its queue: JOB_POLL_SECONDS. New jobs wake it at
 * once (NOTIFY); this backstop finds what no notification announced: retries becoming due, jobs
 * released by a lost worker, jobs sent while the listener reconnected. When LISTEN/NOTIFY is
 * unavailable, at most POLL_SECONDS.
 */
const POLL_SECONDS = 2;
const workOptions = (config: Config) =>
  ({
    batchSize: 1,
    includeMetadata: true,
    pollingIntervalSeconds: Math.min(POLL_SECONDS, config.jobPollSeconds),
    notifyPollingIntervalSeconds: config.jobPollSeconds,
  }) as const;
type WorkOptions = ReturnType<typeof workOptions>;

function defaultDescribe(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  const message = err instanceof Error ? err.message : String(err);
  return { detail: { code: 'job_failed', message: message.slice(0, 1900), retryable: true, context: {} }, retry: true };
}

async function ensureQueue(
  boss: PgBoss,
  name: string,
  options: QueueOptions & { deadLetter?: string; notify?: boolean },
  existing: Set<string>,
) {
  if (existing.has(name)) return void (await boss.updateQueue(name, options));
  await boss.createQueue(name, options).catch(async (err) => {
    // Created concurrently by another process.
    if (!(await boss.getQueue(name))) throw err;
  });
  existing.add(name);
}

export function defineJob<Data extends object>(decl: JobDeclaration<Data>): JobDefinition<Data> {
  const dead = decl.deadLetter === false || (!decl.deadLetter && !decl.onTerminalFailure) ? undefined : deadLetterQueue(decl.name);
  const handle = (ctx: AppContext, job: JobWithMetadata<Data>) => handleDelivery(decl, ctx, job);
  return {
    name: decl.name,
    deadLetterQueue: dead,
    version: decl.version,
    declaration: decl,
    handle,
    createQueues: (boss, config, existing) => createJobQueues(decl, dead, boss, config, existing),
    start: (boss, ctx) => startWorkers(decl, dead, handle, boss, ctx),
  };
}

/**
 * One delivery: its payload version checked, `run` with the job's tools, and a failure either
 * thrown back to pg-boss (to be retried) or, when no retry follows, settled by `onTerminalFailure`.
 */
async function handleDelivery<Data extends object>(decl: JobDeclaration<Data>, ctx: AppContext, job: JobWithMetadata<Data>): Promise<void> {
  const version = decl.version;
  const sent = (job.data as { $version?: number }).$version ?? 1;
  if (sent > version) throw new Error(`${decl.name} job ${job.id} has payload version ${sent}; this worker knows up to ${version}`);
  const attempt = job.retryCount + 1;
  const lastAttempt = job.retryCount >= job.retryLimit;
  const annotations: Record<string, unknown> = {};
  const tools = jobTools(decl, ctx, job, annotations);
  // The attempt's duration by outcome (src/metrics.ts): a throw is retried unless it was the last attempt.
  const started = performance.now();
  let outcome: JobOutcome = lastAttempt ? 'failed' : 'retried';
  try {
    await decl.run(ctx, { id: job.id, data: job.data, attempt, lastAttempt }, tools);
    outcome = 'completed';
  } catch (err) {
    // An attempt pg-boss gave up on (shutdown, expiry, claim taken over) is pg-boss's to settle:
    // it is retried, or reaches the dead-letter queue.
    if (job.signal.aborted || !decl.onTerminalFailure) throw err;
    const { detail, retry } = (decl.describeFailure ?? defaultDescribe)(err);
    if (retry && !lastAttempt) {
      ctx.log.warn({ queue: decl.name, job: job.id, attempt, err: detail.message }, `${decl.name} attempt failed; it will be retried`);
      throw err;
    }
    outcome = 'failed';
    await decl.onTerminalFailure(ctx, job.data, { ...detail, context: { ...detail.context, ...annotations, attempts: attempt } });
  } finally {
    jobDuration.observe({ queue: decl.name, outcome }, (performance.now() - started) / 1000);
  }
}

/** The tools of one attempt: its abort signal, progress reports (at most once a second per stage), annotations of its failure. */
function jobTools<Data extends object>(
  decl: JobDeclaration<Data>,
  ctx: AppContext,
  job: JobWithMetadata<Data>,
  annotations: Record<string, unknown>,
): JobTools {
  let lastStage: string | undefined;
  let lastReport = 0;
  return {
    signal: job.signal,
    progress(stage, percent) {
      if (!decl.progress || !(percent < 100)) return;
      const now = Date.now();
      if (stage === lastStage && now - lastReport < 1000) return;
      lastStage = stage;
      lastReport = now;
      decl.progress(ctx, job.data, Math.max(0, percent), stage).catch(() => {});
    },
    annotate(context) {
      Object.assign(annotations, context);
    },
  };
}

/** The job's dead-letter queue (first: the queue refers to it), then its queue with the declared retries, heartbeat and expiry. */
async function createJobQueues<Data extends object>(
  decl: JobDeclaration<Data>,
  dead: string | undefined,
  boss: PgBoss,
  config: Config,
  existing: Set<string>,
): Promise<void> {
  if (dead) await ensureQueue(boss, dead, { retryLimit: 5, expireInSeconds: 120, notify: true }, existing);
  const retry = fromConfig(decl.retry, config);
  await ensureQueue(
    boss,
    decl.name,
    {
      retryLimit: retry.limit,
      retryDelay: retry.delay,
      retryBackoff: retry.backoff,
      ...(retry.maxDelay !== undefined ? { retryDelayMax: retry.maxDelay } : {}),
      ...(decl.heartbeatSeconds !== undefined ? { heartbeatSeconds: fromConfig(decl.heartbeatSeconds, config) } : {}),
      expireInSeconds: decl.expireInSeconds,
      ...(dead ? { deadLetter: dead } : {}),
      notify: true,
    },
    existing,
  );
}

/** This process's worker slots, the dead-letter worker (failing the resource of a job every worker lost) and the schedule. */
async function startWorkers<Data extends object>(
  decl: JobDeclaration<Data>,
  dead: string | undefined,
  handle: (ctx: AppContext, job: JobWithMetadata<Data>) => Promise<void>,
  boss: PgBoss,
  ctx: AppContext,
): Promise<void> {
  // Why slots of our own: pg-boss wakes an idle worker on a NOTIFY, but PostgreSQL delivers one
  // notification per transaction (and pg-boss sends one per insert statement), and a worker
  // notified while busy only remembers that it was. A worker that has taken a job (batch of 1)
  // then waits out the notify backstop poll (30 s by default) before looking again, so a
  // backlog of 10 jobs queued in one request drained at one job per 30 s. pg-boss's burst
  // modes do not help at a batch size of 1 (burstWhenBatchFull is ignored; burstWhenReadyExceeds
  // reads a queue count cached for up to a minute). So each slot is a worker of its own, and a
  // slot that finished a job wakes itself: it fetches again at once, and only an empty fetch
  // sends it back to waiting (no polling of an empty queue faster than the backstop).
  const slots = fromConfig(decl.concurrency, ctx.config);
  const options = workOptions(ctx.config);
  for (let i = 0; i < slots; i++) {
    let slot: string | undefined;
    slot = await boss.work<Data, unknown, WorkOptions>(decl.name, options, async ([job]) => {
      try {
        await handle(ctx, job);
      } finally {
        // Set while the slot is busy, so it fetches again the moment this job is settled.
        if (slot) boss.notifyWorker(slot);
      }
    });
  }
  if (dead) {
    const lostMessage = (decl.deadLetter && decl.deadLetter.message) || `The ${decl.name} job was abandoned by its workers too many times`;
    await boss.work<Data, unknown, WorkOptions>(dead, options, async ([job]) => {
      ctx.log.warn({ queue: decl.name, job: job.sourceId ?? job.id }, `${decl.name} job dead-lettered; failing its resource`);
      const attempts = job.sourceRetryCount == null ? {} : { attempts: job.sourceRetryCount + 1 };
      await decl.onTerminalFailure!(ctx, job.data, { code: 'worker_lost', message: lostMessage, retryable: true, context: attempts });
    });
  }
  if (decl.schedule) await boss.schedule(decl.name, decl.schedule);
}

/** Creates every job's queues (each process does: API nodes send into them). */
export async function createQueues(boss: PgBoss, config: Config, jobs: readonly AnyJob[]): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  for (const job of jobs) await job.createQueues(boss, config, existing);
}
