// The status view of a faceless video, as GET /videos/{id} shows it (the editor's video id space
// serves faceless ids too) and as its webhook events carry it (the faceless-video pipeline's
// resource view), with the engines that made it and where each scene's picture came from.
import { and, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { facelessVideos, media } from '../../db/schema/index.ts';
import { recordedEngines } from '../../engines/engine-use.ts';
import type { StockAttribution } from '../../engines/stock/types.ts';

type S = components['schemas'];

/** What the view reads of the faceless pipeline's stage outputs (faceless_videos.artifacts); all of it may be absent on older rows. */
interface Artifacts {
  runs?: unknown;
  voiceover?: { timings?: S['SpeechEngineUse']['timings'] };
  scenes?: { mediaIds?: string[]; sources?: (SourceRecord | null)[] };
  clips?: { mediaIds?: (string | null)[]; sources?: (SourceRecord | null)[] };
}

/** Where a scene's still or clip came from, as the scenes and clips stages record it. */
interface SourceRecord {
  source?: string;
  stock?: { attribution?: Partial<StockAttribution> };
}

const text = (v: unknown, max: number) => (typeof v === 'string' ? v.replace(/[\u0000-\u001F\u007F]/g, ' ').slice(0, max) : '');
const link = (v: unknown) => (typeof v === 'string' && v.length <= 2048 && /^https?:\/\//i.test(v) && URL.canParse(v) ? v : null);

/** A stock photo's or clip's credit as the contract spells it. */
function attributionOf(a: Partial<StockAttribution>): S['StockAttribution'] {
  return {
    provider: text(a.provider, 40),
    author_name: text(a.authorName, 200),
    author_url: link(a.authorUrl),
    page_url: link(a.pageUrl),
    license: text(a.license, 500),
    license_url: link(a.licenseUrl),
  };
}

/**
 * Each scene and where its picture or clip came from, once the scenes stage has finished (null
 * before); a scene without a source record was drawn (every scene of a video made without a stock
 * or model source). A scene the clips stage gave a clip is that clip (stock_video, model_video).
 */
function scenesOf(artifacts: Artifacts): S['FacelessScene'][] | null {
  const ids = artifacts.scenes?.mediaIds;
  if (!Array.isArray(ids)) return null;
  return ids.map((id, i) => {
    const clipId = artifacts.clips?.mediaIds?.[i];
    const clip = artifacts.clips?.sources?.[i];
    if (typeof clipId === 'string' && (clip?.source === 'stock_video' || clip?.source === 'model_video')) {
      const credit = clip.source === 'stock_video' && clip.stock?.attribution ? attributionOf(clip.stock.attribution) : null;
      return { media_id: id, source: clip.source, clip_media_id: clipId, attribution: credit };
    }
    const src = artifacts.scenes?.sources?.[i];
    const stock = src?.source === 'stock' && src.stock?.attribution ? src.stock.attribution : undefined;
    if (src?.source === 'model') return { media_id: id, source: 'model', attribution: null };
    return { media_id: id, source: stock ? 'stock' : 'drawn', attribution: stock ? attributionOf(stock) : null };
  });
}

/** GET /videos/{id} of a faceless video (undefined when the id is not one of this workspace's). */
export async function facelessStatus(
  ctx: AppContext,
  orgId: string,
  id: number,
  db: AppContext['db'] | Tx = ctx.db,
): Promise<S['Video'] | undefined> {
  const [row] = await db
    .select({ f: facelessVideos, m: media })
    .from(facelessVideos)
    .leftJoin(media, eq(media.id, facelessVideos.outputMediaId))
    .where(and(eq(facelessVideos.videoId, id), eq(facelessVideos.orgId, orgId)));
  return row ? facelessView(ctx, row.f, row.m) : undefined;
}

/** A faceless video row (and its MP4, once completed) as GET /videos/{id} and GET /videos show it. */
export function facelessView(ctx: AppContext, f: typeof facelessVideos.$inferSelect, m: typeof media.$inferSelect | null): S['Video'] {
  const artifacts = (f.artifacts ?? {}) as Artifacts;
  const done = f.status === 'completed' && m;
  return {
    object: 'video',
    id: f.videoId,
    kind: 'faceless',
    status: f.status,
    title: f.title,
    url: done ? ctx.storage.signedUrl(m.storageKey) : null,
    error: (f.error as S['FailureDetail'] | null) ?? null,
    stage: f.status === 'generating' || f.status === 'error' ? ((f.stage as S['Video']['stage']) ?? null) : null,
    progress: f.status === 'completed' ? 100 : f.progress,
    duration_seconds: done ? m.durationSeconds : null,
    size_bytes: done ? m.sizeBytes : null,
    // The speech entry says where the word timings came from (the voiceover stage's output).
    engines: recordedEngines(artifacts as Record<string, unknown>, artifacts.voiceover?.timings ?? null),
    scenes: scenesOf(artifacts),
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
  };
}
