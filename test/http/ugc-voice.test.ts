// A UGC ad the local engine makes speaks (issue 24): its presenter's script is written and voiced
// before the render (stages script → voice → rendering), the voice is the ad's sound, the mouth
// moves with its words and the captions are what is said; with generate_audio false, or with the
// customer's own audio, nothing is voiced. The voice file is not kept once the ad is stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { maxVolume, SILENT_DB } from '../helpers/sound.ts';
import { startTestApp } from '../helpers/app.ts';
import { poll } from '../helpers/image-model.ts';

const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 10_000 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ugc-voice-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const UGC = { type: 'ugc_ad', template_slug: 'talking-head-review', aspect_ratio: '9:16', quality_tier: 'low', duration: 8 };
const PROMPT = 'An honest review of our noise-cancelling earbuds after a month';

async function make(extra: Record<string, unknown>) {
  const res = await app.request('POST', '/api/v1/generations', { key: ws.key, body: { ...UGC, prompt: PROMPT, ...extra } });
  t.equal(res.status, 200, res.text);
  const id = res.body.generations[0].id;
  const g = await poll(app, ws.key, `/api/v1/generations/${id}`);
  const [row] = await app.service.ctx.sql`select state from generations where id = ${id}`;
  return { g, state: row.state as any };
}

t.test('a local UGC ad speaks: script and voice before the render, the voice is its sound', async (t) => {
  const { g, state } = await make({});
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.same(Object.keys(state.runs ?? {}).sort(), ['rendering', 'script', 'voice'], 'the stages that ran');
  t.ok(state.script?.text, 'the script is recorded');
  t.ok(state.voice?.words?.length > 3, 'the voice has timed words');
  // The whole script is said within the 8 s: its last word (the call to action's) ends before the ad does.
  const words = state.voice.words as { text: string; endMs: number }[];
  t.ok(words.at(-1)!.endMs <= 8000, `the voice ends at ${words.at(-1)!.endMs} ms of 8000`);
  t.equal(words.at(-1)!.text, (state.script.text as string).split(/\s+/).at(-1), 'the last word said is the script’s last');
  const file = path.join(dir, 'spoken.mp4');
  fs.writeFileSync(file, Buffer.from(await (await fetch(g.url)).arrayBuffer()));
  const peak = maxVolume(file);
  t.ok(peak !== null && peak > SILENT_DB, `the ad has sound (${peak} dB)`);
  // The captions are what the presenter says.
  const spoken = new Set((state.voice.words as { text: string }[]).map((w) => w.text.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '')));
  const captions = (state.rendering.manifest?.texts ?? []).filter((x: { role: string }) => x.role === 'caption');
  t.ok(captions.length > 0, 'captions were placed');
  for (const c of captions)
    for (const w of (c.text as string).split(/\s+/)) {
      const word = w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '');
      if (word) t.ok(spoken.has(word), `caption word "${w}" is spoken`);
    }
  t.notOk(await app.service.ctx.storage.exists(state.voice.storageKey), 'the voice file is not kept');
});

t.test('generate_audio false: nothing is voiced and the ad has no sound', async (t) => {
  const { g, state } = await make({ generate_audio: false });
  t.equal(g.status, 'completed', JSON.stringify(g.error));
  t.notOk(state.voice, 'no voice');
  t.same(Object.keys(state.runs ?? {}), ['rendering'], 'only the render ran');
  const file = path.join(dir, 'quiet.mp4');
  fs.writeFileSync(file, Buffer.from(await (await fetch(g.url)).arrayBuffer()));
  t.equal(maxVolume(file), null, 'no audio stream');
});
