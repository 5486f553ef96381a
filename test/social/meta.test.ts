// Instagram, Facebook Pages and Threads end to end through the worker against a local fake of
// Meta's Graph APIs (test/social/meta-fakes.ts), which fetches the media from our signed URLs:
// containers polled until FINISHED and published once, with the platforms' post ids and
// permalinks; a rate limit (Graph code 4/32/613) then success; a token expired mid-job (code 190)
// refreshed once; a container that fails processing; a crash between container and publish resumed
// from the stored container id; the platforms' limits checked before anything is queued; and an
// Instagram account connected through the browser connect flow's code path (over HTTP), publishing
// with the connection that flow stored.
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { media, slideshows, slideshowSlides } from '../../src/db/schema/index.ts';
import { socialPublishJob } from '../../src/pipelines/social-publication/job.ts';
import { createEditorVideo } from '../../src/services/editor/projects.ts';
import { connectAccount, type SocialPlatform } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import type { TestApp } from '../helpers/app.ts';
import { Browser, connect, hiddenField, member, startMcpApp } from '../mcp/helpers.ts';
import { fakeMeta } from './meta-fakes.ts';

const META = await fakeMeta(t);
const env = {
  // Instagram with Instagram Login: graph.instagram.com and api.instagram.com are the fake's Instagram server.
  SOCIAL_API_BASE_INSTAGRAM: META.igUrl,
  SOCIAL_API_BASE_FACEBOOK: META.url,
  SOCIAL_API_BASE_THREADS: META.url,
  SOCIAL_INSTAGRAM_CLIENT_ID: 'ig-app',
  SOCIAL_INSTAGRAM_CLIENT_SECRET: 'ig-secret',
  SOCIAL_FACEBOOK_CLIENT_ID: 'meta-app',
  SOCIAL_FACEBOOK_CLIENT_SECRET: 'meta-secret',
  // A job rescheduled for a rate limit starts within a second of its time (5 s by default).
  JOB_POLL_SECONDS: '1',
};
const app = await startMcpApp(t, env, { workers: true });
const ws = await app.workspace({ scopes: ['social:write'] });
const writer = await connect(app, ws.key);
t.teardown(() => writer.close());

/** A stored media row: the bytes are what the platform fetches from our signed URL; the facts are what validation reads. */
async function stored(
  a: TestApp,
  orgId: string,
  o: { kind: 'image' | 'video'; contentType: string; bytes: number; width: number; height: number; duration?: number },
) {
  const id = randomUUID();
  const key = `editor-media/${orgId}/${id}.${o.kind === 'image' ? 'jpg' : 'mp4'}`;
  await a.service.ctx.storage.put(key, Buffer.alloc(o.bytes, id.charCodeAt(0)), o.contentType);
  await a.service.ctx.db.insert(media).values({
    id,
    orgId,
    kind: o.kind,
    status: 'completed',
    source: 'upload',
    contentType: o.contentType,
    sizeBytes: o.bytes,
    storageKey: key,
    width: o.width,
    height: o.height,
    durationSeconds: o.kind === 'video' ? (o.duration ?? 8) : null,
    hasAudio: o.kind === 'video' ? true : null,
  });
  return id;
}

/** A connected account whose platform id the fake knows (IG user, Page or Threads user). */
async function account(a: TestApp, orgId: string, platform: SocialPlatform, tok = META.grant(platform === 'instagram' ? 'IGAA' : 'EAAG')) {
  const accountId = META.nextId();
  (platform === 'instagram' ? META.state.igUsers : platform === 'facebook' ? META.state.pages : META.state.threadsUsers).add(accountId);
  const cipher = tokenCipher(await loadTokenKey(a.service.ctx.config));
  const row = await connectAccount(a.service.ctx.db, cipher, {
    orgId,
    platform,
    handle: `${platform}brand`,
    accessToken: tok.access,
    refreshToken: tok.refresh,
    platformAccountId: accountId,
    expiresInSeconds: 5_000_000,
  });
  return { id: row.id, accountId, tok };
}

