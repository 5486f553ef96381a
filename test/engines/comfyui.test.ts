// The ComfyUI engine (src/engines/selfhosted/comfyui.ts) against a fake that validates workflows
// as ComfyUI's execution.py does (test/engines/fakes/comfyui.ts): our inputs land at the node
// inputs COMFYUI_INPUTS names, a video's start image is uploaded and named in LoadImage, a resumed
// job polls its stored prompt without queueing another, cancel interrupts a running prompt and
// deletes a pending one, an invalid workflow is a non-retryable rejection with ComfyUI's words, a
// failed run is not retried, and outputs (PNG, MP4, WebM, animated WebP) become the job's PNG or
// H.264 MP4 at the job's size. Configuration mistakes stop the start with a clear message.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { ProviderError, type GenerationJob, type ProviderJobRef } from '../../src/engines/generation.ts';
import { hostedRequest, seedOf } from '../../src/engines/hosted/hosted.ts';
import { cancelHostedJob, engineFor } from '../../src/engines/index.ts';
import { ComfyuiProvider, comfyuiMakes } from '../../src/engines/selfhosted/comfyui.ts';
import { probe, extractFrame } from '../../src/media/ffmpeg.ts';
import { png } from './fakes/common.ts';
import { colourOf, startComfyuiFake } from './fakes/comfyui.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'engines-comfyui-'));
const fake = await startComfyuiFake();
t.teardown(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

const env = (over: Record<string, string> = {}) => ({ COMFYUI_URL: fake.url, PROVIDER_POLL_MS: '20', ...over });
const provider = (over: Record<string, string> = {}) => {
  const config = loadConfig(env(over));
  return new ComfyuiProvider({ config: config.comfyui, pollMs: 20, requestTimeoutMs: 5000, jobTimeoutMs: 20_000 });
};
let seq = 0;
const job = (over: Partial<GenerationJob> = {}): GenerationJob => ({
  generationId: `7c0f1e2d-0000-4000-8000-${String(++seq).padStart(12, '0')}`,
  type: 'ai_model',
  output: 'image',
  prompt: 'A brass lamp on a desk',
  title: 'Flux Image',
  aspectRatio: '1:1',
  width: 1024,
  height: 1024,
  imageFormat: 'png',
  referenceImages: [],
  generateAudio: false,
  ...over,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as ProviderError,
  );
/** A bundled workflow, to change. */
const bundled = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../src/engines/selfhosted/workflows/${name}.json`, import.meta.url), 'utf8'));
const last = () => [...fake.prompts.values()].at(-1)!;
async function centre(file: string): Promise<string> {
  const { data } = await sharp(file).extract({ left: 4, top: 4, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
  return `#${[...data.subarray(0, 3)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}
const near = (a: string, b: string, tol = 8) =>
  [1, 3, 5].every((i) => Math.abs(Number.parseInt(a.slice(i, i + 2), 16) - Number.parseInt(b.slice(i, i + 2), 16)) <= tol);

t.test('text to image: the prompt, seed and size at the configured node inputs; a PNG at the job size', async (t) => {
  // 4:5 at 1K is 820×1024; the latent is asked at 816×1024 (multiples of 16), the output covers 820×1024.
  const j = job({ aspectRatio: '4:5', width: 820, height: 1024, brandName: 'Acme' });
  const before = fake.submissions();
  const stored: (ProviderJobRef | null)[] = [];
  const progress: number[] = [];
  const r = await provider().generate(j, {
    workDir: work,
    onSubmitted: async (ref) => void stored.push(ref),
    onProgress: (f) => progress.push(f),
  });
  t.equal(fake.submissions(), before + 1, 'one prompt queued');
  const p = last();
  const prompt = hostedRequest(j, { multipleImages: false }).prompt;
  t.match(prompt, /Brand: Acme/, 'the brand guidance is in the prompt');
  t.equal(p.graph['6'].inputs!.text, prompt, 'the prompt at 6.text (CLIPTextEncode)');
  t.equal(p.graph['3'].inputs!.seed, seedOf(j.generationId), 'the seed at 3.seed (KSampler)');
  t.same([p.graph['5'].inputs!.width, p.graph['5'].inputs!.height], [816, 1024], 'the size at EmptyLatentImage, in multiples of 16');
  t.equal(p.graph['7'].inputs!.text, 'blurry, low quality, watermark, text', 'the negative prompt is the workflow’s own');
  t.equal(p.clientId, `media-api-${j.generationId}`);
  t.same(stored, [{ provider: 'comfyui', id: p.id }], 'the prompt id stored before polling');
  t.same([r.contentType, r.width, r.height], ['image/png', 820, 1024]);
  const meta = await sharp(r.path).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 820, 1024], 'a real PNG at the job size');
  t.ok(near(await centre(r.path), colourOf(prompt, seedOf(j.generationId))), 'the fake’s picture (its colour follows prompt and seed)');
  t.equal(progress.at(-1), 1);
});

