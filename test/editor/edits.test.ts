// PATCH /editor/videos/{id}: every operation type and its effect on the stored project,
// atomic rollback of a failing batch with the failing index and field named, concurrent edits,
// the expected_version guard, the edit history and the deprecated POST …/edits alias.
import t from 'tap';
import { startTestApp } from '../helpers/app.ts';
import { addMedia, colorPng, colorVideo, createProject, edit, editOk, item, tone, upload } from './helpers.ts';

const app = await startTestApp(t);

const ws = await app.workspace();
const clip = await upload(app, ws.key, 'green.mp4', 'video/mp4', colorVideo('green', 'green', 6));
const red = await upload(app, ws.key, 'red.png', 'image/png', await colorPng('#ff0000'));
const music = await upload(app, ws.key, 'music.mp3', 'audio/mpeg', tone('music', 8));

/** A project with a 4 s clip, a 2 s image after it, music under both, one text and one captions item. */
async function project() {
  const p = await createProject(app, ws.key);
  const v = await addMedia(app, ws.key, p.id, { media_id: clip.media.id, duration_seconds: 4 });
  const i = await addMedia(app, ws.key, p.id, { media_id: red.media.id, from_seconds: 4, duration_seconds: 2 });
  const m = await addMedia(app, ws.key, p.id, { media_id: music.media.id, duration_seconds: 6, audio_role: 'music' });
  const r = await editOk(app, ws.key, p.id, [
    { type: 'add_text', text: 'Headline', from_seconds: 0, duration_seconds: 3 },
    {
      type: 'add_captions',
      from_seconds: 1,
      captions: [
        {
          text: 'Hello there',
          startMs: 0,
          endMs: 1500,
          words: [
            { text: 'Hello', startMs: 0, endMs: 600 },
            { text: 'there', startMs: 600, endMs: 1500 },
          ],
        },
      ],
    },
  ]);
  const [text, captions] = r.applied_operations.map((a: any) => a.item_ids[0]);
  return {
    id: p.id as number,
    video: v.item.item_id as string,
    image: i.item.item_id as string,
    music: m.item.item_id as string,
    text: text as string,
    captions: captions as string,
    videoTrack: v.track.track_id as string,
    version: r.version as number,
  };
}

async function get(id: number) {
  const res = await app.request('GET', `/api/v1/editor/videos/${id}`, { key: ws.key });
  t.equal(res.status, 200);
  return res.body;
}

function failure(t: any, res: any, status: number, index: number, field: string) {
  t.equal(res.status, status, `status ${status} (${res.text.slice(0, 300)})`);
  t.equal(res.body.error.context.operation_index, index, 'names the operation index');
  t.equal(res.body.error.context.field, field, `names the field ${field}`);
  t.match(res.body.error.message, new RegExp(`^Operation ${index} `));
}

