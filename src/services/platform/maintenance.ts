// Every job a worker process runs, each declared with defineJob: the pipelines' jobs
// (src/pipelines/index.ts) and the infrastructure jobs beside them (maintenance, webhook delivery).
import type { AppContext } from '../../context.ts';
import { purgeExpiredIdempotency } from '../billing/idempotency.ts';
import { purgeExpiredOAuth } from '../oauth/oauth.ts';
import { purgeExpiredRateLimits } from '../billing/rate-limit.ts';
import { purgeOldWebhookEvents } from '../webhooks/events.ts';
import { sweepOrphanedMedia } from '../assets/orphaned-media.ts';
import { sweepWorkFolders } from '../../media/work-folder.ts';
import { defineJob } from '../../jobs/define-job.ts';

/** pg_advisory_lock key held while maintenance runs (727_001: migrations, 727_002: the demo workspace). */
const MAINTENANCE_LOCK = 727_003;

/**
 * Housekeeping every 10 minutes: expired idempotency records, rate-limit windows, OAuth rows, settled
 * webhook events older than 30 days, and this machine's DATA_DIR/tmp leftovers of processes that are gone; once an hour (the run at
 * minute 0-9) also orphaned stored media (services/assets/orphaned-media.ts).
 */
export const maintenanceJob = defineJob<object>({
  name: 'maintenance',
  version: 1,
  concurrency: 1,
  retry: { limit: 0, delay: 0, backoff: false },
  expireInSeconds: 300,
  schedule: '*/10 * * * *',
  async run(ctx: AppContext) {
    // One node at a time: a second maintenance job picked up by another worker meanwhile (a
    // schedule tick sent twice, a job sent by hand) skips. A session lock on a reserved
    // connection: released if this process dies with it.
    const conn = await ctx.sql.reserve();
    try {
      const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${MAINTENANCE_LOCK}) as locked`;
      if (!locked) {
        ctx.log.info({ pid: process.pid }, 'maintenance: running on another node; skipped');
        return;
      }
      const startedAt = Date.now();
      try {
        const purged = await purgeExpiredIdempotency(ctx.db);
        await purgeExpiredRateLimits(ctx.db);
        if (purged) ctx.log.info({ purged }, 'expired idempotency records purged');
        const oauth = await purgeExpiredOAuth(ctx.db);
        if (Object.values(oauth).some((n) => n > 0)) ctx.log.info({ oauth }, 'expired OAuth codes, tokens, sessions and grants purged');
        const events = await purgeOldWebhookEvents(ctx.db);
        if (events) ctx.log.info({ events }, 'webhook events older than 30 days purged');
        const swept = await sweepWorkFolders(ctx.config.dataDir);
        if (swept) ctx.log.info({ swept }, 'removed temporary files of processes that are gone');
        if (new Date().getUTCMinutes() < 10) {
          const orphans = await sweepOrphanedMedia(ctx.db, ctx.storage);
          if (orphans.deleted.length)
            ctx.log.info({ deleted: orphans.deleted.length, checked: orphans.checked }, 'orphaned stored media deleted');
        }
      } finally {
        await conn`select pg_advisory_unlock(${MAINTENANCE_LOCK})`;
        ctx.log.info({ pid: process.pid, started_at: startedAt, finished_at: Date.now() }, 'maintenance: ran');
      }
    } finally {
      conn.release();
    }
  },
});
