// publish_media_to_social end to end through the worker against local fakes of TikTok, YouTube
// and Pinterest (test/social/fakes-tiktok-youtube-pinterest.ts): each platform's upload protocol,
// published with its post id and URL; a 429 with Retry-After then success; a token expired
// mid-job refreshed once; a crash mid-upload (or before the pin) resumed from the stored ids
// without a second post; and the options and limits checked before anything is queued.
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { inArray } from 'drizzle-orm';
import { media } from '../../src/db/schema/index.ts';
import { socialPublishJob } from '../../src/pipelines/social-publication/job.ts';
import { caller } from '../../src/services/social/platforms/http.ts';
import { pinterest } from '../../src/services/social/platforms/pinterest.ts';
import { tiktok } from '../../src/services/social/platforms/tiktok.ts';
import { connectAccount, type SocialPlatform } from '../../src/services/social/accounts.ts';
import { credentials } from '../../src/services/social/connection.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import type { TestApp } from '../helpers/app.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';
import { fakePinterest, fakeTikTok, fakeYouTube } from './fakes-tiktok-youtube-pinterest.ts';

const MiB = 1024 * 1024;
const TT = await fakeTikTok(t);
const YT = await fakeYouTube(t);
const PIN = await fakePinterest(t);
const env = {
  SOCIAL_API_BASE_TIKTOK: TT.url,
  SOCIAL_TIKTOK_CLIENT_ID: 'tt-client',
  SOCIAL_TIKTOK_CLIENT_SECRET: 'tt-secret',
  SOCIAL_API_BASE_YOUTUBE: YT.url,
  SOCIAL_YOUTUBE_CLIENT_ID: 'yt-client',
  SOCIAL_YOUTUBE_CLIENT_SECRET: 'yt-secret',
  SOCIAL_API_BASE_PINTEREST: PIN.url,
  SOCIAL_PINTEREST_CLIENT_ID: 'pin-client',
  SOCIAL_PINTEREST_CLIENT_SECRET: 'pin-secret',
  // A job rescheduled for a Retry-After starts within a second of its time (5 s by default).
  JOB_POLL_SECONDS: '1',
  // The three platforms' first cases publish at once.
  SOCIAL_PUBLISH_CONCURRENCY: '4',
};
const app = await startMcpApp(t, env, { workers: true });

const EXT: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'video/mp4': 'mp4' };
/** A stored media row (the bytes are what the adapters upload or the platforms pull; the facts are what validation reads). */
async function storedMedia(
  a: TestApp,
  orgId: string,
  o: { kind: 'image' | 'video'; contentType: string; bytes: number; width?: number; height?: number; duration?: number },
) {
  const id = randomUUID();
  const key = `editor-media/${orgId}/${id}.${EXT[o.contentType]}`;
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
    height: o.height ?? 1920,
    durationSeconds: o.kind === 'video' ? (o.duration ?? 10) : null,
    hasAudio: o.kind === 'video' ? true : null,
  });
  return id;
}

async function account(
  a: TestApp,
  orgId: string,
  platform: SocialPlatform,
  tok: { access: string; refresh: string },
  handle = `${platform}brand`,
) {
  const cipher = tokenCipher(await loadTokenKey(a.service.ctx.config));
  const row = await connectAccount(a.service.ctx.db, cipher, {
    orgId,
    platform,
    handle,
    accessToken: tok.access,
    refreshToken: tok.refresh,
    platformAccountId: randomUUID(),
  });
  return row.id;
}

async function call(c: Client, name: string, args: Record<string, unknown>) {
  const res = await c.callTool({ name, arguments: args });
  return { isError: !!res.isError, body: res.structuredContent as any };
}

