// publish_media_to_social end to end through the worker against local fakes of X and LinkedIn
// (test/social/fakes.ts): published with the platform's post id; 429 with the platform's retry
// hint, then success; a token expired mid-job refreshed once; a refused refresh making the
// connection needs_reauth; a crash between upload and post resumed without a second post; and
// the checks made before anything is queued (limits, unavailable platforms, scopes, workspaces).
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { media, webhookEndpoints } from '../../src/db/schema/index.ts';
import { socialPublishJob } from '../../src/pipelines/social-publication/job.ts';
import { connectAccount, type SocialPlatform } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import type { TestApp } from '../helpers/app.ts';
import { Browser, connect, hiddenField, member, startMcpApp } from '../mcp/helpers.ts';
import { colorPng } from '../editor/helpers.ts';
import { fakeLinkedIn, fakeX } from './fakes.ts';

const MiB = 1024 * 1024;
const X = await fakeX(t);
const LI = await fakeLinkedIn(t);
// A user's media host (HTTPS, trusted test certificate), reached through the guarded client.
const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'), 'utf8');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
const png = await colorPng('red', 64, 48);
const host = https.createServer({ cert, key: fs.readFileSync(path.join(fixtures, 'localhost-key.pem')) }, (req, res) => {
  if (req.url !== '/post.png') return res.writeHead(404).end('missing');
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => host.close(() => r())));
const mediaHost = `https://127.0.0.1:${(host.address() as { port: number }).port}`;

const env = {
  OUTBOUND_ALLOW_IPS: '127.0.0.1',
  SOCIAL_API_BASE_X: X.url,
  SOCIAL_API_BASE_LINKEDIN: LI.url,
  SOCIAL_LINKEDIN_CLIENT_ID: 'li-client',
  SOCIAL_LINKEDIN_CLIENT_SECRET: 'li-secret',
  SOCIAL_X_CLIENT_ID: 'x-client',
  JOB_POLL_SECONDS: '1',
};
const app = await startMcpApp(t, env, { workers: true });

/** A stored media row (the bytes are what the adapters upload; the facts are what validation reads). */
async function storedMedia(
  a: TestApp,
  orgId: string,
  o: { kind: 'image' | 'video'; contentType: string; bytes: number; width?: number; height?: number; duration?: number },
) {
  const id = randomUUID();
  const key = `editor-media/${orgId}/${id}.${o.kind === 'image' ? 'png' : 'mp4'}`;
  const buf = Buffer.alloc(o.bytes);
  for (let i = 0; i < buf.length; i += 4096) buf[i] = i % 251;
  await a.service.ctx.storage.put(key, buf, o.contentType);
  await a.service.ctx.db.insert(media).values({
    id,
    orgId,
    kind: o.kind,
    status: 'completed',
    source: 'upload',
    contentType: o.contentType,
    sizeBytes: o.bytes,
    storageKey: key,
    width: o.width ?? 1080,
    height: o.height ?? 1080,
    durationSeconds: o.kind === 'video' ? (o.duration ?? 10) : null,
    hasAudio: o.kind === 'video' ? true : null,
  });
  return id;
}

async function account(
  a: TestApp,
  orgId: string,
  platform: SocialPlatform,
  o: { access: string; refresh?: string; accountId?: string; handle?: string; expiresIn?: number },
) {
  const cipher = tokenCipher(await loadTokenKey(a.service.ctx.config));
  const row = await connectAccount(a.service.ctx.db, cipher, {
    orgId,
    platform,
    handle: o.handle ?? `${platform}brand`,
    accessToken: o.access,
    refreshToken: o.refresh ?? null,
    platformAccountId: o.accountId ?? randomUUID(),
    expiresInSeconds: o.expiresIn,
  });
  return row.id;
}

const key = async (a: TestApp, orgId: string, scopes: string[]) => (await createApiKey(a.service.ctx.db, { orgId, scopes })).key;

type Publication = {
  id: string;
  status: string;
  results: {
    account_id: string;
    platform: string;
    status: string;
    post_id: string | null;
    post_url: string | null;
    error: { code: string; message: string } | null;
  }[];
};

async function call(c: Client, name: string, args: Record<string, unknown>) {
  const res = await c.callTool({ name, arguments: args });
  return { isError: !!res.isError, body: res.structuredContent as any };
}

