// Social connections: the admin CLI (social connect / list / disconnect), tokens sealed with
// AES-256-GCM under a key that is never in the database, and the MCP tool list_social_accounts.
// The first social connect runs as a real process (one JSON object, exit 0); the other commands run
// the same command code in this process (a CLI process costs ~1 s of CPU).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'social-cli-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const app = await startMcpApp(t);
const admin = (env: Record<string, string>, ...args: string[]) =>
  adminInProcess({ DATABASE_URL: app.databaseUrl, DATA_DIR: dataDir, ...env }, args);
const adminProcess = (env: Record<string, string>, ...args: string[]) =>
  runAdmin({ DATABASE_URL: app.databaseUrl, DATA_DIR: dataDir, ...env }, args);

const workspaceKey = async (orgId: string, scopes: string[]) => (await createApiKey(app.service.ctx.db, { orgId, scopes })).key;

t.test('token sealing: AES-256-GCM round trip, a fresh IV each time, a tampered value refused', async (t) => {
  const key = await loadTokenKey({ secretsKey: undefined, dataDir });
  t.equal(key.length, 32);
  t.equal(fs.statSync(path.join(dataDir, 'secrets.key')).mode & 0o777, 0o600, 'key file is 0600');
  t.same(await loadTokenKey({ secretsKey: undefined, dataDir }), key, 'made once, then read');
  const c = tokenCipher(key);
  const a = c.encrypt('secret-token');
  t.not(a, c.encrypt('secret-token'), 'fresh IV');
  t.notMatch(a, /secret-token/);
  t.equal(c.decrypt(a), 'secret-token');
  const parts = a.split('.');
  const body = Buffer.from(parts[3], 'base64url');
  body[0] ^= 1;
  t.throws(() => c.decrypt([...parts.slice(0, 3), body.toString('base64url')].join('.')), 'tampered ciphertext fails the tag');
  t.throws(() => tokenCipher(Buffer.alloc(32, 7)).decrypt(a), 'another key fails');
});

