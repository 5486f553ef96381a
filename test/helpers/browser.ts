// Headless Chromium for the browser tests, from npm: @sparticuz/chromium ships a brotli-compressed
// headless build together with the only shared libraries it needs that a bare Debian lacks (NSS,
// NSPR, expat) and a font. It is unpacked once into node_modules/.cache (removed with
// node_modules), so `npm test` installs nothing on the machine: no apt, no root, no download.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { chromium, type BrowserContext } from 'playwright-core';
import { extract } from 'tar-fs';

export interface ChromiumBinary {
  executablePath: string;
  /** Environment the binary needs: its bundled libraries and fonts. */
  env: Record<string, string>;
}

const PACKAGE_ROOT = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '../..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const CACHE = path.resolve(PACKAGE_ROOT, '../../.cache', `chromium-${VERSION}`);

async function unpack(into: string, final: string): Promise<void> {
  const bin = path.join(PACKAGE_ROOT, 'bin');
  fs.mkdirSync(into, { recursive: true });
  await pipeline(
    fs.createReadStream(path.join(bin, 'chromium.br')),
    zlib.createBrotliDecompress(),
    fs.createWriteStream(path.join(into, 'chromium'), { mode: 0o755 }),
  );
  for (const archive of ['al2023', 'fonts']) {
    await pipeline(
      fs.createReadStream(path.join(bin, `${archive}.tar.br`)),
      zlib.createBrotliDecompress(),
      extract(path.join(into, archive)),
    );
  }
  // The package's fonts.conf names Lambda's folders; ours names the folder it ends up in.
  fs.writeFileSync(
    path.join(into, 'fonts', 'fonts.conf'),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${path.join(final, 'fonts', 'fonts')}</dir>\n  <cachedir>${path.join(final, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
  );
}

let unpacked: Promise<ChromiumBinary> | undefined;

/** The unpacked Chromium, unpacking it on first use (safe when test files race for it). */
export function chromiumBinary(): Promise<ChromiumBinary> {
  unpacked ??= (async () => {
    if (!fs.existsSync(path.join(CACHE, 'ready'))) {
      const tmp = `${CACHE}.partial-${process.pid}-${Date.now()}`;
      try {
        await unpack(tmp, CACHE);
        fs.writeFileSync(path.join(tmp, 'ready'), VERSION);
        fs.renameSync(tmp, CACHE);
      } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        // Another test file unpacked it first: use theirs.
        if (!fs.existsSync(path.join(CACHE, 'ready'))) throw e;
      }
    }
    const libs = path.join(CACHE, 'al2023', 'lib');
    return {
      executablePath: path.join(CACHE, 'chromium'),
      env: {
        LD_LIBRARY_PATH: [libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
        FONTCONFIG_PATH: path.join(CACHE, 'fonts'),
      },
    };
  })();
  return unpacked;
}

/** A headless browser context on a fresh profile folder; `t`'s teardown closes it and removes the folder. */
export async function launchBrowser(t: { teardown(fn: () => unknown): void }): Promise<BrowserContext> {
  const bin = await chromiumBinary();
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chromium-profile-'));
  const removeProfile = () => fs.rmSync(profileDir, { recursive: true, force: true });
  const context = await chromium
    .launchPersistentContext(profileDir, {
      executablePath: bin.executablePath,
      env: { ...(process.env as Record<string, string>), ...bin.env },
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-zygote',
      ],
    })
    .catch((err: unknown) => {
      removeProfile();
      throw err;
    });
  t.teardown(async () => {
    await context.close();
    removeProfile();
  });
  return context;
}