async function settled(c: Client, id: string, timeoutMs = 60_000): Promise<Publication> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(c, 'get_social_publication', { id });
    if (!body.results.some((r: { status: string }) => r.status === 'queued' || r.status === 'publishing')) return body;
    if (Date.now() > until) throw new Error(`publication ${id} still not settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const ws = await app.workspace({ scopes: ['social:write'] });
// An endpoint subscribed to publication events (its deliveries fail: only the event rows are checked).
await app.service.ctx.db.insert(webhookEndpoints).values({
  orgId: ws.orgId,
  url: 'https://127.0.0.1:9/hook',
  eventTypes: ['publication.completed', 'publication.failed'],
  secret: 'whsec_dGVzdA==',
});
const writer = await connect(app, ws.key);
t.teardown(() => writer.close());

t.test(
  'a 9 MB video to X and LinkedIn (duplicates ignored): the real upload protocols, then published with the platforms’ post ids',
  async (t) => {
    const xTok = X.grant();
    const liTok = LI.grant();
    const xAcc = await account(app, ws.orgId, 'x', {
      access: xTok.access,
      refresh: xTok.refresh,
      accountId: '1234567890',
      handle: 'brand',
      expiresIn: 7200,
    });
    const liAcc = await account(app, ws.orgId, 'linkedin', {
      access: liTok.access,
      refresh: liTok.refresh,
      accountId: 'urn:li:organization:555',
    });
    const videoBytes = 9 * MiB + 12345;
    const video = await storedMedia(app, ws.orgId, {
      kind: 'video',
      contentType: 'video/mp4',
      bytes: videoBytes,
      width: 1280,
      height: 720,
      duration: 12,
    });
    const started = await call(writer, 'publish_media_to_social', {
      account_ids: [xAcc, liAcc, xAcc.toUpperCase()],
      media_id: video,
      caption: 'Our new shoe 👟',
    });
    t.notOk(started.isError, JSON.stringify(started.body));
    t.match(started.body, { object: 'social_publish_result', id: /^[0-9a-f-]{36}$/, status: 'queued' });
    t.same(
      started.body.results.map((r: { account_id: string; status: string }) => [r.account_id, r.status]),
      [
        [xAcc, 'queued'],
        [liAcc, 'queued'],
      ],
      'one target per distinct account',
    );

    const done = await settled(writer, started.body.id);
    t.equal(done.status, 'published', JSON.stringify(done));
    const [xr, lr] = done.results;
    t.equal(X.state.tweets.length, 1);
    const tweet = X.state.tweets[0];
    t.match(xr, { platform: 'x', status: 'published', post_id: tweet.id, post_url: `https://x.com/brand/status/${tweet.id}`, error: null });
    t.equal(tweet.text, 'Our new shoe 👟');
    const upload = X.state.uploads.get(tweet.mediaIds[0])!;
    t.match(upload, { mediaType: 'video/mp4', totalBytes: videoBytes, category: 'tweet_video', finalized: true });
    t.same(
      upload.segments,
      [
        { index: 0, bytes: 4 * MiB },
        { index: 1, bytes: 4 * MiB },
        { index: 2, bytes: MiB + 12345 },
      ],
      'segments 0, 1, 2 in order, 4 MiB each but the last',
    );
    t.ok(upload.statusChecks >= 2, 'STATUS polled until succeeded');

    t.equal(LI.state.posts.length, 1);
    const post = LI.state.posts[0];
    t.match(lr, {
      platform: 'linkedin',
      status: 'published',
      post_id: post.urn,
      post_url: `https://www.linkedin.com/feed/update/${post.urn}/`,
    });
    t.match(post.body, {
      author: 'urn:li:organization:555',
      commentary: 'Our new shoe 👟',
      visibility: 'PUBLIC',
      lifecycleState: 'PUBLISHED',
      content: { media: { id: /^urn:li:video:/ } },
    });
    const v = LI.state.videos.get(post.body.content.media.id)!;
    t.equal(v.parts.length, 3, 'three parts uploaded, each with its byte range');
    t.ok(v.finalized);
    t.ok(
      LI.state.seen.some((s) => s.startsWith('PUT /dms-uploads/video/')),
      'uploads went to the rebased upload host',
    );

    const listed = await call(writer, 'list_social_publications', {});
    t.equal(listed.body.data[0].id, started.body.id);
    const [event] = await app.service.ctx.sql<
      { type: string; body: string }[]
    >`select type, body from webhook_events where resource_id = ${started.body.id}`;
    t.equal(event?.type, 'publication.completed', 'the terminal webhook event, once');
    t.match(JSON.parse(event.body).data, { object: 'social_publish_result', id: started.body.id, status: 'published' });
  },
);