async function settled(c: Client, id: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(c, 'get_social_publication', { id });
    if (!body.results.some((r: { status: string }) => r.status === 'queued' || r.status === 'publishing')) return body;
    if (Date.now() > until) throw new Error(`publication ${id} still not settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ws = await app.workspace({ scopes: ['social:write'] });
const writer = await connect(app, ws.key);
t.teardown(() => writer.close());

// The three platforms' fakes are separate, so their cases run at once.
t.test('TikTok, YouTube and Pinterest at once', async (t) => {
  t.jobs = 3;
  t.test(
    'TikTok: creator info, init, two chunks with their Content-Range, status until PUBLISH_COMPLETE; 429 then success; token refreshed once',
    async (t) => {
      const acc = await account(app, ws.orgId, 'tiktok', TT.grant(), 'shoes');
      const bytes = 11 * MiB + 4321;
      const video = await storedMedia(app, ws.orgId, { kind: 'video', contentType: 'video/mp4', bytes, duration: 12 });
      TT.state.rateLimitInits = 1;
      TT.state.expireTokenAtStatus = true;
      const started = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: video,
        caption: 'New drop #shoes',
        platform_options: { tiktok: { privacy_level: 'public', allow_comments: false } },
      });
      t.notOk(started.isError, JSON.stringify(started.body));
      const done = await settled(writer, started.body.id);
      t.equal(done.status, 'published', JSON.stringify(done));
      t.ok(
        TT.state.initAt[1] - TT.state.initAt[0] >= 1000,
        `TikTok saw the second init ${TT.state.initAt[1] - TT.state.initAt[0]} ms after the 429 (Retry-After: 1)`,
      );
      t.equal(TT.state.inits, 2, 'the init refused with 429 once, then accepted');
      t.equal(TT.state.refreshes, 1, 'the token expired mid-job was refreshed once');
      t.equal(TT.state.posts.length, 1);
      const post = TT.state.posts[0];
      t.match(post.postInfo, {
        title: 'New drop #shoes',
        privacy_level: 'PUBLIC_TO_EVERYONE',
        disable_comment: true,
        disable_stitch: true,
      });
      t.same(
        post.chunks,
        [
          [0, 5 * MiB - 1],
          [5 * MiB, bytes - 1],
        ],
        'chunk_size 5 MiB, the last chunk taking the remainder, in order',
      );
      t.match(done.results[0], {
        platform: 'tiktok',
        status: 'published',
        post_id: post.postId,
        post_url: `https://www.tiktok.com/@shoes/video/${post.postId}`,
      });
      t.equal(done.results[0].post_id.length, 19, 'the int64 post id kept every digit');
      t.ok(TT.state.seen.includes('POST /v2/post/publish/creator_info/query/'));

      // A privacy level the creator does not allow: failed with TikTok's reason, nothing initialised.
      TT.state.privacyOptions = ['SELF_ONLY'];
      t.teardown(
        () => void (TT.state.privacyOptions = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY']),
      );
      const inits = TT.state.inits;
      const refused = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: video,
        platform_options: { tiktok: { privacy_level: 'friends' } },
      });
      const failed = await settled(writer, refused.body.id);
      t.match(failed.results[0], {
        status: 'failed',
        error: {
          code: 'platform_error',
          message: /privacy_level friends; allowed: private/,
          retryable: false,
          context: { platform_code: 'privacy_level_option_mismatch' },
        },
      });
      t.equal(TT.state.inits, inits);
    },
  );

  t.test(
    'YouTube: resumable session, 256 KiB-multiple chunks, the video resource; 429 then success; token refreshed once mid-upload',
    async (t) => {
      const acc = await account(app, ws.orgId, 'youtube', YT.grant());
      const bytes = 5 * MiB + 999;
      const video = await storedMedia(app, ws.orgId, {
        kind: 'video',
        contentType: 'video/mp4',
        bytes,
        width: 1920,
        height: 1080,
        duration: 20,
      });
      YT.state.rateLimitStarts = 1;
      YT.state.expireTokenAfterChunks = 1;
      const started = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: video,
        caption: 'Behind the scenes\nfull story',
        platform_options: { youtube: { privacy_status: 'unlisted' } },
      });
      t.notOk(started.isError, JSON.stringify(started.body));
      const done = await settled(writer, started.body.id);
      t.equal(done.status, 'published', JSON.stringify(done));
      t.equal(YT.state.videos.length, 1);
      const v = YT.state.videos[0];
      t.match(v.meta, {
        snippet: { title: 'Behind the scenes', description: 'Behind the scenes\nfull story', categoryId: '22' },
        status: { privacyStatus: 'unlisted' },
      });
      t.equal(v.bytes, bytes);
      t.equal(YT.state.sessions.size, 1, 'one session (the 429 made none)');
      t.same([...YT.state.sessions.values()][0].chunks, [
        [0, 4 * MiB - 1],
        [4 * MiB, bytes - 1],
      ]);
      t.equal(YT.state.refreshes, 1);
      t.match(done.results[0], { platform: 'youtube', post_id: v.id, post_url: `https://www.youtube.com/watch?v=${v.id}` });
    },
  );

  t.test(
    'Pinterest: video (register, S3 form upload, processing, pin) with 429 and a refreshed token; an image pin from our signed URL; a refused refresh',
    async (t) => {
      const acc = await account(app, ws.orgId, 'pinterest', PIN.grant());
      const video = await storedMedia(app, ws.orgId, {
        kind: 'video',
        contentType: 'video/mp4',
        bytes: 300_000,
        width: 1000,
        height: 1500,
        duration: 8,
      });
      PIN.state.rateLimitPins = 1;
      PIN.state.expireTokenAtMediaCheck = true;
      const opts = { pinterest: { board_id: '1234567890', title: 'Spring', link: 'https://shop.example.com/spring' } };
      const started = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: video,
        caption: 'Spring collection',
        platform_options: opts,
      });
      t.notOk(started.isError, JSON.stringify(started.body));
      const done = await settled(writer, started.body.id);
      t.equal(done.status, 'published', JSON.stringify(done));
      t.equal(PIN.state.pinAttempts, 2, 'refused once with 429, then pinned');
      t.equal(PIN.state.pins.length, 1);
      t.equal(PIN.state.refreshes, 1);
      const pin = PIN.state.pins[0];
      t.match(pin.body, {
        board_id: '1234567890',
        title: 'Spring',
        description: 'Spring collection',
        link: 'https://shop.example.com/spring',
        media_source: { source_type: 'video_id', media_id: /^\d+$/ },
      });
      t.equal(PIN.state.media.get(pin.body.media_source.media_id)!.uploaded, 300_000, 'the file went to the upload URL');
      t.match(done.results[0], { post_id: pin.id, post_url: `https://www.pinterest.com/pin/${pin.id}/` });

      const image = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 20_000 });
      const s2 = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: image,
        caption: 'one',
        platform_options: { pinterest: { board_id: '1234567890' } },
      });
      t.equal((await settled(writer, s2.body.id)).status, 'published');
      t.match(PIN.state.pins.at(-1)!, {
        body: { media_source: { source_type: 'image_url', url: new RegExp(`^${app.url}/media/`) } },
        pulled: [{ ok: true, type: 'image/png', bytes: 20_000 }],
      });

      // S3 refuses an expired upload policy: the media is registered again, then pinned once.
      PIN.state.expireNextUpload = true;
      const registered = PIN.state.media.size;
      const s4 = await call(writer, 'publish_media_to_social', {
        account_ids: [acc],
        media_id: video,
        caption: 'again',
        platform_options: { pinterest: { board_id: '1234567890' } },
      });
      t.equal((await settled(writer, s4.body.id)).status, 'published');
      t.equal(PIN.state.media.size - registered, 2, 'registered twice');
      t.equal(PIN.state.pins.at(-1)!.body.media_source.media_id, [...PIN.state.media.keys()].at(-1), 'pinned with the second upload');

      // Revoked at Pinterest: the refresh is refused, the target fails and the connection needs reauthorization.
      const revoked = PIN.grant();
      PIN.state.tokens.delete(revoked.access);
      PIN.state.refreshTokens.delete(revoked.refresh);
      const gone = await account(app, ws.orgId, 'pinterest', revoked, 'revoked');
      const s3 = await call(writer, 'publish_media_to_social', {
        account_ids: [gone],
        media_id: image,
        platform_options: { pinterest: { board_id: '1234567890' } },
      });
      const failed = await settled(writer, s3.body.id);
      t.match(failed.results[0], { status: 'failed', error: { code: 'reauthorization_required', message: /Invalid refresh token/ } });
      const [row] = await app.service.ctx.sql<{ status: string }[]>`select status from social_accounts where id = ${gone}`;
      t.equal(row.status, 'needs_reauth');
    },
  );
});

