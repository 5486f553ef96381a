// The resource lifecycle: one declaration per kind of resource a job makes (a generation, a
// slideshow, a faceless video, a reference analysis, an editor export, a social publication's
// target), from which every step of its life is derived, so no pipeline writes them itself:
//   start     an attempt begins: pending/running → running, attempts + 1, started_at kept from the
//             first attempt; undefined when the resource is finished (a repeated delivery);
//   progress  stage and percent (0–99; completion writes 100), forward only where the resource
//             reports stages (services/progress.ts), only while it is running;
//   saveState what a stage made, merged into the resource's jsonb state column (stages.ts);
//   complete  one transaction: the output's media row, the conditional status update, the caller's
//             extra rows and the webhook event; false (nothing written) when it is not running;
//   fail      one transaction: the conditional status update, the refund of its credits (once: a
//             second call finds it failed already) and the webhook event;
//   cancel    where a resource can be cancelled (editor exports): canceled at once, its queued job
//             cancelled.
// Jobs are delivered at least once, so every step is a conditional update, safe to run twice.
import { and, eq, inArray, sql, TransactionRollbackError, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { media } from '../db/schema/index.ts';
import type { FailureDetail } from '../jobs/define-job.ts';
import type { QueueName } from '../jobs/queue.ts';
import { applyCreditChange } from '../services/billing/credits.ts';
import { forwardOnly } from '../services/progress.ts';
import type { WebhookEventType } from '../services/webhooks/endpoints.ts';
import { recordTerminalEvent, type TerminalEvent } from '../services/webhooks/events.ts';

type RowOf<T extends PgTable> = T['$inferSelect'];
type ColumnKey<T extends PgTable> = keyof RowOf<T> & string;
export type MediaValues = typeof media.$inferInsert;
export type Outcome = 'completed' | 'failed';

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
    /** The pg-boss job id (`cancel` cancels a queued one). */
    jobId?: ColumnKey<T>;
  };
  statuses: { pending?: RowOf<T>[string]; running: RowOf<T>[string]; completed: RowOf<T>[string]; failed: RowOf<T>[string]; canceled?: RowOf<T>[string] };
  /** The stage names in order, where the resource reports its stage: progress is then forward only. */
  stages?: readonly string[];
  /** The ledger row of a failure's refund. */
  refund?: { reason: string; reference(id: Id): string };
  /**
   * The webhook event of a terminal transition: its types, with `view` as its data; or a function
   * that decides (undefined: no event). None: no event.
   */
  events?: { completed: WebhookEventType; failed: WebhookEventType } | ((ctx: AppContext, tx: Tx, row: RowOf<T>, outcome: Outcome) => Promise<TerminalEvent | undefined>);
  /** The resource as its GET operation returns it, read in the transaction that made it terminal. */
  view?(ctx: AppContext, tx: Tx, row: RowOf<T>): Promise<TerminalEvent['data']>;
  /** Further columns a failure sets (e.g. clearing the stage). */
  failSet?(): Partial<T['$inferInsert']>;
  /** Where the resource can be cancelled: its queue, and the error for one already finished. */
  cancel?: { queue: QueueName; conflict(row: RowOf<T>, id: Id): Error };
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
  /** Writes columns of a running resource (a resume point such as a provider's job id). */
  record(ctx: AppContext, id: Id, set: Partial<T['$inferInsert']>): Promise<void>;
  /** Completes a running resource, once: false when it was not running (nothing is written). */
  complete(ctx: AppContext, id: Id, options?: CompleteOptions<T>): Promise<boolean>;
  /** Fails a pending or running resource and refunds it, once: false when it had finished. */
  fail(ctx: AppContext, id: Id, detail: FailureDetail): Promise<boolean>;
  /**
   * Cancels a pending or running resource of the workspace (`scope`: further conditions of the
   * lookup). Undefined when there is none; `previous` is its status before (canceled: it already
   * was); a finished one throws the declaration's conflict error.
   */
  cancel(ctx: AppContext, orgId: string, id: Id, scope?: SQL): Promise<{ row: RowOf<T>; previous: string } | undefined>;
  /** The current status (undefined when the resource is gone). */
  statusOf(ctx: AppContext, id: Id): Promise<string | undefined>;
  /** The id and the stored stage state of a row. */
  idOf(row: object): Id;
  stateOf(row: object): Record<string, unknown> | undefined;
}

// drizzle's rollback error is named DrizzleError, so it is told by its class (a check of
// `err.name === 'TransactionRollbackError'` never matches).
const isRollback = (err: unknown) => err instanceof TransactionRollbackError;

