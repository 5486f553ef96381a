// The rate limiter when its database connection is lost mid-count: postgres.js answered the
// store's INSERT … RETURNING with no row while PostgreSQL dropped connections
// (test/faults/database-outage.test.ts saw it as a 500). The count must read as the database
// being unreachable (503, retryable), not as a server fault. The store client here answers what
// the driver answered then: no row.
import t from 'tap';
import { isDatabaseUnavailable } from '../../../src/db/outage.ts';
import type { Db } from '../../../src/db/client.ts';
import { createRateLimiter, RateLimitStoreLost } from '../../../src/services/billing/rate-limit.ts';

/** A drizzle-shaped client whose insert … returning answers no row. */
const answersNothing = {
  insert: () => ({ values: () => ({ onConflictDoUpdate: () => ({ returning: async () => [] }) }) }),
} as unknown as Db;

t.test('a count answered with no row is a lost database, not a server fault', async (t) => {
  const limiter = createRateLimiter(answersNothing, 'test', 10, 60);
  const err = await limiter.consume('org-1').catch((e: unknown) => e);
  t.type(err, RateLimitStoreLost);
  t.ok(isDatabaseUnavailable(err), 'read as the database being unreachable (503)');
  t.type((err as Error).cause, TypeError, 'the library error is kept as the cause');
});
