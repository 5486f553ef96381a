// Orphaned stored media (services/assets/orphaned-media.ts), through the storage interface: an
// object no row of its prefix's owner table (media, brand_kits, custom_avatars, custom_voices)
// references is deleted once older than the grace period; a referenced one, a recent one, and
// shared objects (sound effects) stay. Also the work folders and temporary
// folders a killed process left in DATA_DIR/tmp (media/work-folder.ts), with a real process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { connect } from '../../../src/db/client.ts';
import { brandKits, customAvatars, customVoices, media } from '../../../src/db/schema/index.ts';
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
  const storage = localStorage({
    root: path.join(dataDir, 'media'),
    signer: urlSigner({ publicBaseUrl: 'http://127.0.0.1', secret: Buffer.from('s'), defaultTtlSeconds: 60 }),
  });
  const org = await createOrganization(db, { name: 'Orphans', credits: 0 });
  const put = (key: string) => storage.put(key, Buffer.from(key), 'application/octet-stream');
  await put(`generations/${org.id}/kept.png`);
  await put(`generations/${org.id}/orphan.png`);
  await put(`editor-exports/${org.id}/orphan.mp4`);
  await put(`faceless/${org.id}/video-1/video.mp4`);
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
  t.same(
    listed.sort(),
    [`generations/${org.id}/kept.png`, `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`, `generations/${org.id}/orphan.png`],
    'storage.list walks a prefix',
  );
  await t.rejects(storage.list('../')[Symbol.asyncIterator]().next(), /Invalid storage prefix/, 'a prefix out of the store is refused');

  // Nothing is old enough yet.
  t.same((await sweepOrphanedMedia(db, storage)).deleted, [], 'within the grace period nothing is deleted');
  // Age everything but one object past the grace period.
  const past = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
  for (const rel of [
    `generations/${org.id}/kept.png`,
    `generations/${org.id}/orphan.png`,
    `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`,
    `editor-exports/${org.id}/orphan.mp4`,
    `faceless/${org.id}/video-1/video.mp4`,
    'sound-effects/whoosh.wav',
  ]) {
    fs.utimesSync(path.join(dataDir, 'media', rel), past, past);
  }
  const swept = await sweepOrphanedMedia(db, storage);
  t.same(
    swept.deleted.sort(),
    [
      `editor-exports/${org.id}/orphan.mp4`,
      `faceless/${org.id}/video-1/video.mp4`,
      `generations/${org.id}/kept.png.0a1b2c3d4e5f.tmp`,
      `generations/${org.id}/orphan.png`,
    ],
    'the old unreferenced objects are deleted',
  );
  t.equal(swept.checked, 6);
  t.ok(await storage.exists(`generations/${org.id}/kept.png`), 'the referenced object stays');
  t.ok(
    await storage.exists(`editor-media/${org.id}/recent-orphan.wav`),
    'a recent unreferenced object stays (its row may be about to commit)',
  );
  t.ok(await storage.exists('sound-effects/whoosh.wav'), 'shared objects are not swept');
});

t.test('workspace assets: orphaned logos, portraits and voice samples are swept by the table that owns their prefix', async (t) => {
  const storage = localStorage({
    root: path.join(dataDir, 'assets'),
    signer: urlSigner({ publicBaseUrl: 'http://127.0.0.1', secret: Buffer.from('s'), defaultTtlSeconds: 60 }),
  });
  const org = await createOrganization(db, { name: 'Asset orphans', credits: 0 });
  const put = (key: string) => storage.put(key, Buffer.from(key), 'application/octet-stream');
  const assets = {
    logo: { kept: `brand-kits/${org.id}/kept.png`, orphan: `brand-kits/${org.id}/orphan.png`, fresh: `brand-kits/${org.id}/fresh.png` },
    portrait: { kept: `avatars/${org.id}/kept.png`, orphan: `avatars/${org.id}/orphan.png`, fresh: `avatars/${org.id}/fresh.png` },
    sample: { kept: `voices/${org.id}/kept.wav`, orphan: `voices/${org.id}/orphan.wav`, fresh: `voices/${org.id}/fresh.wav` },
  };
  for (const a of Object.values(assets)) for (const key of Object.values(a)) await put(key);
  // A media row naming a logo's key does not keep it: only the owner table (brand_kits) counts.
  await put(`brand-kits/${org.id}/media-named.png`);
  await db.insert(media).values({
    orgId: org.id,
    kind: 'image',
    source: 'generation',
    contentType: 'image/png',
    sizeBytes: 1,
    storageKey: `brand-kits/${org.id}/media-named.png`,
  });
  await db.insert(brandKits).values({ orgId: org.id, brandId: 1, kitName: 'Kit', logoKey: assets.logo.kept });
  await db.insert(customAvatars).values({ orgId: org.id, name: 'Face', imageUrl: '', videoUrl: '', imageKey: assets.portrait.kept });
  await db.insert(customVoices).values({
    orgId: org.id,
    name: 'Clone',
    status: 'ready',
    previewUrl: '',
    locale: ['en-US'],
    gender: 'female',
    age: 'adult',
    credits916: 1,
    credits169: 1,
    sampleKey: assets.sample.kept,
  });
  const past = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
  for (const a of Object.values(assets)) for (const rel of [a.kept, a.orphan]) fs.utimesSync(path.join(dataDir, 'assets', rel), past, past);
  fs.utimesSync(path.join(dataDir, 'assets', `brand-kits/${org.id}/media-named.png`), past, past);

  const swept = await sweepOrphanedMedia(db, storage);
  t.same(
    swept.deleted.sort(),
    [assets.portrait.orphan, `brand-kits/${org.id}/media-named.png`, assets.logo.orphan, assets.sample.orphan].sort(),
    'old unreferenced logo, portrait and voice sample are deleted',
  );
  t.equal(swept.checked, 10);
  for (const [name, a] of Object.entries(assets)) {
    t.ok(await storage.exists(a.kept), `a referenced ${name} stays`);
    t.ok(await storage.exists(a.fresh), `a recent unreferenced ${name} stays`);
    t.notOk(await storage.exists(a.orphan), `the orphaned ${name} is gone`);
  }
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
