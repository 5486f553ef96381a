// The admin CLI's asset commands (brand-kit, avatar, voice: create, list, delete), run as users
// run them, against the suite's database and a storage folder of their own: one JSON object on
// stdout; bad input exits non-zero with the reason on stderr. Each group's create runs as a real
// process (one JSON object on stdout, exit 0; the fake logo exits 1); the rest run the same
// command code in this process (a CLI process costs ~1 s of CPU).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';

const admin = (env: Record<string, string>, ...args: string[]) => adminInProcess(env, args);
const adminProcess = (env: Record<string, string>, ...args: string[]) => runAdmin(env, args);

t.test('brand-kit, avatar and voice commands', async (t) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-assets-'));
  t.teardown(() => fs.rm(dataDir, { recursive: true, force: true }));
  const env = { DATABASE_URL: await createTestDatabase(t), DATA_DIR: dataDir };
  const org = (await admin(env, 'org', 'create', '--name', 'Assets Co')).json.id;

  const logo = path.join(dataDir, 'logo.png');
  await fs.writeFile(
    logo,
    await sharp({ create: { width: 200, height: 80, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer(),
  );
  const kit = await adminProcess(
    env,
    'brand-kit',
    'create',
    '--org',
    org,
    '--name',
    'Acme',
    '--colors',
    'primary=#112233,accent=#FFCC00',
    '--fonts',
    'DejaVu Serif',
    '--logo',
    logo,
  );
  t.equal(kit.code, 0, kit.stderr);
  t.equal(kit.stdout.trim().split('\n').length, 1, 'one JSON object on stdout');
  t.match(kit.json, { kit_name: 'Acme', kit_data: { colors: ['#112233', '#FFCC00'], fonts: ['DejaVu Serif'] } });
  t.match(kit.json.logo_url, /\/media\/brand-kits\//);

  const badColour = await admin(env, 'brand-kit', 'create', '--org', org, '--name', 'X', '--colors', 'primary=red');
  t.equal(badColour.code, 2);
  t.match(badColour.stderr, /--colors primary must match pattern/);
  const badFont = await admin(env, 'brand-kit', 'create', '--org', org, '--name', 'X', '--fonts', 'Papyrus');
  t.equal(badFont.code, 2);
  t.match(badFont.stderr, /--fonts .*DejaVu Sans/);
  const textLogo = path.join(dataDir, 'fake.png');
  await fs.writeFile(textLogo, 'not an image, only text');
  const fake = await adminProcess(env, 'brand-kit', 'create', '--org', org, '--name', 'X', '--logo', textLogo);
  t.equal(fake.code, 1);
  t.match(fake.stderr, /body\.logo/);

  const portrait = path.join(dataDir, 'face.jpg');
  await fs.writeFile(
    portrait,
    await sharp({ create: { width: 400, height: 300, channels: 3, background: '#e0ac8c' } })
      .jpeg()
      .toBuffer(),
  );
  const avatar = await adminProcess(env, 'avatar', 'create', '--org', org, '--name', 'Founder', '--image', portrait);
  t.equal(avatar.code, 0, avatar.stderr);
  t.match(avatar.json, { name: 'Founder', isCustom: true });

  const sample = path.join(dataDir, 'voice.wav');
  await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=115:duration=4', '-f', 'wav', sample], { cwd: dataDir });
  const voice = await adminProcess(env, 'voice', 'create', '--org', org, '--name', 'Deep', '--language', 'en-GB', '--sample', sample);
  t.equal(voice.code, 0, voice.stderr);
  t.match(voice.json, { object: 'custom_voice', status: 'ready', base_voice: 'henry-rp', locale: ['en-GB'] });

  for (const [group, id] of [
    ['brand-kit', kit.json.id],
    ['avatar', avatar.json.id],
    ['voice', voice.json.id],
  ]) {
    const list = await admin(env, group, 'list', '--org', org);
    t.equal(list.code, 0, list.stderr);
    t.same(
      list.json.data.map((x: { id: unknown }) => x.id),
      [id],
      `${group} list`,
    );
    const del = await admin(env, group, 'delete', '--org', org, '--id', String(id));
    t.equal(del.code, 0, del.stderr);
    t.match(del.json, { deleted: true });
    const again = await admin(env, group, 'delete', '--org', org, '--id', String(id));
    t.equal(again.code, 1, `${group}: deleting twice fails`);
    t.match(again.stderr, /not found/);
    t.same((await admin(env, group, 'list', '--org', org)).json.data, []);
  }
  const noOrg = await admin(env, 'avatar', 'list', '--org', '00000000-0000-4000-8000-000000000000');
  t.equal(noOrg.code, 1);
  t.match(noOrg.stderr, /organization .* not found/);
});
