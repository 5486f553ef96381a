// Progress that never goes backwards. Jobs write their progress reports without waiting
// (src/jobs/define-job.ts), so the last report of one stage can land after the start of the next,
// which has the same percent: a row only takes a report that is further along, by percent, or at the
// same percent by stage order.
import { and, eq, inArray, isNull, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

export function forwardOnly(
  columns: { progress: PgColumn; stage: PgColumn },
  progress: number,
  stage: string,
  order: readonly string[],
): SQL {
  const upTo = order.slice(0, Math.max(0, order.indexOf(stage)) + 1);
  return or(lt(columns.progress, progress), and(eq(columns.progress, progress), or(isNull(columns.stage), inArray(columns.stage, upTo))))!;
}
