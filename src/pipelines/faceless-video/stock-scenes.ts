// A faceless scene from stock (FACELESS_SCENE_SOURCE=stock_photo, and stock_video for its clip):
// keyword queries from the scene's text, longest words first, each next query one word shorter;
// the first query with an item that downloads (through the guarded client, sniffed and bounded in
// pixels; a clip also inspected like an uploaded video: decoded, bounded in pixels and duration)
// gives the photo or clip. Clips that last the whole scene are tried first. None found, no
// keywords, or the provider refusing the request for good: the scene is drawn here (a clip: the
// scene keeps its still), and its record says why. A transient failure (429, 5xx, a network error, a download that
// may work later) fails the attempt as retryable instead: the job's retry searches again, the
// scenes already stored are kept.
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { ProviderError } from '../../engines/generation.ts';
import type { PictureFallback, PictureRecord } from '../../engines/image/model-picture.ts';
import type { StockAttribution, StockEngine, StockItem, StockKind, StockOrientation } from '../../engines/stock/types.ts';
import type { ClipFallback, ClipRecord } from '../../engines/video/model-clip.ts';
import { JobFailure } from '../../jobs/define-job.ts';
import { fetchCheckedMedia, type Checked, type MediaCheckOptions } from '../../media/fetch-media.ts';
import { textWords } from '../../services/references/analysis.ts';

/** Where a scene's picture came from (the scenes stage's record, one per scene). */
export interface SceneSource {
  /** stock: the stock photo below, cropped to the frame; model: the image model's picture (`model`); drawn: the local scene renderer. */
  source: 'stock' | 'drawn' | 'model';
  /** The queries asked, in order (stock scenes). */
  queries?: string[];
  /**
   * Why a stock or model scene was drawn here instead (for a model scene: the model has no
   * variant from text, or no engine here makes it; `requires` names the configuration that would).
   */
  fallback?: 'no_keywords' | 'no_results' | 'provider_refused' | 'downloads_refused' | PictureFallback['reason'];
  requires?: string | null;
  /** The image model's record of a model scene: model, variant, provider, provider job id, seconds. */
  model?: PictureRecord;
  /** The provider's refusal (fallback provider_refused). */
  error?: string;
  /** The item used: its provider's id, the query that found it, the file downloaded and whom to credit. */
  stock?: { engine: string; id: string; query: string; url: string; width: number; height: number; attribution: StockAttribution };
}

/**
 * Where a scene's clip came from (FACELESS_SCENE_SOURCE stock_video or video_model; the clips
 * stage's record, one per scene): a stock clip, the video model's clip, or none, the scene then
 * being its still (its SceneSource: a stock photo, the image model's picture, or drawn) and
 * `fallback` saying why.
 */
export interface ClipSource {
  source: 'stock_video' | 'model_video' | 'still';
  /** The queries asked, in order (stock clips). */
  queries?: string[];
  fallback?: 'no_keywords' | 'no_results' | 'provider_refused' | 'downloads_refused' | ClipFallback['reason'];
  requires?: string | null;
  error?: string;
  /** The video model's record of a model clip: model, variant, provider, provider job id, seconds asked and taken. */
  model?: ClipRecord;
  /** The stock clip used (its duration at the provider, in seconds) and whom to credit. */
  stock?: NonNullable<SceneSource['stock']> & { durationSeconds: number | null };
}

/** Words that say nothing a picture could show (besides textWords' stop words). */
const FILLER = new Set(
  "it its it's has have had was were be been being you we they he she his her their them us can could will would should just not but or so do does did very really more most than then there here what when why how who which all any some one also about into out up get got make made".split(
    ' ',
  ),
);
const MAX_WORDS = 4;
const MAX_QUERIES = 3;
const ITEMS_PER_QUERY = 3;
const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
const MAX_PHOTO_BYTES = 25 * 1024 * 1024;
/** Stock clips: MP4 only (both libraries serve H.264 MP4s), at most this big and this long (they loop when shorter than the scene). */
const CLIP_TYPES = ['video/mp4'];
const MAX_CLIP_BYTES = 200 * 1024 * 1024;
const MIN_CLIP_SECONDS = 2;
const MAX_CLIP_SECONDS = 60;

