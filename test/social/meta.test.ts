// Instagram, Facebook Pages and Threads end to end through the worker against a local fake of
// Meta's Graph APIs (test/social/meta-fakes.ts), which fetches the media from our signed URLs:
// containers polled until FINISHED and published once, with the platforms' post ids and
// permalinks; a rate limit (Graph code 4/32/613) then success; a token expired mid-job (code 190)
// refreshed once; a container that fails processing; a crash between container and publish resumed
// from the stored container id; and the platforms' limits checked before anything is queued.
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { media, slideshows, slideshowSlides } from '../../src/db/schema/index.ts';
import { socialPublishJob } from '../../src/jobs/social-publish-job.ts';
import { createEditorVideo } from '../../src/services/editor/projects.ts';
import { connectAccount, type SocialPlatform } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import type { TestApp } from '../helpers/app.ts';
import { connect, startMcpApp } from '../mcp/helpers.ts';
import { fakeMeta } from './meta-fakes.ts';

const META = await fakeMeta(t);
const env = {
  SOCIAL_API_BASE_INSTAGRAM: META.url,
  SOCIAL_API_BASE_FACEBOOK: META.url,
  SOCIAL_API_BASE_THREADS: META.url,
  SOCIAL_INSTAGRAM_CLIENT_ID: 'meta-app',
  SOCIAL_INSTAGRAM_CLIENT_SECRET: 'meta-secret',
  SOCIAL_FACEBOOK_CLIENT_ID: 'meta-app',
  SOCIAL_FACEBOOK_CLIENT_SECRET: 'meta-secret',
};
const app = await startMcpApp(t, env, { workers: true });
const ws = await app.workspace({ scopes: ['social:write'] });
const writer = await connect(app, ws.key);
t.teardown(() => writer.close());

/** A stored media row: the bytes are what the platform fetches from our signed URL; the facts are what validation reads. */
async function stored(a: TestApp, orgId: string, o: { kind: 'image' | 'video'; contentType: string; bytes: number; width: number; height: number; duration?: number }) {
  const id = randomUUID();
  const key = `editor-media/${orgId}/${id}.${o.kind === 'image' ? 'jpg' : 'mp4'}`;
  await a.service.ctx.storage.put(key, Buffer.alloc(o.bytes, id.charCodeAt(0)), o.contentType);
  await a.service.ctx.db.insert(media).values({
    id, orgId, kind: o.kind, status: 'completed', source: 'upload', contentType: o.contentType, sizeBytes: o.bytes, storageKey: key,
    width: o.width, height: o.height, durationSeconds: o.kind === 'video' ? (o.duration ?? 8) : null, hasAudio: o.kind === 'video' ? true : null,
  });
  return id;
}

/** A connected account whose platform id the fake knows (IG user, Page or Threads user). */
async function account(a: TestApp, orgId: string, platform: SocialPlatform, tok = META.grant()) {
  const accountId = META.nextId();
  (platform === 'instagram' ? META.state.igUsers : platform === 'facebook' ? META.state.pages : META.state.threadsUsers).add(accountId);
  const cipher = tokenCipher(await loadTokenKey(a.service.ctx.config));
  const row = await connectAccount(a.service.ctx.db, cipher, { orgId, platform, handle: `${platform}brand`, accessToken: tok.access, refreshToken: tok.refresh, platformAccountId: accountId, expiresInSeconds: 5_000_000 });
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
    .values({ orgId, videoId: project.id, status: 'completed', title: 'Looks', slideCount: slides.length, aspectRatio: '4:5', spec: {}, credits: 0, videoMediaId: slides[0] })
    .returning();
  await a.service.ctx.db.insert(slideshowSlides).values(slides.map((mediaId, index) => ({ slideshowId: row.id, index, mediaId })));
  return row.id;
}

const postOf = (id: string) => META.state.posts.get(id)!;

