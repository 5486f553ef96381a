// The resource lifecycle: one declaration per kind of resource a job makes (a generation, a
// slideshow, a faceless video, a reference analysis, an editor export, a social publication's
// target), from which every step of its life is derived, so no pipeline writes them itself:
//   start     an attempt begins: pending/running → running, attempts + 1, started_at kept from the
//             first attempt; undefined when the resource is finished (a repeated delivery);
//   progress  stage and percent (0–99; completion writes 100), forward only where the resource
//             reports stages (services/progress.ts), only while it is running;
//   saveState what a stage made and the runner's record of its runs, merged into the resource's
//             jsonb state column (stages.ts);
//   complete  one transaction: the output's media row, the conditional status update, the caller's
//             extra rows and the webhook event; false (nothing written) when it is not running;
//   fail      one transaction: the conditional status update, the refund of its credits (once: a
//             second call finds it failed already) and the webhook event;
//   cancel    where a resource can be cancelled: canceled at once, its queued job cancelled, queued
//             or running (its worker notices: cancelable.ts), or with `cancel.queuedOnly` only
//             while queued (a social publication's target). Paid work is refunded in the same
//             transaction (`cancel.refund`): in full, or with 'unless-paid' in full unless the
//             state records a completed paid provider call (`markPaid`), then not at all. The row
//             lock orders it with a worker's `start` and `complete`: exactly one of them wins;
//   markPaid  records in the state column that a paid provider call completed (the refund rule).
// Jobs are delivered at least once, so every step is a conditional update, safe to run twice.
import { and, eq, inArray, sql, TransactionRollbackError, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { media } from '../db/schema/index.ts';
import type { FailureDetail } from '../jobs/define-job.ts';
import { ApiError } from '../errors.ts';
import { applyCreditChange } from '../services/billing/credits.ts';
import type { LedgerReason } from '../services/billing/ledger.ts';
import { forwardOnly } from '../services/progress.ts';
import type { WebhookEventType } from '../services/webhooks/endpoints.ts';
import { recordTerminalEvent, type TerminalEvent } from '../services/webhooks/events.ts';

type RowOf<T extends PgTable> = T['$inferSelect'];
type ColumnKey<T extends PgTable> = keyof RowOf<T> & string;
export type MediaValues = typeof media.$inferInsert;
export type Outcome = 'completed' | 'failed' | 'canceled';

/**
 * The key of the state column recording that a paid provider call of the work completed
 * (`markPaid`): `{ at, provider }`. A running cancel refunds nothing once it is there.
 */
export const PAID_CALL_KEY = 'paidCall';

export interface ResourceDeclaration<T extends PgTable, Id extends string | number> {
  /** What the resource is called in logs ('generation', 'export', …). */
  name: string;
  table: T;
  /** Its columns, by their drizzle property names. Steps whose column a resource lacks are skipped. */
  columns: {
    id: ColumnKey<T>;
    org: ColumnKey<T>;
    status: ColumnKey<T>;
    /** The FailureDetail of a failed resource. */
    error: ColumnKey<T>;
    updatedAt?: ColumnKey<T>;
    /** Counts attempts; without it `start` only reads the resource (nothing is written). */
    attempts?: ColumnKey<T>;
    startedAt?: ColumnKey<T>;
    progress?: ColumnKey<T>;
    stage?: ColumnKey<T>;
    /** jsonb: what finished stages stored (`saveState`, stages.ts). */
    state?: ColumnKey<T>;
    completedAt?: ColumnKey<T>;
    /** The credits charged, refunded on failure when `refund` is declared. */
    credits?: ColumnKey<T>;
    refundedAt?: ColumnKey<T>;
    /** The output's media row (`complete` with `media`). */
    output?: ColumnKey<T>;
    /** The pg-boss job id (`cancel` cancels a queued one); the id column where the job has the resource's id. */
    jobId?: ColumnKey<T>;
  };
  statuses: {
    pending?: RowOf<T>[string];
    running: RowOf<T>[string];
    completed: RowOf<T>[string];
    failed: RowOf<T>[string];
    canceled?: RowOf<T>[string];
  };
  /** The stage names in order, where the resource reports its stage: progress is then forward only. */
  stages?: readonly string[];
  /** The ledger row of a failure's refund. */
  refund?: { reason: LedgerReason; reference(id: Id): string };
  /**
   * The webhook event of a terminal transition: its types, with `view` as its data; or a function
   * that decides (undefined: no event). None: no event.
   */
  events?:
    | { completed: WebhookEventType; failed: WebhookEventType; canceled?: WebhookEventType }
    | ((ctx: AppContext, tx: Tx, row: RowOf<T>, outcome: Outcome) => Promise<TerminalEvent | undefined>);
  /** The resource as its GET operation returns it, read in the transaction that made it terminal. */
  view?(ctx: AppContext, tx: Tx, row: RowOf<T>): Promise<TerminalEvent['data']>;
  /** Further columns a failure sets (e.g. clearing the stage). */
  failSet?(): Partial<T['$inferInsert']>;
  /** Where the resource can be cancelled (`Resource.cancel`). */
  cancel?: CancelDeclaration<T, Id>;
}

export interface CancelDeclaration<T extends PgTable, Id extends string | number> {
  /** The queue of its job: one, or the row's (a generation's image or video queue). */
  queue: string | ((row: RowOf<T>) => string);
  /** The error for one already finished (completed or failed). */
  conflict(row: RowOf<T>, id: Id): Error;
  /**
   * Only work not started yet can be cancelled: the pending status, or where there is none, the
   * running status before its first attempt (the attempt counter at 0). `running` is the error for
   * work already started. Without it, pending and running work can be cancelled.
   */
  queuedOnly?: { running(row: RowOf<T>, id: Id): Error };
  /**
   * Cancelling refunds the credits in full, once (the declaration's `refund` ledger row, refunded_at
   * set); with 'unless-paid' only when no paid provider call of the work has completed (`markPaid`),
   * else nothing is refunded (refunded_at stays null).
   */
  refund?: boolean | 'unless-paid';
  /** A webhook event the cancellation makes due, written in its transaction (a publication settled by it). */
  event?(ctx: AppContext, tx: Tx, row: RowOf<T>): Promise<TerminalEvent | undefined>;
}

/**
 * The cancel declaration of paid work that can be cancelled only while queued, refunded in full:
 * its 409 conflicts name `what` ('Generation') and the contract's `resource` ('generation'). Work
 * already running answers that it can no longer be canceled; finished work, its status.
 */
export function cancelQueued<T extends PgTable, Id extends string | number>(
  what: string,
  resource: string,
  queue: CancelDeclaration<T, Id>['queue'],
  field = 'path.id',
): CancelDeclaration<T, Id> {
  const refused = stateConflict<T, Id>(what, resource, field);
  return {
    queue,
    refund: true,
    conflict: (row, id) => refused(row, id, 'is already {status}; only queued work can be canceled'),
    queuedOnly: {
      running: (row, id) => refused(row, id, 'is already running and can no longer be canceled; only queued work can be canceled'),
    },
  };
}

/**
 * The cancel declaration of paid work that can be cancelled queued or running: queued work and
 * running work with no completed paid provider call are refunded in full, running work after one
 * is not refunded ('unless-paid'); its worker notices within about a second (cancelable.ts). Its
 * 409 conflict (finished work) names `what` ('Generation') and the contract's `resource`.
 */
export function cancelWork<T extends PgTable, Id extends string | number>(
  what: string,
  resource: string,
  queue: CancelDeclaration<T, Id>['queue'],
  field = 'path.id',
): CancelDeclaration<T, Id> {
  const refused = stateConflict<T, Id>(what, resource, field);
  return {
    queue,
    refund: 'unless-paid',
    conflict: (row, id) => refused(row, id, 'is already {status}; only queued or running work can be canceled'),
  };
}

/** A 409 conflict naming `what` `id`, its status ('{status}' in `says`) and the contract's `resource`. */
function stateConflict<T extends PgTable, Id extends string | number>(what: string, resource: string, field: string) {
  return (row: RowOf<T>, id: Id, says: string) => {
    const status = (row as { status?: unknown }).status;
    return new ApiError('conflict', `${what} ${id} ${says.replace('{status}', String(status))}`, { resource, field, status });
  };
}

export interface CompleteOptions<T extends PgTable> {
  /** Further columns the completion sets. */
  set?: Partial<T['$inferInsert']>;
  /** The output, recorded as a media row whose id goes into the `output` column. */
  media?: MediaValues;
  /** Further rows written in the same transaction, after the status update. */
  extra?(tx: Tx, row: RowOf<T>): Promise<unknown>;
}

export interface Resource<T extends PgTable, Id extends string | number> {
  readonly declaration: ResourceDeclaration<T, Id>;
  /** Starts an attempt; undefined when the resource is finished. */
  start(ctx: AppContext, id: Id): Promise<RowOf<T> | undefined>;
  /** Reports a stage and its percent of the whole (written only while running; forward only with `stages`). */
  progress(ctx: AppContext, id: Id, stage: string, percent: number): Promise<void>;
  /** Merges `patch` into the state column while the resource is running. */
  saveState(ctx: AppContext, id: Id, patch: Record<string, unknown>): Promise<void>;
  /**
   * Records that a paid provider call of the running resource completed (`PAID_CALL_KEY` in its
   * state, the first one kept): a cancel then refunds nothing ('unless-paid').
   */
  markPaid(ctx: AppContext, id: Id, provider: string): Promise<void>;
  /** Whether the row's state records a completed paid provider call. */
  paidOf(row: object): boolean;
  /** Writes columns of a running resource (a resume point such as a provider's job id). */
  record(ctx: AppContext, id: Id, set: Partial<T['$inferInsert']>): Promise<void>;
  /** Completes a running resource, once: false when it was not running (nothing is written). */
  complete(ctx: AppContext, id: Id, options?: CompleteOptions<T>): Promise<boolean>;
  /** Fails a pending or running resource and refunds it, once: false when it had finished. */
  fail(ctx: AppContext, id: Id, detail: FailureDetail): Promise<boolean>;
  /**
   * Cancels a pending or running resource of the workspace (`scope`: further conditions of the
   * lookup), or with `cancel.queuedOnly` one not started yet (a started one throws its `running`
   * error), refunding it in full with `cancel.refund`. Undefined when there is none; `previous` is
   * its status before (canceled: it already was, and nothing more is done); a finished one throws
   * the declaration's conflict error.
   */
  cancel(ctx: AppContext, orgId: string, id: Id, scope?: SQL): Promise<{ row: RowOf<T>; previous: string } | undefined>;
  /** The current status (undefined when the resource is gone). */
  statusOf(ctx: AppContext, id: Id): Promise<string | undefined>;
  /** The id and the stored stage state of a row. */
  idOf(row: object): Id;
  stateOf(row: object): Record<string, unknown> | undefined;
  /** The attempt a row started (its attempt counter); undefined where the resource counts none. */
  attemptOf(row: object): number | undefined;
}

// drizzle's rollback error is named DrizzleError, so it is told by its class (a check of
// `err.name === 'TransactionRollbackError'` never matches).
const isRollback = (err: unknown) => err instanceof TransactionRollbackError;

export function defineResource<T extends PgTable, Id extends string | number>(declaration: ResourceDeclaration<T, Id>): Resource<T, Id> {
  return new DeclaredResource(declaration);
}

type Db = AppContext['db'] | Tx;
const opt = (key: string | undefined, value: unknown): Record<string, unknown> => (key ? { [key]: value } : {});
const field = (row: object, key: string) => (row as Record<string, unknown>)[key];

class DeclaredResource<T extends PgTable, Id extends string | number> implements Resource<T, Id> {
  readonly declaration: ResourceDeclaration<T, Id>;
  /** The statuses a resource may still fail or be cancelled in: pending and running. */
  private readonly active: string[];

  constructor(declaration: ResourceDeclaration<T, Id>) {
    this.declaration = declaration;
    const { pending, running } = declaration.statuses;
    this.active = [pending, running].filter((s) => s !== undefined) as string[];
  }

  private get c() {
    return this.declaration.columns;
  }
  private col(key: string): PgColumn {
    return (this.declaration.table as unknown as Record<string, PgColumn>)[key];
  }
  private byId(id: Id) {
    return eq(this.col(this.c.id), id);
  }
  private isRunning() {
    return eq(this.col(this.c.status), this.declaration.statuses.running);
  }
  private touched(): Record<string, unknown> {
    return opt(this.c.updatedAt, new Date());
  }
  // drizzle's builders are typed per table; the kernel writes any declared table by column name.
  private update(db: Db, values: Record<string, unknown>) {
    return db.update(this.declaration.table).set({ ...values, ...this.touched() } as never);
  }
  private select(db: Db) {
    return db.select().from(this.declaration.table as never);
  }

  async start(ctx: AppContext, id: Id): Promise<RowOf<T> | undefined> {
    const { c } = this;
    if (!c.attempts) {
      const [row] = (await this.select(ctx.db).where(this.byId(id))) as RowOf<T>[];
      return row && this.active.includes(field(row, c.status) as string) ? row : undefined;
    }
    const [row] = (await this.update(ctx.db, {
      [c.status]: this.declaration.statuses.running,
      [c.attempts]: sql`${this.col(c.attempts)} + 1`,
      ...opt(c.startedAt, c.startedAt && sql`coalesce(${this.col(c.startedAt)}, now())`),
    })
      .where(and(this.byId(id), inArray(this.col(c.status), this.active)))
      .returning()) as RowOf<T>[];
    return row;
  }

  async progress(ctx: AppContext, id: Id, stage: string, percent: number): Promise<void> {
    const { c } = this;
    const { stages } = this.declaration;
    if (!c.progress) return;
    const progress = Math.max(0, Math.min(99, Math.round(percent)));
    const forward =
      c.stage && stages ? forwardOnly({ progress: this.col(c.progress), stage: this.col(c.stage) }, progress, stage, stages) : undefined;
    await this.update(ctx.db, { [c.progress]: progress, ...opt(c.stage, stage) }).where(and(this.byId(id), this.isRunning(), forward));
  }

  async saveState(ctx: AppContext, id: Id, patch: Record<string, unknown>): Promise<void> {
    const state = this.c.state;
    if (!state) throw new Error(`${this.declaration.name} has no state column`);
    await this.update(ctx.db, { [state]: sql`${this.col(state)} || ${JSON.stringify(patch)}::jsonb` }).where(
      and(this.byId(id), this.isRunning()),
    );
  }

  async markPaid(ctx: AppContext, id: Id, provider: string): Promise<void> {
    const state = this.c.state;
    if (!state) return;
    const paid = { [PAID_CALL_KEY]: { at: new Date().toISOString(), provider } };
    // The first record is kept: `paid || state` lets the stored key win.
    await this.update(ctx.db, { [state]: sql`${JSON.stringify(paid)}::jsonb || ${this.col(state)}` }).where(
      and(this.byId(id), this.isRunning()),
    );
  }

  paidOf(row: object): boolean {
    const state = this.stateOf(row);
    return !!state && state[PAID_CALL_KEY] !== undefined && state[PAID_CALL_KEY] !== null;
  }

  async record(ctx: AppContext, id: Id, set: Partial<T['$inferInsert']>): Promise<void> {
    await this.update(ctx.db, set).where(and(this.byId(id), this.isRunning()));
  }

  async complete(ctx: AppContext, id: Id, options: CompleteOptions<T> = {}): Promise<boolean> {
    const { c } = this;
    return ctx.db
      .transaction(async (tx) => {
        // The media row first: a completed resource has its output (a check constraint).
        const [m] = options.media ? await tx.insert(media).values(options.media).returning({ id: media.id }) : [];
        const [row] = (await this.update(tx, {
          [c.status]: this.declaration.statuses.completed,
          ...opt(c.progress, 100),
          ...opt(c.stage, null),
          ...opt(c.completedAt, new Date()),
          ...(m ? opt(c.output, m.id) : {}),
          ...options.set,
        })
          .where(and(this.byId(id), this.isRunning()))
          .returning()) as RowOf<T>[];
        if (!row) tx.rollback();
        await options.extra?.(tx, row);
        await this.emit(ctx, tx, row, 'completed');
        return true;
      })
      .catch((err: unknown) => {
        if (isRollback(err)) return false;
        throw err;
      });
  }

  async fail(ctx: AppContext, id: Id, detail: FailureDetail): Promise<boolean> {
    const { c } = this;
    const { refund } = this.declaration;
    return ctx.db.transaction(async (tx) => {
      const [row] = (await this.update(tx, {
        [c.status]: this.declaration.statuses.failed,
        [c.error]: detail,
        ...(refund ? opt(c.refundedAt, new Date()) : {}),
        ...this.declaration.failSet?.(),
      })
        .where(and(this.byId(id), inArray(this.col(c.status), this.active)))
        .returning()) as RowOf<T>[];
      if (!row) return false;
      await this.refundIn(tx, row);
      await this.emit(ctx, tx, row, 'failed');
      return true;
    });
  }

  async cancel(ctx: AppContext, orgId: string, id: Id, scope?: SQL): Promise<{ row: RowOf<T>; previous: string } | undefined> {
    const { name, cancel, statuses } = this.declaration;
    if (!cancel || statuses.canceled === undefined) throw new Error(`${name} cannot be cancelled`);
    // The row lock orders a cancel and a worker's `start` (a conditional update of the same row):
    // whichever comes second sees what the first one wrote.
    const done = await ctx.db.transaction(async (tx) => {
      const [cur] = (await this.select(tx)
        .where(and(this.byId(id), eq(this.col(this.c.org), orgId), scope))
        .for('update')) as RowOf<T>[];
      if (!cur) return undefined;
      const previous = field(cur, this.c.status) as string;
      if (previous === statuses.canceled) return { row: cur, previous, queued: false };
      if (!this.active.includes(previous)) throw cancel.conflict(cur, id);
      const queued = this.notStarted(cur);
      if (cancel.queuedOnly && !queued) throw cancel.queuedOnly.running(cur, id);
      const refund = cancel.refund === true || (cancel.refund === 'unless-paid' && (queued || !this.paidOf(cur)));
      const [row] = (await this.update(tx, {
        [this.c.status]: statuses.canceled,
        ...opt(this.c.completedAt, new Date()),
        ...(refund ? opt(this.c.refundedAt, new Date()) : {}),
      })
        .where(this.byId(id))
        .returning()) as RowOf<T>[];
      if (refund) await this.refundIn(tx, row);
      const event = await cancel.event?.(ctx, tx, row);
      if (event) await recordTerminalEvent(ctx, tx, event);
      else await this.emit(ctx, tx, row, 'canceled');
      return { row, previous, queued };
    });
    const jobId = done?.queued && this.c.jobId ? (field(done.row, this.c.jobId) as string | null) : null;
    if (done && jobId) {
      // Best effort: a job that still runs finds the resource canceled and does nothing.
      const queue = typeof cancel.queue === 'function' ? cancel.queue(done.row) : cancel.queue;
      await ctx.queue.boss
        .cancel(queue, jobId)
        .catch((err: unknown) => ctx.log.warn({ [name]: id, err: String(err) }, `could not cancel the ${name} job`));
    }
    return done && { row: done.row, previous: done.previous };
  }

  /** Whether no attempt of the resource has started: pending, or (without a pending status) running with no attempt counted. */
  private notStarted(row: RowOf<T>): boolean {
    const { pending, running } = this.declaration.statuses;
    const status = field(row, this.c.status);
    if (pending !== undefined) return status === pending;
    return status === running && this.c.attempts !== undefined && Number(field(row, this.c.attempts)) === 0;
  }

  /** Refunds the row's credits in full in `tx` (the declared ledger row); nothing without `refund` or credits. */
  private async refundIn(tx: Tx, row: RowOf<T>): Promise<void> {
    const { c } = this;
    const { refund } = this.declaration;
    const credits = refund && c.credits ? Number(field(row, c.credits)) : 0;
    if (!refund || credits <= 0) return;
    await applyCreditChange(tx, {
      orgId: field(row, c.org) as string,
      delta: credits,
      reason: refund.reason,
      reference: refund.reference(field(row, c.id) as Id),
    });
  }

  async statusOf(ctx: AppContext, id: Id): Promise<string | undefined> {
    const [row] = (await ctx.db
      .select({ status: this.col(this.c.status) })
      .from(this.declaration.table as never)
      .where(this.byId(id))) as { status: string }[];
    return row?.status;
  }

  idOf(row: object): Id {
    return field(row, this.c.id) as Id;
  }

  stateOf(row: object): Record<string, unknown> | undefined {
    return this.c.state ? ((field(row, this.c.state) ?? {}) as Record<string, unknown>) : undefined;
  }

  attemptOf(row: object): number | undefined {
    return this.c.attempts ? Number(field(row, this.c.attempts)) : undefined;
  }

  /** The terminal transition's webhook event, in its transaction. */
  private async emit(ctx: AppContext, tx: Tx, row: RowOf<T>, outcome: Outcome): Promise<void> {
    const { events, view } = this.declaration;
    if (!events) return;
    if (typeof events !== 'function' && !events[outcome]) return;
    const event =
      typeof events === 'function'
        ? outcome === 'canceled'
          ? undefined
          : await events(ctx, tx, row, outcome)
        : { orgId: field(row, this.c.org) as string, type: events[outcome]!, data: await view!(ctx, tx, row) };
    if (event) await recordTerminalEvent(ctx, tx, event);
  }
}
