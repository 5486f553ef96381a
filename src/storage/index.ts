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

export * from './core.ts';
export { localStorage };

/**
 * The backend the configuration names (STORAGE), signing URLs with `secret`. The S3 backend (the AWS
 * SDK: about 0.1 s of CPU to load) is loaded only when it is the one chosen.
 */
export async function createStorage(
  config: Pick<Config, 'dataDir' | 'publicBaseUrl' | 'mediaUrlTtlSeconds' | 'storage'>,
  secret: Buffer,
): Promise<Storage> {
  const signer = urlSigner({ publicBaseUrl: config.publicBaseUrl, secret, defaultTtlSeconds: config.mediaUrlTtlSeconds });
  if (config.storage.kind === 's3') {
    const { s3Storage } = await import('./s3.ts');
    return s3Storage(config.storage.s3, signer);
  }
  return localStorage({ root: path.join(config.dataDir, 'media'), signer });
}
