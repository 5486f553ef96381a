// Health of the process for load balancers and orchestrators: GET /healthz (the process is alive)
// and GET /readyz (it can serve: the database answers, its migrations are applied, the queue is
// started, and it is not stopping).
import { migrationsApplied, type Sql } from '../../db/client.ts';

export type CheckState = 'ok' | 'failing';

export interface Readiness {
  ready: boolean;
  checks: { database: CheckState; migrations: CheckState; queue: CheckState; accepting: CheckState };
}

export interface ReadinessProbe {
  /** pg-boss started and not stopped. */
  queueUp(): boolean;
  /** The service's shutdown has begun. */
  stopping(): boolean;
}

/** How long the database may take to answer a readiness check before it counts as unreachable. */
export const READINESS_DB_TIMEOUT_MS = 2000;

/** Seconds a load balancer should wait before asking /readyz again after a 503. */
export const READINESS_RETRY_AFTER_SECONDS = 5;

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export async function readiness(sql: Sql, probe: ReadinessProbe, timeoutMs = READINESS_DB_TIMEOUT_MS): Promise<Readiness> {
  let database: CheckState = 'failing';
  let migrations: CheckState = 'failing';
  try {
    // One round trip answers both: the database is reachable and has every committed migration.
    migrations = (await withTimeout(migrationsApplied(sql), timeoutMs)) ? 'ok' : 'failing';
    database = 'ok';
  } catch (err) {
    // Unreachable or too slow: not ready (the check itself never fails the request). A database
    // with no migrations table answers, but has none of the migrations.
    if ((err as { code?: string }).code === '42P01') database = 'ok';
  }
  const checks = {
    database,
    migrations,
    queue: probe.queueUp() ? ('ok' as const) : ('failing' as const),
    accepting: probe.stopping() ? ('failing' as const) : ('ok' as const),
  };
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}
