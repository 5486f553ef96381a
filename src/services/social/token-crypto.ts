// Social account tokens at rest: AES-256-GCM (node:crypto), a fresh 12-byte IV per value, the
// 16-byte tag checked on decryption. The key is SECRETS_KEY, or one generated once into
// DATA_DIR/secrets.key (0600) when unset; it is never written to the database. A multi-node
// deployment must set SECRETS_KEY (each node would otherwise make its own file).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';

const PREFIX = 'v1';

export interface TokenCipher {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

export function tokenCipher(key: Buffer): TokenCipher {
  if (key.length !== 32) throw new Error('the token key must be 32 bytes');
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return [PREFIX, iv.toString('base64url'), c.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    decrypt(sealed) {
      const [v, iv, tag, body] = sealed.split('.');
      if (v !== PREFIX || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed token');
      const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
    },
  };
}

const cached = new Map<string, Promise<Buffer>>();

/** The key: SECRETS_KEY, else DATA_DIR/secrets.key, made once (exclusive create, mode 0600) when missing. */
export function loadTokenKey(config: { secretsKey: Buffer | undefined; dataDir: string }): Promise<Buffer> {
  if (config.secretsKey) return Promise.resolve(config.secretsKey);
  const file = path.join(config.dataDir, 'secrets.key');
  let p = cached.get(file);
  if (!p) {
    p = keyFile(file);
    p.catch(() => cached.delete(file));
    cached.set(file, p);
  }
  return p;
}

async function keyFile(file: string): Promise<Buffer> {
  await mkdir(path.dirname(file), { recursive: true });
  try {
    const fh = await open(file, 'wx', 0o600);
    try {
      await fh.writeFile(`${randomBytes(32).toString('base64')}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Another process may have just created it: wait for its content.
  for (let i = 0; ; i++) {
    const raw = (await readFile(file, 'utf8')).trim();
    const key = Buffer.from(raw, 'base64');
    if (key.length === 32) return key;
    if (i >= 50) throw new Error(`${file} does not hold a 32-byte base64 key`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
