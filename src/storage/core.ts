// The storage interface and what every backend shares: keys, the not-found error, media types,
// and the signed /media URLs (see index.ts).
import { createHmac, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  bytes: number;
  contentType: string;
}

/** What serving an object needs to know before reading it. */
export interface ObjectInfo {
  bytes: number;
  contentType: string;
  /** A strong validator of the object's bytes (quoted). */
  etag: string;
  lastModified: Date;
}

export interface ListedObject {
  key: string;
  bytes: number;
  lastModified: Date;
}

/** Inclusive byte range of a read. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface Storage {
  readonly kind: 'local' | 's3';
  /** Stores bytes under `key` (overwrites: steps that store are safe to repeat). Streams and files are streamed. */
  put(key: string, source: Buffer | Readable | { file: string }, contentType: string): Promise<StoredObject>;
  /** The object's bytes (or `range` of them) as a stream; a missing object errors with code ENOENT. */
  read(key: string, range?: ByteRange): Readable;
  /** The whole object in memory (small objects only); a missing object rejects with code ENOENT. */
  readBuffer(key: string): Promise<Buffer>;
  /**
   * Copies the object into `file` (a job's own folder): tools that need a file (ffmpeg) get a copy
   * of their input, never the stored object's path, so nothing they open leads back into storage.
   */
  copyToFile(key: string, file: string): Promise<void>;
  /** Size in bytes of a stored object; a missing object rejects with code ENOENT. */
  size(key: string): Promise<number>;
  /** Size, type and validators of a stored object; undefined when there is none. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  exists(key: string): Promise<boolean>;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Every stored object whose key starts with `prefix`, in key order. */
  list(prefix: string): AsyncIterable<ListedObject>;
  signedUrl(key: string, ttlSeconds?: number): string;
  verify(key: string, expires: string | undefined, signature: string | undefined): 'ok' | 'expired' | 'invalid';
  /** At start-up: the folder exists and is writable, or the bucket exists and answers. Throws StorageUnavailable otherwise. */
  check(): Promise<void>;
  /** Releases connections (the S3 client's sockets). */
  close(): void;
}

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,400}$/;

export function assertKey(key: string): void {
  if (!KEY_RE.test(key) || key.split('/').some((p) => p === '..' || p === '.' || p === '')) {
    throw new Error(`Invalid storage key "${key}"`);
  }
}

/** A missing object: the same error (code ENOENT) from every backend. */
export class ObjectNotFound extends Error {
  readonly code = 'ENOENT';
  readonly key: string;
  constructor(key: string) {
    super(`No stored object "${key}"`);
    this.key = key;
    this.name = 'ObjectNotFound';
  }
}

export const isNotFound = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'ENOENT';

/** Storage cannot be used (a missing bucket, refused credentials, an unwritable folder): start-up stops with this message. */
export class StorageUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailable';
  }
}

export const MEDIA_PREFIX = '/media/';

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  mp4: 'video/mp4',
  m4v: 'video/x-m4v',
  mov: 'video/quicktime',
  webm: 'video/webm',
  ogv: 'video/ogg',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
};

/** The media type a key's extension names (application/octet-stream for any other). */
export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[path.extname(key).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

export interface UrlSigner {
  signedUrl(key: string, ttlSeconds?: number): string;
  verify(key: string, expires: string | undefined, signature: string | undefined): 'ok' | 'expired' | 'invalid';
}

export interface SignerOptions {
  publicBaseUrl: string;
  secret: Buffer;
  defaultTtlSeconds: number;
}

/** Signed, expiring /media/<key> URLs of this service, the same for every backend. */
export function urlSigner(opts: SignerOptions): UrlSigner {
  const sign = (key: string, expires: number) => createHmac('sha256', opts.secret).update(`${key}\n${expires}`).digest('base64url');
  return {
    signedUrl(key, ttlSeconds = opts.defaultTtlSeconds) {
      assertKey(key);
      const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
      const encoded = key.split('/').map(encodeURIComponent).join('/');
      return `${opts.publicBaseUrl}${MEDIA_PREFIX}${encoded}?expires=${expires}&signature=${sign(key, expires)}`;
    },
    verify(key, expires, signature) {
      if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return 'invalid';
      try {
        assertKey(key);
      } catch {
        return 'invalid';
      }
      const want = Buffer.from(sign(key, Number(expires)));
      const got = Buffer.from(signature);
      if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
      if (Number(expires) < Date.now() / 1000) return 'expired';
      return 'ok';
    },
  };
}
