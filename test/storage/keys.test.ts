// src/storage/keys.ts: every key layout, byte for byte as the service has always written it
// (objects stored before must still be found), read back by parseKey into the same parts, and
// every key a valid storage key.
import t from 'tap';
import { assertKey } from '../../src/storage/core.ts';
import {
  brandKitLogoKey,
  catalogSampleKey,
  customAvatarKey,
  customVoiceSampleKey,
  editorExportKey,
  editorMediaKey,
  facelessMusicKey,
  facelessSceneKey,
  facelessVideoKey,
  facelessVoiceoverKey,
  generationModelOutputKey,
  generationOutputKey,
  keyFilename,
  keyWorkspace,
  parseKey,
  slideshowSlideKey,
  slideshowVideoKey,
  soundEffectKey,
  WORKSPACE_KEY_PREFIXES,
  type ParsedKey,
} from '../../src/storage/keys.ts';

const org = '3f0c8a52-9d1e-4b7a-8c36-1e2f3a4b5c6d';
const id = '7b6a5c4d-3e2f-4a1b-9c8d-0e1f2a3b4c5d';

// Each layout: the key it makes, the key as literal text (the layout of stored objects), and what parseKey reads back.
const cases: { name: string; key: string; want: string; parsed: ParsedKey }[] = [
  {
    name: 'generation output',
    key: generationOutputKey(org, id, 'png'),
    want: `generations/${org}/${id}.png`,
    parsed: { layout: 'generationOutput', parts: { orgId: org, generationId: id, ext: 'png' } },
  },
  {
    name: "a template generation's model output, before compositing",
    key: generationModelOutputKey(org, id, 'mp4'),
    want: `generations/${org}/model-outputs/${id}.mp4`,
    parsed: { layout: 'generationModelOutput', parts: { orgId: org, generationId: id, ext: 'mp4' } },
  },
  {
    name: 'faceless scene (numbered from 1)',
    key: facelessSceneKey(org, 42, 0),
    want: `faceless/${org}/42/scene-1.jpg`,
    parsed: { layout: 'facelessScene', parts: { orgId: org, videoId: '42', scene: '1' } },
  },
  {
    name: 'faceless voiceover',
    key: facelessVoiceoverKey(org, 42),
    want: `faceless/${org}/42/voiceover.wav`,
    parsed: { layout: 'facelessVoiceover', parts: { orgId: org, videoId: '42' } },
  },
  {
    name: 'faceless music',
    key: facelessMusicKey(org, 42),
    want: `faceless/${org}/42/music.wav`,
    parsed: { layout: 'facelessMusic', parts: { orgId: org, videoId: '42' } },
  },
  {
    name: 'faceless video',
    key: facelessVideoKey(org, 42),
    want: `faceless/${org}/42/video.mp4`,
    parsed: { layout: 'facelessVideo', parts: { orgId: org, videoId: '42' } },
  },
  {
    name: 'slideshow slide (numbered from 0)',
    key: slideshowSlideKey(org, id, 0),
    want: `slideshows/${org}/${id}/slide-0.png`,
    parsed: { layout: 'slideshowSlide', parts: { orgId: org, slideshowId: id, index: '0' } },
  },
  {
    name: 'slideshow video',
    key: slideshowVideoKey(org, id),
    want: `slideshows/${org}/${id}/carousel.mp4`,
    parsed: { layout: 'slideshowVideo', parts: { orgId: org, slideshowId: id } },
  },
  {
    name: 'editor export',
    key: editorExportKey(org, id),
    want: `editor-exports/${org}/${id}.mp4`,
    parsed: { layout: 'editorExport', parts: { orgId: org, exportId: id } },
  },
  {
    name: 'editor media',
    key: editorMediaKey(org, id, 'm4a'),
    want: `editor-media/${org}/${id}.m4a`,
    parsed: { layout: 'editorMedia', parts: { orgId: org, mediaId: id, ext: 'm4a' } },
  },
  {
    name: 'brand kit logo',
    key: brandKitLogoKey(org, id, 'webp'),
    want: `brand-kits/${org}/${id}.webp`,
    parsed: { layout: 'brandKitLogo', parts: { orgId: org, logoId: id, ext: 'webp' } },
  },
  {
    name: 'custom avatar',
    key: customAvatarKey(org, id),
    want: `avatars/${org}/${id}.png`,
    parsed: { layout: 'customAvatar', parts: { orgId: org, avatarId: id } },
  },
  {
    name: 'custom voice sample',
    key: customVoiceSampleKey(org, id, 'wav'),
    want: `voices/${org}/${id}.wav`,
    parsed: { layout: 'customVoiceSample', parts: { orgId: org, voiceId: id, ext: 'wav' } },
  },
  {
    name: 'sound effect',
    key: soundEffectKey('whoosh-short'),
    want: 'sound-effects/whoosh-short.wav',
    parsed: { layout: 'soundEffect', parts: { effectId: 'whoosh-short' } },
  },
  {
    name: 'catalog sample',
    key: catalogSampleKey('voices/ava-bright.wav'),
    want: 'catalog-samples/voices/ava-bright.wav',
    parsed: { layout: 'catalogSample', parts: { dir: 'voices', file: 'ava-bright.wav' } },
  },
];

