// Rate limits of the OAuth authorization server (src/oauth/), on the same PostgreSQL
// counters as the API's (./rate-limit.ts), so every API node shares them:
//   - oauth-register:   client registrations per client IP per hour (each one stores a client);
//   - oauth-authorize:  authorization requests per client IP per 15 minutes (each one stores a
//                       browser session and a pending request);
//   - sign-in-account:  FAILED sign-ins per account (lower-cased email) per 15 minutes: password
//                       guessing on one account stops, and a successful sign-in clears the count;
//   - sign-in-ip:       failed sign-ins per client IP per 15 minutes, whatever the accounts
//                       (guessing one common password across many accounts).
// The failure limits are checked before the password is (so a locked account also spares the
// argon2 work), and counted after a failure. Concurrent guesses that pass the check together can
// exceed the limit by the number in flight; the limit is a brake, not an exact quota.
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { createRateLimiter, type RateLimiter } from '../billing/rate-limit.ts';

export const OAUTH_LIMITS = {
  register: 'oauth-register',
  authorize: 'oauth-authorize',
  signInAccount: 'sign-in-account',
  signInIp: 'sign-in-ip',
} as const;

const HOUR = 3600;
const QUARTER = 15 * 60;

export function oauthRateLimiters(db: Db, config: Config): Record<string, RateLimiter> {
  const o = config.oauth;
  return {
    [OAUTH_LIMITS.register]: createRateLimiter(db, OAUTH_LIMITS.register, o.registrationsPerHour, HOUR),
    [OAUTH_LIMITS.authorize]: createRateLimiter(db, OAUTH_LIMITS.authorize, o.authorizationsPer15Min, QUARTER),
    [OAUTH_LIMITS.signInAccount]: createRateLimiter(db, OAUTH_LIMITS.signInAccount, o.signInFailuresPerAccount, QUARTER),
    [OAUTH_LIMITS.signInIp]: createRateLimiter(db, OAUTH_LIMITS.signInIp, o.signInFailuresPerIp, QUARTER),
  };
}

/** "5 minutes", "1 minute", "30 seconds": how long to wait, for a person. */
export function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