async function call(c: Client, name: string, args: Record<string, unknown>) {
  const res = await c.callTool({ name, arguments: args });
  return { isError: !!res.isError, body: res.structuredContent as any };
}

async function settled(c: Client, id: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    const { body } = await call(c, 'get_social_publication', { id });
    if (!body.results.some((r: { status: string }) => r.status === 'queued' || r.status === 'publishing')) return body;
    if (Date.now() > until) throw new Error(`publication ${id} still not settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A completed slideshow whose slides are these images (the way several images are published as one post). */
async function completedSlideshow(a: TestApp, orgId: string, slides: string[]) {
  const project = await createEditorVideo(a.service.ctx, orgId, { title: 'Looks', aspect_ratio: '4:5', fps: 30 } as never);
  const [row] = await a.service.ctx.db
    .insert(slideshows)
    .values({
      orgId,
      videoId: project.id,
      status: 'completed',
      title: 'Looks',
      slideCount: slides.length,
      aspectRatio: '4:5',
      spec: {},
      credits: 0,
      videoMediaId: slides[0],
    })
    .returning();
  await a.service.ctx.db.insert(slideshowSlides).values(slides.map((mediaId, index) => ({ slideshowId: row.id, index, mediaId })));
  return row.id;
}

const postOf = (id: string) => META.state.posts.get(id)!;

t.test(
  'a vertical video as an Instagram reel, a Facebook Page video and a Threads video: fetched from our URL, processed, published once',
  async (t) => {
    const ig = await account(app, ws.orgId, 'instagram');
    const fb = await account(app, ws.orgId, 'facebook');
    const th = await account(app, ws.orgId, 'threads');
    const bytes = 700_000;
    const video = await stored(app, ws.orgId, { kind: 'video', contentType: 'video/mp4', bytes, width: 720, height: 1280, duration: 12 });
    const listed = await call(writer, 'list_social_accounts', {});
    t.match(
      listed.body.data.find((a: { id: string }) => a.id === th.id),
      { platform: 'threads', status: 'connected', capabilities: { image: true, video: true, carousel: true, text: true } },
    );

    const started = await call(writer, 'publish_media_to_social', {
      account_ids: [ig.id, fb.id, th.id],
      media_id: video,
      caption: 'New drop 👟',
      platform_options: { instagram: { post_type: 'reel' } },
    });
    t.notOk(started.isError, JSON.stringify(started.body));
    const done = await settled(writer, started.body.id);
    t.equal(done.status, 'published', JSON.stringify(done));
    const [igr, fbr, thr] = done.results;

    const igPost = postOf(igr.post_id);
    t.match(igPost, { platform: 'instagram', owner: ig.accountId });
    const igc = META.state.containers.get(igPost.container!)!;
    t.match(igc.fields, {
      media_type: 'REELS',
      caption: 'New drop 👟',
      share_to_feed: 'false',
      video_url: new RegExp(`^${app.url}/media/`),
    });
    t.match(igc.fetched, { bytes, contentType: 'video/mp4' }, 'Instagram fetched the whole video from the signed URL');
    t.ok(igc.checks >= 2, 'status_code polled until FINISHED');
    t.equal(igr.post_url, `https://www.instagram.com/p/C${igr.post_id.slice(-8)}/`);

    t.match(postOf(fbr.post_id), {
      platform: 'facebook',
      owner: fb.accountId,
      fields: { description: 'New drop 👟', bytes: String(bytes) },
    });
    t.equal(fbr.post_url, `https://www.facebook.com/${fb.accountId}/videos/${fbr.post_id}/`, 'the relative permalink_url made absolute');

    const thc = META.state.containers.get(postOf(thr.post_id).container!)!;
    t.match(thc, {
      platform: 'threads',
      user: th.accountId,
      fields: { media_type: 'VIDEO', text: 'New drop 👟' },
      fetched: { bytes },
      status: 'PUBLISHED',
    });
    t.ok(thc.checks >= 2);
    t.match(thr, { platform: 'threads', status: 'published', post_url: /^https:\/\/www\.threads\.net\/@brand\/post\/T/ });
    t.equal(
      [...META.state.posts.values()].filter(
        (p) => p.fields.caption === 'New drop 👟' || p.fields.text === 'New drop 👟' || p.fields.description === 'New drop 👟',
      ).length,
      3,
      'one post per platform',
    );
  },
);

