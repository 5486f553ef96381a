// The media manifest a pipeline recorded with its output (src/media/quality/manifest.ts: what the
// renderer placed, for the media quality checker): generations and slideshows keep it in their
// stage state, faceless videos in their render artifact. Read by the quality test and
// `npm run bench:quality` / `npm run gallery` (scripts/lib/media-run.ts); never served.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import type { MediaManifest } from '../media/quality/manifest.ts';

export type RecordedKind = 'generation' | 'slideshow' | 'faceless_video';

const WHERE: Record<RecordedKind, { table: string; column: string; key: string }> = {
  generation: { table: 'generations', column: 'state', key: 'id' },
  slideshow: { table: 'slideshows', column: 'state', key: 'id' },
  faceless_video: { table: 'faceless_videos', column: 'artifacts', key: 'video_id' },
};

/** The manifest recorded with the output of `kind` `id` (any org), or undefined. */
export async function recordedManifest(db: Db, kind: RecordedKind, id: string | number): Promise<MediaManifest | undefined> {
  const { table, column, key } = WHERE[kind];
  const rows = (await db.execute(
    sql`select jsonb_path_query_first(${sql.identifier(column)}, 'strict $.**.manifest') as m from ${sql.identifier(table)} where ${sql.identifier(key)} = ${id}`,
  )) as unknown as { m: MediaManifest | null }[];
  return rows[0]?.m ?? undefined;
}
