// Orphaned stored media: objects written to storage whose media row never committed (the process
// died, or the transaction rolled back, between the upload and the insert), and partial writes a
// killed process left. Every workspace object lives under one of the prefixes below and is
// referenced by exactly one `media.storage_key`; an object under them that no row references and
// that nobody has written for ORPHAN_GRACE_MS is deleted, through the storage interface only.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { media } from '../../db/schema/index.ts';
import type { Storage } from '../../storage/index.ts';

/** Prefixes of workspace media (each object referenced by a media row). Shared objects (sound effects) are not swept. */
export const WORKSPACE_MEDIA_PREFIXES = ['generations/', 'editor-media/', 'editor-exports/', 'slideshows/'] as const;

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
  // Keys are `<prefix><org id>/…`: looked up per workspace (media_org_idx), in batches.
  const pending = new Map<string, string[]>();
  const flush = async (org: string) => {
    const keys = pending.get(org) ?? [];
    pending.delete(org);
    if (!keys.length) return;
    const where = UUID_RE.test(org) ? and(eq(media.orgId, org), inArray(media.storageKey, keys)) : inArray(media.storageKey, keys);
    const rows = await db.select({ key: media.storageKey }).from(media).where(where);
    const referenced = new Set(rows.map((r) => r.key));
    for (const key of keys) {
      if (referenced.has(key)) continue;
      await storage.delete(key);
      result.deleted.push(key);
    }
  };
  for (const prefix of WORKSPACE_MEDIA_PREFIXES) {
    for await (const obj of storage.list(prefix)) {
      result.checked++;
      if (obj.lastModified.getTime() > cutoff) continue;
      const org = obj.key.slice(prefix.length).split('/')[0];
      const keys = pending.get(org) ?? [];
      keys.push(obj.key);
      pending.set(org, keys);
      if (keys.length >= BATCH) await flush(org);
    }
  }
  for (const org of [...pending.keys()]) await flush(org);
  return result;
}