t.test('COMFYUI_INPUTS moves our inputs to other node inputs, for both workflows or one', async (t) => {
  // An operator's text-to-image workflow whose prompt node is 60, not 6.
  const file = path.join(work, 'renumbered.json');
  const graph = bundled('text-to-image');
  graph['60'] = graph['6'];
  delete graph['6'];
  graph['3'].inputs.positive = ['60', 0];
  graph['7'].inputs.text = 'placeholder';
  writeFileSync(file, JSON.stringify(graph));
  const inputs = JSON.stringify({ seed: null, text_to_image: { prompt: ['60.text', '7.text'] } });
  const config = loadConfig(env({ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: file, COMFYUI_INPUTS: inputs }));
  t.same(config.comfyui.inputs.video.prompt, ['6.text'], 'the video workflow keeps its prompt node');
  t.equal(config.comfyui.inputs.video.seed, undefined, 'a top-level key applies to both');
  const j = job({ imageFormat: 'jpeg' });
  const r = await provider({ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: file, COMFYUI_INPUTS: inputs }).generate(j, { workDir: work });
  const p = last();
  t.same([p.graph['60'].inputs!.text, p.graph['7'].inputs!.text], [j.prompt, j.prompt], 'the prompt at both targets');
  t.equal(p.graph['3'].inputs!.seed, 0, 'an input mapped to null is left as the workflow has it');
  t.same([r.contentType, (await sharp(r.path).metadata()).format], ['image/jpeg', 'jpeg'], 'the job’s image format');
  t.throws(
    () => loadConfig(env({ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: file, COMFYUI_INPUTS: '{"prompt": "60.text"}' })),
    /maps "prompt" to 60.text, but the video workflow \(the bundled image-to-video.json\) has no node 60/,
    'a top-level key must fit both workflows',
  );
});

t.test('image to video: the start image uploaded and named in LoadImage; an H.264 MP4 at the job size', async (t) => {
  const reference = await png(64, 48, '#ff0000');
  const j = job({
    output: 'video',
    aspectRatio: '16:9',
    width: 640,
    height: 360,
    durationSeconds: 2,
    referenceImages: [reference],
    prompt: 'The lamp turns on',
  });
  const r = await provider().generate(j, { workDir: work });
  const p = last();
  const name = `media-api-${j.generationId}.png`;
  t.same(fake.uploads.get(name), reference, 'the reference bytes uploaded under the generation’s name');
  t.equal(p.graph['10'].inputs!.image, name, 'LoadImage names the uploaded file');
  t.equal(p.graph['6'].inputs!.text, j.prompt);
  t.same(
    [p.graph['5'].inputs!.width, p.graph['5'].inputs!.height, p.graph['5'].inputs!.length],
    [640, 368, 33],
    'size and 2 s × 16 fps (4n + 1 frames)',
  );
  t.equal(p.graph['12'].inputs!.fps, 16);
  const info = await probe({ path: r.path, type: 'video/mp4' });
  t.same([r.contentType, info.video_codec, info.width, info.height], ['video/mp4', 'h264', 640, 360], 'H.264 MP4 at the job size');
  t.ok(Math.abs((info.duration_seconds ?? 0) - 33 / 16) < 0.2, `the fake's 33 frames at 16 fps (${info.duration_seconds} s)`);
  const frame = path.join(work, 'frame.png');
  writeFileSync(frame, await extractFrame({ path: r.path, type: 'video/mp4' }, 0.5));
  t.ok(near(await centre(frame), colourOf(j.prompt, seedOf(j.generationId)), 12), 'the fake’s frames');
  const again = await provider().generate({ ...j, generationId: j.generationId }, { workDir: work });
  t.ok(again.path, 'a retry of the same generation overwrites its upload');
  t.equal([...fake.uploads.keys()].filter((k) => k.includes(j.generationId)).length, 1, 'one upload per generation');
});

