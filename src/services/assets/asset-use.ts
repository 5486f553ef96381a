// Workspace assets that queued work reads when it runs (a brand kit's logo, a custom avatar's
// portrait; a custom voice names the voice a faceless video is spoken by) and the one rule that
// keeps "in use" and "deleted" exclusive, in PostgreSQL, whichever API node serves each side:
//
//   - paid work reads each asset it will use with `useAsset`, in the charged command's transaction
//     (its `prepare`, before the work's rows are written): the row is locked FOR KEY SHARE until
//     that transaction ends, so no delete can pass between the check and the commit;
//   - a delete, or a change of what queued work reads (a kit's logo), runs through `changeAsset`:
//     one transaction that locks the row FOR UPDATE (waiting for the charges in flight), then looks
//     for queued or running work naming the asset in statements after the lock (READ COMMITTED:
//     they see the work that committed while the lock was awaited), then makes the change.
//
// Either the work commits first, and the delete sees it (409 conflict), or the delete commits
// first, and the work's locking read finds no row (404 naming the field, nothing charged).
// A work kind that reads an asset when it runs records its id in its spec (spec.<kind>.id) and is
// listed in ASSET_USERS.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db, Tx } from '../../db/client.ts';
import { holdsId } from '../../db/ids.ts';
import { brandKits, customAvatars, customVoices, facelessVideos, generations, slideshows } from '../../db/schema/index.ts';
import { ApiError, notFound } from '../../errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Each kind of asset: its table, how it is named in messages and errors, and whether its ids are UUIDs. */
const ASSETS = {
  brandKit: { table: brandKits, id: brandKits.id, orgId: brandKits.orgId, label: 'Brand kit', resource: 'brand_kit', uuid: false },
  avatar: { table: customAvatars, id: customAvatars.id, orgId: customAvatars.orgId, label: 'Avatar', resource: 'avatar', uuid: true },
  voice: { table: customVoices, id: customVoices.id, orgId: customVoices.orgId, label: 'Voice', resource: 'voice', uuid: true },
} as const;

export type AssetKind = keyof typeof ASSETS;
export type AssetRow<K extends AssetKind> = (typeof ASSETS)[K]['table']['$inferSelect'];
export type AssetId<K extends AssetKind> = AssetRow<K>['id'];

/** The work that reads assets when it runs: the statuses in which it has yet to, and which kinds it reads (spec.<kind>.id). */
const ASSET_USERS: {
  label: string;
  table: PgTable;
  id: PgColumn;
  orgId: PgColumn;
  status: PgColumn;
  spec: PgColumn;
  pending: string[];
  reads: AssetKind[];
}[] = [
  {
    label: 'generation',
    table: generations,
    id: generations.id,
    orgId: generations.orgId,
    status: generations.status,
    spec: generations.spec,
    pending: ['generating'],
    reads: ['brandKit', 'avatar'],
  },
  {
    label: 'slideshow',
    table: slideshows,
    id: slideshows.id,
    orgId: slideshows.orgId,
    status: slideshows.status,
    spec: slideshows.spec,
    pending: ['queued', 'generating'],
    reads: ['brandKit', 'avatar'],
  },
  {
    label: 'faceless video',
    table: facelessVideos,
    id: facelessVideos.videoId,
    orgId: facelessVideos.orgId,
    status: facelessVideos.status,
    spec: facelessVideos.spec,
    pending: ['queued', 'generating'],
    reads: ['brandKit', 'voice'],
  },
];

type Locking = 'key share' | 'update';

/** The workspace's asset row, locked as asked; undefined when it has none with that id. */
async function lockedRow<K extends AssetKind>(
  db: Db | Tx,
  kind: K,
  orgId: string,
  id: AssetId<K>,
  strength: Locking,
): Promise<AssetRow<K> | undefined> {
  const a = ASSETS[kind];
  // An id its column cannot hold names no row (src/db/ids.ts): no SQL for it.
  if (a.uuid ? !UUID.test(String(id)) : !holdsId(a.id, id)) return undefined;
  const table = a.table as PgTable;
  const [row] = await db
    .select()
    .from(table)
    .where(and(eq(a.id, id), eq(a.orgId, orgId)))
    .for(strength);
  return row as AssetRow<K> | undefined;
}

/**
 * The asset paid work will read when it runs, share-locked until the caller's transaction ends
 * (call it in the charged command's `prepare`); undefined when the workspace does not have it
 * (the caller answers 404 naming its field). Charges naming the same asset do not wait for each other.
 */
export function useAsset<K extends AssetKind>(tx: Tx, kind: K, orgId: string, id: AssetId<K>): Promise<AssetRow<K> | undefined> {
  return lockedRow(tx, kind, orgId, id, 'key share');
}

/** The first queued or running work of the workspace that reads the asset, as "generation <id>". */
async function pendingUser(tx: Tx, kind: AssetKind, orgId: string, id: string | number): Promise<string | undefined> {
  for (const u of ASSET_USERS.filter((x) => x.reads.includes(kind))) {
    const [row] = await tx
      .select({ id: u.id })
      .from(u.table)
      .where(and(eq(u.orgId, orgId), inArray(u.status, u.pending), sql`(${u.spec} -> ${kind} ->> 'id') = ${String(id)}`))
      .limit(1);
    if (row) return `${u.label} ${row.id}`;
  }
  return undefined;
}

export interface LockedAsset<K extends AssetKind> {
  tx: Tx;
  /** The row as it is now, locked FOR UPDATE until the change commits. */
  row: AssetRow<K>;
  /** 409 conflict when queued or running work reads the asset; `change` ends the message ("delete it"). */
  refuseIfUsed(change?: string): Promise<void>;
}

/**
 * Runs `change` in one transaction with the asset's row locked FOR UPDATE: 404 (naming path.id)
 * when the workspace does not have it. What `change` does after `refuseIfUsed` cannot race work
 * being charged for the asset. Work outside the database (stored bytes) is the caller's, after this returns.
 */
export function changeAsset<K extends AssetKind, T>(
  db: Db,
  kind: K,
  orgId: string,
  id: AssetId<K>,
  change: (asset: LockedAsset<K>) => Promise<T>,
): Promise<T> {
  const a = ASSETS[kind];
  return db.transaction(async (tx) => {
    const row = await lockedRow(tx, kind, orgId, id, 'update');
    if (!row) throw notFound(a.label, id, a.resource);
    const refuseIfUsed = async (what = 'delete it') => {
      const user = await pendingUser(tx, kind, orgId, id);
      if (!user) return;
      throw new ApiError(
        'conflict',
        `${a.label} ${id} is used by ${user}, which is still queued or running; ${what} once that job has finished`,
        {
          field: 'path.id',
          used_by: user,
        },
      );
    };
    return change({ tx, row, refuseIfUsed });
  });
}

/** Deletes the asset's row unless queued or running work reads it (409); returns the deleted row (its stored bytes are the caller's to delete). */
export function deleteUnusedAsset<K extends AssetKind>(db: Db, kind: K, orgId: string, id: AssetId<K>): Promise<AssetRow<K>> {
  const a = ASSETS[kind];
  return changeAsset(db, kind, orgId, id, async ({ tx, row, refuseIfUsed }) => {
    await refuseIfUsed();
    await tx.delete(a.table as PgTable).where(and(eq(a.id, id), eq(a.orgId, orgId)));
    return row;
  });
}
