// The webhook delivery job: one per event and subscribed endpoint (services/webhooks/events.ts).
// Each attempt POSTs the signed event; a non-2xx answer, a timeout or a network error is retried
// by pg-boss with exponential backoff (WEBHOOK_RETRY_DELAY_SECONDS doubling up to
// WEBHOOK_RETRY_DELAY_MAX_SECONDS, WEBHOOK_RETRY_LIMIT retries: about a day by default); after
// the last one, or at once for a refused URL, the delivery is recorded as failed. At-least-once:
// a delivered or given-up delivery is never sent again.
import { attemptDelivery, giveUpDelivery, WEBHOOK_DELIVERY_QUEUE } from './events.ts';
import { defineJob } from '../../jobs/define-job.ts';

export interface WebhookDeliveryJobData {
  deliveryId: string;
}

export const webhookDeliveryJob = defineJob<WebhookDeliveryJobData>({
  ...WEBHOOK_DELIVERY_QUEUE,
  concurrency: (config) => config.webhooks.concurrency,
  retry: (config) => ({
    limit: config.webhooks.retryLimit,
    delay: config.webhooks.retryDelaySeconds,
    backoff: true,
    maxDelay: config.webhooks.retryDelayMaxSeconds,
  }),
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  // An attempt is bounded by WEBHOOK_TIMEOUT_MS (at most 120 s); this is the backstop.
  expireInSeconds: 300,
  deadLetter: { message: 'The delivery was abandoned by its workers too many times' },
  run: (ctx, job, { signal }) => attemptDelivery(ctx, job.data.deliveryId, signal),
  onTerminalFailure: (ctx, data, detail) => giveUpDelivery(ctx, data.deliveryId, detail),
});
