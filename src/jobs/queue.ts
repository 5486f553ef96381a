// Queue names, their pg-boss settings, and sending a job inside a drizzle transaction so the job
// exists exactly when the transaction that charged for it commits.
import { sql } from 'drizzle-orm';
import { fromDrizzle, type PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Tx } from '../services/credits.ts';

export const QUEUES = {
  generation: 'generation',
  /** Dead letters of `generation`: jobs whose every attempt was lost (worker killed). */
  generationDead: 'generation-dead',
  maintenance: 'maintenance',
  /** Editor exports (timeline renders). */
  editorExport: 'editor-export',
  editorExportDead: 'editor-export-dead',
  /** Reference inspirations: fetch and check their media. */
  referenceAnalysis: 'reference-analysis',
  referenceAnalysisDead: 'reference-analysis-dead',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export class QueueRefused extends Error {
  constructor(queue: string) {
    super(`The ${queue} queue did not accept the job`);
    this.name = 'QueueRefused';
  }
}

export interface JobQueue {
  readonly boss: PgBoss;
  /** Sends inside `tx`; throws QueueRefused when pg-boss returns no id (the caller rolls back). */
  sendInTx(tx: Tx, queue: QueueName, data: object, id?: string): Promise<string>;
}

export async function createQueues(boss: PgBoss, config: Config): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  const settings: Record<string, Parameters<PgBoss['createQueue']>[1]> = {
    // The dead-letter queue first: the generation queue refers to it.
    [QUEUES.generationDead]: { retryLimit: 5, expireInSeconds: 120 },
    [QUEUES.generation]: {
      retryLimit: config.generationRetryLimit,
      retryDelay: 2,
      retryBackoff: true,
      // A worker that dies stops heartbeating; the job is then retried by another worker.
      heartbeatSeconds: config.jobHeartbeatSeconds,
      expireInSeconds: 1800,
      deadLetter: QUEUES.generationDead,
      notify: true,
    },
    [QUEUES.maintenance]: { retryLimit: 0, expireInSeconds: 300 },
    [QUEUES.editorExportDead]: { retryLimit: 5, expireInSeconds: 120 },
    [QUEUES.editorExport]: {
      retryLimit: 2,
      retryDelay: 2,
      retryBackoff: true,
      heartbeatSeconds: config.jobHeartbeatSeconds,
      expireInSeconds: 3600,
      deadLetter: QUEUES.editorExportDead,
      notify: true,
    },
    [QUEUES.referenceAnalysisDead]: { retryLimit: 5, expireInSeconds: 120 },
    [QUEUES.referenceAnalysis]: {
      retryLimit: 2,
      retryDelay: 2,
      retryBackoff: true,
      heartbeatSeconds: config.jobHeartbeatSeconds,
      expireInSeconds: 900,
      deadLetter: QUEUES.referenceAnalysisDead,
      notify: true,
    },
  };
  for (const [name, options] of Object.entries(settings)) {
    if (existing.has(name)) await boss.updateQueue(name, options);
    else await boss.createQueue(name, options).catch(async (err) => {
      // Created concurrently by another process.
      if (!(await boss.getQueue(name))) throw err;
    });
  }
}

export function jobQueue(boss: PgBoss): JobQueue {
  return {
    boss,
    async sendInTx(tx, queue, data, id) {
      const sent = await boss.send(queue, data, { db: fromDrizzle(tx as never, sql as never), ...(id ? { id } : {}) });
      if (!sent) throw new QueueRefused(queue);
      return sent;
    },
  };
}
