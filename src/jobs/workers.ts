// Every queue a worker process runs. Later capabilities append theirs.
import type { PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { purgeExpiredIdempotency } from '../services/idempotency.ts';
import { purgeExpiredOAuth } from '../services/oauth.ts';
import { purgeExpiredRateLimits } from '../services/rate-limit.ts';
import { editorExportWorker } from './editor-export-worker.ts';
import { generationWorker } from './generation-worker.ts';
import { referenceWorker } from './reference-worker.ts';
import { QUEUES } from './queue.ts';

export interface WorkerDefinition {
  queue: string;
  register(boss: PgBoss, ctx: AppContext): Promise<void>;
}

/** Housekeeping every 10 minutes: expired idempotency records, rate-limit windows and OAuth rows. */
const maintenanceWorker: WorkerDefinition = {
  queue: QUEUES.maintenance,
  async register(boss, ctx) {
    await boss.work(QUEUES.maintenance, async () => {
      const purged = await purgeExpiredIdempotency(ctx.db);
      await purgeExpiredRateLimits(ctx.db);
      if (purged) ctx.log.info({ purged }, 'expired idempotency records purged');
      const oauth = await purgeExpiredOAuth(ctx.db);
      if (Object.values(oauth).some((n) => n > 0)) ctx.log.info({ oauth }, 'expired OAuth codes, tokens, sessions and grants purged');
    });
    await boss.schedule(QUEUES.maintenance, '*/10 * * * *');
  },
};

export const WORKERS: WorkerDefinition[] = [generationWorker, editorExportWorker, referenceWorker, maintenanceWorker];
