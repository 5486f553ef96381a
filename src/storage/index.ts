// Media storage behind one interface. The local backend keeps files under DATA_DIR/media and
// the service serves them at /media/<key>?expires=…&signature=… (HMAC-SHA256, expiring), so a
// URL is never guessable and stops working after its TTL. An S3-compatible backend implements
// the same interface (put/stat/read/delete + presigned URLs); only the local one ships today.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants as fsConstants, createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredObject {
  key: string;
  bytes: number;
  contentType: string;
}

export interface ListedObject {
  key: string;
  bytes: number;
  modifiedAt: Date;
}

export interface Storage {
  readonly kind: 'local';
  /** Stores bytes under `key` (overwrites: steps that store are safe to repeat). */
  put(key: string, source: Buffer | Readable | { file: string }, contentType: string): Promise<StoredObject>;
  read(key: string): Readable;
  readBuffer(key: string): Promise<Buffer>;
  /**
   * Copies the object into `file` (a job's own folder): tools that need a file (ffmpeg) get a copy
   * of their input, never the stored object's path, so nothing they open leads back into storage.
   */
  copyToFile(key: string, file: string): Promise<void>;
  /** Size in bytes of a stored object. */
  size(key: string): Promise<number>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Every stored object whose key starts with `prefix` (a folder-like prefix ending in `/`), in no
   * particular order, with its size and last write; partial writes a killed process left (local:
   * `<key>.<hex>.tmp`) are listed too. For the maintenance job's sweep of orphaned media.
   */
  list(prefix: string): AsyncIterable<ListedObject>;
  signedUrl(key: string, ttlSeconds?: number): string;
  verify(key: string, expires: string | undefined, signature: string | undefined): 'ok' | 'expired' | 'invalid';
}

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,400}$/;

export function assertKey(key: string): void {
  if (!KEY_RE.test(key) || key.split('/').some((p) => p === '..' || p === '.' || p === '')) {
    throw new Error(`Invalid storage key "${key}"`);
  }
}

export interface LocalStorageOptions {
  root: string;
  publicBaseUrl: string;
  secret: Buffer;
  defaultTtlSeconds: number;
}

export const MEDIA_PREFIX = '/media/';

export function localStorage(opts: LocalStorageOptions): Storage {
  const file = (key: string) => {
    assertKey(key);
    return path.join(opts.root, key);
  };
  const sign = (key: string, expires: number) => createHmac('sha256', opts.secret).update(`${key}\n${expires}`).digest('base64url');
  return {
    kind: 'local',
    async put(key, source, contentType) {
      const target = file(key);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        if (Buffer.isBuffer(source)) await fs.writeFile(tmp, source);
        else if ('file' in source) await fs.copyFile(source.file, tmp);
        else await pipeline(source, createWriteStream(tmp));
        await fs.rename(tmp, target);
      } catch (err) {
        await fs.rm(tmp, { force: true });
        throw err;
      }
      const { size } = await fs.stat(target);
      return { key, bytes: size, contentType };
    },
    read: (key) => createReadStream(file(key)),
    readBuffer: (key) => fs.readFile(file(key)),
    // A copy-on-write clone where the filesystem offers one, else a plain copy.
    copyToFile: (key, target) => fs.copyFile(file(key), target, fsConstants.COPYFILE_FICLONE),
    size: async (key) => (await fs.stat(file(key))).size,
    async exists(key) {
      return fs.stat(file(key)).then(
        () => true,
        () => false,
      );
    },
    async delete(key) {
      await fs.rm(file(key), { force: true });
    },
    async *list(prefix) {
      if (!/^([A-Za-z0-9][A-Za-z0-9._-]*\/)+$/.test(prefix)) throw new Error(`Invalid storage prefix "${prefix}"`);
      const walk = async function* (dir: string, keyPrefix: string): AsyncGenerator<ListedObject> {
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
        for (const e of entries) {
          const full = path.join(dir, e.name);
          if (e.isDirectory()) yield* walk(full, `${keyPrefix}${e.name}/`);
          else if (e.isFile()) {
            const st = await fs.stat(full).catch(() => undefined);
            if (st) yield { key: `${keyPrefix}${e.name}`, bytes: st.size, modifiedAt: st.mtime };
          }
        }
      };
      yield* walk(path.join(opts.root, prefix), prefix);
    },
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