t.test('TikTok photos: PULL_FROM_URL with our signed URLs; a private post has no public id', async (t) => {
  const acc = await account(app, ws.orgId, 'tiktok', TT.grant());
  const a = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 30_000 });
  const { body: slides } = await call(writer, 'publish_media_to_social', {
    account_ids: [acc],
    media_id: a,
    caption: 'Two looks\nwhich one?',
    platform_options: { tiktok: { privacy_level: 'private' } },
  });
  const done = await settled(writer, slides.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  const post = TT.state.posts.at(-1)!;
  t.equal(post.kind, 'photo');
  t.match(post.postInfo, { title: 'Two looks', description: 'Two looks\nwhich one?', privacy_level: 'SELF_ONLY' });
  t.same(await post.pulled, [{ ok: true, type: 'image/jpeg', bytes: 30_000 }], 'TikTok pulled our bytes from the signed URL');
  t.match(done.results[0], { post_id: post.id, post_url: null });
});

t.test('several images: a TikTok photo post and a Pinterest carousel (the adapters run on the real connection and storage)', async (t) => {
  // Posts of several images come from a slideshow through the job; here the adapters run directly.
  const ctx = app.service.ctx;
  const jpegs = [];
  for (const bytes of [11_000, 12_000, 13_000])
    jpegs.push(await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes }));
  const rows = await ctx.db.select().from(media).where(inArray(media.id, jpegs));
  const ordered = jpegs.map((id) => rows.find((r) => r.id === id)!);
  const signal = new AbortController().signal;
  async function run(platform: 'tiktok' | 'pinterest', accountId: string, options: Record<string, unknown>) {
    const adapter = platform === 'tiktok' ? tiktok : pinterest;
    const base = ctx.config.social.apiBase[platform];
    const creds = (await credentials(
      ctx,
      accountId,
      (rt, s) => adapter.refresh(caller(platform, base, undefined, s), ctx.config.social.clients[platform], rt),
      signal,
    ))!;
    const state: Record<string, unknown> = {};
    return adapter.publish({
      account: creds.account,
      caption: 'three looks',
      media: ordered,
      options,
      state,
      save: async (p) => void Object.assign(state, p),
      api: caller(platform, base, creds, signal),
      storage: ctx.storage,
      signal,
    });
  }
  const tt = await run('tiktok', await account(app, ws.orgId, 'tiktok', TT.grant(), 'looks'), { privacy_level: 'public' });
  const post = TT.state.posts.at(-1)!;
  t.same(
    (await post.pulled)!.map((p) => p.bytes),
    [11_000, 12_000, 13_000],
    'TikTok pulled the three images in order',
  );
  t.same(tt, { id: post.postId, url: `https://www.tiktok.com/@looks/photo/${post.postId}` });
  const pin = await run('pinterest', await account(app, ws.orgId, 'pinterest', PIN.grant()), { board_id: '1234567890' });
  const created = PIN.state.pins.at(-1)!;
  t.match(created.body.media_source, {
    source_type: 'multiple_image_urls',
    items: [{ url: /\/media\// }, { url: /\/media\// }, { url: /\/media\// }],
  });
  t.same(
    created.pulled.map((p) => p.bytes),
    [11_000, 12_000, 13_000],
  );
  t.equal(pin.id, created.id);
});

