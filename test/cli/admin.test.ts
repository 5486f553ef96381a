// The admin CLI, run as users run it (`npm run -s admin -- …`), against the suite's database
// and, in the second part, against the embedded database of a running server. The commands'
// behaviour is checked in this process (runAdmin, the CLI's own code); real processes prove the
// process prints one JSON object and exits 0, 1 (failed) or 2 (usage) with nothing on stdout.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';

const root = path.resolve(import.meta.dirname, '../..');

const admin = (env: Record<string, string>, ...args: string[]) => adminInProcess(env, args);
const adminProcess = (env: Record<string, string>, ...args: string[]) => runAdmin(env, args);

t.test('commands against DATABASE_URL', async (t) => {
  const env = { DATABASE_URL: await createTestDatabase(t) };

  // The README's own command line, through npm; two failures below run `node src/cli/admin.ts` as
  // npm does; the rest run in this process.
  const org = await runAdmin(env, ['org', 'create', '--name', 'Acme Ads', '--credits', '250'], { viaNpm: true });
  t.equal(org.code, 0, org.stderr);
  t.equal(org.stdout.trim().split('\n').length, 1, 'one JSON object on stdout');
  t.match(org.json, { object: 'organization', name: 'Acme Ads', plan: 'paid', credits: 250 });
  t.match(org.json.id, /^[0-9a-f-]{36}$/);
  const id = org.json.id;

  const defaults = await admin(env, 'org', 'create', '--name', 'Defaults');
  t.match(defaults.json, { plan: 'paid', credits: 0 });

  const none = await admin(env, 'org', 'set-plan', '--org', id, '--plan', 'none');
  t.match(none.json, { object: 'organization', id, plan: 'none', credits: 250 });

  const grant = await admin(env, 'credits', 'grant', '--org', id, '--amount', '50');
  t.same(grant.json, { object: 'credit_balance', org: id, credits: 300 });

  const key = await admin(env, 'key', 'create', '--org', id, '--scopes', 'generations:read,generations:write', '--expires-in', '3600');
  t.equal(key.code, 0, key.stderr);
  t.match(key.json, { object: 'api_key', scopes: ['generations:read', 'generations:write'] });
  t.match(key.json.key, /^mapi_[A-Za-z0-9_-]{43}$/);

  const revoke = await admin(env, 'key', 'revoke', '--id', key.json.id);
  t.same(revoke.json, { object: 'api_key', id: key.json.id, revoked: true });

  const bads = [
    ['org', 'create'],
    ['org', 'create', '--name', 'X', '--plan', 'gold'],
    ['org', 'create', '--name', 'X', '--credits', '-5'],
    ['credits', 'grant', '--org', id, '--amount', '0'],
    ['credits', 'grant', '--org', '00000000-0000-4000-8000-000000000000', '--amount', '5'],
    ['key', 'create', '--org', id, '--scopes', 'generations:admin'],
    ['key', 'revoke', '--id', '00000000-0000-4000-8000-000000000000'],
    ['org', 'explode'],
    ['org', 'create', '--name', 'X', '--bogus', '1'],
  ];
  const results = await Promise.all(bads.map((bad) => admin(env, ...bad)));
  for (const [i, bad] of bads.entries()) {
    const r = results[i];
    t.not(r.code, 0, `${bad.join(' ')} exits non-zero`);
    t.equal(r.stdout, '', `${bad.join(' ')} prints nothing on stdout`);
    t.match(r.stderr, /error/, `${bad.join(' ')} prints an error`);
  }
  // As processes: a usage error exits 2, a failed command 1, each with nothing on stdout.
  const [usage, failed] = await Promise.all([adminProcess(env, ...bads[1]), adminProcess(env, ...bads[4])]);
  for (const [r, code] of [
    [usage, 2],
    [failed, 1],
  ] as const) {
    t.equal(r.code, code, `process exit code ${code}`);
    t.equal(r.stdout, '');
    t.match(r.stderr, /^admin: error: /);
  }
  t.match(usage.stderr, /--plan must be paid or none[\s\S]*Usage:/);
  t.match(failed.stderr, /organization .* not found/);
});

t.test('the CLI attaches to the embedded PostgreSQL of a running server', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-cli-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', DEMO_WORKSPACE: '0' };
  const server = spawn(process.execPath, ['src/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  server.stdout.on('data', (d) => (out += d));
  server.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => server.on('exit', r));
  t.teardown(async () => {
    server.kill('SIGTERM');
    await exited;
  });
  const deadline = Date.now() + 60_000;
  while (!/API listening on (\S+)/.test(out) && Date.now() < deadline && server.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  const m = /API listening on (\S+)\/api\/v1/.exec(out);
  t.ok(m, `server started: ${out}`);
  if (!m) return;

  const org = await adminProcess({ DATABASE_URL: '', DATA_DIR: dataDir }, 'org', 'create', '--name', 'Embedded', '--credits', '7');
  t.equal(org.code, 0, org.stderr);
  const key = await adminProcess(
    { DATABASE_URL: '', DATA_DIR: dataDir },
    'key',
    'create',
    '--org',
    org.json.id,
    '--scopes',
    'generations:read',
  );
  t.equal(key.code, 0, key.stderr);

  // The running server sees what the CLI wrote: same cluster, same database.
  const res = await fetch(`${m[1]}/api/v1/assets`, { headers: { authorization: `Bearer ${key.json.key}` } });
  t.equal(res.status, 200);
  t.equal(((await res.json()) as { object: string }).object, 'workspace_assets');
  t.equal(server.exitCode, null, 'the server is still running after the CLI exits');
});