t.test(
  'two images: carousels on Instagram and Threads, a multi-photo Facebook post; each rate limited once (HTTP 400, code 4/32/613), then published once',
  async (t) => {
    const ig = await account(app, ws.orgId, 'instagram');
    const fb = await account(app, ws.orgId, 'facebook');
    const th = await account(app, ws.orgId, 'threads');
    const a = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 40_000, width: 1080, height: 1350 });
    const b = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 50_000, width: 1080, height: 1080 });
    const slideshow = await completedSlideshow(app, ws.orgId, [a, b]);
    META.state.rateLimitPublishes = 3;
    const attempts = META.state.publishAttempts;
    const started = await call(writer, 'publish_media_to_social', {
      account_ids: [ig.id, fb.id, th.id],
      slideshow_id: slideshow,
      caption: 'two looks',
    });
    t.notOk(started.isError, JSON.stringify(started.body));
    const done = await settled(writer, started.body.id);
    t.equal(done.status, 'published', JSON.stringify(done));
    t.equal(META.state.publishAttempts - attempts, 6, 'each publish refused once, then made');
    // Meta's own clock: on each node the retry came at least a second (the shortest wait) after the refusal.
    const byNode = Map.groupBy(META.state.publishAt.slice(attempts), (p) => p.node);
    t.equal(byNode.size, 3, 'three nodes published on');
    for (const [node, [refused, made]] of byNode)
      t.ok(made.at - refused.at >= 1000, `${node}: retried ${made.at - refused.at} ms after the rate limit`);
    const [igr, fbr, thr] = done.results;
    const igc = META.state.containers.get(postOf(igr.post_id).container!)!;
    t.match(igc.fields, { media_type: 'CAROUSEL', caption: 'two looks' });
    const kids = igc.fields.children.split(',').map((id) => META.state.containers.get(id)!);
    t.same(
      kids.map((k) => [k.fields.is_carousel_item, k.fetched?.bytes]),
      [
        ['true', 40_000],
        ['true', 50_000],
      ],
      'one carousel item per image, in order',
    );
    const fbPost = postOf(fbr.post_id);
    t.same(
      fbPost.photos!.map((p) => META.state.photos.get(p)!.bytes),
      [40_000, 50_000],
    );
    t.equal(fbPost.fields.message, 'two looks');
    t.equal(fbr.post_url, `https://www.facebook.com/${fb.accountId}/posts/${fbr.post_id.split('_')[1]}`);
    const thc = META.state.containers.get(postOf(thr.post_id).container!)!;
    t.match(thc.fields, { media_type: 'CAROUSEL', text: 'two looks' });
    t.equal(thc.fields.children.split(',').length, 2);
  },
);

t.test(
  'a caption alone is a text post on Facebook (/feed message) and Threads (a TEXT container); Instagram takes no text-only post',
  async (t) => {
    const fb = await account(app, ws.orgId, 'facebook');
    const th = await account(app, ws.orgId, 'threads');
    const ig = await account(app, ws.orgId, 'instagram');
    const refused = await call(writer, 'publish_media_to_social', { account_ids: [fb.id, ig.id], caption: 'just words' });
    t.match(refused.body, {
      error: { code: 'bad_request', message: /instagram does not take text-only posts/, context: { account_id: ig.id } },
    });
    const none = await call(writer, 'publish_media_to_social', { account_ids: [fb.id] });
    t.match(none.body, { error: { code: 'bad_request', message: /exactly one of/ } });
    const started = await call(writer, 'publish_media_to_social', { account_ids: [fb.id, th.id], caption: 'just words' });
    t.notOk(started.isError, JSON.stringify(started.body));
    const done = await settled(writer, started.body.id);
    t.equal(done.status, 'published', JSON.stringify(done));
    t.match(postOf(done.results[0].post_id), { platform: 'facebook', owner: fb.accountId, fields: { message: 'just words' }, photos: [] });
    t.match(META.state.containers.get(postOf(done.results[1].post_id).container!), {
      fields: { media_type: 'TEXT', text: 'just words' },
      fetched: null,
    });
  },
);

