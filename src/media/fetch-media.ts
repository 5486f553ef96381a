// Media the service fetches from a URL it was given (reference images, product photos, logos,
// source videos, a provider's output), fetched and checked in one place:
//   fetchMediaBytes    through the guarded client (src/net/guarded-fetch.ts): its address policy,
//                      size cap, deadline and the caller's AbortSignal;
//   checkMediaBytes    the real type sniffed from the bytes (never the server's Content-Type) and
//                      refused unless allowed; an image's header bounded in pixels (MEDIA_MAX_PIXELS,
//                      MEDIA_MAX_DIMENSION: src/media/limits.ts); or the bytes written to a file and
//                      inspected like an upload (decoder facts, playlists, pixels of images and
//                      video frames), then held to the kinds and the duration allowed;
//   fetchCheckedMedia  both.
// What is refused is told to the caller's `refuse`, which returns the caller's own error (a job
// failure, a 400, a provider error), so every caller keeps its codes and words.
import fs from 'node:fs/promises';
import sharp from 'sharp';
import { FetchRefused, type GuardedFetcher } from '../net/guarded-fetch.ts';
import { inspect, MediaRejected, sniff, type Inspected, type MediaKind, type Sniffed } from './inspect.ts';
import { pixelProblem, type PixelLimits } from './limits.ts';

/**
 * Why fetched media was refused. Every refusal has `message`, a phrase to follow the field (and
 * URL) in the caller's words (`answered HTTP 404`, `is image/gif`, `has more than 40000000 pixels
 * (width × height), the most accepted`), and `code`, the cause's own reason (FetchRefused.reason,
 * MediaRejected.reason, or the refusal's own).
 */
export type MediaRefusal = {
  code: string;
  message: string;
} /** The guarded client refused or failed (address, status, size, deadline, abandoned, network). */ & (
  | { reason: 'fetch'; error: FetchRefused }
  /** The sniffed type is not among `types` (mime undefined: no recognised type, or one the media inspector does not take: GIF, SVG, …). */
  | { reason: 'type'; mime: string | undefined }
  /** The image's header is over the pixel limits, or it does not decode. */
  | { reason: 'pixels' }
  /** Sniffing (without `types`) or inspection refused it: an unsupported type, a playlist, undecodable, over the limits. */
  | { reason: 'rejected'; error: MediaRejected }
  /** Inspected as a kind not among `kinds`. */
  | { reason: 'kind'; inspected: Inspected }
  /** Audio or video longer than `maxSeconds`. */
  | { reason: 'duration'; seconds: number; limit: number }
);

export interface MediaFetchOptions {
  /** Size cap of the body. */
  maxBytes: number;
  /** Deadline of the whole fetch; default: the fetcher's (OUTBOUND_FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
  /** The caller went away (the client hung up, the job was stopped): the fetch stops at once. */
  signal?: AbortSignal;
  /** Only https:// URLs. */
  httpsOnly?: boolean;
}

export interface MediaCheckOptions {
  /** Sniffed types accepted; anything else, or bytes of no recognised type, is refused ('type'). */
  types?: ReadonlySet<string> | readonly string[];
  /** An image's pixels, read from its header ('pixels'; an image whose header does not decode too). */
  pixels?: PixelLimits;
  /**
   * The bytes written to `file` (a path, or one made from the sniffed type) and inspected with
   * `limits` ('rejected'), then held to `kinds` ('kind') and, for audio and video, `maxSeconds`
   * ('duration'). The file is the caller's once checked; refused, it is removed.
   */
  inspect?: { file: string | ((sniffed: Sniffed) => string); limits: PixelLimits; kinds?: readonly MediaKind[]; maxSeconds?: number };
}

/** The caller's error for a refusal: the value thrown. */
type Refuse<R> = (refusal: R) => unknown;

/** Checked bytes: their sniffed type and, when inspected, the facts and the file holding them. */
export interface CheckedMedia {
  bytes: Buffer;
  sniffed: Sniffed;
  inspected?: { facts: Inspected; file: string };
}