t.test('429 with the platform’s retry hint, then success: one post each', async (t) => {
  const xTok = X.grant();
  const liTok = LI.grant();
  const xAcc = await account(app, ws.orgId, 'x', { access: xTok.access, refresh: xTok.refresh, handle: 'brand2' });
  const liAcc = await account(app, ws.orgId, 'linkedin', { access: liTok.access, refresh: liTok.refresh, accountId: 'abc123' });
  const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 200_000 });
  X.state.rateLimitTweets = 1;
  LI.state.rateLimitPosts = 1;
  const tweetsBefore = X.state.tweets.length;
  const attemptsBefore = X.state.tweetAttempts;
  const postsBefore = LI.state.posts.length;
  const liAttemptsBefore = LI.state.postAttempts;
  const started = await call(writer, 'publish_media_to_social', { account_ids: [xAcc, liAcc], media_id: image, caption: 'hello' });
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  // The platforms' own clocks: each retry came at least the hinted second after the 429.
  const [x429, xOk] = X.state.tweetAt.slice(attemptsBefore);
  const [li429, liOk] = LI.state.postAt.slice(liAttemptsBefore);
  t.ok(xOk - x429 >= 1000, `X saw the retry ${xOk - x429} ms after its 429 (x-rate-limit-reset)`);
  t.ok(liOk - li429 >= 1000, `LinkedIn saw the retry ${liOk - li429} ms after its 429 (Retry-After: 1)`);
  t.equal(X.state.tweetAttempts - attemptsBefore, 2, 'X: refused once, then posted');
  t.equal(X.state.tweets.length - tweetsBefore, 1, 'X: one tweet');
  t.equal(LI.state.postAttempts - liAttemptsBefore, 2, 'LinkedIn: refused once, then posted');
  t.equal(LI.state.posts.length - postsBefore, 1, 'LinkedIn: one post');
  t.match(LI.state.posts.at(-1)!.body, { author: 'urn:li:person:abc123', content: { media: { id: /^urn:li:image:/ } } });
  const u = X.state.uploads.get(X.state.tweets.at(-1)!.mediaIds[0])!;
  t.match(u, { category: 'tweet_image', segments: [{ index: 0, bytes: 200_000 }] });
});

t.test('media by URL: fetched through the guard into the library, then uploaded; private addresses refused', async (t) => {
  const liTok = LI.grant();
  const liAcc = await account(app, ws.orgId, 'linkedin', { access: liTok.access, refresh: liTok.refresh, accountId: 'urlperson' });
  const started = await call(writer, 'publish_media_to_social', {
    account_ids: [liAcc],
    url: `${mediaHost}/post.png`,
    caption: 'from a URL',
  });
  t.notOk(started.isError, JSON.stringify(started.body));
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  const post = LI.state.posts.find((p) => p.body.commentary === 'from a URL')!;
  t.equal(LI.state.images.get(post.body.content.media.id)!.bytes, png.length, 'the fetched bytes were uploaded');
  const refused = await call(writer, 'publish_media_to_social', { account_ids: [liAcc], url: 'https://10.1.2.3/a.png' });
  t.match(refused.body, { error: { code: 'bad_request', context: { errors: [{ field: 'url' }] } } });
});

t.test('a token that expires mid-job is refreshed once; an expired LinkedIn token is refreshed before the first call', async (t) => {
  const xTok = X.grant();
  const xAcc = await account(app, ws.orgId, 'x', { access: xTok.access, refresh: xTok.refresh, handle: 'brand3', expiresIn: 7200 });
  const video = await storedMedia(app, ws.orgId, {
    kind: 'video',
    contentType: 'video/mp4',
    bytes: 5 * MiB,
    width: 720,
    height: 1280,
    duration: 30,
  });
  const refreshesBefore = X.state.refreshes;
  X.state.expireTokenAfterAppends = X.state.uploads.size ? [...X.state.uploads.values()].reduce((a, u) => a + u.segments.length, 0) + 1 : 1;
  const started = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: video, caption: 'refresh me' });
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  t.equal(X.state.refreshes - refreshesBefore, 1, 'refreshed exactly once');
  const u = X.state.uploads.get(X.state.tweets.at(-1)!.mediaIds[0])!;
  t.same(
    u.segments.map((s) => s.bytes),
    [4 * MiB, MiB],
    'the upload continued after the refresh',
  );
  const [row] = await app.service.ctx.sql<
    { access_token_enc: string; refresh_token_enc: string; status: string }[]
  >`select access_token_enc, refresh_token_enc, status from social_accounts where id = ${xAcc}`;
  const cipher = tokenCipher(await loadTokenKey(app.service.ctx.config));
  t.not(cipher.decrypt(row.access_token_enc), xTok.access, 'the new access token is stored');
  t.not(cipher.decrypt(row.refresh_token_enc), xTok.refresh, 'and X’s rotated refresh token');
  t.equal(row.status, 'connected');

  const liTok = LI.grant();
  LI.state.tokens.delete(liTok.access); // already expired at LinkedIn too
  const liAcc = await account(app, ws.orgId, 'linkedin', { access: liTok.access, refresh: liTok.refresh, expiresIn: 0 });
  const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 50_000 });
  const liBefore = LI.state.refreshes;
  const s2 = await call(writer, 'publish_media_to_social', { account_ids: [liAcc], media_id: image, caption: 'li' });
  const d2 = await settled(writer, s2.body.id);
  t.equal(d2.status, 'published', JSON.stringify(d2));
  t.equal(LI.state.refreshes - liBefore, 1);
});

