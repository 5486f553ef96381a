// The media a timeline uses, copied into a job's own folder for the renderer: each stored object
// becomes a plain file there (the renderer reads copies, each with the demuxer of its sniffed
// type, never a path into storage). Shared by editor exports and slideshow carousels.
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { media } from '../../db/schema/index.ts';
import type { RenderMedia } from '../../engines/render/types.ts';
import type { Timeline } from './model.ts';

/** Copies the workspace's media the timeline refers to into `workDir`; `lost` names those that no longer exist. */
export async function copyTimelineMedia(
  ctx: Pick<AppContext, 'db' | 'storage'>,
  orgId: string,
  timeline: Pick<Timeline, 'items'>,
  workDir: string,
): Promise<{ files: Map<string, RenderMedia>; lost: string[] }> {
  const ids = [...new Set(timeline.items.map((i) => i.media_id).filter((id): id is string => Boolean(id)))];
  const rows = ids.length
    ? await ctx.db
        .select()
        .from(media)
        .where(and(eq(media.orgId, orgId), inArray(media.id, ids)))
    : [];
  const files = new Map<string, RenderMedia>();
  for (const m of rows) {
    const file = path.join(workDir, `input-${m.id}${path.extname(m.storageKey)}`);
    await ctx.storage.copyToFile(m.storageKey, file);
    files.set(m.id, {
      path: file,
      type: m.contentType,
      kind: m.kind,
      width: m.width,
      height: m.height,
      durationSeconds: m.durationSeconds,
      hasAudio: m.hasAudio,
    });
  }
  return { files, lost: ids.filter((id) => !files.has(id)) };
}
