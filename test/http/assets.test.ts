// GET /assets: the caller's workspace only, plus the built-in sets.
import t from 'tap';
import { brandKits, customAvatars, customVoices } from '../../src/db/schema/index.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t);
const db = app.service.ctx.db;

const a = await app.workspace({ scopes: ['generations:read'] });
const b = await app.workspace();

const [kitA] = await db
  .insert(brandKits)
  .values({
    orgId: a.orgId,
    brandId: 7,
    kitName: 'Acme Primary',
    kitData: { colors: ['#FF5500', '#111111'], fonts: ['Inter'] },
    trainingStatus: 'ready',
  })
  .returning();
await db.insert(brandKits).values({ orgId: b.orgId, brandId: 8, kitName: 'Other Co', kitData: {} });
const [avatarA] = await db
  .insert(customAvatars)
  .values({ orgId: a.orgId, name: 'Founder', imageUrl: 'https://cdn.example.test/a.png', videoUrl: 'https://cdn.example.test/a.mp4' })
  .returning();
await db
  .insert(customAvatars)
  .values({ orgId: b.orgId, name: 'Not yours', imageUrl: 'https://cdn.example.test/b.png', videoUrl: 'https://cdn.example.test/b.mp4' });
const voice = {
  previewUrl: 'https://cdn.example.test/v.mp3',
  locale: ['en-US'],
  gender: 'female',
  age: 'young',
  styleTags: ['warm'],
  credits916: 5,
  credits169: 6,
  recommendationSummary: 'A clone',
};
const [readyVoice] = await db
  .insert(customVoices)
  .values({ ...voice, orgId: a.orgId, name: 'My clone', status: 'ready' })
  .returning();
await db.insert(customVoices).values({ ...voice, orgId: a.orgId, name: 'Still training', status: 'processing' });
await db.insert(customVoices).values({ ...voice, orgId: b.orgId, name: 'Theirs', status: 'ready' });

t.test('the workspace sees its own assets and the built-in sets, nobody else’s', async (t) => {
  const res = await app.request('GET', '/api/v1/assets', { key: a.key });
  t.equal(res.status, 200);
  const body = res.body;
  t.equal(body.object, 'workspace_assets');
  t.same(
    body.brand_kits.map((k: { id: number }) => k.id),
    [kitA.id],
  );
  t.match(body.brand_kits[0], {
    brand_id: 7,
    kit_name: 'Acme Primary',
    kit_data: { colors: ['#FF5500', '#111111'] },
    training_status: 'ready',
  });

  const custom = body.avatars.filter((x: { isCustom: boolean }) => x.isCustom);
  t.same(
    custom.map((x: { id: string }) => x.id),
    [avatarA.id],
  );
  t.ok(body.avatars.filter((x: { isCustom: boolean }) => !x.isCustom).length >= 4, 'public avatars included');

  const clones = body.voices.filter((v: { source: string }) => v.source === 'custom_clone');
  t.same(
    clones.map((v: { id: string }) => v.id),
    [readyVoice.id],
    'only ready clones of this workspace',
  );
  const builtIn = body.voices.filter((v: { source: string }) => v.source === 'built_in');
  t.ok(builtIn.length >= 8, 'built-in voices');
  for (const v of builtIn) {
    t.ok(v.locale.length > 0 && v.style_tags.length > 0, `${v.id} has locale and style tags`);
    t.ok(Number.isInteger(v.credits_9_16) && Number.isInteger(v.credits_16_9), `${v.id} has credits per aspect ratio`);
  }

  const targets = body.reference_template_targets;
  t.ok(targets.some((x: { template_category: string }) => x.template_category === 'static-ads'));
  t.ok(targets.some((x: { template_category: string }) => x.template_category === 'video-templates'));
  t.ok(targets.some((x: { template_category: string }) => x.template_category === 'slideshow-carousel'));
  const models = await app.request('GET', '/api/v1/models');
  const slugs = new Set([...models.body.static_ads, ...models.body.video_ads, ...models.body.ugc_ads].map((x: { slug: string }) => x.slug));
  for (const s of slugs)
    t.ok(
      targets.some((x: { template_slug: string }) => x.template_slug === s),
      `target for ${s}`,
    );
});

t.test('another workspace gets its own view', async (t) => {
  const res = await app.request('GET', '/api/v1/assets', { key: b.key });
  t.same(
    res.body.brand_kits.map((k: { kit_name: string }) => k.kit_name),
    ['Other Co'],
  );
  t.same(
    res.body.avatars.filter((x: { isCustom: boolean }) => x.isCustom).map((x: { name: string }) => x.name),
    ['Not yours'],
  );
  t.same(
    res.body.voices.filter((v: { source: string }) => v.source === 'custom_clone').map((v: { name: string }) => v.name),
    ['Theirs'],
  );
});