/**
 * The queries for a scene's text: its (at most four) longest distinct keywords in the order
 * written, then the same without the shortest of them, and so on: at most three queries.
 */
export function sceneQueries(text: string): string[] {
  const words = [...new Set(textWords(text).filter((w) => w.length > 2 && !FILLER.has(w) && !/^\d+$/.test(w)))];
  const ranked = words.map((w, i) => ({ w, i })).sort((a, b) => b.w.length - a.w.length || a.i - b.i);
  const queries: string[] = [];
  for (let n = Math.min(MAX_WORDS, ranked.length); n > 0 && queries.length < MAX_QUERIES; n--) {
    queries.push(
      ranked
        .slice(0, n)
        .sort((a, b) => a.i - b.i)
        .map((x) => x.w)
        .join(' '),
    );
  }
  return queries;
}

export interface StockSceneRequest {
  text: string;
  width: number;
  height: number;
  signal: AbortSignal;
}

/** What a stock search for a scene found: the item, its checked download and the query that found it; or why nothing. */
type Found<T> =
  | { item: StockItem; value: T; query: string; queries: string[] }
  | { queries: string[]; fallback: 'no_keywords' | 'no_results' | 'provider_refused' | 'downloads_refused'; error?: string };

/**
 * The first item of `kind` for the scene's text whose download `fetch` accepts (undefined: refused
 * for good, next item), trying the scene's queries in order, the items of each in `rank`'s order.
 */
async function findStock<T>(
  engine: StockEngine,
  req: StockSceneRequest & { kind: StockKind; minDurationSeconds?: number; maxDurationSeconds?: number },
  fetch: (item: StockItem) => Promise<T | undefined>,
  rank: (items: StockItem[]) => StockItem[] = (items) => items,
): Promise<Found<T>> {
  const queries = sceneQueries(req.text);
  if (!queries.length) return { queries, fallback: 'no_keywords' };
  const orientation: StockOrientation = req.height > req.width ? 'portrait' : req.width > req.height ? 'landscape' : 'square';
  // Up to 1.5× enlargement is accepted (a 1080×1920 frame takes a 720×1280 photo or clip).
  const need = { minWidth: Math.ceil((req.width * 2) / 3), minHeight: Math.ceil((req.height * 2) / 3) };
  const { kind, minDurationSeconds, maxDurationSeconds, signal } = req;
  const asked: string[] = [];
  let refused = 0;
  for (const text of queries) {
    asked.push(text);
    let items: StockItem[];
    try {
      items = await search(engine, { text, orientation, kind, ...need, minDurationSeconds, maxDurationSeconds, signal });
    } catch (err) {
      if (err instanceof StockRefused) return { queries: asked, fallback: 'provider_refused', error: err.message };
      throw err;
    }
    for (const item of rank(items).slice(0, ITEMS_PER_QUERY)) {
      const value = await fetch(item);
      if (value === undefined) {
        refused++;
        continue;
      }
      return { item, value, query: text, queries: asked };
    }
  }
  return { queries: asked, fallback: refused ? 'downloads_refused' : 'no_results' };
}

/** The record of the item a scene uses: its provider's id, the query that found it, the file downloaded and whom to credit. */
const stockRecord = (engine: StockEngine, item: StockItem, query: string) => {
  const { id, url, width, height, attribution } = item;
  return { engine: engine.name, id, query, url, width, height, attribution };
};