export function defineResource<T extends PgTable, Id extends string | number>(decl: ResourceDeclaration<T, Id>): Resource<T, Id> {
  const { table, columns: c, statuses } = decl;
  const col = (key: string) => (table as unknown as Record<string, PgColumn>)[key];
  const active = [statuses.pending, statuses.running].filter((s) => s !== undefined) as string[];
  const byId = (id: Id) => eq(col(c.id), id);
  const touched = (): Record<string, unknown> => (c.updatedAt ? { [c.updatedAt]: new Date() } : {});
  const opt = (key: string | undefined, value: unknown): Record<string, unknown> => (key ? { [key]: value } : {});
  // drizzle's builders are typed per table; the kernel writes any declared table by column name.
  const update = (db: AppContext['db'] | Tx, values: Record<string, unknown>) => db.update(table).set(values as never);
  const select = (db: AppContext['db'] | Tx) => db.select().from(table as never);
  type Row = RowOf<T>;
  const field = (row: object, key: string) => (row as Record<string, unknown>)[key];

  async function emit(ctx: AppContext, tx: Tx, row: Row, outcome: Outcome): Promise<void> {
    const events = decl.events;
    if (!events) return;
    const event =
      typeof events === 'function'
        ? await events(ctx, tx, row, outcome)
        : { orgId: field(row, c.org) as string, type: events[outcome], data: await decl.view!(ctx, tx, row) };
    if (event) await recordTerminalEvent(ctx, tx, event);
  }

  return {
    declaration: decl,

    async start(ctx, id) {
      if (!c.attempts) {
        const [row] = (await select(ctx.db).where(byId(id))) as Row[];
        return row && active.includes(field(row, c.status) as string) ? row : undefined;
      }
      const [row] = (await update(ctx.db, {
        [c.status]: statuses.running,
        [c.attempts]: sql`${col(c.attempts)} + 1`,
        ...opt(c.startedAt, c.startedAt && sql`coalesce(${col(c.startedAt)}, now())`),
        ...touched(),
      })
        .where(and(byId(id), inArray(col(c.status), active)))
        .returning()) as Row[];
      return row;
    },

    async progress(ctx, id, stage, percent) {
      if (!c.progress) return;
      const progress = Math.max(0, Math.min(99, Math.round(percent)));
      const forward = c.stage && decl.stages ? forwardOnly({ progress: col(c.progress), stage: col(c.stage) }, progress, stage, decl.stages) : undefined;
      await update(ctx.db, { [c.progress]: progress, ...opt(c.stage, stage), ...touched() }).where(and(byId(id), eq(col(c.status), statuses.running), forward));
    },

    async saveState(ctx, id, patch) {
      if (!c.state) throw new Error(`${decl.name} has no state column`);
      await update(ctx.db, { [c.state]: sql`${col(c.state)} || ${JSON.stringify(patch)}::jsonb`, ...touched() }).where(and(byId(id), eq(col(c.status), statuses.running)));
    },

    async record(ctx, id, set) {
      await update(ctx.db, { ...set, ...touched() }).where(and(byId(id), eq(col(c.status), statuses.running)));
    },

    async complete(ctx, id, options = {}) {
      return ctx.db
        .transaction(async (tx) => {
          // The media row first: a completed resource has its output (a check constraint).
          const [m] = options.media ? await tx.insert(media).values(options.media).returning({ id: media.id }) : [];
          const [row] = (await update(tx, {
            [c.status]: statuses.completed,
            ...opt(c.progress, 100),
            ...opt(c.stage, null),
            ...opt(c.completedAt, new Date()),
            ...(m && c.output ? { [c.output]: m.id } : {}),
            ...options.set,
            ...touched(),
          })
            .where(and(byId(id), eq(col(c.status), statuses.running)))
            .returning()) as Row[];
          if (!row) tx.rollback();
          await options.extra?.(tx, row);
          await emit(ctx, tx, row, 'completed');
          return true;
        })
        .catch((err: unknown) => {
          if (isRollback(err)) return false;
          throw err;
        });
    },

    async fail(ctx, id, detail) {
      return ctx.db.transaction(async (tx) => {
        const [row] = (await update(tx, {
          [c.status]: statuses.failed,
          [c.error]: detail,
          ...(decl.refund ? opt(c.refundedAt, new Date()) : {}),
          ...decl.failSet?.(),
          ...touched(),
        })
          .where(and(byId(id), inArray(col(c.status), active)))
          .returning()) as Row[];
        if (!row) return false;
        const credits = decl.refund && c.credits ? Number(field(row, c.credits)) : 0;
        if (credits > 0) {
          await applyCreditChange(tx, { orgId: field(row, c.org) as string, delta: credits, reason: decl.refund!.reason, reference: decl.refund!.reference(field(row, c.id) as Id) });
        }
        await emit(ctx, tx, row, 'failed');
        return true;
      });
    },

    async cancel(ctx, orgId, id, scope) {
      const cancel = decl.cancel;
      if (!cancel || statuses.canceled === undefined) throw new Error(`${decl.name} cannot be cancelled`);
      const done = await ctx.db.transaction(async (tx) => {
        const [cur] = (await select(tx)
          .where(and(byId(id), eq(col(c.org), orgId), scope))
          .for('update')) as Row[];
        if (!cur) return undefined;
        const previous = field(cur, c.status) as string;
        if (previous === statuses.canceled) return { row: cur, previous };
        if (!active.includes(previous)) throw cancel.conflict(cur, id);
        const [row] = (await update(tx, { [c.status]: statuses.canceled, ...opt(c.completedAt, new Date()), ...touched() })
          .where(byId(id))
          .returning()) as Row[];
        return { row, previous };
      });
      const jobId = done && c.jobId ? (field(done.row, c.jobId) as string | null) : null;
      if (done && jobId && done.previous === statuses.pending) {
        // Best effort: a job that still runs finds the resource canceled and does nothing.
        await ctx.queue.boss.cancel(cancel.queue, jobId).catch((err: unknown) => ctx.log.warn({ [decl.name]: id, err: String(err) }, `could not cancel the ${decl.name} job`));
      }
      return done;
    },

    async statusOf(ctx, id) {
      const [row] = (await ctx.db
        .select({ status: col(c.status) })
        .from(table as never)
        .where(byId(id))) as { status: string }[];
      return row?.status;
    },

    idOf: (row) => field(row, c.id) as Id,
    stateOf: (row) => (c.state ? ((field(row, c.state) ?? {}) as Record<string, unknown>) : undefined),
  };
}
