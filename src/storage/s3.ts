// The S3 backend: objects in one bucket of an S3-compatible service (AWS S3, MinIO, R2, …) through
// the official AWS SDK v3. Uploads are streamed (lib-storage's Upload: one PUT for a small
// object, a multipart upload of S3_PART_SIZE parts otherwise); reads are streamed GETs (ranges
// included); not-found answers become the same ObjectNotFound (code ENOENT) as the local backend.
// Every key is stored under S3_PREFIX, so one bucket can hold several deployments.
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  assertKey,
  contentTypeOf,
  ObjectNotFound,
  StorageUnavailable,
  type ByteRange,
  type ListedObject,
  type ObjectInfo,
  type Storage,
  type StoredObject,
  type UrlSigner,
} from './core.ts';
import type { S3Config } from '../config.ts';

export type { S3Config };

/** Parts of one multipart upload in flight at once (so one upload buffers at most this many parts). */
const UPLOAD_QUEUE_SIZE = 4;
/** Connections to S3 at once (each streamed read holds one until its client has the bytes). */
const MAX_SOCKETS = 256;
/** Connecting to S3 gives up after this; a connection silent this long is closed. */
const CONNECT_TIMEOUT_MS = 5_000;
const SOCKET_IDLE_TIMEOUT_MS = 120_000;
/** Buffers up to this size are stored with one PutObject. */
const SINGLE_PUT_MAX = 5 * 1024 * 1024;

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const isMissing = (err: unknown) =>
  (err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound')) || statusOf(err) === 404;

/** Network failures of a request (after the SDK's own retries) and 5xx/429 answers: S3 is unreachable or overloaded. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'TimeoutError',
  'RequestTimeout',
]);
const isOutage = (err: unknown) => {
  const status = statusOf(err);
  if (status !== undefined) return status >= 500 || status === 429;
  const e = err as { code?: string; name?: string } | null;
  return NETWORK_CODES.has(e?.code ?? '') || NETWORK_CODES.has(e?.name ?? '');
};

/** Counts the bytes flowing through (the size of a streamed upload). */
function counter(): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      t.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

/** One bucket's client and names, shared by every operation of the backend. */
interface Bucket {
  client: S3Client;
  Bucket: string;
  /** Prepended to every key. */
  prefix: string;
  partSizeBytes: number;
  /** The bucket as error messages name it. */
  where: string;
}

export function s3Storage(cfg: S3Config, signer: UrlSigner): Storage {
  const b: Bucket = {
    client: s3Client(cfg),
    Bucket: cfg.bucket,
    prefix: cfg.prefix,
    partSizeBytes: cfg.partSizeBytes,
    where: `bucket "${cfg.bucket}"${cfg.endpoint ? ` at ${cfg.endpoint}` : ` in ${cfg.region}`}`,
  };
  return {
    kind: 's3',
    put: (key, source, contentType) => put(b, key, source, contentType),
    read: (key, range) => read(b, key, range),
    async readBuffer(key) {
      const body = (await get(b, key)) as Readable & { transformToByteArray(): Promise<Uint8Array> };
      return Buffer.from(await body.transformToByteArray());
    },
    copyToFile: (key, file) => copyToFile(b, key, file),
    async size(key) {
      const head = await b.client.send(new HeadObjectCommand({ Bucket: b.Bucket, Key: objectKey(b, key) })).catch(mapMissing(b, key));
      return head.ContentLength ?? 0;
    },
    stat: (key) => stat(b, key),
    exists: async (key) => (await stat(b, key)) !== undefined,
    async delete(key) {
      // S3 answers 204 for a missing key too.
      await b.client.send(new DeleteObjectCommand({ Bucket: b.Bucket, Key: objectKey(b, key) })).catch((err) => {
        if (!isMissing(err)) mapOutage(b, err);
      });
    },
    list: (prefix) => list(b, prefix),
    signedUrl: signer.signedUrl,
    verify: signer.verify,
    check: () => check(b),
    close() {
      b.client.destroy();
    },
  };
}

function s3Client(cfg: S3Config): S3Client {
  return new S3Client({
    region: cfg.region,
    ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
    forcePathStyle: cfg.forcePathStyle,
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      socketTimeout: SOCKET_IDLE_TIMEOUT_MS,
      httpAgent: { keepAlive: true, maxSockets: MAX_SOCKETS },
      httpsAgent: { keepAlive: true, maxSockets: MAX_SOCKETS },
    },
    ...(cfg.accessKeyId && cfg.secretAccessKey
      ? { credentials: { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey } }
      : {}),
    // Checksums only where S3 requires them: many S3-compatible services refuse the newer
    // flexible-checksum trailers (TLS and the Content-MD5/ETag of each part still guard the bytes).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

function objectKey(b: Bucket, key: string): string {
  assertKey(key);
  return `${b.prefix}${key}`;
}

/** A missing object as ObjectNotFound, an unreachable S3 as StorageUnavailable (503 to clients), anything else as is. */
function mapped(b: Bucket, key: string | undefined, err: unknown): unknown {
  if (key !== undefined && isMissing(err)) return new ObjectNotFound(key);
  if (isOutage(err))
    return new StorageUnavailable(`Storage: S3 ${b.where} cannot be reached: ${(err as Error)?.name}: ${(err as Error)?.message}`, {
      cause: err,
    });
  return err;
}

const mapMissing =
  (b: Bucket, key: string) =>
  (err: unknown): never => {
    throw mapped(b, key, err);
  };

function mapOutage(b: Bucket, err: unknown): never {
  throw mapped(b, undefined, err);
}

function get(b: Bucket, key: string, range?: { start: number; end: number }): Promise<Readable> {
  return b.client
    .send(
      new GetObjectCommand({ Bucket: b.Bucket, Key: objectKey(b, key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
    )
    .then((r) => r.Body as Readable, mapMissing(b, key));
}

async function stat(b: Bucket, key: string): Promise<ObjectInfo | undefined> {
  const head = await b.client.send(new HeadObjectCommand({ Bucket: b.Bucket, Key: objectKey(b, key) })).catch((err) => {
    if (isMissing(err)) return undefined;
    return mapOutage(b, err);
  });
  if (!head) return undefined;
  return {
    bytes: head.ContentLength ?? 0,
    contentType: head.ContentType || contentTypeOf(key),
    etag: head.ETag ?? `"${head.ContentLength ?? 0}"`,
    lastModified: head.LastModified ?? new Date(0),
  };
}

/** A small buffer in one PutObject; anything else streamed by lib-storage's Upload (multipart past one part). */
async function put(b: Bucket, key: string, source: Buffer | Readable | { file: string }, contentType: string): Promise<StoredObject> {
  const Key = objectKey(b, key);
  if (Buffer.isBuffer(source) && source.length <= SINGLE_PUT_MAX) {
    await b.client
      .send(new PutObjectCommand({ Bucket: b.Bucket, Key, Body: source, ContentType: contentType, ContentLength: source.length }))
      .catch((err) => mapOutage(b, err));
    return { key, bytes: source.length, contentType };
  }
  let bytes: number;
  let Body: Readable | Buffer;
  let count: ReturnType<typeof counter> | undefined;
  if (Buffer.isBuffer(source)) {
    Body = source;
    bytes = source.length;
  } else if ('file' in source) {
    bytes = (await fs.stat(source.file)).size;
    Body = createReadStream(source.file);
  } else {
    count = counter();
    // pipe, not pipeline: Upload reads the counter; an error of the source is passed on to it.
    source.on('error', (err) => count!.destroy(err));
    Body = source.pipe(count);
    bytes = 0;
  }
  const upload = new Upload({
    client: b.client,
    params: { Bucket: b.Bucket, Key, Body, ContentType: contentType },
    partSize: b.partSizeBytes,
    queueSize: UPLOAD_QUEUE_SIZE,
    leavePartsOnError: false,
  });
  try {
    await upload.done().catch((err) => mapOutage(b, err));
  } finally {
    if (Body instanceof Readable) Body.destroy();
  }
  return { key, bytes: count ? count.bytes : bytes, contentType };
}

function read(b: Bucket, key: string, range?: ByteRange): Readable {
  // Synchronous like a file stream: the GET starts now and its body is piped in when it answers.
  const out = new PassThrough();
  get(b, key, range).then(
    (body) => {
      if (out.destroyed) return body.destroy();
      // pipeline: a consumer that stops (a client hanging up) also stops the GET.
      pipeline(body, out).catch(() => {});
    },
    (err) => out.destroy(err),
  );
  return out;
}

async function copyToFile(b: Bucket, key: string, file: string): Promise<void> {
  const body = await get(b, key);
  try {
    await pipeline(body, createWriteStream(file));
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
}

async function* list(b: Bucket, prefix: string): AsyncIterable<ListedObject> {
  let ContinuationToken: string | undefined;
  do {
    const page = await b.client
      .send(new ListObjectsV2Command({ Bucket: b.Bucket, Prefix: `${b.prefix}${prefix}`, ContinuationToken }))
      .catch((err) => mapOutage(b, err));
    for (const o of page.Contents ?? []) {
      if (!o.Key) continue;
      yield { key: o.Key.slice(b.prefix.length), bytes: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) };
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
}

/** At start-up: the bucket exists and the credentials are accepted, or a StorageUnavailable that says which. */
async function check(b: Bucket): Promise<void> {
  try {
    await b.client.send(new HeadBucketCommand({ Bucket: b.Bucket }));
  } catch (err) {
    const status = statusOf(err);
    const why =
      status === 404
        ? `does not exist; create it first (the service does not create buckets)`
        : status === 403 || status === 401
          ? `refused the credentials (S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY or the SDK's default chain): HTTP ${status}`
          : `cannot be reached: ${(err as Error).name}: ${(err as Error).message}`;
    throw new StorageUnavailable(`Storage: S3 ${b.where} (S3_BUCKET) ${why}`, { cause: err });
  }
}
