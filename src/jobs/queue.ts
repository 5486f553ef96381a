// Sending a job inside a drizzle transaction so the job exists exactly when the transaction that
// charged for it commits. Each job's definition (define-job.ts) declares its queue name, payload
// version and settings (retries, heartbeat, dead letters, concurrency); the sender passes that
// definition (a QueueRef). This module stays a leaf that services can import.
import { sql } from 'drizzle-orm';
import { fromDrizzle, type PgBoss } from 'pg-boss';
import type { Tx } from '../db/client.ts';

/**
 * Where a job goes: its queue's name and the version of the payload its jobs carry as `$version`.
 * Each job definition (defineJob) is one, so senders pass the definition itself; no central table.
 * Bump the version when the payload's shape changes, and teach the job to read the previous one
 * too (jobs queued before a deploy are worked after it). A worker refuses jobs newer than it knows
 * (they are retried, so a newer worker can take them during a rolling deploy).
 */
export interface QueueRef {
  readonly name: string;
  readonly version: number;
}

/** The dead-letter queue of a queue: jobs whose every attempt was lost (worker killed, timed out). */
export const deadLetterQueue = (queue: string): string => `${queue}-dead`;

export class QueueRefused extends Error {
  constructor(queue: string) {
    super(`The ${queue} queue did not accept the job`);
    this.name = 'QueueRefused';
  }
}

export interface JobQueue {
  readonly boss: PgBoss;
  /** Sends inside `tx`; throws QueueRefused when pg-boss returns no id (the caller rolls back). */
  sendInTx(tx: Tx, queue: QueueRef, data: object, id?: string, options?: { startAfter?: number }): Promise<string>;
}

export function jobQueue(boss: PgBoss): JobQueue {
  return {
    boss,
    async sendInTx(tx, queue, data, id, options) {
      const payload = { ...data, $version: queue.version };
      const sent = await boss.send(queue.name, payload, {
        db: fromDrizzle(tx as never, sql as never),
        ...(id ? { id } : {}),
        ...(options?.startAfter ? { startAfter: options.startAfter } : {}),
      });
      if (!sent) throw new QueueRefused(queue.name);
      return sent;
    },
  };
}
