// npm run -s admin -- grant list / grant revoke: the apps a workspace's members connected over
// OAuth, and disconnecting one — its access and refresh tokens stop working at once on /mcp.
// The first grant list runs as a real process (one JSON object, exit 0); the other commands run
// the same command code in this process (a CLI process costs ~1 s of CPU).
import t from 'tap';
import { adminInProcess, admin as runAdmin } from '../helpers/cli.ts';
import { member, oauthTokens, startMcpApp, tokenRequest } from '../mcp/helpers.ts';

const app = await startMcpApp(t);
const admin = (...args: string[]) => adminInProcess({ DATABASE_URL: app.databaseUrl }, args);
const adminProcess = (...args: string[]) => runAdmin({ DATABASE_URL: app.databaseUrl }, args);

const listTools = (token: string) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

t.test('grant list shows the connected apps of one workspace; grant revoke disconnects one at once', async (t) => {
  const ws = await app.workspace();
  const otherWs = await app.workspace();
  const m = await member(app, ws.orgId);
  const stranger = await member(app, otherWs.orgId);
  const tokens = await oauthTokens(app, { email: m.email, password: m.password });
  await oauthTokens(app, { email: stranger.email, password: stranger.password });

  let r = await adminProcess('grant', 'list', '--org', ws.orgId);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim().split('\n').length, 1, 'one JSON object on stdout');
  const list = JSON.parse(r.stdout);
  t.equal(list.object, 'list');
  t.equal(list.data.length, 1, 'only this workspace’s grants');
  const grant = list.data[0];
  t.match(grant, {
    object: 'oauth_grant',
    id: /^[0-9a-f-]{36}$/,
    client_id: tokens.client.client_id,
    client_name: 'Test client',
    member_email: m.email,
    resource: `${app.url}/mcp`,
    revoked_at: null,
    live_tokens: 2,
    created_at: String,
    last_token_at: String,
  });
  t.same(grant.scopes.toSorted(), tokens.scope.split(' ').toSorted());
  t.equal((await listTools(tokens.access_token)).status, 200, 'connected');

  r = await admin('grant', 'revoke', '--id', grant.id);
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { object: 'oauth_grant', id: grant.id, revoked: true });

  let status = 0;
  for (let i = 0; i < 60 && status !== 401; i++) {
    status = (await listTools(tokens.access_token)).status;
    if (status !== 401) await new Promise((res) => setTimeout(res, 50));
  }
  t.equal(status, 401, 'the access token is refused at once');
  const refreshed = await tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: tokens.client.client_id,
  });
  t.equal(refreshed.status, 400);
  t.equal(refreshed.body.error, 'invalid_grant', 'the refresh token too');

  r = await admin('grant', 'list', '--org', ws.orgId);
  t.match(JSON.parse(r.stdout).data[0], { id: grant.id, revoked_at: String, revoked_reason: 'revoked_by_admin', live_tokens: 0 });
  r = await admin('grant', 'revoke', '--id', grant.id);
  t.equal(r.code, 0, 'revoking again is fine');
});

t.test('grant commands refuse what does not exist', async (t) => {
  let r = await admin('grant', 'revoke', '--id', '00000000-0000-4000-8000-000000000000');
  t.equal(r.code, 1);
  t.match(r.stderr, /grant 00000000-0000-4000-8000-000000000000 not found/);
  r = await admin('grant', 'revoke', '--id', 'nope');
  t.equal(r.code, 1);
  r = await admin('grant', 'list', '--org', '00000000-0000-4000-8000-000000000000');
  t.equal(r.code, 1);
  t.match(r.stderr, /organization .* not found/);
  r = await admin('grant', 'list');
  t.equal(r.code, 2, 'usage');
  t.match(r.stderr, /--org is required[\s\S]*grant list --org ID/);
});