t.test('WebM and animated WebP outputs become H.264 MP4s at the job size', async (t) => {
  for (const save of ['SaveWEBM', 'SaveAnimatedWEBP']) {
    const graph = bundled('image-to-video');
    delete graph['12'];
    graph['15'] =
      save === 'SaveWEBM'
        ? { class_type: 'SaveWEBM', inputs: { images: ['14', 0], filename_prefix: 'webm/x', codec: 'vp9', fps: 8, crf: 32 } }
        : {
            class_type: 'SaveAnimatedWEBP',
            inputs: { images: ['14', 0], filename_prefix: 'x', fps: 8, lossless: false, quality: 80, method: 'default' },
          };
    const file = path.join(work, `${save}.json`);
    writeFileSync(file, JSON.stringify(graph));
    const j = job({ output: 'video', width: 320, height: 240, durationSeconds: 1, referenceImages: [await png(32, 32)] });
    const r = await provider({ COMFYUI_IMAGE_TO_VIDEO_WORKFLOW: file, COMFYUI_INPUTS: '{"fps": "15.fps"}' }).generate(j, { workDir: work });
    const info = await probe({ path: r.path, type: 'video/mp4' });
    t.same([info.video_codec, info.width, info.height], ['h264', 320, 240], `${save}: H.264 at the job size`);
    t.ok(
      Math.abs((info.duration_seconds ?? 0) - 17 / 16) < 0.25,
      `${save}: its 17 frames at the workflow's 16 fps (${info.duration_seconds} s)`,
    );
  }
});

t.test('a resumed job polls its stored prompt: no second POST /prompt', async (t) => {
  const j = job({ prompt: 'runs forever, then not' });
  const controller = new AbortController();
  let ref: ProviderJobRef | null = null;
  const first = provider().generate(j, {
    workDir: work,
    signal: controller.signal,
    onSubmitted: async (r) => {
      ref = r;
      setTimeout(() => controller.abort(new Error('worker stopping')), 60);
    },
  });
  const stopped = await failure(first);
  t.match((stopped as Error).message, /worker stopping/, 'the abort rejects with the signal’s reason');
  t.ok(ref, 'the prompt id was stored');
  const p = fake.prompts.get(ref!.id)!;
  t.equal(p.state, 'running', 'the prompt is left running for the next attempt');
  const submitted = fake.submissions();
  // The "GPU" finishes it (its words said run forever; the fake lets it through now).
  p.graph['6'].inputs!.text = 'finished later';
  const r = await provider().generate(j, { workDir: work, resume: ref!, onSubmitted: async () => void t.fail('no new submission') });
  t.equal(fake.submissions(), submitted, 'exactly one POST /prompt in all');
  t.equal(r.width, 1024);
  t.ok(near(await centre(r.path), colourOf('finished later', seedOf(j.generationId))), 'the output of the stored prompt');
});