t.test('admin social connect / list / disconnect: one JSON object each, never a token', async (t) => {
  const ws = await app.workspace();
  const other = await app.workspace();
  let r = await adminProcess(
    {},
    'social',
    'connect',
    '--org',
    ws.orgId,
    '--platform',
    'x',
    '--handle',
    '@brand',
    '--access-token',
    'AT-x-123',
    '--refresh-token',
    'RT-x-456',
    '--expires-in',
    '7200',
    '--account-id',
    '1234567890',
  );
  t.equal(r.code, 0, r.stderr);
  t.notMatch(r.stdout, /AT-x-123|RT-x-456/, 'tokens are never printed');
  t.equal(r.stdout.trim().split('\n').length, 1, 'one JSON object on stdout');
  const x = JSON.parse(r.stdout);
  t.match(x, {
    object: 'social_account',
    id: /^[0-9a-f-]{36}$/,
    org: ws.orgId,
    platform: 'x',
    account_id: '1234567890',
    handle: 'brand',
    status: 'connected',
    capabilities: { image: true, video: true, carousel: true, text: true },
  });
  const expires = Date.parse(x.expires_at) - Date.now();
  t.ok(expires > 7000_000 && expires <= 7200_000, 'expiry from --expires-in');

  r = await admin({}, 'social', 'connect', '--org', ws.orgId, '--platform', 'youtube', '--handle', 'brandtv', '--access-token', 'AT-yt');
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), {
    platform: 'youtube',
    account_id: 'brandtv',
    expires_at: null,
    capabilities: { image: false, video: true, carousel: false, text: false },
  });
  r = await admin({}, 'social', 'connect', '--org', other.orgId, '--platform', 'linkedin', '--handle', 'theirs', '--access-token', 'AT-li');
  t.equal(r.code, 0, r.stderr);
  const theirs = JSON.parse(r.stdout);

  // Reconnecting the same platform account replaces its tokens (no duplicate row).
  r = await admin(
    {},
    'social',
    'connect',
    '--org',
    ws.orgId,
    '--platform',
    'x',
    '--handle',
    'brand',
    '--access-token',
    'AT-x-new',
    '--account-id',
    '1234567890',
  );
  t.equal(JSON.parse(r.stdout).id, x.id, 'same connection');

  // At rest: sealed under the key file, not in clear, and the key is not in the database.
  const key = fs.readFileSync(path.join(dataDir, 'secrets.key'), 'utf8').trim();
  const [row] = await app.service.ctx.sql<{ access_token_enc: string; refresh_token_enc: string | null }[]>`
    select access_token_enc, refresh_token_enc from social_accounts where id = ${x.id}`;
  t.match(row.access_token_enc, /^v1\./);
  t.equal(tokenCipher(Buffer.from(key, 'base64')).decrypt(row.access_token_enc), 'AT-x-new');
  t.equal(row.refresh_token_enc, null, 'a reconnect without --refresh-token forgets the old one');
  const [{ hits }] = await app.service.ctx.sql<{ hits: number }[]>`
    select count(*)::int as hits from social_accounts where access_token_enc like '%AT-x%' or access_token_enc like ${`%${key}%`}`;
  t.equal(hits, 0);

  r = await admin({}, 'social', 'list', '--org', ws.orgId);
  t.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout);
  t.same(
    list.data.map((a: { handle: string }) => a.handle),
    ['brand', 'brandtv'],
    'only this workspace, oldest first',
  );
  t.notMatch(r.stdout, /AT-|RT-|_enc/);

  // Usage errors exit 2; unknown ids exit 1.
  r = await admin({}, 'social', 'connect', '--org', ws.orgId, '--platform', 'myspace', '--handle', 'a', '--access-token', 'b');
  t.equal(r.code, 2);
  t.match(r.stderr, /--platform must be one of instagram, facebook, tiktok, x, linkedin, threads, youtube, pinterest/);
  r = await admin({}, 'social', 'connect', '--org', ws.orgId, '--platform', 'x', '--handle', 'a');
  t.equal(r.code, 2);
  t.match(r.stderr, /--access-token is required/);
  r = await admin({}, 'social', 'disconnect', '--id', '00000000-0000-4000-8000-000000000000');
  t.equal(r.code, 1);

  // SECRETS_KEY set: that key seals (the key file is not used).
  const envKey = Buffer.alloc(32, 9);
  r = await admin(
    { SECRETS_KEY: envKey.toString('hex') },
    'social',
    'connect',
    '--org',
    ws.orgId,
    '--platform',
    'threads',
    '--handle',
    'th',
    '--access-token',
    'AT-th',
  );
  t.equal(r.code, 0, r.stderr);
  const [th] = await app.service.ctx.sql<
    { access_token_enc: string }[]
  >`select access_token_enc from social_accounts where id = ${JSON.parse(r.stdout).id}`;
  t.equal(tokenCipher(envKey).decrypt(th.access_token_enc), 'AT-th');
  r = await admin({ SECRETS_KEY: 'short' }, 'social', 'list', '--org', ws.orgId);
  t.not(r.code, 0);
  t.match(r.stderr, /SECRETS_KEY must be 32 bytes/);

  // list_social_accounts over MCP: social:read or social:write; this workspace only.
  for (const scopes of [['social:read'], ['social:write']]) {
    const c = await connect(app, await workspaceKey(ws.orgId, scopes));
    const res = await c.callTool({ name: 'list_social_accounts', arguments: {} });
    await c.close();
    t.notOk(res.isError, scopes.join());
    const data = (res.structuredContent as { data: { id: string; platform: string; username: string; status: string }[] }).data;
    t.same(
      data.map((a) => a.username),
      ['brand', 'brandtv', 'th'],
      scopes.join(),
    );
    t.notOk(
      data.some((a) => a.id === theirs.id),
      'not another workspace’s',
    );
    t.match(data[0], {
      id: x.id,
      platform: 'x',
      username: 'brand',
      display_name: null,
      avatar_url: null,
      status: 'connected',
      capabilities: { text: true },
    });
  }
  const c = await connect(app, await workspaceKey(ws.orgId, ['social:read']));
  t.teardown(() => c.close());
  const filtered = await c.callTool({ name: 'list_social_accounts', arguments: { platform: 'youtube' } });
  t.same(
    (filtered.structuredContent as { data: { username: string }[] }).data.map((a) => a.username),
    ['brandtv'],
  );
  await app.service.ctx.sql`update social_accounts set status = 'needs_reauth', status_reason = 'refresh failed' where id = ${x.id}`;
  const again = await c.callTool({ name: 'list_social_accounts', arguments: { platform: 'x' } });
  t.match((again.structuredContent as { data: unknown[] }).data, [{ id: x.id, status: 'reauthorization_required' }]);

  const noSocial = await connect(app, await workspaceKey(ws.orgId, ['generations:read', 'generations:write']));
  t.teardown(() => noSocial.close());
  const err = await noSocial.callTool({ name: 'list_social_accounts', arguments: {} }).catch((e: unknown) => e);
  t.ok(err instanceof StreamableHTTPError);
  t.equal((err as StreamableHTTPError).code, 403, 'without social scopes: the insufficient_scope challenge');

  r = await admin({}, 'social', 'disconnect', '--id', x.id);
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { object: 'social_account', id: x.id, platform: 'x', handle: 'brand', disconnected: true });
  const after = await c.callTool({ name: 'list_social_accounts', arguments: {} });
  t.same(
    (after.structuredContent as { data: { username: string }[] }).data.map((a) => a.username),
    ['brandtv', 'th'],
  );
});
