// Every job a worker process runs, each declared with defineJob. Later capabilities append theirs.
import type { AppContext } from '../context.ts';
import { purgeExpiredIdempotency } from '../services/billing/idempotency.ts';
import { purgeExpiredOAuth } from '../services/oauth/oauth.ts';
import { purgeExpiredRateLimits } from '../services/billing/rate-limit.ts';
import { purgeOldWebhookEvents } from '../services/webhooks/events.ts';
import { defineJob, type AnyJob } from './define-job.ts';
import { editorExportJob } from './editor-export-job.ts';
import { facelessJob } from './faceless-job.ts';
import { imageGenerationJob, videoGenerationJob } from './generation-job.ts';
import { QUEUES } from './queue.ts';
import { referenceAnalysisJob } from './reference-job.ts';
import { webhookDeliveryJob } from './webhook-delivery-job.ts';

/** Housekeeping every 10 minutes: expired idempotency records, rate-limit windows, OAuth rows and settled webhook events older than 30 days. */
export const maintenanceJob = defineJob<object>({
  name: QUEUES.maintenance,
  concurrency: 1,
  retry: { limit: 0, delay: 0, backoff: false },
  expireInSeconds: 300,
  schedule: '*/10 * * * *',
  async run(ctx: AppContext) {
    const purged = await purgeExpiredIdempotency(ctx.db);
    await purgeExpiredRateLimits(ctx.db);
    if (purged) ctx.log.info({ purged }, 'expired idempotency records purged');
    const oauth = await purgeExpiredOAuth(ctx.db);
    if (Object.values(oauth).some((n) => n > 0)) ctx.log.info({ oauth }, 'expired OAuth codes, tokens, sessions and grants purged');
    const events = await purgeOldWebhookEvents(ctx.db);
    if (events) ctx.log.info({ events }, 'webhook events older than 30 days purged');
  },
});

export const JOBS: readonly AnyJob[] = [imageGenerationJob, videoGenerationJob, editorExportJob, referenceAnalysisJob, facelessJob, maintenanceJob, webhookDeliveryJob];