t.test('a refused refresh: the target fails saying so and the connection needs reauthorization', async (t) => {
  const xTok = X.grant();
  X.state.tokens.delete(xTok.access);
  X.state.refreshTokens.delete(xTok.refresh);
  const xAcc = await account(app, ws.orgId, 'x', { access: xTok.access, refresh: xTok.refresh, handle: 'revoked' });
  const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 10_000 });
  const started = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: image, caption: 'nope' });
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'failed');
  const [event] = await app.service.ctx.sql<{ type: string }[]>`select type from webhook_events where resource_id = ${started.body.id}`;
  t.equal(event?.type, 'publication.failed');
  t.match(done.results[0], {
    status: 'failed',
    post_id: null,
    error: {
      code: 'reauthorization_required',
      message: /refreshing the access token failed: .*Value passed for the token was invalid.*reconnect the account/,
      retryable: false,
    },
  });
  const listed = await call(writer, 'list_social_accounts', { platform: 'x' });
  t.match(
    listed.body.data.find((a: { id: string }) => a.id === xAcc),
    { status: 'reauthorization_required' },
  );
  const again = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: image });
  t.ok(again.isError);
  t.match(again.body, { error: { code: 'bad_request', message: /needs to be reauthorized/ } });
});

t.test('checked before anything is queued: limits, unavailable platforms, scopes, other workspaces', async (t) => {
  const xAcc = await account(app, ws.orgId, 'x', { access: 'unused', handle: 'limits' });
  const liAcc = await account(app, ws.orgId, 'linkedin', { access: 'unused2' });
  const ytAcc = await account(app, ws.orgId, 'youtube', { access: 'unused3' });
  const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 10_000 });
  const bigImage = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 6 * MiB });
  const longVideo = await storedMedia(app, ws.orgId, {
    kind: 'video',
    contentType: 'video/mp4',
    bytes: 100_000,
    duration: 200,
    width: 1920,
    height: 1080,
  });
  const [{ before }] = await app.service.ctx.sql<{ before: number }[]>`select count(*)::int as before from social_publications`;

  let r = await call(writer, 'publish_media_to_social', { account_ids: [liAcc, xAcc], media_id: image, caption: 'x'.repeat(281) });
  t.match(r.body, {
    error: {
      code: 'bad_request',
      message: new RegExp(`account ${xAcc} \\(x @limits\\).*281 characters; x allows at most 280`),
      context: { account_id: xAcc, platform: 'x', errors: [{ field: 'account_ids.1' }] },
    },
  });
  r = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: bigImage });
  t.match(r.body, { error: { code: 'bad_request', message: /the image is 6 MB; x allows at most 5 MB/ } });
  r = await call(writer, 'publish_media_to_social', { account_ids: [liAcc, xAcc], media_id: longVideo });
  t.match(r.body, { error: { code: 'bad_request', message: /the video lasts 200 s; x takes 0.5–140 s/, context: { account_id: xAcc } } });
  r = await call(writer, 'publish_media_to_social', {
    account_ids: [xAcc, ytAcc],
    media_id: image,
    platform_options: { youtube: { title: 'T' } },
  });
  t.match(r.body, { error: { code: 'bad_request', message: new RegExp(`account ${ytAcc} \\(youtube .*youtube does not take images`) } });
  r = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: image, url: 'https://example.com/a.png' });
  t.match(r.body, { error: { code: 'bad_request', message: /exactly one of/ } });

  const other = await app.workspace({ scopes: ['social:write'] });
  const theirs = await account(app, other.orgId, 'x', { access: 'theirs' });
  const theirImage = await storedMedia(app, other.orgId, { kind: 'image', contentType: 'image/png', bytes: 1000 });
  r = await call(writer, 'publish_media_to_social', { account_ids: [xAcc, theirs], media_id: image });
  t.match(r.body, { error: { code: 'not_found', context: { resource: 'social_account', field: 'account_ids.1' } } });
  r = await call(writer, 'publish_media_to_social', { account_ids: [xAcc], media_id: theirImage });
  t.match(r.body, { error: { code: 'not_found', context: { resource: 'editor_media', field: 'media_id' } } });
  r = await call(writer, 'get_social_publication', { id: randomUUID() });
  t.match(r.body, { error: { code: 'not_found', context: { resource: 'social_publication' } } });
  const [{ after }] = await app.service.ctx.sql<{ after: number }[]>`select count(*)::int as after from social_publications`;
  t.equal(after, before, 'nothing was queued');

  // social:read lists and reads, but cannot publish (the insufficient_scope challenge).
  const reader = await connect(app, await key(app, ws.orgId, ['social:read']));
  t.teardown(() => reader.close());
  t.notOk((await call(reader, 'list_social_accounts', {})).isError);
  t.notOk((await call(reader, 'list_social_publications', { limit: 2 })).isError);
  const err = await reader
    .callTool({ name: 'publish_media_to_social', arguments: { account_ids: [xAcc], media_id: image } })
    .catch((e: unknown) => e);
  t.ok(err instanceof StreamableHTTPError);
  t.equal((err as StreamableHTTPError).code, 403);
  const raw = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${await key(app, ws.orgId, ['social:read'])}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'publish_media_to_social', arguments: { account_ids: [xAcc], media_id: image } },
    }),
  });
  t.equal(raw.status, 403);
  t.match(raw.headers.get('www-authenticate'), /^Bearer error="insufficient_scope".*scope="social:read social:write"/);
  // generations scopes alone cannot even list.
  const gen = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${await key(app, ws.orgId, ['generations:read'])}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_social_publication', arguments: { id: randomUUID() } },
    }),
  });
  t.equal(gen.status, 403);
});