t.test(
  'a token expired mid-job (Graph code 190) is refreshed once: ig_refresh_token for Instagram, th_refresh_token for Threads; a Page token read again for Facebook',
  async (t) => {
    const cipher = tokenCipher(await loadTokenKey(app.service.ctx.config));
    const image = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 30_000, width: 1080, height: 1080 });
    for (const platform of ['instagram', 'threads'] as const) {
      const acc = await account(app, ws.orgId, platform);
      const before = META.state.refreshes;
      META.state.expireTokenAfterContainer = true; // revoked as soon as the container exists
      const started = await call(writer, 'publish_media_to_social', {
        account_ids: [acc.id],
        media_id: image,
        caption: `refresh ${platform}`,
      });
      const done = await settled(writer, started.body.id);
      t.equal(done.status, 'published', JSON.stringify(done));
      t.equal(META.state.refreshes - before, 1, `${platform}: refreshed exactly once`);
      t.equal(postOf(done.results[0].post_id).owner, acc.accountId);
      t.equal(
        [...META.state.containers.values()].filter((c) => c.user === acc.accountId).length,
        1,
        `${platform}: the container made before the refresh was published`,
      );
      const [row] = await app.service.ctx.sql<
        { access_token_enc: string; status: string }[]
      >`select access_token_enc, status from social_accounts where id = ${acc.id}`;
      const stored = cipher.decrypt(row.access_token_enc);
      t.not(stored, acc.tok.access, 'the new token is stored');
      t.ok(META.state.tokens.has(stored) && row.status === 'connected');
    }
    // Facebook: the Page token is refused; the stored long-lived user token is exchanged (fb_exchange_token)
    // and the Page's token read with it; the post is made with that Page token, not the user token.
    const fb = await account(app, ws.orgId, 'facebook');
    META.state.tokens.delete(fb.tok.access);
    const before = META.state.refreshes;
    const fbStarted = await call(writer, 'publish_media_to_social', { account_ids: [fb.id], caption: 'refresh facebook' });
    const fbDone = await settled(writer, fbStarted.body.id);
    t.equal(fbDone.status, 'published', JSON.stringify(fbDone));
    t.equal(META.state.refreshes - before, 1, 'facebook: refreshed exactly once');
    t.match(postOf(fbDone.results[0].post_id), { platform: 'facebook', owner: fb.accountId, fields: { message: 'refresh facebook' } });
    const [fbRow] = await app.service.ctx.sql<
      { access_token_enc: string; refresh_token_enc: string }[]
    >`select access_token_enc, refresh_token_enc from social_accounts where id = ${fb.id}`;
    t.match(cipher.decrypt(fbRow.access_token_enc), /^EAAGpage-/, 'a Page token is stored');
    t.ok(META.state.userTokens.has(cipher.decrypt(fbRow.refresh_token_enc)), 'and the new long-lived user token as the refresh token');
    // A long-lived token that expired too: the refresh is refused, the connection needs reauthorization.
    for (const platform of ['threads', 'instagram'] as const) {
      const gone = await account(app, ws.orgId, platform);
      META.state.tokens.delete(gone.tok.access);
      META.state.longLived.delete(gone.tok.refresh);
      const started = await call(writer, 'publish_media_to_social', { account_ids: [gone.id], media_id: image });
      const done = await settled(writer, started.body.id);
      t.match(done.results[0], { status: 'failed', error: { code: 'reauthorization_required', message: /Session has expired/ } }, platform);
      const [row] = await app.service.ctx.sql<{ status: string }[]>`select status from social_accounts where id = ${gone.id}`;
      t.equal(row.status, 'needs_reauth', `${platform}: needs reauthorization`);
    }
  },
);

