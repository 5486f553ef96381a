// Integer ids on their way into SQL: the one place that knows which values an id column can hold.
// A value the column cannot hold (zero or negative, a fraction, past 2^31−1 for an integer column,
// past 2^53−1 for a bigint read as a JavaScript number, anything not a number) names no row, so a
// lookup refuses it here, before any SQL, with the caller's not_found, instead of handing
// PostgreSQL a value it answers with an error (an integer column took 2147483648 as "out of range
// for type integer": a 500, retryable, that no retry could mend). The contract's integer ids
// (IntegerId: 1 to 2^53−1) and the id columns (bigint) agree, so every id the contract accepts
// reaches its lookup.
import type { PgColumn } from 'drizzle-orm/pg-core';

/** The largest value of each kind of integer column that a JavaScript number carries exactly. */
const COLUMN_MAX: Record<string, number> = {
  PgSmallInt: 2 ** 15 - 1,
  PgInteger: 2 ** 31 - 1,
  PgBigInt53: Number.MAX_SAFE_INTEGER,
};

/** Whether `id` is a row id `column` can hold: an integer from 1 to the column's largest value. */
export function holdsId(column: PgColumn, id: unknown): id is number {
  const max = COLUMN_MAX[column.columnType];
  if (max === undefined) throw new Error(`${column.name} (${column.columnType}) is not an integer id column`);
  return typeof id === 'number' && Number.isInteger(id) && id >= 1 && id <= max;
}

/** `id` to look up in `column`, or `missing()` (the caller's not_found) thrown before any SQL when no row can have it. */
export function rowId(column: PgColumn, id: unknown, missing: () => Error): number {
  if (!holdsId(column, id)) throw missing();
  return id;
}
