// Queue names, the version of the payload each carries, and sending a job inside a drizzle
// transaction so the job exists exactly when the transaction that charged for it commits.
// Queue settings (retries, heartbeat, dead letters, concurrency) are declared by each job's
// definition (define-job.ts); this module stays a leaf that services can import.
import { sql } from 'drizzle-orm';
import { fromDrizzle, type PgBoss } from 'pg-boss';
import type { Tx } from '../db/client.ts';

export const QUEUES = {
  /** Image generations (static ads, image AI-model outputs): quick, so never behind a render. */
  generationImage: 'generation',
  /** Video generations (video ads, UGC ads, video AI-model outputs): long ffmpeg renders. */
  generationVideo: 'generation-video',
  /** Editor exports (timeline renders). */
  editorExport: 'editor-export',
  /** Reference inspirations: fetch and check their media. */
  referenceAnalysis: 'reference-analysis',
  /** Faceless videos: script, scenes, voiceover, captions and render of one video. */
  faceless: 'faceless',
  /** Housekeeping on a schedule. */
  maintenance: 'maintenance',
  /** Completion webhooks: one job per event and endpoint, retried with backoff for about a day. */
  webhookDelivery: 'webhook-delivery',
  /** Slideshows: copy, slide images, editor project and carousel MP4. */
  slideshow: 'slideshow',
  /** Social publishing: one job per target account of a publication. */
  socialPublish: 'social-publish',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * The version of the payload each queue's jobs carry as `$version`. Bump it when the payload's
 * shape changes, and teach the job to read the previous version too (jobs queued before a deploy
 * are worked after it). A worker refuses jobs newer than it knows (they are retried, so a newer
 * worker can take them during a rolling deploy).
 */
export const PAYLOAD_VERSIONS: Record<QueueName, number> = {
  [QUEUES.generationImage]: 1,
  [QUEUES.generationVideo]: 1,
  [QUEUES.editorExport]: 1,
  [QUEUES.referenceAnalysis]: 1,
  [QUEUES.faceless]: 1,
  [QUEUES.maintenance]: 1,
  [QUEUES.webhookDelivery]: 1,
  [QUEUES.slideshow]: 1,
  [QUEUES.socialPublish]: 1,
};

/** The dead-letter queue of a queue: jobs whose every attempt was lost (worker killed, timed out). */
export const deadLetterQueue = (queue: QueueName): string => `${queue}-dead`;

/** The queue of a generation, by what it makes: a quick image never waits behind a video render. */
export function generationQueue(output: 'image' | 'video'): QueueName {
  return output === 'video' ? QUEUES.generationVideo : QUEUES.generationImage;
}

export class QueueRefused extends Error {
  constructor(queue: string) {
    super(`The ${queue} queue did not accept the job`);
    this.name = 'QueueRefused';
  }
}

export interface JobQueue {
  readonly boss: PgBoss;
  /** Sends inside `tx`; throws QueueRefused when pg-boss returns no id (the caller rolls back). */
  sendInTx(tx: Tx, queue: QueueName, data: object, id?: string, options?: { startAfter?: number }): Promise<string>;
}

export function jobQueue(boss: PgBoss): JobQueue {
  return {
    boss,
    async sendInTx(tx, queue, data, id, options) {
      const payload = { ...data, $version: PAYLOAD_VERSIONS[queue] };
      const sent = await boss.send(queue, payload, {
        db: fromDrizzle(tx as never, sql as never),
        ...(id ? { id } : {}),
        ...(options?.startAfter ? { startAfter: options.startAfter } : {}),
      });
      if (!sent) throw new QueueRefused(queue);
      return sent;
    },
  };
}