/** A stock photo for the scene and its record, or no photo and the record of why. */
export async function findStockPhoto(
  ctx: AppContext,
  engine: StockEngine,
  req: StockSceneRequest,
): Promise<{ photo?: Buffer; source: SceneSource }> {
  const found = await findStock(engine, { ...req, kind: 'photo' }, (item) =>
    download(ctx, item, req.signal, { maxBytes: MAX_PHOTO_BYTES, types: PHOTO_TYPES, pixels: pixelLimits(ctx) }),
  );
  if (!('item' in found)) return { source: { source: 'drawn', ...found } };
  const { value, item, query, queries } = found;
  return { photo: value.bytes, source: { source: 'stock', queries, stock: stockRecord(engine, item, query) } };
}

/** A stock clip for a scene of `seconds`: the downloaded file (checked, in `workDir`) and its record, or no clip and why. */
export async function findStockClip(
  ctx: AppContext,
  engine: StockEngine,
  req: StockSceneRequest & { seconds: number; workDir: string },
): Promise<{ file?: string; source: ClipSource }> {
  const limits = pixelLimits(ctx);
  const found = await findStock(
    engine,
    { ...req, kind: 'video', minDurationSeconds: MIN_CLIP_SECONDS, maxDurationSeconds: MAX_CLIP_SECONDS },
    async (item) =>
      (
        await download(ctx, item, req.signal, {
          maxBytes: MAX_CLIP_BYTES,
          types: CLIP_TYPES,
          inspect: { file: path.join(req.workDir, `stock-${item.id}.mp4`), limits, kinds: ['video'], maxSeconds: MAX_CLIP_SECONDS + 1 },
        })
      )?.inspected?.file,
    // The clips that last the whole scene first (the provider's order kept among each), so few scenes loop.
    (items) => [
      ...items.filter((x) => (x.durationSeconds ?? 0) >= req.seconds),
      ...items.filter((x) => (x.durationSeconds ?? 0) < req.seconds),
    ],
  );
  if (!('item' in found)) return { source: { source: 'still', ...found } };
  const { value, item, query, queries } = found;
  return {
    file: value,
    source: {
      source: 'stock_video',
      queries,
      stock: { ...stockRecord(engine, item, query), durationSeconds: item.durationSeconds ?? null },
    },
  };
}

const pixelLimits = (ctx: AppContext) => ({ maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension });

/** The engine's search; a transient failure fails the attempt (retryable), a final one is a StockRefused. */
async function search(engine: StockEngine, q: Parameters<StockEngine['search']>[0]): Promise<StockItem[]> {
  try {
    return await engine.search(q);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.retryable) {
      throw new JobFailure(
        {
          code: err.code,
          message: `The stock media provider failed: ${err.message}`,
          retryable: true,
          context: {
            provider: engine.name,
            ...(err.status ? { status: err.status } : {}),
            ...(err.retryAfterMs ? { retry_after_ms: err.retryAfterMs } : {}),
          },
        },
        true,
      );
    }
    throw new StockRefused(err.message);
  }
}

/** A provider's final refusal of a search (a wrong key, a request it rejects): the scene is drawn here. */
export class StockRefused extends Error {
  override name = 'StockRefused';
}

/** The item's file through the guarded client, checked as an upload (`check`); undefined when refused for good. */
async function download<O extends MediaCheckOptions>(
  ctx: AppContext,
  item: StockItem,
  signal: AbortSignal,
  check: O & { maxBytes: number },
): Promise<Checked<O> | undefined> {
  const what = item.kind === 'video' ? 'stock clip' : 'stock photo';
  try {
    return await fetchCheckedMedia(ctx.fetcher, item.url, {
      ...check,
      timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
      signal,
      refuse: (r) =>
        signal.aborted
          ? signal.reason
          : r.reason === 'fetch' && (r.error.retryable || r.error.reason === 'network')
            ? new JobFailure(
                {
                  code: 'input_unavailable',
                  message: `The ${what} ${item.url} ${r.message}`,
                  retryable: true,
                  context: { url: item.url, reason: r.code },
                },
                true,
              )
            : new StockRefused(`${item.url} ${r.message}`),
    });
  } catch (err) {
    if (err instanceof StockRefused) return undefined;
    throw err;
  }
}