t.test('set_title, set_item_timing, set_item_source, set_item_audio', async (t) => {
  const p = await project();
  const r = await editOk(app, ws.key, p.id, [
    { type: 'set_title', title: 'Renamed' },
    { type: 'set_item_timing', item_id: p.image, from_seconds: 3.5, duration_seconds: 2.5 },
    { type: 'set_item_source', item_id: p.video, source_start_seconds: 1, playback_rate: 1.25 },
    { type: 'set_item_audio', item_id: p.video, volume_db: -6, audio_fade_in_seconds: 0.5, audio_fade_out_seconds: 1 },
  ]);
  t.equal(r.video.title, 'Renamed');
  t.match(item(r.video, p.image), { from_seconds: 3.5, duration_seconds: 2.5 });
  t.match(item(r.video, p.video), {
    source_start_seconds: 1,
    playback_rate: 1.25,
    duration_seconds: 4,
    volume_db: -6,
    audio_fade_in_seconds: 0.5,
    audio_fade_out_seconds: 1,
  });
  t.same(
    r.applied_operations.map((a: any) => a.item_ids),
    [[], [p.image], [p.video], [p.video]],
  );
  t.equal(r.video.duration_seconds, 6, 'duration is the end of the last item');
  const stored = await get(p.id);
  t.same(stored.items, r.video.items, 'GET shows what PATCH returned');

  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_source', item_id: p.image, playback_rate: 2 }]),
    400,
    0,
    'body.operations[0].item_id',
  );
  // 1 s + 4 s × 1.5 = 7 s of a 6 s clip
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_source', item_id: p.video, playback_rate: 1.5 }]),
    400,
    0,
    'body.operations[0].playback_rate',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_timing', item_id: p.video, duration_seconds: 5.5 }]),
    400,
    0,
    'body.operations[0].duration_seconds',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_audio', item_id: p.text, volume_db: -3 }]),
    400,
    0,
    'body.operations[0].item_id',
  );
  failure(t, await edit(app, ws.key, p.id, [{ type: 'set_item_timing', item_id: p.video }]), 400, 0, 'body.operations[0].from_seconds');
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_timing', item_id: p.text, from_seconds: 14399 }]),
    400,
    0,
    'body.operations[0].from_seconds',
  );
  const negative = await edit(app, ws.key, p.id, [{ type: 'set_item_timing', item_id: p.text, duration_seconds: -1 }]);
  t.equal(negative.status, 400, 'a negative duration is refused by the schema');
  t.ok(negative.body.error.context.errors.some((e: any) => e.field === 'body.operations[0].duration_seconds'));
});

t.test('set_audio_levels selects by ids, types and roles, minus exclusions', async (t) => {
  const p = await project();
  let r = await editOk(app, ws.key, p.id, [
    { type: 'set_audio_levels', audio_roles: ['music'], volume_db: -18, audio_fade_out_seconds: 1.5 },
  ]);
  t.match(item(r.video, p.music), { volume_db: -18, audio_fade_out_seconds: 1.5 });
  t.equal(item(r.video, p.video).volume_db, 0, 'the clip is not music');
  t.same(r.applied_operations[0].item_ids, [p.music]);
  r = await editOk(app, ws.key, p.id, [
    { type: 'set_audio_levels', item_types: ['video', 'audio'], exclude_item_ids: [p.music], volume_db: -3 },
  ]);
  t.equal(item(r.video, p.video).volume_db, -3);
  t.equal(item(r.video, p.music).volume_db, -18, 'excluded');
  r = await editOk(app, ws.key, p.id, [{ type: 'set_audio_levels', item_ids: [p.music], audio_fade_in_seconds: 2 }]);
  t.match(item(r.video, p.music), { audio_fade_in_seconds: 2, volume_db: -18 });
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_audio_levels', item_ids: ['itm_missing'], volume_db: 0 }]),
    404,
    0,
    'body.operations[0].item_ids[0]',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_audio_levels', item_ids: [p.text], volume_db: 0 }]),
    400,
    0,
    'body.operations[0].item_ids[0]',
  );
});

