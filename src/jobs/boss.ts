// pg-boss in the service's own database. Every process starts one: API nodes only send (jobs go
// out inside the transaction that charges for them); worker processes also supervise and work.
import { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { AppContext, Logger } from '../context.ts';
import { type AnyJob, createQueues } from './define-job.ts';

/** Starts pg-boss and creates (or brings up to date) the queues of `jobs`. */
export async function startBoss(
  url: string,
  config: Config,
  log: Logger,
  jobs: readonly AnyJob[],
  opts: { supervise: boolean },
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: 'pgboss',
    max: 5,
    supervise: opts.supervise,
    schedule: opts.supervise,
    // Idle workers are woken by NOTIFY the moment a job commits (polling stays as the backstop;
    // a busy worker takes the next job as it finishes one, see define-job.ts).
    useListenNotify: opts.supervise,
    // One pass of both (pg-boss runs them together, as far apart as the longer): JOB_SUPERVISE_SECONDS.
    monitorIntervalSeconds: config.jobSuperviseSeconds,
    superviseIntervalSeconds: config.jobSuperviseSeconds,
  });
  boss.on('error', (err) => log.error({ err }, 'pg-boss error'));
  await boss.start();
  await createQueues(boss, config, jobs);
  return boss;
}

export async function startWorkers(boss: PgBoss, ctx: AppContext, jobs: readonly AnyJob[]): Promise<string[]> {
  for (const job of jobs) await job.start(boss, ctx);
  return jobs.map((job) => job.name);
}
