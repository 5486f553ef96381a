// A faceless scene from stock (FACELESS_SCENE_SOURCE=stock_photo): keyword queries from the
// scene's text, longest words first, each next query one word shorter; the first query with an
// item that downloads (through the guarded client, sniffed and bounded in pixels) gives the photo.
// None found, no keywords, or the provider refusing the request for good: the scene is drawn
// here, and its record says why. A transient failure (429, 5xx, a network error, a download that
// may work later) fails the attempt as retryable instead: the job's retry searches again, the
// scenes already stored are kept.
import type { AppContext } from '../../context.ts';
import { ProviderError } from '../../engines/generation.ts';
import type { PictureFallback, PictureRecord } from '../../engines/image/model-picture.ts';
import type { StockAttribution, StockEngine, StockItem, StockOrientation } from '../../engines/stock/types.ts';
import { JobFailure } from '../../jobs/define-job.ts';
import { fetchCheckedMedia } from '../../media/fetch-media.ts';
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

/** A stock photo for the scene and its record, or no photo and the record of why. */
export async function findStockPhoto(
  ctx: AppContext,
  engine: StockEngine,
  req: StockSceneRequest,
): Promise<{ photo?: Buffer; source: SceneSource }> {
  const queries = sceneQueries(req.text);
  if (!queries.length) return { source: { source: 'drawn', queries, fallback: 'no_keywords' } };
  const orientation: StockOrientation = req.height > req.width ? 'portrait' : req.width > req.height ? 'landscape' : 'square';
  // Up to 1.5× enlargement is accepted (a 1080×1920 frame takes a 720×1280 photo).
  const need = { minWidth: Math.ceil((req.width * 2) / 3), minHeight: Math.ceil((req.height * 2) / 3) };
  const asked: string[] = [];
  let refused = 0;
  for (const text of queries) {
    asked.push(text);
    let items: StockItem[];
    try {
      items = await search(engine, { text, orientation, kind: 'photo', ...need, signal: req.signal });
    } catch (err) {
      if (err instanceof StockRefused)
        return { source: { source: 'drawn', queries: asked, fallback: 'provider_refused', error: err.message } };
      throw err;
    }
    for (const item of items.slice(0, ITEMS_PER_QUERY)) {
      const photo = await download(ctx, item, req.signal);
      if (!photo) {
        refused++;
        continue;
      }
      const { id, url, width, height, attribution } = item;
      return {
        photo,
        source: { source: 'stock', queries: asked, stock: { engine: engine.name, id, query: text, url, width, height, attribution } },
      };
    }
  }
  return { source: { source: 'drawn', queries: asked, fallback: refused ? 'downloads_refused' : 'no_results' } };
}

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

/** The item's file through the guarded client, checked as an upload; undefined when refused for good. */
async function download(ctx: AppContext, item: StockItem, signal: AbortSignal): Promise<Buffer | undefined> {
  try {
    const { bytes } = await fetchCheckedMedia(ctx.fetcher, item.url, {
      maxBytes: MAX_PHOTO_BYTES,
      timeoutMs: ctx.config.outboundFetchJobTimeoutMs,
      signal,
      types: PHOTO_TYPES,
      pixels: { maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension },
      refuse: (r) =>
        signal.aborted
          ? signal.reason
          : r.reason === 'fetch' && (r.error.retryable || r.error.reason === 'network')
            ? new JobFailure(
                {
                  code: 'input_unavailable',
                  message: `The stock photo ${item.url} ${r.message}`,
                  retryable: true,
                  context: { url: item.url, reason: r.code },
                },
                true,
              )
            : new StockRefused(`${item.url} ${r.message}`),
    });
    return bytes;
  } catch (err) {
    if (err instanceof StockRefused) return undefined;
    throw err;
  }
}