t.test('cancel: a running prompt is interrupted, a pending one deleted from the queue', async (t) => {
  const config = loadConfig(env());
  const setup = { config };
  const run = async (prompt: string) => {
    const controller = new AbortController();
    const refs: ProviderJobRef[] = [];
    const p = provider().generate(job({ prompt }), {
      workDir: work,
      signal: controller.signal,
      onSubmitted: async (r) => void (r && refs.push(r)),
    });
    const want = /queued/.test(prompt) ? 'pending' : 'running';
    while (fake.prompts.get(refs[0]?.id ?? '')?.state !== want) await new Promise((r) => setTimeout(r, 20));
    controller.abort(new Error('stop'));
    await p.catch(() => {});
    return refs[0];
  };
  const running = await run('runs forever');
  t.equal(fake.prompts.get(running.id)!.state, 'running');
  await cancelHostedJob(setup, running);
  t.equal(fake.prompts.get(running.id)!.state, 'interrupted', 'POST /interrupt stopped it');
  const other = await run('runs forever too');
  const pending = await run('stays queued');
  t.equal(fake.prompts.get(pending.id)!.state, 'pending');
  await cancelHostedJob(setup, pending);
  t.notOk(fake.prompts.has(pending.id), 'POST /queue {delete} removed it');
  t.equal(fake.prompts.get(other.id)!.state, 'running', 'another running prompt is not interrupted');
  const seen = fake.seen
    .filter((s) => s.path === '/interrupt' || (s.path === '/queue' && s.method === 'POST'))
    .map((s) => [s.path, s.body]);
  t.same(
    seen,
    [
      ['/queue', { delete: [running.id] }],
      ['/interrupt', { prompt_id: running.id }],
      ['/queue', { delete: [pending.id] }],
    ],
    'a running prompt: delete (a no-op), then interrupt that prompt alone; a pending one: delete',
  );
  await cancelHostedJob(setup, other);
});

t.test('past PROVIDER_JOB_TIMEOUT_MS the prompt is interrupted and the job fails, not retried', async (t) => {
  const config = loadConfig(env());
  const slow = new ComfyuiProvider({ config: config.comfyui, pollMs: 20, requestTimeoutMs: 5000, jobTimeoutMs: 300 });
  const stored: (ProviderJobRef | null)[] = [];
  const e = await failure(
    slow.generate(job({ prompt: 'runs forever, slowly' }), { workDir: work, onSubmitted: async (r) => void stored.push(r) }),
  );
  t.same([e.retryable, e.code], [false, 'timeout']);
  t.equal(fake.prompts.get(stored[0]!.id)!.state, 'interrupted', 'the prompt was stopped on the server');
});

t.test('an invalid workflow: a non-retryable rejection in ComfyUI’s words; a failed run is not retried', async (t) => {
  const cases: [string, (g: any) => void, RegExp][] = [
    [
      'unknown node class',
      (g) => (g['4'].class_type = 'CheckpointLoaderTurbo'),
      /Cannot execute because node CheckpointLoaderTurbo does not exist/,
    ],
    [
      'a missing linked node',
      (g) => (g['3'].inputs.model = ['40', 0]),
      /Prompt outputs failed validation.*node 3 \(KSampler\): Exception when validating inner node: '40'/s,
    ],
    [
      'a model the server lacks',
      (g) => (g['4'].inputs.ckpt_name = 'nope.safetensors'),
      /node 4 \(CheckpointLoaderSimple\): Value not in list: ckpt_name: 'nope.safetensors'/,
    ],
  ];
  for (const [what, change, message] of cases) {
    const graph = bundled('text-to-image');
    change(graph);
    const file = path.join(work, 'broken.json');
    writeFileSync(file, JSON.stringify(graph));
    const before = fake.submissions();
    const e = await failure(provider({ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: file }).generate(job(), { workDir: work }));
    t.ok(e instanceof ProviderError, what);
    t.same([e.retryable, e.code, e.status], [false, 'provider_rejected', 400], `${what}: not retryable`);
    t.match(e.message, message, `${what}: ComfyUI's message`);
    t.equal(fake.submissions(), before, `${what}: nothing queued`);
  }
  const stored: (ProviderJobRef | null)[] = [];
  const e = await failure(
    provider().generate(job({ prompt: 'fails to run' }), { workDir: work, onSubmitted: async (r) => void stored.push(r) }),
  );
  t.same([e.retryable, e.code], [false, 'provider_error']);
  t.match(e.message, /node 3 \(KSampler\): torch.OutOfMemoryError: CUDA out of memory/);
  t.equal(stored.at(-1), null, 'the failed prompt is forgotten');
  const noImage = await failure(provider().generate(job({ output: 'video', durationSeconds: 2 }), { workDir: work }));
  t.same([noImage.retryable, noImage.code], [false, 'provider_rejected'], 'image to video without a start image');
});