t.test('set_item_animation and apply_item_transition', async (t) => {
  const p = await project();
  let r = await editOk(app, ws.key, p.id, [
    {
      type: 'set_item_animation',
      item_id: p.text,
      enter: { type: 'slide', direction: 'left', duration_seconds: 0.4 },
      exit: { type: 'fade' },
    },
  ]);
  t.same(item(r.video, p.text).animation, {
    enter: { type: 'slide', direction: 'left', duration_seconds: 0.4 },
    exit: { type: 'fade', duration_seconds: 0.5 },
  });
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_animation', item_id: p.text, exit: null }]);
  t.same(
    item(r.video, p.text).animation,
    { enter: { type: 'slide', direction: 'left', duration_seconds: 0.4 }, exit: null },
    'null clears, omitted keeps',
  );
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_animation', item_id: p.text, enter: null }]);
  t.equal(item(r.video, p.text).animation, null);
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_animation', item_id: p.music, enter: { type: 'fade' } }]),
    400,
    0,
    'body.operations[0].item_id',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [
      {
        type: 'set_item_animation',
        item_id: p.image,
        enter: { type: 'zoom', duration_seconds: 1.5 },
        exit: { type: 'fade', duration_seconds: 1 },
      },
    ]),
    400,
    0,
    'body.operations[0].enter.duration_seconds',
  );

  r = await editOk(app, ws.key, p.id, [
    { type: 'apply_item_transition', from_item_id: p.video, to_item_id: p.image, overlap_seconds: 0.8 },
  ]);
  const img = item(r.video, p.image);
  t.equal(img.from_seconds, 3.2, 'the incoming item moved earlier to overlap by 0.8 s');
  t.same(img.transition, { from_item_id: p.video, overlap_seconds: 0.8 });
  t.same(img.animation.enter, { type: 'fade', duration_seconds: 0.8 });
  t.same(item(r.video, p.video).animation.exit, { type: 'fade', duration_seconds: 0.8 });
  r = await editOk(app, ws.key, p.id, [
    {
      type: 'apply_item_transition',
      from_item_id: p.video,
      to_item_id: p.image,
      overlap_seconds: 0.5,
      enter: { type: 'slide', direction: 'left' },
      exit: { type: 'zoom', duration_seconds: 0.5 },
    },
  ]);
  t.equal(item(r.video, p.image).from_seconds, 3.5);
  t.equal(item(r.video, p.image).animation.enter.type, 'slide');
  t.equal(item(r.video, p.video).animation.exit.type, 'zoom');
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'apply_item_transition', from_item_id: p.video, to_item_id: p.image, overlap_seconds: 3 }]),
    400,
    0,
    'body.operations[0].overlap_seconds',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'apply_item_transition', from_item_id: p.video, to_item_id: 'nope' }]),
    404,
    0,
    'body.operations[0].to_item_id',
  );
});

t.test('split_item produces two items whose sources continue', async (t) => {
  const p = await project();
  await editOk(app, ws.key, p.id, [{ type: 'set_item_source', item_id: p.video, source_start_seconds: 0.5, playback_rate: 1.25 }]);
  const r = await editOk(app, ws.key, p.id, [{ type: 'split_item', item_id: p.video, at_seconds: 1.5 }]);
  const [first, second] = r.applied_operations[0].item_ids;
  t.equal(first, p.video, 'the first half keeps the id');
  const a = item(r.video, first);
  const b = item(r.video, second);
  t.match(a, { from_seconds: 0, duration_seconds: 1.5, source_start_seconds: 0.5, playback_rate: 1.25 });
  t.match(b, {
    from_seconds: 1.5,
    duration_seconds: 2.5,
    source_start_seconds: 2.375,
    playback_rate: 1.25,
    track_id: a.track_id,
    media_id: a.media_id,
  });
  const c = await editOk(app, ws.key, p.id, [{ type: 'split_item', item_id: p.captions, at_seconds: 1.8 }]);
  const [c1, c2] = c.applied_operations[0].item_ids.map((id: string) => item(c.video, id));
  t.same(
    c1.captions.map((x: any) => [x.startMs, x.endMs]),
    [[0, 800]],
    'the first captions half ends at the cut',
  );
  t.same(
    c2.captions.map((x: any) => [x.startMs, x.endMs]),
    [[0, 700]],
    'the second half starts at the cut',
  );
  t.same(
    c2.captions[0].words.map((w: any) => [w.text, w.startMs, w.endMs]),
    [['there', 0, 700]],
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'split_item', item_id: p.image, at_seconds: 4 }]),
    400,
    0,
    'body.operations[0].at_seconds',
  );
});

