// The public catalog (GET /models) and the URL base of preview images.
import type { EngineChoice } from '../../engines/catalog-engine.ts';
import { buildCatalog } from './catalog-data.ts';

/** Preview images are static files (spec/previews/), served under /static/previews like a CDN would. */
export const PREVIEW_PREFIX = '/static/previews/';
export const previewBase = (publicBaseUrl: string) => `${publicBaseUrl}${PREVIEW_PREFIX.slice(0, -1)}`;

const cache = new WeakMap<EngineChoice, Map<string, Buffer>>();

/**
 * The catalog as JSON bytes; built once per engine configuration and public base URL (it only
 * changes with a deploy): its engine labels and prices follow the configuration.
 */
export function catalogJson(publicBaseUrl: string, engines: EngineChoice): Buffer {
  let byBase = cache.get(engines);
  if (!byBase) cache.set(engines, (byBase = new Map()));
  let bytes = byBase.get(publicBaseUrl);
  if (!bytes) {
    bytes = Buffer.from(JSON.stringify(buildCatalog(previewBase(publicBaseUrl), engines)));
    byBase.set(publicBaseUrl, bytes);
  }
  return bytes;
}