t.test('required options and limits are checked before anything is queued', async (t) => {
  const tt = await account(app, ws.orgId, 'tiktok', TT.grant(), 'ttv');
  const yt = await account(app, ws.orgId, 'youtube', YT.grant(), 'ytv');
  const pin = await account(app, ws.orgId, 'pinterest', PIN.grant(), 'pinv');
  const video = await storedMedia(app, ws.orgId, { kind: 'video', contentType: 'video/mp4', bytes: 10_000, duration: 3 });
  const png = await storedMedia(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 10_000 });
  const [{ before }] = await app.service.ctx.sql<{ before: number }[]>`select count(*)::int as before from social_publications`;
  let r = await call(writer, 'publish_media_to_social', { account_ids: [yt, tt], media_id: video, caption: 'hi' });
  t.match(r.body, {
    error: {
      code: 'bad_request',
      message: new RegExp(`account ${tt} \\(tiktok @ttv\\).*privacy_level is required`),
      context: { account_id: tt, errors: [{ field: 'platform_options.tiktok.privacy_level' }] },
    },
  });
  r = await call(writer, 'publish_media_to_social', { account_ids: [pin], media_id: png, platform_options: { pinterest: { title: 'x' } } });
  t.match(r.body, {
    error: {
      code: 'bad_request',
      message: /board_id is required/,
      context: { account_id: pin, errors: [{ field: 'platform_options.pinterest.board_id' }] },
    },
  });
  r = await call(writer, 'publish_media_to_social', {
    account_ids: [pin],
    media_id: png,
    platform_options: { pinterest: { board_id: 'my-board' } },
  });
  t.match(r.body, { error: { code: 'bad_request', message: /board_id is a string of digits/ } });
  r = await call(writer, 'publish_media_to_social', {
    account_ids: [tt],
    media_id: video,
    caption: '👟'.repeat(1101),
    platform_options: { tiktok: { privacy_level: 'public' } },
  });
  t.match(r.body, {
    error: { code: 'bad_request', message: /2202 UTF-16 units; tiktok allows at most 2200/, context: { errors: [{ field: 'caption' }] } },
  });
  r = await call(writer, 'publish_media_to_social', { account_ids: [yt], media_id: video });
  t.match(r.body, {
    error: {
      code: 'bad_request',
      message: /youtube.title is required/,
      context: { errors: [{ field: 'platform_options.youtube.title' }] },
    },
  });
  r = await call(writer, 'publish_media_to_social', { account_ids: [yt], media_id: video, caption: 'a <b> tag' });
  t.match(r.body, { error: { code: 'bad_request', message: /cannot contain < or >/ } });
  r = await call(writer, 'publish_media_to_social', {
    account_ids: [tt],
    media_id: png,
    platform_options: { tiktok: { privacy_level: 'public' } },
  });
  t.match(r.body, { error: { code: 'bad_request', message: /image\/png images are not accepted by tiktok/ } });
  r = await call(writer, 'publish_media_to_social', {
    account_ids: [pin],
    media_id: video,
    platform_options: { pinterest: { board_id: '1' } },
  });
  t.match(r.body, { error: { code: 'bad_request', message: /the video lasts 3 s; pinterest takes 4–900 s/ } });
  r = await call(writer, 'publish_media_to_social', { account_ids: [yt], media_id: png, platform_options: { youtube: { title: 'x' } } });
  t.match(r.body, { error: { code: 'bad_request', message: /youtube does not take images/ } });
  const [{ after }] = await app.service.ctx.sql<{ after: number }[]>`select count(*)::int as after from social_publications`;
  t.equal(after, before, 'nothing was queued');
  const listed = await call(writer, 'list_social_accounts', { platform: 'youtube' });
  t.match(
    listed.body.data.find((a: { id: string }) => a.id === yt),
    { capabilities: { image: false, video: true, carousel: false, text: false } },
  );
});