t.test('set_item_transform, move_item_to_track, set_item_layer_order', async (t) => {
  const p = await project();
  let r = await editOk(app, ws.key, p.id, [
    { type: 'set_item_transform', item_id: p.image, left: 0.5, top: 0.25, width: 0.4, opacity: 0.5 },
  ]);
  t.same(item(r.video, p.image).transform, { left: 0.5, top: 0.25, width: 0.4, height: 1, opacity: 0.5 });
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'set_item_transform', item_id: p.music, left: 0 }]),
    400,
    0,
    'body.operations[0].item_id',
  );

  const tracks = r.video.tracks;
  const imageTrack = item(r.video, p.image).track_id;
  t.not(imageTrack, p.videoTrack === imageTrack ? '' : p.videoTrack);
  r = await editOk(app, ws.key, p.id, [{ type: 'move_item_to_track', item_id: p.image, track_id: p.videoTrack }]);
  t.equal(item(r.video, p.image).track_id, p.videoTrack, 'video and image tracks are compatible');
  const audioTrack = tracks.find((x: any) => x.type === 'audio').track_id;
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'move_item_to_track', item_id: p.image, track_id: audioTrack }]),
    400,
    0,
    'body.operations[0].track_id',
  );
  const missing = await edit(app, ws.key, p.id, [{ type: 'move_item_to_track', item_id: p.image, track_id: 'trk_nope' }]);
  failure(t, missing, 404, 0, 'body.operations[0].track_id');
  t.equal(missing.body.error.context.resource, 'editor_track');

  const layers = (v: any) => Object.fromEntries(v.items.filter((i: any) => i.type !== 'audio').map((i: any) => [i.item_id, i.layer]));
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_layer_order', item_id: p.video, position: 'front' }]);
  let l = layers(r.video);
  t.ok(
    Object.entries(l).every(([id, z]) => id === p.video || (z as number) < l[p.video]),
    'front: above every item',
  );
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_layer_order', item_id: p.video, position: 'back' }]);
  l = layers(r.video);
  t.ok(
    Object.entries(l).every(([id, z]) => id === p.video || (z as number) > l[p.video]),
    'back: below every item',
  );
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_layer_order', item_id: p.video, position: 'forward' }]);
  l = layers(r.video);
  t.equal(Object.values(l).filter((z) => (z as number) < l[p.video]).length, 1, 'forward: one step up');
  r = await editOk(app, ws.key, p.id, [{ type: 'set_item_layer_order', item_id: p.video, position: 'backward' }]);
  l = layers(r.video);
  t.equal(Object.values(l).filter((z) => (z as number) < l[p.video]).length, 0, 'backward: one step down');
});

t.test('add_text picks a free slot on a front layer; update_text merges style', async (t) => {
  const p = await project();
  const before = await get(p.id);
  const maxLayer = Math.max(...before.items.map((i: any) => i.layer));
  const r = await editOk(app, ws.key, p.id, [
    { type: 'add_text', text: 'Second line of text', from_seconds: 1, duration_seconds: 2 },
    { type: 'add_text', text: 'Pinned', from_seconds: 0, duration_seconds: 1, style: { top: 0.5, align: 'left', left: 0.1 } },
  ]);
  const [a, b] = r.applied_operations.map((x: any) => item(r.video, x.item_ids[0]));
  const first = item(r.video, p.text);
  t.ok(a.layer > maxLayer && a.layer >= 10, 'a front layer');
  t.not(a.style.top, first.style.top, 'a slot other than the existing overlapping text');
  t.ok(
    a.transform.top >= first.transform.top + first.transform.height || a.transform.top + a.transform.height <= first.transform.top,
    'the bands do not overlap',
  );
  t.match(b, { style: { top: 0.5, align: 'left', left: 0.1 }, transform: { top: 0.5, left: 0.1 } });
  const u = await editOk(app, ws.key, p.id, [
    { type: 'update_text', item_id: p.text, text: 'New headline', style: { color: '#FFD400', font_size: 80 } },
  ]);
  t.match(item(u.video, p.text), { text: 'New headline', style: { color: '#FFD400', font_size: 80, align: 'center' } });
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'update_text', item_id: p.captions, text: 'x' }]),
    400,
    0,
    'body.operations[0].item_id',
  );
});

