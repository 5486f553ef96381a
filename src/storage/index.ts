// Media storage behind one interface, the only code that knows where bytes live. Two backends,
// chosen by STORAGE: `local` keeps files under DATA_DIR/media (src/storage/local.ts); `s3` keeps
// objects in an S3-compatible bucket with the AWS SDK v3 (src/storage/s3.ts). Either way the
// service serves them at /media/<key>?expires=…&signature=… (HMAC-SHA256, expiring), streamed
// through the API (src/http/media.ts), so a URL is never guessable, stops working after its TTL,
// has the same shape whatever the backend, and a bucket stays private.
import path from 'node:path';
import type { Config } from '../config.ts';
import { urlSigner, type Storage } from './core.ts';
import { localStorage } from './local.ts';
import { s3Storage } from './s3.ts';

export * from './core.ts';
export { localStorage, s3Storage };

/** The backend the configuration names (STORAGE), signing URLs with `secret`. */
export function createStorage(config: Pick<Config, 'dataDir' | 'publicBaseUrl' | 'mediaUrlTtlSeconds' | 'storage'>, secret: Buffer): Storage {
  const signer = urlSigner({ publicBaseUrl: config.publicBaseUrl, secret, defaultTtlSeconds: config.mediaUrlTtlSeconds });
  if (config.storage.kind === 's3') return s3Storage(config.storage.s3, signer);
  return localStorage({ root: path.join(config.dataDir, 'media'), signer });
}