t.test(
  'a video the platform cannot process fails with its error; the platforms’ limits are checked before anything is queued',
  async (t) => {
    const th = await account(app, ws.orgId, 'threads');
    const ig = await account(app, ws.orgId, 'instagram');
    const fb = await account(app, ws.orgId, 'facebook');
    const video = await stored(app, ws.orgId, {
      kind: 'video',
      contentType: 'video/mp4',
      bytes: 100_000,
      width: 1080,
      height: 1920,
      duration: 5,
    });
    META.state.failNextVideo = 'FAILED_PROCESSING_VIDEO';
    const started = await call(writer, 'publish_media_to_social', { account_ids: [th.id], media_id: video });
    const done = await settled(writer, started.body.id);
    t.match(done.results[0], {
      status: 'failed',
      post_id: null,
      error: { code: 'platform_error', message: /threads could not process the media: FAILED_PROCESSING_VIDEO/, retryable: false },
    });

    const [{ before }] = await app.service.ctx.sql<{ before: number }[]>`select count(*)::int as before from social_publications`;
    const png = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/png', bytes: 1000, width: 1080, height: 1080 });
    const wide = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 1000, width: 2000, height: 1000 });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ account_ids: [ig.id], media_id: png }, /image\/png images are not accepted by instagram \(accepted: image\/jpeg\)/],
      [{ account_ids: [ig.id], media_id: wide }, /the image's aspect ratio is 2:1; instagram takes 1:1.25 to 1.91:1/],
      [{ account_ids: [ig.id], media_id: video, caption: 'x'.repeat(2201) }, /2201 characters; instagram allows at most 2200/],
      [{ account_ids: [th.id], media_id: video, caption: 'x'.repeat(501) }, /501 characters; threads allows at most 500/],
      [
        {
          account_ids: [ig.id],
          media_id: await stored(app, ws.orgId, {
            kind: 'video',
            contentType: 'video/mp4',
            bytes: 1000,
            width: 1080,
            height: 1920,
            duration: 90,
          }),
          platform_options: { instagram: { post_type: 'story' } },
        },
        /the video lasts 90 s; an Instagram story takes 3–60 s/,
      ],
      [
        { account_ids: [fb.id], media_id: video, platform_options: { facebook: { post_type: 'reel' } } },
        /facebook publishing supports post_type feed only/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await call(writer, 'publish_media_to_social', args);
      t.match(r.body, { error: { code: 'bad_request', message } }, String(message));
    }
    const reelOfImage = await call(writer, 'publish_media_to_social', {
      account_ids: [ig.id],
      media_id: await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 1000, width: 1080, height: 1080 }),
      platform_options: { instagram: { post_type: 'reel' } },
    });
    t.match(reelOfImage.body, {
      error: { code: 'bad_request', message: /an Instagram reel is one video/, context: { account_id: ig.id, platform: 'instagram' } },
    });
    const [{ after }] = await app.service.ctx.sql<{ after: number }[]>`select count(*)::int as after from social_publications`;
    t.equal(after, before, 'nothing was queued');
  },
);

