// Keyset pagination of the list endpoints (GET /generations, /slideshows, /videos): newest first
// by (created_at, id), and a signed, opaque cursor. The cursor holds the last row's created_at at
// the database's full (microsecond) precision and its id, and an HMAC over them, the list, the
// workspace and the filters, so a cursor is honoured only by the list, workspace and filters it
// was issued for (anything else is a 400 naming `cursor`). Rows inserted while a client pages
// never repeat or shift a row it has not seen yet: the next page starts strictly below the last
// row seen, whatever was inserted above it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { badRequest } from '../../errors.ts';
import { sharedSecret } from './secrets.ts';

/** The query parameters every list takes. */
export interface ListQuery {
  limit?: number;
  cursor?: string;
  created_after?: string;
  created_before?: string;
}

/** What a cursor is bound to: the list, the workspace and the filters (created_after and created_before are added). */
export interface ListScope {
  list: string;
  orgId: string;
  filters: Record<string, string | undefined>;
}

/** A position: the last row's created_at (UTC, microseconds) and id. */
interface Position {
  at: string;
  id: string;
}

const secrets = new WeakMap<object, Promise<Buffer>>();
/** The cursor signing key, made once per deployment and shared by every node (service_secrets). */
function signingKey(ctx: AppContext): Promise<Buffer> {
  let key = secrets.get(ctx.db);
  if (!key) {
    key = sharedSecret(ctx.db, 'list_cursor_signing');
    key.catch(() => secrets.delete(ctx.db));
    secrets.set(ctx.db, key);
  }
  return key;
}

function mac(key: Buffer, scope: ListScope, p: Position): Buffer {
  const filters = Object.keys(scope.filters)
    .sort()
    .map((k) => [k, scope.filters[k] ?? null]);
  return createHmac('sha256', key)
    .update(JSON.stringify([scope.list, scope.orgId, filters, p.at, p.id]))
    .digest()
    .subarray(0, 16);
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^[0-9a-f-]{36}$|^[0-9]{1,19}$/;

const invalidCursor = () =>
  badRequest('Invalid request: query.cursor is not a cursor of this list with these filters', [
    {
      field: 'query.cursor',
      message:
        'is not a cursor this list issued for this workspace and these filters; pass next_cursor from the previous page with the same filters',
    },
  ]);

/** The position a cursor points at, after checking it was issued for this scope; undefined without one. */
async function readCursor(ctx: AppContext, scope: ListScope, raw: string | undefined): Promise<Position | undefined> {
  if (raw === undefined) return undefined;
  const [at, id, sig] = Buffer.from(raw, 'base64url').toString('latin1').split('|');
  if (!AT.test(at ?? '') || !ID.test(id ?? '') || !sig) throw invalidCursor();
  const given = Buffer.from(sig, 'base64url');
  const want = mac(await signingKey(ctx), scope, { at, id });
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw invalidCursor();
  return { at, id };
}

async function writeCursor(ctx: AppContext, scope: ListScope, p: Position): Promise<string> {
  const sig = mac(await signingKey(ctx), scope, p).toString('base64url');
  return Buffer.from(`${p.at}|${p.id}|${sig}`, 'latin1').toString('base64url');
}

/** A row's created_at as the cursor keeps it: UTC with microseconds (a JS Date would drop them). */
export const cursorAt = (createdAt: AnyColumn): SQL<string> =>
  sql<string>`to_char(${createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface Keyset {
  limit: number;
  /** The conditions of this page: the created_at bounds and the position after the previous page. */
  where(createdAt: AnyColumn, id: AnyColumn): SQL[];
  /** Cuts the limit + 1 rows read to the page and signs the cursor of the next one (null on the last page). */
  page<T extends { cursorAt: string }>(rows: T[], idOf: (row: T) => string | number): Promise<{ rows: T[]; next_cursor: string | null }>;
}

/** Opens one page of a list: checks the cursor against the scope (400 naming `cursor` when it is not this scope's). */
export async function openKeyset(ctx: AppContext, base: ListScope, q: ListQuery): Promise<Keyset> {
  const scope: ListScope = {
    ...base,
    filters: { ...base.filters, created_after: q.created_after, created_before: q.created_before },
  };
  const limit = q.limit ?? 30;
  const after = await readCursor(ctx, scope, q.cursor);
  return {
    limit,
    where(createdAt, id) {
      const out: SQL[] = [];
      if (q.created_after !== undefined) out.push(sql`${createdAt} > ${q.created_after}::timestamptz`);
      if (q.created_before !== undefined) out.push(sql`${createdAt} < ${q.created_before}::timestamptz`);
      // A row comparison: PostgreSQL uses it as the bound of a backward scan of (org, created_at, id).
      if (after)
        out.push(
          sql`(${createdAt}, ${id}) < (${after.at}::timestamptz, ${after.id}::${sql.raw(after.id.includes('-') ? 'uuid' : 'bigint')})`,
        );
      return out;
    },
    async page(rows, idOf) {
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const more = rows.length > limit && last !== undefined;
      return { rows: page, next_cursor: more ? await writeCursor(ctx, scope, { at: last.cursorAt, id: String(idOf(last)) }) : null };
    },
  };
}