t.test('idempotency_key: the same call answers the stored publication; other arguments conflict', async (t) => {
  const tok = X.grant();
  const xAcc = await account(app, ws.orgId, 'x', { access: tok.access, refresh: tok.refresh, handle: 'idem' });
  const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 1000 });
  const first = await call(writer, 'publish_media_to_social', {
    account_ids: [xAcc],
    media_id: image,
    caption: 'once',
    idempotency_key: 'k-1',
  });
  const again = await call(writer, 'publish_media_to_social', {
    account_ids: [xAcc, xAcc],
    media_id: image,
    caption: 'once',
    idempotency_key: 'k-1',
  });
  t.equal(again.body.id, first.body.id);
  t.equal(again.body.idempotent_replay, true);
  const other = await call(writer, 'publish_media_to_social', {
    account_ids: [xAcc],
    media_id: image,
    caption: 'twice',
    idempotency_key: 'k-1',
  });
  t.match(other.body, { error: { code: 'idempotency_conflict' } });
  const done = await settled(writer, first.body.id);
  t.equal(done.status, 'published');
  t.equal(X.state.tweets.filter((tw) => tw.text === 'once').length, 1);
});

t.test(
  'idempotency_key is the charged command’s: the same arguments in another order replay, a key in flight is a 409, an expired key is free again, nothing is charged',
  async (t) => {
    const tok = X.grant();
    const xAcc = await account(app, ws.orgId, 'x', { access: tok.access, refresh: tok.refresh, handle: 'canon' });
    const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 1000 });
    const [{ credits: before }] = await app.service.ctx.sql<
      { credits: number }[]
    >`select credits from organizations where id = ${ws.orgId}`;
    const first = await call(writer, 'publish_media_to_social', {
      account_ids: [xAcc],
      media_id: image,
      caption: 'canonical',
      idempotency_key: 'k-canon',
    });
    t.notOk(first.isError, JSON.stringify(first.body));
    // The same arguments, written in another order (and the account twice): the same call.
    const again = await call(writer, 'publish_media_to_social', {
      idempotency_key: 'k-canon',
      caption: 'canonical',
      media_id: image,
      account_ids: [xAcc.toUpperCase(), xAcc],
    });
    t.notOk(again.isError, JSON.stringify(again.body));
    t.equal(again.body.id, first.body.id, 'a replay, not a conflict');
    t.equal(again.body.idempotent_replay, true);
    t.same({ ...again.body, idempotent_replay: undefined }, { ...first.body, idempotent_replay: undefined }, 'the stored answer');

    // Other arguments: 409, answered before they are checked (this account does not exist).
    const other = await call(writer, 'publish_media_to_social', {
      account_ids: [randomUUID()],
      caption: 'other',
      idempotency_key: 'k-canon',
    });
    t.match(other.body, { error: { code: 'idempotency_conflict', context: { field: 'idempotency_key', idempotency_key: 'k-canon' } } });

    // A key another call holds right now (its transaction has the key's lock): 409, nothing queued.
    await app.service.ctx.sql.begin(async (sql) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`${ws.orgId}|publish_media_to_social|k-flight`}, 727))`;
      const busy = await call(writer, 'publish_media_to_social', {
        account_ids: [xAcc],
        media_id: image,
        caption: 'in flight',
        idempotency_key: 'k-flight',
      });
      t.match(busy.body, {
        error: {
          code: 'idempotency_conflict',
          message: /still being processed/,
          context: { field: 'idempotency_key', idempotency_key: 'k-flight' },
        },
      });
    });

    // Keys expire (24 hours): then the same key starts a new publication, whatever its arguments.
    const expired = await app.service.ctx
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where org_id = ${ws.orgId} and operation = 'publish_media_to_social' and key = 'k-canon'`;
    t.equal(expired.count, 1, 'the key was recorded with the charged command’s records');
    const reused = await call(writer, 'publish_media_to_social', {
      account_ids: [xAcc],
      media_id: image,
      caption: 'a day later',
      idempotency_key: 'k-canon',
    });
    t.notOk(reused.isError, JSON.stringify(reused.body));
    t.not(reused.body.id, first.body.id, 'a new publication');
    t.notOk(reused.body.idempotent_replay);

    for (const id of [first.body.id, reused.body.id]) t.equal((await settled(writer, id)).status, 'published');
    t.same(
      ['canonical', 'in flight', 'a day later'].map((text) => X.state.tweets.filter((tw) => tw.text === text).length),
      [1, 0, 1],
      'one post per publication, none for the refused call',
    );
    const [{ credits: after }] = await app.service.ctx.sql<{ credits: number }[]>`select credits from organizations where id = ${ws.orgId}`;
    t.equal(after, before, 'publishing is free');
    const [{ rows }] = await app.service.ctx.sql<
      { rows: number }[]
    >`select count(*)::int as rows from credit_ledger where org_id = ${ws.orgId} and reason = 'publication_charge'`;
    t.equal(rows, 0, 'and writes no ledger row');
  },
);

