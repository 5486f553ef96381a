// multipart/form-data for the REST adapter (@fastify/multipart, streaming: nothing is buffered
// or written until a handler reads the parts).
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { MultipartBody, type UploadPart } from '../operations/multipart.ts';

export function registerMultipart(app: FastifyInstance, maxFileBytes: number): void {
  app.register(fastifyMultipart, {
    // The handler counts bytes itself and answers 400 past its limit; this is the backstop.
    limits: { fileSize: maxFileBytes + 1, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25, headerPairs: 100 },
  });
}

const CLIENT_ERRORS = new Set(['FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT', 'FST_REQ_FILE_TOO_LARGE', 'FST_INVALID_MULTIPART_CONTENT_TYPE', 'FST_PROTO_VIOLATION']);

export function multipartBody(req: FastifyRequest): MultipartBody {
  return new MultipartBody(async function* (): AsyncGenerator<UploadPart> {
    try {
      for await (const part of req.parts()) {
        if (part.type === 'file') yield { kind: 'file', name: part.fieldname, filename: part.filename, mimetype: part.mimetype, stream: part.file };
        else yield { kind: 'field', name: part.fieldname, value: typeof part.value === 'string' ? part.value : String(part.value) };
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code && CLIENT_ERRORS.has(code)) {
        throw new ApiError('bad_request', `Invalid multipart body: ${(err as Error).message}`, { errors: [{ field: 'body', message: (err as Error).message }] });
      }
      if (/Unexpected end of (multipart|form)|Malformed|boundary/i.test((err as Error).message ?? '')) {
        throw new ApiError('bad_request', `Malformed multipart body: ${(err as Error).message}`, { errors: [{ field: 'body', message: 'is not valid multipart/form-data' }] });
      }
      throw err;
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