t.test('a vertical video as an Instagram reel, a Facebook Page video and a Threads video: fetched from our URL, processed, published once', async (t) => {
  const ig = await account(app, ws.orgId, 'instagram');
  const fb = await account(app, ws.orgId, 'facebook');
  const th = await account(app, ws.orgId, 'threads');
  const bytes = 700_000;
  const video = await stored(app, ws.orgId, { kind: 'video', contentType: 'video/mp4', bytes, width: 720, height: 1280, duration: 12 });
  const listed = await call(writer, 'list_social_accounts', {});
  t.match(listed.body.data.find((a: { id: string }) => a.id === th.id), { platform: 'threads', status: 'connected', capabilities: { image: true, video: true, carousel: true, text: true } });

  const started = await call(writer, 'publish_media_to_social', { account_ids: [ig.id, fb.id, th.id], media_id: video, caption: 'New drop 👟', platform_options: { instagram: { post_type: 'reel' } } });
  t.notOk(started.isError, JSON.stringify(started.body));
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  const [igr, fbr, thr] = done.results;

  const igPost = postOf(igr.post_id);
  t.match(igPost, { platform: 'instagram', owner: ig.accountId });
  const igc = META.state.containers.get(igPost.container!)!;
  t.match(igc.fields, { media_type: 'REELS', caption: 'New drop 👟', share_to_feed: 'false', video_url: new RegExp(`^${app.url}/media/`) });
  t.match(igc.fetched, { bytes, contentType: 'video/mp4' }, 'Instagram fetched the whole video from the signed URL');
  t.ok(igc.checks >= 2, 'status_code polled until FINISHED');
  t.equal(igr.post_url, `https://www.instagram.com/p/C${igr.post_id.slice(-8)}/`);

  t.match(postOf(fbr.post_id), { platform: 'facebook', owner: fb.accountId, fields: { description: 'New drop 👟', bytes: String(bytes) } });
  t.equal(fbr.post_url, `https://www.facebook.com/${fb.accountId}/videos/${fbr.post_id}/`, 'the relative permalink_url made absolute');

  const thc = META.state.containers.get(postOf(thr.post_id).container!)!;
  t.match(thc, { platform: 'threads', user: th.accountId, fields: { media_type: 'VIDEO', text: 'New drop 👟' }, fetched: { bytes }, status: 'PUBLISHED' });
  t.ok(thc.checks >= 2);
  t.match(thr, { platform: 'threads', status: 'published', post_url: /^https:\/\/www\.threads\.net\/@brand\/post\/T/ });
  t.equal([...META.state.posts.values()].filter((p) => p.fields.caption === 'New drop 👟' || p.fields.text === 'New drop 👟' || p.fields.description === 'New drop 👟').length, 3, 'one post per platform');
});

t.test('two images: carousels on Instagram and Threads, a multi-photo Facebook post; each rate limited once (HTTP 400, code 4/32/613), then published once', async (t) => {
  const ig = await account(app, ws.orgId, 'instagram');
  const fb = await account(app, ws.orgId, 'facebook');
  const th = await account(app, ws.orgId, 'threads');
  const a = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 40_000, width: 1080, height: 1350 });
  const b = await stored(app, ws.orgId, { kind: 'image', contentType: 'image/jpeg', bytes: 50_000, width: 1080, height: 1080 });
  const slideshow = await completedSlideshow(app, ws.orgId, [a, b]);
  META.state.rateLimitPublishes = 3;
  const attempts = META.state.publishAttempts;
  const t0 = Date.now();
  const started = await call(writer, 'publish_media_to_social', { account_ids: [ig.id, fb.id, th.id], slideshow_id: slideshow, caption: 'two looks' });
  t.notOk(started.isError, JSON.stringify(started.body));
  const done = await settled(writer, started.body.id);
  t.equal(done.status, 'published', JSON.stringify(done));
  t.ok(Date.now() - t0 >= 1000, 'waited as the usage header said');
  t.equal(META.state.publishAttempts - attempts, 6, 'each publish refused once, then made');
  const [igr, fbr, thr] = done.results;
  const igc = META.state.containers.get(postOf(igr.post_id).container!)!;
  t.match(igc.fields, { media_type: 'CAROUSEL', caption: 'two looks' });
  const kids = igc.fields.children.split(',').map((id) => META.state.containers.get(id)!);
  t.same(kids.map((k) => [k.fields.is_carousel_item, k.fetched?.bytes]), [['true', 40_000], ['true', 50_000]], 'one carousel item per image, in order');
  const fbPost = postOf(fbr.post_id);
  t.same(fbPost.photos!.map((p) => META.state.photos.get(p)!.bytes), [40_000, 50_000]);
  t.equal(fbPost.fields.message, 'two looks');
  t.equal(fbr.post_url, `https://www.facebook.com/${fb.accountId}/posts/${fbr.post_id.split('_')[1]}`);
  const thc = META.state.containers.get(postOf(thr.post_id).container!)!;
  t.match(thc.fields, { media_type: 'CAROUSEL', text: 'two looks' });
  t.equal(thc.fields.children.split(',').length, 2);
});
