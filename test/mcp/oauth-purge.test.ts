// Housekeeping of the authorization server (purgeExpiredOAuth, run by the maintenance job):
// rows a day past their expiry go, live ones stay, a grant goes only once it has no token and
// no code left, clients stay; and the maintenance worker runs it.
import { eq, inArray, sql } from 'drizzle-orm';
import t from 'tap';
import { oauthBrowserSessions, oauthClients, oauthCodes, oauthGrants, oauthTokens } from '../../src/db/schema/index.ts';
import { maintenanceJob } from '../../src/services/platform/maintenance.ts';
import { purgeExpiredOAuth } from '../../src/services/oauth/oauth.ts';
import { member, oauthTokens as flow, startMcpApp } from './helpers.ts';

const DAY = 24 * 3600 * 1000;

t.test('purgeExpiredOAuth: expired rows a day later, dead grants, never clients or live rows', async (t) => {
  const app = await startMcpApp(t);
  const db = app.service.ctx.db;
  const ws = await app.workspace();
  const m = await member(app, ws.orgId);
  const old = await flow(app, { email: m.email, password: m.password });
  const live = await flow(app, { email: m.email, password: m.password });
  const grantOf = async (clientId: string) => (await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId)))[0].id;
  const oldGrant = await grantOf(old.client.client_id);
  const liveGrant = await grantOf(live.client.client_id);

  t.same(await purgeExpiredOAuth(db), { codes: 0, tokens: 0, sessions: 0, requests: 0, grants: 0 }, 'nothing to purge yet');

  // The old flow: everything expired two days ago, its grant made three days ago.
  const twoDaysAgo = new Date(Date.now() - 2 * DAY);
  await db.update(oauthTokens).set({ expiresAt: twoDaysAgo }).where(eq(oauthTokens.grantId, oldGrant));
  await db.update(oauthCodes).set({ expiresAt: twoDaysAgo }).where(eq(oauthCodes.grantId, oldGrant));
  await db
    .update(oauthGrants)
    .set({ createdAt: new Date(Date.now() - 3 * DAY) })
    .where(eq(oauthGrants.id, oldGrant));
  // A live grant that is also old: it keeps its tokens, so it stays.
  await db
    .update(oauthGrants)
    .set({ createdAt: new Date(Date.now() - 3 * DAY) })
    .where(eq(oauthGrants.id, liveGrant));
  // Every browser session expired two days ago (their pending requests go with them).
  const sessionsBefore = await db.select().from(oauthBrowserSessions);
  t.ok(sessionsBefore.length >= 2);
  await db.update(oauthBrowserSessions).set({ expiresAt: twoDaysAgo });
  // An access token that expired an hour ago is kept for now (the day of retention).
  await db
    .update(oauthTokens)
    .set({ expiresAt: new Date(Date.now() - 3600_000) })
    .where(sql`${oauthTokens.grantId} = ${liveGrant} and ${oauthTokens.kind} = 'access'`);

  const purged = await purgeExpiredOAuth(db);
  t.equal(purged.tokens, 2, 'the old access and refresh tokens');
  t.equal(purged.codes, 1, 'the old (used) code');
  t.equal(purged.sessions, sessionsBefore.length, 'the expired browser sessions');
  t.equal(purged.grants, 1, 'the old grant, left with nothing');

  t.same(
    (
      await db
        .select()
        .from(oauthGrants)
        .where(inArray(oauthGrants.id, [oldGrant, liveGrant]))
    ).map((g) => g.id),
    [liveGrant],
    'the live grant stays',
  );
  t.equal(
    (await db.select().from(oauthTokens).where(eq(oauthTokens.grantId, liveGrant))).length,
    2,
    'its tokens stay (one expired an hour ago)',
  );
  t.equal((await db.select().from(oauthClients)).length, 2, 'both clients stay');

  // The live refresh token still works; the old one is unknown now.
  const refresh = (token: string, clientId: string) =>
    fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
    });
  t.equal((await refresh(live.refresh_token, live.client.client_id)).status, 200);
  const gone = await refresh(old.refresh_token, old.client.client_id);
  t.equal(gone.status, 400);
  t.match(await gone.json(), { error: 'invalid_grant' });
});

t.test('the maintenance job purges expired OAuth rows', async (t) => {
  const app = await startMcpApp(t, {}, { workers: true });
  const db = app.service.ctx.db;
  const ws = await app.workspace();
  const m = await member(app, ws.orgId);
  await flow(app, { email: m.email, password: m.password });
  t.equal((await db.select().from(oauthTokens)).length, 2);
  await db.update(oauthTokens).set({ expiresAt: new Date(Date.now() - 2 * DAY) });
  await app.service.boss!.send(maintenanceJob.name, {});
  for (let i = 0; i < 150 && (await db.select().from(oauthTokens)).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  t.equal((await db.select().from(oauthTokens)).length, 0, 'the expired tokens are gone');
  t.equal((await db.select().from(oauthGrants)).length, 1, 'the grant (made today) stays');
});
