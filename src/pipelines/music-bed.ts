// The music bed of a pipeline's video (faceless videos, slideshows), made once and kept: a track
// of the music library (src/media/music-bed.ts) rendered into the job's folder, stored under
// `key` and recorded as an audio media row with a stable id, so a repeated stage finds the same
// row and the editor project can hold it as an audio item.
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { media } from '../db/schema/index.ts';
import { renderMusicBed, type MusicBedOptions } from '../media/music-bed.ts';

export interface StoredMusicBed {
  mediaId: string;
  durationMs: number;
}

export async function storeMusicBed(
  ctx: AppContext,
  opts: { orgId: string; mediaId: string; key: string; title: string; workDir: string; bed: MusicBedOptions },
): Promise<StoredMusicBed> {
  const file = path.join(opts.workDir, 'music.wav');
  await renderMusicBed(file, opts.bed);
  const stored = await ctx.storage.put(opts.key, { file }, 'audio/wav');
  await ctx.db
    .insert(media)
    .values({
      id: opts.mediaId,
      orgId: opts.orgId,
      kind: 'audio',
      status: 'completed',
      source: 'generation',
      title: opts.title.slice(0, 200),
      filename: 'music.wav',
      contentType: 'audio/wav',
      sizeBytes: stored.bytes,
      storageKey: opts.key,
      durationSeconds: opts.bed.seconds,
      hasAudio: true,
    })
    .onConflictDoNothing();
  return { mediaId: opts.mediaId, durationMs: Math.round(opts.bed.seconds * 1000) };
}
