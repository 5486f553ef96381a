// Orphaned stored media (services/assets/orphaned-media.ts), through the storage interface: an
// object no media row references is deleted once older than the grace period; a referenced one,
// a recent one, and shared objects (sound effects) stay. Also the work folders and temporary
// folders a killed process left in DATA_DIR/tmp (media/work-folder.ts), with a real process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { connect } from '../../../src/db/client.ts';
import { media } from '../../../src/db/schema/index.ts';
import { processTempFolder, sweepWorkFolders } from '../../../src/media/work-folder.ts';
import { ORPHAN_GRACE_MS, sweepOrphanedMedia } from '../../../src/services/assets/orphaned-media.ts';
import { createOrganization } from '../../../src/services/workspaces/organizations.ts';
import { localStorage, urlSigner } from '../../../src/storage/index.ts';
import { createTestDatabase } from '../../helpers/db.ts';

const url = await createTestDatabase(t);
const { db, sql } = connect(url, 2);
t.teardown(() => sql.end());
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'orphans-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

t.test('orphaned media are deleted after the grace period; referenced, recent and shared objects stay', async (t) => {
  const storage = localStorage({ root: path.join(dataDir, 'media'), signer: urlSigner({ publicBaseUrl: 'http://127.0.0.1', secret: Buffer.from('s'), defaultTtlSeconds: 60 }) });
  const org = await createOrganization(db, { name: 'Orphans', credits: 0 });
  const put = (key: string) => storage.put(key, Buffer.from(key), 'application/octet-stream');
  await put(`generations/${org.id}/kept.png`);
  await put(`generations/${org.id}/orphan.png`);
  await put(`editor-exports/${org.id}/orphan.mp4`);
  await put(`editor-media/${org.id}/recent-orphan.wav`);
  await put('sound-effects/whoosh.wav');
  // A partial write a killed process left beside its target.
  fs.writeFileSync(path.join(dataDir, 'media', 'generations', org.id, 'kept.png.0a1b2c3d4e5f.tmp'), 'partial');
  await db.insert(media).values({
    orgId: org.id,
    kind: 'image',
    source: 'generation',
    contentType: 'image/png',
    sizeBytes: 10,
    storageKey: `generations/${org.id}/kept.png`,
  });
  const listed: string[] = [];
  for await (const o of storage.list('generations/')) listed.push(o.key);
  t.same(listed.sort(), [`generations/${org.id}/kept.png`, `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`, `generations/${org.id}/orphan.png`], 'storage.list walks a prefix');
  await t.rejects(storage.list('../')[Symbol.asyncIterator]().next(), /Invalid storage prefix/, 'a prefix out of the store is refused');

  // Nothing is old enough yet.
  t.same((await sweepOrphanedMedia(db, storage)).deleted, [], 'within the grace period nothing is deleted');
  // Age everything but one object past the grace period.
  const past = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
  for (const rel of [`generations/${org.id}/kept.png`, `generations/${org.id}/orphan.png`, `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`, `editor-exports/${org.id}/orphan.mp4`, 'sound-effects/whoosh.wav']) {
    fs.utimesSync(path.join(dataDir, 'media', rel), past, past);
  }
  const swept = await sweepOrphanedMedia(db, storage);
  t.same(swept.deleted.sort(), [`editor-exports/${org.id}/orphan.mp4`, `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`, `generations/${org.id}/orphan.png`], 'the old unreferenced objects are deleted');
  t.equal(swept.checked, 5);
  t.ok(await storage.exists(`generations/${org.id}/kept.png`), 'the referenced object stays');
  t.ok(await storage.exists(`editor-media/${org.id}/recent-orphan.wav`), 'a recent unreferenced object stays (its row may be about to commit)');
  t.ok(await storage.exists('sound-effects/whoosh.wav'), 'shared objects are not swept');
});

t.test('DATA_DIR/tmp: what a killed process left is swept, what a live one uses is not', async (t) => {
  const mine = processTempFolder(dataDir);
  fs.writeFileSync(path.join(mine, 'upload-live'), 'in use');
  // A real process takes a temporary folder and a work folder, then is killed -9.
  const script = `
    const { processTempFolder, jobFolder } = await import(${JSON.stringify(path.resolve('src/media/work-folder.ts'))});
    const fs = await import('node:fs');
    fs.writeFileSync(processTempFolder(${JSON.stringify(dataDir)}) + '/upload-partial', 'x');
    const dir = await jobFolder(${JSON.stringify(dataDir)}, 'gen-killed');
    fs.writeFileSync(dir + '/frame.png', 'x');
    console.log('ready');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.on('data', (d) => String(d).includes('ready') && resolve()));
  const tmp = path.join(dataDir, 'tmp');
  const before = fs.readdirSync(tmp).sort();
  t.equal(before.length, 3, `the killed process's folders and ours: ${before.join(', ')}`);
  t.equal(await sweepWorkFolders(dataDir), 0, 'while it runs, nothing of it is swept');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  t.equal(await sweepWorkFolders(dataDir), 2, 'once it is gone, its work folder and temporary folder are swept');
  t.same(fs.readdirSync(tmp), [path.basename(mine)], 'this live process keeps its folder');
  t.same(fs.readdirSync(mine), ['upload-live']);
});