t.test(
  'a key written on the publication before the charged command kept it (the previous release) still replays for its lifetime: no second post across the deploy',
  async (t) => {
    const tok = X.grant();
    const xAcc = await account(app, ws.orgId, 'x', { access: tok.access, refresh: tok.refresh, handle: 'legacy' });
    const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 1000 });
    const args = { account_ids: [xAcc], media_id: image, caption: 'before the deploy' };
    const first = await call(writer, 'publish_media_to_social', args);
    t.notOk(first.isError, JSON.stringify(first.body));
    t.equal((await settled(writer, first.body.id)).status, 'published');
    // As the previous release wrote a keyed publication: the key and the hash of the arguments on the row.
    const hash = createHash('sha256')
      .update(JSON.stringify({ media_id: image, caption: 'before the deploy', account_ids: [xAcc] }))
      .digest('hex');
    await app.service.ctx
      .sql`update social_publications set idempotency_key = 'k-legacy', request_hash = ${hash} where id = ${first.body.id}`;

    const again = await call(writer, 'publish_media_to_social', { ...args, idempotency_key: 'k-legacy' });
    t.notOk(again.isError, JSON.stringify(again.body));
    t.equal(again.body.id, first.body.id, 'the publication the key names');
    t.equal(again.body.idempotent_replay, true);
    const other = await call(writer, 'publish_media_to_social', { ...args, caption: 'something else', idempotency_key: 'k-legacy' });
    t.match(other.body, { error: { code: 'idempotency_conflict', context: { field: 'idempotency_key', idempotency_key: 'k-legacy' } } });

    // A day later the key is free, as every key is.
    await app.service.ctx.sql`update social_publications set created_at = now() - interval '25 hours' where id = ${first.body.id}`;
    const later = await call(writer, 'publish_media_to_social', { ...args, idempotency_key: 'k-legacy' });
    t.notOk(later.isError, JSON.stringify(later.body));
    t.not(later.body.id, first.body.id, 'a new publication');
    t.equal((await settled(writer, later.body.id)).status, 'published');
    t.equal(
      X.state.tweets.filter((tw) => tw.text === 'before the deploy').length,
      2,
      'one post per publication: none for the replay or the conflict',
    );
  },
);

