// The social publish job: one per target account of a publication. It runs the platform's
// adapter (src/services/social/platforms/), which saves the platform's upload/container ids and the post id
// as it goes, so a retried or resumed attempt (a crash, a lost worker) continues from them and
// never posts twice. A 429 or 5xx with Retry-After (or X's x-rate-limit-reset) sends the job
// again after that many seconds; without one, pg-boss retries with backoff. A refused refresh
// makes the connection needs_reauth and fails the target with that message.
import type { AppContext } from '../../context.ts';
import { PlatformError, caller } from '../../services/social/platforms/http.ts';
import { SOCIAL_ADAPTERS } from '../../services/social/platforms/index.ts';
import type { SocialPlatform } from '../../services/social/accounts.ts';
import { credentials, RefreshRefused } from '../../services/social/connection.ts';
import { completeTarget, loadTarget, rescheduleTarget, saveTargetState, startTarget } from './rows.ts';
import type { QueueRef } from '../../jobs/queue.ts';
import { JobFailure, type FailureDetail, type JobTools, type RunningJob } from '../../jobs/define-job.ts';

export interface SocialPublishJobData {
  targetId: string;
}

/** Attempts of one target in all (retries and Retry-After reschedules together). */
export const SOCIAL_PUBLISH_MAX_ATTEMPTS = 8;
/** Longest Retry-After honoured; a platform asking for longer is retried after this. */
const MAX_RETRY_AFTER_SECONDS = 3600;

/** One attempt at a target; `queue` is the job's own (a rate-limited target is sent to it again). */
export async function run(ctx: AppContext, job: RunningJob<SocialPublishJobData>, { signal }: JobTools, queue: QueueRef): Promise<void> {
  const loaded = await loadTarget(ctx, job.data.targetId);
  if (!loaded || !['queued', 'publishing'].includes(loaded.target.status)) return;
  const platform = loaded.target.platform as SocialPlatform;
  const adapter = SOCIAL_ADAPTERS[platform];
  if (!adapter)
    throw new JobFailure({
      code: 'platform_unavailable',
      message: `platform ${platform} publishing is not available yet`,
      retryable: false,
      context: { platform },
    });
  const started = await startTarget(ctx, loaded.target.id);
  if (!started) return;
  const base = ctx.config.social.apiBase[platform];
  const client = ctx.config.social.clients[platform];
  try {
    const creds = await credentials(
      ctx,
      loaded.target.accountId,
      (rt, s, account) => adapter.refresh(caller(platform, base, undefined, s), client, rt, account),
      signal,
    );
    if (!creds)
      throw new JobFailure({
        code: 'account_disconnected',
        message: 'the social account was disconnected before publishing',
        retryable: false,
        context: { platform },
      });
    const state = { ...(started.state as Record<string, unknown>) };
    const post = await adapter.publish({
      account: creds.account,
      caption: loaded.publication.caption,
      media: loaded.media,
      options: ((loaded.publication.options as Record<string, unknown>)[platform] as Record<string, unknown>) ?? {},
      state,
      save: async (patch) => {
        Object.assign(state, patch);
        await saveTargetState(ctx, loaded.target.id, patch);
      },
      api: caller(platform, base, creds, signal),
      storage: ctx.storage,
      signal,
    });
    await completeTarget(ctx, loaded.target.id, post);
  } catch (err) {
    if (signal.aborted) throw err;
    if (
      err instanceof PlatformError &&
      err.retryable &&
      err.retryAfterSeconds !== undefined &&
      started.attempts < SOCIAL_PUBLISH_MAX_ATTEMPTS
    ) {
      const wait = Math.min(Math.max(err.retryAfterSeconds, 1), MAX_RETRY_AFTER_SECONDS);
      ctx.log.warn({ target: loaded.target.id, platform, status: err.status, wait }, 'social publish: the platform asked to retry later');
      await rescheduleTarget(ctx, loaded.target.id, wait, queue);
      return;
    }
    if (err instanceof PlatformError && err.retryable && started.attempts >= SOCIAL_PUBLISH_MAX_ATTEMPTS) {
      throw new JobFailure(platformDetail(platform, err, `gave up after ${started.attempts} attempts: `), false);
    }
    if (err instanceof PlatformError) throw new JobFailure(platformDetail(platform, err), err.retryable);
    throw err;
  }
}

function platformDetail(platform: string, err: PlatformError, prefix = ''): FailureDetail {
  return {
    code: err.status === 429 ? 'rate_limited' : 'platform_error',
    message: `${prefix}${err.message}`.slice(0, 1900),
    retryable: err.retryable,
    context: { platform, platform_status: err.status, ...(err.platformCode ? { platform_code: err.platformCode.slice(0, 100) } : {}) },
  };
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  if (err instanceof JobFailure) return { detail: err.detail, retry: err.retry };
  if (err instanceof RefreshRefused)
    return {
      detail: { code: 'reauthorization_required', message: err.message.slice(0, 1900), retryable: false, context: {} },
      retry: false,
    };
  const message = `Publishing failed: ${(err as Error)?.message ?? String(err)}`.slice(0, 1900);
  return { detail: { code: 'publish_failed', message, retryable: true, context: {} }, retry: true };
}
