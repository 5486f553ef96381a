// The editor media library (the workspace's `media` table): listing, and bringing files in.
// Every way in (JSON base64, multipart stream, HTTPS URL, synthesized speech) ends in ingest():
// the bytes land in a temporary file, their real type is sniffed and compared with what was
// declared, the decoder probes them, and only then are they stored. A refused file leaves
// nothing behind.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, desc, eq, ilike, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { media } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { declaredMatches, inspect, MediaRejected, normalizeType, sniff, SNIFF_BYTES, type Inspected } from '../../media/inspect.ts';
import { pixelLimitContext } from '../../media/limits.ts';
import type { Tx } from '../../db/client.ts';
import { processTempFolder } from '../../media/work-folder.ts';
import { editorMediaKey } from '../../storage/keys.ts';

export type EditorMediaView = components['schemas']['EditorMedia'];
export type EditorMediaType = components['schemas']['EditorMediaType'];
export type MediaRow = typeof media.$inferSelect;
export type MediaInsert = typeof media.$inferInsert;

/** Decoded size limit of a JSON (base64) upload. */
export const JSON_UPLOAD_MAX_BYTES = 25 * 1024 * 1024;
/** Size limit of a multipart upload. */
export const MULTIPART_UPLOAD_MAX_BYTES = 500 * 1024 * 1024;
/** Size limit of a file imported from a URL. */
export const URL_IMPORT_MAX_BYTES = 100 * 1024 * 1024;

export function mediaView(ctx: AppContext, m: MediaRow): EditorMediaView {
  return {
    object: 'editor_media',
    id: m.id,
    media_type: m.kind,
    title: (m.title ?? m.filename ?? m.id).slice(0, 200),
    filename: safeFilename(m.filename ?? `${m.id}`),
    content_type: m.contentType,
    size_bytes: m.sizeBytes,
    width: m.width,
    height: m.height,
    duration_seconds: m.durationSeconds,
    has_audio: m.kind === 'image' ? null : m.kind === 'video' ? m.hasAudio : true,
    status: m.status === 'completed' ? 'ready' : m.status,
    url: ctx.storage.signedUrl(m.storageKey),
    created_at: m.createdAt.toISOString(),
  };
}

function safeFilename(name: string): string {
  const cleaned = name.replace(/[\u0000-\u001F\u007F/\\]/g, '_').slice(0, 255);
  return cleaned || 'file';
}

// ------------------------------------------------------------------------------------ listing

interface Cursor {
  c: string;
  i: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeCursor<T>(raw: string | undefined, check: (v: unknown) => v is T): T | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (check(v)) return v;
  } catch {
    // fall through
  }
  throw badRequest('Invalid request: query.cursor is not a cursor this API returned', [
    { field: 'query.cursor', message: 'is not a valid cursor; pass next_cursor from the previous page' },
  ]);
}

const isMediaCursor = (v: unknown): v is Cursor =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Cursor).c === 'string' &&
  !Number.isNaN(Date.parse((v as Cursor).c)) &&
  /^[0-9a-f-]{36}$/.test(String((v as Cursor).i));

