// The stock capability: licensed stock photos and videos found by a text query (a faceless video's
// scenes with FACELESS_SCENE_SOURCE=stock_photo). Engines: Pexels (./pexels.ts, PEXELS_API_KEY),
// then Pixabay (./pixabay.ts, PIXABAY_API_KEY); with neither key the registry (../index.ts) has
// none. An engine only searches: each item names the file at the resolution chosen for the
// request, which the caller downloads through the guarded client and checks like an upload
// (src/media/fetch-media.ts). Items are held to the request here as well as at the provider:
// orientation, the chosen file's resolution, a video's duration (./select.ts).
// Failures are ProviderErrors (../generation.ts): 429 and 5xx retryable (retryAfterMs from
// Retry-After or the provider's rate-limit reset header), other 4xx not; the key is never in them.

export type StockOrientation = 'portrait' | 'landscape' | 'square';
export type StockKind = 'photo' | 'video';

export interface StockQuery {
  /** Keywords (the provider's search text). */
  text: string;
  orientation: StockOrientation;
  kind: StockKind;
  /** The least width and height of the file an item names. */
  minWidth: number;
  minHeight: number;
  /** Videos only: the duration an item must have. */
  minDurationSeconds?: number;
  maxDurationSeconds?: number;
  signal?: AbortSignal;
}

/** Who made an item and under which terms, as the provider asks it to be credited. */
export interface StockAttribution {
  provider: 'Pexels' | 'Pixabay';
  authorName: string;
  authorUrl: string;
  /** The item's page at the provider. */
  pageUrl: string;
  /** The provider's licence, in a sentence, and where it is. */
  license: string;
  licenseUrl: string;
}

export interface StockItem {
  /** The provider's id of the item. */
  id: string;
  kind: StockKind;
  /** The file to download: the smallest of the item's renditions that meets the request's resolution. */
  url: string;
  /** Of that file. */
  width: number;
  height: number;
  /** Videos. */
  durationSeconds?: number;
  attribution: StockAttribution;
}

export interface StockEngine {
  readonly name: string;
  /** Items matching the query, the provider's best first; empty when none does. */
  search(query: StockQuery): Promise<StockItem[]>;
}