t.test('add_captions and update_captions', async (t) => {
  const p = await project();
  const cues = [
    {
      text: 'One two',
      startMs: 0,
      endMs: 900,
      timestampMs: 0,
      confidence: 0.9,
      words: [
        { text: 'One', startMs: 0, endMs: 400 },
        { text: 'two', startMs: 400, endMs: 900 },
      ],
    },
    { text: 'three', startMs: 1000, endMs: 2100 },
  ];
  const r = await editOk(app, ws.key, p.id, [
    { type: 'add_captions', from_seconds: 2, captions: cues, style: { highlight_color: '#00FF00', text_transform: 'uppercase' } },
  ]);
  const c = item(r.video, r.applied_operations[0].item_ids[0]);
  t.match(c, {
    type: 'captions',
    from_seconds: 2,
    duration_seconds: 2.1,
    captions: cues,
    style: { highlight_color: '#00FF00', text_transform: 'uppercase' },
  });
  t.ok(c.layer >= 10, 'front layer');
  const u = await editOk(app, ws.key, p.id, [
    { type: 'update_captions', item_id: c.item_id, captions: [{ text: 'Replaced', startMs: 0, endMs: 500 }], style: { font_size: 40 } },
  ]);
  t.match(item(u.video, c.item_id), {
    captions: [{ text: 'Replaced', startMs: 0, endMs: 500 }],
    style: { font_size: 40, highlight_color: '#00FF00' },
  });
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'add_captions', captions: [{ text: 'bad', startMs: 500, endMs: 200 }] }]),
    400,
    0,
    'body.operations[0].captions[0].endMs',
  );
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'update_captions', item_id: p.text, captions: [{ text: 'x', startMs: 0, endMs: 1 }] }]),
    400,
    0,
    'body.operations[0].item_id',
  );
});

t.test('add_sound_effect from the built-in library, a media id or exactly one source', async (t) => {
  const p = await project();
  const r = await editOk(app, ws.key, p.id, [
    { type: 'add_sound_effect', sound_effect_id: 'whoosh-short', from_seconds: 2.9, volume_db: -6 },
    { type: 'add_sound_effect', media_id: music.media.id, from_seconds: 1, duration_seconds: 0.5 },
  ]);
  const sfx = item(r.video, r.applied_operations[0].item_ids[0]);
  t.match(sfx, { type: 'audio', audio_role: 'sound_effect', from_seconds: 2.9, duration_seconds: 0.6, volume_db: -6 });
  const lib = await app.request('GET', `/api/v1/editor/media?media_type=audio&query=whoosh`, { key: ws.key });
  t.equal(lib.body.data[0].id, sfx.media_id, 'the effect is workspace media');
  t.equal(lib.body.data[0].duration_seconds, 0.6);
  const file = await fetch(lib.body.data[0].url);
  t.equal(file.status, 200, 'the effect is a real file');
  t.equal(
    Buffer.from(await file.arrayBuffer())
      .subarray(0, 4)
      .toString(),
    'RIFF',
  );
  t.match(item(r.video, r.applied_operations[1].item_ids[0]), { audio_role: 'sound_effect', duration_seconds: 0.5 });
  const unknown = await edit(app, ws.key, p.id, [{ type: 'add_sound_effect', sound_effect_id: 'no-such-effect' }]);
  failure(t, unknown, 404, 0, 'body.operations[0].sound_effect_id');
  t.equal(unknown.body.error.context.resource, 'sound_effect');
  failure(
    t,
    await edit(app, ws.key, p.id, [{ type: 'add_sound_effect', sound_effect_id: 'pop', media_id: music.media.id }]),
    400,
    0,
    'body.operations[0].media_id',
  );
  failure(t, await edit(app, ws.key, p.id, [{ type: 'add_sound_effect', media_id: red.media.id }]), 400, 0, 'body.operations[0].media_id');
});

