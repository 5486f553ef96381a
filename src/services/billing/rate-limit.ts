// Rate limits shared by every API process: rate-limiter-flexible's Drizzle store keeps
// fixed-window counters in PostgreSQL (rate_limits) and counts with one atomic
// INSERT … ON CONFLICT DO UPDATE … RETURNING per request. Keys are per policy: an organization
// (generations), a client IP (OAuth registration, authorization), an account (sign-in failures).
import { RateLimiterDrizzle, RateLimiterRes } from 'rate-limiter-flexible';
import { lt } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { rateLimits } from '../../db/schema/index.ts';

export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

export interface RateLimiter {
  readonly policy: string;
  readonly limit: number;
  readonly windowSeconds: number;
  /** Counts one request of `key`; refused once `limit` were counted in the window. */
  consume(key: string): Promise<RateLimitDecision>;
  /** Whether `key` may go on, without counting (for limits that count failures only). */
  peek(key: string): Promise<RateLimitDecision>;
  /** Forgets what `key` used (a successful sign-in clears its failures). */
  reset(key: string): Promise<void>;
}

export function createRateLimiter(db: Db, policy: string, limit: number, windowSeconds: number): RateLimiter {
  const limiter = new RateLimiterDrizzle({
    storeClient: db,
    schema: rateLimits,
    keyPrefix: policy,
    points: limit,
    duration: windowSeconds,
    // Expired rows are purged by the maintenance job, not by a timer in every API process.
    clearExpiredByTimeout: false,
  } as never);

  const decide = (res: RateLimiterRes, allowed: boolean): RateLimitDecision => {
    const resetMs = Date.now() + res.msBeforeNext;
    const secondsLeft = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
    const remaining = Math.max(0, res.remainingPoints);
    const headers: Record<string, string> = {
      RateLimit: `"${policy}";r=${remaining};t=${secondsLeft}`,
      'RateLimit-Policy': `"${policy}";q=${limit};w=${windowSeconds}`,
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(remaining),
      'X-RateLimit-Reset': String(resetMs),
    };
    if (!allowed) headers['Retry-After'] = String(Math.max(1, secondsLeft));
    return { allowed, headers, retryAfterSeconds: Math.max(1, secondsLeft) };
  };

  return {
    policy,
    limit,
    windowSeconds,
    async consume(key) {
      try {
        return decide(await limiter.consume(key, 1), true);
      } catch (err) {
        if (err instanceof RateLimiterRes) return decide(err, false);
        if (storeAnsweredNothing(err)) throw new RateLimitStoreLost(err);
        throw err;
      }
    },
    async peek(key) {
      const res = await limiter.get(key);
      if (!res) return decide(new RateLimiterRes(limit, windowSeconds * 1000, 0), true);
      return decide(res, res.consumedPoints < limit);
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}

/**
 * The store's upsert (INSERT … ON CONFLICT … RETURNING) always returns its row, except when the
 * statement's connection is dropped under it: postgres.js then resolved it with no row (seen in
 * test/faults/database-outage.test.ts), and rate-limiter-flexible reads a field of nothing.
 */
function storeAnsweredNothing(err: unknown): boolean {
  return err instanceof TypeError && /RateLimiterDrizzle\._getRateLimiterRes/.test(err.stack ?? '');
}

/** The count could not be taken because the database connection was lost: answered 503, as any lost database. */
export class RateLimitStoreLost extends Error {
  /** postgres.js's code of a closed connection, so src/db/outage.ts reads it as the database being unreachable. */
  readonly code = 'CONNECTION_CLOSED';
  constructor(cause: unknown) {
    super('The rate-limit count got no answer: the database connection was lost', { cause });
    this.name = 'RateLimitStoreLost';
  }
}

export async function purgeExpiredRateLimits(db: Db): Promise<void> {
  await db.delete(rateLimits).where(lt(rateLimits.expire, new Date(Date.now() - 60_000)));
}