t.test('a caption without media is a text post: a tweet without media, a LinkedIn post without content', async (t) => {
  const xTok = X.grant();
  const liTok = LI.grant();
  const xAcc = await account(app, ws.orgId, 'x', { access: xTok.access, refresh: xTok.refresh, handle: 'texter' });
  const liAcc = await account(app, ws.orgId, 'linkedin', { access: liTok.access, refresh: liTok.refresh, accountId: 'texter' });
  const started = await call(writer, 'publish_media_to_social', { account_ids: [xAcc, liAcc], caption: 'words only' });
  t.notOk(started.isError, JSON.stringify(started.body));
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  t.match(
    X.state.tweets.find((tw) => tw.id === done.results[0].post_id),
    { text: 'words only', mediaIds: [] },
  );
  const post = LI.state.posts.find((p) => p.urn === done.results[1].post_id)!;
  t.match(post.body, { commentary: 'words only', author: 'urn:li:person:texter' });
  t.equal(post.body.content, undefined);
});

t.test(
  'an account disconnected while its publication waits: nothing is sent with its tokens, the target fails once, account_disconnected',
  async (t) => {
    // This node's workers stop taking publish jobs while the account is disconnected on the
    // connections page (the way a member does it), then take the queued job.
    const boss = app.service.boss!;
    await boss.offWork(socialPublishJob.name, { wait: true });
    let working = false;
    t.teardown(async () => {
      if (!working) await socialPublishJob.start(boss, app.service.ctx);
    });
    const dws = await app.workspace({ scopes: ['social:write'] });
    await app.service.ctx.db.insert(webhookEndpoints).values({
      orgId: dws.orgId,
      url: 'https://127.0.0.1:9/hook',
      eventTypes: ['publication.completed', 'publication.failed'],
      secret: 'whsec_dGVzdA==',
    });
    const c = await connect(app, dws.key);
    t.teardown(() => c.close());
    const tok = X.grant();
    const xAcc = await account(app, dws.orgId, 'x', { access: tok.access, refresh: tok.refresh, handle: 'leaving', expiresIn: 7200 });
    const image = await storedMedia(app, dws.orgId, { kind: 'image', contentType: 'image/png', bytes: 20_000 });
    const started = await call(c, 'publish_media_to_social', { account_ids: [xAcc], media_id: image, caption: 'never posted' });
    t.notOk(started.isError, JSON.stringify(started.body));
    t.equal(started.body.status, 'queued');

    const m = await member(app, dws.orgId);
    const browser = new Browser(app.url);
    let page = await browser.fetch('/social/connections');
    let r = await browser.post('/social/connections', {
      action: 'sign-in',
      csrf: hiddenField(await page.text(), 'csrf')!,
      email: m.email,
      password: m.password,
    });
    t.equal(r.status, 303, 'signed in');
    page = await browser.fetch('/social/connections');
    r = await browser.post('/social/connections', { action: 'disconnect', account: xAcc, csrf: hiddenField(await page.text(), 'csrf')! });
    t.equal(r.status, 303, 'disconnected on the page');
    t.equal(r.headers.get('location'), '/social/connections?disconnected=x');
    t.same((await call(c, 'list_social_accounts', {})).body.data, [], 'the account is gone');

    const seenBefore = X.state.seen.length;
    const tweetsBefore = X.state.tweetAttempts;
    await socialPublishJob.start(boss, app.service.ctx);
    working = true;
    const done = await settled(c, started.body.id);
    t.equal(done.status, 'failed', JSON.stringify(done));
    t.match(done.results, [
      {
        account_id: xAcc,
        platform: 'x',
        status: 'failed',
        post_id: null,
        post_url: null,
        error: { code: 'account_disconnected', message: /disconnected/, retryable: false },
      },
    ]);
    t.equal(X.state.seen.length, seenBefore, 'X was not called at all (no upload, no post, no refresh)');
    t.equal(X.state.tweetAttempts, tweetsBefore);
    const [target] = await app.service.ctx.sql<
      { id: string; attempts: number }[]
    >`select id, attempts from social_publication_targets where publication_id = ${started.body.id}`;
    t.equal(target.attempts, 1, 'one attempt: not retried');
    const jobs = await app.service.ctx.sql<
      { state: string; retry_count: number }[]
    >`select state, retry_count from pgboss.job where name = ${socialPublishJob.name} and data->>'targetId' = ${target.id}`;
    t.same(
      jobs.map((j) => [j.state, j.retry_count]),
      [['completed', 0]],
      'its job ended on the first delivery, no retries',
    );
    const events = await app.service.ctx.sql<{ type: string }[]>`select type from webhook_events where resource_id = ${started.body.id}`;
    t.same(
      events.map((e) => e.type),
      ['publication.failed'],
      'the terminal event, once',
    );
    const listed = (await call(c, 'list_social_publications', {})).body.data.find((p: { id: string }) => p.id === started.body.id);
    t.match(listed, { status: 'failed' }, 'listed as failed');
  },
);

