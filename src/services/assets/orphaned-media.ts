// Orphaned stored media: objects written to storage whose row never committed (the process died, or
// the transaction rolled back, between the upload and the insert), objects a replaced or deleted row
// left behind, and partial writes a killed process left. Every workspace object lives under one of the
// prefixes of STORED_OBJECT_OWNERS and is referenced by the key column of the table that owns that
// prefix; an object under them that no row references and that nobody has written for
// ORPHAN_GRACE_MS is deleted, through the storage interface only.
import { and, eq, inArray } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { brandKits, customAvatars, customVoices, media } from '../../db/schema/index.ts';
import type { Storage } from '../../storage/index.ts';
import { keyWorkspace, WORKSPACE_KEY_PREFIXES as P } from '../../storage/keys.ts';

/** A storage prefix and the table whose `key` column references its objects (keys are `<prefix><org id>/…`). */
interface StoredObjectOwner {
  prefix: string;
  table: PgTable;
  orgId: PgColumn;
  key: PgColumn;
}

const inMedia = (prefix: string): StoredObjectOwner => ({ prefix, table: media, orgId: media.orgId, key: media.storageKey });

/**
 * Every prefix the service writes workspace objects under (src/storage/keys.ts), with the table that
 * references them. Shared objects (sound-effects/, catalog-samples/) are not swept. A new workspace
 * layout in keys.ts gets its owner here.
 */
export const STORED_OBJECT_OWNERS: readonly StoredObjectOwner[] = [
  inMedia(P.generations),
  inMedia(P.editorMedia),
  inMedia(P.editorExports),
  inMedia(P.slideshows),
  inMedia(P.faceless),
  { prefix: P.brandKits, table: brandKits, orgId: brandKits.orgId, key: brandKits.logoKey },
  { prefix: P.avatars, table: customAvatars, orgId: customAvatars.orgId, key: customAvatars.imageKey },
  { prefix: P.voices, table: customVoices, orgId: customVoices.orgId, key: customVoices.sampleKey },
];

/** An unreferenced object younger than this is left alone: its row may still be about to commit. */
export const ORPHAN_GRACE_MS = 6 * 3600 * 1000;

const BATCH = 500;

export interface OrphanSweep {
  checked: number;
  deleted: string[];
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function sweepOrphanedMedia(db: Db, storage: Storage, opts: { graceMs?: number; now?: Date } = {}): Promise<OrphanSweep> {
  const cutoff = (opts.now ?? new Date()).getTime() - (opts.graceMs ?? ORPHAN_GRACE_MS);
  const result: OrphanSweep = { checked: 0, deleted: [] };
  for (const owner of STORED_OBJECT_OWNERS) {
    // Keys are `<prefix><org id>/…`: looked up per workspace (the owner's org index), in batches.
    const pending = new Map<string, string[]>();
    const flush = async (org: string) => {
      const keys = pending.get(org) ?? [];
      pending.delete(org);
      if (!keys.length) return;
      const where = UUID_RE.test(org) ? and(eq(owner.orgId, org), inArray(owner.key, keys)) : inArray(owner.key, keys);
      const rows = await db.select({ key: owner.key }).from(owner.table).where(where);
      const referenced = new Set(rows.map((r) => r.key));
      for (const key of keys) {
        if (referenced.has(key)) continue;
        await storage.delete(key);
        result.deleted.push(key);
      }
    };
    for await (const obj of storage.list(owner.prefix)) {
      result.checked++;
      if (obj.lastModified.getTime() > cutoff) continue;
      const org = keyWorkspace(obj.key) ?? '';
      const keys = pending.get(org) ?? [];
      keys.push(obj.key);
      pending.set(org, keys);
      if (keys.length >= BATCH) await flush(org);
    }
    for (const org of [...pending.keys()]) await flush(org);
  }
  return result;
}
