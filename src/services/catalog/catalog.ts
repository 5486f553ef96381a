// The public catalog (GET /models) and the URL base of preview images.
import { buildCatalog } from './catalog-data.ts';

/** Preview images are static files (spec/previews/), served under /static/previews like a CDN would. */
export const PREVIEW_PREFIX = '/static/previews/';
export const previewBase = (publicBaseUrl: string) => `${publicBaseUrl}${PREVIEW_PREFIX.slice(0, -1)}`;

const cache = new Map<string, Buffer>();

/** The catalog as JSON bytes; built once per public base URL (it only changes with a deploy). */
export function catalogJson(publicBaseUrl: string): Buffer {
  let bytes = cache.get(publicBaseUrl);
  if (!bytes) {
    bytes = Buffer.from(JSON.stringify(buildCatalog(previewBase(publicBaseUrl))));
    cache.set(publicBaseUrl, bytes);
  }
  return bytes;
}