t.test('a crash mid-upload (or before the pin) resumes from the stored ids: one upload, one post on each platform', async (t) => {
  // This node's workers stop taking publish jobs: the test runs the job's deliveries itself, the
  // first one cut while a platform request hangs (as a killed worker's would be), the second one a
  // fresh delivery. (Its queued job, taken once the workers are back, finds the target published.)
  const boss = app.service.boss!;
  await boss.offWork(socialPublishJob.name, { wait: true });
  t.teardown(() => socialPublishJob.start(boss, app.service.ctx));
  const bws = await app.workspace({ scopes: ['social:write'] });
  const c = await connect(app, bws.key);
  t.teardown(() => c.close());
  const delivery = (targetId: string, signal: AbortSignal) =>
    socialPublishJob.handle(app.service.ctx, {
      id: randomUUID(),
      data: { targetId, $version: 1 },
      retryCount: 0,
      retryLimit: 5,
      signal,
    } as never);
  async function crashThenResume(accountId: string, mediaId: string, options: Record<string, unknown>, hung: () => boolean) {
    const started = await call(c, 'publish_media_to_social', {
      account_ids: [accountId],
      media_id: mediaId,
      caption: 'exactly once',
      platform_options: options,
    });
    t.notOk(started.isError, JSON.stringify(started.body));
    const [{ id: targetId }] = await app.service.ctx.sql<
      { id: string }[]
    >`select id from social_publication_targets where publication_id = ${started.body.id}`;
    const crash = new AbortController();
    const first = delivery(targetId, crash.signal);
    for (let i = 0; i < 400 && !hung(); i++) await new Promise((r) => setTimeout(r, 25));
    t.ok(hung(), 'the first delivery reached the hanging request');
    crash.abort(new Error('worker killed'));
    await first.catch(() => {});
    const [mid] = await app.service.ctx.sql<
      { status: string; state: any }[]
    >`select status, state from social_publication_targets where id = ${targetId}`;
    t.equal(mid.status, 'publishing');
    await delivery(targetId, new AbortController().signal);
    await delivery(targetId, new AbortController().signal); // a redelivery changes nothing
    const done = (await call(c, 'get_social_publication', { id: started.body.id })).body;
    t.equal(done.status, 'published', JSON.stringify(done));
    return { state: mid.state, result: done.results[0] };
  }

  // TikTok: the second chunk's PUT hangs; the resumed attempt sends it again to the same upload.
  const ttAcc = await account(app, bws.orgId, 'tiktok', TT.grant());
  const ttVideo = await storedMedia(app, bws.orgId, { kind: 'video', contentType: 'video/mp4', bytes: 10 * MiB + 7, duration: 9 });
  const [ttInits, ttPosts, ttPuts] = [TT.state.inits, TT.state.posts.length, TT.state.chunkPuts];
  TT.state.hangChunk = 1;
  const seenBefore = TT.state.seen.length;
  const tt = await crashThenResume(ttAcc, ttVideo, { tiktok: { privacy_level: 'public' } }, () => TT.state.chunkPuts === ttPuts + 2);
  const seen = TT.state.seen.slice(seenBefore);
  const hungAt = seen.indexOf('PUT /video/') + 1;
  t.same(
    seen.slice(hungAt, hungAt + 3),
    ['PUT /video/', 'POST /v2/post/publish/status/fetch/', 'PUT /video/'],
    'the resumed attempt asked TikTok how much it holds, then sent the missing chunk',
  );
  t.match(
    tt.state,
    { publish_id: /^v_pub_file~/, upload_url: /upload_id=/, next_chunk: 1 },
    'the publish id and upload progress were stored',
  );
  t.equal(TT.state.inits - ttInits, 1, 'TikTok: one init');
  t.equal(TT.state.posts.length - ttPosts, 1, 'TikTok: one post');
  t.same(TT.state.posts.at(-1)!.chunks, [
    [0, 5 * MiB - 1],
    [5 * MiB, 10 * MiB + 6],
  ]);
  t.equal(tt.result.post_id, TT.state.posts.at(-1)!.postId);

  // YouTube: the chunk at 4 MiB hangs; the resumed attempt asks the session (bytes */N → 308 Range) and sends the rest.
  const ytAcc = await account(app, bws.orgId, 'youtube', YT.grant());
  const ytVideo = await storedMedia(app, bws.orgId, { kind: 'video', contentType: 'video/mp4', bytes: 5 * MiB, duration: 9 });
  const [sessions, videos, queries] = [YT.state.sessions.size, YT.state.videos.length, YT.state.statusQueries];
  YT.state.hangAtOffset = 4 * MiB;
  const yt = await crashThenResume(ytAcc, ytVideo, { youtube: { title: 'Once' } }, () => YT.state.hangAtOffset === -1);
  t.match(yt.state, { upload_url: /upload_id=/ });
  t.equal(YT.state.sessions.size - sessions, 1, 'YouTube: one upload session');
  t.equal(YT.state.videos.length - videos, 1, 'YouTube: one video');
  t.equal(YT.state.statusQueries - queries, 1, 'asked the session once where to resume');
  t.same([...YT.state.sessions.values()].at(-1)!.chunks, [
    [0, 4 * MiB - 1],
    [4 * MiB, 5 * MiB - 1],
  ]);
  t.equal(yt.result.post_id, YT.state.videos.at(-1)!.id);

  // Pinterest: the pin creation hangs after the upload; the resumed attempt pins the same media.
  const pinAcc = await account(app, bws.orgId, 'pinterest', PIN.grant());
  const pinVideo = await storedMedia(app, bws.orgId, {
    kind: 'video',
    contentType: 'video/mp4',
    bytes: 100_000,
    width: 1080,
    height: 1080,
    duration: 6,
  });
  const [registered, pins, attempts] = [PIN.state.media.size, PIN.state.pins.length, PIN.state.pinAttempts];
  PIN.state.hangNextPin = true;
  const p = await crashThenResume(
    pinAcc,
    pinVideo,
    { pinterest: { board_id: '1234567890' } },
    () => PIN.state.pinAttempts === attempts + 1,
  );
  t.match(p.state, { media_id: /^\d+$/, uploaded: true });
  t.equal(PIN.state.media.size - registered, 1, 'Pinterest: one media upload');
  t.equal(PIN.state.pins.length - pins, 1, 'Pinterest: one pin');
  t.equal(p.result.post_id, PIN.state.pins.at(-1)!.id);
});