t.test('remove_item; a failing batch changes nothing and names the index and field', async (t) => {
  const p = await project();
  const before = await get(p.id);
  const res = await edit(
    app,
    ws.key,
    p.id,
    [
      { type: 'set_title', title: 'Should not stick' },
      { type: 'add_text', text: 'Nor this' },
      { type: 'remove_item', item_id: p.image },
      { type: 'remove_item', item_id: 'itm_unknown_9' },
    ],
    { instructions: 'four changes' },
  );
  failure(t, res, 404, 3, 'body.operations[3].item_id');
  t.equal(res.body.error.context.resource, 'editor_item');
  t.same(await get(p.id), before, 'title, items, version and history are unchanged');
  const ok = await editOk(app, ws.key, p.id, [{ type: 'remove_item', item_id: p.image }]);
  t.notOk(item(ok.video, p.image), 'removed');
  t.equal(ok.version, before.version + 1);
  failure(t, await edit(app, ws.key, p.id, [{ type: 'remove_item', item_id: p.image }]), 404, 0, 'body.operations[0].item_id');
});

t.test('the history keeps instructions; expected_version guards; the POST alias works', async (t) => {
  const p = await project();
  const r = await editOk(
    app,
    ws.key,
    p.id,
    [
      { type: 'set_title', title: 'A' },
      { type: 'set_title', title: 'B' },
    ],
    { instructions: 'Rename it twice', expected_version: p.version },
  );
  t.equal(r.version, p.version + 1);
  t.same(r.video.edits[0], {
    version: r.version,
    instructions: 'Rename it twice',
    operation_count: 2,
    created_at: r.video.edits[0].created_at,
  });
  t.equal(r.video.edits.length, 2, 'one entry per PATCH, newest first');
  const stale = await edit(app, ws.key, p.id, [{ type: 'set_title', title: 'C' }], { expected_version: p.version });
  t.equal(stale.status, 400);
  t.equal(stale.body.error.context.current_version, r.version);
  t.equal(stale.body.error.context.field, 'body.expected_version');
  const alias = await app.request('POST', `/api/v1/editor/videos/${p.id}/edits`, {
    key: ws.key,
    body: { operations: [{ type: 'set_title', title: 'Via POST' }], instructions: 'alias' },
  });
  t.equal(alias.status, 200);
  t.equal(alias.body.video.title, 'Via POST');
  t.equal(alias.body.video.edits[0].instructions, 'alias');
});

t.test('concurrent PATCHes on one project never lose an update', async (t) => {
  const p = await project();
  const N = 12;
  const results = await Promise.all(
    Array.from({ length: N }, (_, k) =>
      edit(app, ws.key, p.id, [
        { type: 'add_text', text: `Concurrent ${k}`, from_seconds: k },
        { type: 'set_item_audio', item_id: p.music, volume_db: -k },
      ]),
    ),
  );
  t.same(
    results.map((r) => r.status),
    Array(N).fill(200),
  );
  t.same(
    results.map((r) => r.body.version).sort((a, b) => a - b),
    Array.from({ length: N }, (_, k) => p.version + 1 + k),
    'each edit produced its own version',
  );
  const final = await get(p.id);
  t.equal(final.version, p.version + N);
  for (let k = 0; k < N; k++)
    t.ok(
      final.items.some((i: any) => i.text === `Concurrent ${k}`),
      `text ${k} is there`,
    );
  t.equal(final.edits.filter((e: any) => e.version > p.version).length, N, 'every edit is in the history');
});

t.test('tenant isolation: another workspace cannot read or edit a project', async (t) => {
  const p = await project();
  const other = await app.workspace();
  for (const [method, path, body] of [
    ['GET', `/api/v1/editor/videos/${p.id}`, undefined],
    ['PATCH', `/api/v1/editor/videos/${p.id}`, { operations: [{ type: 'set_title', title: 'mine' }] }],
    ['POST', `/api/v1/editor/videos/${p.id}/media`, { media_id: clip.media.id }],
    ['GET', `/api/v1/videos/${p.id}`, undefined],
  ] as const) {
    const res = await app.request(method, path, { key: other.key, body });
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.error.code, 'not_found');
  }
  const media = await app.request('POST', `/api/v1/editor/videos/${(await createProject(app, other.key)).id}/media`, {
    key: other.key,
    body: { media_id: clip.media.id },
  });
  t.equal(media.status, 404, "another workspace's media id");
  t.equal(media.body.error.context.resource, 'editor_media');
  t.equal((await get(p.id)).title, 'Test project');
});
