// The local backend: files under one folder (DATA_DIR/media), written to a temporary name and
// renamed, so a reader never sees half a file.
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  assertKey,
  contentTypeOf,
  isNotFound,
  ObjectNotFound,
  StorageUnavailable,
  type ListedObject,
  type Storage,
  type UrlSigner,
} from './core.ts';

export interface LocalStorageOptions {
  /** The folder objects live in. */
  root: string;
  signer: UrlSigner;
}

export function localStorage({ root, signer }: LocalStorageOptions): Storage {
  const file = (key: string) => {
    assertKey(key);
    return path.join(root, key);
  };
  /** fs errors of a missing file as the backends' one not-found error. */
  const notFound = (key: string) => (err: unknown) => {
    throw isNotFound(err) ? new ObjectNotFound(key) : err;
  };
  async function* walk(dir: string, rel: string): AsyncGenerator<ListedObject> {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err) => {
      if (isNotFound(err)) return [];
      throw err;
    });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const key = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) yield* walk(path.join(dir, e.name), key);
      else if (e.isFile()) {
        const st = await fs.stat(path.join(dir, e.name)).catch(() => undefined);
        if (st) yield { key, bytes: st.size, lastModified: st.mtime };
      }
    }
  }
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
        // A full or failing disk is an outage (503 to clients), not a fault of the request.
        const code = (err as { code?: string }).code ?? '';
        if (['ENOSPC', 'EDQUOT', 'EROFS', 'EIO'].includes(code))
          throw new StorageUnavailable(`Storage: the media folder ${root} cannot take the object: ${code}`, { cause: err });
        throw err;
      }
      const { size } = await fs.stat(target);
      return { key, bytes: size, contentType };
    },
    // A missing file errors the stream with fs's ENOENT (isNotFound).
    read: (key, range) => createReadStream(file(key), range ? { start: range.start, end: range.end } : {}),
    readBuffer: (key) => fs.readFile(file(key)).catch(notFound(key)),
    // A copy-on-write clone where the filesystem offers one, else a plain copy.
    copyToFile: (key, target) => fs.copyFile(file(key), target, fsConstants.COPYFILE_FICLONE).catch(notFound(key)),
    size: async (key) => (await fs.stat(file(key)).catch(notFound(key))).size,
    async stat(key) {
      const st = await fs.stat(file(key)).catch((err) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (!st?.isFile()) return undefined;
      return {
        bytes: st.size,
        contentType: contentTypeOf(key),
        etag: `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`,
        lastModified: st.mtime,
      };
    },
    async exists(key) {
      return fs.stat(file(key)).then(
        (st) => st.isFile(),
        () => false,
      );
    },
    async delete(key) {
      await fs.rm(file(key), { force: true });
    },
    async *list(prefix) {
      // The folder holding the prefix's last complete segment, then a filter on the rest.
      const cut = prefix.lastIndexOf('/');
      const dirRel = cut < 0 ? '' : prefix.slice(0, cut);
      // biome-ignore lint/complexity/useOptionalChain: an empty dirRel (a prefix at the root) must skip the check, and ''?.split would not
      if (dirRel && dirRel.split('/').some((p) => p === '..' || p === '.' || p === ''))
        throw new Error(`Invalid storage prefix "${prefix}"`);
      for await (const o of walk(path.join(root, dirRel), dirRel)) if (o.key.startsWith(prefix)) yield o;
    },
    signedUrl: signer.signedUrl,
    verify: signer.verify,
    async check() {
      try {
        await fs.mkdir(root, { recursive: true });
        await fs.access(root, fsConstants.W_OK);
      } catch (err) {
        throw new StorageUnavailable(
          `Storage: the media folder ${root} cannot be created or written (DATA_DIR): ${(err as Error).message}`,
          { cause: err },
        );
      }
    },
    close() {},
  };
}