t.test('a crash between upload and post resumes from the stored upload id: one upload, one post', async (t) => {
  // This node's workers stop taking publish jobs: the test runs the job's deliveries itself, the
  // first one cut while its POST /2/tweets hangs (as a killed worker's would be), the second one a
  // fresh delivery. (Its queued job, taken once the workers are back, finds the target published.)
  const boss = app.service.boss!;
  await boss.offWork(socialPublishJob.name, { wait: true });
  t.teardown(() => socialPublishJob.start(boss, app.service.ctx));
  const bws = await app.workspace({ scopes: ['social:write'] });
  const c = await connect(app, bws.key);
  t.teardown(() => c.close());
  const tok = X.grant();
  const xAcc = await account(app, bws.orgId, 'x', { access: tok.access, refresh: tok.refresh, handle: 'crash' });
  const video = await storedMedia(app, bws.orgId, {
    kind: 'video',
    contentType: 'video/mp4',
    bytes: 6 * MiB,
    duration: 20,
    width: 1080,
    height: 1920,
  });
  const started = await call(c, 'publish_media_to_social', { account_ids: [xAcc], media_id: video, caption: 'exactly once' });
  t.notOk(started.isError, JSON.stringify(started.body));
  const [{ id: targetId }] = await app.service.ctx.sql<
    { id: string }[]
  >`select id from social_publication_targets where publication_id = ${started.body.id}`;
  const uploadsBefore = X.state.uploads.size;
  const tweetsBefore = X.state.tweetAttempts;
  X.state.hangNextTweet = true;
  const crash = new AbortController();
  const delivery = (signal: AbortSignal) =>
    socialPublishJob.handle(app.service.ctx, {
      id: randomUUID(),
      data: { targetId, $version: 1 },
      retryCount: 0,
      retryLimit: 5,
      signal,
    } as never);
  const first = delivery(crash.signal);
  for (let i = 0; i < 400 && X.state.tweetAttempts === tweetsBefore; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(X.state.tweetAttempts, tweetsBefore + 1, 'the first delivery reached POST /2/tweets');
  crash.abort(new Error('worker killed'));
  await first.catch(() => {});
  const [mid] = await app.service.ctx.sql<
    { status: string; state: any }[]
  >`select status, state from social_publication_targets where id = ${targetId}`;
  t.equal(mid.status, 'publishing');
  t.match(
    mid.state,
    { media: [{ id: /^\d+$/, next_segment: 2, finalized: true, ready: true }] },
    'the upload id and its progress were stored',
  );

  await delivery(new AbortController().signal);
  const done = (await call(c, 'get_social_publication', { id: started.body.id })).body;
  t.equal(done.status, 'published', JSON.stringify(done));
  t.equal(X.state.uploads.size - uploadsBefore, 1, 'one upload (INIT once)');
  const tweet = X.state.tweets.find((tw) => tw.text === 'exactly once')!;
  t.equal(X.state.tweets.filter((tw) => tw.text === 'exactly once').length, 1, 'one post');
  t.equal(done.results[0].post_id, tweet.id);
  t.same(
    X.state.uploads.get(tweet.mediaIds[0])!.segments.map((s) => s.index),
    [0, 1],
    'each segment sent once',
  );

  // A third delivery (pg-boss redelivering) changes nothing.
  await delivery(new AbortController().signal);
  t.equal(X.state.tweets.filter((tw) => tw.text === 'exactly once').length, 1);
});
