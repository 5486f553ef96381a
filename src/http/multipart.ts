// multipart/form-data for the REST adapter (@fastify/multipart, streaming: nothing is buffered
// or written until a handler reads the parts).
import { finished, PassThrough, type Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { MultipartBody, type UploadPart } from '../handlers.ts';

export function registerMultipart(app: FastifyInstance, maxFileBytes: number): void {
  app.register(fastifyMultipart, {
    // The handler counts bytes itself and answers 400 past its limit; this is the backstop.
    limits: { fileSize: maxFileBytes + 1, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25, headerPairs: 100 },
  });
}

const CLIENT_ERRORS = new Set([
  'FST_PARTS_LIMIT',
  'FST_FILES_LIMIT',
  'FST_FIELDS_LIMIT',
  'FST_REQ_FILE_TOO_LARGE',
  'FST_INVALID_MULTIPART_CONTENT_TYPE',
  'FST_PROTO_VIOLATION',
]);

/** The client's fault in a multipart error (limits, bad framing, a body cut short) as a 400; else undefined. */
function clientError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code;
  const message = String((err as Error)?.message ?? '');
  if (code && CLIENT_ERRORS.has(code)) {
    return new ApiError('bad_request', `Invalid multipart body: ${message}`, { errors: [{ field: 'body', message }] });
  }
  if (/Unexpected end of (multipart|form)|Malformed|boundary/i.test(message)) {
    return new ApiError('bad_request', `Malformed multipart body: ${message}`, {
      errors: [{ field: 'body', message: 'is not valid multipart/form-data' }],
    });
  }
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || /^aborted$/i.test(message)) {
    return new ApiError('bad_request', 'The request body was cut off before its end', {
      errors: [{ field: 'body', message: 'ended early' }],
    });
  }
  return undefined;
}

/**
 * A file part's stream whose errors are the client's 400s (a body with no closing boundary fails
 * the file stream, not the parts iterator); the file-size limit error keeps its code, which the
 * upload handler turns into its own 400 naming the limit.
 */
function fileStream(file: Readable): Readable {
  const out = new PassThrough();
  // The error may come before the handler reads the part: it is kept (out.errored) for the reader.
  out.on('error', () => {});
  // finished() also reports a stream closed before its end (busboy closes the file part when the
  // body stops mid-part), which pipe() alone would leave `out` waiting for.
  finished(file, (err) => {
    if (err) out.destroy((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? err : (clientError(err) ?? err));
  });
  file.pipe(out);
  return out;
}

export function multipartBody(req: FastifyRequest): MultipartBody {
  return new MultipartBody(async function* (): AsyncGenerator<UploadPart> {
    try {
      for await (const part of req.parts()) {
        if (part.type === 'file')
          yield { kind: 'file', name: part.fieldname, filename: part.filename, mimetype: part.mimetype, stream: fileStream(part.file) };
        else yield { kind: 'field', name: part.fieldname, value: typeof part.value === 'string' ? part.value : String(part.value) };
      }
    } catch (err) {
      throw clientError(err) ?? err;
    }
  });
}

/** Reads and discards what is left of a request body a handler did not consume. */
export function drainRequest(req: FastifyRequest): void {
  if (!req.raw.readableEnded) {
    req.raw.unpipe();
    req.raw.resume();
  }
}
