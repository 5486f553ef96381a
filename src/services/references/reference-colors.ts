// The main colours of a saved reference: its first stored image (or its first video's first
// frame), most dominant first. Generations and slideshows made from a custom reference take
// their palette from it when no brand kit gives one.
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { media } from '../../db/schema/index.ts';
import { extractFrame } from '../../media/ffmpeg.ts';
import { imagePalette } from '../../engines/local/slide.ts';

/** `workDir`: the job's folder (a video is copied into it to read a frame). */
export async function referenceColors(
  ctx: AppContext,
  orgId: string,
  mediaIds: string[],
  workDir: string,
  signal?: AbortSignal,
): Promise<string[]> {
  if (!mediaIds.length) return [];
  const rows = await ctx.db
    .select()
    .from(media)
    .where(and(eq(media.orgId, orgId), inArray(media.id, mediaIds)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = mediaIds.map((id) => byId.get(id)).filter((r) => r !== undefined);
  const image = ordered.find((r) => r.kind === 'image');
  let bytes: Buffer | undefined;
  if (image) bytes = await ctx.storage.readBuffer(image.storageKey);
  else {
    const video = ordered.find((r) => r.kind === 'video');
    if (!video) return [];
    const file = path.join(workDir, `reference${path.extname(video.storageKey)}`);
    await ctx.storage.copyToFile(video.storageKey, file);
    bytes = await extractFrame({ path: file, type: video.contentType }, 0, { signal });
  }
  return imagePalette(bytes, ctx.config.mediaMaxPixels);
}