export async function listEditorMedia(
  ctx: AppContext,
  orgId: string,
  q: { media_type?: EditorMediaType; query?: string; limit?: number; cursor?: string },
): Promise<components['schemas']['EditorMediaList']> {
  const limit = q.limit ?? 30;
  const cursor = decodeCursor(q.cursor, isMediaCursor);
  const where: SQL[] = [eq(media.orgId, orgId)];
  if (q.media_type === 'audio') where.push(inArray(media.kind, ['audio', 'voice']));
  else if (q.media_type) where.push(eq(media.kind, q.media_type));
  if (q.query) {
    const like = `%${q.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(or(ilike(media.filename, like), ilike(media.title, like), ilike(media.indexedText, like))!);
  }
  if (cursor) {
    const at = new Date(cursor.c);
    where.push(or(lt(media.createdAt, at), and(eq(media.createdAt, at), lt(media.id, cursor.i)))!);
  }
  const rows = await ctx.db
    .select()
    .from(media)
    .where(and(...where))
    .orderBy(desc(media.createdAt), desc(media.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    object: 'list',
    data: page.map((m) => mediaView(ctx, m)),
    next_cursor: rows.length > limit && last ? encodeCursor({ c: last.createdAt.toISOString(), i: last.id }) : null,
  };
}

export async function findMedia(db: AppContext['db'] | Tx, orgId: string, id: string): Promise<MediaRow | undefined> {
  const [row] = await db
    .select()
    .from(media)
    .where(and(eq(media.id, id), eq(media.orgId, orgId)));
  return row;
}

// ------------------------------------------------------------------------------------ ingest

/** A file received into a temporary path, with its first bytes for sniffing. */
export interface Received {
  file: string;
  bytes: number;
  head: Buffer;
}

/** A fresh path in this process's temporary folder (DATA_DIR/tmp/proc-…: swept once the process is gone). */
export async function tempPath(ctx: AppContext, name: string): Promise<string> {
  return path.join(processTempFolder(ctx.config.dataDir), `${name}-${randomUUID()}`);
}

export class TooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`is larger than ${limit} bytes`);
    this.limit = limit;
  }
}

/** Streams `source` into a temporary file, refusing more than maxBytes (the partial file is removed). */
export async function receiveStream(ctx: AppContext, source: Readable, maxBytes: number): Promise<Received> {
  const file = await tempPath(ctx, 'upload');
  let bytes = 0;
  const headChunks: Buffer[] = [];
  let headBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) return done(new TooLarge(maxBytes));
      if (headBytes < SNIFF_BYTES) {
        headChunks.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
        headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
      }
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, counter, createWriteStream(file));
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
  return { file, bytes, head: Buffer.concat(headChunks) };
}

export async function receiveBuffer(ctx: AppContext, buf: Buffer): Promise<Received> {
  const file = await tempPath(ctx, 'upload');
  await fs.writeFile(file, buf);
  return { file, bytes: buf.length, head: buf.subarray(0, SNIFF_BYTES) };
}

export interface IngestOptions {
  orgId: string;
  filename: string;
  /** Declared MIME type (content_type, data-URL type or the multipart part's type), if any. */
  declaredType?: string;
  /** Field the declared type came from, for the error. */
  declaredField?: string;
  mediaType?: EditorMediaType;
  title?: string;
  source: MediaInsert['source'];
  indexedText?: string;
  /** The request field of the bytes, for errors (body.media.data, body.file, body.url). */
  field: string;
}

export interface Ingested {
  row: MediaInsert & { id: string };
  inspected: Inspected;
}

/**
 * Sniffs, checks and probes a received file and stores it; returns the media row to insert (the
 * caller inserts it in its transaction, and calls discardStored() if that fails). The temporary
 * file is always removed. Refusals are 400 bad_request naming the field.
 */
export async function ingest(ctx: AppContext, received: Received, opts: IngestOptions): Promise<Ingested> {
  try {
    if (received.bytes === 0) throw badRequest(`Invalid request: ${opts.field} is empty`, [{ field: opts.field, message: 'is empty' }]);
    let inspected: Inspected;
    try {
      const sniffed = await sniff(received.head);
      if (opts.declaredType && !declaredMatches(opts.declaredType, sniffed)) {
        const declared = normalizeType(opts.declaredType);
        throw new ApiError('bad_request', `Invalid request: the file was declared as ${declared} but its bytes are ${sniffed.mime}`, {
          errors: [{ field: opts.declaredField ?? opts.field, message: `declares ${declared} but the bytes are ${sniffed.mime}` }],
        });
      }
      inspected = await inspect(received.file, sniffed, {
        maxPixels: ctx.config.mediaMaxPixels,
        maxDimension: ctx.config.mediaMaxDimension,
      });
    } catch (err) {
      if (err instanceof MediaRejected) {
        const limits =
          err.reason === 'pixels'
            ? pixelLimitContext({ maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension })
            : {};
        throw badRequest(`Invalid request: ${opts.field} ${err.message}`, [{ field: opts.field, message: err.message }], limits);
      }
      throw err;
    }
    const kind = opts.mediaType === 'voice' && inspected.kind === 'audio' ? 'voice' : inspected.kind;
    if (opts.mediaType && opts.mediaType !== kind) {
      throw badRequest(
        `Invalid request: media_type is ${opts.mediaType} but the file is ${inspected.kind === 'audio' ? 'audio' : inspected.kind === 'image' ? 'an image' : 'a video'} (${inspected.contentType})`,
        [{ field: 'body.media_type', message: `is ${opts.mediaType} but the file is ${inspected.kind} (${inspected.contentType})` }],
      );
    }
    const id = randomUUID();
    const key = editorMediaKey(opts.orgId, id, inspected.ext);
    const stored = await ctx.storage.put(key, { file: received.file }, inspected.contentType);
    const filename = safeFilename(opts.filename || `${id}.${inspected.ext}`);
    return {
      inspected,
      row: {
        id,
        orgId: opts.orgId,
        kind,
        status: 'completed',
        source: opts.source,
        title: opts.title?.slice(0, 200) || null,
        filename,
        contentType: inspected.contentType,
        sizeBytes: stored.bytes,
        storageKey: key,
        width: inspected.width,
        height: inspected.height,
        durationSeconds: inspected.durationSeconds,
        hasAudio: inspected.kind === 'image' ? null : inspected.hasAudio,
        indexedText: opts.indexedText ?? null,
      },
    };
  } finally {
    await fs.rm(received.file, { force: true });
  }
}

/** Removes stored files whose rows were never committed. */
export async function discardStored(ctx: AppContext, keys: string[]): Promise<void> {
  await Promise.all(keys.map((k) => ctx.storage.delete(k).catch(() => {})));
}

// ----------------------------------------------------------------------- inline (base64) data

const LOCAL_PATH = /^(file:|\/|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[\\/]|\\\\)/i;

/**
 * Decodes `media.data` (base64 or a data URL). Local paths and file:// URIs, invalid base64 and
 * oversize payloads are 400s naming the field. Returns the bytes and the data URL's type.
 */
export function decodeInlineData(data: string, field: string, maxBytes = JSON_UPLOAD_MAX_BYTES): { bytes: Buffer; dataUrlType?: string } {
  const trimmed = data.trim();
  // Raw base64 of a JPEG starts with "/9j/" (its FF D8 FF magic): bytes, not a path.
  if (LOCAL_PATH.test(trimmed) && !/^\/9j\/[A-Za-z0-9+/]{60}/.test(trimmed)) {
    throw badRequest(
      `Invalid request: ${field} looks like a local file path or file:// URI; send the file's bytes (base64 or a data URL), or upload it as multipart/form-data`,
      [{ field, message: 'is a local file path or file:// URI; send the bytes as base64 or a data URL instead' }],
    );
  }
  let payload = trimmed;
  let dataUrlType: string | undefined;
  const m = /^data:([a-z]+\/[A-Za-z0-9.+-]+)?((?:;[A-Za-z0-9=.+-]+)*?);base64,/i.exec(trimmed);
  if (m) {
    dataUrlType = m[1]?.toLowerCase();
    payload = trimmed.slice(m[0].length);
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^[A-Za-z0-9+/]+=*$/.test(trimmed.slice(0, 64))) {
    throw badRequest(
      `Invalid request: ${field} must be base64 bytes or a base64 data URL (data:<type>;base64,...); URLs are not fetched here, use POST /editor/videos/{id}/media with url`,
      [{ field, message: 'must be base64 bytes or a data URL, not a URL' }],
    );
  }
  const compact = payload.replace(/[\r\n\t ]+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) && !/^[A-Za-z0-9_-]*={0,2}$/.test(compact)) {
    throw badRequest(`Invalid request: ${field} is not valid base64`, [{ field, message: 'is not valid base64' }]);
  }
  const decodedSize = Math.floor((compact.replace(/=+$/, '').length * 3) / 4);
  if (decodedSize > maxBytes) {
    throw badRequest(
      `Invalid request: ${field} is larger than ${maxBytes} bytes decoded (${decodedSize} bytes), the most a JSON upload may carry; upload large files as multipart/form-data`,
      [{ field, message: `is larger than ${maxBytes} bytes decoded; use multipart/form-data for large files` }],
    );
  }
  const bytes = Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
  return { bytes, dataUrlType };
}

export async function insertMedia(tx: Tx, rows: MediaInsert[]): Promise<MediaRow[]> {
  if (!rows.length) return [];
  return tx.insert(media).values(rows).returning();
}

export const mediaItemType = (kind: MediaRow['kind']): 'image' | 'video' | 'audio' => (kind === 'voice' ? 'audio' : kind);

export function whereOrg(orgId: string) {
  return sql`${media.orgId} = ${orgId}`;
}
