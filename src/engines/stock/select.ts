// What both stock engines apply to a provider's answer whatever it filtered itself: the item's
// orientation, the smallest rendition meeting the request's resolution, a video's duration.
import type { StockOrientation, StockQuery } from './types.ts';

/** A file of an item at one resolution. */
export interface Rendition {
  url: string;
  width: number;
  height: number;
}

/** Within 5% of square is square. */
export function orientationOf(width: number, height: number): StockOrientation {
  const r = width / height;
  return r > 1.05 ? 'landscape' : r < 1 / 1.05 ? 'portrait' : 'square';
}

/** `width` × `height` scaled down (never up) to fit inside `boxW` × `boxH`. */
export function fitInside(width: number, height: number, boxW: number, boxH: number): { width: number; height: number } {
  const s = Math.min(1, boxW / width, boxH / height);
  return { width: Math.round(width * s), height: Math.round(height * s) };
}

/** The smallest rendition at least the query's width and height, or undefined. */
export function smallestFitting(renditions: readonly Rendition[], q: Pick<StockQuery, 'minWidth' | 'minHeight'>): Rendition | undefined {
  return renditions
    .filter((r) => r.url && r.width >= q.minWidth && r.height >= q.minHeight)
    .sort((a, b) => a.width * a.height - b.width * b.height)[0];
}

/** Whether an item of this shape (and duration, for a video) is what the query asks for. */
export function matches(
  q: Pick<StockQuery, 'orientation' | 'kind' | 'minDurationSeconds' | 'maxDurationSeconds'>,
  item: { width: number; height: number; durationSeconds?: number },
): boolean {
  if (!(item.width > 0 && item.height > 0) || orientationOf(item.width, item.height) !== q.orientation) return false;
  if (q.kind !== 'video') return true;
  const d = item.durationSeconds;
  if (typeof d !== 'number' || !(d > 0)) return false;
  return d >= (q.minDurationSeconds ?? 0) && d <= (q.maxDurationSeconds ?? Number.POSITIVE_INFINITY);
}

/** Seconds from a reset header: Pexels sends the epoch second the quota renews, Pixabay the seconds left. */
export function resetMs(headers: Headers, name: string, epoch: boolean): number | undefined {
  const raw = Number(headers.get(name));
  if (!headers.get(name) || !Number.isFinite(raw) || raw < 0) return undefined;
  return epoch ? Math.max(0, raw * 1000 - Date.now()) : Math.round(raw * 1000);
}