/** What checking with `O` gives: with `inspect`, the inspection always. */
export type Checked<O extends MediaCheckOptions> = O extends { inspect: object }
  ? CheckedMedia & Required<Pick<CheckedMedia, 'inspected'>>
  : CheckedMedia;

/** The body at `url`, through the guarded client; its refusals go to `refuse`. */
export async function fetchMediaBytes(
  fetcher: GuardedFetcher,
  url: string,
  opts: MediaFetchOptions & { refuse: Refuse<Extract<MediaRefusal, { reason: 'fetch' }>> },
): Promise<Buffer> {
  try {
    return (
      await fetcher.fetch(url, { maxBytes: opts.maxBytes, timeoutMs: opts.timeoutMs, signal: opts.signal, httpsOnly: opts.httpsOnly })
    ).body;
  } catch (err) {
    if (err instanceof FetchRefused) throw opts.refuse({ reason: 'fetch', error: err, code: err.reason, message: err.message });
    throw err;
  }
}

/** Sniffs and checks `bytes` as `check` says; refusals go to `refuse`. */
export async function checkMediaBytes<O extends MediaCheckOptions>(
  bytes: Buffer,
  check: O & { refuse: Refuse<MediaRefusal> },
): Promise<Checked<O>> {
  const { refuse } = check;
  let sniffed: Sniffed;
  if (check.types) {
    const allowed = new Set(check.types);
    const found = await sniff(bytes).catch(() => undefined);
    if (!found || !allowed.has(found.mime))
      throw refuse({ reason: 'type', mime: found?.mime, code: 'type', message: `is ${found?.mime ?? 'not a recognised file'}` });
    sniffed = found;
  } else {
    sniffed = await sniff(bytes).catch(rejected(refuse));
  }
  if (check.pixels) {
    const limits = check.pixels;
    const meta = await sharp(bytes)
      .metadata()
      .catch(() => undefined);
    const problem = meta?.width && meta.height ? pixelProblem(meta.width, meta.height, limits) : 'could not be decoded';
    if (problem) throw refuse({ reason: 'pixels', code: 'pixels', message: problem });
  }
  if (!check.inspect) return { bytes, sniffed } as Checked<O>;
  const { limits, kinds, maxSeconds } = check.inspect;
  const file = typeof check.inspect.file === 'string' ? check.inspect.file : check.inspect.file(sniffed);
  await fs.writeFile(file, bytes);
  try {
    const facts = await inspect(file, sniffed, limits).catch(rejected(refuse));
    if (kinds && !kinds.includes(facts.kind))
      throw refuse({ reason: 'kind', inspected: facts, code: 'kind', message: `is ${facts.contentType}` });
    if (maxSeconds !== undefined && facts.kind !== 'image' && (facts.durationSeconds ?? 0) > maxSeconds) {
      const seconds = facts.durationSeconds ?? 0;
      throw refuse({
        reason: 'duration',
        seconds,
        limit: maxSeconds,
        code: 'duration',
        message: `lasts ${seconds} s, more than the ${maxSeconds} s accepted`,
      });
    }
    return { bytes, sniffed, inspected: { facts, file } } as Checked<O>;
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
}

/** fetchMediaBytes, then checkMediaBytes. */
export async function fetchCheckedMedia<O extends MediaCheckOptions>(
  fetcher: GuardedFetcher,
  url: string,
  opts: MediaFetchOptions & O & { refuse: Refuse<MediaRefusal> },
): Promise<Checked<O>> {
  return checkMediaBytes(await fetchMediaBytes(fetcher, url, opts), opts);
}

/** A MediaRejected (sniffing or inspection) as a refusal; any other error as it is. */
const rejected =
  (refuse: Refuse<MediaRefusal>) =>
  (err: unknown): never => {
    throw err instanceof MediaRejected ? refuse({ reason: 'rejected', error: err, code: err.reason, message: err.message }) : err;
  };