t.test('configuration: which models ComfyUI makes, the registry, startup errors', async (t) => {
  t.notOk(comfyuiMakes(loadConfig({}), 'flux-1.1-pro', 'image'), 'no COMFYUI_URL: nothing');
  const all = loadConfig(env());
  t.ok(comfyuiMakes(all, 'flux-1.1-pro', 'image') && comfyuiMakes(all, 'wan-2.2', 'video'), 'COMFYUI_MODELS unset: every model');
  const some = loadConfig(env({ COMFYUI_MODELS: 'flux-1.1-pro, wan-2.2', REPLICATE_API_TOKEN: 'r8_x' }));
  t.ok(comfyuiMakes(some, 'wan-2.2', 'video'));
  t.notOk(comfyuiMakes(some, 'veo-3', 'video'));
  const replicate = { name: 'replicate', model: 'black-forest-labs/flux-1.1-pro' } as const;
  const fetcher = {} as never;
  t.equal(
    engineFor('image', { config: some, fetcher, model: replicate, modelName: 'flux-1.1-pro' }).name,
    'comfyui',
    'before the hosted engine',
  );
  t.equal(
    engineFor('image', { config: some, fetcher, model: replicate, modelName: 'flux-1.1-pro-ultra' }).name,
    'replicate',
    'a model it does not list',
  );
  t.equal(engineFor('video', { config: some, modelName: 'wan-2.2' }).name, 'comfyui');
  t.equal(engineFor('lipsync', { config: some, modelName: 'wan-2.2' }).name, 'local', 'no lip-sync workflow');
  t.equal(engineFor('image', { config: some }).name, 'local', 'no model name (a template ad): not ComfyUI');
  const uiFormat = path.join(work, 'ui.json'); // the editor's format, not the API's
  writeFileSync(uiFormat, '{"nodes": [], "links": []}');
  const bad: [Record<string, string>, RegExp][] = [
    [{ COMFYUI_URL: 'ftp://gpu' }, /COMFYUI_URL must be an http\(s\) URL/],
    [{ COMFYUI_INPUTS: '{"prompt": "6"}' }, /COMFYUI_INPUTS must be a JSON object .*"prompt" is "6"/],
    [{ COMFYUI_INPUTS: '{"style": "6.text"}' }, /"style" is not one of them/],
    [{ COMFYUI_INPUTS: '{"image_to_video": "10.image"}' }, /"image_to_video" is not an object/],
    [
      { COMFYUI_INPUTS: '{"image_to_video": {"image": "7.image"}}' },
      /maps "image" to 7.image, but the video workflow .* has no input "image" on node 7 \(CLIPTextEncode\)/,
    ],
    [{ COMFYUI_INPUTS: '{"seed": "30.seed"}' }, /maps "seed" to 30.seed, but the image workflow .* has no node 30/],
    [{ COMFYUI_INPUTS: '{"width": "5.wide"}' }, /no input "wide" on node 5 \(EmptyLatentImage\)/],
    [{ COMFYUI_INPUTS: '{"image": null}' }, /maps no node input for "image", which the video workflow/],
    [{ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: path.join(work, 'missing.json') }, /cannot read the workflow .*missing.json/],
    [{ COMFYUI_TEXT_TO_IMAGE_WORKFLOW: uiFormat }, /is not a ComfyUI workflow in API format/],
    [{ COMFYUI_VIDEO_FPS: '0' }, /COMFYUI_VIDEO_FPS must be an integer between 1 and 120/],
  ];
  for (const [over, message] of bad) t.throws(() => loadConfig(env(over)), message, Object.keys(over).join());
});