t.test(
  'a crash between the Instagram container and media_publish resumes from the stored container: one container, one post',
  async (t) => {
    // This node's workers stop taking publish jobs: the test runs the job's deliveries itself, the
    // first one cut while its media_publish hangs (as a killed worker's would be), the second a fresh
    // delivery. (Its queued jobs, taken once the workers are back, find the targets published.)
    const boss = app.service.boss!;
    await boss.offWork(socialPublishJob.name, { wait: true });
    t.teardown(() => socialPublishJob.start(boss, app.service.ctx));
    const bws = await app.workspace({ scopes: ['social:write'] });
    const c = await connect(app, bws.key);
    t.teardown(() => c.close());
    const ig = await account(app, bws.orgId, 'instagram');
    const video = await stored(app, bws.orgId, {
      kind: 'video',
      contentType: 'video/mp4',
      bytes: 200_000,
      width: 1080,
      height: 1920,
      duration: 20,
    });
    const started = await call(c, 'publish_media_to_social', { account_ids: [ig.id], media_id: video, caption: 'exactly once' });
    t.notOk(started.isError, JSON.stringify(started.body));
    const [{ id: targetId }] = await app.service.ctx.sql<
      { id: string }[]
    >`select id from social_publication_targets where publication_id = ${started.body.id}`;
    const attempts = META.state.publishAttempts;
    META.state.hangNextPublish = true;
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
    for (let i = 0; i < 400 && META.state.publishAttempts === attempts; i++) await new Promise((r) => setTimeout(r, 50));
    t.equal(META.state.publishAttempts, attempts + 1, 'the first delivery reached media_publish');
    crash.abort(new Error('worker killed'));
    await first.catch(() => {});
    const [mid] = await app.service.ctx.sql<
      { status: string; state: any }[]
    >`select status, state from social_publication_targets where id = ${targetId}`;
    t.equal(mid.status, 'publishing');
    t.match(mid.state, { container: /^\d+$/ }, 'the container id was stored before publishing');
    t.notOk(mid.state.post_id);

    await delivery(new AbortController().signal);
    const done = (await call(c, 'get_social_publication', { id: started.body.id })).body;
    t.equal(done.status, 'published', JSON.stringify(done));
    const mine = [...META.state.containers.values()].filter((x) => x.user === ig.accountId);
    t.equal(mine.length, 1, 'one container');
    t.equal(mine[0].id, mid.state.container);
    const posts = [...META.state.posts.entries()].filter(([, p]) => p.owner === ig.accountId);
    t.equal(posts.length, 1, 'one post');
    t.equal(done.results[0].post_id, posts[0][0]);
    // A third delivery (pg-boss redelivering) changes nothing.
    await delivery(new AbortController().signal);
    t.equal([...META.state.posts.values()].filter((p) => p.owner === ig.accountId).length, 1);

    // Published but the answer lost (the worker killed while reading it): the resumed attempt finds
    // the container PUBLISHED and does not publish again.
    const th = await account(app, bws.orgId, 'threads');
    const s2 = await call(c, 'publish_media_to_social', { account_ids: [th.id], caption: 'answer lost' });
    const [{ id: t2 }] = await app.service.ctx.sql<
      { id: string }[]
    >`select id from social_publication_targets where publication_id = ${s2.body.id}`;
    META.state.loseNextPublishAnswer = true;
    const before = META.state.publishAttempts;
    const cut = new AbortController();
    const lost = socialPublishJob.handle(app.service.ctx, {
      id: randomUUID(),
      data: { targetId: t2, $version: 1 },
      retryCount: 0,
      retryLimit: 5,
      signal: cut.signal,
    } as never);
    for (let i = 0; i < 400 && META.state.publishAttempts === before; i++) await new Promise((r) => setTimeout(r, 50));
    cut.abort(new Error('worker killed'));
    await lost.catch(() => {});
    await socialPublishJob.handle(app.service.ctx, {
      id: randomUUID(),
      data: { targetId: t2, $version: 1 },
      retryCount: 0,
      retryLimit: 5,
      signal: new AbortController().signal,
    } as never);
    const d2 = (await call(c, 'get_social_publication', { id: s2.body.id })).body;
    t.equal(d2.status, 'published', JSON.stringify(d2));
    t.equal(META.state.publishAttempts - before, 1, 'threads_publish called once');
    t.equal([...META.state.posts.values()].filter((p) => p.owner === th.accountId).length, 1, 'one post');
  },
);