t.test('every layout makes the keys stored objects have, and parseKey reads them back', async (t) => {
  for (const c of cases) {
    t.equal(c.key, c.want, `${c.name}: the layout of stored objects`);
    t.doesNotThrow(() => assertKey(c.key), `${c.name}: a valid storage key`);
    t.same(parseKey(c.key), c.parsed, `${c.name}: parse(make(x)) gives x back`);
    t.equal(keyFilename(c.key), c.want.split('/').pop(), `${c.name}: its file name`);
  }
  t.equal(new Set(cases.map((c) => c.parsed.layout)).size, cases.length, 'one case per layout');
});

t.test('parseKey: an id holding dots keeps them (the extension is after the last dot); other keys are no layout', async (t) => {
  t.same(parseKey(`editor-media/${org}/a.b.png`), { layout: 'editorMedia', parts: { orgId: org, mediaId: 'a.b', ext: 'png' } });
  for (const key of [
    `generations/${org}/${id}`,
    `generations/${org}/x/${id}.png`,
    'tmp/file.png',
    `faceless/${org}/42/scene-1.png`,
    `slideshows/${org}/${id}/cover.png`,
    '',
  ]) {
    t.equal(parseKey(key), undefined, `"${key}" is no layout`);
  }
});

t.test('a part that is not one key segment is refused, never written into another folder', async (t) => {
  t.throws(() => editorMediaKey(org, '../x', 'png'), /mediaId "\.\.\/x" is not one key segment/);
  t.throws(() => generationOutputKey('', id, 'png'), /orgId "" is not one key segment/);
  t.throws(() => catalogSampleKey('voices/x/y.wav'), /is not <dir>\/<file>/);
});

t.test('keyWorkspace: the org id of every workspace layout (temporary partial writes too), none for shared objects', async (t) => {
  for (const c of cases) {
    const prefix = Object.values(WORKSPACE_KEY_PREFIXES).find((p) => c.key.startsWith(p));
    if (prefix) {
      t.equal(keyWorkspace(c.key), org, `${c.name}: under ${prefix}`);
      t.equal(keyWorkspace(`${c.key}.0a1b2c3d4e5f.tmp`), org, `${c.name}: a partial write`);
    } else t.equal(keyWorkspace(c.key), undefined, `${c.name}: shared`);
  }
  t.same(
    cases.filter((c) => keyWorkspace(c.key) === undefined).map((c) => c.parsed.layout),
    ['soundEffect', 'catalogSample'],
    'only sound effects and catalog samples are shared',
  );
});
