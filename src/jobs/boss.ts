// pg-boss in the service's own database: the queues that generation, render and edit jobs
// run on. Queues and their workers are registered in WORKERS as the capabilities land.
import { PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';

export interface WorkerDefinition {
  queue: string;
  /** Registered with boss.work(queue, options, handler). */
  register(boss: PgBoss, ctx: AppContext): Promise<void>;
}

/** Every queue this service runs. Later issues append their workers here. */
export const WORKERS: WorkerDefinition[] = [];

export async function startBoss(url: string, log: AppContext['log']): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 5 });
  boss.on('error', (err) => log.error({ err: { message: err.message } }, 'pg-boss error'));
  await boss.start();
  return boss;
}

export async function startWorkers(boss: PgBoss, ctx: AppContext): Promise<string[]> {
  for (const w of WORKERS) {
    await boss.createQueue(w.queue).catch(() => {});
    await w.register(boss, ctx);
  }
  return WORKERS.map((w) => w.queue);
}