t.test(
  'an Instagram account connected through the connect flow (Instagram Login) publishes with the stored connection, its 60-day token refreshed before expiry',
  async (t) => {
    const cws = await app.workspace({ scopes: ['social:write'] });
    const m = await member(app, cws.orgId, 'iggy@example.test', 'a long enough password');
    const b = new Browser(app.url);
    let r = await b.fetch('/social/connections');
    r = await b.post('/social/connections', {
      action: 'sign-in',
      csrf: hiddenField(await r.text(), 'csrf')!,
      email: m.email,
      password: m.password,
    });
    t.equal(r.status, 303, 'signed in');
    r = await b.fetch('/social/connect/instagram');
    t.equal(r.status, 303);
    const to = new URL(r.headers.get('location')!);
    t.equal(`${to.origin}${to.pathname}`, `${META.igUrl}/oauth/authorize`, 'www.instagram.com re-based by SOCIAL_API_BASE_INSTAGRAM');
    t.match(Object.fromEntries(to.searchParams), {
      client_id: 'ig-app',
      response_type: 'code',
      scope: 'instagram_business_basic,instagram_business_content_publish',
      redirect_uri: `${app.url}/social/callback/instagram`,
    });
    // The member allows access on Instagram, which sends the browser back with a code.
    const igUser = META.nextId();
    META.state.igUsers.add(igUser);
    const code = META.igCode(igUser, 'connectedgram', to.searchParams.get('redirect_uri')!);
    r = await b.fetch(`/social/callback/instagram?code=${code}&state=${to.searchParams.get('state')}`);
    t.equal(r.status, 303, r.status === 303 ? 'connected' : await r.text());
    t.equal(r.headers.get('location'), '/social/connections?connected=instagram');
    t.ok(
      META.state.seen.includes('instagram POST /oauth/access_token') &&
        META.state.seen.includes('instagram GET /access_token') &&
        META.state.seen.includes('instagram GET /v23.0/me'),
      'code exchange, 60-day token and /me on the Instagram hosts',
    );

    const cipher = tokenCipher(await loadTokenKey(app.service.ctx.config));
    const [row] = await app.service.ctx.sql<
      { id: string; platform_account_id: string; handle: string; access_token_enc: string; refresh_token_enc: string | null }[]
    >`
    select id, platform_account_id, handle, access_token_enc, refresh_token_enc from social_accounts where org_id = ${cws.orgId}`;
    t.match(row, { platform_account_id: igUser, handle: 'connectedgram' });
    const long = cipher.decrypt(row.access_token_enc);
    t.match(long, /^IGAA-/, 'the 60-day Instagram User token');
    t.equal(row.refresh_token_enc && cipher.decrypt(row.refresh_token_enc), long, 'stored as its own refresh token');

    // About to expire: the job refreshes it first (ig_refresh_token with the stored token), then publishes on graph.instagram.com.
    await app.service.ctx.sql`update social_accounts set expires_at = now() + interval '30 seconds' where id = ${row.id}`;
    const refreshes = META.state.refreshes;
    const image = await stored(app, cws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 20_000, width: 1080, height: 1080 });
    const c = await connect(app, cws.key);
    t.teardown(() => c.close());
    const started = await call(c, 'publish_media_to_social', {
      account_ids: [row.id],
      media_id: image,
      caption: 'connected through the flow',
    });
    t.notOk(started.isError, JSON.stringify(started.body));
    const done = await settled(c, started.body.id);
    t.equal(done.status, 'published', JSON.stringify(done));
    t.equal(META.state.refreshes - refreshes, 1, 'refreshed once before expiry');
    const post = postOf(done.results[0].post_id);
    t.match(post, { platform: 'instagram', owner: igUser });
    t.match(META.state.containers.get(post.container!), {
      user: igUser,
      fields: { caption: 'connected through the flow' },
      fetched: { bytes: 20_000, contentType: 'image/jpeg' },
    });
    t.equal(done.results[0].post_url, `https://www.instagram.com/p/C${done.results[0].post_id.slice(-8)}/`);
    const [after] = await app.service.ctx.sql<{ access_token_enc: string; refresh_token_enc: string; expires_at: Date; status: string }[]>`
    select access_token_enc, refresh_token_enc, expires_at, status from social_accounts where id = ${row.id}`;
    const fresh = cipher.decrypt(after.access_token_enc);
    t.not(fresh, long, 'the refreshed token is stored');
    t.equal(cipher.decrypt(after.refresh_token_enc), fresh, 'and is the next refresh token');
    t.ok(new Date(after.expires_at).getTime() - Date.now() > 59 * 86400_000 && after.status === 'connected', '60 more days');
    t.notOk(
      META.state.seen.some((s) => s.startsWith('facebook ') && /\/(media|media_publish)$/.test(s)),
      'nothing Instagram went to graph.facebook.com',
    );
  },
);
