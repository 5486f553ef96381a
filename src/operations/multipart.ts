// A multipart/form-data body as the executor hands it to a handler: not parsed up front, but a
// lazy stream of parts the handler consumes after authentication, scopes and the content type
// were checked (so an unauthenticated upload is never written anywhere). The REST adapter builds
// it from the request (src/http/multipart.ts); JSON bodies stay plain objects.
import type { Readable } from 'node:stream';

export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; mimetype: string; stream: Readable };

export class MultipartBody {
  readonly parts: () => AsyncIterable<UploadPart>;
  constructor(parts: () => AsyncIterable<UploadPart>) {
    this.parts = parts;
  }
}
