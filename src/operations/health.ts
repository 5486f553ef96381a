// The health probes: GET /healthz (the process is alive) and GET /readyz (it can serve).
import { ApiError } from '../errors.ts';
import { READINESS_RETRY_AFTER_SECONDS } from '../services/platform/health.ts';
import { defineHandlers } from '../handlers.ts';

export const handlers = defineHandlers({
  getHealth: () => ({ status: 'ok' as const }),
  getReadiness: async ({ ctx }) => {
    const { ready, checks } = await ctx.readiness();
    if (!ready) {
      const failing = Object.entries(checks)
        .filter(([, state]) => state !== 'ok')
        .map(([name]) => name);
      throw new ApiError(
        'service_unavailable',
        `Not ready; failing checks: ${failing.join(', ')}. Retry in ${READINESS_RETRY_AFTER_SECONDS} s.`,
        { checks },
        { 'retry-after': String(READINESS_RETRY_AFTER_SECONDS) },
      );
    }
    return { status: 'ready' as const, checks };
  },
});
